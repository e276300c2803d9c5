//! Bad input gives clear errors naming the key, the URL and the cause: never a
//! panic, never wrong bytes, never a silent fill value.

mod common;

use std::path::PathBuf;
use std::sync::Arc;

use kerchunk::ParseError;
use zarrs::array::Array;
use zarrs_kerchunk::{OpenError, ReferenceStore, ReferenceStoreBuilder};
use zarrs_storage::byte_range::ByteRange;
use zarrs_storage::{ReadableStorageTraits, StoreKey};

/// A scratch folder holding `refs.json` with `doc`, and `data.bin` (100 bytes 0..100);
/// removed when the returned folder is dropped.
fn scratch(doc: &str) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("data.bin"), (0u8..100).collect::<Vec<_>>()).unwrap();
    std::fs::write(dir.path().join("refs.json"), doc).unwrap();
    let path = dir.path().join("refs.json");
    (dir, path)
}

fn key(k: &str) -> StoreKey {
    StoreKey::new(k).unwrap()
}

/// Malformed documents, and what their error must name. (A malformed
/// reference in a good document fails only its key: `tests/malformed.rs`.)
const MALFORMED: [(&str, &str); 3] =
    [(r#"{"version": 2, "refs": {}}"#, "version 2"), (r#"{"x/0": ["data.bin", 0, 1"#, "line 1"), ("", "EOF")];

#[test]
fn malformed_reference_files_name_the_key() {
    for (doc, needle) in MALFORMED {
        let (_dir, path) = scratch(doc);
        let err = ReferenceStore::open(path.to_str().unwrap()).unwrap_err().to_string();
        assert!(err.contains(needle), "{doc}: {err}");
    }
}

/// A document from an object store is parsed as a local one is (streamed,
/// then as text if the stream does not take it): the same errors, and bare
/// NaN accepted.
#[test]
fn remote_documents_parse_as_local_ones_do() {
    use zarrs_kerchunk::object_store::{ObjectStoreExt, memory::InMemory};
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let open_remote = |doc: &str| {
        let memory = Arc::new(InMemory::new());
        runtime.block_on(memory.put(&"refs.json".into(), doc.as_bytes().to_vec().into())).unwrap();
        ReferenceStoreBuilder::new().with_store("s3://bucket/", memory).open("s3://bucket/refs.json")
    };
    for (doc, needle) in MALFORMED {
        let err = open_remote(doc).unwrap_err().to_string();
        assert!(err.contains(needle), "{doc}: {err}");
        if needle == "line 1" {
            assert!(err.contains("s3://bucket/refs.json"), "a syntax error names the document: {err}");
        }
    }
    // A malformed reference fails its key when read, as in a local document.
    let store = open_remote(r#"{"x/0": ["data.bin", 1], "x/1": "ok"}"#).unwrap();
    let err = store.get(&key("x/0")).unwrap_err().to_string();
    assert!(err.contains("\"x/0\"") && err.contains("malformed") && err.contains("not 2"), "{err}");
    assert_eq!(&store.get(&key("x/1")).unwrap().unwrap()[..], b"ok");
    let nan = r#"{".zgroup": "{\"zarr_format\": 2}", "a/.zattrs": {"v": NaN}, "a/0": ["s3://bucket/x", 1, 2]}"#;
    let store = open_remote(nan).unwrap();
    assert!(store.get(&key("a/.zattrs")).unwrap().is_some_and(|v| String::from_utf8_lossy(&v).contains("NaN")));
}

#[test]
fn missing_reference_file() {
    let err = ReferenceStore::open("/no/such/refs.json").unwrap_err();
    assert!(matches!(err, OpenError::NotFound { .. }), "{err}");
    assert!(err.to_string().contains("/no/such/refs.json"), "{err}");
}

#[test]
fn references_past_the_end_of_the_target_are_errors() {
    let (_dir, path) = scratch(r#"{"a": ["data.bin", 90, 20], "b": ["data.bin", 200, 5], "ok": ["data.bin", 10, 5]}"#);
    let store = ReferenceStore::open(path.to_str().unwrap()).unwrap();
    for k in ["a", "b"] {
        let err = store.get(&key(k)).unwrap_err().to_string();
        assert!(err.contains(&format!("\"{k}\"")) && err.contains("data.bin") && err.contains("past the end"), "{err}");
    }
    assert_eq!(&store.get(&key("ok")).unwrap().unwrap()[..], &[10, 11, 12, 13, 14]);
}

/// References past the end of `data.bin` (100 bytes), and one that fits.
fn past_the_end() -> (tempfile::TempDir, PathBuf) {
    scratch(&format!(
        r#"{{"huge": ["data.bin", 0, {}], "long": ["data.bin", 10, 91], "ok": ["data.bin", 10, 90]}}"#,
        u64::MAX
    ))
}

/// A reference that does not fit its target is wrong for every read of it:
/// parts of it too, though the parts asked for lie inside the file.
#[test]
fn partial_reads_of_a_reference_past_the_end_are_errors() {
    let (_dir, path) = past_the_end();
    let store = ReferenceStore::open(path.to_str().unwrap()).unwrap();
    let parts = || Box::new([ByteRange::FromStart(10, Some(10)), ByteRange::FromStart(0, Some(1))].into_iter());
    for k in ["huge", "long"] {
        let err = store.get_partial_many(&key(k), parts()).err().unwrap_or_else(|| panic!("{k}: a part was read"));
        let err = err.to_string();
        assert!(err.contains(&format!("\"{k}\"")) && err.contains("data.bin") && err.contains("past the end"), "{err}");
    }
    let got: Vec<_> = store.get_partial_many(&key("ok"), parts()).unwrap().unwrap().map(Result::unwrap).collect();
    assert_eq!(got, [&(20u8..30).collect::<Vec<_>>()[..], &[10]]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn partial_reads_of_a_reference_past_the_end_are_errors_async() {
    use futures::StreamExt;
    use zarrs_storage::AsyncReadableStorageTraits;
    let (_dir, path) = past_the_end();
    let store = ReferenceStoreBuilder::new().open_async(path.to_str().unwrap()).await.unwrap();
    let parts = || Box::new([ByteRange::FromStart(10, Some(10)), ByteRange::FromStart(0, Some(1))].into_iter());
    for k in ["huge", "long"] {
        let err =
            store.get_partial_many(&key(k), parts()).await.err().unwrap_or_else(|| panic!("{k}: a part was read"));
        assert!(err.to_string().contains("past the end"), "{err}");
    }
    let got = store.get_partial_many(&key("ok"), parts()).await.unwrap().unwrap();
    let got: Vec<_> = got.map(Result::unwrap).collect().await;
    assert_eq!(got, [&(20u8..30).collect::<Vec<_>>()[..], &[10]]);
}

#[test]
fn missing_target_file_is_an_error_not_a_fill_value() {
    let doc = r#"{".zgroup": "{\"zarr_format\": 2}",
                  "x/.zarray": "{\"zarr_format\": 2, \"shape\": [4], \"chunks\": [4], \"dtype\": \"<i4\", \"fill_value\": 0, \"compressor\": null, \"filters\": null, \"order\": \"C\"}",
                  "x/0": ["gone.bin", 0, 16]}"#;
    let (_dir, path) = scratch(doc);
    let store = Arc::new(ReferenceStore::open(path.to_str().unwrap()).unwrap());
    let err = store.get(&key("x/0")).unwrap_err().to_string();
    assert!(err.contains("\"x/0\"") && err.contains("gone.bin") && err.contains("not found"), "{err}");
    let array = Array::open(store, "/x").unwrap();
    let err = array.retrieve_array_subset::<Vec<i32>>(&array.subset_all()).unwrap_err().to_string();
    assert!(err.contains("gone.bin"), "{err}");
}

#[test]
fn partial_reads_are_checked_against_the_reference_length() {
    let (_dir, path) = scratch(r#"{"r": ["data.bin", 10, 20], "w": ["data.bin"], "i": "hello"}"#);
    let store = ReferenceStore::open(path.to_str().unwrap()).unwrap();
    let get = |k: &str, ranges: Vec<ByteRange>| {
        store
            .get_partial_many(&key(k), Box::new(ranges.into_iter()))
            .map(|v| v.unwrap().map(Result::unwrap).collect::<Vec<_>>())
    };
    let got =
        get("r", vec![ByteRange::FromStart(0, Some(2)), ByteRange::Suffix(3), ByteRange::FromStart(18, None)]).unwrap();
    assert_eq!(got, [&[10u8, 11][..], &[27, 28, 29], &[28, 29]]);
    assert!(get("r", vec![ByteRange::FromStart(15, Some(10))]).is_err());
    assert!(get("r", vec![ByteRange::Suffix(21)]).is_err());
    let got =
        get("w", vec![ByteRange::FromStart(98, None), ByteRange::Suffix(1), ByteRange::FromStart(3, Some(2))]).unwrap();
    assert_eq!(got, [&[98u8, 99][..], &[99], &[3, 4]]);
    assert!(get("w", vec![ByteRange::FromStart(95, Some(10))]).unwrap_err().to_string().contains("past the end"));
    assert_eq!(get("i", vec![ByteRange::FromStart(1, Some(3))]).unwrap(), [&b"ell"[..]]);
    assert!(get("i", vec![ByteRange::FromStart(4, Some(3))]).is_err());
    assert_eq!(store.size_key(&key("r")).unwrap(), Some(20));
    assert_eq!(store.size_key(&key("w")).unwrap(), Some(100));
    assert_eq!(store.size_key(&key("nope")).unwrap(), None);
    assert!(store.get(&key("nope")).unwrap().is_none());
}

#[test]
fn null_urls_need_a_target() {
    let (_dir, path) = scratch(r#"{"a": [null, 2, 3], "b": [null]}"#);
    let store = ReferenceStore::open(path.to_str().unwrap()).unwrap();
    let err = store.get(&key("a")).unwrap_err().to_string();
    assert!(err.contains("\"a\"") && err.contains("with_target"), "{err}");
    let store = ReferenceStoreBuilder::new().with_target("data.bin").open(path.to_str().unwrap()).unwrap();
    assert_eq!(&store.get(&key("a")).unwrap().unwrap()[..], &[2, 3, 4]);
    assert_eq!(store.get(&key("b")).unwrap().unwrap().len(), 100);
}

#[test]
fn zero_length_ranges_read_as_empty() {
    let (_dir, path) = scratch(r#"{"z": ["data.bin", 0, 0]}"#);
    let store = ReferenceStore::open(path.to_str().unwrap()).unwrap();
    assert_eq!(store.get(&key("z")).unwrap().unwrap().len(), 0);
}

#[test]
fn unsupported_codecs_are_named_with_their_array() {
    let doc = r#"{".zgroup": "{\"zarr_format\": 2}",
                  "x/.zarray": {"zarr_format": 2, "shape": [4], "chunks": [4], "dtype": "<i4", "fill_value": 0, "compressor": {"id": "lz4"}, "filters": null, "order": "C"}}"#;
    let (_dir, path) = scratch(doc);
    let store = Arc::new(ReferenceStore::open(path.to_str().unwrap()).unwrap());
    let err = Array::open(store, "/x").unwrap_err().to_string();
    assert!(err.contains("\"x\"") && err.contains("lz4"), "{err}");
}

#[test]
fn gzip_compressed_reference_files_are_detected() {
    use std::io::Write;
    let case = common::data_dir().join("nc4_deflate_shuffle");
    let scratch = tempfile::tempdir().unwrap();
    let dir = scratch.path();
    std::fs::copy(case.join("data.nc"), dir.join("data.nc")).unwrap();
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    gz.write_all(&std::fs::read(case.join("refs.json")).unwrap()).unwrap();
    std::fs::write(dir.join("refs.anything"), gz.finish().unwrap()).unwrap();
    let store = Arc::new(ReferenceStore::open(dir.join("refs.anything").to_str().unwrap()).unwrap());
    let array = Array::open(store, "/temp").unwrap();
    assert_eq!(array.retrieve_array_subset::<Vec<f32>>(&array.subset_all()).unwrap().len(), 5 * 7 * 9);
}

/// Only targets under the allowed prefixes are read; any other is an error naming the key,
/// the URL and the rule, however the document spells it.
#[test]
fn targets_outside_the_allowed_prefixes_are_refused() {
    use zarrs_kerchunk::object_store::{ObjectStoreExt, memory::InMemory};
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let (public, private) = (Arc::new(InMemory::new()), Arc::new(InMemory::new()));
    runtime.block_on(async {
        public.put(&"a.bin".into(), b"public bytes".to_vec().into()).await.unwrap();
        private.put(&"b.bin".into(), b"private bytes".to_vec().into()).await.unwrap();
    });
    let doc = r#"{"version": 1, "templates": {"p": "s3://data-private"},
                  "refs": {"ok": ["s3://data/a.bin", 0, 6], "relative": ["a.bin", 7, 5],
                           "sibling": ["s3://data-private/b.bin", 0, 7], "templated": ["{{p}}/b.bin"],
                           "local": ["file:///etc/hostname"], "disguised": ["file:/etc/hostname"]}}"#;
    let set = kerchunk::ReferenceSet::from_json(doc.as_bytes(), &kerchunk::ParseOptions::default()).unwrap();
    let store = ReferenceStoreBuilder::new()
        .with_store("s3://data/", public)
        .with_store("s3://data-private/", private)
        .with_allowed_prefixes(["s3://data/"])
        .build(set, "s3://data/refs.json")
        .unwrap();
    assert_eq!(store.get(&key("ok")).unwrap().as_deref(), Some(&b"public"[..]));
    assert_eq!(store.get(&key("relative")).unwrap().as_deref(), Some(&b"bytes"[..]));
    for (name, url) in [
        ("sibling", "s3://data-private/b.bin"),
        ("templated", "s3://data-private/b.bin"),
        ("local", "file:///etc/hostname"),
        ("disguised", "file:/etc/hostname"),
    ] {
        let err = store.get(&key(name)).unwrap_err().to_string();
        assert!(
            err.contains(&format!("{name:?}")) && err.contains(url) && err.contains("allowed prefixes"),
            "{name}: {err}"
        );
    }
    // A prefix names a folder: one that does not end in '/' is refused when opening.
    let err = ReferenceStoreBuilder::new()
        .with_allowed_prefixes(["s3://data"])
        .build(kerchunk::ReferenceSet::default(), "s3://data/refs.json")
        .unwrap_err();
    assert!(err.to_string().contains("ends with '/'"), "{err}");
}

/// A local folder is an allowed prefix too, as a path or a `file://` URL ending in '/'.
#[test]
fn local_folders_are_allowed_prefixes() {
    let dir = tempfile::tempdir().unwrap();
    let (inside, outside) = (dir.path().join("inside"), dir.path().join("outside"));
    for folder in [&inside, &outside] {
        std::fs::create_dir(folder).unwrap();
        std::fs::write(folder.join("a.bin"), b"0123456789").unwrap();
    }
    let doc = format!(
        r#"{{"in": ["{}", 2, 3], "out": ["{}", 2, 3]}}"#,
        inside.join("a.bin").display(),
        outside.join("a.bin").display()
    );
    let path = dir.path().join("refs.json");
    std::fs::write(&path, doc).unwrap();
    let file_url = url::Url::from_directory_path(&inside).unwrap().to_string();
    for prefix in [format!("{}/", inside.display()), file_url] {
        let store = ReferenceStoreBuilder::new().with_allowed_prefixes([&prefix]).open(path.to_str().unwrap()).unwrap();
        assert_eq!(store.get(&key("in")).unwrap().as_deref(), Some(&b"234"[..]), "{prefix}");
        let err = store.get(&key("out")).unwrap_err().to_string();
        assert!(err.contains("allowed prefixes"), "{prefix}: {err}");
    }
}

/// A remote reference set may not name URLs with whitespace or control characters.
#[test]
fn ambiguous_urls_in_remote_sets_are_refused() {
    let doc = "{\"tab\": [\"s3://data/a\\tb.bin\"], \"space\": [\"a b.bin\", 0, 1], \"nul\": [\"a\\u0000.bin\"]}";
    let set = kerchunk::ReferenceSet::from_json(doc.as_bytes(), &kerchunk::ParseOptions::default()).unwrap();
    let memory = Arc::new(zarrs_kerchunk::object_store::memory::InMemory::new());
    let store =
        ReferenceStoreBuilder::new().with_store("s3://data/", memory).build(set, "s3://data/refs.json").unwrap();
    for name in ["tab", "space", "nul"] {
        let err = store.get(&key(name)).unwrap_err().to_string();
        assert!(err.contains(&format!("{name:?}")) && err.contains("whitespace or control"), "{name}: {err}");
    }
}

/// A reference file larger than the limit, compressed or not, is refused
/// without being decompressed past the limit; one at the limit opens.
#[test]
fn documents_larger_than_the_limit_are_refused() {
    use std::io::Write;
    let doc = r#"{".zgroup": "{\"zarr_format\": 2}", "padding": "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"}"#;
    let n = doc.len() as u64;
    let (dir, plain) = scratch(doc);
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    gz.write_all(doc.as_bytes()).unwrap();
    let gzipped = dir.path().join("refs.json.gz");
    std::fs::write(&gzipped, gz.finish().unwrap()).unwrap();
    // A zstd bomb: 64 MiB of spaces around a tiny document.
    let mut bomb = b"{\"a\": \"b\"".to_vec();
    bomb.extend(std::iter::repeat_n(b' ', 64 << 20));
    bomb.push(b'}');
    let bombed = dir.path().join("bomb.json.zst");
    std::fs::write(&bombed, zstd::encode_all(&bomb[..], 1).unwrap()).unwrap();
    let open = |path: &std::path::Path, limit: u64| {
        let limits = kerchunk::Limits::default().with_max_document_bytes(limit);
        ReferenceStoreBuilder::new().with_limits(limits).open(path.to_str().unwrap())
    };
    for path in [&plain, &gzipped] {
        assert!(open(path, n).is_ok(), "{}: the limit itself", path.display());
        let err = open(path, n - 1).unwrap_err();
        assert!(matches!(err, OpenError::Parse(ParseError::TooLarge { limit, .. }) if limit == n - 1), "{err}");
    }
    let err = open(&bombed, 1 << 20).unwrap_err();
    assert!(matches!(err, OpenError::Parse(ParseError::TooLarge { .. })), "{err}");
    assert!(err.to_string().contains("bomb.json.zst"), "{err}");
}

/// Arrays whose numbers no reader can hold are refused with an error naming
/// the array when zarrs opens them, never a panic or an abort later.
#[test]
fn arrays_no_reader_can_hold_are_refused_when_opened() {
    for (zarray, needle) in [
        (r#"{"shape": [1099511627776, 1099511627776], "chunks": [1, 1], "dtype": "<f4"}"#, "2^64 chunks"),
        (r#"{"shape": [2], "chunks": [1], "dtype": "|S1000000000000"}"#, "Limits::with_max_chunk_bytes"),
        (r#"{"shape": [2], "chunks": [1], "dtype": "<U1000000000000"}"#, "Limits::with_max_chunk_bytes"),
        (
            r#"{"shape": [4294967296, 4294967296], "chunks": [4294967296, 4294967296], "dtype": "<f8"}"#,
            "Limits::with_max_chunk_bytes",
        ),
    ] {
        let full = zarray.replacen(
            '{',
            r#"{"zarr_format": 2, "compressor": null, "filters": null, "fill_value": null, "order": "C", "#,
            1,
        );
        let doc = serde_json::json!({".zgroup": r#"{"zarr_format": 2}"#, "x/.zarray": full, "x/0": "base64:AAAAAA=="});
        let (_dir, path) = scratch(&doc.to_string());
        let store = Arc::new(ReferenceStore::open(path.to_str().unwrap()).unwrap());
        let err = Array::open(store, "/x").unwrap_err().to_string();
        assert!(err.contains("\"x\"") && err.contains(needle), "{zarray}: {err}");
    }
}

/// kerchunk's HDF4 scanner writes empty dimensions with a chunk length of 0:
/// zarrs opens them as empty arrays, as fsspec + zarr read them.
#[test]
fn empty_dimensions_with_zero_chunks_read_as_empty_arrays() {
    let zarray = r#"{"zarr_format": 2, "shape": [0], "chunks": [0], "dtype": "<f4", "compressor": null,
                     "filters": null, "fill_value": 0.0, "order": "C"}"#;
    let doc = serde_json::json!({".zgroup": r#"{"zarr_format": 2}"#, "empty/.zarray": zarray});
    let (_dir, path) = scratch(&doc.to_string());
    let store = Arc::new(ReferenceStore::open(path.to_str().unwrap()).unwrap());
    let array = Array::open(store, "/empty").unwrap();
    assert_eq!(array.shape(), [0]);
    let values: Vec<f32> = array.retrieve_array_subset(&array.subset_all()).unwrap();
    assert!(values.is_empty());
}

/// A remote reference file, or a parquet record file, larger than the limit is
/// refused from its size, before its bytes are held; one at the limit opens.
#[test]
fn remote_files_larger_than_the_limit_are_refused() {
    use zarrs_kerchunk::object_store::{ObjectStoreExt, memory::InMemory};
    let doc = r#"{".zgroup": "{\"zarr_format\": 2}", "padding": "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"}"#;
    let n = doc.len() as u64;
    let memory = Arc::new(InMemory::new());
    tokio::runtime::Runtime::new()
        .unwrap()
        .block_on(memory.put(&"refs.json".into(), doc.as_bytes().to_vec().into()))
        .unwrap();
    let open = |limit: u64| {
        ReferenceStoreBuilder::new()
            .with_store("s3://bucket/", memory.clone())
            .with_limits(kerchunk::Limits::default().with_max_document_bytes(limit))
            .open("s3://bucket/refs.json")
    };
    assert!(open(n).is_ok(), "the limit itself");
    let err = open(n - 1).unwrap_err();
    assert!(matches!(&err, OpenError::Read { source: zarrs_kerchunk::ReadError::TooLarge { .. }, .. }), "{err}");
    assert!(err.to_string().contains("s3://bucket/refs.json"), "{err}");
}
