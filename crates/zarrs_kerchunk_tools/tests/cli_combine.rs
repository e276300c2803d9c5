//! Combining reference sets that exist (`zarrs-kerchunk combine REFS... -o OUT`): kerchunk's
//! per-file JSONs (`tests/scan/combine/refsets_*.json`, made by its `make.py` with
//! `SingleHdf5ToZarr`), their coordinates chunked, shuffled, compressed and big-endian, held
//! as ranges or inline, each file counting its times from its own day; checked against what
//! xarray's `open_mfdataset` reads of the files themselves.
#![cfg(feature = "cli")]

mod cli_support;
#[path = "../../zarrs_kerchunk/tests/common/mod.rs"]
mod common;

use cli_support::{
    assert_one_line_error, cat_dates, cat_f32, combine_expected, combine_file as file, expected_f32, run, texts,
};

/// kerchunk's per-file JSONs, in any order, held as ranges, inline or some of each, combine
/// along time into the times, bounds and values `open_mfdataset` reads of the files: JSON and
/// parquet, in memory and set aside, written outside their folder.
#[test]
fn kerchunk_per_file_references_combine_as_xarray_reads_the_files() {
    let dir = tempfile::tempdir().unwrap();
    let expected: serde_json::Value = combine_expected("refsets");
    let forms = [["range", "range", "range"], ["inline", "inline", "inline"], ["inline", "range", "inline"]];
    for forms in forms {
        for (memory, name) in [("64", "c.json"), ("0", "c.parq")] {
            let out = dir.path().join(name);
            let refs = out.to_str().unwrap();
            let sets: Vec<String> =
                [2, 0, 1].iter().map(|&n| file(&format!("refsets_{n}.{}.json", forms[n]))).collect();
            let mut args = vec!["combine"];
            args.extend(sets.iter().map(String::as_str));
            args.extend(["--concat", "time", "--combine-memory", memory, "-o", refs]);
            let (code, _, stderr) = run(&args);
            assert_eq!(code, 0, "{stderr}");
            assert!(stderr.contains("of 3 set(s) written"), "{stderr}");
            let context = format!("{forms:?} into {name} at --combine-memory {memory}");
            for array in ["time", "time_bnds"] {
                let theirs = texts(&expected[array]);
                let ours: Vec<String> = cat_dates(refs, array);
                assert_eq!(ours, theirs, "{array}, {context}");
            }
            let npy = dir.path().join("t.npy");
            assert_eq!(cat_f32(refs, "t", &npy), expected_f32(&expected["t"]), "t, {context}");
        }
    }
    // A pattern names them all.
    let out = dir.path().join("pattern.json");
    let pattern = file("refsets_*.range.json");
    let (code, _, stderr) = run(&["combine", &pattern, "--concat", "time", "-o", out.to_str().unwrap()]);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(cat_dates(out.to_str().unwrap(), "time"), texts(&expected["time"]));
}

/// Our own per-file references of files packed each their own way combine no better than the
/// files: refused naming the set, the array, the attribute and both values.
#[test]
fn sets_packed_each_their_own_way_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let mut sets = Vec::new();
    for n in 0..2 {
        let out = dir.path().join(format!("packed_{n}.json"));
        let (code, _, stderr) = run(&["scan", &file(&format!("packed_{n}.nc")), "-o", out.to_str().unwrap()]);
        assert_eq!(code, 0, "{stderr}");
        sets.push(out.to_str().unwrap().to_owned());
    }
    let out = dir.path().join("combined.json");
    let (code, _, stderr) = run(&["combine", &sets[1], &sets[0], "--concat", "time", "-o", out.to_str().unwrap()]);
    assert_one_line_error(code, &stderr);
    let expected = format!("cannot combine {}: \"t\": its scale_factor 0.02 differs from {}'s 0.01", sets[1], sets[0]);
    assert!(stderr.contains(&expected), "{expected}\n{stderr}");
    assert!(!out.exists());
}

/// Sets without a dimension to combine along, or a set that is not one, are one-line errors
/// naming what is wrong.
#[test]
fn combine_without_a_dimension_or_a_set_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out.json");
    let (a, b) = (file("refsets_0.range.json"), file("refsets_1.range.json"));
    let (code, _, stderr) = run(&["combine", &a, &b, "-o", out.to_str().unwrap()]);
    assert_one_line_error(code, &stderr);
    assert!(stderr.contains("--concat"), "{stderr}");
    let not_a_set = file("refsets_0.nc");
    let (code, _, stderr) = run(&["combine", &a, &not_a_set, "--concat", "time", "-o", out.to_str().unwrap()]);
    assert_one_line_error(code, &stderr);
    assert!(stderr.contains(&format!("{not_a_set}: cannot open it")), "{stderr}");
}

/// A set holding a reference no document can hold (`[url, offset]`) is refused when combined or
/// merged, naming the set and its own key: combined, the key would be renumbered, and the output
/// could not be written.
#[test]
fn a_malformed_reference_is_refused_naming_the_set_and_its_key() {
    let dir = tempfile::tempdir().unwrap();
    let mut set: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(file("refsets_1.range.json")).unwrap()).unwrap();
    let refs = set["refs"].as_object_mut().unwrap();
    let key = refs.keys().find(|key| key.starts_with("t/") && refs[*key].is_array()).unwrap().clone();
    refs[&key].as_array_mut().unwrap().truncate(2);
    let malformed = dir.path().join("malformed.json");
    std::fs::write(&malformed, set.to_string()).unwrap();
    let (first, malformed) = (file("refsets_0.range.json"), malformed.to_str().unwrap().to_owned());
    let out = dir.path().join("out.json");
    for how in [&["--concat", "time"][..], &["--merge"]] {
        let mut args = vec!["combine", &first, &malformed, "-o", out.to_str().unwrap()];
        args.extend(how);
        let (code, _, stderr) = run(&args);
        assert_one_line_error(code, &stderr);
        let expected = format!("{malformed}: key \"{key}\" has a malformed reference: a reference array has 1 element");
        assert!(stderr.contains(&expected), "{how:?}: {expected}\n{stderr}");
        assert!(!out.exists());
    }
}

/// Sets of every kind `convert` writes combine alike: parquet roots (beside copies of the files
/// their relative URLs name) and icechunk repositories, read as `open_mfdataset` reads the files.
#[test]
fn parquet_roots_and_icechunk_repositories_combine_too() {
    let dir = tempfile::tempdir().unwrap();
    let expected: serde_json::Value = combine_expected("refsets");
    let (mut roots, mut repositories) = (Vec::new(), Vec::new());
    for n in [1, 2, 0] {
        std::fs::copy(file(&format!("refsets_{n}.nc")), dir.path().join(format!("refsets_{n}.nc"))).unwrap();
        let root = dir.path().join(format!("r{n}.parq")).to_str().unwrap().to_owned();
        let repository = format!("icechunk://{}", dir.path().join(format!("ic{n}")).to_str().unwrap());
        for output in [&root, &repository] {
            let (code, _, stderr) = run(&["convert", &file(&format!("refsets_{n}.range.json")), output]);
            assert_eq!(code, 0, "{stderr}");
        }
        roots.push(root);
        repositories.push(repository);
    }
    for (kind, sets) in [("parquet", roots), ("icechunk", repositories)] {
        let out = dir.path().join(format!("{kind}.json"));
        let mut args = vec!["combine"];
        args.extend(sets.iter().map(String::as_str));
        args.extend(["--concat", "time", "-o", out.to_str().unwrap()]);
        let (code, _, stderr) = run(&args);
        assert_eq!(code, 0, "{kind}: {stderr}");
        let refs = out.to_str().unwrap();
        for array in ["time", "time_bnds"] {
            let ours: Vec<String> = cat_dates(refs, array);
            assert_eq!(ours, texts(&expected[array]), "{kind}: {array}");
        }
        let npy = dir.path().join("t.npy");
        assert_eq!(cat_f32(refs, "t", &npy), expected_f32(&expected["t"]), "{kind}: t");
    }
}

/// A set combined from sets is appended to as a scan's is: the third file's kerchunk JSON
/// added to the first two's combine (JSON, and a parquet root written back in place) reads as
/// `open_mfdataset` reads all three; a set it has already is an error naming it, or left out
/// with `--skip-existing`.
#[test]
fn sets_are_appended_to_a_combined_set() {
    let dir = tempfile::tempdir().unwrap();
    let expected: serde_json::Value = combine_expected("refsets");
    let set = |n: usize| file(&format!("refsets_{n}.range.json"));
    for name in ["a.json", "a.parq"] {
        let out = dir.path().join(name);
        let refs = out.to_str().unwrap();
        let (code, _, stderr) = run(&["combine", &set(1), &set(0), "--concat", "time", "-o", refs]);
        assert_eq!(code, 0, "{stderr}");
        let (code, _, stderr) = run(&["combine", &set(2), "--append-to", refs]);
        assert_eq!(code, 0, "{name}: {stderr}");
        for array in ["time", "time_bnds"] {
            let ours: Vec<String> = cat_dates(refs, array);
            assert_eq!(ours, texts(&expected[array]), "{name}: {array}");
        }
        let npy = dir.path().join("t.npy");
        assert_eq!(cat_f32(refs, "t", &npy), expected_f32(&expected["t"]), "{name}: t");
        let (code, _, stderr) = run(&["combine", &set(1), "--append-to", refs]);
        assert_one_line_error(code, &stderr);
        assert!(stderr.contains(&format!("{} is in {refs} already", set(1))), "{stderr}");
        let (code, _, stderr) = run(&["combine", &set(1), "--append-to", refs, "--skip-existing"]);
        assert_eq!(code, 0, "{stderr}");
        assert_eq!(cat_f32(refs, "t", &npy), expected_f32(&expected["t"]), "{name}: t after --skip-existing");
    }
}

/// kerchunk's version 0 (a flat map of keys, as `SingleHdf5ToZarr(spec=0)` writes) combines as
/// version 1 does: the same per-file references, written flat beside copies of their files.
#[test]
fn version_0_sets_combine_too() {
    let dir = tempfile::tempdir().unwrap();
    let mut sets = Vec::new();
    for n in [2, 0, 1] {
        std::fs::copy(file(&format!("refsets_{n}.nc")), dir.path().join(format!("refsets_{n}.nc"))).unwrap();
        let v1: serde_json::Value =
            serde_json::from_slice(&std::fs::read(file(&format!("refsets_{n}.inline.json"))).unwrap()).unwrap();
        let path = dir.path().join(format!("v0_{n}.json"));
        std::fs::write(&path, serde_json::to_vec(&v1["refs"]).unwrap()).unwrap();
        sets.push(path.to_str().unwrap().to_owned());
    }
    let out = dir.path().join("v0.json");
    let (code, _, stderr) =
        run(&["combine", &sets[0], &sets[1], &sets[2], "--concat", "time", "-o", out.to_str().unwrap()]);
    assert_eq!(code, 0, "{stderr}");
    let expected = combine_expected("refsets");
    let refs = out.to_str().unwrap();
    assert_eq!(cat_dates(refs, "time_bnds"), texts(&expected["time_bnds"]));
    assert_eq!(cat_f32(refs, "t", &dir.path().join("t.npy")), expected_f32(&expected["t"]));
}
