//! `--credentials FILE` (issue 54, in part): S3 buckets read with temporary keys from a
//! credentials endpoint as NASA's DAACs serve one (`.ci/s3credentials.py`: moto's temporary keys
//! for a role, whose session token moto checks, for a bearer token), the token read from the
//! variable the file names. Values against the conformance case's `.npy` (netCDF4's).
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
    let store = zk_data(s3);
    let folder = format!("cli-credentials-{}", std::process::id());
    let scoped = object_store::prefix::PrefixStore::new(store, folder.as_str());
    let runtime = tokio::runtime::Runtime::new().unwrap();
    runtime.block_on(case("netcdf3_classic").upload_to(&scoped));
    format!("s3://zk-data/{folder}/netcdf3_classic/refs.json")
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
fn what_the_file_cannot_say_yet_or_at_all_is_refused_by_name() {
    let dir = tempfile::tempdir().unwrap();
    let refs = common::data_dir().join("netcdf3_classic/refs.json");
    for (source, said) in [
        (
            serde_json::json!({"bearer_env": "EARTHDATA_TOKEN"}),
            "bearer tokens for HTTP(S) hosts (bearer_env) are not supported yet",
        ),
        (
            serde_json::json!({"s3credentials": "https://daac.example/s3credentials", "role": "x"}),
            "unknown key \"role\"",
        ),
        (serde_json::json!({"token_env": "EARTHDATA_TOKEN"}), "no s3credentials endpoint"),
    ] {
        let credentials = credentials_file(dir.path(), &source);
        let (code, _, stderr) =
            cli_support::run(&["info", refs.to_str().unwrap(), "--credentials", credentials.to_str().unwrap()]);
        assert_ne!(code, 0);
        assert!(stderr.contains(&format!("credentials {}: s3://zk-data/: {said}", credentials.display())), "{stderr}");
    }
}
