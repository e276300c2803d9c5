//! Temporary S3 credentials from a credentials endpoint, as NASA's DAACs hand
//! them out (issue 54): `.ci/earthdata.py` answers a bearer token with
//! moto's temporary keys for a role that reads zk-data (moto checks their
//! session token on every request), announcing them valid for two seconds.
//!
//! - the conformance cases, read from zk-data with those credentials over
//!   several of their lifetimes, read exactly, and the endpoint hands out
//!   new credentials as the old ones expire;
//! - with no token, a `.netrc` login through Earthdata Login's redirects gets them;
//! - a wrong token is an error naming the endpoint and "access denied",
//!   never a missing chunk or a fill value, and the token is in no error.

#![cfg(all(feature = "http", feature = "aws"))]

mod common;
mod plain_http;
mod zk_data;

use std::sync::Arc;
use std::time::{Duration, Instant};

use common::Case;
use common::remote::{read_case, var};
use object_store::prefix::PrefixStore;
use plain_http::get_json;
use zarrs_kerchunk::{HttpCredentials, ReferenceStoreBuilder, S3CredentialsEndpoint};
use zk_data::zk_data;

/// The endpoint's URL, its token, and S3's endpoint; `None` without the servers.
fn servers() -> Option<(String, String, String)> {
    Some((var("ZK_S3CREDENTIALS")?, var("ZK_EARTHDATA_TOKEN")?, var("ZK_S3")?))
}

/// The cases in zk-data under `folder`, put there with the bucket's own (permanent) keys.
async fn upload(s3: &str, folder: &str) {
    let scoped = PrefixStore::new(zk_data(s3), folder);
    for case in Case::all() {
        case.upload_to(&scoped).await;
    }
}

/// A builder for zk-data signed with the endpoint's credentials (`lifetime` seconds each).
fn builder(s3: &str, endpoint: &str, token: &str, lifetime: u64) -> ReferenceStoreBuilder {
    let url = endpoint.replace("/s3credentials", &format!("/lifetime-{lifetime}/s3credentials"));
    let provider = Arc::new(S3CredentialsEndpoint::new(&url, Some(token)).unwrap());
    ReferenceStoreBuilder::new()
        .with_option("aws_endpoint", s3)
        .with_option("aws_allow_http", "true")
        .with_option("aws_region", "us-east-1")
        .with_s3_credentials("s3://zk-data/", provider)
        .with_read_deadline(Duration::from_secs(30))
}

/// How many credentials the endpoint handed out so far.
async fn handed_out(endpoint: &str) -> u64 {
    get_json(endpoint, "__stats").await["credentials"].as_u64().unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn credentials_that_expire_during_a_long_read_are_renewed_and_nothing_is_lost() {
    let Some((endpoint, token, s3)) = servers() else { return };
    let folder = format!("s3credentials-{}", std::process::id());
    upload(&s3, &folder).await;
    let before = handed_out(&endpoint).await;
    // One builder, one provider: its credentials, announced for 2 s, are renewed in the last half second.
    let builder = builder(&s3, &endpoint, &token, 2);
    let started = Instant::now();
    let mut passes = 0;
    while started.elapsed() < Duration::from_secs(5) || passes < 2 {
        let mut failures = Vec::new();
        for case in Case::all() {
            for file in case.references(true) {
                let location = format!("s3://zk-data/{folder}/{}/{file}", case.name);
                failures.extend(read_case(&builder, &case, &location).await.failures());
            }
        }
        assert!(failures.is_empty(), "pass {passes}: {failures:#?}");
        passes += 1;
    }
    let renewed = handed_out(&endpoint).await - before;
    eprintln!("{passes} passes over {:?}: {renewed} credentials handed out", started.elapsed());
    assert!(renewed >= 3, "{renewed} credentials over {:?}: not renewed as they expired", started.elapsed());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_wrong_token_is_access_denied_naming_the_endpoint_never_a_fill_value() {
    let Some((endpoint, token, s3)) = servers() else { return };
    let folder = format!("s3credentials-wrong-{}", std::process::id());
    upload(&s3, &folder).await;
    let case = Case::all().into_iter().find(|case| case.name == "netcdf3_classic").unwrap();
    let location = format!("s3://zk-data/{folder}/{}/{}", case.name, case.references(true)[0]);
    let reads = read_case(&builder(&s3, &endpoint, "not-the-token", 3600), &case, &location).await;
    assert!(reads.wrong.is_empty(), "{:#?}", reads.wrong);
    assert!(!reads.errors.is_empty(), "a refused token read something");
    for error in &reads.errors {
        assert!(error.contains(&endpoint.replace("/s3credentials", "/lifetime-3600/s3credentials")), "{error}");
        assert!(
            error.contains("access denied") && !error.contains("not-the-token") && !error.contains(&token),
            "{error}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_no_token_a_netrc_login_through_the_login_host_gets_the_keys() {
    let Some((endpoint, _, s3)) = servers() else { return };
    let (Some(user), Some(password)) = (var("ZK_EARTHDATA_USER"), var("ZK_EARTHDATA_PASSWORD")) else { return };
    let folder = format!("s3credentials-netrc-{}", std::process::id());
    upload(&s3, &folder).await;
    let home = tempfile::tempdir().unwrap();
    let netrc = home.path().join(".netrc");
    std::fs::write(&netrc, format!("machine 127.0.0.2 login {user} password {password}\n")).unwrap();
    let before = handed_out(&endpoint).await;
    let login = HttpCredentials::new().with_netrc_file(&netrc).unwrap();
    let provider = Arc::new(S3CredentialsEndpoint::with_http_credentials(&endpoint, login).unwrap());
    let builder = ReferenceStoreBuilder::new()
        .with_option("aws_endpoint", &s3)
        .with_option("aws_allow_http", "true")
        .with_option("aws_region", "us-east-1")
        .with_s3_credentials("s3://zk-data/", provider);
    let case = Case::all().into_iter().find(|case| case.name == "netcdf3_classic").unwrap();
    let location = format!("s3://zk-data/{folder}/{}/{}", case.name, case.references(true)[0]);
    let failures = read_case(&builder, &case, &location).await.failures();
    assert!(failures.is_empty(), "{failures:#?}");
    assert!(handed_out(&endpoint).await > before, "no credentials were handed out for the login");
}
