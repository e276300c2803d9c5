//! Parquet reference roots: detection, listing, record loading and caching,
//! and bad input. The values themselves are checked in `conformance.rs`.

#![cfg(feature = "parquet")]

mod common;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use common::{data_dir, server};
use kerchunk::OwnedReference;
use zarrs::node::Node;
use zarrs_kerchunk::{AsyncReferenceStore, OpenError, RecordCacheOptions, ReferenceStore, ReferenceStoreBuilder};
use zarrs_storage::{
    AsyncListableStorageTraits, AsyncReadableStorageTraits, ListableStorageTraits, ReadableStorageTraits, StoreKey,
    StorePrefix,
};

const CASE: &str = "parquet_fastparquet";

fn key(k: &str) -> StoreKey {
    StoreKey::new(k).unwrap()
}

/// Every parquet root of the parquet cases lists exactly the keys of the JSON references, plus `.zmetadata`.
#[test]
fn listings_match_the_json_references() {
    let json = ReferenceStore::open(data_dir().join(CASE).join("refs.json").to_str().unwrap()).unwrap();
    let mut want: Vec<String> = json.list().unwrap().iter().map(|k| k.as_str().to_owned()).collect();
    want.push(".zmetadata".into());
    want.sort();
    let roots =
        ["parquet_fastparquet/refs.parq", "parquet_writers/refs.pyarrow.parq", "parquet_writers/refs.legacy.parq"]
            .into_iter()
            .chain(["parquet_writers/refs.pyarrow100.parq", "parquet_writers/refs.fastparquet100.parq"]);
    for root in roots {
        let store = ReferenceStore::open(data_dir().join(root).to_str().unwrap()).unwrap();
        let got: Vec<String> = store.list().unwrap().iter().map(|k| k.as_str().to_owned()).collect();
        assert_eq!(got, want, "{root}");
        let holes = store.list_dir(&StorePrefix::new("holes/").unwrap()).unwrap();
        let json_holes = json.list_dir(&StorePrefix::new("holes/").unwrap()).unwrap();
        assert_eq!(holes.keys(), json_holes.keys(), "{root}: holes/");
        let top = store.list_dir(&StorePrefix::root()).unwrap();
        let names: Vec<&str> = top.prefixes().iter().map(StorePrefix::as_str).collect();
        assert_eq!(names, ["field/", "holes/", "inl/", "sc/"], "{root}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn async_listing_matches_sync() {
    let root = data_dir().join(CASE).join("refs.parq");
    let sync = ReferenceStore::open(root.to_str().unwrap()).unwrap();
    let asynchronous = AsyncReferenceStore::open(root.to_str().unwrap()).await.unwrap();
    let want = tokio::task::spawn_blocking(move || sync.list().unwrap()).await.unwrap();
    assert_eq!(asynchronous.list().await.unwrap(), want);
    let field = StorePrefix::new("field/").unwrap();
    assert_eq!(asynchronous.list_prefix(&field).await.unwrap().len(), 60 + 2);
}

/// Opening reads `.zmetadata` only, and listing groups reads no record file.
#[test]
fn opening_and_listing_groups_read_no_record() {
    let (base, log) = server::files_logged();
    let store = Arc::new(ReferenceStore::open(&format!("{base}/files/{CASE}/refs.parq/")).unwrap());
    let node = Node::open(&store, "/").unwrap();
    assert_eq!(node.children().len(), 4);
    let requested: Vec<String> = log.lock().unwrap().iter().map(|(_, path, _)| path.clone()).collect();
    assert_eq!(requested, [format!("/files/{CASE}/refs.parq/.zmetadata")], "opening and listing the hierarchy");
}

/// Many concurrent reads of chunks in one record load it once; reads of a cached record load nothing.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_record_is_loaded_once() {
    let (base, log) = server::files_logged();
    let store = Arc::new(AsyncReferenceStore::open(&format!("{base}/files/{CASE}/refs.parq")).await.unwrap());
    // field is 6 x 10 chunks with record_size 10: row 1 of the grid is record 1.
    let reads = (0..10).map(|j| {
        let store = Arc::clone(&store);
        tokio::spawn(async move { store.get(&key(&format!("field/1.{j}"))).await.unwrap().unwrap() })
    });
    for read in reads.collect::<Vec<_>>() {
        assert!(!read.await.unwrap().is_empty());
    }
    store.get(&key("field/1.3")).await.unwrap().unwrap();
    let record_gets = log.lock().unwrap().iter().filter(|(_, path, _)| path.ends_with("field/refs.1.parq")).count();
    assert_eq!(record_gets, 1);
}

/// With room for one record, going back to an evicted record loads it again.
#[test]
fn the_record_cache_is_bounded() {
    let (base, log) = server::files_logged();
    let root = format!("{base}/files/{CASE}/refs.parq");
    let loads = |builder: ReferenceStoreBuilder| {
        let store = builder.open(&root).unwrap();
        for k in ["field/1.0", "field/2.0", "field/1.1"] {
            assert!(store.get(&key(k)).unwrap().is_some());
        }
        let mut log = log.lock().unwrap();
        let count = log.iter().filter(|(_, path, _)| path.ends_with("field/refs.1.parq")).count();
        log.clear();
        count
    };
    assert_eq!(loads(ReferenceStoreBuilder::new()), 1);
    assert_eq!(
        loads(ReferenceStoreBuilder::new().with_record_cache(RecordCacheOptions::default().with_max_records(1))),
        2
    );
    let tiny = RecordCacheOptions::default().with_max_bytes(1);
    assert_eq!(loads(ReferenceStoreBuilder::new().with_record_cache(tiny)), 2);
}

/// A root is found by its form: a folder, `.../`, `*.parq`, `.../.zmetadata`, or a prefix with no object.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn roots_are_detected_without_a_flag() {
    let local = data_dir().join(CASE).join("refs.parq");
    let base = server::files();
    for location in [
        local.to_str().unwrap().to_owned(),
        format!("{}/", local.display()),
        format!("{}/.zmetadata", local.display()),
        format!("file://{}", local.display()),
        format!("{base}/files/{CASE}/refs.parq/"),
        format!("{base}/files/{CASE}/refs.parq/.zmetadata"),
    ] {
        let store = AsyncReferenceStore::open(&location).await.unwrap_or_else(|e| panic!("{location}: {e}"));
        assert!(store.references().is_none());
        assert!(store.get(&key("field/5.9")).await.unwrap().is_some(), "{location}");
    }
    // An object store prefix with no object of that name, and no telling suffix.
    let memory = Arc::new(object_store::memory::InMemory::new());
    for entry in walk(&local) {
        let name = entry.strip_prefix(&local).unwrap().to_str().unwrap().to_owned();
        let bytes = std::fs::read(&entry).unwrap();
        object_store::ObjectStoreExt::put(memory.as_ref(), &format!("refs/root/{name}").into(), bytes.into())
            .await
            .unwrap();
    }
    let data = std::fs::read(data_dir().join(CASE).join("data.nc")).unwrap();
    object_store::ObjectStoreExt::put(memory.as_ref(), &"refs/data.nc".into(), data.into()).await.unwrap();
    let store = ReferenceStoreBuilder::new()
        .with_store("s3://bucket/", memory)
        .open_async("s3://bucket/refs/root")
        .await
        .unwrap();
    let chunk = store.get(&key("field/5.9")).await.unwrap().unwrap();
    let local = AsyncReferenceStore::open(local.to_str().unwrap()).await.unwrap();
    assert_eq!(Some(chunk), local.get(&key("field/5.9")).await.unwrap(), "relative paths resolve beside the root");
}

fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() { files.extend(walk(&path)) } else { files.push(path) }
    }
    files
}

/// `reference` answers what a key points to, the same for a parquet root and its JSON.
#[test]
fn references_without_reading_targets() {
    let parquet = ReferenceStore::open(data_dir().join(CASE).join("refs.parq").to_str().unwrap()).unwrap();
    let json = ReferenceStore::open(data_dir().join(CASE).join("refs.json").to_str().unwrap()).unwrap();
    for k in ["field/0.0", "field/5.9", "holes/12", "holes/29", "inl/0.0", "sc/0", "field/6.0"] {
        assert_eq!(parquet.reference(&key(k)).unwrap(), json.reference(&key(k)).unwrap(), "{k}");
    }
    let Some(OwnedReference::Range { url, length, .. }) = parquet.reference(&key("field/5.9")).unwrap() else {
        panic!("a range")
    };
    assert_eq!((url.as_deref(), length > 0), (Some("data.nc"), true));
}

/// Keys outside the grid, not numeric, or of no array are missing; never a panic or a read.
#[test]
fn odd_chunk_keys_are_not_found() {
    let store = ReferenceStore::open(data_dir().join(CASE).join("refs.parq").to_str().unwrap()).unwrap();
    for k in [
        "field/6.0",
        "field/0.10",
        "field/0",
        "field/0.0.0",
        "field/a.b",
        "field/-1.0",
        "field/+1.0",
        "nope/0",
        "x",
        "field/1e3.0",
    ] {
        assert_eq!(store.get(&key(k)).unwrap(), None, "{k}");
    }
    assert!(store.get(&key(".zmetadata")).unwrap().is_some());
    let consolidated: serde_json::Value =
        serde_json::from_slice(&store.get(&key(".zmetadata")).unwrap().unwrap()).unwrap();
    assert_eq!(consolidated["zarr_consolidated_format"], 1);
    assert_eq!(consolidated["metadata"]["field/.zarray"]["shape"], serde_json::json!([6, 400]));
}

/// A copy of the case's root in a temporary folder, to break; removed when dropped.
struct Scratch(tempfile::TempDir);

impl Scratch {
    fn new() -> Self {
        let scratch = tempfile::tempdir().unwrap();
        let dir = scratch.path();
        let source = data_dir().join(CASE);
        for file in walk(&source.join("refs.parq")) {
            let to = dir.join(file.strip_prefix(&source).unwrap());
            std::fs::create_dir_all(to.parent().unwrap()).unwrap();
            std::fs::copy(&file, &to).unwrap();
        }
        std::fs::copy(source.join("data.nc"), dir.join("data.nc")).unwrap();
        Self(scratch)
    }

    fn path(&self) -> &Path {
        self.0.path()
    }

    fn root(&self) -> String {
        self.path().join("refs.parq").to_str().unwrap().to_owned()
    }

    fn write(&self, file: &str, bytes: &[u8]) {
        let path = self.path().join("refs.parq").join(file);
        let _ = std::fs::remove_file(&path);
        std::fs::write(path, bytes).unwrap();
    }
}

#[test]
fn bad_zmetadata_is_a_clear_error() {
    let scratch = Scratch::new();
    for (doc, cause) in [
        (&b"{\"metadata\": {"[..], "not valid JSON"),
        (br#"{"metadata": {}, "record_size": 0}"#, "record_size"),
        (br#"{"metadata": {}, "record_size": "10"}"#, "record_size"),
        (br#"{"metadata": {}, "record_size": 2.5}"#, "record_size"),
        (br#"{"metadata": [], "record_size": 10}"#, "metadata"),
        (br#"{"metadata": {"a/.zarray": {"shape": [4], "chunks": [0]}}, "record_size": 10}"#, "a/.zarray"),
    ] {
        scratch.write(".zmetadata", doc);
        let err = ReferenceStore::open(&scratch.root()).unwrap_err();
        let text = err.to_string();
        assert!(text.contains(".zmetadata") && text.contains(cause), "{}: {text}", String::from_utf8_lossy(doc));
    }
    std::fs::remove_file(scratch.path().join("refs.parq/.zmetadata")).unwrap();
    let err = ReferenceStore::open(&scratch.root()).unwrap_err();
    assert!(matches!(err, OpenError::NotFound { .. }) && err.to_string().contains(".zmetadata"), "{err}");
}

#[test]
fn bad_record_files_are_clear_errors() {
    let scratch = Scratch::new();
    let good = std::fs::read(scratch.path().join("refs.parq/field/refs.1.parq")).unwrap();
    let other_schema = parquet_with_columns(&["a", "b"]);
    for (bytes, cause) in [
        (&good[..good.len() - 100], "parquet"),
        (&b"not parquet at all"[..], "parquet"),
        (&[][..], "parquet"),
        (&other_schema[..], "schema"),
    ] {
        scratch.write("field/refs.1.parq", bytes);
        let store = ReferenceStore::open(&scratch.root()).unwrap();
        let err = store.get(&key("field/1.4")).unwrap_err().to_string();
        assert!(err.contains("field/1.4") && err.contains("field/refs.1.parq") && err.contains(cause), "{err}");
        assert!(store.get(&key("field/2.4")).unwrap().is_some(), "other records still read");
    }
}

/// A valid parquet file with integer columns of these names.
fn parquet_with_columns(names: &[&str]) -> Vec<u8> {
    let columns = names
        .iter()
        .map(|name| (*name, Arc::new(arrow_array::Int64Array::from(vec![1, 2, 3])) as arrow_array::ArrayRef));
    let batch = arrow_array::RecordBatch::try_from_iter(columns).unwrap();
    let mut bytes = Vec::new();
    let mut writer = parquet::arrow::ArrowWriter::try_new(&mut bytes, batch.schema(), None).unwrap();
    writer.write(&batch).unwrap();
    writer.close().unwrap();
    bytes
}

/// Listing an array whose grid would take more record files than a listing may
/// read is an error naming the prefix, not a queue of reads that never ends;
/// listing the groups above it reads no record at all.
#[test]
fn listing_an_astronomical_grid_is_bounded() {
    let scratch = Scratch::new();
    let zmetadata = br#"{"record_size": 10, "metadata": {".zgroup": {"zarr_format": 2},
        "huge/.zarray": {"zarr_format": 2, "shape": [1152921504606846976], "chunks": [1], "dtype": "<f4",
                         "compressor": null, "filters": null, "fill_value": 0, "order": "C"}}}"#;
    scratch.write(".zmetadata", zmetadata);
    let store = ReferenceStore::open(&scratch.root()).unwrap();
    let top = zarrs_storage::ListableStorageTraits::list_dir(&store, &zarrs_storage::StorePrefix::root()).unwrap();
    assert_eq!(top.prefixes().len(), 1);
    for prefix in ["", "huge/"] {
        let prefix = zarrs_storage::StorePrefix::new(prefix).unwrap();
        let err = zarrs_storage::ListableStorageTraits::list_prefix(&store, &prefix).unwrap_err().to_string();
        assert!(err.contains("115292150460684698 record files") && err.contains("limit"), "{err}");
    }
}

/// A record file larger than the document limit is an error naming it, not a read of it.
#[test]
fn record_files_larger_than_the_limit_are_refused() {
    let scratch = Scratch::new();
    let record = scratch.path().join("refs.parq/field/refs.0.parq");
    let size = std::fs::metadata(&record).unwrap().len();
    let zmetadata = std::fs::metadata(scratch.path().join("refs.parq/.zmetadata")).unwrap().len();
    let limits = kerchunk::Limits::default().with_max_document_bytes(size.max(zmetadata) - 1);
    assert!(zmetadata < size, "the case's record file is the larger file");
    let store = ReferenceStoreBuilder::new().with_limits(limits).open(&scratch.root()).unwrap();
    let key = zarrs_storage::StoreKey::new("field/0.0").unwrap();
    let err = zarrs_storage::ReadableStorageTraits::get(&store, &key).unwrap_err().to_string();
    assert!(err.contains("refs.0.parq") && err.contains("larger than the limit"), "{err}");
}

/// Record files on which the parquet crate panics (tests/corrupt/README.md):
/// an error naming the file, and the other records still read.
#[test]
fn a_record_file_that_panics_the_decoder_is_an_error() {
    for corrupt in ["pyarrow-field-refs.0-byte59.parq", "pyarrow100-field-refs.0-byte75.parq"] {
        let scratch = Scratch::new();
        let corrupt = std::fs::read(data_dir().join("../corrupt").join(corrupt)).unwrap();
        scratch.write("field/refs.0.parq", &corrupt);
        let store = ReferenceStore::open(&scratch.root()).unwrap();
        let err = store.get(&key("field/0.0")).unwrap_err().to_string();
        assert!(err.contains("field/refs.0.parq") && err.contains("parquet decoder failed"), "{err}");
        assert!(store.get(&key("field/2.4")).unwrap().is_some(), "other records still read");
    }
}

/// A record file on which the parquet crate spins (found by the
/// `parquet_root` fuzzer; see `tests/corrupt/README.md`) is an error once the
/// decode deadline has passed, naming the file; other records still read.
///
/// The short deadline applies only to the spinning file's store: the other
/// records are read through a second store with the default deadline, so no
/// ordinary decode has to beat a one-second clock on a busy machine (a
/// benchmark, not a test, measures time). The spin goes on meanwhile.
#[test]
fn a_record_file_that_makes_the_decoder_spin_is_an_error_after_the_deadline() {
    let scratch = Scratch::new();
    let corrupt = std::fs::read(data_dir().join("../corrupt/spinning-page-header.parq")).unwrap();
    scratch.write("field/refs.0.parq", &corrupt);
    let deadline = std::time::Duration::from_secs(1);
    let store = ReferenceStoreBuilder::new()
        .with_record_cache(RecordCacheOptions::default().with_decode_deadline(deadline))
        .open(&scratch.root())
        .unwrap();
    let err = store.get(&key("field/0.0")).unwrap_err().to_string();
    assert!(err.contains("field/refs.0.parq") && err.contains("took longer than 1s"), "{err}");
    let patient = ReferenceStoreBuilder::new().open(&scratch.root()).unwrap();
    assert!(patient.get(&key("field/2.4")).unwrap().is_some(), "other records still read");
}

/// A row whose offset is no readable number fails its own key when read, as a
/// malformed JSON reference does; the other rows of the file, and the other
/// files, read as before.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_malformed_row_fails_its_key_and_only_it() {
    use arrow_array::{Array as _, Int64Array};
    use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
    let scratch = Scratch::new();
    let good = std::fs::read(scratch.path().join("refs.parq/field/refs.1.parq")).unwrap();
    let batches: Vec<arrow_array::RecordBatch> = ParquetRecordBatchReaderBuilder::try_new(bytes::Bytes::from(good))
        .unwrap()
        .build()
        .unwrap()
        .map(Result::unwrap)
        .collect();
    // Row 0 of the file gets offset -1: whatever its key, it alone must fail.
    let schema = batches[0].schema();
    let at = schema.index_of("offset").unwrap();
    let offsets = batches[0].column(at).as_any().downcast_ref::<Int64Array>().unwrap();
    let broken: Int64Array = (0..offsets.len()).map(|i| Some(if i == 0 { -1 } else { offsets.value(i) })).collect();
    let mut columns = batches[0].columns().to_vec();
    columns[at] = Arc::new(broken);
    let mut bytes = Vec::new();
    let mut writer = parquet::arrow::ArrowWriter::try_new(&mut bytes, schema.clone(), None).unwrap();
    writer.write(&arrow_array::RecordBatch::try_new(schema, columns).unwrap()).unwrap();
    for batch in &batches[1..] {
        writer.write(batch).unwrap();
    }
    writer.close().unwrap();
    scratch.write("field/refs.1.parq", &bytes);

    let json = ReferenceStore::open(data_dir().join(CASE).join("refs.json").to_str().unwrap()).unwrap();
    let sync = ReferenceStore::open(&scratch.root()).unwrap();
    let store = ReferenceStoreBuilder::new().open_async(&scratch.root()).await.unwrap();
    let mut failed = Vec::new();
    for k in sync.list_prefix(&StorePrefix::new("field/").unwrap()).unwrap() {
        match (sync.get(&k), store.get(&k).await) {
            (Ok(read), Ok(read_async)) => {
                assert_eq!(read, read_async, "{k}");
                if !k.as_str().ends_with(".zarray") && !k.as_str().ends_with(".zattrs") {
                    assert_eq!(read, json.get(&k).unwrap(), "{k}");
                }
            }
            (Err(err), Err(err_async)) => {
                let (err, err_async) = (err.to_string(), err_async.to_string());
                assert!(
                    err.contains(k.as_str()) && err.contains("malformed") && err.contains("negative offset -1"),
                    "{err}"
                );
                assert_eq!(err, err_async);
                failed.push(k.as_str().to_owned());
            }
            (sync, not_sync) => panic!("{k}: {sync:?} and {not_sync:?}"),
        }
    }
    assert_eq!(failed.len(), 1, "{failed:?}");
}
