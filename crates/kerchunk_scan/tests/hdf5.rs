//! HDF5 and NetCDF-4 scans (`tests/scan/hdf5`, made by its `make.py` with
//! h5py, netCDF4 and kerchunk 0.2.10): every layout, chunk index (B-tree v1
//! in `earliest.h5`; fixed array, extensible array, B-tree v2 and single
//! chunk in `latest.h5`), filter and type, in every superblock version
//! (0: `earliest.h5`, 1: `superblock_v1.h5`, 2: `netcdf4.nc`, 3: `latest.h5`). Each array reads exactly what
//! h5py read, and the references are kerchunk's except where the crate
//! documentation says they differ on purpose.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use kerchunk::{ParseOptions, Reference, ReferenceSet};
use kerchunk_combine::combine;
use kerchunk_scan::{ParserThread, Scan, ScanError, ScanOptions, UnsupportedArrays, scan, scan_hdf5};
use object_store::ObjectStore;
use object_store::local::LocalFileSystem;
use object_store::memory::InMemory;
use object_store::path::Path as StorePath;
use object_store::{ObjectStoreExt, PutPayload};
use serde_json::Value;
use zarrs::array::{Array, ArrayBytes};
use zarrs_kerchunk::ReferenceStoreBuilder;

const FILES: [&str; 4] = ["earliest.h5", "latest.h5", "netcdf4.nc", "superblock_v1.h5"];

fn folder() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/scan/hdf5")
}

/// A `.npy` file's shape and its data, little-endian.
fn npy(path: &Path) -> (Vec<u64>, Vec<u8>) {
    let bytes = std::fs::read(path).unwrap();
    assert_eq!(&bytes[..6], b"\x93NUMPY");
    let header_len = usize::from(u16::from_le_bytes([bytes[8], bytes[9]]));
    let header = std::str::from_utf8(&bytes[10..10 + header_len]).unwrap();
    let shape = header.split("'shape': (").nth(1).unwrap().split(')').next().unwrap();
    let shape = shape.split(',').map(str::trim).filter(|s| !s.is_empty()).map(|s| s.parse().unwrap()).collect();
    (shape, bytes[10 + header_len..].to_vec())
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Runtime::new().unwrap()
}

fn scan_file(file: &str, options: &ScanOptions) -> Result<Scan, ScanError> {
    let store: Arc<dyn ObjectStore> = Arc::new(LocalFileSystem::new_with_prefix(folder()).unwrap());
    runtime().block_on(scan(&store, &StorePath::from(file), file, options))
}

/// JSON, with the bare `NaN`, `Infinity` and `-Infinity` of Python's JSON
/// (in attributes) read as strings.
fn json(bytes: &[u8]) -> Value {
    let text = std::str::from_utf8(bytes).unwrap();
    let mut out = String::new();
    let mut in_string = false;
    let mut chars = text.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        if in_string {
            out.push(c);
            if c == '\\' {
                out.push(chars.next().unwrap().1);
            } else if c == '"' {
                in_string = false;
            }
            continue;
        }
        if let Some(token) = ["-Infinity", "Infinity", "NaN"].into_iter().find(|t| text[i..].starts_with(t)) {
            out.push('"');
            out.push_str(token);
            out.push('"');
            for _ in 1..token.len() {
                chars.next();
            }
        } else {
            in_string = c == '"';
            out.push(c);
        }
    }
    serde_json::from_str(&out).unwrap()
}

/// What every file leaves out: the types zarr v2 lacks. Nothing else.
/// The files cover every superblock version (its byte follows the 8-byte signature).
#[test]
fn files_cover_every_superblock_version() {
    let versions: Vec<u8> = FILES.iter().map(|file| std::fs::read(folder().join(file)).unwrap()[8]).collect();
    assert_eq!(versions, [0, 3, 2, 1]);
}

#[test]
fn only_what_zarr_cannot_express_is_skipped() {
    for file in FILES {
        let scan = scan_file(file, &ScanOptions::default()).unwrap();
        let skipped: BTreeSet<(String, String)> =
            scan.skipped.iter().map(|s| (s.path.clone(), s.reason.clone())).collect();
        let expected: BTreeSet<(String, String)> = if file == "netcdf4.nc" {
            BTreeSet::new()
        } else {
            [
                ("compound", "a compound type (only h5py's complex pairs are referenced)"),
                ("null", "a null dataspace (no shape, no values)"),
            ]
            .into_iter()
            .map(|(p, r)| (p.to_owned(), r.to_owned()))
            .collect()
        };
        assert_eq!(skipped, expected, "{file}");
    }
    // Failing instead names the file and the first array.
    let error = scan_file("earliest.h5", &ScanOptions::default().with_unsupported_arrays(UnsupportedArrays::Fail))
        .unwrap_err()
        .to_string();
    assert_eq!(
        error,
        r#"earliest.h5: variable "compound": a compound type (only h5py's complex pairs are referenced)"#
    );
}

/// Every dataset of every file reads, through the references, exactly what
/// h5py read: with nothing inlined, with kerchunk's default threshold, and
/// with everything inlined.
#[test]
fn every_dataset_reads_its_ground_truth() {
    let mut checked = 0;
    for file in FILES {
        for (options, current_thread) in [
            (ScanOptions::default().with_inline_threshold(0), false),
            (ScanOptions::default(), false),
            (ScanOptions::default().with_inline_threshold(1 << 20), false),
            // Parsed on the thread that polls the scan; on a current-thread runtime, which that
            // would block, on the blocking pool whatever the option says.
            (ScanOptions::default().with_parser_thread(ParserThread::CallingThread), false),
            (ScanOptions::default().with_parser_thread(ParserThread::CallingThread), true),
        ] {
            let references = if current_thread {
                let store: Arc<dyn ObjectStore> = Arc::new(LocalFileSystem::new_with_prefix(folder()).unwrap());
                let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
                runtime.block_on(scan(&store, &StorePath::from(file), file, &options)).unwrap().references
            } else {
                scan_file(file, &options).unwrap().references
            };
            let base = folder().join("refs.json");
            let store = Arc::new(ReferenceStoreBuilder::new().build(references, base.to_str().unwrap()).unwrap());
            for truth in std::fs::read_dir(folder()).unwrap() {
                let truth = truth.unwrap().path();
                let name = truth.file_name().unwrap().to_str().unwrap().to_owned();
                let Some(rest) = name.strip_prefix(&format!("{file}.")) else { continue };
                let (variable, strings) = match (rest.strip_suffix(".npy"), rest.strip_suffix(".json")) {
                    (Some(v), _) => (v.replace('~', "/"), false),
                    (_, Some(v)) if !v.ends_with("kerchunk") => (v.replace('~', "/"), true),
                    _ => continue,
                };
                let array = Array::open(store.clone(), &format!("/{variable}"))
                    .unwrap_or_else(|e| panic!("{file} {variable}: {e}"));
                if strings {
                    let values = array.retrieve_array_subset::<Vec<String>>(&array.subset_all()).unwrap();
                    let expected: Vec<String> = serde_json::from_slice(&std::fs::read(&truth).unwrap()).unwrap();
                    assert_eq!(values, expected, "{file} {variable}");
                } else {
                    let bytes = array.retrieve_array_subset::<ArrayBytes>(&array.subset_all()).unwrap();
                    let (shape, data) = npy(&truth);
                    assert_eq!(array.shape(), &shape[..], "{file} {variable}");
                    assert_eq!(bytes.into_fixed().unwrap().into_owned(), data, "{file} {variable}");
                }
                checked += 1;
            }
        }
    }
    let truths = std::fs::read_dir(folder())
        .unwrap()
        .filter(|e| {
            let path = e.as_ref().unwrap().path();
            let extension = path.extension().and_then(|e| e.to_str()).unwrap_or_default();
            let name = path.file_name().unwrap().to_str().unwrap();
            let ours = FILES.iter().any(|file| name.starts_with(&format!("{file}.")));
            let kerchunk = name.ends_with(".kerchunk.json");
            ours && (extension == "npy" || (extension == "json" && !kerchunk))
        })
        .count();
    assert!(truths > 60);
    assert_eq!(checked, 5 * truths, "every ground truth checked with each of three thresholds, and parsed in place");
}

/// kerchunk's references: the same keys (but for what it loses or cannot
/// make), the same offsets and lengths, the same array metadata and
/// attributes but for the differences made on purpose.
#[test]
fn references_match_kerchunks() {
    let (mut ranges, mut their_ranges) = (0, 0);
    for file in FILES {
        let text = std::fs::read(folder().join(format!("{file}.kerchunk.json"))).unwrap();
        let theirs = ReferenceSet::from_json(&text[..], &ParseOptions::default()).unwrap();
        let ours = scan_file(file, &ScanOptions::default().with_inline_threshold(0)).unwrap().references;
        // Arrays kerchunk holds decoded (filters zarr lacks): we do too, as one chunk.
        let decoded = ["fletcher32/", "scaleoffset/"];
        let keys = |set: &ReferenceSet| -> BTreeSet<String> {
            set.iter().map(|(k, _)| k.into_owned()).filter(|k| !decoded.iter().any(|d| k.starts_with(d))).collect()
        };
        let (our_keys, their_keys) = (keys(&ours), keys(&theirs));
        // Compact datasets: kerchunk loses their data at inline_threshold=0.
        // Variable-length strings: kerchunk hangs on them (make.py leaves them out).
        let only_ours: BTreeSet<&str> = our_keys.difference(&their_keys).map(String::as_str).collect();
        let expected: BTreeSet<&str> = if file == "netcdf4.nc" {
            ["strs/.zarray", "strs/.zattrs", "strs/0"].into()
        } else {
            [
                "compact_large/0",
                "compact_scalar/0",
                "compact_small/0",
                "vlen_strings/.zarray",
                "vlen_strings/.zattrs",
                "vlen_strings/0",
            ]
            .into()
        };
        assert_eq!(only_ours, expected, "{file}");
        assert!(their_keys.is_subset(&our_keys), "{file}");
        their_ranges += their_keys
            .iter()
            .filter(|k| !k.starts_with("lzf/") && matches!(theirs.get(k), Some(Reference::Range { .. })))
            .count();
        for key in &their_keys {
            match (ours.get(key).unwrap(), theirs.get(key).unwrap()) {
                (Reference::Range { offset, length, .. }, Reference::Range { offset: o, length: l, .. }) => {
                    assert_eq!((offset, length), (o, l), "{file} {key}");
                    ranges += 1;
                }
                (Reference::Inline(ours), Reference::Inline(theirs)) if key.ends_with(".zarray") => {
                    let (ours, mut theirs) = (json(ours), json(theirs));
                    if key == "lzf/.zarray" {
                        // HDF5 skipped lzf on every chunk (it did not shrink them): kerchunk
                        // holds them decoded, with a null fill; we reference them.
                        theirs["fill_value"] = ours["fill_value"].clone();
                    }
                    assert_eq!(ours, theirs, "{file} {key}");
                }
                (Reference::Inline(ours), Reference::Inline(theirs)) if key.ends_with(".zattrs") => {
                    let (ours, mut theirs) = (json(ours), json(theirs));
                    if theirs.get("matrix").is_some() {
                        // kerchunk writes Python's text of a 2-D attribute; we write nested lists.
                        assert_eq!(theirs["matrix"], "[[0, 1], [2, 3]]");
                        theirs["matrix"] = serde_json::json!([[0, 1], [2, 3]]);
                    }
                    assert_eq!(ours, theirs, "{file} {key}");
                }
                (Reference::Inline(ours), Reference::Inline(theirs)) => assert_eq!(ours, theirs, "{file} {key}"),
                // kerchunk holds lzf's chunks decoded (above).
                (Reference::Range { .. }, Reference::Inline(_)) if key.starts_with("lzf/") => {}
                other => panic!("{file} {key}: {other:?}"),
            }
        }
    }
    assert_eq!(ranges, their_ranges, "every range of kerchunk's compared");
    assert!(ranges > 0);
}

/// Chunks stored with different filters (`filter_masks.h5`, see make.py, and kerchunk's own
/// `hdf5_mali_chunk2.h5`, three chunks under three masks of shuffle and Zstandard): the array
/// takes the mask most chunks have (the first chunk's among equals, as kerchunk does), keeps
/// those chunks' ranges (kerchunk's), and holds each other chunk written again under the
/// array's filters, whatever the array's size (kerchunk holds them only under its threshold
/// and fails on `large`). Each reads h5py's values. An array whose every chunk skipped the
/// filter has none, with kerchunk's ranges.
#[test]
fn chunks_stored_with_different_filters() {
    let file = "filter_masks.h5";
    // As kerchunk's references were made: nothing inline but what references cannot point at.
    let scan = scan_file(file, &ScanOptions::default().with_inline_threshold(0)).unwrap();
    assert!(scan.skipped.is_empty(), "{:?}", scan.skipped);
    let references = scan.references;
    for name in ["small", "large"] {
        assert_eq!(zarray(&references, name)["filters"], serde_json::json!([{"id": "zlib", "level": 4}]), "{name}");
        assert!(matches!(references.get(&format!("{name}/0")), Some(Reference::Range { .. })), "{name}/0");
        assert!(matches!(references.get(&format!("{name}/1")), Some(Reference::Inline(_))), "{name}/1, written again");
    }
    let text = std::fs::read(folder().join(format!("{file}.kerchunk.json"))).unwrap();
    let theirs = ReferenceSet::from_json(&text[..], &ParseOptions::default()).unwrap();
    for key in ["all_raw/0", "all_raw/1"] {
        let (Some(Reference::Range { offset, length, .. }), Some(Reference::Range { offset: o, length: l, .. })) =
            (references.get(key), theirs.get(key))
        else {
            panic!("{key}: not both ranges");
        };
        assert_eq!((offset, length), (o, l), "{key}");
    }
    let read = |references: ReferenceSet, file: &str, names: &[&str]| {
        let base = folder().join("refs.json");
        let store = Arc::new(ReferenceStoreBuilder::new().build(references, base.to_str().unwrap()).unwrap());
        for name in names {
            let array = Array::open(store.clone(), &format!("/{name}")).unwrap();
            let bytes = array.retrieve_array_subset::<ArrayBytes>(&array.subset_all()).unwrap();
            let (_, truth) = npy(&folder().join(format!("{file}.{name}.npy")));
            assert_eq!(bytes.into_fixed().unwrap().into_owned(), truth, "{file}: {name}");
        }
    };
    read(references, file, &["small", "large", "all_raw"]);

    let mali = scan_file("hdf5_mali_chunk2.h5", &ScanOptions::default().with_inline_threshold(0)).unwrap();
    assert!(mali.skipped.is_empty(), "{:?}", mali.skipped);
    // The first chunk skipped Zstandard (mask 0x2): the array shuffles only.
    assert_eq!(zarray(&mali.references, "data")["filters"], serde_json::json!([{"id": "shuffle", "elementsize": 4}]));
    let kinds: Vec<bool> = ["data/0", "data/1", "data/2"]
        .iter()
        .map(|k| matches!(mali.references.get(k), Some(Reference::Inline(_))))
        .collect();
    assert_eq!(kinds, [false, true, true], "the chunks under masks 0x3 and 0x0 are held");
    read(mali.references, "hdf5_mali_chunk2.h5", &["data"]);
}

/// A chunk under another mask than its array's whose array applies a filter no encoder here
/// writes (fletcher32, HDF5's LZ4) is left out naming it; failing is an error naming the array.
#[test]
fn chunks_no_filter_here_can_write_again_are_refused() {
    let file = "filter_masks.h5";
    let scan = scan_file(file, &ScanOptions::default().with_unsupported_arrays(UnsupportedArrays::Fail));
    assert!(scan.is_ok(), "every array of {file} is described");
    // Above kerchunk's threshold for holding an array decoded (100 bytes at `inline_threshold=0`).
    let options = ScanOptions::default().with_inline_threshold(0).with_unsupported_arrays(UnsupportedArrays::Fail);
    let error = scan_file("fletcher_masks.h5", &options).unwrap_err().to_string();
    assert_eq!(
        error,
        "fletcher_masks.h5: variable \"checked\": its chunks were stored with different filters (masks 0x0 and 0x3), \
         and the fletcher32 filter (id 3) cannot be written again here"
    );
}

/// A scan reads metadata, not chunks: in blocks of 4 KiB, a file whose data
/// is most of its bytes is scanned reading only part of it.
#[test]
fn only_metadata_is_read() {
    let options = ScanOptions::default()
        .with_inline_threshold(0)
        .with_block_bytes(4096)
        .with_first_read_bytes(4096)
        .with_read_ahead_bytes(0);
    let scan = scan_file("netcdf4.nc", &options).unwrap();
    let size = std::fs::metadata(folder().join("netcdf4.nc")).unwrap().len();
    assert!(scan.stats.bytes < size, "{:?} of {size} bytes", scan.stats);
    // The metadata limit holds: a budget smaller than the metadata fails the scan.
    let error = scan_file("netcdf4.nc", &options.with_max_header_bytes(8192)).unwrap_err();
    assert!(matches!(error, ScanError::HeaderTooLarge { limit: 8192, .. }), "{error}");
}

/// Any byte of a file changed, or the file cut short: the scan gives
/// references or an error naming the file, and the parser never panics.
#[test]
fn damaged_files_are_errors_not_panics() {
    let original = std::fs::read(folder().join("latest.h5")).unwrap();
    let runtime = runtime();
    let store: Arc<dyn ObjectStore> = Arc::new(InMemory::new());
    let path = StorePath::from("damaged.h5");
    let mut outcomes = [0usize; 2];
    let mut cases: Vec<Vec<u8>> = Vec::new();
    for cut in (0..original.len()).step_by(997) {
        cases.push(original[..cut].to_vec());
    }
    for position in (0..original.len()).step_by(61) {
        for value in [0x00, 0xff, 0x7f] {
            let mut damaged = original.clone();
            damaged[position] = value;
            cases.push(damaged);
        }
    }
    for damaged in cases {
        runtime.block_on(store.put(&path, PutPayload::from(damaged))).unwrap();
        match runtime.block_on(scan_hdf5(&store, &path, "damaged.h5", &ScanOptions::default())) {
            Ok(_) => outcomes[0] += 1,
            Err(ScanError::Hdf5Panic { message, .. }) => panic!("the parser panicked: {message}"),
            Err(error) => {
                assert!(error.to_string().contains("damaged.h5"), "{error}");
                outcomes[1] += 1;
            }
        }
    }
    assert!(outcomes[0] > 0 && outcomes[1] > 0, "{outcomes:?}");
}

/// HDF5's fletcher32 checksum is numcodecs' `fletcher32` filter: its chunks
/// are referenced (kerchunk cannot, and holds small ones decoded), and a
/// chunk whose bytes changed fails its checksum when read.
#[test]
fn fletcher32_chunks_are_referenced_and_checked() {
    let references = scan_file("earliest.h5", &ScanOptions::default().with_inline_threshold(0)).unwrap().references;
    let Some(Reference::Range { offset, length, .. }) = references.get("fletcher32/0") else { panic!("not a range") };
    assert_eq!(length, 4 * 4 + 4, "four i4 values and the checksum");
    let zarray = json(
        &references
            .get("fletcher32/.zarray")
            .map(|r| match r {
                Reference::Inline(bytes) => bytes.to_vec(),
                other => panic!("{other:?}"),
            })
            .unwrap(),
    );
    assert_eq!(zarray["filters"], serde_json::json!([{"id": "fletcher32"}]));

    let scratch = tempfile::tempdir().unwrap();
    let mut bytes = std::fs::read(folder().join("earliest.h5")).unwrap();
    bytes[usize::try_from(offset).unwrap()] ^= 1;
    std::fs::write(scratch.path().join("earliest.h5"), bytes).unwrap();
    let base = scratch.path().join("refs.json");
    let store = Arc::new(ReferenceStoreBuilder::new().build(references, base.to_str().unwrap()).unwrap());
    let array = Array::open(store, "/fletcher32").unwrap();
    let error = array.retrieve_chunk::<ArrayBytes>(&[0]).unwrap_err().to_string();
    assert!(error.to_lowercase().contains("checksum"), "{error}");
    assert!(array.retrieve_chunk::<ArrayBytes>(&[1]).is_ok());
}

/// NetCDF-4 files combine along time as NetCDF-3 ones do: the coordinate
/// held decoded in each scan, the compressed chunks of every file
/// renumbered, and the series reads what netCDF4 wrote.
#[test]
fn netcdf4_files_combine_along_time() {
    let options = ScanOptions::default().with_inline_threshold(0).with_inlined_variables(["time"]);
    // In the wrong order: combining orders files by their first time.
    let inputs = ["series2.nc", "series0.nc", "series1.nc"]
        .map(|file| (file.to_owned(), scan_file(file, &options).unwrap().references))
        .into_iter()
        .collect();
    let references = combine(inputs, "time").unwrap();
    let base = folder().join("refs.json");
    let store = Arc::new(ReferenceStoreBuilder::new().build(references, base.to_str().unwrap()).unwrap());
    let temp = Array::open(store.clone(), "/temp").unwrap();
    let (shape, data) = npy(&folder().join("series.temp.npy"));
    assert_eq!(temp.shape(), &shape[..]);
    let bytes = temp.retrieve_array_subset::<ArrayBytes>(&temp.subset_all()).unwrap();
    assert_eq!(bytes.into_fixed().unwrap().into_owned(), data);
    let time = Array::open(store, "/time").unwrap();
    let times = time.retrieve_array_subset::<Vec<f64>>(&time.subset_all()).unwrap();
    assert_eq!(times, [0.0, 1.0, 2.0, 3.0, 4.0, 5.0]);
}

/// A `.npy` file's dtype, shape and data, numbers made little-endian.
fn npy_any(path: &Path) -> (String, Vec<u64>, Vec<u8>) {
    let bytes = std::fs::read(path).unwrap();
    let header_len = usize::from(u16::from_le_bytes([bytes[8], bytes[9]]));
    let header = std::str::from_utf8(&bytes[10..10 + header_len]).unwrap();
    let descr = header.split("'descr': '").nth(1).unwrap().split('\'').next().unwrap().to_owned();
    let (shape, mut data) = npy(path);
    if let Some(size) = descr.strip_prefix('>').and_then(|d| d[1..].parse::<usize>().ok()) {
        data.chunks_mut(size).for_each(<[u8]>::reverse);
    }
    (descr, shape, data)
}

/// The conformance corpus's HDF5 and NetCDF-4 cases (`tests/data`, each
/// file with kerchunk's references and h5py's ground truth): scanned here,
/// every array its case lists reads that ground truth, and every chunk
/// both sets reference has kerchunk's offset and length.
#[test]
fn conformance_cases_read_their_ground_truth() {
    let data = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/data");
    let (mut arrays, mut ranges) = (0, 0);
    let mut cases: Vec<PathBuf> = std::fs::read_dir(&data).unwrap().map(|e| e.unwrap().path()).collect();
    cases.sort();
    for case in cases {
        let file = ["data.h5", "data.nc"].into_iter().find(|f| case.join(f).exists());
        let Some(file) = file else { continue };
        if std::fs::read(case.join(file)).unwrap().starts_with(b"CDF") {
            continue; // NetCDF-3: tests/netcdf3.rs
        }
        let name = case.file_name().unwrap().to_str().unwrap().to_owned();
        let store: Arc<dyn ObjectStore> = Arc::new(LocalFileSystem::new_with_prefix(&case).unwrap());
        let scanned = runtime()
            .block_on(scan(&store, &StorePath::from(file), file, &ScanOptions::default()))
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        assert!(scanned.skipped.is_empty(), "{name}: {:?}", scanned.skipped);
        if let Ok(text) = std::fs::read(case.join("refs.json")) {
            // Nothing inlined, so that every chunk kerchunk references is a range here too.
            let options = ScanOptions::default().with_inline_threshold(0);
            let uninlined = runtime().block_on(scan(&store, &StorePath::from(file), file, &options)).unwrap();
            let theirs = ReferenceSet::from_json(&text[..], &ParseOptions::default()).unwrap();
            for (key, reference) in theirs.iter() {
                if let Reference::Range { offset, length, .. } = reference {
                    match uninlined.references.get(&key) {
                        Some(Reference::Range { offset: o, length: l, .. }) => {
                            assert_eq!((offset, length), (o, l), "{name} {key}");
                        }
                        other => panic!("{name} {key}: {other:?}"),
                    }
                    ranges += 1;
                }
            }
        }
        let refs = case.join("refs.json");
        let store = Arc::new(ReferenceStoreBuilder::new().build(scanned.references, refs.to_str().unwrap()).unwrap());
        let description = json(&std::fs::read(case.join("case.json")).unwrap());
        for entry in description["arrays"].as_array().unwrap() {
            let (Some(path), Some(expected)) = (entry["path"].as_str(), entry["expected"].as_str()) else { continue };
            let array =
                Array::open(store.clone(), &format!("/{path}")).unwrap_or_else(|e| panic!("{name} {path}: {e}"));
            let (descr, shape, truth) = npy_any(&case.join(expected));
            assert_eq!(array.shape(), &shape[..], "{name} {path}");
            if let Some(width) = descr.strip_prefix("<U") {
                let values = array.retrieve_array_subset::<Vec<String>>(&array.subset_all()).unwrap();
                let width: usize = width.parse().unwrap();
                let expected: Vec<String> = truth
                    .chunks(4 * width)
                    .map(|s| {
                        s.chunks(4)
                            .map(|c| u32::from_le_bytes(c.try_into().unwrap()))
                            .filter(|&c| c != 0)
                            .map(|c| char::from_u32(c).unwrap())
                            .collect()
                    })
                    .collect();
                assert_eq!(values, expected, "{name} {path}");
            } else {
                let bytes = array.retrieve_array_subset::<ArrayBytes>(&array.subset_all()).unwrap();
                assert_eq!(bytes.into_fixed().unwrap().into_owned(), truth, "{name} {path}");
            }
            arrays += 1;
        }
    }
    eprintln!("{arrays} arrays read, {ranges} of kerchunk's ranges compared");
    assert!(arrays >= 40 && ranges >= 40, "{arrays} arrays, {ranges} ranges");
}

/// The corpus's multi-file case (`mzz_time_concat`: kerchunk's
/// `MultiZarrToZarr` of four daily NetCDF-4 files along time, with `lat` and
/// `lon` identical): scanned and combined here, every array reads its ground
/// truth, and every chunk reference has the file, offset and length of
/// kerchunk's combined set.
#[test]
fn daily_files_combine_as_multizarrtozarr_does() {
    let case = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/data/mzz_time_concat");
    let store: Arc<dyn ObjectStore> = Arc::new(LocalFileSystem::new_with_prefix(&case).unwrap());
    let options = ScanOptions::default().with_inline_threshold(0).with_inlined_variables(["time"]);
    let inputs = ["day3.nc", "day1.nc", "day4.nc", "day2.nc"]
        .map(|file| {
            let scan = runtime().block_on(scan(&store, &StorePath::from(file), file, &options)).unwrap();
            (file.to_owned(), scan.references)
        })
        .into_iter()
        .collect();
    let combined = combine(inputs, "time").unwrap();
    let text = std::fs::read(case.join("refs.json")).unwrap();
    let theirs = ReferenceSet::from_json(&text[..], &ParseOptions::default()).unwrap();
    let mut ranges = 0;
    for (key, reference) in theirs.iter() {
        if let Reference::Range { url, offset, length } = reference {
            assert_eq!(combined.get(&key), Some(Reference::Range { url, offset, length }), "{key}");
            ranges += 1;
        }
    }
    assert_eq!(ranges, 8 + 2, "tas's 8 chunks, lat and lon");
    let refs = case.join("refs.json");
    let store = Arc::new(ReferenceStoreBuilder::new().build(combined, refs.to_str().unwrap()).unwrap());
    for name in ["lat", "lon", "tas", "time"] {
        let array = Array::open(store.clone(), &format!("/{name}")).unwrap();
        let (_, shape, truth) = npy_any(&case.join(format!("expected/{name}.npy")));
        assert_eq!(array.shape(), &shape[..], "{name}");
        let bytes = array.retrieve_array_subset::<ArrayBytes>(&array.subset_all()).unwrap();
        assert_eq!(bytes.into_fixed().unwrap().into_owned(), truth, "{name}");
    }
}

/// kerchunk's own linked file (`air_linked.nc`): `lat` and `time` with hard links (`lat_hard`,
/// `time_hard`) and soft links (`lat_soft`, `time_soft`) beside them. The linked datasets are
/// written under each name, with kerchunk's keys, ranges and metadata
/// (`translate(preserve_linked_dsets=True)`).
#[test]
fn linked_datasets_are_written_under_each_name() {
    let file = "air_linked.nc";
    let text = std::fs::read(folder().join(format!("{file}.kerchunk.json"))).unwrap();
    let theirs = ReferenceSet::from_json(&text[..], &ParseOptions::default()).unwrap();
    let ours = scan_file(file, &ScanOptions::default().with_inline_threshold(0)).unwrap().references;
    let keys = |set: &ReferenceSet| -> BTreeSet<String> { set.iter().map(|(k, _)| k.into_owned()).collect() };
    assert_eq!(keys(&ours), keys(&theirs));
    for name in ["lat_hard", "lat_soft", "time_hard", "time_soft"] {
        assert!(ours.get(&format!("{name}/.zarray")).is_some(), "{name}");
    }
    for (key, reference) in theirs.iter() {
        match (ours.get(&key).unwrap(), reference) {
            (Reference::Range { offset, length, .. }, Reference::Range { offset: o, length: l, .. }) => {
                assert_eq!((offset, length), (o, l), "{key}");
            }
            (Reference::Inline(ours), Reference::Inline(theirs))
                if key.ends_with(".zarray") || key.ends_with(".zattrs") =>
            {
                // `f4` attributes: ours in their shortest form, kerchunk's as the f64 of the f32.
                let (ours, theirs) = (json(ours), json(theirs));
                assert!(same_numbers(&ours, &theirs), "{key}: ours {ours} against kerchunk's {theirs}");
            }
            (ours, theirs) => assert_eq!(format!("{ours:?}"), format!("{theirs:?}"), "{key}"),
        }
    }
}

/// Whether two JSON documents are equal, but that a number of ours may be an `f4` written in its
/// shortest form where kerchunk's is that `f4` widened to `f64` (0.1 against 0.10000000149011612):
/// kerchunk's must then be exactly the widening of ours as `f4`. An `f8` of ours rounded to `f4`
/// and widened (0.10000000149011612 where kerchunk has 0.1) is not: its widening is itself.
fn same_numbers(ours: &Value, theirs: &Value) -> bool {
    match (ours, theirs) {
        (Value::Number(a), Value::Number(b)) if a != b => match (a.as_f64(), b.as_f64()) {
            #[expect(clippy::cast_possible_truncation, reason = "ours read as the f4 it may be")]
            (Some(a), Some(b)) => (a as f32).is_finite() && f64::from(a as f32).to_bits() == b.to_bits(),
            _ => false,
        },
        (Value::Array(a), Value::Array(b)) => a.len() == b.len() && a.iter().zip(b).all(|(a, b)| same_numbers(a, b)),
        (Value::Object(a), Value::Object(b)) => {
            a.len() == b.len() && a.iter().all(|(k, v)| b.get(k).is_some_and(|w| same_numbers(v, w)))
        }
        (a, b) => a == b,
    }
}

/// The comparison above tells an `f4` written short from an `f8` rounded to `f4`, which rounding
/// both sides to `f4` (the check it replaces) took as equal.
#[test]
fn an_f8_attribute_rounded_to_f4_is_told_apart() {
    let (short_f4, widened_f4, f8) =
        (serde_json::json!(0.1), serde_json::json!(0.100_000_001_490_116_12), serde_json::json!(0.1));
    assert!(same_numbers(&short_f4, &widened_f4), "an f4 written short, kerchunk's widened");
    assert!(!same_numbers(&widened_f4, &f8), "an f8 rounded to f4 is another value");
    assert!(same_numbers(&serde_json::json!({"a": [1, 2.5]}), &serde_json::json!({"a": [1, 2.5]})));
    assert!(!same_numbers(&serde_json::json!([1.5]), &serde_json::json!([1.5, 2.0])));
}

/// The `.zarray` of array `name`, as JSON.
fn zarray(references: &ReferenceSet, name: &str) -> Value {
    match references.get(&format!("{name}/.zarray")) {
        Some(Reference::Inline(bytes)) => json(bytes),
        other => panic!("{name}/.zarray: {other:?}"),
    }
}

/// Small arrays of filters no zarr codec describes (h5py's LZF; the bitshuffle plugin without
/// compression, or with LZ4 on chunks whose elements are not a multiple of 8) are held decoded, each h5py's values; a
/// large one is left out, naming why. Under kerchunk's threshold for `inline_threshold=0` (100
/// bytes), the same arrays as kerchunk's, byte for byte.
#[test]
fn small_arrays_no_codec_describes_are_held_decoded() {
    let file = "plugin_filters.h5";
    let scan = scan_file(file, &ScanOptions::default().with_inline_threshold(500)).unwrap();
    for name in ["lzf_i4", "lzf_f8", "bitshuffle_i4", "bitshuffle_lz4_i2", "bitshuffle_lz4_f4"] {
        let (shape, truth) = npy(&folder().join(format!("{file}.{name}.npy")));
        let key = format!("{name}/{}", vec!["0"; shape.len()].join("."));
        match scan.references.get(&key) {
            Some(Reference::Inline(bytes)) => assert_eq!(bytes, &truth[..], "{name}"),
            other => panic!("{name}: {other:?}; skipped: {:?}", scan.skipped),
        }
        let zarray = zarray(&scan.references, name);
        assert_eq!(zarray["filters"], Value::Null, "{name}: held decoded, so without filters");
    }
    let skipped: Vec<(&str, &str)> = scan.skipped.iter().map(|s| (s.path.as_str(), s.reason.as_str())).collect();
    assert_eq!(
        skipped,
        [
            (
                "bitshuffle_large_i4",
                "the bitshuffle filter (id 32008) without compression, which zarr-python's imagecodecs_bitshuffle \
                 misreads (as one-byte elements) unless a codec that returns bytes runs before it"
            ),
            (
                "bitshuffle_lz4_odd_f8",
                "the bitshuffle filter (id 32008) with LZ4 on chunks of 1003 elements, not a multiple of 8: \
                 the plugin stores the last 3 as they are, which no zarr codec reads"
            )
        ]
    );

    let text = std::fs::read(folder().join(format!("{file}.kerchunk.json"))).unwrap();
    let theirs = ReferenceSet::from_json(&text[..], &ParseOptions::default()).unwrap();
    let ours = scan_file(file, &ScanOptions::default().with_inline_threshold(0)).unwrap().references;
    // Every chunk kerchunk holds decoded (inline, even at threshold 0) that no codec of ours
    // describes is ours the same way. Metadata is compared elsewhere.
    let mut chunks = 0;
    for (key, reference) in theirs.iter().filter(|(key, _)| !key.rsplit('/').next().unwrap_or("").starts_with(".z")) {
        if key.starts_with("lz4_u1/") {
            // kerchunk has no codec for HDF5's LZ4 and holds it decoded; ours is imagecodecs_lz4h5.
            assert!(matches!(ours.get(&key), Some(Reference::Range { .. })), "{key}");
            continue;
        }
        match (ours.get(&key), reference) {
            (Some(Reference::Inline(ours)), Reference::Inline(theirs)) => assert_eq!(ours, theirs, "{key}"),
            (Some(ours), theirs) => assert_eq!(ours, theirs, "{key}: ours against kerchunk's"),
            (None, _) => panic!("kerchunk's {key} is not ours"),
        }
        chunks += 1;
    }
    assert_eq!(chunks, 2, "kerchunk's chunks of bitshuffle_lz4_i2 and bitshuffle_lz4_f4");
}

/// HDF5's LZ4 plugin and the bitshuffle plugin with LZ4 on chunks of a multiple of 8 elements
/// are referenced under imagecodecs' ids, whatever their size (kerchunk
/// leaves the large ones out), and read through this crate's codecs exactly what h5py reads:
/// blocks LZ4 shrank and blocks stored as they are, chunks of several bitshuffle blocks, edge
/// chunks; and kerchunk's own test files. What no codec reads is left out, naming why.
#[test]
fn lz4_and_bitshuffle_are_referenced_under_imagecodecs_ids() {
    let _codecs = zarrs_kerchunk_codecs::register_codecs();
    let lz4 = serde_json::json!([{"id": "imagecodecs_lz4h5"}]);
    let shuffle =
        |itemsize: u64| serde_json::json!({"id": "imagecodecs_bitshuffle", "itemsize": itemsize, "blocksize": 0});
    let cases = [
        ("plugin_filters.h5", "lz4_i4", lz4.clone()),
        ("plugin_filters.h5", "lz4_u1", lz4.clone()),
        ("plugin_filters.h5", "large_lz4", lz4.clone()),
        ("plugin_filters.h5", "lz4_noise_f4", lz4.clone()),
        ("plugin_filters.h5", "bitshuffle_lz4_large_f4", serde_json::json!([shuffle(4), {"id": "imagecodecs_lz4h5"}])),
        ("hdf5_compression_lz4.h5", "data", lz4),
    ];
    for (file, name, filters) in cases {
        let scan = scan_file(file, &ScanOptions::default().with_inline_threshold(0)).unwrap();
        let zarray = zarray(&scan.references, name);
        assert_eq!(zarray["filters"], filters, "{file}: {name}");
        let base = folder().join("refs.json");
        let store = Arc::new(ReferenceStoreBuilder::new().build(scan.references, base.to_str().unwrap()).unwrap());
        let array = Array::open(store, &format!("/{name}")).unwrap();
        let bytes = array.retrieve_array_subset::<ArrayBytes>(&array.subset_all()).unwrap();
        let (_, truth) = npy(&folder().join(format!("{file}.{name}.npy")));
        assert_eq!(bytes.into_fixed().unwrap().into_owned(), truth, "{file}: {name}");
    }
    // kerchunk's own bitshuffle file: 100 elements in one chunk, 4 past the last multiple of 8.
    let scan = scan_file("hdf5_compression_bitshuffle.h5", &ScanOptions::default()).unwrap();
    let skipped: Vec<(&str, &str)> = scan.skipped.iter().map(|s| (s.path.as_str(), s.reason.as_str())).collect();
    assert_eq!(
        skipped,
        [(
            "data",
            "the bitshuffle filter (id 32008) with LZ4 on chunks of 100 elements, not a multiple of 8: \
             the plugin stores the last 4 as they are, which no zarr codec reads"
        )]
    );
}
