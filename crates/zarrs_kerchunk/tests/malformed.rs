//! A malformed reference fails its own key when it is read, on every path
//! (whole reads, partial reads, sizes, zarrs' chunk reads, sync and async),
//! and leaves every other key of the set readable: from JSON `refs`, from
//! `gen`, and from parquet rows. With `MalformedReferences::Refuse`, a JSON
//! document with one is refused at open, naming the key.

mod common;

use std::path::PathBuf;
use std::sync::Arc;

use futures::StreamExt;
use kerchunk::{MalformedReferences, ParseOptions};
use zarrs::array::{Array, ArraySubset};
use zarrs_kerchunk::{ReferenceStore, ReferenceStoreBuilder};
use zarrs_storage::byte_range::ByteRange;
use zarrs_storage::{AsyncReadableStorageTraits, ListableStorageTraits, ReadableStorageTraits, StoreKey};

fn key(k: &str) -> StoreKey {
    StoreKey::new(k).unwrap()
}

/// Every kind of malformed reference, as the JSON value of a key, and what its error says.
const MALFORMED: [(&str, &str); 10] = [
    (r#"["data.bin", 1]"#, "not 2"),
    (r#"["data.bin", 1, 2, 3]"#, "not 4"),
    (r#"["data.bin", -1, 2]"#, "offset must be a non-negative integer"),
    (r#"["data.bin", 1, 2.5]"#, "length must be a non-negative integer"),
    (r#"["data.bin", 18446744073709551615, 1]"#, "overflows"),
    (r"[7, 0, 1]", "URL must be a string"),
    (r"[]", "empty array"),
    (r#""base64:!!""#, "base64"),
    (r"null", "not null"),
    (r"true", "boolean"),
];

/// A folder with `data.bin` (100 bytes 0..100) and `refs.json`: a 4-chunk
/// `uint8` array `x` whose chunk 1 is `malformed`, its other chunks fine.
fn scratch(malformed: &str) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("data.bin"), (0u8..100).collect::<Vec<_>>()).unwrap();
    let doc = format!(
        r#"{{".zgroup": {{"zarr_format": 2}},
            "x/.zarray": {{"shape": [8], "chunks": [2], "dtype": "|u1", "compressor": null, "filters": null,
                          "fill_value": 0, "order": "C", "zarr_format": 2}},
            "x/.zattrs": {{"_ARRAY_DIMENSIONS": ["i"]}},
            "x/0": ["data.bin", 10, 2], "x/1": {malformed}, "x/2": ["data.bin", 20, 2], "x/3": "base64:AQI="}}"#
    );
    let path = dir.path().join("refs.json");
    std::fs::write(&path, doc).unwrap();
    (dir, path)
}

fn assert_names(error: &impl ToString, cause: &str) {
    let text = error.to_string();
    assert!(text.contains("\"x/1\"") && text.contains("malformed") && text.contains(cause), "{cause}: {text}");
}

/// Every sync path through `store`: `x/1` fails, the rest read.
#[expect(clippy::single_range_in_vec_init, reason = "one-dimensional regions")]
fn check_sync(store: &Arc<ReferenceStore>, cause: &str) {
    assert_names(&store.get(&key("x/1")).unwrap_err(), cause);
    let parts = Box::new([ByteRange::FromStart(0, Some(1))].into_iter());
    assert_names(&store.get_partial_many(&key("x/1"), parts).err().expect("a part was read"), cause);
    assert_names(&store.size_key(&key("x/1")).unwrap_err(), cause);
    assert!(store.list_prefix(&"x/".try_into().unwrap()).unwrap().contains(&key("x/1")), "the key is listed");
    assert_eq!(&store.get(&key("x/0")).unwrap().unwrap()[..], [10, 11]);
    assert_eq!(&store.get(&key("x/3")).unwrap().unwrap()[..], [1, 2]);
    // Through zarrs: the chunk is an error, never the fill value; the others decode.
    let array = Array::open(store.clone(), "/x").unwrap();
    assert_names(&array.retrieve_chunk::<Vec<u8>>(&[1]).unwrap_err(), cause);
    assert_names(&array.retrieve_array_subset::<Vec<u8>>(&ArraySubset::new_with_ranges(&[0..8])).unwrap_err(), cause);
    let read = array.retrieve_array_subset::<Vec<u8>>(&ArraySubset::new_with_ranges(&[4..8])).unwrap();
    assert_eq!(read, [20, 21, 1, 2]);
}

#[test]
fn a_malformed_reference_fails_its_key_and_only_it() {
    for (value, cause) in MALFORMED {
        let (_dir, path) = scratch(value);
        let store = Arc::new(ReferenceStore::open(path.to_str().unwrap()).unwrap());
        check_sync(&store, cause);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[expect(clippy::single_range_in_vec_init, reason = "one-dimensional regions")]
async fn a_malformed_reference_fails_its_key_and_only_it_async() {
    for (value, cause) in MALFORMED {
        let (_dir, path) = scratch(value);
        let store = Arc::new(ReferenceStoreBuilder::new().open_async(path.to_str().unwrap()).await.unwrap());
        assert_names(&store.get(&key("x/1")).await.unwrap_err(), cause);
        let parts = Box::new([ByteRange::FromStart(0, Some(1))].into_iter());
        assert_names(&store.get_partial_many(&key("x/1"), parts).await.err().expect("a part was read"), cause);
        assert_names(&store.size_key(&key("x/1")).await.unwrap_err(), cause);
        assert_eq!(&store.get(&key("x/0")).await.unwrap().unwrap()[..], [10, 11]);
        let array = Array::async_open(store.clone(), "/x").await.unwrap();
        let subset = ArraySubset::new_with_ranges(&[0..8]);
        assert_names(&array.async_retrieve_array_subset::<Vec<u8>>(&subset).await.unwrap_err(), cause);
        let subset = ArraySubset::new_with_ranges(&[0..4]);
        let parts = Box::new([ByteRange::FromStart(0, Some(1))].into_iter());
        let first: Vec<_> = store.get_partial_many(&key("x/0"), parts).await.unwrap().unwrap().collect().await;
        assert_eq!(first.into_iter().map(Result::unwrap).collect::<Vec<_>>(), [&[10u8][..]]);
        assert_names(&array.async_retrieve_array_subset::<Vec<u8>>(&subset).await.unwrap_err(), cause);
    }
}

#[test]
fn refusing_malformed_references_refuses_the_document_naming_the_key() {
    let refuse = ParseOptions::default().with_malformed_references(MalformedReferences::Refuse);
    for (value, cause) in MALFORMED {
        let (_dir, path) = scratch(value);
        let err = ReferenceStoreBuilder::new()
            .with_parse_options(refuse.clone())
            .open(path.to_str().unwrap())
            .unwrap_err()
            .to_string();
        assert!(err.contains("\"x/1\"") && err.contains(cause), "{value}: {err}");
    }
}

/// A generated offset that renders to no integer makes its key malformed, as in `refs`.
#[test]
fn a_malformed_generated_reference_fails_its_key() {
    let (dir, _) = scratch(r#"["data.bin", 0, 1]"#);
    let doc = r#"{"version": 1,
        "refs": {".zgroup": {"zarr_format": 2},
                 "x/.zarray": {"shape": [8], "chunks": [2], "dtype": "|u1", "compressor": null, "filters": null,
                               "fill_value": 0, "order": "C", "zarr_format": 2},
                 "x/.zattrs": {"_ARRAY_DIMENSIONS": ["i"]}, "x/3": "base64:AQI="},
        "gen": [{"key": "x/{{c}}", "url": "data.bin", "offset": "{{ 'ten' if c == 1 else 10 * c }}", "length": "2",
                 "dimensions": {"c": {"stop": 3}}}]}"#;
    let path = dir.path().join("gen.json");
    std::fs::write(&path, doc).unwrap();
    let store = Arc::new(ReferenceStore::open(path.to_str().unwrap()).unwrap());
    assert_eq!(&store.get(&key("x/0")).unwrap().unwrap()[..], [0, 1]);
    assert_names(&store.get(&key("x/1")).unwrap_err(), "generated offset \"ten\"");
    assert_eq!(&store.get(&key("x/2")).unwrap().unwrap()[..], [20, 21]);
}
