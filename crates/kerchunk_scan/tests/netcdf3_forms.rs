//! NetCDF-3 forms the conformance corpus lacks (`tests/scan/netcdf3`, made by
//! its `make.py` with netCDF4 and kerchunk 0.2.10): padded records, 64-bit
//! offsets, CDF-5 types, a single short record variable, no records,
//! characters. Each scan reads exactly the ground truth netCDF4 read, and
//! matches kerchunk's references except where the crate documentation says
//! it differs on purpose.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use kerchunk::{ParseOptions, Reference, ReferenceSet};
use kerchunk_scan::{ScanOptions, scan_netcdf3};
use object_store::ObjectStore;
use object_store::local::LocalFileSystem;
use object_store::path::Path as StorePath;
use serde_json::Value;
use zarrs::array::{Array, ArrayBytes};
use zarrs_kerchunk::ReferenceStoreBuilder;

fn folder() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/scan/netcdf3")
}

/// A `.npy` file's shape and its data, little-endian.
fn npy(path: &Path) -> (Vec<u64>, Vec<u8>) {
    let bytes = std::fs::read(path).unwrap();
    assert_eq!(&bytes[..6], b"\x93NUMPY");
    let header_len = usize::from(u16::from_le_bytes([bytes[8], bytes[9]]));
    let header = std::str::from_utf8(&bytes[10..10 + header_len]).unwrap();
    let descr = header.split("'descr': '").nth(1).unwrap().split('\'').next().unwrap();
    assert!(!descr.starts_with('>'), "{descr}: make.py saves native (little-endian) arrays");
    let shape = header.split("'shape': (").nth(1).unwrap().split(')').next().unwrap();
    let shape = shape.split(',').map(str::trim).filter(|s| !s.is_empty()).map(|s| s.parse().unwrap()).collect();
    (shape, bytes[10 + header_len..].to_vec())
}

fn scan(file: &str) -> ReferenceSet {
    let store: Arc<dyn ObjectStore> = Arc::new(LocalFileSystem::new_with_prefix(folder()).unwrap());
    let options = ScanOptions::default().with_inline_threshold(0);
    let scan =
        tokio::runtime::Runtime::new().unwrap().block_on(scan_netcdf3(&store, &StorePath::from(file), file, &options));
    scan.unwrap_or_else(|e| panic!("{file}: {e}")).references
}

fn json(bytes: &[u8]) -> Value {
    serde_json::from_slice(bytes).unwrap()
}

/// Every variable of every file reads exactly what netCDF4 read.
#[test]
fn every_variable_reads_its_ground_truth() {
    let mut checked = 0;
    for entry in std::fs::read_dir(folder()).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_none_or(|e| e != "nc") {
            continue;
        }
        let file = path.file_name().unwrap().to_str().unwrap().to_owned();
        let stem = path.file_stem().unwrap().to_str().unwrap().to_owned();
        let base = folder().join("refs.json");
        let store = Arc::new(ReferenceStoreBuilder::new().build(scan(&file), base.to_str().unwrap()).unwrap());
        for truth in std::fs::read_dir(folder()).unwrap() {
            let truth = truth.unwrap().path();
            let name = truth.file_name().unwrap().to_str().unwrap();
            let Some(variable) = name.strip_prefix(&format!("{stem}.")).and_then(|n| n.strip_suffix(".npy")) else {
                continue;
            };
            let array = Array::open(store.clone(), &format!("/{variable}"))
                .unwrap_or_else(|e| panic!("{file} {variable}: {e}"));
            let bytes = array.retrieve_array_subset::<ArrayBytes>(&array.subset_all()).unwrap();
            let (shape, data) = npy(&truth);
            assert_eq!(array.shape(), &shape[..], "{file} {variable}");
            assert_eq!(bytes.into_fixed().unwrap().into_owned(), data, "{file} {variable}");
            checked += 1;
        }
    }
    assert_eq!(checked, 24, "variables checked");
}

/// kerchunk's references where it makes them: the same keys and ranges, and
/// the same array metadata, but for the differences made on purpose.
#[test]
fn references_match_kerchunks() {
    let mut compared = 0;
    for file in ["classic_records.nc", "offset64_records.nc", "zero_records.nc", "chars.nc", "single_short_record.nc"] {
        let stem = file.trim_end_matches(".nc");
        let text = std::fs::read(folder().join(format!("{stem}.kerchunk.json"))).unwrap();
        let theirs = ReferenceSet::from_json(&text[..], &ParseOptions::default()).unwrap();
        let ours = scan(file);
        for (key, theirs) in theirs.iter() {
            let ours = ours.get(&key);
            match (ours, theirs) {
                (Some(Reference::Range { offset, length, .. }), Reference::Range { offset: o, length: l, .. }) => {
                    assert_eq!((offset, length), (o, l), "{file} {key}");
                }
                // kerchunk divides the records' bytes by the unpadded size: 6 records of 3 (bug 7).
                (None, Reference::Range { .. }) if file == "single_short_record.nc" => {}
                (Some(Reference::Inline(ours)), Reference::Inline(theirs)) if key.ends_with(".zarray") => {
                    let (mut ours, mut theirs) = (json(ours), json(theirs));
                    if file == "single_short_record.nc" {
                        assert_eq!(
                            (&ours["shape"], &theirs["shape"]),
                            (&serde_json::json!([3]), &serde_json::json!([6]))
                        );
                        theirs["shape"] = ours["shape"].clone();
                    }
                    if key == "m/.zarray" {
                        // kerchunk takes missing_value (-2) for the fill; we take _FillValue (-1).
                        assert_eq!(
                            (&ours["fill_value"], &theirs["fill_value"]),
                            (&serde_json::json!(-1), &serde_json::json!(-2))
                        );
                        ours["fill_value"] = theirs["fill_value"].clone();
                    }
                    assert_eq!(ours, theirs, "{file} {key}");
                }
                (Some(Reference::Inline(ours)), Reference::Inline(theirs)) => {
                    // Attributes: the same names with the same dimension names; kerchunk writes
                    // numbers as numpy's text of them.
                    let (ours, theirs) = (json(ours), json(theirs));
                    let names =
                        |v: &Value| v.as_object().unwrap().keys().cloned().collect::<std::collections::BTreeSet<_>>();
                    let mut expected = names(&theirs);
                    if key == "m/.zattrs" {
                        expected.insert("missing_value".into()); // kept: kerchunk drops it
                    }
                    assert_eq!(names(&ours), expected, "{file} {key}");
                    assert_eq!(ours.get("_ARRAY_DIMENSIONS"), theirs.get("_ARRAY_DIMENSIONS"), "{file} {key}");
                    for (name, value) in theirs.as_object().unwrap() {
                        if value.is_string()
                            && !value.as_str().unwrap().starts_with('[')
                            && value.as_str().unwrap().parse::<f64>().is_err()
                        {
                            assert_eq!(&ours[name], value, "{file} {key} {name}");
                        }
                    }
                }
                other => panic!("{file} {key}: {other:?}"),
            }
            compared += 1;
        }
    }
    assert!(compared > 90, "{compared}");
}

/// Three files of a time series, given out of order, combined along time:
/// every array reads the combined ground truth, and `v`'s chunk keys and
/// ranges are those of kerchunk's `MultiZarrToZarr`.
#[test]
fn a_series_combines_along_time_as_multizarrtozarr_does() {
    let options = ScanOptions::default().with_inline_threshold(0).with_inlined_variables(["time"]);
    let store: Arc<dyn ObjectStore> = Arc::new(LocalFileSystem::new_with_prefix(folder()).unwrap());
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let inputs = || -> Vec<(String, ReferenceSet)> {
        ["series_0.nc", "series_1.nc", "series_2.nc"]
            .into_iter()
            .map(|file| {
                let scan = runtime.block_on(scan_netcdf3(&store, &StorePath::from(file), file, &options)).unwrap();
                (file.to_owned(), scan.references)
            })
            .collect()
    };
    let combined = kerchunk_combine::combine(inputs(), "time").unwrap();
    let base = folder().join("refs.json");
    let reader = Arc::new(ReferenceStoreBuilder::new().build(combined, base.to_str().unwrap()).unwrap());
    for variable in ["time", "v", "lat", "lon", "static"] {
        let array = Array::open(reader.clone(), &format!("/{variable}")).unwrap();
        let bytes = array.retrieve_array_subset::<ArrayBytes>(&array.subset_all()).unwrap();
        let (shape, data) = npy(&folder().join(format!("series.{variable}.npy")));
        assert_eq!(array.shape(), &shape[..], "{variable}");
        assert_eq!(bytes.into_fixed().unwrap().into_owned(), data, "{variable}");
    }
    let combined = kerchunk_combine::combine(inputs(), "time").unwrap();
    let text = std::fs::read(folder().join("series.kerchunk.json")).unwrap();
    let theirs = ReferenceSet::from_json(&text[..], &ParseOptions::default()).unwrap();
    let chunks = |set: &ReferenceSet| -> Vec<String> {
        set.iter()
            .filter(|(k, _)| k.starts_with("v/") && !k.contains(".z"))
            .map(|(k, r)| format!("{k} {r:?}"))
            .collect()
    };
    assert_eq!(chunks(&combined), chunks(&theirs));
    // Every key kerchunk writes is there, and the attributes are the same.
    for (key, reference) in theirs.iter() {
        let ours = combined.get(&key).unwrap_or_else(|| panic!("{key} is missing"));
        if key.ends_with(".zattrs") {
            let (Reference::Inline(ours), Reference::Inline(theirs)) = (ours, reference) else { panic!("{key}") };
            assert_eq!(json(ours), json(theirs), "{key}");
        }
    }
    // A file that disagrees on an array is an error naming it.
    let mut broken = inputs();
    let text = br#"{"shape":[2,2,4],"chunks":[1,2,3],"dtype":">f4","fill_value":null,"order":"C","filters":null,"dimension_separator":".","compressor":null,"zarr_format":2}"#;
    let mut builder = kerchunk::ReferenceSetBuilder::new();
    for (key, reference) in broken[0].1.iter() {
        match reference {
            Reference::Inline(_) if key == "v/.zarray" => builder.insert_inline(&key, text),
            Reference::Inline(bytes) => builder.insert_inline(&key, bytes),
            Reference::Range { url, offset, length } => builder.insert_range(&key, url, offset, length),
            other => panic!("{other:?}"),
        }
    }
    broken[0].1 = builder.build();
    let err = kerchunk_combine::combine(broken, "time").unwrap_err().to_string();
    // (series_0.nc holds the last times: the first file, by time, is series_1.nc.)
    assert!(
        err.contains("cannot combine series_0.nc: \"v\": its shape [2,2,4] differs from series_1.nc's [2,2,3]"),
        "{err}"
    );
}
