//! NetCDF-3 scans against kerchunk's own references for the same files (the
//! conformance cases of `tests/data`): the same keys, every range reference
//! with kerchunk's offset and length, the same array metadata, and every
//! array reading the same bytes through the store.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use kerchunk::{JsonWriteOptions, ParseOptions, Reference, ReferenceSet};
use kerchunk_scan::{ScanError, ScanOptions, scan_netcdf3};
use object_store::ObjectStore;
use object_store::local::LocalFileSystem;
use object_store::path::Path as StorePath;
use serde_json::Value;
use zarrs::array::{Array, ArrayBytes};
use zarrs_kerchunk::ReferenceStore;

fn case_dir(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/data").join(name)
}

fn local(dir: &Path) -> Arc<dyn ObjectStore> {
    Arc::new(LocalFileSystem::new_with_prefix(dir).unwrap())
}

async fn scan(dir: &Path, file: &str, options: &ScanOptions) -> Result<kerchunk_scan::Scan, ScanError> {
    scan_netcdf3(&local(dir), &StorePath::from(file), file, options).await
}

fn json(text: &[u8]) -> Value {
    serde_json::from_slice(text).unwrap()
}

/// The scan of `netcdf3_classic/data.nc` without inlining is kerchunk's
/// `NetCDF3ToZarr(inline_threshold=0)` output: same keys, same ranges, same
/// `.zarray`s, and attributes equal where kerchunk keeps their type.
#[tokio::test]
async fn classic_file_matches_kerchunk() {
    let dir = case_dir("netcdf3_classic");
    let scanned = scan(&dir, "data.nc", &ScanOptions::default().with_inline_threshold(0)).await.unwrap();
    let kerchunk =
        ReferenceSet::from_json(&std::fs::read(dir.join("refs.json")).unwrap()[..], &ParseOptions::default()).unwrap();
    let keys = |set: &ReferenceSet| set.iter().map(|(k, _)| k.into_owned()).collect::<std::collections::BTreeSet<_>>();
    assert_eq!(keys(&scanned.references), keys(&kerchunk));
    for (key, theirs) in kerchunk.iter() {
        let ours = scanned.references.get(&key).unwrap();
        match (ours, theirs) {
            (Reference::Range { offset, length, .. }, Reference::Range { offset: o, length: l, .. }) => {
                assert_eq!((offset, length), (o, l), "{key}");
            }
            (Reference::Inline(ours), Reference::Inline(theirs)) => {
                assert_eq!(json(ours), json(theirs), "{key}");
            }
            other => panic!("{key}: {other:?}"),
        }
    }
    // The header and nothing else was read, with the file's size, in one request.
    assert_eq!((scanned.stats.requests, scanned.stats.bytes), (1, 1060));
}

/// Every array reads the same bytes through the store from the scan's
/// references as from kerchunk's, with or without inlining.
#[test]
fn arrays_read_as_through_kerchunks_references() {
    let dir = case_dir("netcdf3_classic");
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let theirs = Arc::new(ReferenceStore::open(dir.join("refs.json").to_str().unwrap()).unwrap());
    for threshold in [0, 100, 1000] {
        let scanned = runtime.block_on(scan(&dir, "data.nc", &ScanOptions::default().with_inline_threshold(threshold)));
        let scratch = tempfile::tempdir().unwrap();
        std::fs::copy(dir.join("data.nc"), scratch.path().join("data.nc")).unwrap();
        let refs = scratch.path().join("refs.json");
        scanned
            .unwrap()
            .references
            .write_json(std::fs::File::create(&refs).unwrap(), &JsonWriteOptions::default())
            .unwrap();
        let ours = Arc::new(ReferenceStore::open(refs.to_str().unwrap()).unwrap());
        let case = json(&std::fs::read(dir.join("case.json")).unwrap());
        for array in case["arrays"].as_array().unwrap().iter().map(|a| a["path"].as_str().unwrap()) {
            let read = |store: &Arc<ReferenceStore>| {
                let array = Array::open(store.clone(), &format!("/{array}"))
                    .unwrap_or_else(|e| panic!("{array} at threshold {threshold}: {e}"));
                let bytes = array.retrieve_array_subset::<ArrayBytes>(&array.subset_all()).unwrap();
                (array.shape().to_vec(), bytes.into_fixed().unwrap().into_owned())
            };
            assert_eq!(read(&ours), read(&theirs), "{array} at threshold {threshold}");
        }
    }
}

#[tokio::test]
async fn what_is_not_netcdf3_is_named() {
    let dir = case_dir("nc4_deflate_shuffle");
    let err = scan(&dir, "data.nc", &ScanOptions::default()).await.unwrap_err().to_string();
    assert!(err.contains("data.nc") && err.contains("HDF5"), "{err}");
    let err = scan(&dir, "refs.json", &ScanOptions::default()).await.unwrap_err().to_string();
    assert!(err.contains("refs.json is not a NetCDF-3 file"), "{err}");
    let err = scan(&dir, "no-such.nc", &ScanOptions::default()).await.unwrap_err().to_string();
    assert!(err.contains("cannot read no-such.nc"), "{err}");
}

/// A truncated file, a header past the limit, and data past the end are
/// errors naming the file, never references that cannot be read.
#[tokio::test]
async fn truncated_and_inconsistent_files_are_errors() {
    let good = std::fs::read(case_dir("netcdf3_classic").join("data.nc")).unwrap();
    let scratch = tempfile::tempdir().unwrap();
    let write = |name: &str, bytes: &[u8]| std::fs::write(scratch.path().join(name), bytes).unwrap();
    write("header-cut.nc", &good[..200]);
    write("data-cut.nc", &good[..good.len() - 10]);
    write("empty.nc", b"");
    let options = ScanOptions::default().with_inline_threshold(0);
    let err = scan(scratch.path(), "header-cut.nc", &options).await.unwrap_err().to_string();
    assert!(err.contains("header-cut.nc: malformed NetCDF-3 header") && err.contains("end of file"), "{err}");
    let err = scan(scratch.path(), "data-cut.nc", &options).await.unwrap_err().to_string();
    assert!(err.contains("data-cut.nc: variable") && err.contains("past the end of the file (1050 bytes)"), "{err}");
    let err = scan(scratch.path(), "empty.nc", &options).await.unwrap_err().to_string();
    assert!(err.contains("empty.nc is not a NetCDF-3 file: it has 0 bytes"), "{err}");
    write("data.nc", &good);
    let err = scan(scratch.path(), "data.nc", &options.clone().with_max_header_bytes(100)).await.unwrap_err();
    assert!(matches!(err, ScanError::HeaderTooLarge { limit: 100, .. }), "{err}");
    // Every byte of the header changed in turn: an error or references inside the file, never a panic.
    for at in 0..good.len().min(560) {
        for value in [0x00, 0x7f, 0xff] {
            let mut bytes = good.clone();
            bytes[at] = value;
            write("flipped.nc", &bytes);
            if let Ok(scanned) = scan(scratch.path(), "flipped.nc", &options).await {
                for (key, reference) in scanned.references.iter() {
                    if let Reference::Range { offset, length, .. } = reference {
                        assert!(offset + length <= good.len() as u64, "byte {at} = {value}: {key}");
                    }
                }
            }
        }
    }
}

/// From an object store, the header is read in whole blocks, each once: the
/// first read (one block here) with the file's size, then the rest of the
/// header in one request.
#[tokio::test]
async fn remote_reads_are_block_aligned_and_counted() {
    use object_store::{ObjectStoreExt, memory::InMemory};
    let bytes = std::fs::read(case_dir("netcdf3_classic").join("data.nc")).unwrap();
    let memory = InMemory::new();
    memory.put(&StorePath::from("run/data.nc"), bytes.clone().into()).await.unwrap();
    let store: Arc<dyn ObjectStore> = Arc::new(memory);
    let options = ScanOptions::default().with_inline_threshold(0).with_block_bytes(256).with_first_read_bytes(256);
    let scan =
        scan_netcdf3(&store, &StorePath::from("run/data.nc"), "s3://bucket/run/data.nc", &options).await.unwrap();
    assert_eq!(
        (scan.stats.requests, scan.stats.bytes),
        (2, bytes.len() as u64),
        "the first block and its size, then the rest"
    );
    assert!(matches!(
        scan.references.get("a/0.0"),
        Some(Reference::Range { url: Some("s3://bucket/run/data.nc"), offset: 556, length: 24 })
    ));
}
