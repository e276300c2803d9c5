//! Writing references: JSON -> parquet -> JSON gives the same references for
//! every conformance case, the parquet written reads exactly, and a generated
//! set of 10^6 references survives the round trip. The round trip is our writer
//! against our reader; the same million references written as parquet are read
//! by fsspec's own reader in `python/tests/test_tools.py`, against the formula
//! that made them.

#![cfg(feature = "parquet")]

mod common;

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use common::Case;
use kerchunk::{
    JsonVersion, JsonWriteOptions, ParquetWriteOptions, ParseOptions, PathEncoding, Progress, Reference, ReferenceSet,
    ReferenceSetBuilder, WriteError,
};
use object_store::local::LocalFileSystem;
use zarrs_kerchunk::{
    AsyncReferenceStore, ReferenceStoreBuilder, update_parquet, write_json, write_json_async, write_parquet,
    write_parquet_async,
};

/// A scratch folder holding a case's source files (the references point at them relatively).
fn scratch(case: &Case) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    copy_sources(&case.dir, dir.path());
    dir
}

fn copy_sources(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_str().unwrap();
        if name.starts_with("refs") || name == "expected" || name == "case.json" {
            continue;
        }
        if path.is_dir() {
            copy_sources(&path, &to.join(name));
        } else {
            std::fs::copy(&path, to.join(name)).unwrap();
        }
    }
}

/// Two reference sets hold the same references (metadata compared as JSON).
fn assert_same(a: &ReferenceSet, b: &ReferenceSet, context: &str) {
    let keys = |s: &ReferenceSet| {
        let mut keys: Vec<String> = s.iter().map(|(k, _)| k.into_owned()).filter(|k| k != ".zmetadata").collect();
        keys.sort();
        keys
    };
    assert_eq!(keys(a), keys(b), "{context}: keys");
    for (key, ra) in a.iter().filter(|(k, _)| *k != ".zmetadata") {
        let rb = b.get(&key).unwrap();
        match (ra, rb) {
            (Reference::Inline(x), Reference::Inline(y)) if key.contains(".z") => {
                let parse = |t: &[u8]| -> serde_json::Value {
                    let text = String::from_utf8_lossy(t).replace("NaN", "\"NaN\"").replace("\"\"NaN\"\"", "\"NaN\"");
                    serde_json::from_str(&text).unwrap()
                };
                assert_eq!(parse(x), parse(y), "{context}: {key}");
            }
            (Reference::Inline(x), Reference::Inline(y)) => assert_eq!(x, y, "{context}: {key}"),
            (Reference::Whole { url: x }, Reference::Whole { url: y }) => assert_eq!(x, y, "{context}: {key}"),
            (
                Reference::Range { url: x, offset: ox, length: lx },
                Reference::Range { url: y, offset: oy, length: ly },
            ) => assert_eq!((x, ox, lx), (y, oy, ly), "{context}: {key}"),
            (x, y) => panic!("{context}: {key}: {x:?} became {y:?}"),
        }
    }
}

/// The store's references written as JSON by the async writer, and read back.
async fn to_json(store: &AsyncReferenceStore, options: JsonWriteOptions) -> ReferenceSet {
    let (written, out) = write_json_async(store.source().as_ref(), Vec::new(), &options).await.unwrap();
    let back = ReferenceSet::from_json(&out, &ParseOptions::default()).unwrap();
    assert_eq!(written, back.len() as u64);
    back
}

/// The same with the sync writer, called from inside async code, as a user may.
fn to_json_sync(store: &AsyncReferenceStore, options: &JsonWriteOptions) -> ReferenceSet {
    let mut out = Vec::new();
    write_json(store.source().as_ref(), &mut out, options).unwrap();
    ReferenceSet::from_json(&out, &ParseOptions::default()).unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn json_to_parquet_to_json_for_every_case() {
    let mut checked = 0;
    for case in Case::all() {
        for file in case.references(true) {
            let source = AsyncReferenceStore::open(case.dir.join(&file).to_str().unwrap()).await.unwrap();
            let original = source.references().unwrap();
            let folder = scratch(&case);
            let dir = folder.path();
            let out = LocalFileSystem::new_with_prefix(dir).unwrap();
            for (record_size, encoding) in [(3, PathEncoding::Plain), (100_000, PathEncoding::AboveRepetition(10.0))] {
                let options = ParquetWriteOptions::default().with_record_size(record_size).with_path_encoding(encoding);
                write_parquet_async(source.source().as_ref(), &out, &"refs.parq".into(), &options).await.unwrap();
                let written = AsyncReferenceStore::open(dir.join("refs.parq").to_str().unwrap()).await.unwrap();
                let context = format!("{}/{file} at record size {record_size}", case.name);
                let failures = common::check_async(&case, Arc::new(written.clone())).await;
                assert!(failures.is_empty(), "{context}: {failures:?}");
                for version in [JsonVersion::V0, JsonVersion::V1] {
                    let back = to_json(&written, JsonWriteOptions::default().with_version(version)).await;
                    assert_same(original, &back, &context);
                }
                let back = to_json_sync(&written, &JsonWriteOptions::default());
                assert_same(original, &back, &format!("{context}, sync"));
                std::fs::remove_dir_all(dir.join("refs.parq")).unwrap();
            }
            // JSON straight back to JSON, compressed: the same references.
            let back = to_json(&source, JsonWriteOptions::default().with_zstd(3)).await;
            assert_same(original, &back, &format!("{}/{file} as zstd JSON", case.name));
            checked += 1;
        }
    }
    assert!(checked >= 15, "{checked}");
}

/// A parquet root written from a parquet root (another record size) reads the same.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn parquet_to_parquet() {
    let case = Case::all().into_iter().find(|c| c.name == "parquet_fastparquet").unwrap();
    let source = AsyncReferenceStore::open(case.dir.join("refs.parq").to_str().unwrap()).await.unwrap();
    let first = scratch(&case);
    let dir = first.path();
    let out = LocalFileSystem::new_with_prefix(dir).unwrap();
    let options = ParquetWriteOptions::default().with_record_size(10).with_zstd(None);
    let written = write_parquet_async(source.source().as_ref(), &out, &"refs.parq".into(), &options).await.unwrap();
    assert_eq!(written, 76, "the case's chunk references");
    let copy = AsyncReferenceStore::open(dir.join("refs.parq").to_str().unwrap()).await.unwrap();
    assert!(common::check_async(&case, Arc::new(copy)).await.is_empty());
    // As fsspec: no file for a record whose chunks are all missing (holes 10..19).
    assert!(dir.join("refs.parq/holes/refs.0.parq").exists() && !dir.join("refs.parq/holes/refs.1.parq").exists());
    // The sync writer, from a plain thread, writes the same root.
    let again = scratch(&case);
    let out = LocalFileSystem::new_with_prefix(again.path()).unwrap();
    let source = source.source().clone();
    let written_sync =
        std::thread::spawn(move || write_parquet(source.as_ref(), &out, &"refs.parq".into(), &options).unwrap());
    assert_eq!(written_sync.join().unwrap(), 76);
    let copy = AsyncReferenceStore::open(again.path().join("refs.parq").to_str().unwrap()).await.unwrap();
    assert!(common::check_async(&case, Arc::new(copy)).await.is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_million_generated_references_round_trip() {
    let n = 1000u64;
    let mut builder = ReferenceSetBuilder::new();
    builder.insert_inline(".zgroup", br#"{"zarr_format":2}"#);
    let zarray = format!(
        r#"{{"shape":[{n},{n}],"chunks":[1,1],"dtype":"<f4","compressor":null,"filters":null,"fill_value":"NaN","order":"C","zarr_format":2}}"#
    );
    builder.insert_inline("a/.zarray", zarray.as_bytes());
    for i in 0..n {
        for j in 0..n {
            let key = format!("a/{i}.{j}");
            match (i * n + j) % 10 {
                0 => {} // a missing chunk
                1 => builder.insert_inline(&key, &(i * n + j).to_le_bytes()[..4]),
                k => builder.insert_range(&key, Some(&format!("s3://bucket/file{k}.bin")), (i * n + j) * 4, 4),
            }
        }
    }
    let set = builder.build();
    assert_eq!(set.len(), 900_002);
    let source = ReferenceStoreBuilder::new().build_async(set, "s3://bucket/refs.json").unwrap();
    let memory = object_store::memory::InMemory::new();
    let reports = Arc::new(AtomicU64::new(0));
    let counter = Arc::clone(&reports);
    let options = ParquetWriteOptions::default().with_progress(Progress::new(move |_| {
        counter.fetch_add(1, Ordering::Relaxed);
    }));
    let written = write_parquet_async(source.source().as_ref(), &memory, &"big.parq".into(), &options).await.unwrap();
    assert_eq!((written, reports.load(Ordering::Relaxed)), (900_000, 10));
    let memory = Arc::new(memory);
    let parquet =
        ReferenceStoreBuilder::new().with_store("s3://out/", memory).open_async("s3://out/big.parq").await.unwrap();
    let back = to_json(&parquet, JsonWriteOptions::default()).await;
    assert_same(source.references().unwrap(), &back, "10^6 generated references");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn what_parquet_cannot_hold_is_an_error_naming_the_key() {
    let memory = object_store::memory::InMemory::new();
    let options = ParquetWriteOptions::default();
    for (doc, key) in [
        (r#"{".zgroup": "{\"zarr_format\": 2}", "stray": "x"}"#, "stray"),
        (r#"{"a/.zarray": "{\"shape\": [2], \"chunks\": [1]}", "a/7": "x"}"#, "a/7"),
        (r#"{"a/.zarray": "{\"shape\": [2], \"chunks\": [1]}", "a/0": [null, 0, 4]}"#, "a/0"),
        (r#"{"a/.zarray": ["meta.json"]}"#, "a/.zarray"),
    ] {
        let set = ReferenceSet::from_json(doc.as_bytes(), &ParseOptions::default()).unwrap();
        let store = ReferenceStoreBuilder::new().build_async(set, "/tmp/refs.json").unwrap();
        let err = write_parquet_async(store.source().as_ref(), &memory, &"x.parq".into(), &options).await.unwrap_err();
        assert!(matches!(err, WriteError::Unrepresentable { .. }), "{err}");
        assert!(err.to_string().contains(&format!("{key:?}")), "{err}");
    }
}

/// An array with far more grid positions than could be looped over, holding
/// one chunk at its far end: the parquet writer visits only the records that
/// hold a reference. (Reading it back by key works; walking every record of
/// such a root is refused, as listing it is.)
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn astronomical_grids_write_only_their_occupied_records() {
    let last = (1u64 << 62) - 1;
    let document = serde_json::json!({
        ".zgroup": "{\"zarr_format\":2}",
        "x/.zarray": "{\"zarr_format\":2,\"shape\":[4611686018427387904],\"chunks\":[1],\"dtype\":\"|u1\",\"compressor\":null,\"filters\":null,\"fill_value\":0,\"order\":\"C\"}",
        "x/0": "base64:AQ==",
        format!("x/{last}"): "base64:Ag==",
    });
    let set = ReferenceSet::from_json(document.to_string().as_bytes(), &ParseOptions::default()).unwrap();
    let options = ParquetWriteOptions::default().with_record_size(1000);
    let first = tempfile::tempdir().unwrap();
    let out = LocalFileSystem::new_with_prefix(first.path()).unwrap();
    assert_eq!(write_parquet_async(&set, &out, &"refs.parq".into(), &options).await.unwrap(), 2);
    let files = |dir: &Path| std::fs::read_dir(dir.join("refs.parq/x")).unwrap().count();
    assert_eq!(files(first.path()), 2, "one record file per occupied record");
    let written = AsyncReferenceStore::open(first.path().join("refs.parq").to_str().unwrap()).await.unwrap();
    let array = zarrs::array::Array::async_open(Arc::new(written.clone()), "/x").await.unwrap();
    assert_eq!(array.async_retrieve_chunk::<Vec<u8>>(&[last]).await.unwrap(), [2]);
    assert_eq!(array.async_retrieve_chunk::<Vec<u8>>(&[0]).await.unwrap(), [1]);
    assert_eq!(array.async_retrieve_chunk::<Vec<u8>>(&[last / 2]).await.unwrap(), [0], "the fill value");
    // Walking that root would probe 4.6e12 record files: refused, naming the bound.
    let error = write_json_async(written.source().as_ref(), Vec::new(), &JsonWriteOptions::default()).await;
    let error = error.map(|(n, _)| n).unwrap_err().to_string();
    assert!(error.contains("record files"), "{error}");
}

/// `update_parquet` at two rows a record: a record whose rows all stay is left as it was (its
/// file untouched), one with a changed row is written, one whose rows all went is removed, and
/// so are the records of an array the new set no longer has; the root then reads as the new set.
#[test]
fn an_update_writes_changed_records_and_removes_emptied_ones() {
    let set = |a: &[(u64, u64)], with_b: bool| {
        let mut builder = ReferenceSetBuilder::new();
        builder.insert_inline(".zgroup", br#"{"zarr_format":2}"#);
        let zarray = |n: u64| {
            format!(
                r#"{{"shape":[{n}],"chunks":[1],"dtype":"<f8","compressor":null,"fill_value":null,"filters":null,"order":"C","zarr_format":2}}"#
            )
        };
        builder.insert_inline("a/.zarray", zarray(6).as_bytes());
        for &(i, offset) in a {
            builder.insert_range(&format!("a/{i}"), Some("data.bin"), offset, 8);
        }
        if with_b {
            builder.insert_inline("b/.zarray", zarray(2).as_bytes());
            builder.insert_range("b/0", Some("data.bin"), 0, 8);
            builder.insert_range("b/1", Some("data.bin"), 8, 8);
        }
        builder.build()
    };
    let before = set(&[(0, 0), (1, 8), (2, 16), (3, 24), (4, 32), (5, 40)], true);
    // a/2 moves (record 1 changes); a/4 and a/5 go (record 2 empties); b goes.
    let after = set(&[(0, 0), (1, 8), (2, 99), (3, 24)], false);
    let dir = tempfile::tempdir().unwrap();
    let out = LocalFileSystem::new_with_prefix(dir.path()).unwrap();
    let options = ParquetWriteOptions::default().with_record_size(2);
    write_parquet(&before, &out, &"refs.parq".into(), &options).unwrap();
    let root = dir.path().join("refs.parq");
    let first = root.join("a/refs.0.parq");
    let (bytes, time) = (std::fs::read(&first).unwrap(), std::fs::metadata(&first).unwrap().modified().unwrap());
    std::thread::sleep(std::time::Duration::from_millis(20));
    // The record size asked for is not the root's: the root's is kept.
    let asked = ParquetWriteOptions::default().with_record_size(1000);
    let update = update_parquet(&after, &before, &out, &"refs.parq".into(), &asked).unwrap();
    assert_eq!((update.records_written, update.records_kept, update.records_removed), (1, 1, 2), "{update:?}");
    assert_eq!(update.references, 4);
    assert_eq!(std::fs::read(&first).unwrap(), bytes);
    assert_eq!(std::fs::metadata(&first).unwrap().modified().unwrap(), time, "a/refs.0.parq was written again");
    assert!(!root.join("a/refs.2.parq").exists() && !root.join("b/refs.0.parq").exists());
    let opened = ReferenceStoreBuilder::new().open(root.to_str().unwrap()).unwrap();
    let mut json = Vec::new();
    write_json(opened.source().as_ref(), &mut json, &JsonWriteOptions::default()).unwrap();
    let read = ReferenceSet::from_json(&json, &ParseOptions::default()).unwrap();
    assert_same(&after, &read, "updated root");
    // A root with no .zmetadata yet is written whole, at the size asked for.
    let fresh = update_parquet(&after, &before, &out, &"fresh.parq".into(), &options).unwrap();
    assert_eq!((fresh.records_written, fresh.records_kept, fresh.records_removed), (2, 0, 0));
}
