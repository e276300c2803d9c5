//! Every reference file of the conformance corpus, JSON and parquet, reads exactly, sync and async.

mod common;

use std::sync::Arc;

use common::Case;
use zarrs_kerchunk::{AsyncReferenceStore, ReferenceStore};

fn check_all_sync(json: bool) {
    let mut failures = Vec::new();
    let mut checked = 0;
    for case in Case::all() {
        for file in case.references(json) {
            checked += 1;
            let location = case.dir.join(&file);
            let store = match ReferenceStore::open(location.to_str().unwrap()) {
                Ok(store) => Arc::new(store),
                Err(e) => {
                    failures.push(format!("{}/{file}: open: {e}", case.name));
                    continue;
                }
            };
            failures
                .extend(common::check_sync(&case, &store).into_iter().map(|f| format!("{}/{file}: {f}", case.name)));
        }
    }
    assert!(checked > 0);
    assert!(failures.is_empty(), "{} failures:\n{}", failures.len(), failures.join("\n"));
}

async fn check_all_async(json: bool) {
    let mut failures = Vec::new();
    let mut checked = 0;
    for case in Case::all() {
        for file in case.references(json) {
            checked += 1;
            let location = case.dir.join(&file);
            let store = match AsyncReferenceStore::open(location.to_str().unwrap()).await {
                Ok(store) => Arc::new(store),
                Err(e) => {
                    failures.push(format!("{}/{file}: open: {e}", case.name));
                    continue;
                }
            };
            let found = common::check_async(&case, store).await;
            failures.extend(found.into_iter().map(|f| format!("{}/{file}: {f}", case.name)));
        }
    }
    assert!(checked > 0);
    assert!(failures.is_empty(), "{} failures:\n{}", failures.len(), failures.join("\n"));
}

#[test]
fn json_cases_read_exactly_sync() {
    check_all_sync(true);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn json_cases_read_exactly_async() {
    check_all_async(true).await;
}

#[cfg(feature = "parquet")]
#[test]
fn parquet_cases_read_exactly_sync() {
    check_all_sync(false);
}

#[cfg(feature = "parquet")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn parquet_cases_read_exactly_async() {
    check_all_async(false).await;
}
