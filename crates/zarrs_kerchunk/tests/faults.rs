//! Every conformance case read through every kind of fault, sync and async:
//! each array reads exactly or fails with an error; wrong bytes never come
//! back. The faults are `ObjectStore` decorators (tests/common/faults), over
//! an in-memory store holding each case's files under `s3://faults/<case>/`.

mod common;

use std::sync::Arc;
use std::time::Duration;

use common::Case;
use common::faults::{
    Changing, Fault, Faulty, IgnoresRange, Latency, Reset, ServerErrors, ShortBody, Stall, deadline_for,
};
use object_store::ObjectStore;
use zarrs::array::{Array, ArrayBytes};
use zarrs_kerchunk::ReferenceStoreBuilder;

/// How the arrays of one fault's run came out.
#[derive(Debug, Default)]
struct Outcome {
    exact: usize,
    errors: Vec<String>,
    wrong: Vec<String>,
}

impl Outcome {
    fn record(&mut self, what: &str, result: Result<Result<(), String>, String>) {
        match result {
            Ok(Ok(())) => self.exact += 1,
            Ok(Err(wrong)) => self.wrong.push(format!("{what}: {wrong}")),
            Err(error) => self.errors.push(format!("{what}: {error}")),
        }
    }

    fn errors_mentioning(&self, text: &str) -> usize {
        self.errors.iter().filter(|e| e.contains(text)).count()
    }
}

fn builder(store: Arc<dyn ObjectStore>, deadline: Duration) -> ReferenceStoreBuilder {
    ReferenceStoreBuilder::new().with_store("s3://faults/", store).with_read_deadline(deadline)
}

/// Every array of every case, through a fresh store wrapped in `fault()`.
async fn read_all<F: Fault>(fault: impl Fn() -> F, sync: bool) -> Outcome {
    let mut outcome = Outcome::default();
    for case in Case::all() {
        let parquet = if cfg!(feature = "parquet") { case.references(false) } else { Vec::new() };
        for file in case.references(true).into_iter().chain(parquet) {
            let fault = fault();
            let deadline = deadline_for(&fault);
            let store: Arc<dyn ObjectStore> = Arc::new(Faulty::new(case.in_memory().await, fault));
            let location = format!("s3://faults/{}/{file}", case.name);
            let what = |path: &str| format!("{}/{file}:{path}", case.name);
            if sync {
                let builder = builder(store, deadline);
                let opened = tokio::task::spawn_blocking(move || builder.open(&location)).await.unwrap();
                let store = match opened {
                    Ok(store) => Arc::new(store),
                    Err(e) => {
                        outcome.record(&what("(open)"), Err(e.to_string()));
                        continue;
                    }
                };
                for entry in case.arrays() {
                    let path = format!("/{}", entry["path"].as_str().unwrap());
                    let (store, entry_owned) = (Arc::clone(&store), entry.clone());
                    let read = tokio::task::spawn_blocking(move || {
                        let array = Array::open(store, &path).map_err(|e| e.to_string())?;
                        array.retrieve_array_subset::<ArrayBytes>(&array.subset_all()).map_err(|e| e.to_string())
                    })
                    .await
                    .unwrap();
                    let path = entry["path"].as_str().unwrap();
                    outcome.record(&what(path), read.map(|bytes| common::compare(&case, &entry_owned, bytes)));
                }
            } else {
                let store = match builder(store, deadline).open_async(&location).await {
                    Ok(store) => Arc::new(store),
                    Err(e) => {
                        outcome.record(&what("(open)"), Err(e.to_string()));
                        continue;
                    }
                };
                for entry in case.arrays() {
                    let path = format!("/{}", entry["path"].as_str().unwrap());
                    let read = match Array::async_open(Arc::clone(&store), &path).await {
                        Ok(a) => a
                            .async_retrieve_array_subset::<ArrayBytes>(&a.subset_all())
                            .await
                            .map_err(|e| e.to_string()),
                        Err(e) => Err(e.to_string()),
                    };
                    outcome.record(&what(&path), read.map(|bytes| common::compare(&case, entry, bytes)));
                }
            }
        }
    }
    outcome
}

/// One fault, sync and async: no wrong bytes, and `check` on the outcome.
async fn table_row<F: Fault>(name: &str, fault: impl Fn() -> F, check: impl Fn(&Outcome)) {
    for sync in [true, false] {
        let outcome = read_all(&fault, sync).await;
        let mode = if sync { "sync" } else { "async" };
        eprintln!(
            "fault {name:<14} {mode:<5}: {} exact, {} errors, {} wrong",
            outcome.exact,
            outcome.errors.len(),
            outcome.wrong.len()
        );
        for error in outcome.errors.iter().take(3) {
            eprintln!("    e.g. {error}");
        }
        assert!(outcome.wrong.is_empty(), "{name} ({mode}) returned wrong bytes: {:#?}", outcome.wrong);
        check(&outcome);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn latency_changes_nothing() {
    table_row(
        "latency",
        || Latency(Duration::from_millis(2)),
        |o| {
            assert!(o.errors.is_empty(), "{:#?}", o.errors);
            assert!(o.exact > 50, "{}", o.exact);
        },
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn server_errors_are_errors() {
    table_row(
        "5xx bursts",
        || ServerErrors { every: 5, burst: 2 },
        |o| {
            assert!(o.errors_mentioning("503") > 0, "no 503 reached a read");
            assert!(o.exact > 0);
        },
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn connection_resets_are_errors() {
    table_row("reset", || Reset, |o| assert!(o.errors_mentioning("connection reset") > 0, "{:#?}", o.errors)).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stalls_end_at_the_deadline() {
    table_row(
        "stall",
        || Stall { every: 9 },
        |o| {
            assert!(o.errors_mentioning("did not finish within") > 0, "{:#?}", o.errors);
        },
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn short_bodies_are_errors() {
    table_row("short body", || ShortBody, |o| assert!(o.errors_mentioning("returned") > 0, "{:#?}", o.errors)).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_target_that_changes_is_an_error() {
    table_row("changing ETag", Changing::default, |o| {
        assert!(o.errors_mentioning("changed while being read") > 0, "{:#?}", o.errors);
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ignoring_range_is_an_error() {
    table_row("ignores Range", || IgnoresRange, |o| assert!(!o.errors.is_empty())).await;
}
