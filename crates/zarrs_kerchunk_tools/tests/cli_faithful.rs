//! Combining never gives a silently wrong value (`tests/scan/combine`, made by its `make.py`):
//! files packed or masked each their own way are refused, naming the array, the attribute, two
//! files and their values; times along the dimension in units of each file's own (the
//! coordinate's bounds, an array with units of its own) are written again in one unit, and
//! read as xarray's `open_mfdataset` reads every file decoded on its own.
#![cfg(feature = "cli")]

mod cli_support;
#[path = "../../zarrs_kerchunk/tests/common/mod.rs"]
mod common;

use cli_support::{
    assert_one_line_error, cat_dates, cat_f32, combine_expected, combine_file as file, expected_f32, run, texts,
};

/// Each pair of `make.py`'s ENCODINGS differs in one attribute that changes what a value
/// decodes to: the scan is refused with one line naming the array, the attribute, both files
/// and both values, in memory and with the chunks set aside, as JSON and as parquet.
#[test]
fn files_that_decode_differently_are_refused_naming_the_attribute() {
    let dir = tempfile::tempdir().unwrap();
    // (the pair's name, the array, the attribute as named, the two values as JSON shows them)
    let cases = [
        ("scale_factor", "t", "scale_factor", "0.01", "0.02"),
        ("add_offset", "t", "add_offset", "273.15", "200.0"),
        // `_FillValue` is also the `.zarray`'s fill value, where it is compared first.
        ("fill_value", "t", "fill_value", "-999", "-9999"),
        ("missing_value", "t", "missing_value", "-999", "-9999"),
        ("valid_min", "t", "valid_min", "-100", "-200"),
        ("valid_max", "t", "valid_max", "100", "200"),
        ("valid_range", "t", "valid_range", "[-100,100]", "[-200,200]"),
        ("unsigned", "t", "_Unsigned", "\"false\"", "\"true\""),
        ("units", "t", "units", "\"K\"", "\"degC\""),
    ];
    for (name, array, attribute, first, second) in cases {
        for (memory, out) in [("64", "out.json"), ("0", "out.parq")] {
            let out = dir.path().join(out);
            let (a, b) = (file(&format!("encoding_{name}_0.nc")), file(&format!("encoding_{name}_1.nc")));
            let args = ["scan", &b, &a, "--concat", "time", "--combine-memory", memory, "-o", out.to_str().unwrap()];
            let (code, _, stderr) = run(&args);
            assert_one_line_error(code, &stderr);
            let expected =
                format!("cannot combine {b}: \"{array}\": its {attribute} {second} differs from {a}'s {first}");
            assert!(stderr.contains(&expected), "{name} at --combine-memory {memory}:\n{expected}\n{stderr}");
            assert!(!out.exists(), "{name}: nothing is written");
        }
    }
    // A time array's calendars differ: its dates cannot be one array.
    let (a, b) = (file("encoding_calendar_0.nc"), file("encoding_calendar_1.nc"));
    let out = dir.path().join("out.json");
    let (code, _, stderr) = run(&["scan", &a, &b, "--concat", "time", "-o", out.to_str().unwrap()]);
    assert_one_line_error(code, &stderr);
    let expected = format!(
        "cannot combine {b}: \"obs_time\": its times are in the noleap calendar (units \"days since 2020-01-01\" \
         (calendar \"noleap\")), where {a} writes them in the standard"
    );
    assert!(stderr.contains(&expected), "{expected}\n{stderr}");
}

/// Int16 temperatures packed with each file's own `scale_factor` and `add_offset`: what
/// kerchunk and `VirtualiZarr` combine into silently wrong values (`packed.kerchunk.json` keeps
/// the first file's) is refused; each file alone reads as xarray decodes it.
#[test]
fn files_packed_each_their_own_way_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let expected: serde_json::Value = combine_expected("packed");
    let files: Vec<String> = (0..3).map(|n| file(&format!("packed_{n}.nc"))).collect();
    let out = dir.path().join("packed.json");
    let (code, _, stderr) =
        run(&["scan", &files[0], &files[1], &files[2], "--concat", "time", "-o", out.to_str().unwrap()]);
    assert_one_line_error(code, &stderr);
    let refused = format!("cannot combine {}: \"t\": its scale_factor 0.02 differs from {}'s 0.01", files[1], files[0]);
    assert!(stderr.contains(&refused), "{refused}\n{stderr}");
    // Each file alone: its own packing, xarray's values (two times of three x each).
    let all = expected_f32(&expected["t"]);
    for (n, file) in files.iter().enumerate() {
        let one = dir.path().join(format!("packed_{n}.json"));
        let (code, _, stderr) = run(&["scan", file, "-o", one.to_str().unwrap()]);
        assert_eq!(code, 0, "{stderr}");
        let npy = dir.path().join("t.npy");
        let (code, _, stderr) = run(&["cat", one.to_str().unwrap(), "t", "--npy", npy.to_str().unwrap()]);
        assert_eq!(code, 0, "{stderr}");
        let (_, size, bytes) = cli_support::native_values(&npy);
        assert_eq!(size, 8, "unpacked as float64");
        let ours: Vec<f64> = bytes.chunks(8).map(|b| f64::from_le_bytes(b.try_into().unwrap())).collect();
        let theirs = &all[6 * n..6 * n + 6];
        for (i, (ours, theirs)) in ours.iter().zip(theirs).enumerate() {
            // xarray unpacks into float32 (scale_factor is a float32 attribute of an int16).
            #[expect(clippy::cast_possible_truncation, reason = "compared as xarray's float32")]
            let ours = *ours as f32;
            assert_eq!(ours.to_bits(), theirs.to_bits(), "packed_{n}.nc t[{i}]: {ours} against xarray's {theirs}");
        }
        assert_eq!(ours.len(), theirs.len());
    }
}

/// Times counted from each file's own day: `time`, its `time_bnds` (no units of their own: the
/// coordinate's) and `obs_time` (seconds from each file's noon) read, combined, as
/// `open_mfdataset` decodes every file on its own; in memory, set aside, and in parquet.
#[test]
fn times_along_the_dimension_are_written_again_in_one_unit() {
    let dir = tempfile::tempdir().unwrap();
    let expected: serde_json::Value = combine_expected("bounds");
    let files: Vec<String> = (0..3).rev().map(|n| file(&format!("bounds_{n}.nc"))).collect();
    for (memory, name, inline) in [("64", "b.json", "500"), ("0", "b.json", "0"), ("0", "b.parq", "0")] {
        let out = dir.path().join(name);
        let refs = out.to_str().unwrap();
        let mut args = vec!["scan"];
        args.extend(files.iter().map(String::as_str));
        args.extend(["--concat", "time", "--combine-memory", memory, "--inline-threshold", inline, "-o", refs]);
        let (code, _, stderr) = run(&args);
        assert_eq!(code, 0, "{stderr}");
        let context = format!("{name} at --combine-memory {memory}, --inline-threshold {inline}");
        for array in ["time", "time_bnds", "obs_time"] {
            let theirs = texts(&expected[array]);
            let ours = cat_dates(refs, array);
            assert_eq!(ours.len(), theirs.len(), "{array}, {context}");
            assert_eq!(ours, theirs, "{array}, {context}");
        }
        let npy = dir.path().join("t.npy");
        assert_eq!(cat_f32(refs, "t", &npy), expected_f32(&expected["t"]), "t, {context}");
    }
}

/// `audit --encodings` finds what a set others made decodes wrong: kerchunk's
/// `MultiZarrToZarr` of the packed files (`packed.kerchunk.json`) keeps `packed_0.nc`'s
/// `scale_factor` and `add_offset`, which the other two files' own metadata contradict; of the
/// bounds files (`bounds.kerchunk.json`), `time_bnds` read in the set's time units and
/// `obs_time` in the first file's. Exit code 1, one line per difference, every value as the
/// file's own header gives it. A set we combined agrees with every target (exit code 0).
#[test]
fn audit_encodings_finds_the_sets_kerchunk_made_wrong() {
    let url = |name: &str| format!("file://{}", file(name));
    let (code, stdout, stderr) = run(&["audit", &file("packed.kerchunk.json"), "--encodings"]);
    assert_eq!(code, 1, "{stdout}{stderr}");
    let expected = [
        format!("differs: {}: \"t\": add_offset 250.0 there, 273.15 in the set", url("packed_1.nc")),
        format!("differs: {}: \"t\": scale_factor 0.02 there, 0.01 in the set", url("packed_1.nc")),
        format!("differs: {}: \"t\": add_offset 290.0 there, 273.15 in the set", url("packed_2.nc")),
        format!("differs: {}: \"t\": scale_factor 0.005 there, 0.01 in the set", url("packed_2.nc")),
        "3 targets: 2 decoded otherwise than they say, 1 as they say, 0 unchecked".to_owned(),
    ];
    assert_eq!(stdout.lines().collect::<Vec<_>>(), expected, "{stdout}");

    let (code, stdout, stderr) = run(&["audit", &file("bounds.kerchunk.json"), "--encodings", "--json"]);
    assert_eq!(code, 1, "{stdout}{stderr}");
    let report: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    let mut found: Vec<(String, String, String, String)> = Vec::new();
    for target in report["targets"].as_array().unwrap() {
        for difference in target["differences"].as_array().into_iter().flatten() {
            let text = |name: &str| difference[name].as_str().unwrap().to_owned();
            found.push((target["url"].as_str().unwrap().to_owned(), text("array"), text("attribute"), text("target")));
        }
    }
    let units = |n: usize, array: &str, units: &str| {
        (url(&format!("bounds_{n}.nc")), array.into(), "units".into(), units.into())
    };
    assert_eq!(
        found,
        [
            units(1, "obs_time", "\"seconds since 2020-01-02T12:00:00\""),
            units(1, "time_bnds", "\"hours since 2020-01-02\""),
            units(2, "obs_time", "\"seconds since 2020-01-03T12:00:00\""),
            units(2, "time_bnds", "\"hours since 2020-01-03\""),
        ]
    );
    let statuses: Vec<&str> =
        report["targets"].as_array().unwrap().iter().map(|t| t["status"].as_str().unwrap()).collect();
    assert_eq!(statuses, ["differs", "differs", "agrees"]);

    // Ours, of the same files: the bounds written again inline, every range as its file says.
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("bounds.json");
    let files: Vec<String> = (0..3).map(|n| file(&format!("bounds_{n}.nc"))).collect();
    let (code, _, stderr) = run(&[
        "scan",
        &files[0],
        &files[1],
        &files[2],
        "--concat",
        "time",
        "--inline-threshold",
        "0",
        "-o",
        out.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{stderr}");
    let (code, stdout, stderr) = run(&["audit", out.to_str().unwrap(), "--encodings"]);
    assert_eq!(code, 0, "{stdout}{stderr}");
    assert_eq!(stdout.trim_end(), "3 targets: 0 decoded otherwise than they say, 3 as they say, 0 unchecked");
}
