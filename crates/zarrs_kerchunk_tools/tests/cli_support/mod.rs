//! What the command line's test binaries share: running it, and reading what it wrote.
#![allow(dead_code, reason = "each test binary uses a part")]

use std::path::{Path, PathBuf};

use assert_cmd::Command;

use crate::common::{Case, read_npy};

pub(crate) fn cli() -> Command {
    Command::cargo_bin("zarrs-kerchunk").unwrap()
}

/// Run the command line; return its exit code, stdout and stderr.
pub(crate) fn run(args: &[&str]) -> (i32, String, String) {
    let output = cli().args(args).output().unwrap();
    let text = |bytes: &[u8]| String::from_utf8_lossy(bytes).into_owned();
    (output.status.code().unwrap_or(-1), text(&output.stdout), text(&output.stderr))
}

/// A reference file of `case`: JSON if it has one.
pub(crate) fn any_refs(case: &Case) -> PathBuf {
    case.dir.join(case.references(true).into_iter().chain(case.references(false)).next().unwrap())
}

pub(crate) fn case(name: &str) -> Case {
    Case::all().into_iter().find(|c| c.name == name).unwrap()
}

/// The elements of a `.npy` file in native byte order, with their size.
pub(crate) fn native_values(path: &Path) -> (Vec<u64>, usize, Vec<u8>) {
    let npy = read_npy(path);
    let size: usize = npy.descr[2..].parse().unwrap();
    let mut data = npy.data;
    if npy.descr.starts_with('>') && size > 1 {
        data.chunks_mut(size).for_each(<[u8]>::reverse);
    }
    (npy.shape, size, data)
}

/// An error is one line on stderr, with exit code 2, and never a panic or backtrace.
pub(crate) fn assert_one_line_error(code: i32, stderr: &str) {
    assert_eq!(code, 2, "{stderr}");
    assert_eq!(stderr.trim_end().lines().count(), 1, "{stderr}");
    assert!(stderr.starts_with("zarrs-kerchunk: error: "), "{stderr}");
    assert!(!stderr.contains("panicked") && !stderr.contains("backtrace"), "{stderr}");
}

/// The pixels of a PNG: (width, height, transparent pixels, distinct opaque colours).
pub(crate) fn pixel_statistics(png: &Path) -> (u32, u32, usize, usize) {
    let image = image::open(png).unwrap().to_rgba8();
    let transparent = image.pixels().filter(|p| p.0[3] == 0).count();
    let colours: std::collections::HashSet<[u8; 4]> = image.pixels().filter(|p| p.0[3] == 255).map(|p| p.0).collect();
    (image.width(), image.height(), transparent, colours.len())
}

/// Nested JSON lists of numbers (what `make.py` writes of xarray's values), flattened in C order.
pub(crate) fn flatten_numbers(value: &serde_json::Value) -> Vec<f64> {
    fn flatten(value: &serde_json::Value, out: &mut Vec<f64>) {
        match value {
            serde_json::Value::Array(items) => items.iter().for_each(|item| flatten(item, out)),
            number => out.push(number.as_f64().unwrap()),
        }
    }
    let mut out = Vec::new();
    flatten(value, &mut out);
    out
}

/// The values `cat REFS ARRAY` prints, in C order: its rows are comments (`#`), then values,
/// after their place (`[member=2, ...]: `) if any.
pub(crate) fn cat_numbers(refs: &str, array: &str) -> Vec<f64> {
    cat_numbers_with(refs, array, &[])
}

/// [`cat_numbers`], with more options.
pub(crate) fn cat_numbers_with(refs: &str, array: &str, options: &[&str]) -> Vec<f64> {
    let mut args = vec!["cat", refs, array];
    args.extend(options);
    let (code, stdout, stderr) = run(&args);
    assert_eq!(code, 0, "{stderr}");
    numbers_of(&stdout)
}

/// The values of what `cat` printed, in C order.
pub(crate) fn numbers_of(stdout: &str) -> Vec<f64> {
    let rows = stdout.lines().filter(|line| !line.starts_with('#'));
    let values = rows.flat_map(|line| line.rsplit_once("]: ").map_or(line, |(_, values)| values).split_whitespace());
    values.map(|value| value.parse().unwrap_or_else(|_| panic!("{value} in {stdout}"))).collect()
}

/// The values of the float32 array `array` of `refs`, as `cat --npy` writes them to `npy`.
pub(crate) fn cat_f32(refs: &str, array: &str, npy: &Path) -> Vec<f32> {
    let (code, _, stderr) = run(&["cat", refs, array, "--npy", npy.to_str().unwrap()]);
    assert_eq!(code, 0, "{stderr}");
    let (_, size, bytes) = native_values(npy);
    assert_eq!(size, 4, "{array} is float32");
    bytes.chunks(4).map(|b| f32::from_le_bytes(b.try_into().unwrap())).collect()
}

/// Values `make.py` wrote of a float32 array (nested JSON lists), as float32, in C order.
pub(crate) fn expected_f32(value: &serde_json::Value) -> Vec<f32> {
    #[expect(clippy::cast_possible_truncation, reason = "the values were written as float32")]
    flatten_numbers(value).into_iter().map(|v| v as f32).collect()
}

/// A file of `tests/scan/combine` (made by its `make.py`), by its path.
pub(crate) fn combine_file(name: &str) -> String {
    crate::common::workspace_root().join("tests/scan/combine").join(name).to_str().unwrap().to_owned()
}

/// What `make.py` wrote of a case (`CASE.expected.json`).
pub(crate) fn combine_expected(case: &str) -> serde_json::Value {
    serde_json::from_slice(&std::fs::read(combine_file(&format!("{case}.expected.json"))).unwrap()).unwrap()
}

/// The dates `cat REFS ARRAY` prints, in C order, whole seconds without their nanoseconds
/// (as `make.py` writes xarray's).
pub(crate) fn cat_dates(refs: &str, array: &str) -> Vec<String> {
    let (code, stdout, stderr) = run(&["cat", refs, array]);
    assert_eq!(code, 0, "{stderr}");
    let rows = stdout.lines().filter(|line| !line.starts_with('#'));
    rows.flat_map(|line| line.rsplit_once("]: ").map_or(line, |(_, values)| values).split_whitespace())
        .map(|date| date.trim_end_matches(".000000000").to_owned())
        .collect()
}

/// The texts of nested JSON lists (what `make.py` writes of xarray's dates), in C order.
pub(crate) fn texts(value: &serde_json::Value) -> Vec<String> {
    match value {
        serde_json::Value::Array(items) => items.iter().flat_map(texts).collect(),
        text => vec![text.as_str().unwrap().to_owned()],
    }
}
