//! The `zarrs-kerchunk` command line, run as a user runs it: output, files
//! and exit codes on the conformance cases, a local HTTP server and targets
//! changed on disk.
#![cfg(feature = "cli")]

mod cli_support;
#[path = "../../zarrs_kerchunk/tests/common/mod.rs"]
mod common;

use std::path::Path;

use cli_support::{
    any_refs, assert_one_line_error, case, cat_f32, cat_numbers, expected_f32, flatten_numbers, native_values,
    pixel_statistics, run,
};
use common::{Case, copy_case, copy_case_with_a_missing_and_a_short_target, server};

/// The chunk shape zarrs opens for a manifest entry: the document's, except
/// that an empty dimension's chunk length of 0 (kerchunk's HDF4 scanner) is
/// opened as 1, as `src/zarr/metadata.rs`'s table of rewrites says.
fn opened_chunks(entry: &serde_json::Value) -> serde_json::Value {
    let shape = entry["shape"].as_array().unwrap();
    let chunks = entry["chunks"].as_array().unwrap();
    shape.iter().zip(chunks).map(|(s, c)| if s == 0 && c == 0 { serde_json::json!(1) } else { c.clone() }).collect()
}

#[test]
fn info_shows_every_array_of_every_case() {
    for case in Case::all() {
        let refs = any_refs(&case);
        let (code, stdout, stderr) = run(&["info", refs.to_str().unwrap(), "--json"]);
        assert_eq!(code, 0, "{}: {stderr}", case.name);
        let info: serde_json::Value = serde_json::from_str(&stdout).unwrap();
        for entry in case.arrays() {
            let path = format!("/{}", entry["path"].as_str().unwrap());
            let node = info["nodes"].as_array().unwrap().iter().find(|n| n["path"] == path.as_str());
            let node = node.unwrap_or_else(|| panic!("{}: {path} not in {stdout}", case.name));
            assert_eq!(node["kind"], "array");
            assert_eq!(node["shape"], entry["shape"], "{}: {path}", case.name);
            assert_eq!(node["chunks"], opened_chunks(entry), "{}: {path}", case.name);
            assert_eq!(node["attributes"], entry["attrs"], "{}: {path}", case.name);
        }
        let (code, text, _) = run(&["info", refs.to_str().unwrap()]);
        assert_eq!(code, 0);
        assert!(case.arrays().iter().all(|e| text.contains(&format!("/{} ", e["path"].as_str().unwrap()))), "{text}");
    }
}

#[test]
fn stats_count_what_the_manifests_say() {
    let case = case("nc4_fill_missing");
    let refs = case.dir.join("refs.json");
    let (code, stdout, stderr) = run(&["stats", refs.to_str().unwrap(), "--json"]);
    assert_eq!(code, 0, "{stderr}");
    let stats: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    for entry in case.arrays() {
        let array = stats["arrays"].as_array().unwrap().iter().find(|a| a["path"] == entry["path"]).unwrap();
        assert_eq!(array["missing_chunks"], entry["n_missing_chunks"], "{array}");
        assert_eq!(array["grid_chunks"], entry["n_chunks_grid"], "{array}");
    }
    let (code, table, _) = run(&["stats", refs.to_str().unwrap(), "--targets"]);
    assert_eq!(code, 0);
    assert!(table.contains("sparse") && table.contains("data.nc") && table.contains("references"), "{table}");
}

#[test]
fn cat_writes_exactly_the_expected_values() {
    let dir = tempfile::tempdir().unwrap();
    let mut checked = 0;
    for case in Case::all() {
        for entry in case.arrays() {
            let descr = entry["expected_npy_dtype"].as_str().unwrap_or("");
            if entry["support"] != "required" || !matches!(descr.get(1..2), Some("i" | "u" | "f" | "b")) {
                continue;
            }
            let path = entry["path"].as_str().unwrap();
            let out = dir.path().join(format!("{}-{}.npy", case.name, path.replace('/', "_")));
            let refs = any_refs(&case);
            let (code, _, stderr) =
                run(&["cat", refs.to_str().unwrap(), path, "--raw", "--npy", out.to_str().unwrap()]);
            assert_eq!(code, 0, "{}: {path}: {stderr}", case.name);
            let expected = case.dir.join(entry["expected"].as_str().unwrap());
            assert_eq!(native_values(&out), native_values(&expected), "{}: {path}", case.name);
            checked += 1;
        }
    }
    assert!(checked > 20, "{checked}");
}

#[test]
fn cat_prints_a_slice_as_text() {
    let case = case("nc4_deflate_shuffle");
    let refs = case.dir.join("refs.json");
    let (code, stdout, stderr) = run(&["cat", refs.to_str().unwrap(), "temp", "1,2:4,-2:", "--raw"]);
    assert_eq!(code, 0, "{stderr}");
    let (_, size, data) = native_values(&case.dir.join("expected/temp.npy"));
    assert_eq!(size, 4);
    let value =
        |t: usize, y: usize, x: usize| f32::from_ne_bytes(data[((t * 7 + y) * 9 + x) * 4..][..4].try_into().unwrap());
    let [a, b, c, d] = [value(1, 2, 7), value(1, 2, 8), value(1, 3, 7), value(1, 3, 8)];
    assert_eq!(stdout, format!("# shape [1, 2, 2], dtype <f4\n[0, 0]: {a} {b}\n[0, 1]: {c} {d}\n"));
    // Through the CF view (nothing to decode here): the dimensions, the units and rows headed by coordinates.
    let (code, stdout, stderr) = run(&["cat", refs.to_str().unwrap(), "temp", "1,2:4,-2:"]);
    assert_eq!(code, 0, "{stderr}");
    let header = "# /temp: shape [1, 2, 2] (time, y, x), float32, units K";
    assert_eq!(stdout, format!("{header}\n[time=1, y=2]: {a} {b}\n[time=1, y=3]: {c} {d}\n"));
    let (code, _, stderr) = run(&["cat", refs.to_str().unwrap(), "temp", "9"]);
    assert_one_line_error(code, &stderr);
    assert!(stderr.contains("outside dimension 0"), "{stderr}");
}

#[test]
fn audit_over_http_exits_non_zero_naming_the_missing_and_the_short_target() {
    let (_dir, root) = copy_case_with_a_missing_and_a_short_target();
    let refs = format!("{}/refs.json", server::serve_dir(root));
    let (code, stdout, stderr) = run(&["audit", &refs]);
    assert_eq!(code, 1, "{stdout}{stderr}");
    assert!(stdout.contains("missing: http://") && stdout.contains("/day2.nc"), "{stdout}");
    assert!(stdout.contains("short: http://") && stdout.contains("/day3.nc has 64 bytes"), "{stdout}");
    assert!(stdout.ends_with("4 targets: 2 ok, 1 missing, 1 short\n"), "{stdout}");
    let (code, json, _) = run(&["audit", &refs, "--json"]);
    assert_eq!(code, 1);
    let audit: serde_json::Value = serde_json::from_str(&json).unwrap();
    let statuses: Vec<&str> =
        audit["targets"].as_array().unwrap().iter().map(|t| t["status"].as_str().unwrap()).collect();
    assert_eq!(statuses, ["missing", "short", "ok", "ok"]);
    let (code, stdout, _) = run(&["audit", case("mzz_time_concat").dir.join("refs.json").to_str().unwrap()]);
    assert_eq!((code, stdout.as_str()), (0, "4 targets: 4 ok\n"));
}

#[test]
fn pin_then_a_rewrite_in_place_fails_the_read_naming_what_changed() {
    let (_dir, root) = copy_case("nc4_deflate_shuffle");
    let refs = root.join("refs.json");
    let refs = refs.to_str().unwrap();
    let (code, stdout, stderr) = run(&["pin", refs]);
    assert_eq!(code, 0, "{stderr}");
    let pins = format!("{refs}.pins.json");
    assert_eq!(stdout, format!("pinned 1 of 1 targets in {pins}\n"));
    assert!(Path::new(&pins).exists());
    let (code, _, stderr) = run(&["cat", refs, "temp", "0,0,0", "--pins", &pins]);
    assert_eq!(code, 0, "{stderr}");

    let data = root.join("data.nc");
    let mut bytes = std::fs::read(&data).unwrap();
    let last = bytes.len() - 1;
    bytes[last] ^= 0xff;
    std::fs::write(&data, bytes).unwrap();
    let later = std::time::SystemTime::now() + std::time::Duration::from_secs(5);
    std::fs::File::options().write(true).open(&data).unwrap().set_modified(later).unwrap();

    let (code, _, stderr) = run(&["cat", refs, "temp", "--pins", &pins]);
    assert_one_line_error(code, &stderr);
    for part in
        ["cannot read key", "temp/", "data.nc", "changed since it was pinned", "pinned ", "found ", "last modified"]
    {
        assert!(stderr.contains(part), "{part:?} not in {stderr}");
    }
    let (code, stdout, _) = run(&["audit", refs, "--pins", &pins]);
    assert_eq!(code, 1);
    assert!(stdout.contains("changed: file://") && stdout.contains("1 changed"), "{stdout}");
    // Relaxed, the folder's targets are read unchecked.
    let folder = url::Url::from_directory_path(&root).unwrap();
    let (code, _, stderr) = run(&["audit", refs, "--pins", &pins, "--relax-pins", folder.as_str()]);
    assert_eq!(code, 0, "{stderr}");
}

#[test]
fn rewriting_onto_a_copied_folder_reads_exactly() {
    let (dir, root) = copy_case("mzz_time_concat");
    let moved = dir.path().join("moved");
    std::fs::rename(&root, &moved).unwrap();
    std::fs::create_dir(&root).unwrap();
    std::fs::rename(moved.join("refs.json"), root.join("refs.json")).unwrap();
    let refs = root.join("refs.json");
    let out = dir.path().join("t.npy");
    let args = |extra: &[&str]| {
        let mut args = vec!["cat", refs.to_str().unwrap(), "tas", "--raw", "--npy", out.to_str().unwrap()];
        args.extend_from_slice(extra);
        args.into_iter().map(ToOwned::to_owned).collect::<Vec<_>>()
    };
    let plain: Vec<String> = args(&[]);
    let (code, _, stderr) = run(&plain.iter().map(String::as_str).collect::<Vec<_>>());
    assert_one_line_error(code, &stderr);
    assert!(stderr.contains("day1.nc") && stderr.contains("not found"), "{stderr}");
    let rewrite = format!("{}/={}/", root.display(), moved.display());
    let moved_args: Vec<String> = args(&["--rewrite", &rewrite]);
    let (code, _, stderr) = run(&moved_args.iter().map(String::as_str).collect::<Vec<_>>());
    assert_eq!(code, 0, "{stderr}");
    let expected = case("mzz_time_concat").dir.join("expected/tas.npy");
    assert_eq!(native_values(&out), native_values(&expected));
}

#[test]
fn convert_round_trips_through_parquet() {
    // Written beside the original, so that relative target URLs still name the case's data.
    let (_dir, root) = copy_case("nc4_fill_missing");
    let refs = root.join("refs.json");
    let parquet = root.join("written.parq");
    let back = root.join("back.json");
    let (code, _, stderr) = run(&["convert", refs.to_str().unwrap(), parquet.to_str().unwrap(), "--record-size", "3"]);
    assert_eq!(code, 0, "{stderr}");
    assert!(stderr.contains("references written to"), "{stderr}");
    let (code, _, stderr) = run(&["convert", parquet.to_str().unwrap(), back.to_str().unwrap(), "--v0"]);
    assert_eq!(code, 0, "{stderr}");
    // Judged by the documents themselves, read here with serde_json, not by our parser.
    let original = references_in(&refs);
    assert!(original.values().filter(|v| v.is_array()).count() > 5, "ranges to compare: {original:?}");
    assert_eq!(references_in(&back), original);
    // From parquet to JSON with each shared URL written once, as a template.
    let templated = root.join("templated.json");
    let (code, _, stderr) =
        run(&["convert", parquet.to_str().unwrap(), templated.to_str().unwrap(), "--url-templates"]);
    assert_eq!(code, 0, "{stderr}");
    let document: serde_json::Value = serde_json::from_slice(&std::fs::read(&templated).unwrap()).unwrap();
    assert_eq!(document["templates"].as_object().map(serde_json::Map::len), Some(1), "{document}");
    assert_eq!(references_in(&templated), original);
}

/// What a JSON reference document (version 0 or 1, templates expanded) maps each key to, in one
/// form: metadata as parsed JSON, other inline values as bytes, ranges as `[url, offset, length]`.
/// Read with `serde_json` and the spec alone, so that the writer is not judged by our own reader.
/// `.zmetadata`, which a writer may add, is left out.
fn references_in(path: &Path) -> std::collections::BTreeMap<String, serde_json::Value> {
    use base64::Engine as _;
    use serde_json::Value;
    let document: Value = serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap();
    let (refs, templates) = match document.get("version") {
        Some(_) => (document["refs"].as_object().unwrap().clone(), document.get("templates").cloned()),
        None => (document.as_object().unwrap().clone(), None),
    };
    let expand = |url: &str| {
        let mut url = url.to_owned();
        for (name, value) in templates.iter().flat_map(|t| t.as_object().unwrap()) {
            url = url.replace(&format!("{{{{{name}}}}}"), value.as_str().unwrap());
        }
        url
    };
    let bytes = |text: &str| match text.strip_prefix("base64:") {
        Some(encoded) => base64::engine::general_purpose::STANDARD.decode(encoded).unwrap(),
        None => text.as_bytes().to_vec(),
    };
    refs.into_iter()
        .filter(|(key, _)| key != ".zmetadata")
        .map(|(key, value)| {
            let normal = match value {
                Value::String(text) if key.rsplit('/').next().unwrap().starts_with(".z") => {
                    serde_json::from_slice(&bytes(&text)).unwrap()
                }
                Value::Object(_) => value,
                Value::String(text) => Value::from(bytes(&text)),
                Value::Array(parts) => {
                    let url = Value::from(expand(parts[0].as_str().unwrap()));
                    Value::Array(std::iter::once(url).chain(parts.into_iter().skip(1)).collect())
                }
                other => panic!("{}: {key}: {other}", path.display()),
            };
            (key, normal)
        })
        .collect()
}

/// `scan` makes references a user reads at once: every array of the NetCDF-3
/// case, as JSON and as parquet, reads exactly its ground truth; a file that
/// is not NetCDF-3 is a one-line error naming it.
#[test]
fn scan_makes_references_that_read_exactly() {
    let (_dir, root) = copy_case("netcdf3_classic");
    let case = case("netcdf3_classic");
    for output in ["scanned.json", "scanned.json.zst", "scanned.parq"] {
        let refs = root.join(output);
        let (code, _, stderr) = run(&["scan", root.join("data.nc").to_str().unwrap(), "-o", refs.to_str().unwrap()]);
        assert_eq!(code, 0, "{stderr}");
        // One request for the file, and one that finds no DMR++ sidecar beside it (`--dmrpp auto`).
        assert!(
            stderr.contains("references to 1 file(s) written") && stderr.contains("(2 requests, 1060 bytes read)"),
            "{stderr}"
        );
        let data = root.join("data.nc");
        let never = ["scan", data.to_str().unwrap(), "--dmrpp", "never", "-o", refs.to_str().unwrap()];
        let (code, _, stderr) = run(&never);
        assert!(code == 0 && stderr.contains("(1 requests, 1060 bytes read)"), "{stderr}");
        for entry in case.arrays() {
            let path = entry["path"].as_str().unwrap();
            let out = root.join(format!("{path}.npy"));
            let (code, _, stderr) =
                run(&["cat", refs.to_str().unwrap(), path, "--raw", "--npy", out.to_str().unwrap()]);
            assert_eq!(code, 0, "{output}: {path}: {stderr}");
            let expected = case.dir.join(entry["expected"].as_str().unwrap());
            assert_eq!(native_values(&out), native_values(&expected), "{output}: {path}");
        }
    }
    let (code, _, stderr) =
        run(&["scan", root.join("refs.json").to_str().unwrap(), "-o", root.join("x.json").to_str().unwrap()]);
    assert_one_line_error(code, &stderr);
    assert!(stderr.contains("refs.json is neither NetCDF-3, HDF5 (NetCDF-4), GRIB nor TIFF"), "{stderr}");

    // --subchunk splits a fixed variable's one range; it reads the same values.
    let refs = root.join("split.json");
    let data = root.join("data.nc");
    let args = ["scan", data.to_str().unwrap(), "--inline-threshold", "0", "--subchunk", "grid=2", "-o"];
    let (code, _, stderr) = run(&[&args[..], &[refs.to_str().unwrap()]].concat());
    assert_eq!(code, 0, "{stderr}");
    let (_, info, _) = run(&["info", refs.to_str().unwrap()]);
    let grid = info.lines().find(|l| l.starts_with("/grid ")).unwrap();
    let entry = case.arrays().iter().find(|e| e["path"] == "grid").unwrap();
    let halved = entry["chunks"][0].as_u64().unwrap() / 2;
    assert!(grid.contains(&format!("chunks [{halved},")), "{grid}");
    let out = root.join("grid.npy");
    let (code, _, stderr) = run(&["cat", refs.to_str().unwrap(), "grid", "--raw", "--npy", out.to_str().unwrap()]);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(native_values(&out), native_values(&case.dir.join(entry["expected"].as_str().unwrap())));
    let (code, _, stderr) = run(&[&args[..4], &["--subchunk", "grid=7", "-o", refs.to_str().unwrap()]].concat());
    assert_one_line_error(code, &stderr);
    assert!(stderr.contains("cannot split \"grid\" into 7 chunks"), "{stderr}");
}

/// `scan` reads NetCDF-4 (HDF5) files too, telling them from NetCDF-3 by
/// their first bytes: the compressed variables read exactly what netCDF4
/// wrote, and arrays left out are warnings naming them.
#[test]
fn scan_reads_netcdf4_files() {
    let folder = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/scan/hdf5");
    let scratch = tempfile::tempdir().unwrap();
    for file in ["netcdf4.nc", "latest.h5"] {
        std::fs::copy(folder.join(file), scratch.path().join(file)).unwrap();
    }
    let refs = scratch.path().join("refs.parq");
    let (code, _, stderr) =
        run(&["scan", scratch.path().join("netcdf4.nc").to_str().unwrap(), "-o", refs.to_str().unwrap()]);
    assert_eq!(code, 0, "{stderr}");
    assert!(!stderr.contains("warning"), "{stderr}");
    for variable in ["temp", "many", "sub/gv", "lat"] {
        let out = scratch.path().join("out.npy");
        let (code, _, stderr) =
            run(&["cat", refs.to_str().unwrap(), variable, "--raw", "--npy", out.to_str().unwrap()]);
        assert_eq!(code, 0, "{variable}: {stderr}");
        let expected = folder.join(format!("netcdf4.nc.{}.npy", variable.replace('/', "~")));
        assert_eq!(native_values(&out), native_values(&expected), "{variable}");
    }
    let refs = scratch.path().join("refs.json");
    let (code, _, stderr) =
        run(&["scan", scratch.path().join("latest.h5").to_str().unwrap(), "-o", refs.to_str().unwrap()]);
    assert_eq!(code, 0, "{stderr}");
    assert!(stderr.contains("latest.h5: compound: left out: a compound type"), "{stderr}");
    let (code, _, stderr) = run(&[
        "scan",
        scratch.path().join("latest.h5").to_str().unwrap(),
        "-o",
        refs.to_str().unwrap(),
        "--fail-unsupported",
    ]);
    assert_one_line_error(code, &stderr);
    assert!(stderr.contains(r#"variable "compound": a compound type"#), "{stderr}");
}

/// `scan --concat time` combines a series of files, given in any order, into
/// references whose arrays read the combined ground truth, JSON or parquet, each file's
/// references held in memory while combining or (`--combine-memory 0`) read back from disk;
/// several files without `--concat` are a one-line error.
#[test]
fn scan_combines_files_along_a_dimension() {
    let folder = common::workspace_root().join("tests/scan/netcdf3");
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("series.json");
    let files: Vec<String> = ["series_2.nc", "series_0.nc", "series_1.nc"]
        .iter()
        .map(|f| folder.join(f).to_str().unwrap().to_owned())
        .collect();
    let mut args = vec!["scan"];
    args.extend(files.iter().map(String::as_str));
    for (memory, name) in [("64", "series.json"), ("0", "series.json"), ("0", "series.parq")] {
        let out = dir.path().join(name);
        let combine = ["--concat", "time", "--combine-memory", memory, "-o", out.to_str().unwrap()];
        let (code, _, stderr) = run(&[&args[..], &combine].concat());
        assert_eq!(code, 0, "{stderr}");
        assert!(stderr.contains("references to 3 file(s) written"), "{stderr}");
        for variable in ["time", "v", "lat", "static"] {
            let npy = dir.path().join(format!("{variable}.npy"));
            let (code, _, stderr) =
                run(&["cat", out.to_str().unwrap(), variable, "--raw", "--npy", npy.to_str().unwrap()]);
            assert_eq!(code, 0, "{variable}: {stderr}");
            let truth = native_values(&folder.join(format!("series.{variable}.npy")));
            assert_eq!(native_values(&npy), truth, "{variable}, {name} at --combine-memory {memory}");
        }
    }
    let (code, _, stderr) = run(&[&args[..], &["-o", out.to_str().unwrap()]].concat());
    assert_one_line_error(code, &stderr);
    assert!(stderr.contains("--concat"), "{stderr}");
}

/// Files whose times are in units of their own (`tests/scan/combine`) combine
/// by date: `cat` shows the times xarray's `open_mfdataset` gives; two
/// calendars are a one-line error naming both files.
#[test]
fn scan_combines_files_in_units_of_their_own_by_date() {
    let folder = common::workspace_root().join("tests/scan/combine");
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("series.json");
    let files: Vec<String> =
        (0..4).rev().map(|n| folder.join(format!("mixed_units_{n}.nc")).to_str().unwrap().to_owned()).collect();
    let mut args = vec!["scan"];
    args.extend(files.iter().map(String::as_str));
    let (code, _, stderr) = run(&[&args[..], &["--concat", "time", "-o", out.to_str().unwrap()]].concat());
    assert_eq!(code, 0, "{stderr}");
    let (code, stdout, stderr) = run(&["cat", out.to_str().unwrap(), "time"]);
    assert_eq!(code, 0, "{stderr}");
    let expected: serde_json::Value =
        serde_json::from_slice(&std::fs::read(folder.join("mixed_units.expected.json")).unwrap()).unwrap();
    let theirs: Vec<&str> = expected["time"].as_array().unwrap().iter().map(|t| t.as_str().unwrap()).collect();
    let ours: Vec<&str> = stdout.lines().nth(1).unwrap_or_default().split_whitespace().collect();
    assert_eq!(ours, theirs, "{stdout}");
    let files: Vec<String> =
        (0..2).map(|n| folder.join(format!("calendars_differ_{n}.nc")).to_str().unwrap().to_owned()).collect();
    let (code, _, stderr) = run(&["scan", &files[0], &files[1], "--concat", "time", "-o", out.to_str().unwrap()]);
    assert_one_line_error(code, &stderr);
    assert!(stderr.contains("calendars_differ_0.nc") && stderr.contains("calendars_differ_1.nc"), "{stderr}");
}

/// A date only in each file's name (`tests/scan/combine/dated_*.nc`): `--coord
/// time=name:...` makes it a time dimension, and `cat` shows the dates
/// `open_mfdataset` gives; a regex without a group is a usage error.
#[test]
fn scan_takes_a_coordinate_from_file_names() {
    let folder = common::workspace_root().join("tests/scan/combine");
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("dated.json");
    let pattern = folder.join("dated_*.nc");
    let coord = r"time=name:_(\d{8})\.nc$:%Y%m%d";
    let (code, _, stderr) = run(&["scan", pattern.to_str().unwrap(), "--coord", coord, "-o", out.to_str().unwrap()]);
    assert_eq!(code, 0, "{stderr}");
    let (code, stdout, stderr) = run(&["cat", out.to_str().unwrap(), "time"]);
    assert_eq!(code, 0, "{stderr}");
    let expected: serde_json::Value =
        serde_json::from_slice(&std::fs::read(folder.join("dated.expected.json")).unwrap()).unwrap();
    let theirs: Vec<&str> = expected["time"].as_array().unwrap().iter().map(|t| t.as_str().unwrap()).collect();
    let ours: Vec<&str> = stdout.lines().nth(1).unwrap_or_default().split_whitespace().collect();
    assert_eq!(ours, theirs, "{stdout}");
    // The same dates, written in the units asked for, one file scanned at a time.
    let units = ["--units", "hours since 2019-12-31", "--jobs", "1"];
    let (code, _, stderr) = run(&[
        &["scan", pattern.to_str().unwrap(), "--coord", coord, "-o", out.to_str().unwrap()][..],
        &units,
    ]
    .concat());
    assert_eq!(code, 0, "{stderr}");
    let (_, again, _) = run(&["cat", out.to_str().unwrap(), "time"]);
    assert_eq!(again.lines().nth(1), stdout.lines().nth(1), "{again}");
    let (_, info, _) = run(&["info", out.to_str().unwrap()]);
    assert!(info.contains("hours since 2019-12-31"), "{info}");
    let (code, _, stderr) =
        run(&["scan", pattern.to_str().unwrap(), "--coord", "time=name:dated", "-o", out.to_str().unwrap()]);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("capture group"), "{stderr}");
    let (code, _, stderr) = run(&["scan", pattern.to_str().unwrap(), "--jobs", "0", "-o", out.to_str().unwrap()]);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("from 1"), "{stderr}");
    // Two dimensions: members from the names outside times from the data; `info` shows t's shape.
    let ens = folder.join("ens_m*.nc");
    let out = dir.path().join("ens.json");
    let two = ["--concat", "time", "--coord", r"member=name:_m(\d+)_", "-o", out.to_str().unwrap()];
    let (code, _, stderr) = run(&[&["scan", ens.to_str().unwrap()][..], &two].concat());
    assert_eq!(code, 0, "{stderr}");
    let (code, stdout, stderr) = run(&["cat", out.to_str().unwrap(), "member"]);
    assert_eq!(code, 0, "{stderr}");
    let expected: serde_json::Value =
        serde_json::from_slice(&std::fs::read(folder.join("ens.expected.json")).unwrap()).unwrap();
    let theirs: Vec<String> = expected["member"].as_array().unwrap().iter().map(ToString::to_string).collect();
    let ours: Vec<&str> = stdout.lines().nth(1).unwrap_or_default().split_whitespace().collect();
    assert_eq!(ours, theirs, "{stdout}");
    // --identical: t taken once, checked in every file, where it differs member by member.
    let members = folder.join("members_m*.nc");
    let once = ["--coord", r"member=name:_m(\d+)\.nc$", "--identical", "t", "-o", out.to_str().unwrap()];
    let (code, _, stderr) = run(&[&["scan", members.to_str().unwrap()][..], &once].concat());
    assert_one_line_error(code, &stderr);
    assert!(stderr.contains("\"t\"") && stderr.contains("values differ"), "{stderr}");
    // An outer dimension from the data: `ens` holds its members only in its names, an error
    // naming a file; `ensdata` in each file's `member` coordinate, read as
    // open_mfdataset(combine="by_coords") reads them.
    let outer_from_data = ["--concat", "time", "--concat", "member", "-o", out.to_str().unwrap()];
    let (code, _, stderr) = run(&[&["scan", ens.to_str().unwrap()][..], &outer_from_data].concat());
    assert_one_line_error(code, &stderr);
    assert!(stderr.contains("ens_m") && stderr.contains("no coordinate array"), "{stderr}");
    // Combined a file at a time, each file's chunks held in memory, then all waiting on disk.
    let ensdata = folder.join("ensdata_m*.nc");
    let expected: serde_json::Value =
        serde_json::from_slice(&std::fs::read(folder.join("ensdata.expected.json")).unwrap()).unwrap();
    for memory in ["64", "0"] {
        let scan = [&["scan", ensdata.to_str().unwrap()][..], &outer_from_data, &["--combine-memory", memory]].concat();
        let (code, _, stderr) = run(&scan);
        assert_eq!(code, 0, "{stderr}");
        for array in ["member", "t"] {
            let (ours, theirs) = (cat_numbers(out.to_str().unwrap(), array), flatten_numbers(&expected[array]));
            assert_eq!(ours, theirs, "{array} (--combine-memory {memory})");
        }
    }
}

/// One file per variable (`tests/scan/combine/merged_*.nc`): `--merge` gives
/// both variables, as xarray's merge; a shared coordinate that differs is a
/// one-line error naming the file.
#[test]
fn scan_merges_files_of_one_variable_each() {
    let folder = common::workspace_root().join("tests/scan/combine");
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("merged.json");
    let file = |name: &str| folder.join(name).to_str().unwrap().to_owned();
    let (t, rh, other) = (file("merged_t.nc"), file("merged_rh.nc"), file("merged_rh_other_x.nc"));
    let (code, _, stderr) = run(&["scan", &t, &rh, "--merge", "-o", out.to_str().unwrap()]);
    assert_eq!(code, 0, "{stderr}");
    let expected: serde_json::Value =
        serde_json::from_slice(&std::fs::read(folder.join("merged.expected.json")).unwrap()).unwrap();
    assert_eq!(cat_f32(out.to_str().unwrap(), "rh", &dir.path().join("rh.npy")), expected_f32(&expected["rh"]));
    let (code, _, stderr) = run(&["scan", &t, &other, "--merge", "-o", out.to_str().unwrap()]);
    assert_one_line_error(code, &stderr);
    assert!(stderr.contains("merged_rh_other_x.nc") && stderr.contains("\"x\""), "{stderr}");
    // Held by range references (nothing inline), x is read from both files and still differs.
    let ranges = ["--inline-threshold", "0", "-o", out.to_str().unwrap()];
    let (code, _, stderr) = run(&[&["scan", &t, &other, "--merge"][..], &ranges].concat());
    assert_one_line_error(code, &stderr);
    assert!(stderr.contains("merged_rh_other_x.nc") && stderr.contains("values differ"), "{stderr}");
    let (code, _, stderr) = run(&[&["scan", &t, &rh, "--merge"][..], &ranges].concat());
    assert_eq!(code, 0, "the same x read from both files: {stderr}");
    let (code, _, stderr) = run(&["scan", &t, &rh, "--merge", "--concat", "time", "-o", out.to_str().unwrap()]);
    assert_eq!(code, 2, "--merge and --concat together are a usage error: {stderr}");
}

#[test]
fn errors_are_one_line_and_exit_2() {
    let (code, _, stderr) = run(&["stats", "/no/such/refs.json"]);
    assert_one_line_error(code, &stderr);
    assert!(stderr.contains("/no/such/refs.json") && stderr.contains("not found"), "{stderr}");
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("bad.json");
    std::fs::write(&bad, "{\"version\": 1, \"refs\": {\"a/.zarray\": 5").unwrap();
    let (code, _, stderr) = run(&["info", bad.to_str().unwrap()]);
    assert_one_line_error(code, &stderr);
    let (code, _, stderr) = run(&["cat", case("hdf5_contiguous").dir.join("refs.json").to_str().unwrap(), "nope"]);
    assert_one_line_error(code, &stderr);
    let (code, _, stderr) = run(&["stats", "x.json", "--option", "novalue"]);
    assert_eq!(code, 2, "clap's usage errors exit 2 too: {stderr}");
}

#[test]
fn plot_draws_a_slice_with_fill_values_transparent() {
    let dir = tempfile::tempdir().unwrap();
    let sample = Path::new(env!("CARGO_MANIFEST_DIR")).join("../zarrs_kerchunk/examples/data/sample.json");
    let air = dir.path().join("air.png");
    let (code, stdout, stderr) = run(&["plot", sample.to_str().unwrap(), "air", "2,:,:", "-o", air.to_str().unwrap()]);
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.contains("24x18 cells"), "{stdout}");
    let (width, height, transparent, colours) = pixel_statistics(&air);
    assert_eq!((width, height, transparent), (900, 600, 0), "no fill value in this slice");
    assert!(colours > 100, "a colour per value, a colour bar and text: {colours}");

    // 400 of the 600 cells of `sparse` are in chunks with no reference: the fill value.
    let case = case("nc4_fill_missing");
    let sparse = dir.path().join("sparse.png");
    let refs = case.dir.join("refs.json");
    let (code, _, stderr) = run(&["plot", refs.to_str().unwrap(), "sparse", "-o", sparse.to_str().unwrap()]);
    assert_eq!(code, 0, "{stderr}");
    let (_, _, transparent, colours) = pixel_statistics(&sparse);
    let entry = case.arrays().iter().find(|e| e["path"] == "sparse").unwrap();
    let (_, size, data) = native_values(&case.dir.join(entry["expected"].as_str().unwrap()));
    let fill = entry["fill_value"].as_f64().unwrap();
    #[expect(clippy::cast_possible_truncation, reason = "a float32 array holds its fill value as float32")]
    let fill = if size == 4 { f64::from(fill as f32) } else { fill };
    let values: Vec<f64> = data
        .chunks(size)
        .map(|v| match size {
            4 => f64::from(f32::from_ne_bytes(v.try_into().unwrap())),
            _ => f64::from_ne_bytes(v.try_into().unwrap()),
        })
        .collect();
    let fills = values.iter().filter(|v| v.to_bits() == fill.to_bits() || v.is_nan()).count();
    assert!(fills > 0 && fills < values.len(), "{fills}");
    // The plot area is about 64% of the image; the fill cells' share of it is transparent.
    #[expect(clippy::cast_precision_loss, reason = "pixel and cell counts are small")]
    let share = transparent as f64 / (900.0 * 600.0) / (fills as f64 / values.len() as f64);
    assert!((0.5..0.8).contains(&share), "transparent pixels {transparent}, fill cells {fills}: {share}");
    assert!(colours > 50, "{colours}");

    // NaN as the fill value of a float32 array is transparent too.
    let nanfill = dir.path().join("nanfill.png");
    let (code, _, stderr) = run(&["plot", refs.to_str().unwrap(), "nanfill", "-o", nanfill.to_str().unwrap()]);
    assert_eq!(code, 0, "{stderr}");
    assert!(pixel_statistics(&nanfill).2 > 0);

    let (code, _, stderr) = run(&["plot", sample.to_str().unwrap(), "air", ":,:,:", "-o", air.to_str().unwrap()]);
    assert_one_line_error(code, &stderr);
    assert!(stderr.contains("plot draws 1 (a line) or 2 (a map)"), "{stderr}");
}

/// A pattern names the files (the store is listed, so it works the same for
/// a URL the shell cannot expand): NetCDF-4 files combined along time read
/// the whole series; a pattern that matches nothing is a one-line error.
#[test]
fn scan_expands_patterns_by_listing_the_store() {
    let folder = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/scan/hdf5");
    let scratch = tempfile::tempdir().unwrap();
    for file in ["series0.nc", "series1.nc", "series2.nc", "netcdf4.nc"] {
        std::fs::copy(folder.join(file), scratch.path().join(file)).unwrap();
    }
    let pattern = format!("{}/series?.nc", scratch.path().display());
    let refs = scratch.path().join("series.json");
    let (code, _, stderr) = run(&["scan", &pattern, "--concat", "time", "-o", refs.to_str().unwrap()]);
    assert_eq!(code, 0, "{stderr}");
    assert!(stderr.contains("references to 3 file(s) written"), "{stderr}");
    let out = scratch.path().join("temp.npy");
    let (code, _, stderr) = run(&["cat", refs.to_str().unwrap(), "temp", "--raw", "--npy", out.to_str().unwrap()]);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(native_values(&out), native_values(&folder.join("series.temp.npy")));
    let (code, _, stderr) =
        run(&["scan", &format!("{}/nothing*.nc", scratch.path().display()), "-o", refs.to_str().unwrap()]);
    assert_one_line_error(code, &stderr);
    assert!(stderr.contains("no file matches"), "{stderr}");
}

/// A forecast run's GRIB files (`tests/scan/grib/run_f0N.grib2`) scanned together need no
/// `--concat`: one tree, each variable's steps along `step`.
#[test]
fn grib_files_combine_without_concat() {
    let dir = tempfile::tempdir().unwrap();
    let grib = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/scan/grib");
    let files: Vec<String> = ["run_f00.grib2", "run_f01.grib2", "run_f02.grib2"]
        .iter()
        .map(|f| grib.join(f).to_str().unwrap().to_owned())
        .collect();
    let out = dir.path().join("run.json");
    let status = std::process::Command::new(env!("CARGO_BIN_EXE_zarrs-kerchunk"))
        .arg("scan")
        .args(&files)
        .arg("-o")
        .arg(&out)
        .status()
        .unwrap();
    assert!(status.success());
    let refs: serde_json::Value = serde_json::from_slice(&std::fs::read(&out).unwrap()).unwrap();
    let zarray: serde_json::Value =
        serde_json::from_str(refs["refs"]["t2m/instant/heightAboveGround/t2m/.zarray"].as_str().unwrap()).unwrap();
    assert_eq!(zarray["shape"], serde_json::json!([1, 3, 9, 12]));
}

/// A reader that stops reading (`cat ... | head`) ends the command quietly, with the exit code a
/// shell reports for a process SIGPIPE ends (141), never an "internal error".
#[test]
fn a_closed_pipe_ends_the_command_quietly() {
    use std::io::Read as _;
    let refs = case("cf_air").dir.join("refs.json");
    // About 230 KB of text, more than a pipe holds: the command is still writing when it closes.
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_zarrs-kerchunk"))
        .args(["cat", refs.to_str().unwrap(), "air"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut first = [0u8; 100];
    child.stdout.take().unwrap().read_exact(&mut first).unwrap();
    let output = child.wait_with_output().unwrap();
    assert!(first.starts_with(b"# /air"), "{}", String::from_utf8_lossy(&first));
    assert_eq!(String::from_utf8_lossy(&output.stderr), "");
    assert_eq!(output.status.code(), Some(141));
}
