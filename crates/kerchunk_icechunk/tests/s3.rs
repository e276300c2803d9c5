//! A repository in an S3 bucket (moto, from `.ci/servers.sh`): a conformance case exported into
//! `icechunk+s3://zk-refs/PREFIX` with the bucket's keys, imported back, reads the same bytes as
//! its references; the other bucket's keys are refused. Without the servers the test says so and
//! passes, unless `ZK_REQUIRE_SERVERS` is set, as in CI.
#![cfg(feature = "aws")]

use kerchunk_icechunk::IcechunkLocation;

mod common;
use common::{round_trip, var};

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
    let prefix = format!("icechunk-{}", std::process::id());
    let location =
        IcechunkLocation::parse(&format!("icechunk+s3://zk-refs/{prefix}")).unwrap().with_options(keys("REFS"));
    round_trip(&location, &format!("s3://zk-refs/{prefix}/")).await;
    // The data bucket's keys may not read the refs bucket.
    let other = IcechunkLocation::parse(&format!("icechunk+s3://zk-refs/{prefix}")).unwrap().with_options(keys("DATA"));
    // Refused as the store refuses it (403), naming the repository: never "not found", which
    // would send a writer on to create one.
    let error = other.open().await.map(|_| ()).unwrap_err().to_string();
    let repository = format!("the icechunk repository s3://zk-refs/{prefix}: ");
    assert!(
        error.starts_with(&repository) && error.contains("lacked the necessary privileges") && error.contains("403"),
        "{error}"
    );
    // An option S3 repositories do not take is named.
    let odd = IcechunkLocation::parse("icechunk+s3://zk-refs/x").unwrap().with_options([("aws_colour", "blue")]);
    let error = odd.open().await.unwrap_err().to_string();
    assert!(error.contains("aws_colour"), "{error}");
}
