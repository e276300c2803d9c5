//! Many readers at once through faults: 64 threads on one sync store per
//! case and 256 tasks on one async store per case, reading random chunks
//! through fault decorators. Every chunk that reads is compared with the
//! same chunk read through a store without faults, whose whole arrays are
//! first checked against the case's ground truth (`.npy` from h5py and
//! netCDF4); none may differ, every failed read must be the error its fault
//! causes, and the run must finish (no deadlock). Peak memory is reported.

mod common;

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use common::Case;
use common::faults::{Faulty, Latency, Reset, ServerErrors, ShortBody};
use object_store::ObjectStore;
use zarrs::array::{Array, ArrayBytes};
use zarrs_kerchunk::{AsyncReferenceStore, ReferenceStore, ReferenceStoreBuilder};

/// A chunk: its array and grid indices.
type Chunk = (String, Vec<u64>);

#[derive(Default)]
struct Tally {
    reads: AtomicUsize,
    errors: AtomicUsize,
    mismatches: AtomicUsize,
    /// Errors that are not the one their fault causes (at most a few kept).
    unexpected: Mutex<Vec<String>>,
}

impl Tally {
    /// A failed open or read: counted, and kept if it is not `fault`'s own error.
    fn error(&self, error: &str, fault: Option<&str>) {
        self.errors.fetch_add(1, Ordering::Relaxed);
        if !fault.is_some_and(|text| error.contains(text)) {
            let mut unexpected = self.unexpected.lock().unwrap();
            if unexpected.len() < 5 {
                unexpected.push(error.to_owned());
            }
        }
    }
}

/// The faulty store for the `i`th case (the fault classes in turn), and the
/// text of the error that fault causes (none for latency, which must cause none).
fn faulty(i: usize, inner: Arc<dyn ObjectStore>) -> (Arc<dyn ObjectStore>, Option<&'static str>) {
    match i % 4 {
        0 => (Arc::new(Faulty::new(inner, Latency(Duration::from_millis(1)))), None),
        1 => (Arc::new(Faulty::new(inner, ServerErrors { every: 7, burst: 1 })), Some("503")),
        2 => (Arc::new(Faulty::new(inner, ShortBody)), Some("returned")),
        _ => (Arc::new(Faulty::new(inner, Reset)), Some("connection reset")),
    }
}

/// The store's own read deadline (two minutes) stands: none of these faults stalls, so a read
/// that hits it hangs. A deadline of the test's own (10 s) counted a read slowed by a busy
/// machine, 64 threads on two cores, as an error no fault explains.
fn builder(store: Arc<dyn ObjectStore>) -> ReferenceStoreBuilder {
    ReferenceStoreBuilder::new().with_store("s3://stress/", store)
}

fn json_cases() -> Vec<(Case, String)> {
    Case::all().into_iter().filter_map(|c| c.references(true).first().cloned().map(|f| (c, f))).collect()
}

/// The chunks of every array of `case` (the first 10^4 of each), read through
/// `store` (no faults) once each array has read whole equal to the case's `.npy`.
fn truth_of(store: &Arc<ReferenceStore>, case: &Case) -> HashMap<Chunk, ArrayBytes<'static>> {
    let mut chunks = HashMap::new();
    for entry in case.arrays() {
        let path = format!("/{}", entry["path"].as_str().unwrap());
        let what = format!("{}:{path}", case.name);
        let array = Array::open(Arc::clone(store), &path).unwrap_or_else(|e| panic!("{what}: {e}"));
        let whole = array.retrieve_array_subset::<ArrayBytes>(&array.subset_all());
        let checked = whole.map_err(|e| e.to_string()).and_then(|bytes| common::compare(case, entry, bytes));
        checked.unwrap_or_else(|e| panic!("{what} without faults: {e}"));
        let grid = array.chunk_grid_shape().to_vec();
        for linear in 0..grid.iter().product::<u64>().min(10_000) {
            let indices = unravel(linear, &grid);
            let bytes = array.retrieve_chunk::<ArrayBytes<'static>>(&indices);
            chunks.insert((path.clone(), indices), bytes.unwrap_or_else(|e| panic!("{what}: {e}")));
        }
    }
    chunks
}

fn unravel(mut linear: u64, grid: &[u64]) -> Vec<u64> {
    let mut indices = vec![0; grid.len()];
    for (i, &n) in grid.iter().enumerate().rev() {
        indices[i] = linear % n;
        linear /= n;
    }
    indices
}

/// A small deterministic generator, so that a failure can be replayed.
fn next_random(state: &mut u64) -> u64 {
    *state ^= *state << 13;
    *state ^= *state >> 7;
    *state ^= *state << 17;
    *state
}

fn pick<'k>(keys: &'k [Chunk], state: &mut u64) -> &'k Chunk {
    &keys[usize::try_from(next_random(state) % keys.len() as u64).expect("below the length")]
}

fn peak_memory_kib() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or(0)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sixty_four_threads_on_one_sync_store() {
    let tally = Arc::new(Tally::default());
    for (i, (case, file)) in json_cases().into_iter().enumerate() {
        let memory = case.in_memory().await;
        let location = format!("s3://stress/{}/{file}", case.name);
        let (noisy, fault) = faulty(i, Arc::clone(&memory));
        let (clean, noisy) = (builder(memory), builder(noisy));
        let truth = Arc::new(
            tokio::task::spawn_blocking({
                let location = location.clone();
                move || {
                    let store = Arc::new(clean.open(&location).unwrap());
                    truth_of(&store, &case)
                }
            })
            .await
            .unwrap(),
        );
        let store = match tokio::task::spawn_blocking(move || noisy.open(&location)).await.unwrap() {
            Ok(store) => store,
            Err(e) => {
                tally.error(&e.to_string(), fault);
                continue;
            }
        };
        let store: Arc<ReferenceStore> = Arc::new(store);
        let keys: Arc<Vec<Chunk>> = Arc::new(truth.keys().cloned().collect());
        if keys.is_empty() {
            continue;
        }
        let tally = Arc::clone(&tally);
        tokio::task::spawn_blocking(move || {
            std::thread::scope(|scope| {
                for thread in 0..64u64 {
                    let (store, truth, keys, tally) = (&store, &truth, &keys, &tally);
                    scope.spawn(move || {
                        let mut state = 0x9E37_79B9_7F4A_7C15 ^ (thread + 1);
                        for _ in 0..20 {
                            let (path, indices) = pick(keys, &mut state);
                            let read = Array::open(Arc::clone(store), path).map_err(|e| e.to_string()).and_then(|a| {
                                a.retrieve_chunk::<ArrayBytes<'static>>(indices).map_err(|e| e.to_string())
                            });
                            tally.reads.fetch_add(1, Ordering::Relaxed);
                            match read {
                                Ok(bytes) if bytes == truth[&(path.clone(), indices.clone())] => {}
                                Ok(_) => _ = tally.mismatches.fetch_add(1, Ordering::Relaxed),
                                Err(e) => tally.error(&e, fault),
                            }
                        }
                    });
                }
            });
        })
        .await
        .unwrap();
    }
    report("64 threads, sync", &tally);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_hundred_fifty_six_tasks_on_one_async_store() {
    let tally = Arc::new(Tally::default());
    for (i, (case, file)) in json_cases().into_iter().enumerate() {
        let memory = case.in_memory().await;
        let location = format!("s3://stress/{}/{file}", case.name);
        let (noisy, fault) = faulty(i, Arc::clone(&memory));
        let clean = builder(memory);
        let truth = Arc::new(
            tokio::task::spawn_blocking({
                let location = location.clone();
                move || truth_of(&Arc::new(clean.open(&location).unwrap()), &case)
            })
            .await
            .unwrap(),
        );
        let store = match builder(noisy).open_async(&location).await {
            Ok(store) => store,
            Err(e) => {
                tally.error(&e.to_string(), fault);
                continue;
            }
        };
        let store: Arc<AsyncReferenceStore> = Arc::new(store);
        let keys: Arc<Vec<Chunk>> = Arc::new(truth.keys().cloned().collect());
        if keys.is_empty() {
            continue;
        }
        let tasks: Vec<_> = (0..256u64)
            .map(|task| {
                let (store, truth, keys, tally) =
                    (Arc::clone(&store), Arc::clone(&truth), Arc::clone(&keys), Arc::clone(&tally));
                tokio::spawn(async move {
                    let mut state = 0xD1B5_4A32_D192_ED03 ^ (task + 1);
                    for _ in 0..10 {
                        let (path, indices) = pick(&keys, &mut state);
                        let read = match Array::async_open(Arc::clone(&store), path).await {
                            Ok(a) => {
                                a.async_retrieve_chunk::<ArrayBytes<'static>>(indices).await.map_err(|e| e.to_string())
                            }
                            Err(e) => Err(e.to_string()),
                        };
                        tally.reads.fetch_add(1, Ordering::Relaxed);
                        match read {
                            Ok(bytes) if bytes == truth[&(path.clone(), indices.clone())] => {}
                            Ok(_) => _ = tally.mismatches.fetch_add(1, Ordering::Relaxed),
                            Err(e) => tally.error(&e, fault),
                        }
                    }
                })
            })
            .collect();
        for task in tasks {
            task.await.unwrap();
        }
    }
    report("256 tasks, async", &tally);
}

fn report(what: &str, tally: &Tally) {
    let (reads, errors, mismatches) = (
        tally.reads.load(Ordering::Relaxed),
        tally.errors.load(Ordering::Relaxed),
        tally.mismatches.load(Ordering::Relaxed),
    );
    eprintln!(
        "stress {what}: {reads} chunk reads, {errors} errors, {mismatches} mismatches, peak RSS {} MiB",
        peak_memory_kib() / 1024
    );
    assert_eq!(mismatches, 0, "chunks read through faults differ from the truth");
    let unexpected = tally.unexpected.lock().unwrap();
    assert!(unexpected.is_empty(), "errors no fault explains: {unexpected:#?}");
    assert!(reads > 1000, "{reads} reads");
}
