//! The command line on the real object stores of `.ci/servers.sh`: S3 (moto), Azure (azurite)
//! and GCS (fake-gcs-server behind `.ci/gcs_front.py`), each with two buckets that only their
//! own credentials reach. On each:
//! - `scan 'BUCKET/folder/series?.nc' --concat time` matches the pattern against the bucket's
//!   listing, scans the files with ranged reads, and the combined references read the series;
//! - `pin` records each target's ETag, `audit --pins` finds them unchanged, and once one file is
//!   rewritten in place (same size, one byte changed) `audit` reports it changed and `cat`
//!   refuses it, naming what changed;
//! - the other bucket's credentials are refused with the service's 403, named, listing and reading.
//!
//! Without the servers the tests say so and pass, unless `ZK_REQUIRE_SERVERS` is set, as in CI.
#![cfg(feature = "cli")]

mod cli_support;
#[path = "../../zarrs_kerchunk/tests/common/mod.rs"]
mod common;

use std::path::Path;
use std::sync::Arc;

use cli_support::{assert_one_line_error, native_values, run};
use object_store::{ClientOptions, ObjectStore, ObjectStoreExt};

/// A real server's variable (printed by `.ci/servers.sh start`), or `None` and a note; a
/// missing one fails when `ZK_REQUIRE_SERVERS` is set (CI).
fn server_var(name: &str) -> Option<String> {
    if let Ok(value) = std::env::var(name) {
        return Some(value);
    }
    assert!(std::env::var_os("ZK_REQUIRE_SERVERS").is_none(), "{name} is not set but ZK_REQUIRE_SERVERS is");
    eprintln!("{name} not set: this test needs `eval \"$(bash .ci/servers.sh start)\"` first; not run");
    None
}

/// A service's data bucket: its URL, the command line's options that reach it, the options
/// of the other bucket's credentials, and a client to write to it.
struct Bucket {
    url: &'static str,
    options: Vec<String>,
    wrong_options: Vec<String>,
    store: Arc<dyn ObjectStore>,
}

fn s3() -> Option<Bucket> {
    let endpoint = server_var("ZK_S3")?;
    let keys = |who: &str| {
        (server_var(&format!("ZK_S3_{who}_KEY")).unwrap(), server_var(&format!("ZK_S3_{who}_SECRET")).unwrap())
    };
    let options = |(key, secret): (String, String)| {
        vec![
            format!("aws_endpoint={endpoint}"),
            "aws_allow_http=true".to_owned(),
            "aws_region=us-east-1".to_owned(),
            format!("aws_access_key_id={key}"),
            format!("aws_secret_access_key={secret}"),
        ]
    };
    let (key, secret) = keys("DATA");
    let store = object_store::aws::AmazonS3Builder::new()
        .with_endpoint(&endpoint)
        .with_allow_http(true)
        .with_region("us-east-1")
        .with_bucket_name("zk-data")
        .with_access_key_id(&key)
        .with_secret_access_key(&secret)
        .build()
        .unwrap();
    Some(Bucket {
        url: "s3://zk-data",
        options: options((key, secret)),
        wrong_options: options(keys("REFS")),
        store: Arc::new(store),
    })
}

fn azure() -> Option<Bucket> {
    let endpoint = server_var("ZK_AZURE")?;
    let accounts = server_var("ZK_AZURE_KEYS").unwrap();
    let accounts: Vec<(&str, &str)> = accounts.split(',').filter_map(|pair| pair.split_once(':')).collect();
    // zk-data is a container of the second account.
    let (account, key) = accounts[1];
    let options = |key: &str| {
        vec![
            format!("azure_storage_account_name={account}"),
            format!("azure_storage_account_key={key}"),
            format!("azure_storage_endpoint={endpoint}/{account}"),
            "azure_allow_http=true".to_owned(),
        ]
    };
    let store = object_store::azure::MicrosoftAzureBuilder::new()
        .with_account(account)
        .with_access_key(key)
        .with_container_name("zk-data")
        .with_endpoint(format!("{endpoint}/{account}"))
        .with_allow_http(true)
        .build()
        .unwrap();
    Some(Bucket {
        url: "az://zk-data",
        options: options(key),
        wrong_options: options(accounts[0].1),
        store: Arc::new(store),
    })
}

fn gcs() -> Option<Bucket> {
    server_var("ZK_GCS")?;
    let account = |who: &str| server_var(&format!("ZK_GCS_{who}_ACCOUNT")).unwrap();
    // The key files name the server (`gcs_base_url`), as a service account's file may.
    let store = object_store::gcp::GoogleCloudStorageBuilder::new()
        .with_service_account_path(account("DATA"))
        .with_bucket_name("zk-data")
        .with_client_options(ClientOptions::new().with_allow_http(true))
        .build()
        .unwrap();
    Some(Bucket {
        url: "gs://zk-data",
        options: vec![format!("google_service_account={}", account("DATA"))],
        wrong_options: vec![format!("google_service_account={}", account("REFS"))],
        store: Arc::new(store),
    })
}

/// The command line with `args`, then `--option` for each of `options`.
fn run_with(args: &[&str], options: &[String]) -> (i32, String, String) {
    let mut all: Vec<&str> = args.to_vec();
    for option in options {
        all.extend(["--option", option.as_str()]);
    }
    run(&all)
}

fn scan_pin_and_audit(service: &str, bucket: &Bucket) {
    let folder = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/scan/hdf5");
    let prefix = format!("cli-{}", std::process::id());
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let put = |file: &str, bytes: Vec<u8>| {
        let path = object_store::path::Path::from(format!("{prefix}/{file}"));
        runtime.block_on(bucket.store.put(&path, bytes.into())).unwrap();
    };
    for file in ["series0.nc", "series1.nc", "series2.nc", "netcdf4.nc"] {
        put(file, std::fs::read(folder.join(file)).unwrap());
    }
    let scratch = tempfile::tempdir().unwrap();
    let refs = scratch.path().join("series.json");
    let refs = refs.to_str().unwrap();
    let pattern = format!("{}/{prefix}/series?.nc", bucket.url);
    let scan = ["scan", &pattern, "--concat", "time", "-o", refs, "--url-templates", "--inline-threshold", "0"];
    let (code, _, stderr) = run_with(&scan, &bucket.options);
    assert_eq!(code, 0, "{service}: {stderr}");
    assert!(stderr.contains("references to 3 file(s) written"), "{service}: {stderr}");
    let document: serde_json::Value = serde_json::from_slice(&std::fs::read(refs).unwrap()).unwrap();
    assert_eq!(document["templates"]["u0"], format!("{}/{prefix}/series0.nc", bucket.url));
    let npy = scratch.path().join("temp.npy");
    let cat = ["cat", refs, "temp", "--raw", "--npy", npy.to_str().unwrap()];
    let (code, _, stderr) = run_with(&cat, &bucket.options);
    assert_eq!(code, 0, "{service}: {stderr}");
    assert_eq!(native_values(&npy), native_values(&folder.join("series.temp.npy")), "{service}");

    // Pinned, the targets audit unchanged, with their ETags recorded.
    let pins = format!("{refs}.pins.json");
    let (code, stdout, stderr) = run_with(&["pin", refs], &bucket.options);
    assert_eq!((code, stdout), (0, format!("pinned 3 of 3 targets in {pins}\n")), "{service}: {stderr}");
    let pinned: serde_json::Value = serde_json::from_slice(&std::fs::read(&pins).unwrap()).unwrap();
    let changed_url = format!("{}/{prefix}/series1.nc", bucket.url);
    assert!(pinned.to_string().contains(&changed_url), "{service}: {pinned}");
    assert!(pinned.to_string().contains("\"etag\""), "{service}: {pinned}");
    let (code, stdout, stderr) = run_with(&["audit", refs, "--pins", &pins], &bucket.options);
    assert_eq!((code, stdout.as_str()), (0, "3 targets: 3 ok\n"), "{service}: {stderr}");

    // One file rewritten in place, its size kept: caught by its ETag.
    let mut bytes = std::fs::read(folder.join("series1.nc")).unwrap();
    let last = bytes.len() - 1;
    bytes[last] ^= 0xff;
    put("series1.nc", bytes);
    let (code, stdout, stderr) = run_with(&["audit", refs, "--pins", &pins], &bucket.options);
    assert_eq!(code, 1, "{service}: {stdout} {stderr}");
    assert!(stdout.contains(&format!("changed: {changed_url}")) && stdout.contains("1 changed"), "{service}: {stdout}");
    let (code, _, stderr) = run_with(&["cat", refs, "temp", "--pins", &pins], &bucket.options);
    assert_one_line_error(code, &stderr);
    for part in ["cannot read key", "temp/", &changed_url, "changed since it was pinned", "pinned ", "found "] {
        assert!(stderr.contains(part), "{service}: {part:?} not in {stderr}");
    }

    // The other bucket's credentials: the listing's 403, naming what was listed; a read's, naming
    // the target (object_store types a read's 403, not a listing's).
    let (code, _, stderr) = run_with(&scan, &bucket.wrong_options);
    assert_one_line_error(code, &stderr);
    let listed = format!("cannot list \"{}/{prefix}/\" for {pattern}: ", bucket.url);
    assert!(stderr.contains(&listed) && stderr.contains("403 Forbidden"), "{service}: {stderr}");
    let (code, _, stderr) = run_with(&["cat", refs, "temp"], &bucket.wrong_options);
    assert_one_line_error(code, &stderr);
    assert!(stderr.contains(&format!("{}/{prefix}/series", bucket.url)), "{service}: {stderr}");
    assert!(
        stderr.contains("lacked the necessary privileges") && stderr.contains("403 Forbidden"),
        "{service}: {stderr}"
    );
}

#[test]
fn s3_moto() {
    let Some(bucket) = s3() else { return };
    scan_pin_and_audit("S3 (moto)", &bucket);
}

#[test]
fn azure_azurite() {
    let Some(bucket) = azure() else { return };
    scan_pin_and_audit("Azure (azurite)", &bucket);
}

#[test]
fn gcs_fake_gcs_server() {
    let Some(bucket) = gcs() else { return };
    scan_pin_and_audit("GCS (fake-gcs-server)", &bucket);
}
