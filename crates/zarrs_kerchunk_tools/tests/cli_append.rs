//! Appending to combined sets from the command line (`scan FILES --append-to REFS`): as a
//! daily job runs it, repeating none of the options the set was made with, checked against
//! what `open_mfdataset` reads of all the files (`tests/scan/combine`, made by its `make.py`).
#![cfg(feature = "cli")]

mod cli_support;
#[path = "../../zarrs_kerchunk/tests/common/mod.rs"]
mod common;

use std::path::Path;

use cli_support::{assert_one_line_error, cat_f32, cat_numbers, expected_f32, flatten_numbers, run};

/// Appending to a parquet root in place writes only the record files whose rows change: with
/// three rows a record, `t` (one chunk per time) has records 0 and 1 whole before and after
/// the third file in date order (2020-01-03, after the -01 and -02 of the two combined) comes, so their files are left as they were, byte for byte and unwritten;
/// and the root then holds what a root written whole from the same references holds.
#[test]
fn appending_to_a_parquet_root_writes_only_the_records_that_change() {
    let folder = common::workspace_root().join("tests/scan/combine");
    let dir = tempfile::tempdir().unwrap();
    let file = |n: usize| folder.join(format!("mixed_units_{n}.nc")).to_str().unwrap().to_owned();
    let root = dir.path().join("series.parq");
    let refs = root.to_str().unwrap();
    let made =
        ["scan", &file(0), &file(2), "--concat", "time", "--inline-threshold", "0", "--record-size", "3", "-o", refs];
    let (code, _, stderr) = run(&made);
    assert_eq!(code, 0, "{stderr}");
    let kept = ["t/refs.0.parq", "t/refs.1.parq", "x/refs.0.parq"];
    let before: Vec<_> = kept.iter().map(|f| (std::fs::read(root.join(f)).unwrap(), modified(&root.join(f)))).collect();
    // The file system's clock must move on, or a rewrite could keep its time.
    std::thread::sleep(std::time::Duration::from_millis(20));
    let (code, _, stderr) = run(&["scan", &file(1), "--append-to", refs, "--inline-threshold", "0"]);
    assert_eq!(code, 0, "{stderr}");
    assert!(stderr.contains("record files: ") && stderr.contains("3 unchanged, 0 removed"), "{stderr}");
    for (name, (bytes, time)) in kept.iter().zip(&before) {
        let path = root.join(name);
        assert_eq!(&std::fs::read(&path).unwrap(), bytes, "{name}");
        assert_eq!(&modified(&path), time, "{name} was written again");
    }
    assert!(root.join("t/refs.3.parq").exists(), "the new chunks' record");
    // The same scans appended to a JSON set, which is written whole, give the same references.
    let json = dir.path().join("series.json");
    let (code, _, stderr) = run(&[&made[..made.len() - 2], &["-o", json.to_str().unwrap()]].concat());
    assert_eq!(code, 0, "{stderr}");
    let (code, _, stderr) = run(&["scan", &file(1), "--append-to", json.to_str().unwrap(), "--inline-threshold", "0"]);
    assert_eq!(code, 0, "{stderr}");
    let from_root = dir.path().join("from_root.json");
    let (code, _, stderr) = run(&["convert", refs, from_root.to_str().unwrap()]);
    assert_eq!(code, 0, "{stderr}");
    let read = |path: &Path| serde_json::from_slice::<serde_json::Value>(&std::fs::read(path).unwrap()).unwrap();
    let (ours, whole) = (read(&from_root), read(&json));
    assert_eq!(ours["refs"].as_object().unwrap().len(), whole["refs"].as_object().unwrap().len());
    for (key, reference) in whole["refs"].as_object().unwrap() {
        // Metadata is compared as JSON: the parquet root keeps it as objects.
        let text = |r: &serde_json::Value| r.as_str().and_then(|t| serde_json::from_str::<serde_json::Value>(t).ok());
        match text(reference) {
            Some(metadata) if key.ends_with(".zarray") || key.ends_with(".zattrs") || key.ends_with(".zgroup") => {
                assert_eq!(text(&ours["refs"][key]), Some(metadata), "{key}");
            }
            _ => assert_eq!(&ours["refs"][key], reference, "{key}"),
        }
    }
    let shape = serde_json::from_str::<serde_json::Value>(ours["refs"]["t/.zarray"].as_str().unwrap()).unwrap();
    assert_eq!(shape["shape"], serde_json::json!([12, 2]));
}

fn modified(path: &Path) -> std::time::SystemTime {
    std::fs::metadata(path).unwrap().modified().unwrap()
}

/// A set made from one file of `mixed_units` and appended to three times, one
/// file each (`--append-to`, repeating none of `--concat`), as JSON and as
/// parquet: its times and values are what `open_mfdataset` gives for all four
/// files; a file appended twice is an error, or left out with `--skip-existing`.
#[test]
fn scan_appends_files_to_a_combined_set() {
    let folder = common::workspace_root().join("tests/scan/combine");
    let dir = tempfile::tempdir().unwrap();
    let file = |n: usize| folder.join(format!("mixed_units_{n}.nc")).to_str().unwrap().to_owned();
    let expected: serde_json::Value =
        serde_json::from_slice(&std::fs::read(folder.join("mixed_units.expected.json")).unwrap()).unwrap();
    let theirs: Vec<&str> = expected["time"].as_array().unwrap().iter().map(|t| t.as_str().unwrap()).collect();
    for name in ["appended.json", "appended.parq"] {
        let refs = dir.path().join(name);
        let refs = refs.to_str().unwrap();
        let (code, _, stderr) = run(&["scan", &file(0), "--concat", "time", "-o", refs]);
        assert_eq!(code, 0, "{stderr}");
        // In the order of their dates, as a daily job appends: 2020-01-02, -03, -05.
        for n in [2, 1, 3] {
            let (code, _, stderr) = run(&["scan", &file(n), "--append-to", refs]);
            assert_eq!(code, 0, "{name}: appending file {n}: {stderr}");
        }
        let (code, stdout, stderr) = run(&["cat", refs, "time"]);
        assert_eq!(code, 0, "{stderr}");
        let ours: Vec<&str> = stdout.lines().nth(1).unwrap_or_default().split_whitespace().collect();
        assert_eq!(ours, theirs, "{name}: {stdout}");
        assert_eq!(cat_f32(refs, "t", &dir.path().join("t.npy")), expected_f32(&expected["t"]), "{name}");
        let (code, _, stderr) = run(&["scan", &file(2), "--append-to", refs]);
        assert_one_line_error(code, &stderr);
        assert!(stderr.contains("mixed_units_2.nc") && stderr.contains("already"), "{stderr}");
        let (code, _, stderr) = run(&["scan", &file(2), "--append-to", refs, "--skip-existing"]);
        assert_eq!(code, 0, "{stderr}");
        let (_, again, _) = run(&["cat", refs, "time"]);
        assert_eq!(again, stdout, "{name}: a file left out changes nothing");
    }
    // A file whose times fall within the set's is an error naming it, never times out of order.
    let gap = dir.path().join("gap.json");
    let (code, _, stderr) = run(&["scan", &file(0), &file(1), "--concat", "time", "-o", gap.to_str().unwrap()]);
    assert_eq!(code, 0, "{stderr}");
    let (code, _, stderr) = run(&["scan", &file(2), "--append-to", gap.to_str().unwrap()]);
    assert_one_line_error(code, &stderr);
    assert!(stderr.contains("mixed_units_2.nc") && stderr.contains("fall within"), "{stderr}");
    // A set that records no combining cannot be appended to.
    let single = dir.path().join("single.json");
    let (code, _, stderr) = run(&["scan", &file(0), "-o", single.to_str().unwrap()]);
    assert_eq!(code, 0, "{stderr}");
    let (code, _, stderr) = run(&["scan", &file(1), "--append-to", single.to_str().unwrap()]);
    assert_one_line_error(code, &stderr);
    assert!(stderr.contains("no record of how it was combined"), "{stderr}");
}

/// `tests/scan/combine/CASE.expected.json`: what `open_mfdataset` reads of the case's files.
fn expected(case: &str) -> serde_json::Value {
    let folder = common::workspace_root().join("tests/scan/combine");
    serde_json::from_slice(&std::fs::read(folder.join(format!("{case}.expected.json"))).unwrap()).unwrap()
}

/// The dates `cat REFS time` prints (its second line), as JSON strings.
fn cat_times(refs: &str) -> Vec<serde_json::Value> {
    let (code, stdout, stderr) = run(&["cat", refs, "time"]);
    assert_eq!(code, 0, "{stderr}");
    stdout.lines().nth(1).unwrap_or_default().split_whitespace().map(serde_json::Value::from).collect()
}

/// Sets combined along several dimensions or with values from names are appended to, each
/// repeating none of the options: members × times (`ens`) gain their second time, each
/// member its own, or a member with every time (`ens` and `ensdata`); members from names
/// (`members`) gain a member; dates from names (`dated`) a date. Each reads what
/// `open_mfdataset` reads of all the files. New files for some members only, or a member with
/// some times only, are an error naming the set.
#[test]
fn sets_combined_along_several_dimensions_or_from_names_are_appended_to() {
    let folder = common::workspace_root().join("tests/scan/combine");
    let dir = tempfile::tempdir().unwrap();
    let file = |name: &str| folder.join(name).to_str().unwrap().to_owned();
    for format in ["json", "parq"] {
        let refs = dir.path().join(format!("ens.{format}"));
        let refs = refs.to_str().unwrap();
        let member = r"member=name:_m(\d+)_";
        let made =
            ["scan", &file("ens_m7_0.nc"), &file("ens_m2_0.nc"), "--concat", "time", "--coord", member, "-o", refs];
        let (code, _, stderr) = run(&made);
        assert_eq!(code, 0, "{stderr}");
        // One member's new file alone: the members would differ.
        let (code, _, stderr) = run(&["scan", &file("ens_m2_1.nc"), "--append-to", refs]);
        assert_one_line_error(code, &stderr);
        assert!(stderr.contains("member") && stderr.contains("differ"), "{stderr}");
        let (code, _, stderr) = run(&["scan", &file("ens_m2_1.nc"), &file("ens_m7_1.nc"), "--append-to", refs]);
        assert_eq!(code, 0, "{format}: {stderr}");
        let ens = expected("ens");
        for array in ["member", "t"] {
            assert_eq!(cat_numbers(refs, array), flatten_numbers(&ens[array]), "{format}: {array}");
        }
        assert_eq!(cat_times(refs), ens["time"].as_array().unwrap().clone(), "{format}: time");
        // Files it has already, left out: nothing new, the set as it was (members from names
        // are not taken from the set's own name).
        let (code, _, stderr) = run(&["scan", &file("ens_m2_1.nc"), "--append-to", refs, "--skip-existing"]);
        assert_eq!(code, 0, "{format}: {stderr}");
        for array in ["member", "t"] {
            assert_eq!(cat_numbers(refs, array), flatten_numbers(&ens[array]), "{format}: {array}, nothing new");
        }
        assert_eq!(cat_times(refs), ens["time"].as_array().unwrap().clone(), "{format}: time, nothing new");
        // A member at every time the set has: one made of m2's two files gains m7's. From the
        // names (`ens`), and from the data (`ensdata`, members and times both combined from it).
        for (case, coord) in [("ens", ["--coord", member]), ("ensdata", ["--concat", "member"])] {
            let refs = dir.path().join(format!("{case}_member.{format}"));
            let refs = refs.to_str().unwrap();
            let of = |member: u8, n: u8| file(&format!("{case}_m{member}_{n}.nc"));
            let (m2, m7) = (|n| of(2, n), |n| of(7, n));
            let (code, _, stderr) =
                run(&[&["scan", &m2(0), &m2(1), "--concat", "time"], &coord[..], &["-o", refs]].concat());
            assert_eq!(code, 0, "{stderr}");
            // A member with one time of two: the set's times and members both differ.
            let (code, _, stderr) = run(&["scan", &m7(0), "--append-to", refs]);
            assert_one_line_error(code, &stderr);
            assert!(stderr.contains("differ from it along time and member"), "{stderr}");
            let (code, _, stderr) = run(&["scan", &m7(0), &m7(1), "--append-to", refs]);
            assert_eq!(code, 0, "{case}.{format}: {stderr}");
            let expected = expected(case);
            for array in ["member", "t"] {
                assert_eq!(cat_numbers(refs, array), flatten_numbers(&expected[array]), "{case}.{format}: {array}");
            }
            assert_eq!(cat_times(refs), expected["time"].as_array().unwrap().clone(), "{case}.{format}: time");
        }
    }
    // One dimension from the names: a member, and a date.
    for (case, made, coord, appended) in [
        ("members", ["members_m7.nc", "members_m2.nc"], r"member=name:_m(\d+)\.nc$", "members_m11.nc"),
        ("dated", ["dated_20200101.nc", "dated_20200102.nc"], r"time=name:_(\d{8})\.nc$:%Y%m%d", "dated_20200103.nc"),
    ] {
        let refs = dir.path().join(format!("{case}.json"));
        let refs = refs.to_str().unwrap();
        let (code, _, stderr) = run(&["scan", &file(made[0]), &file(made[1]), "--coord", coord, "-o", refs]);
        assert_eq!(code, 0, "{stderr}");
        let (code, _, stderr) = run(&["scan", &file(appended), "--append-to", refs]);
        assert_eq!(code, 0, "{case}: {stderr}");
        let expected = expected(case);
        assert_eq!(cat_numbers(refs, "t"), flatten_numbers(&expected["t"]), "{case}: t");
        match case {
            "members" => assert_eq!(cat_numbers(refs, "member"), flatten_numbers(&expected["member"])),
            _ => assert_eq!(cat_times(refs), expected["time"].as_array().unwrap().clone()),
        }
    }
    // The same file again: an error naming it.
    let refs = dir.path().join("dated.json");
    let refs = refs.to_str().unwrap();
    let (code, _, stderr) = run(&["scan", &file("dated_20200103.nc"), "--append-to", refs]);
    assert_one_line_error(code, &stderr);
    assert!(stderr.contains("dated_20200103.nc") && stderr.contains("already"), "{stderr}");
}
