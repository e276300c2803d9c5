//! Documents from other readers' test suites, each with what fsspec does with
//! it (recorded by `tests/peers/fsspec_outcomes.py`) and what GDAL does: see
//! `tests/peers/*.json` for where each came from, and where this crate departs
//! from fsspec (with the spec's reason) or from GDAL's policy.

use std::path::Path;
use std::sync::Arc;

use kerchunk::{ParseOptions, Reference, ReferenceSet};
use serde_json::Value;
use zarrs::array::Array;
use zarrs_kerchunk::ReferenceStoreBuilder;

fn peers() -> &'static Path {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/peers"))
}

/// Parsed whole and streamed: both must agree.
fn parse(doc: &str) -> Result<ReferenceSet, String> {
    let whole = ReferenceSet::from_json(doc.as_bytes(), &ParseOptions::default());
    let streamed = ReferenceSet::from_reader(doc.as_bytes(), &ParseOptions::default());
    assert_eq!(whole.is_ok(), streamed.is_ok(), "whole {whole:?} and streamed {streamed:?} disagree on {doc:?}");
    whole.map_err(|e| e.to_string())
}

/// What this crate should do with a document, from what fsspec did with it
/// (`tests/peers/fsspec_outcomes.py`), unless the table says where and why
/// this crate departs from fsspec.
fn expected_outcome(case: &Value) -> &str {
    if let Some(departure) = case.get("not_as_fsspec") {
        assert!(departure["why"].is_string(), "a departure from fsspec must say why: {case}");
        return departure["ours"].as_str().unwrap();
    }
    match case["fsspec"].as_str().unwrap() {
        "reject" => "reject",
        "error" => "malformed",
        "bytes" => "accept",
        other => panic!("fsspec's outcome {other:?} needs a departure with its reason: {case}"),
    }
}

#[test]
fn gdal_autotest_documents_are_accepted_or_rejected_as_fsspec_does() {
    use base64::Engine as _;
    let table: Value =
        serde_json::from_slice(&std::fs::read(peers().join("gdal_kerchunk_json.json")).unwrap()).unwrap();
    let mut differ_from_gdal = 0;
    let refusing = ParseOptions::default().with_malformed_references(kerchunk::MalformedReferences::Refuse);
    for case in table["cases"].as_array().unwrap() {
        let doc = case["doc"].as_str().unwrap();
        let parsed = parse(doc);
        let ours = match &parsed {
            Err(_) => "reject",
            Ok(set) if set.malformed().next().is_some() => "malformed",
            Ok(_) => "accept",
        };
        assert_eq!(ours, expected_outcome(case), "{doc:?}: {parsed:?}");
        if ours == "malformed" {
            // The key, and only it, is malformed; refusing malformed references refuses the document.
            let keys: Vec<String> = parsed.as_ref().unwrap().malformed().map(|(k, _)| k.into_owned()).collect();
            assert_eq!(keys, ["foo"], "{doc:?}");
            assert!(ReferenceSet::from_json(doc.as_bytes(), &refusing).is_err(), "{doc:?}");
        }
        // Inline bytes are fsspec's bytes.
        if let (Ok(set), Some(theirs)) = (&parsed, case["fsspec_bytes"].as_str())
            && let Some(Reference::Inline(bytes)) = set.get("foo")
        {
            let theirs = base64::engine::general_purpose::STANDARD.decode(theirs).unwrap();
            assert_eq!(bytes, theirs.as_slice(), "{doc:?}");
        }
        // Opening is what GDAL's accept and reject say: a malformed key opens.
        let opens = if ours == "reject" { "reject" } else { "accept" };
        if case["gdal"] != opens {
            assert!(case["why"].is_string(), "a difference from GDAL must say why: {doc:?}");
            differ_from_gdal += 1;
        }
        // The documents with an array read it: one byte, 1, from 0.bin beside them.
        if let Ok(set) = parsed
            && set.get("x/.zarray").is_some()
        {
            let base = peers().join("ref.json");
            let store = Arc::new(ReferenceStoreBuilder::new().build(set, base.to_str().unwrap()).unwrap());
            let array = Array::open(store, "/x").unwrap();
            let values: Vec<u8> = array.retrieve_array_subset(&array.subset_all()).unwrap();
            assert_eq!(values, [1], "{doc:?}");
        }
    }
    eprintln!("{differ_from_gdal} documents opened otherwise than GDAL, each with its reason");
}

/// GDAL's test of a document padded to 10 MiB with whitespace.
#[test]
fn a_document_padded_with_whitespace_is_read() {
    let doc = format!("{{\".zgroup\": {{\"zarr_format\":2}}{}}}", " ".repeat(10 << 20));
    assert_eq!(parse(&doc).unwrap().len(), 1);
}

/// A null URL is fsspec's default target; without one, the key cannot be read.
#[test]
fn a_null_url_without_a_target_is_an_error_when_read() {
    use zarrs_storage::{ReadableStorageTraits, StoreKey};
    let set = parse(r#"{".zgroup": {"zarr_format":2}, "foo":[null]}"#).unwrap();
    let store = ReferenceStoreBuilder::new().build(set, peers().join("ref.json").to_str().unwrap()).unwrap();
    let error = store.get(&StoreKey::new("foo").unwrap()).unwrap_err().to_string();
    assert!(error.contains("foo"), "{error}");
}

/// An excerpt of kerchunk's own test file `kerchunk/tests/single_file_kerchunk.json`
/// (fsspec/kerchunk, BSD-3): written by ujson, so every `/` is escaped; zlib
/// and shuffle; a chunk longer than its array; inline base64 chunks, whose
/// values are checked against a decoding done here with flate2, independent
/// of zarrs.
#[test]
fn kerchunk_single_file_excerpt_reads_as_its_own_bytes_say() {
    use std::io::Read;

    use kerchunk::Reference;

    let text = std::fs::read(peers().join("kerchunk_single_file_excerpt.json")).unwrap();
    let set = parse(std::str::from_utf8(&text).unwrap()).unwrap();
    let Some(Reference::Range { url: Some(url), offset: 472_767, length: 460_764 }) = set.get("SLP/0.0.0") else {
        panic!("{:?}", set.get("SLP/0.0.0"))
    };
    assert_eq!(url, "s3://wrf-se-ak-ar5/ccsm/rcp85/daily/2060/WRFDS_2060-01-01.nc");
    // Decoded here: zlib (the "base64:" prefix is the reader's), then shuffle (4-byte elements) undone.
    let decode = |key: &str| -> Vec<[u8; 4]> {
        let Some(Reference::Inline(encoded)) = set.get(key) else { panic!("{key}") };
        let mut raw = Vec::new();
        flate2::read::ZlibDecoder::new(encoded).read_to_end(&mut raw).unwrap();
        let n = raw.len() / 4;
        (0..n).map(|i| std::array::from_fn(|b| raw[b * n + i])).collect()
    };
    let first_time = i32::from_le_bytes(decode("Time/0")[0]);
    let expected: Vec<f32> = decode("interp_levels/0").into_iter().map(f32::from_le_bytes).collect();
    let store = Arc::new(
        ReferenceStoreBuilder::new()
            .with_allowed_prefixes(["s3://another-bucket/"])
            .build(set, peers().join("single_file_kerchunk.json").to_str().unwrap())
            .unwrap(),
    );
    let time = Array::open(Arc::clone(&store), "/Time").unwrap();
    let times: Vec<i32> = time.retrieve_array_subset(&time.subset_all()).unwrap();
    assert_eq!(times, [first_time]);
    let levels = Array::open(Arc::clone(&store), "/interp_levels").unwrap();
    let read: Vec<f32> = levels.retrieve_array_subset(&levels.subset_all()).unwrap();
    assert_eq!(read, expected);
    // The remote chunk lies outside the allowed prefixes: refused before any request, naming it.
    let slp = Array::open(Arc::clone(&store), "/SLP").unwrap();
    let error = slp.retrieve_chunk::<Vec<f32>>(&[0, 0, 0]).unwrap_err().to_string();
    assert!(error.contains("s3://wrf-se-ak-ar5/ccsm/rcp85/daily/2060/WRFDS_2060-01-01.nc"), "{error}");
}
