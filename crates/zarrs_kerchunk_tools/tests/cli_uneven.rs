//! Files of uneven length along time combined (issue 52; `tests/scan/uneven`, made by its
//! `make.py`): lengths that are not a multiple of the chunk length (HDF5's padded last chunks, in
//! the middle of the combined array), one chunk a file, time a later axis, NetCDF-3, and a leap
//! year. Each set is written as Zarr v3 on a rectilinear chunk grid and reads as xarray reads
//! the files opened one by one and concatenated.
#![cfg(feature = "cli")]

mod cli_support;
#[path = "../../zarrs_kerchunk/tests/common/mod.rs"]
mod common;

use cli_support::{cat_dates, cat_f32, expected_f32, run, texts};
use serde_json::{Value, json};

fn file(name: &str) -> String {
    common::workspace_root().join("tests/scan/uneven").join(name).to_str().unwrap().to_owned()
}

fn expected(case: &str) -> Value {
    serde_json::from_slice(&std::fs::read(file(&format!("{case}.expected.json"))).unwrap()).unwrap()
}

/// The `zarr.json` of `array` in the JSON references at `refs`.
fn node(refs: &std::path::Path, array: &str) -> Value {
    let set: Value = serde_json::from_slice(&std::fs::read(refs).unwrap()).unwrap();
    let text = set["refs"][format!("{array}/zarr.json")].as_str().unwrap_or_else(|| panic!("no {array}/zarr.json"));
    serde_json::from_str(text).unwrap()
}

/// Each case scanned and combined, chunks held in memory and set aside, and held as ranges or
/// inline, as JSON and as a parquet root: t's values equal xarray's exactly, the times its
/// dates; the grid along time is each file's chunks, and the crop codec is there exactly where
/// a file's last chunk is stored whole in the middle of the array.
#[test]
fn uneven_files_read_as_xarray_concatenates_them() {
    let dir = tempfile::tempdir().unwrap();
    // (case, files, t's chunks along time as written, the stored chunk length if cropped)
    let cases = [
        ("padded", 3, json!([[10, 3], 1, [10, 2], 8, [10, 4]]), Some(10)),
        ("whole", 3, json!([31, 28, 31]), None),
        ("later", 3, json!([[10, 3], 1, [10, 2], 8, [10, 4]]), Some(10)),
        ("classic", 3, json!([31, 28, 31]), None),
        ("leap", 2, json!([[100, 3], 65, [100, 4]]), Some(100)),
    ];
    for (case, count, edges, stored) in cases {
        let truth = expected(case);
        let axis = truth["dims"].as_array().unwrap().iter().position(|d| d == "time").unwrap();
        let files: Vec<String> = (0..count).map(|n| file(&format!("{case}_{n}.nc"))).collect();
        for (memory, threshold) in [("64", "500"), ("0", "0")] {
            let out = dir.path().join(format!("{case}_{memory}.json"));
            let mut args = vec!["scan"];
            args.extend(files.iter().map(String::as_str));
            args.extend(["--concat", "time", "--combine-memory", memory, "--inline-threshold", threshold]);
            args.extend(["-o", out.to_str().unwrap()]);
            let (code, _, stderr) = run(&args);
            assert_eq!(code, 0, "{case}: {stderr}");
            let t = node(&out, "t");
            assert_eq!(t["chunk_grid"]["name"], "rectilinear", "{case}");
            assert_eq!(t["chunk_grid"]["configuration"]["chunk_shapes"][axis], edges, "{case}");
            let crop = t["codecs"][0]["configuration"]["stored_chunk_shape"][axis].as_u64();
            assert_eq!(crop, stored, "{case}: the crop codec where a chunk is stored whole");
            assert_eq!(t["dimension_names"], truth["dims"], "{case}");
            let refs = out.to_str().unwrap();
            let npy = dir.path().join("t.npy");
            assert_eq!(cat_f32(refs, "t", &npy), expected_f32(&truth["t"]), "{case} at {memory} MiB, {threshold}");
            let dates = cat_dates(refs, "time");
            assert_eq!(dates, texts(&truth["time"]), "{case}");
            // `stats` counts t's chunks as its grid's, none stray or missing.
            let (code, stdout, stderr) = run(&["stats", refs]);
            assert_eq!(code, 0, "{stderr}");
            let row: Vec<&str> = stdout.lines().find(|l| l.starts_with("t ")).unwrap().split_whitespace().collect();
            let shapes = t["chunk_grid"]["configuration"]["chunk_shapes"].as_array().unwrap();
            let chunks: u64 = shapes.iter().map(edges_count).product();
            assert_eq!(row[4..7], ["0", &chunks.to_string(), "0"], "{case}: stray, chunks, missing:\n{stdout}");
        }
        // The same as a parquet root (which only this project reads as Zarr v3).
        let root = dir.path().join(format!("{case}.parq"));
        let mut args = vec!["scan"];
        args.extend(files.iter().map(String::as_str));
        args.extend(["--concat", "time", "--inline-threshold", "0", "-o", root.to_str().unwrap()]);
        let (code, _, stderr) = run(&args);
        assert_eq!(code, 0, "{case}: {stderr}");
        let refs = root.to_str().unwrap();
        assert_eq!(cat_f32(refs, "t", &dir.path().join("t.npy")), expected_f32(&truth["t"]), "{case} as parquet");
        assert_eq!(cat_dates(refs, "time"), texts(&truth["time"]), "{case} as parquet");
    }
}

/// `plot` draws an uneven set's array (each cell read through the crop codec) and the series at
/// one place, against the dates along the uneven axis.
#[test]
fn uneven_sets_are_plotted() {
    let dir = tempfile::tempdir().unwrap();
    let files: Vec<String> = (0..3).map(|n| file(&format!("padded_{n}.nc"))).collect();
    let out = dir.path().join("padded.json");
    let (code, _, stderr) =
        run(&["scan", &files[0], &files[1], &files[2], "--concat", "time", "-o", out.to_str().unwrap()]);
    assert_eq!(code, 0, "{stderr}");
    let map = dir.path().join("map.png");
    let (code, stdout, stderr) = run(&["plot", out.to_str().unwrap(), "t", "-o", map.to_str().unwrap()]);
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.contains("4x90 cells"), "{stdout}");
    let (width, height, transparent, colours) = cli_support::pixel_statistics(&map);
    assert_eq!((width, height, transparent), (900, 600, 0), "no fill value drawn");
    assert!(colours > 100, "a colour per value, a colour bar and text: {colours}");
    let line = dir.path().join("line.png");
    let (code, _, stderr) = run(&["plot", out.to_str().unwrap(), "t", ":,0", "-o", line.to_str().unwrap()]);
    assert_eq!(code, 0, "{stderr}");
    assert!(line.exists());
}

/// The number of chunks of a run-length encoded list of edges.
fn edges_count(edges: &Value) -> u64 {
    edges.as_array().unwrap().iter().map(|run| run.as_array().map_or(1, |pair| pair[1].as_u64().unwrap())).sum()
}

/// kerchunk's own per-file references to the padded files (`SingleHdf5ToZarr`, chunks as ranges),
/// given out of order, combine as the files do: the same grid and crop, xarray's values.
#[test]
fn sets_others_made_of_uneven_files_combine_as_the_files_do() {
    let dir = tempfile::tempdir().unwrap();
    let truth = expected("padded");
    let sets: Vec<String> = [2, 0, 1].iter().map(|n| file(&format!("padded_{n}.kerchunk.json"))).collect();
    let out = dir.path().join("combined.json");
    let (code, _, stderr) =
        run(&["combine", &sets[0], &sets[1], &sets[2], "--concat", "time", "-o", out.to_str().unwrap()]);
    assert_eq!(code, 0, "{stderr}");
    let t = node(&out, "t");
    assert_eq!(t["chunk_grid"]["configuration"]["chunk_shapes"][0], json!([[10, 3], 1, [10, 2], 8, [10, 4]]));
    assert_eq!(t["codecs"][0]["configuration"]["stored_chunk_shape"], json!([10, 4]));
    let refs = out.to_str().unwrap();
    assert_eq!(cat_f32(refs, "t", &dir.path().join("t.npy")), expected_f32(&truth["t"]));
    assert_eq!(cat_dates(refs, "time"), texts(&truth["time"]));
}

/// A regular set appended to: 30 and 30 days, then 28 (still regular, its last chunk cut short),
/// then 31 after them, which makes the chunks uneven: the set becomes Zarr v3 and reads as
/// xarray concatenates the files (written as v2, the fourth file's days would read the third's
/// padding). Then the uneven set is appended to in its turn, its grid extended: all of it
/// against xarray's concatenation, and each file offered again skipped.
#[test]
fn appends_make_and_extend_uneven_sets() {
    let dir = tempfile::tempdir().unwrap();
    let truth = expected("appended");
    let files: Vec<String> = (0..4).map(|n| file(&format!("appended_{n}.nc"))).collect();
    let out = dir.path().join("set.json");
    let refs = out.to_str().unwrap();
    let (code, _, stderr) = run(&["scan", &files[0], &files[1], "--concat", "time", "-o", refs]);
    assert_eq!(code, 0, "{stderr}");
    for file in &files[2..] {
        let (code, _, stderr) = run(&["scan", file, "--append-to", refs, "-o", refs]);
        assert_eq!(code, 0, "{stderr}");
    }
    let t = node(&out, "t");
    assert_eq!(t["chunk_grid"]["configuration"]["chunk_shapes"][0], json!([[10, 8], 8, [10, 4]]));
    assert_eq!(cat_f32(refs, "t", &dir.path().join("t.npy")), expected_f32(&truth["t"]));
    assert_eq!(cat_dates(refs, "time"), texts(&truth["time"]));
    // The padded files after it: 31 days ending on a cut chunk, 28, 31; each file at once.
    let more: Vec<String> = (0..3).map(|n| file(&format!("later_months_{n}.nc"))).collect();
    for file in &more {
        let (code, _, stderr) = run(&["scan", file, "--append-to", refs, "-o", refs, "--skip-existing"]);
        assert_eq!(code, 0, "{stderr}");
    }
    let (code, _, stderr) = run(&["scan", &files[3], "--append-to", refs, "-o", refs, "--skip-existing"]);
    assert_eq!(code, 0, "{stderr}");
    let all = expected("appended_then");
    let t = node(&out, "t");
    assert_eq!(
        t["chunk_grid"]["configuration"]["chunk_shapes"][0],
        json!([[10, 8], 8, [10, 3], 1, [10, 3], 1, [10, 2], 8, [10, 4]])
    );
    assert_eq!(t["codecs"][0]["configuration"]["stored_chunk_shape"], json!([10, 3]));
    assert_eq!(cat_f32(refs, "t", &dir.path().join("t.npy")), expected_f32(&all["t"]));
    assert_eq!(cat_dates(refs, "time"), texts(&all["time"]));
    // The same appends onto a parquet root, written in place as it turns from v2 to v3.
    let root = dir.path().join("set.parq");
    let refs = root.to_str().unwrap();
    let (code, _, stderr) = run(&["scan", &files[0], &files[1], "--concat", "time", "-o", refs]);
    assert_eq!(code, 0, "{stderr}");
    for file in files[2..].iter().chain(&more) {
        let (code, _, stderr) = run(&["scan", file, "--append-to", refs, "-o", refs]);
        assert_eq!(code, 0, "{stderr}");
    }
    assert_eq!(cat_f32(refs, "t", &dir.path().join("t.npy")), expected_f32(&all["t"]), "as parquet");
    assert_eq!(cat_dates(refs, "time"), texts(&all["time"]), "as parquet");
}
