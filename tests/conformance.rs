//! Every JSON reference file of the conformance corpus reads exactly, sync and async.

mod common;

use std::sync::Arc;

use common::Case;
use zarrs_kerchunk::{AsyncReferenceStore, ReferenceStore};

#[test]
fn json_cases_read_exactly_sync() {
    let mut failures = Vec::new();
    for case in Case::all() {
        for file in case.references(true) {
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
    assert!(failures.is_empty(), "{} failures:\n{}", failures.len(), failures.join("\n"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn json_cases_read_exactly_async() {
    let mut failures = Vec::new();
    for case in Case::all() {
        for file in case.references(true) {
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
    assert!(failures.is_empty(), "{} failures:\n{}", failures.len(), failures.join("\n"));
}
