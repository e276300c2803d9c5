//! What the combining tests share: the folder of `tests/scan/combine` (made
//! by its `make.py`), the truths written there, and chunk references.

use std::path::{Path, PathBuf};

use kerchunk::{Reference, ReferenceSet};
use serde_json::Value;

pub(crate) fn folder() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/scan/combine")
}

/// `CASE.expected.json`: what xarray's `open_mfdataset` gives.
pub(crate) fn expected(case: &str) -> Value {
    serde_json::from_slice(&std::fs::read(folder().join(format!("{case}.expected.json"))).unwrap()).unwrap()
}

/// The data chunks of the array `path`: key, file and byte range.
pub(crate) fn chunks(set: &ReferenceSet, path: &str) -> Vec<(String, String, u64, u64)> {
    let prefix = format!("{path}/");
    let mut chunks: Vec<_> = set
        .iter()
        .filter(|(key, _)| key.starts_with(&prefix) && !key.contains(".z"))
        .map(|(key, reference)| match reference {
            Reference::Range { url: Some(url), offset, length } => (key.to_string(), url.to_owned(), offset, length),
            other => panic!("{key}: {other:?}"),
        })
        .collect();
    chunks.sort();
    chunks
}

/// Each file's combined chunks, held for `combine_streamed` to read back.
type Held = std::collections::HashMap<String, std::sync::Arc<ReferenceSet>>;

/// `scans` combined with `combine_with`, after a check that combining them a file at a time
/// (`combine_streamed`) gives the same: the same error, or the same
/// references, walked as the writers walk them (metadata first, then each array in path
/// order, its chunks in grid order). Checked twice: each file's chunks set aside
/// (`split_combined_chunks`, as a scan of many files), and read back from its whole set
/// (`combined_rest`, as an append).
pub(crate) fn combined(
    scans: Vec<(String, ReferenceSet)>,
    options: &kerchunk_combine::CombineOptions,
) -> Result<ReferenceSet, kerchunk_combine::CombineError> {
    let (mut set_aside, mut read_from_whole) = ((kerchunk_combine::FileRests::new(), Held::default()), None);
    let (mut refused, mut refused_rest) = (None, None);
    for (name, set) in &scans {
        match kerchunk_combine::split_combined_chunks(name, set, options) {
            Ok((rest, chunks)) => {
                set_aside.0.push(name.clone(), rest);
                set_aside.1.insert(name.clone(), std::sync::Arc::new(chunks));
            }
            Err(error) => refused = refused.or(Some(error.to_string())),
        }
        match kerchunk_combine::combined_rest(name, set, options) {
            Ok(rest) => {
                let (rests, held) =
                    read_from_whole.get_or_insert_with(|| (kerchunk_combine::FileRests::new(), Held::default()));
                rests.push(name.clone(), rest);
                held.insert(name.clone(), std::sync::Arc::new(copy(set)));
            }
            Err(error) => refused_rest = refused_rest.or(Some(error.to_string())),
        }
    }
    assert_eq!(refused_rest, refused, "combined_rest refuses as the split does");
    let whole = kerchunk_combine::combine_with(scans, options);
    check_streamed(&whole, refused.clone(), set_aside, options);
    if let Some(read_from_whole) = read_from_whole.filter(|_| refused.is_none()) {
        check_streamed(&whole, None, read_from_whole, options);
    }
    whole
}

/// A copy of `set`.
fn copy(set: &ReferenceSet) -> ReferenceSet {
    let mut builder = kerchunk::ReferenceSetBuilder::new();
    for (key, reference) in set.iter() {
        builder.insert_reference(&key, reference);
    }
    builder.build()
}

/// That `combine_streamed` of `rests`, reading chunks back from `held`, gives what combining
/// whole gave (`whole`), or the error `refused` names.
fn check_streamed(
    whole: &Result<ReferenceSet, kerchunk_combine::CombineError>,
    refused: Option<String>,
    (rests, held): (kerchunk_combine::FileRests, Held),
    options: &kerchunk_combine::CombineOptions,
) {
    use futures::StreamExt as _;
    use kerchunk::ReferenceSource as _;
    let streamed = match refused {
        Some(error) => Err(error),
        None => {
            kerchunk_combine::combine_streamed(rests, options, std::sync::Arc::new(held)).map_err(|e| e.to_string())
        }
    };
    match (whole, streamed) {
        (Err(whole), Err(streamed)) => assert_eq!(streamed, whole.to_string(), "the same error a file at a time"),
        (Ok(whole), Ok(streamed)) => {
            let walked: Vec<(String, kerchunk::OwnedReference)> = tokio::runtime::Runtime::new()
                .unwrap()
                .block_on(streamed.walk(kerchunk::Walk::All).map(Result::unwrap).collect());
            let mut theirs: Vec<(String, kerchunk::OwnedReference)> =
                whole.iter_owned().map(|(key, reference)| (key.into_owned(), reference)).collect();
            let mut ours = walked.clone();
            ours.sort_by(|a, b| a.0.cmp(&b.0));
            theirs.sort_by(|a, b| a.0.cmp(&b.0));
            assert_eq!(ours, theirs, "the same references a file at a time");
            // The writers' order: each array's chunks in grid order, the arrays by path.
            let places: Vec<(String, Vec<u64>)> = walked
                .iter()
                .filter(|(key, _)| !key.rsplit('/').next().unwrap().starts_with(".z"))
                .filter_map(|(key, _)| {
                    let (path, chunk) = key.rsplit_once('/')?;
                    Some((path.to_owned(), chunk.split('.').map(|i| i.parse().unwrap()).collect()))
                })
                .collect();
            assert!(places.is_sorted(), "walked in the writers' order: {places:?}");
            for (key, reference) in &walked {
                let found = match streamed.lookup(key).unwrap() {
                    kerchunk::Lookup::Ready(found) => found,
                    kerchunk::Lookup::Pending(_) => panic!("{key}: pending"),
                };
                assert_eq!(found.as_ref(), Some(reference), "lookup of {key}");
            }
        }
        (whole, streamed) => panic!("combined whole: {whole:?}; a file at a time: {streamed:?}"),
    }
}
