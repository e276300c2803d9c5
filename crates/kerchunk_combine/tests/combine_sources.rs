//! Files whose coordinate along the combined dimension is not in their data
//! (`tests/scan/combine`, made by its `make.py` with netCDF4): an ensemble
//! member only in the file's name, a date in the name and in a global
//! attribute. Combined with `combine_with`, the set reads what xarray's
//! `open_mfdataset(combine="nested")` gives with each file's value added in
//! `preprocess`: the new dimension first, the files in the order of their
//! values, the coordinates that are the same in every file kept once.

use std::sync::Arc;

mod combine_support;

use combine_support::{chunks, combined, expected, folder};
use kerchunk::{ParseOptions, ReferenceSet};
use kerchunk_combine::{CombineOptions, CoordinateSource};
use kerchunk_scan::{ScanOptions, scan};
use object_store::ObjectStore;
use object_store::local::LocalFileSystem;
use object_store::path::Path as StorePath;
use serde_json::Value;
use zarrs::array::Array;
use zarrs_cf::Variable;
use zarrs_kerchunk::{ReferenceStore, ReferenceStoreBuilder};

/// The files of a case (`CASE_*.nc`), scanned, in the order of their names.
fn scans(case: &str) -> Vec<(String, ReferenceSet)> {
    let mut files: Vec<String> = std::fs::read_dir(folder())
        .unwrap()
        .map(|entry| entry.unwrap().file_name().into_string().unwrap())
        .filter(|name| name.starts_with(&format!("{case}_")) && name.to_ascii_lowercase().ends_with(".nc"))
        .collect();
    files.sort();
    assert!(files.len() >= 2, "{case}: {files:?}");
    scan_files(&files)
}

/// `files` of the folder, scanned.
fn scan_files(files: &[String]) -> Vec<(String, ReferenceSet)> {
    let store: Arc<dyn ObjectStore> = Arc::new(LocalFileSystem::new_with_prefix(folder()).unwrap());
    let runtime = tokio::runtime::Runtime::new().unwrap();
    // The coordinates held inline: `time` and `member`, as a coordinate from the data must be,
    // and `x`, whose values are compared only when inline (as the default threshold holds such
    // arrays).
    let options = ScanOptions::default().with_inline_threshold(0).with_inlined_variables(["time", "member", "x"]);
    files
        .iter()
        .map(|file| {
            let scan = runtime.block_on(scan(&store, &StorePath::from(file.as_str()), file, &options)).unwrap();
            (file.clone(), scan.references)
        })
        .collect()
}

fn along(dimension: &str, source: CoordinateSource) -> CombineOptions {
    CombineOptions::new(dimension).with_coordinate(source)
}

fn open(set: ReferenceSet) -> Arc<ReferenceStore> {
    let base = folder().join("refs.json");
    Arc::new(ReferenceStoreBuilder::new().build(set, base.to_str().unwrap()).unwrap())
}

/// Nested JSON lists of numbers, flattened in C order as float32.
fn flatten(value: &Value, out: &mut Vec<f32>) {
    match value {
        Value::Array(items) => items.iter().for_each(|item| flatten(item, out)),
        #[expect(clippy::cast_possible_truncation, reason = "the values were written as float32")]
        number => out.push(number.as_f64().unwrap() as f32),
    }
}

/// `t`'s values and dimensions against `open_mfdataset`'s.
fn check_t(store: &Arc<ReferenceStore>, expected: &Value, case: &str) {
    let t = Array::open(store.clone(), "/t").unwrap();
    let values = t.retrieve_array_subset::<Vec<f32>>(&t.subset_all()).unwrap();
    let mut theirs = Vec::new();
    flatten(&expected["t"], &mut theirs);
    assert_eq!(values, theirs, "{case}: t as open_mfdataset gives it");
    let dims = t.attributes()["_ARRAY_DIMENSIONS"].clone();
    assert_eq!(dims, expected["t_dims"], "{case}: t's dimensions");
}

#[test]
fn an_ensemble_member_from_the_file_name_is_a_new_dimension() {
    let source: CoordinateSource = r"name:_m(\d+)\.nc$".parse().unwrap();
    let combined = combined(scans("members"), &along("member", source)).unwrap();
    // t's chunks are where kerchunk's MultiZarrToZarr (the regex in coo_map) puts them.
    assert_eq!(chunks(&combined, "t"), kerchunk_chunks("members", "t"), "MultiZarrToZarr's chunks");
    let store = open(combined);
    let expected = expected("members");
    let member = Array::open(store.clone(), "/member").unwrap();
    let members = member.retrieve_array_subset::<Vec<i64>>(&member.subset_all()).unwrap();
    let theirs: Vec<i64> = expected["member"].as_array().unwrap().iter().map(|v| v.as_i64().unwrap()).collect();
    assert_eq!(members, theirs, "members ordered as numbers (2, 7, 11), not as text");
    check_t(&store, &expected, "members");
    // time and x are coordinates, the same in every file: kept once, without the new dimension.
    let time = Array::open(store.clone(), "/time").unwrap();
    assert_eq!(time.shape(), [2]);
}

#[test]
fn a_date_from_the_file_name_or_an_attribute_is_a_time_dimension() {
    let expected = expected("dated");
    let theirs: Vec<&str> = expected["time"].as_array().unwrap().iter().map(|v| v.as_str().unwrap()).collect();
    for source in [r"name:dated_(\d{8})\.nc:%Y%m%d", "attr:date"] {
        let combined = combined(scans("dated"), &along("time", source.parse().unwrap())).unwrap();
        let store = open(combined);
        let time = Variable::open(store.clone(), "/time").unwrap();
        let all = time.select(&[]).unwrap();
        let dates: Vec<String> =
            time.read_times(&all).unwrap().iter().map(|d| d.expect("a date").to_string()).collect();
        assert_eq!(dates, theirs, "{source}: the dates open_mfdataset gives");
        check_t(&store, &expected, source);
    }
    // In units asked for: the same dates, and those units written.
    let source: CoordinateSource = "attr:date".parse().unwrap();
    let options = along("time", source).with_time_units("hours since 2019-12-31", None).unwrap();
    let store = open(combined(scans("dated"), &options).unwrap());
    let time = Variable::open(store.clone(), "/time").unwrap();
    let all = time.select(&[]).unwrap();
    let dates: Vec<String> = time.read_times(&all).unwrap().iter().map(|d| d.expect("a date").to_string()).collect();
    assert_eq!(dates, theirs, "in hours since 2019-12-31");
    let units = Array::open(store, "/time").unwrap().attributes()["units"].clone();
    assert_eq!(units, "hours since 2019-12-31");
}

#[test]
fn a_file_without_a_value_or_with_anothers_is_an_error_naming_it() {
    let source: CoordinateSource = r"name:_x(\d+)\.nc$".parse().unwrap();
    let err = combined(scans("members"), &along("member", source)).unwrap_err().to_string();
    assert!(err.contains("members_m11.nc") && err.contains("does not match"), "{err}");
    let source: CoordinateSource = r"name:^(members)_".parse().unwrap();
    let err = combined(scans("members"), &along("member", source)).unwrap_err().to_string();
    assert!(err.contains("is not a number"), "{err}");
    let source: CoordinateSource = r"name:_(\d{4})\d+\.nc$".parse().unwrap();
    let err = combined(scans("dated"), &along("time", source)).unwrap_err().to_string();
    assert!(err.contains("its value 2020 is also dated_"), "every file gives 2020: {err}");
    let err = combined(scans("members"), &along("member", "attr:member".parse().unwrap())).unwrap_err().to_string();
    assert!(err.contains("no global attribute member"), "{err}");
    for (bad, reason) in [
        ("name:no-group", "the regex needs a capture group"),
        ("name:(", "regex parse error"),
        ("attr:", "attr: needs an attribute name"),
        ("nonsense", "expected data, cf, name:REGEX, name:REGEX:FORMAT or attr:NAME"),
    ] {
        let err = bad.parse::<CoordinateSource>().unwrap_err().to_string();
        assert!(err.starts_with(&format!("invalid combining option {bad:?}: ")) && err.contains(reason), "{err}");
    }
}

/// The data chunks of `path` in what kerchunk's `MultiZarrToZarr` made of `case`
/// (`CASE.kerchunk.json`, by `make.py`).
fn kerchunk_chunks(case: &str, path: &str) -> Vec<(String, String, u64, u64)> {
    let text = std::fs::read(folder().join(format!("{case}.kerchunk.json"))).unwrap();
    chunks(&ReferenceSet::from_json(&text[..], &ParseOptions::default()).unwrap(), path)
}

/// `t`, `member` and `time` of a set of members × times against `open_mfdataset`'s (`CASE.expected.json`).
fn check_members_and_times(store: &Arc<ReferenceStore>, case: &str) {
    let expected = expected(case);
    check_t(store, &expected, case);
    // Members from names are written as int64; from the data, as the files hold them (int32).
    let member = Array::open(store.clone(), "/member").unwrap();
    let all = member.subset_all();
    let members: Vec<i64> = match member.retrieve_array_subset::<Vec<i64>>(&all) {
        Ok(members) => members,
        Err(_) => member.retrieve_array_subset::<Vec<i32>>(&all).unwrap().into_iter().map(i64::from).collect(),
    };
    let theirs: Vec<i64> = expected["member"].as_array().unwrap().iter().map(|v| v.as_i64().unwrap()).collect();
    assert_eq!(members, theirs, "{case}: member");
    let time = Variable::open(store.clone(), "/time").unwrap();
    let dates: Vec<String> =
        time.read_times(&time.select(&[]).unwrap()).unwrap().iter().map(|d| d.expect("a date").to_string()).collect();
    let theirs: Vec<&str> = expected["time"].as_array().unwrap().iter().map(|v| v.as_str().unwrap()).collect();
    assert_eq!(dates, theirs, "{case}: time");
}

/// Two dimensions at once: members 7 and 2 (in the names) × two files each
/// along time (in the data), read as `open_mfdataset` nested along
/// `["member", "time"]` gives them: t(member, time, x), its chunks where kerchunk's
/// `MultiZarrToZarr` puts them.
#[test]
fn members_by_name_and_times_by_data_combine_on_two_dimensions() {
    let source: CoordinateSource = r"name:_m(\d+)_".parse().unwrap();
    let options = CombineOptions::new("time").then_along("member", source).unwrap();
    let combined = combined(scans("ens"), &options).unwrap();
    // Where MultiZarrToZarr (concat_dims member and time, the member's regex in coo_map) puts them.
    assert_eq!(chunks(&combined, "t"), kerchunk_chunks("ens", "t"), "MultiZarrToZarr's chunks");
    check_members_and_times(&open(combined), "ens");
    // The same dimension twice is refused.
    let source: CoordinateSource = r"name:_m(\d+)_".parse().unwrap();
    let err = CombineOptions::new("time").then_along("time", source).unwrap_err().to_string();
    assert_eq!(err, r#"invalid combining option "time": the files are combined along it already"#);
}

/// Two dimensions both in the data (`ensdata_m*_*.nc`: each file one member, in a `member`
/// dimension of length one and its coordinate, and two times): read as
/// `open_mfdataset(combine="by_coords")` reads them, the chunks where kerchunk's `MultiZarrToZarr`
/// puts them. Files with no coordinate along the outer
/// dimension, or one of several values, are an error naming one.
#[test]
fn members_and_times_both_in_the_data_combine_on_two_dimensions() {
    for source in [CoordinateSource::Auto, CoordinateSource::Data] {
        let options = CombineOptions::new("time").then_along("member", source).unwrap();
        let combined = combined(scans("ensdata"), &options).unwrap();
        assert_eq!(chunks(&combined, "t"), kerchunk_chunks("ensdata", "t"), "MultiZarrToZarr's chunks");
        check_members_and_times(&open(combined), "ensdata");
    }
    let options = CombineOptions::new("time").then_along("member", CoordinateSource::Auto).unwrap();
    // `ens` holds its member only in its names.
    let error = combined(scans("ens"), &options).unwrap_err().to_string();
    assert!(error.contains("ens_m") && error.contains("member") && error.contains("no coordinate"), "{error}");
    // With time outside member, each file's time coordinate holds two values.
    let options = CombineOptions::new("member").then_along("time", CoordinateSource::Auto).unwrap();
    let error = combined(scans("ensdata"), &options).unwrap_err().to_string();
    assert!(error.contains("ensdata_m") && error.contains("holds 2 values"), "{error}");
}

/// One file per variable (`merged_t.nc`, `merged_rh.nc`), merged: both
/// variables, the shared coordinates once, as xarray's merge gives them; a
/// file whose shared coordinate differs is an error naming it and the array.
#[test]
fn files_of_one_variable_each_merge() {
    let merged = kerchunk_combine::merge(scan_files(&["merged_t.nc".into(), "merged_rh.nc".into()]), None).unwrap();
    let store = open(merged);
    let expected = expected("merged");
    for name in ["t", "rh", "x"] {
        let array = Array::open(store.clone(), &format!("/{name}")).unwrap();
        let values = array.retrieve_array_subset::<Vec<f32>>(&array.subset_all()).unwrap();
        let mut theirs = Vec::new();
        flatten(&expected[name], &mut theirs);
        assert_eq!(values, theirs, "{name}");
    }
    let err = kerchunk_combine::merge(scan_files(&["merged_t.nc".into(), "merged_rh_other_x.nc".into()]), None)
        .unwrap_err()
        .to_string();
    assert!(err.contains("merged_rh_other_x.nc") && err.contains("\"x\"") && err.contains("values differ"), "{err}");
}
