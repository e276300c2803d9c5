//! `--cache DIR` (and `ZARRS_KERCHUNK_CACHE`), as processes use it: files
//! served over HTTP by an in-test server that logs every request (tower-http's
//! `ServeDir`: `Last-Modified`, no ETag, so a version is a size and a time),
//! scanned and read through one cache folder. Values are xarray's
//! (`tests/scan/combine/bounds.expected.json`, written by its `make.py` with
//! `open_mfdataset`).
//!
//! - a warm `cat` makes no GET, only one HEAD per file;
//! - processes racing on an empty folder all print the right values, and the
//!   next one makes no GET;
//! - processes killed at random moments while they fill the cache leave a
//!   cache that reads right;
//! - a file rewritten in place (same size, other values, a later time) is
//!   read again, never served from the cache.
#![cfg(feature = "cli")]

mod cli_support;
#[path = "../../zarrs_kerchunk/tests/common/mod.rs"]
mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime};

use cli_support::{cat_numbers_with, combine_expected, combine_file, flatten_numbers, run};
use common::server::{Logged, serve_dir_logged};

const FILES: [&str; 3] = ["bounds_0.nc", "bounds_1.nc", "bounds_2.nc"];

/// The three files copied to a served folder, scanned (every chunk a range,
/// none inline) through `cache`; the folder, the references and the server's log.
struct Served {
    folder: tempfile::TempDir,
    refs: String,
    urls: Vec<String>,
    log: Arc<Mutex<Vec<Logged>>>,
}

fn served(cache: &Path) -> Served {
    let folder = tempfile::tempdir().unwrap();
    for name in FILES {
        std::fs::copy(combine_file(name), folder.path().join(name)).unwrap();
    }
    let (server, log) = serve_dir_logged(folder.path().to_path_buf());
    let urls: Vec<String> = FILES.iter().map(|name| format!("{server}/{name}")).collect();
    let refs = folder.path().join("refs.json").to_str().unwrap().to_owned();
    let mut args = vec!["scan"];
    args.extend(urls.iter().map(String::as_str));
    args.extend(["--concat", "time", "--inline-threshold", "0", "-o", &refs, "--cache", cache.to_str().unwrap()]);
    let (code, _, stderr) = run(&args);
    assert_eq!(code, 0, "{stderr}");
    Served { folder, refs, urls, log }
}

/// xarray's `t`, flattened, with file `replaced`'s rows taken from file `by`.
fn expected_t(replaced: Option<(usize, usize)>) -> Vec<f64> {
    let rows = combine_expected("bounds")["t"].as_array().unwrap().clone();
    let per_file = rows.len() / FILES.len();
    let mut rows = rows;
    if let Some((replaced, by)) = replaced {
        let source: Vec<_> = rows[by * per_file..(by + 1) * per_file].to_vec();
        rows.splice(replaced * per_file..(replaced + 1) * per_file, source);
    }
    flatten_numbers(&serde_json::Value::Array(rows))
}

/// The requests the server answered since `from`: (HEAD, GET).
fn requests(log: &Mutex<Vec<Logged>>, from: usize) -> (usize, usize) {
    let log = log.lock().unwrap();
    let heads = log[from..].iter().filter(|(method, _, _)| method == "HEAD").count();
    (heads, log.len() - from - heads)
}

fn cat(refs: &str, cache: &Path) -> Vec<f64> {
    cat_numbers_with(refs, "t", &["--cache", cache.to_str().unwrap()])
}

fn binary() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_zarrs-kerchunk"))
}

#[test]
fn a_warm_cat_makes_no_get_and_one_head_per_file() {
    let scan_cache = tempfile::tempdir().unwrap();
    let served = served(scan_cache.path());
    let cache = tempfile::tempdir().unwrap();
    let before = served.log.lock().unwrap().len();
    assert_eq!(cat(&served.refs, cache.path()), expected_t(None));
    assert!(requests(&served.log, before).1 > 0, "a cold cat reads chunks");
    let before = served.log.lock().unwrap().len();
    // The variable names the cache as `--cache` does.
    let output = Command::new(binary())
        .args(["cat", &served.refs, "t"])
        .env("ZARRS_KERCHUNK_CACHE", cache.path())
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    assert_eq!(cli_support::numbers_of(&String::from_utf8_lossy(&output.stdout)), expected_t(None));
    assert_eq!(requests(&served.log, before), (FILES.len(), 0), "warm: one HEAD per file, no GET");
    // A scan of a file scanned before: no GET either (the sidecar it looks for is a HEAD).
    let before = served.log.lock().unwrap().len();
    let again = served.folder.path().join("again.json");
    let scan_cache = scan_cache.path().to_str().unwrap();
    let (code, _, stderr) = run(&[
        "scan",
        &served.urls[0],
        "--inline-threshold",
        "0",
        "-o",
        again.to_str().unwrap(),
        "--cache",
        scan_cache,
    ]);
    assert_eq!(code, 0, "{stderr}");
    let log = served.log.lock().unwrap()[before..].to_vec();
    assert!(log.iter().all(|(method, _, _)| method == "HEAD"), "a warm scan makes no GET: {log:?}");
}

#[test]
fn processes_racing_on_an_empty_cache_all_read_right_and_the_next_makes_no_get() {
    let scan_cache = tempfile::tempdir().unwrap();
    let served = served(scan_cache.path());
    let cache = tempfile::tempdir().unwrap();
    let racing: Vec<_> = (0..6)
        .map(|_| {
            Command::new(binary())
                .args(["cat", &served.refs, "t", "--cache", cache.path().to_str().unwrap()])
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    for child in racing {
        let output = child.wait_with_output().unwrap();
        assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
        let values = cli_support::numbers_of(&String::from_utf8_lossy(&output.stdout));
        assert_eq!(values, expected_t(None));
    }
    let before = served.log.lock().unwrap().len();
    assert_eq!(cat(&served.refs, cache.path()), expected_t(None));
    assert_eq!(requests(&served.log, before).1, 0, "the next process makes no GET");
}

#[test]
fn processes_killed_while_filling_the_cache_leave_one_that_reads_right() {
    let scan_cache = tempfile::tempdir().unwrap();
    let served = served(scan_cache.path());
    let cache = tempfile::tempdir().unwrap();
    // Killed at moments spread over a cold read's life (a few to a few tens of milliseconds).
    for delay_ms in [1, 3, 5, 8, 12, 17, 25, 40] {
        let mut child = Command::new(binary())
            .args(["cat", &served.refs, "t", "--cache", cache.path().to_str().unwrap()])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        std::thread::sleep(Duration::from_millis(delay_ms));
        let _ = child.kill();
        child.wait().unwrap();
    }
    assert_eq!(cat(&served.refs, cache.path()), expected_t(None));
    let before = served.log.lock().unwrap().len();
    assert_eq!(cat(&served.refs, cache.path()), expected_t(None));
    assert_eq!(requests(&served.log, before).1, 0, "then warm: no GET");
}

#[test]
fn a_file_rewritten_in_place_is_read_again() {
    let cache = tempfile::tempdir().unwrap();
    let served = served(cache.path());
    assert_eq!(cat(&served.refs, cache.path()), expected_t(None));
    // bounds_1.nc's bytes over bounds_0.nc: the same size and layout, other values. The server
    // gives no ETag, and Last-Modified to the second: the rewrite is dated later, as a
    // rewrite a second or more after the first read is.
    let first = served.folder.path().join(FILES[0]);
    std::fs::write(&first, std::fs::read(served.folder.path().join(FILES[1])).unwrap()).unwrap();
    let later = SystemTime::now() + Duration::from_secs(5);
    std::fs::File::options().write(true).open(&first).unwrap().set_modified(later).unwrap();
    assert_eq!(cat(&served.refs, cache.path()), expected_t(Some((0, 1))));
}

#[test]
fn a_cache_folder_that_cannot_be_made_is_an_error_naming_it() {
    let file = tempfile::NamedTempFile::new().unwrap();
    let inside = file.path().join("cache");
    let refs = common::data_dir().join("netcdf3_classic/refs.json");
    let (code, _, stderr) = run(&["info", refs.to_str().unwrap(), "--cache", inside.to_str().unwrap()]);
    assert_ne!(code, 0);
    assert!(stderr.contains(&format!("cannot use the cache folder {}", inside.display())), "{stderr}");
}

#[test]
fn cache_sizes_read_as_powers_of_1024_and_nonsense_is_refused() {
    let refs = common::data_dir().join("netcdf3_classic/refs.json");
    let cache = tempfile::tempdir().unwrap();
    let dir = cache.path().to_str().unwrap();
    let (code, _, stderr) = run(&["info", refs.to_str().unwrap(), "--cache", dir, "--cache-size", "20G"]);
    assert_eq!(code, 0, "{stderr}");
    let (code, _, stderr) = run(&["info", refs.to_str().unwrap(), "--cache", dir, "--cache-size", "20 parsecs"]);
    assert_ne!(code, 0);
    assert!(stderr.contains("expected a size such as 500M or 20G, found \"20 parsecs\""), "{stderr}");
}
