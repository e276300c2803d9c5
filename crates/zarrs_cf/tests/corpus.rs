//! The CF view against the corpus's `decoded_expected` arrays: what xarray's
//! CF decoding made of each case (`tests/data/*/case.json`; `cf_conventions`
//! and `cf_air` by `tests/data/make_cf_cases.py`), bit for bit in the type
//! xarray gave, and times as the same dates in every calendar.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde_json::Value;
use zarrs_cf::{CfOptions, Variable};

fn corpus() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/data")
}

/// The type and little-endian values of a `.npy` file.
fn read_npy(path: &Path) -> (String, Vec<u8>) {
    let bytes = std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    assert_eq!(&bytes[..8], b"\x93NUMPY\x01\x00", "{}", path.display());
    let header_len = usize::from(u16::from_le_bytes([bytes[8], bytes[9]]));
    let header = std::str::from_utf8(&bytes[10..10 + header_len]).unwrap();
    let descr = header.split("'descr': '").nth(1).unwrap().split('\'').next().unwrap().to_owned();
    (descr, bytes[10 + header_len..].to_vec())
}

#[test]
fn decoded_values_are_xarrays_bit_for_bit() {
    let mut checked = 0;
    for case in std::fs::read_dir(corpus()).unwrap() {
        let folder = case.unwrap().path();
        let Ok(manifest) = std::fs::read_to_string(folder.join("case.json")) else { continue };
        let manifest: Value = serde_json::from_str(&manifest).unwrap();
        let Some(arrays) = manifest["arrays"].as_array() else { continue };
        for entry in arrays.iter().filter(|e| e["decoded_expected"].is_object()) {
            let path = entry["path"].as_str().unwrap();
            let store =
                Arc::new(zarrs_kerchunk::ReferenceStore::open(folder.join("refs.json").to_str().unwrap()).unwrap());
            // xarray does not mask values outside the valid range; the view does by default.
            let options = CfOptions::default().with_mask_valid_range(false);
            let variable = Variable::open_with(store, path, options).unwrap();
            let (descr, expected) = read_npy(&folder.join(entry["decoded_expected"]["file"].as_str().unwrap()));
            let whole: Vec<_> = variable.shape().iter().map(|&n| 0..n).collect();
            let name = format!("{}/{path}", folder.file_name().unwrap().to_string_lossy());
            if let Some(width) = descr.strip_prefix("<U") {
                let width: usize = width.parse().unwrap();
                let expected: Vec<String> = expected
                    .chunks(4 * width)
                    .map(|text| {
                        text.chunks(4)
                            .map(|c| u32::from_le_bytes(c.try_into().unwrap()))
                            .filter(|&c| c != 0)
                            .filter_map(char::from_u32)
                            .collect()
                    })
                    .collect();
                let dates = variable.read_times(&whole).unwrap_or_else(|e| panic!("{name}: {e}"));
                let got: Vec<String> =
                    dates.iter().map(|d| d.map_or_else(|| "NaT".to_owned(), |d| d.to_string())).collect();
                assert_eq!(got, expected, "{name}");
                checked += 1;
                continue;
            }
            let got = variable.read(&whole).unwrap();
            let type_name = variable.decoded_type().unwrap().name();
            let got: Vec<u8> = match descr.as_str() {
                "<f4" => {
                    assert_eq!(type_name, "float32", "{name}");
                    #[expect(clippy::cast_possible_truncation, reason = "a float32 value, widened exactly")]
                    got.iter().flat_map(|&v| (v as f32).to_le_bytes()).collect()
                }
                "<f8" => {
                    assert_eq!(type_name, "float64", "{name}");
                    got.iter().flat_map(|&v| v.to_le_bytes()).collect()
                }
                other => panic!("{name}: decoded as {other}"),
            };
            // NaN payloads may differ; compare NaN as NaN and everything else by its bits.
            let width = if descr == "<f4" { 4 } else { 8 };
            for (i, (a, b)) in got.chunks(width).zip(expected.chunks(width)).enumerate() {
                let nan = |bytes: &[u8]| {
                    if width == 4 {
                        f32::from_le_bytes(bytes.try_into().unwrap()).is_nan()
                    } else {
                        f64::from_le_bytes(bytes.try_into().unwrap()).is_nan()
                    }
                };
                assert!(a == b || (nan(a) && nan(b)), "{name}: element {i}: {a:?} != {b:?}");
            }
            assert_eq!(got.len(), expected.len(), "{name}");
            checked += 1;
        }
    }
    assert!(checked >= 24, "only {checked} arrays have decoded values to check");
}

/// By default the view also masks values outside `valid_min`..`valid_max`,
/// as CF and netCDF4-python do (xarray leaves them).
#[test]
fn the_valid_range_is_masked_by_default() {
    let case = corpus().join("cf_conventions");
    let store = Arc::new(zarrs_kerchunk::ReferenceStore::open(case.join("refs.json").to_str().unwrap()).unwrap());
    let ranged = Variable::open(store, "/ranged").unwrap();
    let got = ranged.read(&[0..4, 0..5]).unwrap();
    let (_, raw) = read_npy(&case.join("expected/ranged.npy"));
    let raw: Vec<f32> = raw.chunks(4).map(|c| f32::from_le_bytes(c.try_into().unwrap())).collect();
    assert!(raw.iter().any(|v| v.abs() > 1.0) && raw.iter().any(|v| v.abs() <= 1.0));
    for (value, raw) in got.iter().zip(raw) {
        if (-1.0..=1.0).contains(&raw) {
            assert_eq!(value.to_bits(), f64::from(raw).to_bits());
        } else {
            assert!(value.is_nan(), "{raw} is outside the valid range");
        }
    }
}
