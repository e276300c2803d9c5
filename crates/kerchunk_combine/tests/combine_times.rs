//! Series whose files write their times in units of their own
//! (`tests/scan/combine`, made by its `make.py` with netCDF4): combined, the
//! times and values read what xarray's `open_mfdataset` gives for the same
//! files, and the data chunks are kerchunk's `MultiZarrToZarr` with
//! `coo_map={"time": "cf:time"}`.

use std::sync::Arc;

mod combine_support;

use combine_support::{chunks, combined, expected, folder};
use kerchunk::{ParseOptions, Reference, ReferenceSet};
use kerchunk_combine::CombineOptions;
use kerchunk_scan::{ScanOptions, scan};
use object_store::ObjectStore;
use object_store::local::LocalFileSystem;
use object_store::path::Path as StorePath;
use serde_json::Value;
use zarrs::array::Array;
use zarrs_cf::Variable;
use zarrs_kerchunk::ReferenceStoreBuilder;

/// The files of a case, scanned with their times inline, given in reverse
/// order (combining orders them by date).
fn scans(case: &str) -> Vec<(String, ReferenceSet)> {
    let store: Arc<dyn ObjectStore> = Arc::new(LocalFileSystem::new_with_prefix(folder()).unwrap());
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let options = ScanOptions::default().with_inline_threshold(0).with_inlined_variables(["time"]);
    // CASE_0.nc, CASE_1.nc, ... in reverse order.
    let files: Vec<String> =
        (0..10).rev().map(|n| format!("{case}_{n}.nc")).filter(|name| folder().join(name).exists()).collect();
    assert!(files.len() >= 2, "{case}: {files:?}");
    files
        .into_iter()
        .map(|file| {
            let scan = runtime.block_on(scan(&store, &StorePath::from(file.as_str()), &file, &options)).unwrap();
            (file, scan.references)
        })
        .collect()
}

#[test]
fn files_in_units_of_their_own_combine_by_date() {
    for case in ["units_by_day", "mixed_units", "noleap", "shorter_last"] {
        let combined = combined(scans(case), &CombineOptions::new("time")).unwrap_or_else(|e| panic!("{case}: {e}"));
        let text = std::fs::read(folder().join(format!("{case}.kerchunk.json"))).unwrap();
        let kerchunk = ReferenceSet::from_json(&text[..], &ParseOptions::default()).unwrap();
        assert_eq!(chunks(&combined, "t"), chunks(&kerchunk, "t"), "{case}: MultiZarrToZarr's chunks");
        let units = |set: &ReferenceSet| match set.get("time/.zattrs") {
            Some(Reference::Inline(text)) => serde_json::from_slice::<Value>(text).unwrap()["units"].clone(),
            other => panic!("{other:?}"),
        };
        assert_eq!(units(&combined), units(&kerchunk), "{case}: the first file's units, as kerchunk writes them");

        let base = folder().join("refs.json");
        let store = Arc::new(ReferenceStoreBuilder::new().build(combined, base.to_str().unwrap()).unwrap());
        let expected = expected(case);

        let time = Variable::open(store.clone(), "/time").unwrap();
        let all = time.select(&[]).unwrap();
        let dates = time.read_times(&all).unwrap();
        let dates: Vec<String> = dates.iter().map(|d| d.expect("a date").to_string()).collect();
        let theirs: Vec<&str> = expected["time"].as_array().unwrap().iter().map(|v| v.as_str().unwrap()).collect();
        assert_eq!(dates, theirs, "{case}: the times xarray's open_mfdataset gives");

        let t = Array::open(store, "/t").unwrap();
        let values = t.retrieve_array_subset::<Vec<f32>>(&t.subset_all()).unwrap();
        #[expect(clippy::cast_possible_truncation, reason = "the values were written as float32")]
        let theirs: Vec<f32> = expected["t"]
            .as_array()
            .unwrap()
            .iter()
            .flat_map(|row| row.as_array().unwrap().iter().map(|v| v.as_f64().unwrap() as f32))
            .collect();
        assert_eq!(values, theirs, "{case}: t as open_mfdataset gives it");
    }
}

/// Files in two calendars are an error naming both (xarray fails too:
/// `expected.json` holds its message).
#[test]
fn files_in_two_calendars_are_an_error() {
    assert!(expected("calendars_differ")["error"].as_str().unwrap().contains("mixed types"));
    let err = combined(scans("calendars_differ"), &CombineOptions::new("time")).unwrap_err().to_string();
    assert!(
        err.contains("calendars_differ_0.nc") && err.contains("calendars_differ_1.nc"),
        "the error names both files: {err}"
    );
    assert!(err.contains("noleap") && err.contains("standard"), "the error names both calendars: {err}");
}

/// Times written in units asked for (`--units`): the dates `open_mfdataset`
/// gives, in those units; a calendar other than the files' is an error.
#[test]
fn times_are_written_in_the_units_asked_for() {
    let options = CombineOptions::new("time").with_time_units("minutes since 2019-12-31 12:00", None).unwrap();
    let set = combined(scans("units_by_day"), &options).unwrap();
    let base = folder().join("refs.json");
    let store = Arc::new(ReferenceStoreBuilder::new().build(set, base.to_str().unwrap()).unwrap());
    let time = Variable::open(store.clone(), "/time").unwrap();
    let dates = time.read_times(&time.select(&[]).unwrap()).unwrap();
    let dates: Vec<String> = dates.iter().map(|d| d.expect("a date").to_string()).collect();
    let expected = expected("units_by_day");
    let theirs: Vec<&str> = expected["time"].as_array().unwrap().iter().map(|v| v.as_str().unwrap()).collect();
    assert_eq!(dates, theirs);
    let attributes = Array::open(store, "/time").unwrap().attributes().clone();
    assert_eq!(attributes["units"], "minutes since 2019-12-31 12:00");
    assert_eq!(attributes["calendar"], "standard");
    let options = CombineOptions::new("time").with_time_units("days since 2004-01-01", Some("standard")).unwrap();
    let err = combined(scans("noleap"), &options).unwrap_err().to_string();
    assert!(err.contains("calendar noleap differs from standard"), "{err}");
    let err = CombineOptions::new("time").with_time_units("metres", None).unwrap_err().to_string();
    assert_eq!(err, r#"invalid combining option "metres": not CF time units (<unit> since <date>)"#);
}
