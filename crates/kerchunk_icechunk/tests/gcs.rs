//! A repository in a GCS bucket (fake-gcs-server behind `.ci/gcs_front.py`, from
//! `.ci/servers.sh`): a conformance case exported into `icechunk+gs://zk-refs/PREFIX` with the
//! bucket's service account, imported back, reads the same bytes as its references; the other
//! bucket's account is refused, and an option GCS does not take is named. Without the servers
//! the test says so and passes, unless `ZK_REQUIRE_SERVERS` is set, as in CI.
#![cfg(feature = "gcp")]

use kerchunk_icechunk::IcechunkLocation;

mod common;
use common::{round_trip, var};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_repository_in_gcs_round_trips() {
    let Some(server) = var("ZK_GCS") else { return };
    // The key files name the server (`gcs_base_url`); the base URL is given too, as a user
    // pointing icechunk at another endpoint would, with the client's leave to use HTTP.
    let account = |who: &str| {
        let path = std::env::var(format!("ZK_GCS_{who}_ACCOUNT")).expect("key files are printed with ZK_GCS");
        vec![
            ("google_service_account".to_owned(), path),
            ("google_base_url".to_owned(), server.clone()),
            ("google_allow_http".to_owned(), "true".to_owned()),
        ]
    };
    let prefix = format!("icechunk-{}", std::process::id());
    let place = format!("icechunk+gs://zk-refs/{prefix}");
    let location = IcechunkLocation::parse(&place).unwrap().with_options(account("REFS"));
    round_trip(&location, &format!("gs://zk-refs/{prefix}/")).await;
    // The data bucket's account may not read the refs bucket: refused as the store refuses it
    // (403), naming the repository, never "not found", which would send a writer on to create one.
    let other = IcechunkLocation::parse(&place).unwrap().with_options(account("DATA"));
    let error = other.open().await.map(|_| ()).unwrap_err().to_string();
    let repository = format!("the icechunk repository gs://zk-refs/{prefix}: ");
    assert!(
        error.starts_with(&repository) && error.contains("lacked the necessary privileges") && error.contains("403"),
        "{error}"
    );
    // An option GCS repositories do not take is named, and so is a bucket given twice.
    let odd = IcechunkLocation::parse("icechunk+gs://zk-refs/x").unwrap().with_options([("google_colour", "blue")]);
    let error = odd.open().await.unwrap_err().to_string();
    assert!(error.contains("the option google_colour is not one a GCS repository takes"), "{error}");
    let twice =
        IcechunkLocation::parse("icechunk+gs://zk-refs/x").unwrap().with_options([("google_bucket", "zk-data")]);
    let error = twice.open().await.unwrap_err().to_string();
    assert!(error.contains("google_bucket") && error.contains("its URL names the bucket"), "{error}");
}
