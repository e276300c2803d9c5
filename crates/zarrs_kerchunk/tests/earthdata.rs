//! HTTPS with credentials, as NASA Earthdata serves it (issue 54), against
//! `.ci/earthdata.py`: a DAAC on 127.0.0.3 whose distribution of zk-data
//! takes a bearer token or a login's cookie and redirects to signed URLs on
//! 127.0.0.4, and Earthdata Login on 127.0.0.2, which takes a `.netrc`
//! login and redirects back with a code. Each host logs what it was sent;
//! curl (`-L -n -b -c`) reads the same objects the same way.
//!
//! - every conformance case, read from the DAAC with a bearer token, and
//!   with only a `.netrc` login, reads exactly, sync and async;
//! - the token and a header given for the DAAC reach the DAAC only: never
//!   the login host, never the signed URLs' host; the `.netrc` password
//!   reaches the login host only; the login's cookie is kept;
//! - no credentials, or a wrong token, is "access denied" naming the host
//!   that refused, never a missing chunk or a fill value, and the token is
//!   in no error.

#![cfg(all(feature = "http", feature = "aws"))]

mod common;
mod plain_http;
mod zk_data;

use common::Case;
use common::remote::{read_case, var};
use object_store::prefix::PrefixStore;
use plain_http::get_json;
use serde_json::Value;
use zarrs_kerchunk::{HttpCredentials, ReferenceStoreBuilder};
use zarrs_storage::{ReadableStorageTraits, StoreKey};
use zk_data::zk_data;

/// The stand-ins' addresses and secrets.
struct Earthdata {
    daac: String,
    login: String,
    signed: String,
    token: String,
    user: String,
    password: String,
}

fn earthdata() -> Option<Earthdata> {
    Some(Earthdata {
        daac: var("ZK_DAAC")?,
        login: var("ZK_EARTHDATA_LOGIN")?,
        signed: var("ZK_SIGNED")?,
        token: var("ZK_EARTHDATA_TOKEN")?,
        user: var("ZK_EARTHDATA_USER")?,
        password: var("ZK_EARTHDATA_PASSWORD")?,
    })
}

/// The cases, put in zk-data under `folder` with the bucket's own keys.
async fn upload(folder: &str) {
    let scoped = PrefixStore::new(zk_data(&var("ZK_S3").unwrap()), folder);
    for case in Case::all() {
        case.upload_to(&scoped).await;
    }
}

/// A builder whose requests carry `agent` (to find them in the hosts' logs) and `credentials`.
fn builder(agent: &str, credentials: HttpCredentials) -> ReferenceStoreBuilder {
    ReferenceStoreBuilder::new()
        .with_option("user_agent", agent)
        .with_http_credentials(credentials)
        .with_read_deadline(std::time::Duration::from_secs(30))
}

/// What `host` was sent by the requests whose user agent is `agent`: each request's headers.
async fn seen(host: &str, agent: &str) -> Vec<Value> {
    let Value::Array(all) = get_json(host, "__seen").await else { panic!("{host}/__seen is not a list") };
    all.into_iter().filter(|request| header(request, "user-agent").as_deref() == Some(agent)).collect()
}

/// A request's header, by name in any case.
fn header(request: &Value, name: &str) -> Option<String> {
    request["headers"]
        .as_object()?
        .iter()
        .find(|(key, _)| key.eq_ignore_ascii_case(name))
        .and_then(|(_, value)| value.as_str().map(str::to_owned))
}

/// Read every case from the DAAC under `folder`; the failures.
async fn read_all(builder: &ReferenceStoreBuilder, daac: &str, folder: &str) -> Vec<String> {
    let mut failures = Vec::new();
    for case in Case::all() {
        for file in case.references(true).into_iter().chain(case.references(false)) {
            let location = format!("{daac}/zk-data/{folder}/{}/{file}", case.name);
            failures.extend(read_case(builder, &case, &location).await.failures());
        }
    }
    failures
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bearer_token_reads_every_case_and_reaches_no_other_host() {
    let Some(ed) = earthdata() else { return };
    let folder = format!("earthdata-token-{}", std::process::id());
    upload(&folder).await;
    let agent = format!("zk-test-token-{}", std::process::id());
    let key = format!("key-{}", std::process::id());
    let credentials = HttpCredentials::new()
        .with_bearer_token(&ed.token, ["127.0.0.3"])
        .unwrap()
        .with_header("127.0.0.3", "X-Api-Key", &key)
        .unwrap();
    let failures = read_all(&builder(&agent, credentials), &ed.daac, &folder).await;
    assert!(failures.is_empty(), "{failures:#?}");

    let bearer = format!("Bearer {}", ed.token);
    let daac = seen(&ed.daac, &agent).await;
    assert!(!daac.is_empty());
    for request in &daac {
        assert_eq!(header(request, "authorization").as_deref(), Some(bearer.as_str()), "{request}");
        assert_eq!(header(request, "x-api-key").as_deref(), Some(key.as_str()), "{request}");
    }
    let signed = seen(&ed.signed, &agent).await;
    // Every read the DAAC redirected was followed to the signed URLs. Compared as a set of
    // (path, range), not by count: a request the client retried after a dropped connection is
    // seen twice by the DAAC but may reach the signed host once.
    let asked = |request: &Value| (request["path"].as_str().map(str::to_owned), header(request, "range"));
    let followed: std::collections::HashSet<_> = signed.iter().map(asked).collect();
    let unfollowed: Vec<_> = daac.iter().map(asked).filter(|read| !followed.contains(read)).collect();
    assert!(unfollowed.is_empty(), "reads redirected by the DAAC that never reached the signed URLs: {unfollowed:?}");
    for request in &signed {
        assert!(header(request, "authorization").is_none() && header(request, "x-api-key").is_none(), "{request}");
        assert!(!request.to_string().contains(&ed.token) && !request.to_string().contains(&key), "{request}");
    }
    assert!(seen(&ed.login, &agent).await.is_empty(), "a request with a token went to the login host");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_netrc_login_through_redirects_reads_every_case_and_keeps_its_cookie() {
    let Some(ed) = earthdata() else { return };
    let folder = format!("earthdata-netrc-{}", std::process::id());
    upload(&folder).await;
    let agent = format!("zk-test-netrc-{}", std::process::id());
    let home = tempfile::tempdir().unwrap();
    let netrc = home.path().join(".netrc");
    std::fs::write(&netrc, format!("machine 127.0.0.2\n  login {}\n  password {}\n", ed.user, ed.password)).unwrap();
    let credentials = HttpCredentials::new().with_netrc_file(&netrc).unwrap();
    let failures = read_all(&builder(&agent, credentials), &ed.daac, &folder).await;
    assert!(failures.is_empty(), "{failures:#?}");

    let login = seen(&ed.login, &agent).await;
    let logins = login.iter().filter(|r| header(r, "authorization").is_some_and(|a| a.starts_with("Basic "))).count();
    let daac = seen(&ed.daac, &agent).await;
    let objects = daac.iter().filter(|r| r["path"].as_str().unwrap().starts_with("/zk-data/")).count();
    // Requests racing before the first login's cookie lands may log in too; the rest use the cookie.
    assert!(logins >= 1 && logins * 4 <= objects, "{logins} logins for {objects} requests: the cookie is not kept");
    for request in daac.iter().chain(&seen(&ed.signed, &agent).await) {
        assert!(header(request, "authorization").is_none(), "the login was sent beyond its host: {request}");
        assert!(!request.to_string().contains(&ed.password), "{request}");
    }
    assert!(
        seen(&ed.signed, &agent).await.iter().all(|r| header(r, "cookie").is_none()),
        "a cookie reached the signed URLs"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_or_a_wrong_credential_is_access_denied_naming_the_host_never_a_fill_value() {
    let Some(ed) = earthdata() else { return };
    let folder = format!("earthdata-denied-{}", std::process::id());
    upload(&folder).await;
    let case = Case::all().into_iter().find(|case| case.name == "hdf5_contiguous").unwrap();
    // The references are local and readable; only the target's bytes are at the DAAC.
    let local = url::Url::from_directory_path(&case.dir).unwrap().to_string();
    let remote = format!("{}/zk-data/{folder}/{}/", ed.daac, case.name);
    let agent = format!("zk-test-denied-{}", std::process::id());
    let wrong = HttpCredentials::new().with_bearer_token("not-the-token", ["127.0.0.3"]).unwrap();
    let other_host = HttpCredentials::new().with_bearer_token(&ed.token, ["127.0.0.9"]).unwrap();
    let cases = [
        (
            HttpCredentials::new(),
            "access denied by http://127.0.0.2:8787/oauth/authorize, reached by redirects from",
            "no token, header or .netrc login is given for 127.0.0.2",
        ),
        (
            other_host,
            "access denied by http://127.0.0.2:8787/oauth/authorize",
            "no token, header or .netrc login is given for 127.0.0.2",
        ),
        (
            wrong,
            "access denied by http://127.0.0.3:8786/zk-data/",
            "127.0.0.3 refused what is given for it (authorization)",
        ),
    ];
    for (credentials, denied, why) in cases {
        let store = builder(&agent, credentials)
            .with_url_rewrite(local.as_str(), remote.as_str())
            .open(case.dir.join("refs.json").to_str().unwrap())
            .unwrap();
        let error = store.get(&StoreKey::new("grid/0.0").unwrap()).map(|bytes| bytes.map(|b| b.len())).unwrap_err();
        let message = format!("{error}");
        assert!(message.contains(denied) && message.contains(why), "{message}");
        assert!(message.contains(&format!("{remote}data.h5")), "the target is not named: {message}");
        assert!(!message.contains("not-the-token") && !message.contains(&ed.token), "{message}");
    }
}
