//! Credentials on the command line (issue 54), against NASA Earthdata's stand-ins
//! (`.ci/earthdata.py`). Values against the conformance case's `.npy` (netCDF4's).
//!
//! - `--credentials FILE`: S3 buckets read with temporary keys from a DAAC's `/s3credentials`
//!   (moto's temporary keys for a role, whose session token moto checks), for the bearer token
//!   in the variable the file names; an `https://` prefix's `bearer_env`;
//! - the DAAC's HTTPS distribution read with `EARTHDATA_TOKEN` and `--token-host`, with a
//!   `.netrc` login through Earthdata Login's redirects, and refused without either, naming the
//!   host that refused; a `--header` reaches its host only.
#![cfg(feature = "cli")]

mod cli_support;
#[path = "../../zarrs_kerchunk/tests/common/mod.rs"]
mod common;
#[path = "../../zarrs_kerchunk/tests/zk_data/mod.rs"]
mod zk_data;

use std::path::{Path, PathBuf};

use cli_support::{case, native_values};
use zk_data::zk_data;

/// The servers' variables: S3, the endpoint and its token; `None` without them.
fn servers() -> Option<(String, String, String)> {
    let get = |name: &str| -> Option<String> {
        if let Ok(value) = std::env::var(name) {
            return Some(value);
        }
        assert!(std::env::var_os("ZK_REQUIRE_SERVERS").is_none(), "{name} is not set but ZK_REQUIRE_SERVERS is");
        eprintln!("{name} not set: this test needs `eval \"$(bash .ci/servers.sh start)\"` first; not run");
        None
    };
    Some((get("ZK_S3")?, get("ZK_S3CREDENTIALS")?, get("ZK_EARTHDATA_TOKEN")?))
}

/// The case `netcdf3_classic` put in zk-data under a folder of this process, with the bucket's
/// own keys; its reference file's URL.
fn upload(s3: &str) -> String {
    format!("s3://zk-data/{}/netcdf3_classic/refs.json", upload_folder(s3))
}

/// [`upload`]; the folder.
fn upload_folder(s3: &str) -> String {
    let store = zk_data(s3);
    let folder = format!("cli-credentials-{}", std::process::id());
    let scoped = object_store::prefix::PrefixStore::new(store, folder.as_str());
    let runtime = tokio::runtime::Runtime::new().unwrap();
    runtime.block_on(case("netcdf3_classic").upload_to(&scoped));
    folder
}

fn credentials_file(dir: &Path, source: &serde_json::Value) -> PathBuf {
    let file = dir.join("credentials.json");
    std::fs::write(&file, serde_json::json!({ "s3://zk-data/": source }).to_string()).unwrap();
    file
}

/// `cat REFS a --npy OUT` with the credentials file, S3's endpoint and `ZK_TEST_TOKEN=token`.
fn cat(refs: &str, s3: &str, credentials: &Path, token: &str, out: &Path) -> std::process::Output {
    std::process::Command::new(env!("CARGO_BIN_EXE_zarrs-kerchunk"))
        .args(["cat", refs, "a", "--npy", out.to_str().unwrap(), "--credentials", credentials.to_str().unwrap()])
        .args(["--option", &format!("aws_endpoint={s3}"), "--option", "aws_allow_http=true"])
        .args(["--option", "aws_region=us-east-1"])
        .env("ZK_TEST_TOKEN", token)
        .output()
        .unwrap()
}

#[test]
fn a_bucket_is_read_with_temporary_keys_from_its_endpoint() {
    let Some((s3, endpoint, token)) = servers() else { return };
    let refs = upload(&s3);
    let dir = tempfile::tempdir().unwrap();
    let credentials =
        credentials_file(dir.path(), &serde_json::json!({"s3credentials": endpoint, "token_env": "ZK_TEST_TOKEN"}));
    let out = dir.path().join("a.npy");
    let done = cat(&refs, &s3, &credentials, &token, &out);
    assert!(done.status.success(), "{}", String::from_utf8_lossy(&done.stderr));
    let expected = case("netcdf3_classic").dir.join("expected/a.npy");
    assert_eq!(native_values(&out), native_values(&expected));
}

#[test]
fn with_no_token_the_endpoint_is_asked_with_a_netrc_login() {
    let Some((s3, endpoint, _)) = servers() else { return };
    let Some((_, user, password)) = earthdata() else { return };
    let refs = upload(&s3);
    let dir = tempfile::tempdir().unwrap();
    let credentials = credentials_file(dir.path(), &serde_json::json!({"s3credentials": endpoint}));
    let netrc = dir.path().join("netrc");
    std::fs::write(&netrc, format!("machine 127.0.0.2 login {user} password {password}\n")).unwrap();
    let out = dir.path().join("a.npy");
    let done = std::process::Command::new(env!("CARGO_BIN_EXE_zarrs-kerchunk"))
        .args(["cat", &refs, "a", "--npy", out.to_str().unwrap(), "--credentials", credentials.to_str().unwrap()])
        .args(["--netrc", netrc.to_str().unwrap(), "--option", &format!("aws_endpoint={s3}")])
        .args(["--option", "aws_allow_http=true", "--option", "aws_region=us-east-1"])
        .env_remove("EARTHDATA_TOKEN")
        .output()
        .unwrap();
    assert!(done.status.success(), "{}", String::from_utf8_lossy(&done.stderr));
    assert_eq!(native_values(&out), native_values(&case("netcdf3_classic").dir.join("expected/a.npy")));
}

#[test]
fn a_wrong_token_is_access_denied_naming_the_endpoint() {
    let Some((s3, endpoint, token)) = servers() else { return };
    let refs = upload(&s3);
    let dir = tempfile::tempdir().unwrap();
    let credentials =
        credentials_file(dir.path(), &serde_json::json!({"s3credentials": endpoint, "token_env": "ZK_TEST_TOKEN"}));
    let done = cat(&refs, &s3, &credentials, "not-the-token", &dir.path().join("a.npy"));
    let stderr = String::from_utf8_lossy(&done.stderr);
    assert!(!done.status.success());
    assert!(stderr.contains(&endpoint) && stderr.contains("access denied"), "{stderr}");
    assert!(!stderr.contains("not-the-token") && !stderr.contains(&token), "{stderr}");
}

#[test]
fn what_the_file_cannot_say_is_refused_by_name() {
    let dir = tempfile::tempdir().unwrap();
    let refs = common::data_dir().join("netcdf3_classic/refs.json");
    for (source, said) in [
        (
            serde_json::json!({"bearer_env": "EARTHDATA_TOKEN"}),
            "unknown key \"bearer_env\"; for this prefix the keys are s3credentials and token_env",
        ),
        (
            serde_json::json!({"s3credentials": "https://daac.example/s3credentials", "role": "x"}),
            "unknown key \"role\"",
        ),
        (serde_json::json!({"token_env": "EARTHDATA_TOKEN"}), "token_env without an s3credentials endpoint"),
    ] {
        let credentials = credentials_file(dir.path(), &source);
        let (code, _, stderr) =
            cli_support::run(&["info", refs.to_str().unwrap(), "--credentials", credentials.to_str().unwrap()]);
        assert_ne!(code, 0);
        assert!(stderr.contains(&format!("credentials {}: s3://zk-data/: {said}", credentials.display())), "{stderr}");
    }
}

/// The DAAC stand-in's address and the login's user and password; `None` without the servers.
fn earthdata() -> Option<(String, String, String)> {
    let (_, _, _) = servers()?;
    let get = |name: &str| std::env::var(name).ok();
    Some((get("ZK_DAAC")?, get("ZK_EARTHDATA_USER")?, get("ZK_EARTHDATA_PASSWORD")?))
}

/// `cat URL a --npy OUT` with no token and no `.netrc` but those `args` and `env` give, its
/// requests marked with the user agent `agent`.
fn cat_https(url: &str, out: &Path, agent: &str, args: &[&str], env: &[(&str, &str)]) -> std::process::Output {
    let home = tempfile::tempdir().unwrap();
    let mut command = std::process::Command::new(env!("CARGO_BIN_EXE_zarrs-kerchunk"));
    command
        .args(["cat", url, "a", "--npy", out.to_str().unwrap(), "--option", &format!("user_agent={agent}")])
        .args(args)
        .env_remove("EARTHDATA_TOKEN")
        .env_remove("NETRC")
        .env("HOME", home.path());
    for (name, value) in env {
        command.env(name, value);
    }
    command.output().unwrap()
}

/// The requests the stand-in host at `host` saw with the user agent `agent`.
fn seen(host: &str, agent: &str) -> Vec<serde_json::Value> {
    use object_store::ObjectStoreExt;
    let store = object_store::http::HttpBuilder::new()
        .with_url(host)
        .with_client_options(object_store::ClientOptions::new().with_allow_http(true))
        .build()
        .unwrap();
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let body = runtime.block_on(async { store.get(&"__seen".into()).await.unwrap().bytes().await.unwrap() });
    let all: Vec<serde_json::Value> = serde_json::from_slice(&body).unwrap();
    all.into_iter().filter(|r| header(r, "user-agent").as_deref() == Some(agent)).collect()
}

/// A request's header, by name in any case.
fn header(request: &serde_json::Value, name: &str) -> Option<String> {
    let headers = request["headers"].as_object()?;
    headers.iter().find(|(key, _)| key.eq_ignore_ascii_case(name)).and_then(|(_, v)| v.as_str().map(str::to_owned))
}

/// A way to give credentials: its name, its arguments and its variables.
type Way<'a> = (&'a str, Vec<&'a str>, Vec<(&'a str, &'a str)>);

#[test]
fn https_is_read_with_a_token_a_credentials_file_or_a_netrc_login() {
    let Some((s3, _, token)) = servers() else { return };
    let Some((daac, user, password)) = earthdata() else { return };
    let url = format!("{daac}/zk-data/{}/netcdf3_classic/refs.json", upload_folder(&s3));
    let dir = tempfile::tempdir().unwrap();
    let expected = native_values(&case("netcdf3_classic").dir.join("expected/a.npy"));
    let netrc = dir.path().join("netrc");
    std::fs::write(&netrc, format!("machine 127.0.0.2 login {user} password {password}\n")).unwrap();
    let sources = dir.path().join("credentials.json");
    let prefix = format!("{daac}/zk-data/");
    std::fs::write(&sources, serde_json::json!({ prefix: {"bearer_env": "ZK_TEST_TOKEN"} }).to_string()).unwrap();
    let agent = format!("zk-cli-{}", std::process::id());
    let api_header = format!("X-Api-Key: key-{}", std::process::id());
    let scoped_header = format!("127.0.0.3={api_header}");
    let ways: [Way<'_>; 3] = [
        (
            "EARTHDATA_TOKEN, --token-host and --header",
            vec!["--token-host", "127.0.0.3", "--header", &scoped_header],
            vec![("EARTHDATA_TOKEN", token.as_str())],
        ),
        (
            "--credentials with bearer_env",
            vec!["--credentials", sources.to_str().unwrap()],
            vec![("ZK_TEST_TOKEN", token.as_str())],
        ),
        ("--netrc", vec!["--netrc", netrc.to_str().unwrap()], vec![]),
    ];
    for (way, args, env) in ways {
        let out = dir.path().join("a.npy");
        let done = cat_https(&url, &out, &agent, &args, &env);
        assert!(done.status.success(), "{way}: {}", String::from_utf8_lossy(&done.stderr));
        assert_eq!(native_values(&out), expected, "{way}");
    }
    let key = api_header.split_once(": ").unwrap().1;
    let daac_seen = seen(&daac, &agent);
    assert!(
        daac_seen.iter().any(|r| header(r, "x-api-key").as_deref() == Some(key)),
        "the header never reached its host"
    );
    let elsewhere: Vec<_> =
        seen("http://127.0.0.2:8787", &agent).into_iter().chain(seen("http://127.0.0.4:8788", &agent)).collect();
    assert!(!elsewhere.is_empty());
    for request in elsewhere {
        assert!(!request.to_string().contains(key) && !request.to_string().contains(&token), "{request}");
    }
}

#[test]
fn https_without_credentials_is_access_denied_naming_the_login_host() {
    let Some((s3, _, token)) = servers() else { return };
    let Some((daac, _, _)) = earthdata() else { return };
    let url = format!("{daac}/zk-data/{}/netcdf3_classic/refs.json", upload_folder(&s3));
    let dir = tempfile::tempdir().unwrap();
    for (args, denied) in [
        (vec![], "access denied by http://127.0.0.2:8787/oauth/authorize, reached by redirects from"),
        // The token is for Earthdata's hosts by default: never sent to this one.
        (vec!["--bearer-token", token.as_str()], "no token, header or .netrc login is given for 127.0.0.2"),
        (
            vec!["--bearer-token", "not-the-token", "--token-host", "127.0.0.3"],
            "127.0.0.3 refused what is given for it",
        ),
    ] {
        let done = cat_https(&url, &dir.path().join("a.npy"), "zk-cli-denied", &args, &[]);
        let stderr = String::from_utf8_lossy(&done.stderr);
        assert!(!done.status.success());
        assert!(stderr.contains(denied) && stderr.contains(&url), "{stderr}");
        assert!(!stderr.contains("not-the-token") && !stderr.contains(&token), "{stderr}");
    }
}
