//! DMR++ sidecars (`tests/scan/dmrpp/bes`: bes's pairs of an HDF5 file and its sidecar) scanned
//! into references to the file:
//! - every variable reads what h5py reads from the file (`make.py`'s `.npy` files), at three
//!   inline thresholds, and with the file's header destroyed;
//! - the references equal the HDF5 scanner's of the same file: chunk ranges, shapes, chunk
//!   shapes, dtypes (big-endian kept), codecs (fletcher32 as numcodecs' `fletcher32`), fill values;
//! - `scan` tells a sidecar by its content;
//! - what a sidecar cannot say is refused, naming it.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use kerchunk::{Reference, ReferenceSet};
use kerchunk_scan::{DmrppSidecars, Scan, ScanError, ScanOptions, scan, scan_dmrpp, scan_hdf5};
use object_store::ObjectStore;
use object_store::local::LocalFileSystem;
use object_store::path::Path as StorePath;
use serde_json::Value;
use zarrs::array::{Array, ArrayBytes};
use zarrs_kerchunk::ReferenceStoreBuilder;

/// The `.npy` files of `make.py`: h5py's values of every dataset of fixed-size values.
fn truths() -> usize {
    let npy = |e: &std::fs::DirEntry| e.path().extension().is_some_and(|x| x == "npy");
    std::fs::read_dir(folder()).unwrap().filter(|e| npy(e.as_ref().unwrap())).count()
}

/// bes's pairs.
fn folder() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/scan/dmrpp/bes")
}

/// The pairs `build.py` writes from h5py's chunk index, in `build_dmrpp`'s form.
fn written() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/scan/dmrpp/written")
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Runtime::new().unwrap()
}

/// The sidecars of bes's pairs, by the data file's name.
fn pairs() -> Vec<String> {
    let files = pairs_in(&folder());
    assert!(files.len() >= 29, "{files:?}");
    files
}

/// The sidecars in `dir`, by the data file's name.
fn pairs_in(dir: &Path) -> Vec<String> {
    let mut files: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .filter_map(|e| e.unwrap().file_name().to_str().and_then(|n| n.strip_suffix(".dmrpp")).map(str::to_owned))
        .collect();
    files.sort();
    files
}

/// `file` in `dir` scanned: a sidecar (`.dmrpp`) as one, any other as HDF5.
fn scan_in(dir: &Path, file: &str, options: &ScanOptions) -> Result<Scan, ScanError> {
    let store: Arc<dyn ObjectStore> = Arc::new(LocalFileSystem::new_with_prefix(dir).unwrap());
    runtime().block_on(async {
        if Path::new(file).extension().is_some_and(|e| e == "dmrpp") {
            scan_dmrpp(&store, &StorePath::from(file), file, options).await
        } else {
            scan_hdf5(&store, &StorePath::from(file), file, options).await
        }
    })
}

/// A `.npy` file's shape and its data.
fn npy(path: &Path) -> (Vec<u64>, Vec<u8>) {
    let bytes = std::fs::read(path).unwrap();
    assert_eq!(&bytes[..6], b"\x93NUMPY");
    let header_len = usize::from(u16::from_le_bytes([bytes[8], bytes[9]]));
    let header = std::str::from_utf8(&bytes[10..10 + header_len]).unwrap();
    let shape = header.split("'shape': (").nth(1).unwrap().split(')').next().unwrap();
    let shape = shape.split(',').map(str::trim).filter(|s| !s.is_empty()).map(|s| s.parse().unwrap()).collect();
    (shape, bytes[10 + header_len..].to_vec())
}

/// The variables of the pairs a sidecar cannot describe, and why: they are left out, named.
const LEFT_OUT: [(&str, &str, &str); 2] = [
    ("test32v3.nc4", "letter", "a string without dmrpp:FixedLengthStringArray"),
    ("grid_1_2d.h5", "HDFEOS INFORMATION/StructMetadata.0", "a string without dmrpp:FixedLengthStringArray"),
];

/// The variables whose values a sidecar holds itself (`dmrpp:missingdata`: bes's padded form of
/// a variable-length array, and its rows' lengths), which the HDF5 scanner leaves out.
const MISSING_DATA: [(&str, &str); 2] = [("vlen.h5", "DS1"), ("vlen.h5", "DS1_vlen_index")];

/// Every `.npy` of `file` read through the references `scan` made (whose URLs are relative to
/// `dir`): the number checked. A variable left out must be in [`LEFT_OUT`], for its reason.
fn check_values(file: &str, scan: Scan, dir: &Path) -> usize {
    check_values_in(file, scan, dir, &folder(), &LEFT_OUT)
}

/// [`check_values`], with the `.npy` files in `truths`, and the variables `left_out`.
fn check_values_in(file: &str, scan: Scan, dir: &Path, truths: &Path, left_out: &[(&str, &str, &str)]) -> usize {
    let (references, skipped) = (scan.references, scan.skipped);
    // numcodecs' fletcher32 as HDF5 computes it (zarrs' own misses an odd length's last byte).
    let _codecs = zarrs_kerchunk_codecs::register_codecs();
    let base = dir.join("refs.json");
    let store = Arc::new(ReferenceStoreBuilder::new().build(references, base.to_str().unwrap()).unwrap());
    let mut checked = 0;
    for truth in std::fs::read_dir(truths).unwrap() {
        let truth = truth.unwrap().path();
        let name = truth.file_name().unwrap().to_str().unwrap().to_owned();
        let Some(variable) = name.strip_prefix(&format!("{file}.")).and_then(|r| r.strip_suffix(".npy")) else {
            continue;
        };
        let variable = variable.replace('~', "/");
        if let Some((.., why)) = left_out.iter().find(|(f, v, _)| *f == file && *v == variable) {
            let reason = skipped.iter().find(|s| s.path == variable).map(|s| s.reason.as_str());
            assert!(reason.is_some_and(|r| r.starts_with(why)), "{file} {variable}: {reason:?}");
            continue;
        }
        let array =
            Array::open(store.clone(), &format!("/{variable}")).unwrap_or_else(|e| panic!("{file} {variable}: {e}"));
        let bytes = array
            .retrieve_array_subset::<ArrayBytes>(&array.subset_all())
            .unwrap_or_else(|e| panic!("{file} {variable}: {e}"));
        let (shape, data) = npy(&truth);
        assert_eq!(array.shape(), &shape[..], "{file} {variable}");
        assert!(bytes.into_fixed().unwrap().into_owned() == data, "{file} {variable}: the values differ from h5py's");
        checked += 1;
    }
    checked
}

#[test]
fn every_variable_reads_what_h5py_reads() {
    let mut checked = 0;
    for file in pairs() {
        for options in [
            ScanOptions::default().with_inline_threshold(0),
            ScanOptions::default(),
            ScanOptions::default().with_inline_threshold(1 << 20),
        ] {
            let scan = scan_in(&folder(), &format!("{file}.dmrpp"), &options).unwrap_or_else(|e| panic!("{file}: {e}"));
            checked += check_values(&file, scan, &folder());
        }
    }
    let truths = truths();
    assert!(truths >= 60, "{truths}");
    assert_eq!(checked, 3 * (truths - LEFT_OUT.len()), "every ground truth checked with each of three thresholds");
}

/// With the HDF5 file's superblock and root group overwritten (its header unreadable), the
/// sidecar still reads every value: the file's header is never read.
#[test]
fn the_files_header_is_never_read() {
    let scratch = tempfile::tempdir().unwrap();
    let mut checked = 0;
    for file in pairs() {
        let mut bytes = std::fs::read(folder().join(&file)).unwrap();
        // Every chunk of these files starts past byte 800 (their sidecars say so).
        bytes[..800].fill(0xAA);
        std::fs::write(scratch.path().join(&file), bytes).unwrap();
        std::fs::copy(folder().join(format!("{file}.dmrpp")), scratch.path().join(format!("{file}.dmrpp"))).unwrap();
        let unreadable = scan_in(scratch.path(), &file, &ScanOptions::default());
        assert!(unreadable.is_err(), "{file}: the damaged file still scans as HDF5");
        let scan = scan_in(scratch.path(), &format!("{file}.dmrpp"), &ScanOptions::default()).unwrap();
        checked += check_values(&file, scan, scratch.path());
    }
    assert_eq!(checked, truths() - LEFT_OUT.len());
}

/// A `.zarray` as compared: its shape, chunks, dtype, filters, compressor and fill value.
fn zarray(value: &Value) -> Value {
    let mut out = serde_json::Map::new();
    for key in ["shape", "chunks", "dtype", "filters", "compressor", "fill_value"] {
        out.insert(key.to_owned(), value[key].clone());
    }
    Value::Object(out)
}

/// Each array's `.zarray` and chunk references of a set.
fn arrays_of(references: &ReferenceSet) -> BTreeMap<String, (Value, BTreeMap<String, String>)> {
    let mut arrays = BTreeMap::new();
    for (key, reference) in references.iter() {
        if let Some(path) = key.strip_suffix("/.zarray").or_else(|| (key == ".zarray").then_some("")) {
            let Reference::Inline(bytes) = reference else { panic!("{key} is not inline") };
            let value: Value = serde_json::from_slice(bytes).unwrap();
            arrays.entry(path.to_owned()).or_insert_with(|| (Value::Null, BTreeMap::new())).0 = zarray(&value);
        }
    }
    for (key, reference) in references.iter() {
        let Some((path, chunk)) = key.rsplit_once('/') else { continue };
        if chunk.starts_with('.') {
            continue;
        }
        if let Some(array) = arrays.get_mut(path) {
            array.1.insert(chunk.to_owned(), format!("{reference:?}"));
        }
    }
    arrays
}

#[test]
fn the_references_equal_the_hdf5_scanners() {
    let mut compared = 0;
    for (dir, file) in
        pairs().into_iter().map(|f| (folder(), f)).chain(pairs_in(&written()).into_iter().map(|f| (written(), f)))
    {
        let options = ScanOptions::default().with_inline_threshold(0);
        let ours = scan_in(&dir, &format!("{file}.dmrpp"), &options).unwrap().references;
        let theirs = scan_in(&dir, &file, &options).unwrap();
        let (ours, theirs) = (arrays_of(&ours), arrays_of(&theirs.references));
        // A sidecar of a build_dmrpp before 3.20.10 (no dmrpp:version) states no fill values.
        let sidecar = std::fs::read_to_string(dir.join(format!("{file}.dmrpp"))).unwrap();
        let states_fill = sidecar.contains("dmrpp:version=");
        for (path, (zarray, chunks)) in &theirs {
            let Some((our_zarray, our_chunks)) = ours.get(path) else {
                if LEFT_OUT.iter().any(|(f, v, _)| *f == file && v == path) {
                    continue;
                }
                panic!("{file}: {path} is in the HDF5 scan, not in the sidecar's");
            };
            let (mut ours, mut zarray) = (our_zarray.clone(), zarray.clone());
            if !states_fill && ours["fill_value"].is_null() {
                zarray["fill_value"] = Value::Null;
            }
            // A sidecar without deflateLevel cannot give the level, which only a writer needs.
            if !sidecar.contains("deflateLevel") && !sidecar.contains("deflate_level") {
                for filters in [&mut ours["filters"], &mut zarray["filters"]] {
                    filters.as_array_mut().into_iter().flatten().filter(|f| f["id"] == "zlib").for_each(|f| {
                        f["level"] = Value::Null;
                    });
                }
            }
            assert_eq!(ours, zarray, "{file} {path}");
            assert_eq!(our_chunks, chunks, "{file} {path}");
            compared += 1;
        }
        for path in ours.keys() {
            // What the HDF5 scanner leaves out (a variable-length array) a sidecar may hold itself.
            let held = MISSING_DATA.contains(&(file.as_str(), path.as_str()));
            assert!(theirs.contains_key(path) || held, "{file}: {path} is in the sidecar's scan, not the HDF5 one");
        }
    }
    assert!(compared >= 59 + 12, "{compared}");
}

/// `scan` tells a sidecar from the files it describes by its first bytes.
#[test]
fn scan_knows_a_sidecar_by_its_content() {
    let store: Arc<dyn ObjectStore> = Arc::new(LocalFileSystem::new_with_prefix(folder()).unwrap());
    let file = "SDS_fle_shuf_def.h5.dmrpp";
    let found = runtime().block_on(scan(&store, &StorePath::from(file), file, &ScanOptions::default())).unwrap();
    let zarray: Value = match found.references.get("IntArray/.zarray") {
        Some(Reference::Inline(bytes)) => serde_json::from_slice(bytes).unwrap(),
        other => panic!("{other:?}"),
    };
    assert_eq!(zarray["filters"][0]["id"], "fletcher32");
    assert_eq!(zarray["dtype"], "<i4");
}

/// The sidecars `build.py` wrote from h5py's chunk index (big-endian chunks with partial edges,
/// fletcher32 on an odd count of bytes, compact and contiguous data, a group's own dimension,
/// chunks never written, fixed-length strings, a NetCDF-4 series) read what h5py reads.
#[test]
fn written_sidecars_read_what_h5py_reads() {
    let mut checked = 0;
    for file in pairs_in(&written()) {
        for threshold in [0, 500, 1 << 20] {
            let options = ScanOptions::default().with_inline_threshold(threshold);
            let scan = scan_in(&written(), &format!("{file}.dmrpp"), &options).unwrap();
            assert!(scan.skipped.is_empty(), "{file}: {:?}", scan.skipped);
            checked += check_values_in(&file, scan, &written(), &written(), &[]);
        }
    }
    let npy = |e: &std::fs::DirEntry| e.path().extension().is_some_and(|x| x == "npy");
    let truths = std::fs::read_dir(written()).unwrap().filter(|e| npy(e.as_ref().unwrap())).count();
    assert_eq!((checked, truths), (3 * 17, 17), "every ground truth checked with each of three thresholds");
}

/// The data file named by the sidecar's `dmrpp:href` (an absolute URL: the sidecar elsewhere),
/// and by one variable's chunks' own `href`: the references point there, and read h5py's values.
#[test]
fn hrefs_name_the_data_file() {
    let scratch = tempfile::tempdir().unwrap();
    // file:// URLs of absolute paths (no characters here that a URL escapes).
    let file_url = |path: &Path| format!("file://{}", path.display());
    let data = file_url(&written().canonicalize().unwrap().join("features.h5"));
    let other = scratch.path().join("copy.h5");
    std::fs::copy(written().join("features.h5"), &other).unwrap();
    let other = file_url(&other);
    let sidecar = std::fs::read_to_string(written().join("features.h5.dmrpp")).unwrap();
    let sidecar = sidecar.replace("OPeNDAP_DMRpp_DATA_ACCESS_URL", &data);
    // The contiguous variable's one chunk, read from the copy.
    let (head, tail) = sidecar.split_once(r#"<Float32 name="contiguous">"#).unwrap();
    let tail = tail.replacen("<dmrpp:chunk offset=", &format!(r#"<dmrpp:chunk href="{other}" offset="#), 1);
    let sidecar = format!(r#"{head}<Float32 name="contiguous">{tail}"#);
    std::fs::write(scratch.path().join("granule.dmrpp"), sidecar).unwrap();
    let scan = scan_in(scratch.path(), "granule.dmrpp", &ScanOptions::default().with_inline_threshold(0)).unwrap();
    let url_of = |key: &str| match scan.references.get(key) {
        Some(Reference::Range { url, .. }) => url.map(str::to_owned),
        other => panic!("{key}: {other:?}"),
    };
    assert_eq!(url_of("big_endian/0.0"), Some(data));
    assert_eq!(url_of("contiguous/0"), Some(other));
    assert_eq!(check_values_in("features.h5", scan, scratch.path(), &written(), &[]), 8);
}

/// Arrays held whole (as `combine` holds a coordinate) are read through the sidecar's chunk
/// index and decoded: one chunk, no filters, h5py's values; one with chunks never written is
/// refused, naming why.
#[test]
fn variables_held_whole_are_decoded_from_their_chunks() {
    let whole = ["big_endian", "odd_checked", "g/inner", "strings", "sparse"];
    let options = ScanOptions::default().with_inline_threshold(0).with_inlined_variables(whole);
    let scan = scan_in(&written(), "features.h5.dmrpp", &options).unwrap();
    for path in &whole[..4] {
        let Some(Reference::Inline(zarray)) = scan.references.get(&format!("{path}/.zarray")) else { panic!("{path}") };
        let zarray: Value = serde_json::from_slice(zarray).unwrap();
        assert_eq!((&zarray["chunks"], &zarray["filters"]), (&zarray["shape"], &Value::Null), "{path}");
    }
    assert!(scan.references.iter().all(|(key, _)| !key.starts_with("sparse/")), "a refused array is left out whole");
    let why = "held whole to combine, it needs all its 4 chunks (1 indexed)";
    assert_eq!(check_values_in("features.h5", scan, &written(), &written(), &[("features.h5", "sparse", why)]), 7);
}

/// `scan` reads a file's sidecar in its place as asked: `Auto` where there is one (the file's
/// header, destroyed here, unread), `Never` not (the destroyed header fails), `Only` refusing a
/// file without one.
#[test]
fn scan_finds_a_sidecar_beside_the_file_as_asked() {
    let scratch = tempfile::tempdir().unwrap();
    let mut bytes = std::fs::read(written().join("features.h5")).unwrap();
    bytes[..800].fill(0xAA);
    std::fs::write(scratch.path().join("features.h5"), bytes).unwrap();
    std::fs::copy(written().join("features.h5.dmrpp"), scratch.path().join("features.h5.dmrpp")).unwrap();
    std::fs::copy(folder().join("t_float.h5"), scratch.path().join("alone.h5")).unwrap();
    let store: Arc<dyn ObjectStore> = Arc::new(LocalFileSystem::new_with_prefix(scratch.path()).unwrap());
    let scan_with = |file: &str, sidecars: DmrppSidecars| {
        let options = ScanOptions::default().with_inline_threshold(0).with_dmrpp_sidecars(sidecars);
        runtime().block_on(scan(&store, &StorePath::from(file), file, &options))
    };
    let found = scan_with("features.h5", DmrppSidecars::Auto).unwrap();
    assert!(matches!(found.references.get("sparse/0.1"), Some(Reference::Range { url: Some("features.h5"), .. })));
    assert_eq!(check_values_in("features.h5", found, scratch.path(), &written(), &[]), 8);
    assert!(scan_with("features.h5", DmrppSidecars::Never).is_err(), "the destroyed header was not read");
    // A file without a sidecar: read itself, or refused.
    assert!(scan_with("alone.h5", DmrppSidecars::Auto).unwrap().references.get("d32_1/.zarray").is_some());
    let error = scan_with("alone.h5", DmrppSidecars::Only).err().unwrap().to_string();
    assert!(error.starts_with("alone.h5.dmrpp: ") && error.contains("there is none beside the file"), "{error}");
}

/// A real NASA sidecar (bes's `data/s3`: MERRA-2's monthly means, as a 2018 `build_dmrpp` wrote
/// them, the file on S3, not here): every variable described, its chunks referenced in the file
/// its `dmrpp:href` names, as many as the sidecar lists, none held (the file is not beside it).
#[test]
fn a_merra2_sidecar_references_its_granule() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/scan/dmrpp/nasa");
    let file = "MERRA2_400.tavgM_2d_slv_Nx.201606.nc4.dmrpp";
    let scan = scan_in(&dir, file, &ScanOptions::default()).unwrap();
    assert!(scan.skipped.is_empty(), "{:?}", scan.skipped);
    assert_eq!(scan.stats.requests, 1, "the sidecar alone is read");
    let sidecar = std::fs::read_to_string(dir.join(file)).unwrap();
    let href = "https://s3.amazonaws.com/cloudydap/merra2/MERRA2_400.tavgM_2d_slv_Nx.201606.nc4";
    assert!(sidecar.contains(&format!(r#"dmrpp:href="{href}""#)));
    let chunks: Vec<_> =
        scan.references.iter().filter(|(key, _)| !key.rsplit('/').next().unwrap().starts_with('.')).collect();
    assert_eq!(chunks.len(), sidecar.matches("<dmrpp:chunk ").count());
    for (key, reference) in &chunks {
        assert!(matches!(reference, Reference::Range { url: Some(url), .. } if *url == href), "{key}: {reference:?}");
    }
    let arrays = scan.references.iter().filter(|(key, _)| key.ends_with("/.zarray")).count();
    let variables = sidecar.matches("<Float32 name=").count()
        + sidecar.matches("<Float64 name=").count()
        + sidecar.matches("<Int32 name=").count();
    assert_eq!(arrays, variables);
    // The granule's 2-D fields: float32 over time, lat and lon, one chunk of 1 x 361 x 576.
    let Some(Reference::Inline(zarray)) = scan.references.get("T2M/.zarray") else { panic!() };
    let zarray: Value = serde_json::from_slice(zarray).unwrap();
    assert_eq!(
        (&zarray["shape"], &zarray["chunks"], &zarray["dtype"]),
        (&serde_json::json!([1, 361, 576]), &serde_json::json!([1, 361, 576]), &Value::from("<f4"))
    );
}
