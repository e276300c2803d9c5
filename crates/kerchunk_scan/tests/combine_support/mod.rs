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
