//! A repository in an S3 bucket (moto, from `.ci/servers.sh`): a conformance case exported into
//! `icechunk+s3://zk-refs/PREFIX` with the bucket's keys, imported back, reads the same bytes as
//! its references; the other bucket's keys are refused. Without the servers the test says so and
//! passes, unless `ZK_REQUIRE_SERVERS` is set, as in CI.
#![cfg(feature = "aws")]

use std::path::Path;
use std::sync::Arc;

use kerchunk_icechunk::{ExportOptions, IcechunkLocation, export, import, version_of};
use zarrs::array::Array;
use zarrs_kerchunk::{AsyncReferenceStore, ReferenceStoreBuilder};

mod common;
use common::bytes_of;

fn var(name: &str) -> Option<String> {
    if let Ok(value) = std::env::var(name) {
        return Some(value);
    }
    assert!(std::env::var_os("ZK_REQUIRE_SERVERS").is_none(), "{name} is not set but ZK_REQUIRE_SERVERS is");
    eprintln!("{name} not set: this test needs `eval \"$(bash .ci/servers.sh start)\"` first; not run");
    None
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_repository_in_s3_round_trips() {
    let Some(endpoint) = var("ZK_S3") else { return };
    let keys = |who: &str| {
        let key = |part: &str| std::env::var(format!("ZK_S3_{who}_{part}")).expect("keys are printed with ZK_S3");
        vec![
            ("aws_endpoint".to_owned(), endpoint.clone()),
            ("aws_allow_http".to_owned(), "true".to_owned()),
            ("aws_region".to_owned(), "us-east-1".to_owned()),
            ("aws_access_key_id".to_owned(), key("KEY")),
            ("aws_secret_access_key".to_owned(), key("SECRET")),
        ]
    };
    let refs = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/data/nc4_deflate_shuffle/refs.json");
    let references = Arc::new(AsyncReferenceStore::open(refs.to_str().unwrap()).await.unwrap());
    let prefix = format!("icechunk-{}", std::process::id());
    let location =
        IcechunkLocation::parse(&format!("icechunk+s3://zk-refs/{prefix}")).unwrap().with_options(keys("REFS"));
    let repository = location.open_or_create().await.unwrap();
    let exported = export(&references, &repository, &location.storage, &ExportOptions::default()).await.unwrap();
    assert_eq!((exported.arrays, exported.virtual_chunks), (5, 45));

    let repository = location.open().await.unwrap();
    let version = version_of(&repository, "main", &location.storage).await.unwrap();
    let storage = location.storage_url().unwrap();
    assert_eq!(storage, format!("s3://zk-refs/{prefix}/"));
    let set = import(&repository, &version, &location.storage, &storage).await.unwrap();
    // A repository in a bucket whose chunks are local files: allowed here on purpose.
    let builder = ReferenceStoreBuilder::new().allow_local_files_from_remote_references(true);
    let imported = Arc::new(builder.build_async(set, &storage).unwrap());
    for path in ["/count", "/idx", "/mask", "/pres", "/temp"] {
        let (ours, theirs) = (
            Array::async_open(Arc::clone(&references), path).await.unwrap(),
            Array::async_open(Arc::clone(&imported), path).await.unwrap(),
        );
        assert!(bytes_of(&ours).await == bytes_of(&theirs).await, "{path}: the bytes differ");
    }
    // The data bucket's keys may not read the refs bucket.
    let other = IcechunkLocation::parse(&format!("icechunk+s3://zk-refs/{prefix}")).unwrap().with_options(keys("DATA"));
    assert!(other.open().await.is_err());
    // An option S3 repositories do not take is named.
    let odd = IcechunkLocation::parse("icechunk+s3://zk-refs/x").unwrap().with_options([("aws_colour", "blue")]);
    let error = odd.open().await.unwrap_err().to_string();
    assert!(error.contains("aws_colour"), "{error}");
}
