//! The conformance cases read from real servers: nginx, S3 (moto), Azure
//! (azurite) and GCS (fake-gcs-server, behind `.ci/gcs_front.py`, which checks
//! service accounts' tokens as GCS does), started by `.ci/servers.sh`
//! (which `.ci/run` calls), found through the `ZK_*` variables it prints.
//! Without them the tests say so and pass, unless `ZK_REQUIRE_SERVERS` is
//! set, as in CI, where a missing server fails.
//!
//! On each object store:
//! - every case, reference file and targets in one bucket (relative URLs),
//!   reads exactly, sync and async;
//! - with the reference files in one bucket and the targets in another,
//!   each with its own credentials (two buckets, two sets of keys), the
//!   JSON cases read exactly, and the wrong keys are refused;
//! - a missing reference file is `OpenError::NotFound`, and a missing target an
//!   error naming the key, the URL and the cause;
//! - every fault of tests/common/faults, over the real client, returns
//!   exact bytes or an error, never wrong bytes.

#![cfg(all(feature = "http", feature = "aws", feature = "azure", feature = "gcp"))]

mod common;
mod plain_http;

use std::sync::Arc;
use std::time::Duration;

use common::Case;
use common::faults::{
    Changing, Fault, Faulty, IgnoresRange, Latency, Reset, ServerErrors, ShortBody, Stall, deadline_for,
};
use common::remote::{read_case, read_one, var};
use object_store::aws::AmazonS3Builder;
use object_store::azure::MicrosoftAzureBuilder;
use object_store::gcp::GoogleCloudStorageBuilder;
use object_store::{ClientOptions, ObjectStore, ObjectStoreExt, PutPayload};
use plain_http::http_store;
use serde_json::Value;
use zarrs_kerchunk::{OpenError, ReadError, ReferenceStoreBuilder};

/// Two buckets of one service: `refs` for reference files, `data` for targets.
struct Buckets {
    service: &'static str,
    refs: (String, Arc<dyn ObjectStore>),
    data: (String, Arc<dyn ObjectStore>),
    /// The refs bucket, reached with the data bucket's credentials.
    refs_with_wrong_keys: Option<Arc<dyn ObjectStore>>,
}

fn s3() -> Option<Buckets> {
    let endpoint = var("ZK_S3")?;
    let bucket = |name: &str, who: &str| -> Arc<dyn ObjectStore> {
        let key = |part: &str| var(&format!("ZK_S3_{who}_{part}")).expect("keys are printed with ZK_S3");
        Arc::new(
            AmazonS3Builder::new()
                .with_endpoint(&endpoint)
                .with_allow_http(true)
                .with_region("us-east-1")
                .with_bucket_name(name)
                .with_access_key_id(key("KEY"))
                .with_secret_access_key(key("SECRET"))
                .build()
                .unwrap(),
        )
    };
    Some(Buckets {
        service: "S3 (moto)",
        refs: ("s3://zk-refs/".into(), bucket("zk-refs", "REFS")),
        data: ("s3://zk-data/".into(), bucket("zk-data", "DATA")),
        refs_with_wrong_keys: Some(bucket("zk-refs", "DATA")),
    })
}

fn azure() -> Option<Buckets> {
    let endpoint = var("ZK_AZURE")?;
    let keys = var("ZK_AZURE_KEYS")?;
    let accounts: Vec<(&str, &str)> = keys.split(',').map(|pair| pair.split_once(':').unwrap()).collect();
    let container = |name: &str, (account, _): (&str, &str), (_, key): (&str, &str)| -> Arc<dyn ObjectStore> {
        Arc::new(
            MicrosoftAzureBuilder::new()
                .with_account(account)
                .with_access_key(key)
                .with_container_name(name)
                .with_endpoint(format!("{endpoint}/{account}"))
                .with_allow_http(true)
                .build()
                .unwrap(),
        )
    };
    Some(Buckets {
        service: "Azure (azurite)",
        refs: ("az://zk-refs/".into(), container("zk-refs", accounts[0], accounts[0])),
        data: ("az://zk-data/".into(), container("zk-data", accounts[1], accounts[1])),
        refs_with_wrong_keys: Some(container("zk-refs", accounts[0], accounts[1])),
    })
}

/// Two buckets, each readable by its own service account only; the key files name the server
/// (`gcs_base_url`), as `.ci/servers.sh` writes them.
fn gcs() -> Option<Buckets> {
    var("ZK_GCS")?;
    let bucket = |name: &str, who: &str| -> Arc<dyn ObjectStore> {
        let account = var(&format!("ZK_GCS_{who}_ACCOUNT")).expect("key files are printed with ZK_GCS");
        Arc::new(
            GoogleCloudStorageBuilder::new()
                .with_service_account_path(account)
                .with_bucket_name(name)
                .with_client_options(ClientOptions::new().with_allow_http(true))
                .build()
                .unwrap(),
        )
    };
    Some(Buckets {
        service: "GCS (fake-gcs-server)",
        refs: ("gs://zk-refs/".into(), bucket("zk-refs", "REFS")),
        data: ("gs://zk-data/".into(), bucket("zk-data", "DATA")),
        refs_with_wrong_keys: Some(bucket("zk-refs", "DATA")),
    })
}

/// A version 0 document's relative URLs made absolute, under `base`.
fn absolute(document: &[u8], base: &str) -> Option<Vec<u8>> {
    let mut value: Value = serde_json::from_slice(document).ok()?;
    if value.get("templates").is_some() || value.get("gen").is_some() {
        return None;
    }
    // Version 1 keeps them under "refs"; version 0 is the references themselves.
    let refs = if value.get("refs").is_some() { value.get_mut("refs")? } else { &mut value }.as_object_mut()?;
    for reference in refs.values_mut() {
        if let Some(Value::String(url)) = reference.as_array_mut().and_then(|r| r.first_mut())
            && !url.contains("://")
        {
            *url = format!("{base}{url}");
        }
    }
    Some(serde_json::to_vec(&value).unwrap())
}

fn builder(buckets: &Buckets) -> ReferenceStoreBuilder {
    ReferenceStoreBuilder::new()
        .with_store(&buckets.refs.0, Arc::clone(&buckets.refs.1))
        .with_store(&buckets.data.0, Arc::clone(&buckets.data.1))
        .with_read_deadline(Duration::from_secs(30))
}

async fn conformance_on(buckets: Buckets) {
    let mut failures = Vec::new();
    let mut read = 0;
    for case in Case::all() {
        case.upload_to(buckets.refs.1.as_ref()).await;
        case.upload_to(buckets.data.1.as_ref()).await;
        // Everything in one bucket, relative URLs.
        for file in case.references(true).into_iter().chain(case.references(false)) {
            let location = format!("{}{}/{file}", buckets.refs.0, case.name);
            failures.extend(read_case(&builder(&buckets), &case, &location).await.failures());
            read += 1;
        }
        // References in one bucket, targets in the other, each with its own keys.
        for file in case.references(true) {
            let document = std::fs::read(case.dir.join(&file)).unwrap();
            let Some(cross) = absolute(&document, &format!("{}{}/", buckets.data.0, case.name)) else { continue };
            let path = format!("{}/cross-{file}", case.name);
            buckets.refs.1.put(&path.as_str().into(), PutPayload::from(cross)).await.unwrap();
            failures
                .extend(read_case(&builder(&buckets), &case, &format!("{}{path}", buckets.refs.0)).await.failures());
            read += 1;
        }
    }
    if let Some(wrong) = &buckets.refs_with_wrong_keys {
        let case = &Case::all()[0];
        let file = &case.references(true)[0];
        let location = format!("{}{}/{file}", buckets.refs.0, case.name);
        let refused =
            ReferenceStoreBuilder::new().with_store(&buckets.refs.0, Arc::clone(wrong)).open_async(&location).await;
        let error = refused.expect_err("the refs bucket must refuse the data bucket's keys");
        eprintln!("{}: the other bucket's keys are refused: {error}", buckets.service);
        // The service's 403, as object_store types it, under the reference file's location.
        match &error {
            OpenError::Read { location: at, source: ReadError::ObjectStore(why) } => {
                assert_eq!(at, &location);
                assert!(matches!(**why, object_store::Error::PermissionDenied { .. }), "{why:?}");
            }
            other => panic!("{}: expected a permission error reading {location}, got {other:?}", buckets.service),
        }
    }
    missing_on(&buckets).await;
    eprintln!("{}: {read} reference files read, sync and async, {} failures", buckets.service, failures.len());
    assert!(failures.is_empty(), "{}: {failures:#?}", buckets.service);
}

/// A reference file that is not there is `NotFound`, at its location; a reference to a target
/// that is not there is an error naming the key, the target's URL and the cause, sync and async.
async fn missing_on(buckets: &Buckets) {
    let location = format!("{}missing/nothing.json", buckets.refs.0);
    match builder(buckets).open_async(&location).await.map(|_| ()) {
        Err(OpenError::NotFound { location: at, .. }) => assert_eq!(at, location),
        other => panic!("{}: expected NotFound opening {location}, got {other:?}", buckets.service),
    }
    let target = format!("{}missing/nothing.nc", buckets.data.0);
    let document = format!(r#"{{"version": 1, "refs": {{"r": ["{target}", 0, 100]}}}}"#);
    let location = format!("{}missing/refs.json", buckets.refs.0);
    buckets.refs.1.put(&"missing/refs.json".into(), PutPayload::from(document.into_bytes())).await.unwrap();
    let store = builder(buckets).open_async(&location).await.unwrap();
    let key = zarrs_storage::StoreKey::new("r").unwrap();
    let error = zarrs_storage::AsyncReadableStorageTraits::get(&store, &key).await.unwrap_err().to_string();
    assert!(error.contains("\"r\"") && error.contains(&target) && error.contains("not found"), "{error}");
    let sync = builder(buckets);
    let error = tokio::task::spawn_blocking(move || {
        let store = sync.open(&location).unwrap();
        zarrs_storage::ReadableStorageTraits::get(&store, &key).unwrap_err().to_string()
    })
    .await
    .unwrap();
    assert!(error.contains("\"r\"") && error.contains(&target) && error.contains("not found"), "{error}");
    eprintln!("{}: a missing target is refused: {error}", buckets.service);
}

/// The cases of the fault table: small, and between them JSON and parquet.
fn fault_cases() -> Vec<Case> {
    Case::all()
        .into_iter()
        .filter(|c| ["hdf5_nested_groups", "nc4_deflate_shuffle", "parquet_fastparquet"].contains(&c.name.as_str()))
        .collect()
}

/// Every array of the fault cases through a fresh `fault()` over `store`
/// (at `prefix`), sync and async: (exact, errors, wrong). A writable store
/// gets the original files back before each run, as a fault may rewrite them.
async fn through<F: Fault>(
    prefix: &str,
    store: &Arc<dyn ObjectStore>,
    writable: bool,
    fault: impl Fn() -> F,
) -> (usize, usize, Vec<String>) {
    let (mut exact, mut errors, mut wrong) = (0, 0, Vec::new());
    for case in fault_cases() {
        for file in case.references(true).into_iter().chain(case.references(false)) {
            for sync in [true, false] {
                if writable {
                    case.upload_to(store.as_ref()).await;
                }
                let fault = fault();
                let deadline = deadline_for(&fault);
                let faulty: Arc<dyn ObjectStore> = Arc::new(Faulty::new(Arc::clone(store), fault));
                let builder = ReferenceStoreBuilder::new().with_store(prefix, faulty).with_read_deadline(deadline);
                let location = format!("{prefix}{}/{file}", case.name);
                let reads = read_one(&builder, &case, &location, sync).await;
                exact += case.arrays().len().saturating_sub(reads.errors.len() + reads.wrong.len());
                errors += reads.errors.len();
                wrong.extend(reads.wrong);
            }
        }
    }
    (exact, errors, wrong)
}

async fn faults_on(service: &str, prefix: &str, store: Arc<dyn ObjectStore>, writable: bool) {
    let mut rows = vec![
        ("latency", through(prefix, &store, writable, || Latency(Duration::from_millis(2))).await),
        ("5xx bursts", through(prefix, &store, writable, || ServerErrors { every: 5, burst: 2 }).await),
        ("reset", through(prefix, &store, writable, || Reset).await),
        ("stall", through(prefix, &store, writable, || Stall { every: 9 }).await),
        ("short body", through(prefix, &store, writable, || ShortBody).await),
        ("ignores Range", through(prefix, &store, writable, || IgnoresRange).await),
    ];
    if writable {
        rows.push(("changing ETag", through(prefix, &store, writable, Changing::default).await));
    }
    for (fault, (exact, errors, wrong)) in &rows {
        eprintln!("{service:<28} {fault:<14}: {exact} exact, {errors} errors, {} wrong", wrong.len());
        assert!(wrong.is_empty(), "{service} {fault}: {wrong:#?}");
    }
    assert_eq!(rows[0].1.1, 0, "{service}: latency alone caused errors");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s3_moto() {
    let Some(buckets) = s3() else { return };
    let (prefix, store) = buckets.refs.clone();
    conformance_on(buckets).await;
    faults_on("S3 (moto)", &prefix, store, true).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn azure_azurite() {
    let Some(buckets) = azure() else { return };
    let (prefix, store) = buckets.refs.clone();
    conformance_on(buckets).await;
    faults_on("Azure (azurite)", &prefix, store, true).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn gcs_fake_gcs_server() {
    let Some(buckets) = gcs() else { return };
    let (prefix, store) = buckets.refs.clone();
    conformance_on(buckets).await;
    faults_on("GCS (fake-gcs-server)", &prefix, store, true).await;
}

/// nginx serves tests/data read-only: the cases read over plain HTTP, the
/// faults over its client (all but a changing target, which needs writes),
/// and a location that ignores Range gives errors, not wrong bytes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn nginx() {
    let Some(server) = var("ZK_NGINX") else { return };
    let mut failures = Vec::new();
    for case in Case::all() {
        for file in case.references(true).into_iter().chain(case.references(false)) {
            let location = format!("{server}/data/{}/{file}", case.name);
            failures.extend(read_case(&ReferenceStoreBuilder::new(), &case, &location).await.failures());
        }
    }
    assert!(failures.is_empty(), "nginx: {failures:#?}");
    let prefix = format!("{server}/data/");
    faults_on("nginx", &prefix, http_store(&prefix), false).await;
    // A location that ignores Range: errors, never wrong bytes.
    let (mut errors, mut wrong) = (0, Vec::new());
    for case in fault_cases() {
        for file in case.references(true) {
            let location = format!("{server}/norange/{}/{file}", case.name);
            let reads = read_case(&ReferenceStoreBuilder::new(), &case, &location).await;
            errors += reads.errors.len();
            wrong.extend(reads.wrong);
        }
    }
    eprintln!("nginx max_ranges 0: {errors} errors, {} wrong", wrong.len());
    assert!(wrong.is_empty() && errors > 0, "{wrong:#?}");
}
