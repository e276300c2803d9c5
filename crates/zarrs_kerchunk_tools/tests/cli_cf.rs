//! The command line through the CF view: `cat` prints and writes what xarray
//! decodes, `--sel` picks by coordinate value, `info` shows coordinate
//! ranges, and `plot` draws maps north up and time series against dates.
#![cfg(feature = "cli")]

mod cli_support;
#[path = "../../zarrs_kerchunk/tests/common/mod.rs"]
mod common;

use std::path::Path;

use cli_support::{assert_one_line_error, case, pixel_statistics, run};
use common::{Case, read_npy};

fn refs(case: &Case) -> String {
    case.dir.join("refs.json").to_str().unwrap().to_owned()
}

/// The strings of a `.npy` file of `<U` text.
fn texts(path: &Path) -> Vec<String> {
    let npy = read_npy(path);
    let width: usize = npy.descr.strip_prefix("<U").unwrap().parse().unwrap();
    npy.data
        .chunks(4 * width)
        .map(|text| {
            text.chunks(4)
                .map(|c| u32::from_le_bytes(c.try_into().unwrap()))
                .filter(|&c| c != 0)
                .filter_map(char::from_u32)
                .collect()
        })
        .collect()
}

/// The floats of a `.npy` file of `<f4` or `<f8`, widened to f64.
fn floats(path: &Path) -> (String, Vec<f64>) {
    let npy = read_npy(path);
    let values = match npy.descr.as_str() {
        "<f4" => npy.data.chunks(4).map(|c| f64::from(f32::from_le_bytes(c.try_into().unwrap()))).collect(),
        "<f8" => npy.data.chunks(8).map(|c| f64::from_le_bytes(c.try_into().unwrap())).collect(),
        other => panic!("{}: {other}", path.display()),
    };
    (npy.descr, values)
}

fn same(a: f64, b: f64) -> bool {
    a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan())
}

/// Every array of the corpus that xarray decodes (`decoded_expected`) comes
/// out of `cat` decoded as xarray decodes it: numbers as `--npy` in xarray's
/// type, bit for bit (the valid range aside, which xarray leaves), dates as
/// the text `cat` prints.
#[test]
fn cat_gives_what_xarray_decodes() {
    let dir = tempfile::tempdir().unwrap();
    let mut checked = 0;
    for case in Case::all() {
        for entry in case.arrays().iter().filter(|e| e["decoded_expected"].is_object()) {
            let path = entry["path"].as_str().unwrap();
            let expected = case.dir.join(entry["decoded_expected"]["file"].as_str().unwrap());
            let name = format!("{}/{path}", case.name);
            if read_npy(&expected).descr.starts_with("<U") {
                let (code, stdout, stderr) = run(&["cat", &refs(&case), path]);
                assert_eq!(code, 0, "{name}: {stderr}");
                let printed: Vec<&str> = stdout.lines().nth(1).unwrap().split(' ').collect();
                assert_eq!(printed, texts(&expected), "{name}");
                checked += 1;
                continue;
            }
            if entry["attrs"].get("valid_min").is_some() {
                continue; // masked here, left by xarray: see plot_and_cat_mask_the_valid_range
            }
            let out = dir.path().join(format!("{}-{path}.npy", case.name));
            let (code, _, stderr) = run(&["cat", &refs(&case), path, "--npy", out.to_str().unwrap()]);
            assert_eq!(code, 0, "{name}: {stderr}");
            let ((descr, got), (expected_descr, expected)) = (floats(&out), floats(&expected));
            assert_eq!(descr, expected_descr, "{name}");
            assert_eq!(got.len(), expected.len(), "{name}");
            for (i, (a, b)) in got.iter().zip(&expected).enumerate() {
                assert!(same(*a, *b), "{name}: element {i}: {a} != {b}");
            }
            checked += 1;
        }
    }
    assert!(checked >= 23, "{checked}");
}

/// kerchunk's `air.nc`, as the issue saw it: `cat` printed the packed
/// integers; now kelvin, with the decoding named, rows headed by their
/// coordinates, and `--raw` for the stored values.
#[test]
fn cat_prints_air_temperature_in_kelvin_and_selects_by_value() {
    let air = case("cf_air");
    let (code, stdout, stderr) = run(&["cat", &refs(&air), "air", "0,0:2,0:3"]);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(
        stdout,
        "# /air: shape [1, 2, 3] (time, lat, lon), float64 from int16 (scale_factor), units degK\n\
         # lon: 250 252.5 255\n\
         [time=2014-10-01T00:00:00, lat=75]: 258.2 258.2 258.7\n\
         [time=2014-10-01T00:00:00, lat=72.5]: 259.2 258.79 259.2\n"
    );
    let (code, stdout, _) = run(&["cat", &refs(&air), "air", "0,0,0:3", "--raw"]);
    assert_eq!(code, 0);
    assert_eq!(stdout, "# shape [1, 1, 3], dtype <i2\n[0, 0]: 25820 25820 25870\n");

    // lat=50 is index 10, lon=260 index 4; 2014-10-01 is the first 4 times.
    let (_, decoded) = floats(&air.dir.join("expected/air.decoded.npy"));
    let at = |t: usize, y: usize, x: usize| decoded[(t * 11 + y) * 21 + x];
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("sel.npy");
    let args = ["cat", &refs(&air), "air", "--sel", "lat=50,lon=260", "--sel", "time=2014-10-01", "--npy"];
    let (code, _, stderr) = run(&[&args[..], &[out.to_str().unwrap()]].concat());
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(read_npy(&out).shape, [4, 1, 1]);
    let (_, got) = floats(&out);
    assert!(got.iter().enumerate().all(|(t, v)| same(*v, at(t, 10, 4))), "{got:?}");
    // Nearest, ranges either way round, and a time of day.
    let (code, stdout, _) = run(&["cat", &refs(&air), "air", "--sel", "lat~51,lon=255:250,time=2014-10-01T06"]);
    assert_eq!(code, 0);
    let (head, values) = stdout.lines().nth(2).unwrap().split_once(": ").unwrap();
    assert_eq!(head, "[time=2014-10-01T06:00:00, lat=50]");
    let values: Vec<f64> = values.split(' ').map(|v| v.parse().unwrap()).collect();
    let expected: Vec<f64> = (0..3).map(|x| at(1, 10, x)).collect();
    assert!(values.iter().zip(&expected).all(|(a, b)| (a - b).abs() < 1e-8), "{values:?} {expected:?}");

    let (code, _, stderr) = run(&["cat", &refs(&air), "air", "--sel", "lat=51"]);
    assert_one_line_error(code, &stderr);
    assert!(stderr.contains("the nearest is 50 (index 10)") && stderr.contains("lat~51"), "{stderr}");
    let (code, _, stderr) = run(&["cat", &refs(&air), "air", "--sel", "depth=1"]);
    assert_one_line_error(code, &stderr);
    assert!(stderr.contains("depth=1") && stderr.contains("[\"time\", \"lat\", \"lon\"]"), "{stderr}");
    let (code, _, stderr) = run(&["cat", &refs(&air), "air", "--sel", "time=2015"]);
    assert_one_line_error(code, &stderr);
}

/// Times print as dates in every calendar; `--npy` writes Gregorian dates as
/// `datetime64[ns]` (`NaT` where missing) and other calendars as text.
#[test]
fn cat_writes_dates() {
    let conventions = case("cf_conventions");
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("t.npy");
    let (code, _, stderr) = run(&["cat", &refs(&conventions), "t_missing", "--npy", out.to_str().unwrap()]);
    assert_eq!(code, 0, "{stderr}");
    let npy = read_npy(&out);
    assert_eq!(npy.descr, "<M8[ns]");
    let nanos: Vec<i64> = npy.data.chunks(8).map(|c| i64::from_le_bytes(c.try_into().unwrap())).collect();
    let day = 86_400_000_000_000;
    assert_eq!(nanos, [10_957 * day, i64::MIN, 10_959 * day]);
    let (code, _, stderr) = run(&["cat", &refs(&conventions), "t_day360", "--npy", out.to_str().unwrap()]);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(texts(&out), texts(&conventions.dir.join("expected/t_day360.decoded.npy")));
}

/// `info` shows each coordinate's first and last value, decoded.
#[test]
fn info_shows_coordinate_ranges() {
    let (code, stdout, stderr) = run(&["info", &refs(&case("cf_air"))]);
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.contains("values: 2014-10-01T00:00:00 .. 2014-10-31T18:00:00 (124, standard calendar)"), "{stdout}");
    assert!(stdout.contains("values: 75 .. 50 (11, degrees_north)"), "{stdout}");
    let (_, stdout, _) = run(&["info", &refs(&case("cf_conventions"))]);
    assert!(stdout.contains("values: 2012-01-01T00:00:00 .. 2012-01-01T12:00:00 (3, standard calendar)"), "{stdout}");
}

/// The mean brightness of a band of rows of the map (the plot area), 0 to 765.
fn brightness(png: &Path, rows: std::ops::Range<u32>) -> f64 {
    let image = image::open(png).unwrap().to_rgb8();
    let pixels: Vec<u32> = rows
        .flat_map(|y| (150..650).map(move |x| (x, y)))
        .map(|(x, y)| image.get_pixel(x, y).0.iter().map(|&c| u32::from(c)).sum())
        .collect();
    f64::from(pixels.iter().sum::<u32>()) / f64::from(u32::try_from(pixels.len()).unwrap())
}

/// `plot` draws north up whatever the storage order: air.nc stores 75°N
/// first, and the cold north (dark in viridis) must be at the top. `--raw`
/// draws the same map; one dimension makes a time series.
#[test]
fn plot_draws_north_up_and_time_series() {
    let air = case("cf_air");
    let dir = tempfile::tempdir().unwrap();
    let refs_json = refs(&air);
    for raw in [false, true] {
        let png = dir.path().join(format!("air-{raw}.png"));
        let mut args = vec!["plot", &refs_json, "air", "-o", png.to_str().unwrap()];
        if raw {
            args.push("--raw");
        }
        let (code, stdout, stderr) = run(&args);
        assert_eq!(code, 0, "{stderr}");
        assert!(stdout.contains("21x11 cells"), "{stdout}");
        let (top, bottom) = (brightness(&png, 60..120), brightness(&png, 440..500));
        assert!(top + 100.0 < bottom, "raw {raw}: the top is {top}, the bottom {bottom}: north is not up");
    }
    let series = dir.path().join("series.png");
    let (code, stdout, stderr) =
        run(&["plot", &refs(&air), "air", "--sel", "lat=50,lon=260", "-o", series.to_str().unwrap()]);
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.contains("a line of 124 values"), "{stdout}");
    let (width, height, transparent, colours) = pixel_statistics(&series);
    assert_eq!((width, height, transparent), (900, 600, 0));
    assert!(colours > 5, "{colours}");
    let (code, _, stderr) = run(&["plot", &refs(&air), "time", "-o", series.to_str().unwrap()]);
    assert_one_line_error(code, &stderr);
    assert!(stderr.contains("dates"), "{stderr}");
}

/// Values outside the valid range are missing: transparent on a map, `nan` in `cat`.
#[test]
fn plot_and_cat_mask_the_valid_range() {
    let conventions = case("cf_conventions");
    let raw = read_npy(&conventions.dir.join("expected/ranged.npy"));
    let raw: Vec<f32> = raw.data.chunks(4).map(|c| f32::from_le_bytes(c.try_into().unwrap())).collect();
    let (code, stdout, stderr) = run(&["cat", &refs(&conventions), "ranged"]);
    assert_eq!(code, 0, "{stderr}");
    let rows = stdout.lines().filter(|line| line.starts_with('['));
    let printed: Vec<&str> = rows.flat_map(|line| line.split(": ").nth(1).unwrap().split(' ')).collect();
    assert_eq!(printed.len(), raw.len());
    for (text, raw) in printed.iter().zip(&raw) {
        let expected = if (-1.0..=1.0).contains(raw) { raw.to_string() } else { "nan".to_owned() };
        assert_eq!(*text, expected);
    }
    let dir = tempfile::tempdir().unwrap();
    let png = dir.path().join("ranged.png");
    let (code, _, stderr) = run(&["plot", &refs(&conventions), "ranged", "-o", png.to_str().unwrap()]);
    assert_eq!(code, 0, "{stderr}");
    assert!(pixel_statistics(&png).2 > 0, "cells outside the valid range are transparent");
}

/// A scalar coordinate the `coordinates` attribute names (a 2 m height) heads what `cat` prints.
#[test]
fn cat_shows_scalar_coordinates() {
    let (code, stdout, stderr) = run(&["cat", &refs(&case("cf_conventions")), "tas", "0,0"]);
    assert_eq!(code, 0, "{stderr}");
    let lines: Vec<&str> = stdout.lines().collect();
    assert!(lines[0].starts_with("# /tas: shape [1, 1, 5] (time, lat, lon), float64 from int16"), "{stdout}");
    assert_eq!(lines[1], "# at height=2");
    assert_eq!(lines[2], "# lon: 0 2.5 5 7.5 10");
    assert!(lines[3].starts_with("[time=2012-01-01T00:00:00, lat=60]: nan nan "), "{stdout}");
}
