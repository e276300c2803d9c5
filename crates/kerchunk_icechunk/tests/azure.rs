//! A repository in an Azure container (azurite, from `.ci/servers.sh`): a conformance case
//! exported into `icechunk+az://zk-refs/PREFIX` with the container's account and key, imported
//! back, reads the same bytes as its references; the other account's key is refused, and an
//! option Azure does not take is named. Without the servers the test says so and passes, unless
//! `ZK_REQUIRE_SERVERS` is set, as in CI.
#![cfg(feature = "azure")]

use kerchunk_icechunk::IcechunkLocation;

mod common;
use common::{round_trip, var};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_repository_in_azure_round_trips() {
    let Some(endpoint) = var("ZK_AZURE") else { return };
    let accounts = std::env::var("ZK_AZURE_KEYS").expect("keys are printed with ZK_AZURE");
    let accounts: Vec<(&str, &str)> = accounts.split(',').filter_map(|pair| pair.split_once(':')).collect();
    // zk-refs is a container of the first account.
    let (account, _) = accounts[0];
    let options = |(_, key): (&str, &str)| {
        vec![
            ("azure_storage_account_name".to_owned(), account.to_owned()),
            ("azure_storage_account_key".to_owned(), key.to_owned()),
            ("azure_storage_endpoint".to_owned(), format!("{endpoint}/{account}")),
            ("azure_allow_http".to_owned(), "true".to_owned()),
        ]
    };
    let prefix = format!("icechunk-{}", std::process::id());
    let place = format!("icechunk+az://zk-refs/{prefix}");
    let location = IcechunkLocation::parse(&place).unwrap().with_options(options(accounts[0]));
    round_trip(&location, &format!("az://zk-refs/{prefix}/")).await;
    // The other account's key does not sign for this one.
    let other = IcechunkLocation::parse(&place).unwrap().with_options(options(accounts[1]));
    // Refused as the store refuses it (403), naming the repository: never "not found", which
    // would send a writer on to create one.
    let error = other.open().await.map(|_| ()).unwrap_err().to_string();
    let repository = format!("the icechunk repository az://zk-refs/{prefix}: ");
    assert!(
        error.starts_with(&repository) && error.contains("lacked the necessary privileges") && error.contains("403"),
        "{error}"
    );
    // An option Azure repositories do not take is named, as is a missing account.
    let odd = IcechunkLocation::parse("icechunk+az://zk-refs/x").unwrap().with_options([("azure_colour", "blue")]);
    let error = odd.open().await.unwrap_err().to_string();
    assert!(error.contains("azure_colour"), "{error}");
    let error = IcechunkLocation::parse("icechunk+az://zk-refs/x").unwrap().open().await.unwrap_err().to_string();
    assert!(error.contains("azure_storage_account_name"), "{error}");
}
