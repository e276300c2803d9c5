//! Real `GeoTIFF` files from rasterio's test suite (`tests/codecs/tiff/real`, made by its `make.py`):
//! LZW and DEFLATE strips and tiles, Pack-bits, JPEG (RGBA, and YCbCr cloud-optimised files with every overview
//! level), float NaN and nodata. Each array reads rasterio's values at every row and every 7th
//! column (the truth `make.py` keeps: every strip, one-row strips included): exactly, or for JPEG
//! no further than kerchunk's own Python path.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use zarrs::array::{Array, ArrayBytes};
use zarrs_kerchunk::ReferenceStoreBuilder;

/// Every 7th column of every row.
const STRIDE: usize = 7;

/// How far a JPEG tile may decode from imagecodecs (libjpeg-turbo) decoding the same bytes: with
/// `jpeg-c`, the same decoder, not at all; in pure Rust, what jpeg-decoder and zune-jpeg reach on YCbCr.
fn from_libjpeg() -> u8 {
    if cfg!(feature = "jpeg-c") { 0 } else { 4 }
}

fn folder() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/codecs/tiff/real")
}

/// A little-endian `.npy` file's dtype (`u1`, `u2`, `f4`), shape and data.
fn npy(path: &Path) -> (String, Vec<usize>, Vec<u8>) {
    let bytes = std::fs::read(path).unwrap();
    let header_len = usize::from(u16::from_le_bytes([bytes[8], bytes[9]]));
    let header = std::str::from_utf8(&bytes[10..10 + header_len]).unwrap();
    let descr = header.split("'descr': '").nth(1).unwrap()[1..3].to_owned();
    let shape = header.split("'shape': (").nth(1).unwrap().split(')').next().unwrap();
    let shape = shape.split(',').map(str::trim).filter(|s| !s.is_empty()).map(|s| s.parse().unwrap()).collect();
    (descr, shape, bytes[10 + header_len..].to_vec())
}

/// Band `b`, row `y`, column `x` of values laid out on tifffile's `axes` (`Y, X`, `Y, X, S`,
/// numbered on overview levels), each `item` bytes, of `shape` (bands, height, width).
fn sample(bytes: &[u8], axes: &[String], [bands, height, width]: [usize; 3], item: usize) -> Vec<u8> {
    let interleaved = axes.last().is_some_and(|a| a.starts_with('S'));
    let mut out = Vec::new();
    for b in 0..bands {
        for y in 0..height {
            for x in (0..width).step_by(STRIDE) {
                let at = if interleaved { (y * width + x) * bands + b } else { (b * height + y) * width + x };
                out.extend_from_slice(&bytes[at * item..(at + 1) * item]);
            }
        }
    }
    out
}

#[test]
fn real_tiffs_read_what_rasterio_reads() {
    let _codecs = zarrs_kerchunk_codecs::register_codecs();
    let _zlib = zarrs_zlib_sized::register_zlib_codec();
    let cases: serde_json::Map<String, serde_json::Value> =
        serde_json::from_slice(&std::fs::read(folder().join("cases.json")).unwrap()).unwrap();
    let mut arrays = 0;
    for (name, entries) in &cases {
        let builder = ReferenceStoreBuilder::new().with_codec_check(zarrs_kerchunk_codecs::is_decodable);
        let store = Arc::new(builder.open(folder().join(format!("{name}.kerchunk.json")).to_str().unwrap()).unwrap());
        for (level, entry) in entries.as_array().unwrap().iter().enumerate() {
            let path = format!("/{}", entry["path"].as_str().unwrap());
            let array = Array::open(store.clone(), &path).unwrap_or_else(|e| panic!("{name} {path}: {e}"));
            let bytes = array
                .retrieve_array_subset::<ArrayBytes>(&array.subset_all())
                .unwrap_or_else(|e| panic!("{name} {path}: {e}"))
                .into_fixed()
                .unwrap()
                .into_owned();
            let axes: Vec<String> = serde_json::from_value(entry["axes"].clone()).unwrap();
            let shape: [usize; 3] = serde_json::from_value(entry["shape"].clone()).unwrap();
            let (descr, _, truth) = npy(&folder().join(format!("{name}.{level}.npy")));
            let item: usize = descr[1..].parse().unwrap();
            let ours = sample(&bytes, &axes, shape, item);
            assert_eq!(ours.len(), truth.len(), "{name} {path}");
            let tolerance = entry["tolerance"].as_u64().unwrap();
            match descr.as_str() {
                "f4" => {
                    let floats = |b: &[u8]| -> Vec<f32> {
                        b.chunks_exact(4).map(|c| f32::from_le_bytes(c.try_into().unwrap())).collect()
                    };
                    for (a, b) in floats(&ours).iter().zip(floats(&truth)) {
                        assert!(a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan()), "{name}: {a} != {b}");
                    }
                }
                "u1" if tolerance > 0 => {
                    let worst = ours.iter().zip(&truth).map(|(a, b)| a.abs_diff(*b)).max().unwrap_or(0);
                    assert!(
                        u64::from(worst) <= tolerance,
                        "{name} {path}: {worst} from rasterio (kerchunk's path: {tolerance})"
                    );
                    eprintln!("{name} {path}: at most {worst} from rasterio; kerchunk's Python path {tolerance}");
                    let (_, _, theirs) = npy(&folder().join(format!("{name}.{level}.imagecodecs.npy")));
                    assert_eq!(ours.len(), theirs.len(), "{name} {path}");
                    let far = ours.iter().zip(&theirs).map(|(a, b)| a.abs_diff(*b)).max().unwrap_or(0);
                    let many = ours.iter().zip(&theirs).filter(|(a, b)| a.abs_diff(**b) > 1).count();
                    eprintln!(
                        "{name} {path}: at most {far} from imagecodecs', {many} of {} by more than 1",
                        ours.len()
                    );
                    assert!(
                        far <= from_libjpeg(),
                        "{name} {path}: {far} from imagecodecs' values (at most {})",
                        from_libjpeg()
                    );
                }
                _ => assert!(ours == truth, "{name} {path}: differs from rasterio's values"),
            }
            arrays += 1;
        }
    }
    assert!(arrays >= 15, "{arrays} arrays");
}
