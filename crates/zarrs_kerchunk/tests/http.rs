//! The conformance cases read over HTTP (a real server with Range support on
//! 127.0.0.1), and failing servers give clear errors, never wrong bytes.

#![cfg(feature = "http")]

mod common;

use std::sync::Arc;

use common::{Case, server};
use kerchunk::{ParseOptions, ReferenceSet};
use zarrs_kerchunk::{AsyncReferenceStore, ReferenceStore, ReferenceStoreBuilder};
use zarrs_storage::byte_range::ByteRange;
use zarrs_storage::{AsyncReadableStorageTraits, ReadableStorageTraits, StoreKey};

fn http_cases_sync(json: bool) {
    let base = server::files();
    let mut failures = Vec::new();
    for case in Case::all() {
        for file in case.references(json) {
            let url = format!("{base}/files/{}/{file}", case.name);
            match ReferenceStore::open(&url) {
                Ok(store) => failures
                    .extend(common::check_sync(&case, &Arc::new(store)).into_iter().map(|f| format!("{url}: {f}"))),
                Err(e) => failures.push(format!("{url}: open: {e}")),
            }
        }
    }
    assert!(failures.is_empty(), "{} failures:\n{}", failures.len(), failures.join("\n"));
}

async fn http_cases_async(json: bool) {
    let base = server::files();
    let mut failures = Vec::new();
    for case in Case::all() {
        for file in case.references(json) {
            let url = format!("{base}/files/{}/{file}", case.name);
            match AsyncReferenceStore::open(&url).await {
                Ok(store) => {
                    let found = common::check_async(&case, Arc::new(store)).await;
                    failures.extend(found.into_iter().map(|f| format!("{url}: {f}")));
                }
                Err(e) => failures.push(format!("{url}: open: {e}")),
            }
        }
    }
    assert!(failures.is_empty(), "{} failures:\n{}", failures.len(), failures.join("\n"));
}

#[test]
fn json_cases_read_exactly_over_http_sync() {
    http_cases_sync(true);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn json_cases_read_exactly_over_http_async() {
    http_cases_async(true).await;
}

/// Parquet roots are URL prefixes ending in `.parq`: opening reads `.zmetadata`, then records on demand.
#[cfg(feature = "parquet")]
#[test]
fn parquet_cases_read_exactly_over_http_sync() {
    http_cases_sync(false);
}

#[cfg(feature = "parquet")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn parquet_cases_read_exactly_over_http_async() {
    http_cases_async(false).await;
}

/// A store with one range reference to `url` (bytes 0..1000) and one whole-file reference.
fn one_ref(url: &str) -> (ReferenceStore, AsyncReferenceStore) {
    one_ref_with(url, &ReferenceStoreBuilder::new())
}

fn one_ref_with(url: &str, builder: &ReferenceStoreBuilder) -> (ReferenceStore, AsyncReferenceStore) {
    let doc = format!(r#"{{"r": ["{url}", 0, 1000], "w": ["{url}"]}}"#);
    let set = || ReferenceSet::from_json(doc.as_bytes(), &ParseOptions::default()).unwrap();
    let base = "http://127.0.0.1/refs.json";
    (builder.build(set(), base).unwrap(), builder.build_async(set(), base).unwrap())
}

fn assert_clear(error: &str, url: &str, cause: &str) {
    assert!(error.contains("\"r\"") || error.contains("\"w\""), "key missing from: {error}");
    assert!(error.contains(url), "URL missing from: {error}");
    assert!(error.to_lowercase().contains(cause), "cause {cause:?} missing from: {error}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn server_errors_are_reported_with_key_url_and_cause() {
    let base = server::files();
    let url = format!("{base}/status500/nc4_deflate_shuffle/data.nc");
    // object_store retries server errors with backoff; a store handed in for this host retries none.
    let no_retries = object_store::RetryConfig { max_retries: 0, ..Default::default() };
    let store = object_store::http::HttpBuilder::new().with_url(&base).with_retry(no_retries).build().unwrap();
    let (sync, asynchronous) =
        one_ref_with(&url, &ReferenceStoreBuilder::new().with_store(format!("{base}/"), Arc::new(store)));
    for key in ["r", "w"] {
        let key = StoreKey::new(key).unwrap();
        let e = asynchronous.get(&key).await.unwrap_err().to_string();
        assert_clear(&e, &url, "500");
        let sync = sync.clone();
        let e = tokio::task::spawn_blocking(move || sync.get(&key).unwrap_err().to_string()).await.unwrap();
        assert_clear(&e, &url, "500");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_closes_early_is_an_error() {
    let url = format!("{}/data.nc", server::truncating());
    let (sync, asynchronous) = one_ref(&url);
    let key = StoreKey::new("r").unwrap();
    let e = asynchronous.get(&key).await.unwrap_err().to_string();
    assert!(e.contains(&url) && e.contains("\"r\""), "{e}");
    let e = tokio::task::spawn_blocking(move || sync.get(&key).unwrap_err().to_string()).await.unwrap();
    assert!(e.contains(&url) && e.contains("\"r\""), "{e}");
}

/// A server that accepts and never answers is an error naming the key and the
/// URL once the timeout and the retry budget are spent, not a hang.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_never_answers_is_an_error() {
    let url = format!("{}/data.nc", server::stalling());
    let retry = object_store::RetryConfig {
        max_retries: 1,
        retry_timeout: std::time::Duration::from_secs(2),
        ..Default::default()
    };
    let builder = ReferenceStoreBuilder::new().with_timeout(std::time::Duration::from_millis(500)).with_retry(retry);
    let (sync, asynchronous) = one_ref_with(&url, &builder);
    let key = StoreKey::new("r").unwrap();
    let e = asynchronous.get(&key).await.unwrap_err().to_string();
    assert!(e.contains(&url) && e.contains("\"r\"") && e.contains("timed out"), "{e}");
    let e = tokio::task::spawn_blocking(move || sync.get(&key).unwrap_err().to_string()).await.unwrap();
    assert!(e.contains(&url) && e.contains("\"r\"") && e.contains("timed out"), "{e}");
}

#[test]
fn a_server_that_ignores_range_never_gives_wrong_bytes() {
    let base = server::files();
    let url = format!("{base}/norange/nc4_deflate_shuffle/data.nc");
    let file = std::fs::read(common::data_dir().join("nc4_deflate_shuffle/data.nc")).unwrap();
    let (sync, _) = one_ref(&url);
    match sync.get(&StoreKey::new("r").unwrap()) {
        Ok(Some(bytes)) => assert_eq!(&bytes[..], &file[..1000]),
        Ok(None) => panic!("a reference is never missing"),
        Err(e) => assert!(e.to_string().contains(&url), "{e}"),
    }
}

#[test]
fn missing_remote_target_is_an_error() {
    let base = server::files();
    let url = format!("{base}/files/no/such/file.nc");
    let (sync, _) = one_ref(&url);
    let e = sync.get(&StoreKey::new("r").unwrap()).unwrap_err().to_string();
    assert_clear(&e, &url, "not found");
}

#[test]
fn a_redirect_loop_is_an_error_naming_the_url_without_its_signature() {
    let base = server::files();
    let url = format!("{base}/loop/data.nc");
    let (sync, _) = one_ref(&url);
    let e = sync.get(&StoreKey::new("r").unwrap()).unwrap_err().to_string();
    assert_clear(&e, &url, &format!("more than 10 redirects, from {url} (last to {url})"));
    assert!(!e.contains("sekrit"), "{e}");
}

#[test]
fn missing_reference_file_over_http() {
    let base = server::files();
    let e = ReferenceStore::open(&format!("{base}/files/nothing.json")).unwrap_err().to_string();
    assert!(e.contains("nothing.json"), "{e}");
}

#[test]
fn a_range_reference_costs_one_ranged_get_and_no_head() {
    let (base, log) = server::files_logged();
    let store = ReferenceStore::open(&format!("{base}/files/nc4_deflate_shuffle/refs.json")).unwrap();
    log.lock().unwrap().clear();
    // idx/0.1 is ["data.nc", offset, length] in refs.json.
    let bytes = store.get(&StoreKey::new("idx/0.1").unwrap()).unwrap().unwrap();
    let requests = log.lock().unwrap().clone();
    assert_eq!(requests.len(), 1, "{requests:?}");
    let (method, path, range) = &requests[0];
    assert_eq!((method.as_str(), path.as_str()), ("GET", "/files/nc4_deflate_shuffle/data.nc"));
    let refs: serde_json::Value =
        serde_json::from_slice(&std::fs::read(common::data_dir().join("nc4_deflate_shuffle/refs.json")).unwrap())
            .unwrap();
    let (offset, length) = (refs["refs"]["idx/0.1"][1].as_u64().unwrap(), refs["refs"]["idx/0.1"][2].as_u64().unwrap());
    assert_eq!(range.as_deref(), Some(format!("bytes={offset}-{}", offset + length - 1).as_str()));
    assert_eq!(bytes.len() as u64, length);
    // Inline and metadata keys cost nothing.
    log.lock().unwrap().clear();
    store.get(&StoreKey::new("idx/.zarray").unwrap()).unwrap().unwrap();
    assert!(store.size_key(&StoreKey::new("idx/0.1").unwrap()).unwrap() == Some(length));
    assert!(log.lock().unwrap().is_empty());
}

/// A part of a reference past the end of a remote target is an error, as a
/// whole read of it is: checked against the size the ranged answer states,
/// with no request more.
#[test]
fn partial_reads_of_a_remote_reference_past_the_end_are_errors() {
    let (base, log) = server::files_logged();
    let file = "nc4_deflate_shuffle/data.nc";
    let len = std::fs::metadata(common::data_dir().join(file)).unwrap().len();
    let url = format!("{base}/files/{file}");
    let doc = format!(r#"{{"long": ["{url}", 0, {}], "ok": ["{url}", 0, {len}]}}"#, len + 1);
    let set = || ReferenceSet::from_json(doc.as_bytes(), &ParseOptions::default()).unwrap();
    let builder = ReferenceStoreBuilder::new();
    let (sync, asynchronous) = (builder.build(set(), &base).unwrap(), builder.build_async(set(), &base).unwrap());
    let parts = || Box::new([ByteRange::FromStart(0, Some(4))].into_iter());
    log.lock().unwrap().clear();
    let err = sync.get_partial_many(&StoreKey::new("long").unwrap(), parts()).err().expect("a part past the end");
    assert!(err.to_string().contains("past the end") && err.to_string().contains(&url), "{err}");
    assert_eq!(log.lock().unwrap().len(), 1, "one ranged GET, no HEAD");
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let err = runtime
        .block_on(AsyncReadableStorageTraits::get_partial_many(&asynchronous, &StoreKey::new("long").unwrap(), parts()))
        .err()
        .expect("a part past the end, async");
    assert!(err.to_string().contains("past the end"), "{err}");
    let got: Vec<_> = sync.get_partial_many(&StoreKey::new("ok").unwrap(), parts()).unwrap().unwrap().collect();
    assert_eq!(got.len(), 1);
    assert_eq!(got[0].as_ref().unwrap().len(), 4);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_sync_store_works_inside_an_async_task() {
    // Runtime::block_on would panic here ("Cannot start a runtime from within a runtime").
    let base = server::files();
    let case = Case::all().into_iter().find(|c| c.name == "nc4_deflate_shuffle").unwrap();
    let store = ReferenceStore::open(&format!("{base}/files/nc4_deflate_shuffle/refs.json")).unwrap();
    let failures = common::check_sync(&case, &Arc::new(store));
    assert!(failures.is_empty(), "{failures:?}");
}

/// A prefetch reads every chunk of a case in one coalesced GET; zarrs then reads from memory, exactly.
#[test]
fn prefetch_coalesces_and_then_serves_from_memory() {
    let (base, log) = server::files_logged();
    let case = Case::all().into_iter().find(|c| c.name == "parquet_fastparquet").unwrap();
    let locations: &[&str] = if cfg!(feature = "parquet") { &["refs.json", "refs.parq"] } else { &["refs.json"] };
    for location in locations {
        let store = Arc::new(ReferenceStore::open(&format!("{base}/files/{}/{location}", case.name)).unwrap());
        let keys = zarrs_storage::ListableStorageTraits::list(store.as_ref()).unwrap();
        log.lock().unwrap().clear();
        let bytes = store.prefetch(keys).unwrap();
        assert!(bytes > 0);
        let data_gets = |log: &std::sync::Mutex<Vec<server::Logged>>| {
            log.lock().unwrap().iter().filter(|(_, path, _)| path.ends_with("data.nc")).count()
        };
        assert_eq!(data_gets(&log), 1, "{location}: every chunk reference in one ranged GET");
        let failures = common::check_sync(&case, &store);
        assert!(failures.is_empty(), "{location}: {failures:?}");
        assert_eq!(data_gets(&log), 1, "{location}: no read after the prefetch");
        store.clear_prefetched();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn async_prefetch_reports_failures_with_key_and_url() {
    let base = server::files();
    let url = format!("{base}/files/nope/missing.nc");
    let (_, asynchronous) = one_ref(&url);
    let err = asynchronous.prefetch([StoreKey::new("r").unwrap()]).await.unwrap_err().to_string();
    assert_clear(&err, &url, "not found");
}

#[expect(clippy::single_range_in_vec_init, reason = "one-dimensional regions")]
/// `prefetch_region` reads exactly the chunks behind a region, in one GET; zarrs then reads that region from memory.
#[test]
fn prefetch_region_reads_the_region_chunks_once() {
    let (base, log) = server::files_logged();
    let store = Arc::new(ReferenceStore::open(&format!("{base}/files/nc4_deflate_shuffle/refs.json")).unwrap());
    let array = zarrs::array::Array::open(store.clone(), "/temp").unwrap();
    let local = ReferenceStore::open(common::data_dir().join("nc4_deflate_shuffle/refs.json").to_str().unwrap());
    let expected = zarrs::array::Array::open(Arc::new(local.unwrap()), "/temp").unwrap();
    let region = [2..4, 1..7, 0..9];
    log.lock().unwrap().clear();
    let bytes = store.prefetch_region("/temp", &region).unwrap();
    let data_gets = || log.lock().unwrap().iter().filter(|(_, path, _)| path.ends_with("data.nc")).count();
    assert_eq!(data_gets(), 1, "the region's 9 chunks in one ranged GET");
    let read: ndarray::ArrayD<f32> = array.retrieve_array_subset(&region).unwrap();
    assert_eq!(data_gets(), 1, "no read after the prefetch");
    let want: ndarray::ArrayD<f32> = expected.retrieve_array_subset(&region).unwrap();
    assert_eq!(read, want);
    let all_chunks = ReferenceStore::open(common::data_dir().join("nc4_deflate_shuffle/refs.json").to_str().unwrap())
        .unwrap()
        .prefetch_region("temp", &[0..5, 0..7, 0..9])
        .unwrap();
    assert!(bytes > 0 && bytes < all_chunks, "{bytes} of {all_chunks} bytes");
    for (region, needle) in
        [(&[0..6, 0..7, 0..9][..], "of length 5"), (&[0..1][..], "dimensions"), (&[][..], "dimensions")]
    {
        let err = store.prefetch_region("/temp", region).unwrap_err().to_string();
        assert!(err.contains("temp") && err.contains(needle), "{err}");
    }
    let err = store.prefetch_region("/nope", &[0..1]).unwrap_err().to_string();
    assert!(err.contains("nope") && err.contains("no .zarray"), "{err}");
}

/// A one-dimensional array `a` of `chunks` chunks of 100 `u32`s in `data.bin`
/// (of which only the first `written` chunks are written), with its
/// references in `refs.json`; returns the values of the whole array.
fn chunked_array(dir: &std::path::Path, chunks: u32, written: u32) -> Vec<u32> {
    let values: Vec<u32> = (0..chunks * 100).map(|i| i.wrapping_mul(2_654_435_761)).collect();
    let bytes: Vec<u8> = values[..(written * 100) as usize].iter().flat_map(|v| v.to_le_bytes()).collect();
    std::fs::write(dir.join("data.bin"), bytes).unwrap();
    let mut refs = serde_json::Map::new();
    let zarray = serde_json::json!({"zarr_format": 2, "shape": [chunks * 100], "chunks": [100], "dtype": "<u4",
        "compressor": null, "filters": null, "fill_value": 0, "order": "C"});
    refs.insert("a/.zarray".into(), zarray.to_string().into());
    for i in 0..chunks {
        refs.insert(format!("a/{i}"), serde_json::json!(["data.bin", i * 400, 400]));
    }
    std::fs::write(dir.join("refs.json"), serde_json::json!({"version": 1, "refs": refs}).to_string()).unwrap();
    values
}

/// The bytes asked for by the ranged GETs of `data.bin` in the log.
fn ranged_bytes(log: &std::sync::Mutex<Vec<server::Logged>>) -> u64 {
    let log = log.lock().unwrap();
    let ranges = log.iter().filter(|(_, path, _)| path.ends_with("data.bin")).filter_map(|(_, _, range)| {
        let (start, end) = range.as_deref()?.strip_prefix("bytes=")?.split_once('-')?;
        Some(end.parse::<u64>().ok()? + 1 - start.parse::<u64>().ok()?)
    });
    ranges.sum()
}

fn data_gets(log: &std::sync::Mutex<Vec<server::Logged>>) -> usize {
    log.lock().unwrap().iter().filter(|(method, path, _)| method == "GET" && path.ends_with("data.bin")).count()
}

/// zarrs reads a whole array one chunk per thread; the store sees the run
/// and reads ahead, so 300 chunks cost a few large GETs, sync and async,
/// with the values exact. With read-ahead off, each chunk is one GET.
#[test]
fn a_sequential_read_is_read_ahead_in_a_few_large_gets() {
    let dir = tempfile::tempdir().unwrap();
    let values = chunked_array(dir.path(), 300, 300);
    let (base, log) = server::serve_dir_logged(dir.path().to_owned());
    let location = format!("{base}/refs.json");
    for read_ahead in [zarrs_kerchunk::DEFAULT_READ_AHEAD, 0] {
        let store = Arc::new(ReferenceStoreBuilder::new().with_read_ahead(read_ahead).open(&location).unwrap());
        let array = zarrs::array::Array::open(store, "/a").unwrap();
        log.lock().unwrap().clear();
        let got: Vec<u32> = array.retrieve_array_subset(&array.subset_all()).unwrap();
        assert!(got == values, "read-ahead {read_ahead}: wrong values");
        let gets = data_gets(&log);
        if read_ahead == 0 {
            assert_eq!(gets, 300, "one GET a chunk without read-ahead");
        } else {
            assert!(gets <= 40, "{gets} GETs for 300 chunks read in order");
            // Each thread's share is read ahead once, not again by the run before it.
            let read = ranged_bytes(&log);
            assert!(read <= 300 * 400 * 5 / 4, "{read} bytes read for 120000");
        }
    }
    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
    runtime.block_on(async {
        let store = Arc::new(ReferenceStoreBuilder::new().open_async(&location).await.unwrap());
        let array = zarrs::array::Array::async_open(store, "/a").await.unwrap();
        log.lock().unwrap().clear();
        let got: Vec<u32> = array.async_retrieve_array_subset(&array.subset_all()).await.unwrap();
        assert!(got == values, "async: wrong values");
        let gets = data_gets(&log);
        assert!(gets < 300, "async: {gets} GETs for 300 chunks read in order");
    });
}

#[expect(clippy::single_range_in_vec_init, reason = "a one-dimensional region")]
/// Read-ahead never changes what a read returns: chunks past the end of a
/// short target fail as they would without it, naming key and URL, and the
/// chunks before them, read ahead in the same failed block, are read again.
#[test]
fn a_failed_read_ahead_is_read_again_and_reported_as_without_it() {
    let dir = tempfile::tempdir().unwrap();
    let values = chunked_array(dir.path(), 300, 150);
    let base = server::serve_dir(dir.path().to_owned());
    let store = Arc::new(ReferenceStore::open(&format!("{base}/refs.json")).unwrap());
    let array = zarrs::array::Array::open(store.clone(), "/a").unwrap();
    let written: Vec<u32> = array.retrieve_array_subset(&[0..15_000]).unwrap();
    assert!(written == values[..15_000], "the written chunks are exact");
    let err = array.retrieve_array_subset::<Vec<u32>>(&array.subset_all()).unwrap_err().to_string();
    assert!(err.contains("cannot read key \"a/") && err.contains("data.bin"), "{err}");
    for i in [149, 150, 299] {
        let got = store.get(&StoreKey::new(format!("a/{i}")).unwrap());
        assert_eq!(got.is_ok(), i < 150, "a/{i}: {got:?}");
    }
}
