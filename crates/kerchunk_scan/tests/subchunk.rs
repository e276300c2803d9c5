//! `subchunk` against kerchunk's `utils.subchunk` on the same arrays of
//! `tests/scan/hdf5/earliest.h5` (`earliest.h5.subchunk.kerchunk.json`, made
//! by that folder's `make.py`): the same chunk grid, offsets and lengths,
//! and every array still reads h5py's values; and the arrays it refuses.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use kerchunk::{Reference, ReferenceSet, ReferenceSetBuilder};
use kerchunk_scan::{ScanOptions, scan, subchunk};
use object_store::ObjectStore;
use object_store::local::LocalFileSystem;
use object_store::path::Path as StorePath;
use serde_json::Value;
use zarrs::array::{Array, ArrayBytes};
use zarrs_kerchunk::ReferenceStoreBuilder;

fn folder() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/scan/hdf5")
}

fn scanned(options: &ScanOptions) -> ReferenceSet {
    let store: Arc<dyn ObjectStore> = Arc::new(LocalFileSystem::new_with_prefix(folder()).unwrap());
    let runtime = tokio::runtime::Runtime::new().unwrap();
    runtime.block_on(scan(&store, &StorePath::from("earliest.h5"), "earliest.h5", options)).unwrap().references
}

/// The data of a little-endian `.npy` file.
fn npy_data(path: &Path) -> Vec<u8> {
    let bytes = std::fs::read(path).unwrap();
    let header_len = usize::from(u16::from_le_bytes([bytes[8], bytes[9]]));
    bytes[10 + header_len..].to_vec()
}

fn read(references: ReferenceSet, array: &str) -> Vec<u8> {
    let base = folder().join("refs.json");
    let store = Arc::new(ReferenceStoreBuilder::new().build(references, base.to_str().unwrap()).unwrap());
    let array = Array::open(store, &format!("/{array}")).unwrap();
    array.retrieve_array_subset::<ArrayBytes>(&array.subset_all()).unwrap().into_fixed().unwrap().into_owned()
}

#[test]
fn splits_as_kerchunk_does() {
    let text = std::fs::read_to_string(folder().join("earliest.h5.subchunk.kerchunk.json")).unwrap();
    let kerchunk: Value = serde_json::from_str(&text).unwrap();
    let references = scanned(&ScanOptions::default().with_inline_threshold(0));
    for (array, expected) in kerchunk.as_object().unwrap() {
        let factor = expected["factor"].as_u64().unwrap();
        let split = subchunk(&references, array, factor).unwrap();
        let theirs = expected["refs"].as_object().unwrap();
        let zarray = |text: &str| serde_json::from_str::<Value>(text).unwrap();
        let ours = split.get(&format!("{array}/.zarray")).unwrap();
        let Reference::Inline(ours) = ours else { panic!("{array}: metadata not inline") };
        let their_zarray = zarray(theirs[&format!("{array}/.zarray")].as_str().unwrap());
        assert_eq!(zarray(std::str::from_utf8(ours).unwrap())["chunks"], their_zarray["chunks"], "{array}");
        let mut compared = 0;
        for (key, value) in theirs.iter().filter(|(k, _)| !k.contains("/.z")) {
            let (offset, length) = (value[1].as_u64().unwrap(), value[2].as_u64().unwrap());
            match split.get(key) {
                Some(Reference::Range { offset: o, length: l, .. }) => {
                    assert_eq!((o, l), (offset, length), "{key}");
                    compared += 1;
                }
                // kerchunk also makes chunks wholly past the array's end; we leave them out.
                None => {
                    let index: u64 = key.rsplit('/').next().unwrap().split('.').next().unwrap().parse().unwrap();
                    let (shape, chunks) = (&their_zarray["shape"][0], &their_zarray["chunks"][0]);
                    assert!(index * chunks.as_u64().unwrap() >= shape.as_u64().unwrap(), "{key} is missing");
                }
                other => panic!("{key}: {other:?}"),
            }
        }
        assert!(compared >= 3, "{array}: {compared}");
        let truth = npy_data(&folder().join(format!("earliest.h5.{array}.npy")));
        assert_eq!(read(split, array), truth, "{array}");
    }
}

#[test]
fn refuses_what_would_read_other_bytes() {
    let references = scanned(&ScanOptions::default().with_inline_threshold(0));
    let refused = |array: &str, factor: u64| subchunk(&references, array, factor).unwrap_err().to_string();
    assert!(refused("edges", 2).contains("filtered"), "gzip and shuffle as filters");
    assert!(refused("contiguous", 2).contains("does not divide the chunk length 3"));
    assert!(refused("contiguous", 1).contains("2 or more"));
    assert!(refused("nothing", 2).contains("nothing/.zarray is not inline metadata"));
    let inlined = scanned(&ScanOptions::default().with_inline_threshold(1 << 20));
    let error = subchunk(&inlined, "contiguous", 3).unwrap_err().to_string();
    assert!(error.contains("chunk contiguous/0.0 is inline"), "{error}");

    // A chunk whose length the factor does not divide, and a whole-file chunk.
    let zarray = r#"{"shape":[4],"chunks":[4],"dtype":"<i4","fill_value":0,"order":"C","filters":null,"compressor":null,"zarr_format":2}"#;
    for (chunk, reason) in [(Some(15), "15 bytes"), (None, "a whole file")] {
        let mut set = ReferenceSetBuilder::new();
        set.insert_inline("a/.zarray", zarray.as_bytes());
        match chunk {
            Some(length) => set.insert_range("a/0", Some("f.bin"), 0, length),
            None => set.insert_whole("a/0", Some("f.bin")),
        }
        let error = subchunk(&set.build(), "a", 2).unwrap_err().to_string();
        assert!(error.contains(reason), "{error}");
    }
}

/// Every other key is kept as it was.
#[test]
fn leaves_the_rest_alone() {
    let references = scanned(&ScanOptions::default().with_inline_threshold(0));
    let split = subchunk(&references, "contiguous", 3).unwrap();
    for (key, value) in references.iter() {
        if !key.starts_with("contiguous/") {
            assert_eq!(split.get(&key), Some(value), "{key}");
        }
    }
    assert_eq!(split.get("contiguous/.zattrs"), references.get("contiguous/.zattrs"));
    assert_eq!(split.get("contiguous/0.0").map(|r| matches!(r, Reference::Range { length: 32, .. })), Some(true));
}
