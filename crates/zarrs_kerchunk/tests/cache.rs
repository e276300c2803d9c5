//! Reads through the disk cache ([`ReferenceStoreBuilder::with_cache`]) from
//! real servers: nginx (ETags from size and modification time), S3 (moto:
//! content ETags) and an in-test file server without ETags (size and
//! last-modified), each behind a counter of what reaches it. Every value is
//! checked against the case's expected arrays (written by the files' own
//! libraries). A "process" is a new `DiskCache` on the same folder: it
//! knows nothing the last one checked.
//!
//! - the conformance cases read exactly through a cold cache and a warm
//!   one, and the warm one makes no data request (only `HEAD`s, at most one
//!   per object); the reference documents and parquet record files included;
//! - every cached file damaged: still exact, each damaged file discarded and
//!   written again whole;
//! - every file pinned: a warm process reads the targets with no request at all.

#![cfg(all(feature = "http", feature = "aws", feature = "parquet"))]

mod common;
mod plain_http;
mod zk_data;

use std::sync::Arc;
use std::time::Duration;

use common::Case;
use common::faults::{Counted, Faulty};
use common::remote::{read_case, var};
use object_store::{ObjectStore, ObjectStoreExt};
use plain_http::http_store;
use zarrs_kerchunk::{DiskCache, Pin, Pins, ReferenceStoreBuilder};
use zk_data::zk_data;

/// Every case's reference files (JSON and parquet) under `prefix`, read
/// through a new cache process on `dir` over `store` (behind `counted`);
/// the failures.
async fn read_all(prefix: &str, store: &Arc<dyn ObjectStore>, dir: &std::path::Path) -> (Vec<String>, Arc<DiskCache>) {
    read_pinned(prefix, store, dir, None, true).await
}

/// [`read_all`], with `pins`, and the JSON reference files only or the parquet roots too.
async fn read_pinned(
    prefix: &str,
    store: &Arc<dyn ObjectStore>,
    dir: &std::path::Path,
    pins: Option<Pins>,
    parquet: bool,
) -> (Vec<String>, Arc<DiskCache>) {
    let cache = Arc::new(DiskCache::new(dir).unwrap());
    let mut builder = ReferenceStoreBuilder::new()
        .with_store(prefix, Arc::clone(store))
        .with_cache(Arc::clone(&cache))
        .with_read_deadline(Duration::from_secs(30));
    if let Some(pins) = pins {
        builder = builder.with_pins(pins);
    }
    let mut failures = Vec::new();
    for case in Case::all() {
        let parquet_roots = if parquet { case.references(false) } else { Vec::new() };
        for file in case.references(true).into_iter().chain(parquet_roots) {
            let location = format!("{prefix}{}/{file}", case.name);
            failures.extend(read_case(&builder, &case, &location).await.failures());
        }
    }
    (failures, cache)
}

/// The objects the cases hold: the most `HEAD`s a warm process may make.
fn objects() -> u64 {
    Case::all().iter().map(|case| common::files_under(&case.dir).len() as u64).sum()
}

/// Cold, then warm: both exact, and the warm process makes no data request.
async fn cold_then_warm(service: &str, prefix: &str, inner: Arc<dyn ObjectStore>) -> tempfile::TempDir {
    let counted = Arc::new(Counted::default());
    let store: Arc<dyn ObjectStore> = Arc::new(Faulty::new(inner, Arc::clone(&counted)));
    let dir = tempfile::tempdir().unwrap();
    let (failures, _) = read_all(prefix, &store, dir.path()).await;
    assert!(failures.is_empty(), "{service}, cold: {failures:#?}");
    let cold = (counted.heads(), counted.gets());
    let (failures, cache) = read_all(prefix, &store, dir.path()).await;
    assert!(failures.is_empty(), "{service}, warm: {failures:#?}");
    let warm = (counted.heads() - cold.0, counted.gets() - cold.1);
    eprintln!(
        "{service}: cold {} HEAD, {} GET; warm {} HEAD, {} GET; {:?}",
        cold.0,
        cold.1,
        warm.0,
        warm.1,
        cache.stats()
    );
    assert!(cold.1 > 0, "{service}: the cold pass read nothing from the server");
    assert_eq!(warm.1, 0, "{service}: the warm pass made data requests");
    assert!(warm.0 <= objects(), "{service}: {} HEADs for {} objects", warm.0, objects());
    dir
}

fn nginx() -> Option<(String, Arc<dyn ObjectStore>)> {
    let prefix = format!("{}/data/", var("ZK_NGINX")?);
    let http = http_store(&prefix);
    Some((prefix, http))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn nginx_a_warm_read_makes_no_data_request() {
    let Some((prefix, http)) = nginx() else { return };
    cold_then_warm("nginx", &prefix, http).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s3_a_warm_read_makes_no_data_request() {
    let Some(endpoint) = var("ZK_S3") else { return };
    let bucket = zk_data(&endpoint);
    let folder = format!("cache-{}", std::process::id());
    let scoped: Arc<dyn ObjectStore> =
        Arc::new(object_store::prefix::PrefixStore::new(Arc::clone(&bucket), folder.as_str()));
    for case in Case::all() {
        case.upload_to(scoped.as_ref()).await;
    }
    cold_then_warm("S3 (moto)", &format!("s3://zk-data/{folder}/"), scoped).await;
}

/// An in-test file server: no ETags, so versions are sizes and last-modified times.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_without_etags_is_cached_by_size_and_time() {
    let (server, log) = common::server::files_logged();
    let prefix = format!("{server}/files/");
    let http = http_store(&prefix);
    let dir = tempfile::tempdir().unwrap();
    let (failures, _) = read_all(&prefix, &http, dir.path()).await;
    assert!(failures.is_empty(), "cold: {failures:#?}");
    let cold = log.lock().unwrap().len();
    let (failures, _) = read_all(&prefix, &http, dir.path()).await;
    assert!(failures.is_empty(), "warm: {failures:#?}");
    // The server's own log: the warm process asked only for metadata.
    let warm: Vec<_> = log.lock().unwrap()[cold..].to_vec();
    assert!(!warm.is_empty() && warm.iter().all(|(method, _, _)| method == "HEAD"), "{warm:#?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_cached_file_damaged_still_reads_exactly() {
    let Some((prefix, http)) = nginx() else { return };
    let dir = cold_then_warm("nginx", &prefix, Arc::clone(&http)).await;
    let files = common::files_under(&dir.path().join("v1/objects"));
    assert!(files.len() > 50, "{} cached files", files.len());
    for (i, file) in files.iter().enumerate() {
        let mut bytes = std::fs::read(file).unwrap();
        // Each file damaged somewhere else: its header, its body, its end, or cut short.
        match i % 4 {
            0 => bytes[10] ^= 0x01,
            1 => bytes.truncate(bytes.len() - 1),
            2 => {
                let at = bytes.len() / 2;
                bytes[at] = bytes[at].wrapping_add(1);
            }
            _ => {
                let at = bytes.len() - 1;
                bytes[at] ^= 0x80;
            }
        }
        std::fs::write(file, bytes).unwrap();
    }
    let (failures, cache) = read_all(&prefix, &http, dir.path()).await;
    assert!(failures.is_empty(), "damaged: {failures:#?}");
    // Each damaged file found (by two concurrent readers, sometimes twice), and fetched again.
    let stats = cache.stats();
    assert!(stats.discarded >= files.len() as u64 && stats.fetched_ranges > 0, "{stats:?}");
    // Written whole again: the next process finds nothing damaged and fetches nothing.
    let (failures, cache) = read_all(&prefix, &http, dir.path()).await;
    assert!(failures.is_empty(), "after: {failures:#?}");
    let stats = cache.stats();
    assert_eq!((stats.discarded, stats.fetched_ranges), (0, 0), "{stats:?}");
}

/// Every file of the cases pinned (its size, ETag and time, as nginx answers a HEAD for it): a
/// warm process reads the targets with no request at all, and checks only the reference files,
/// which no pin names, with one HEAD each.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn nginx_a_pinned_set_reads_its_targets_warm_with_no_request() {
    let Some((prefix, http)) = nginx() else { return };
    let mut pins = Pins::default();
    let mut documents = 0;
    for case in Case::all() {
        documents += case.references(true).len() as u64;
        for file in common::files_under(&case.dir) {
            let name = format!("{}/{}", case.name, file.strip_prefix(&case.dir).unwrap().display());
            let meta = http.head(&name.as_str().into()).await.unwrap();
            pins.insert(format!("{prefix}{name}"), Pin::new(meta.size, meta.e_tag, Some(meta.last_modified)));
        }
    }
    let counted = Arc::new(Counted::default());
    let store: Arc<dyn ObjectStore> = Arc::new(Faulty::new(http, Arc::clone(&counted)));
    let dir = tempfile::tempdir().unwrap();
    let (failures, _) = read_pinned(&prefix, &store, dir.path(), Some(pins.clone()), false).await;
    assert!(failures.is_empty(), "cold: {failures:#?}");
    let cold = (counted.heads(), counted.gets());
    let (failures, cache) = read_pinned(&prefix, &store, dir.path(), Some(pins), false).await;
    assert!(failures.is_empty(), "warm: {failures:#?}");
    let warm = (counted.heads() - cold.0, counted.gets() - cold.1);
    assert_eq!(warm, (documents, 0), "warm: (HEAD, GET); {:?}", cache.stats());
}
