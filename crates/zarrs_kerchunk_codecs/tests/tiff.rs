//! `GeoTIFF` files in every lossless compression and predictor GDAL writes
//! (`tests/codecs/tiff`, made by its `make.py` with rasterio, and with
//! tifffile for PNG tiles, whose truth is the values written), referenced by
//! kerchunk's `tiff_to_zarr`: every array reads, through the store and these
//! codecs, the values rasterio reads from the file, bit for bit (and
//! `make.py` checked that kerchunk's own Python path reads the same).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use zarrs::array::{Array, ArrayBytes};
use zarrs_kerchunk::ReferenceStoreBuilder;

/// The cases of a lossy codec (8-bit samples): JPEG (GDAL's and tifffile's) and lossy WebP,
/// whose values may be `TOLERANCE` from rasterio's: `make.py` checks that imagecodecs,
/// kerchunk's Python path, is as close.
fn lossy(name: &str) -> bool {
    name.starts_with("jpeg_") || name == "webp_lossy"
}
const TOLERANCE: u8 = 4;

/// How far a JPEG tile may decode from imagecodecs (libjpeg-turbo) decoding the same bytes: with
/// `jpeg-c`, the same decoder, not at all; in pure Rust, what jpeg-decoder reaches on YCbCr (README.md).
fn from_libjpeg() -> u8 {
    if cfg!(feature = "jpeg-c") { 0 } else { 4 }
}

fn folder() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/codecs/tiff")
}

/// A `.npy` file's shape and data (little-endian, as `make.py` saves them).
fn npy(path: &Path) -> (Vec<usize>, Vec<u8>) {
    let bytes = std::fs::read(path).unwrap();
    assert_eq!(&bytes[..6], b"\x93NUMPY");
    let header_len = usize::from(u16::from_le_bytes([bytes[8], bytes[9]]));
    let header = std::str::from_utf8(&bytes[10..10 + header_len]).unwrap();
    assert!(!header.contains("'>"), "{}: big-endian", path.display());
    let shape = header.split("'shape': (").nth(1).unwrap().split(')').next().unwrap();
    let shape = shape.split(',').map(str::trim).filter(|s| !s.is_empty()).map(|s| s.parse().unwrap()).collect();
    (shape, bytes[10 + header_len..].to_vec())
}

/// The cases: every `NAME.kerchunk.json` beside its `NAME.npy`.
fn cases() -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(folder())
        .unwrap()
        .filter_map(|entry| {
            entry.unwrap().file_name().into_string().unwrap().strip_suffix(".kerchunk.json").map(str::to_owned)
        })
        .collect();
    names.sort();
    names
}

/// The array's dimension names, from its `_ARRAY_DIMENSIONS`.
fn dims<T: ?Sized>(array: &Array<T>) -> Vec<String> {
    array.attributes()["_ARRAY_DIMENSIONS"].as_array().unwrap().iter().map(|d| d.as_str().unwrap().to_owned()).collect()
}

/// Values in tifffile's layout (`Y, X`, `Y, X, S` or `S, Y, X`) as rasterio's `(band, y, x)`.
fn band_first(dims: &[String], shape: &[u64], bytes: &[u8]) -> Vec<u8> {
    let dims: Vec<&str> = dims.iter().map(String::as_str).collect();
    if dims != ["Y", "X", "S"] {
        return bytes.to_vec();
    }
    let [height, width, bands] = [0, 1, 2].map(|i| usize::try_from(shape[i]).unwrap());
    let item = bytes.len() / (height * width * bands);
    let mut out = Vec::with_capacity(bytes.len());
    for band in 0..bands {
        for pixel in 0..height * width {
            let at = (pixel * bands + band) * item;
            out.extend_from_slice(&bytes[at..at + item]);
        }
    }
    out
}

#[test]
fn every_tiff_reads_what_rasterio_reads() {
    const { assert!(cfg!(target_endian = "little"), "the ground truth is little-endian") };
    let cases = cases();
    assert!(cases.len() >= 39, "{cases:?}");
    let open = |name: &str| {
        let location = folder().join(format!("{name}.kerchunk.json"));
        let builder = ReferenceStoreBuilder::new().with_codec_check(zarrs_kerchunk_codecs::is_decodable);
        let store = Arc::new(builder.open(location.to_str().unwrap()).unwrap());
        // A single-level TIFF's references hold the array at the root.
        Array::open(store, "/")
    };
    // Before registration, an LZW array has no decoder: refused when opened, naming the codec.
    let Err(refused) = open("lzw_u8") else { panic!("imagecodecs_lzw is not one of zarrs' codecs") };
    let refused = refused.to_string();
    assert!(refused.contains("codec \"imagecodecs_lzw\" has no decoder"), "{refused}");
    assert!(!zarrs_kerchunk_codecs::is_decodable("imagecodecs_lzw"));

    let registration = zarrs_kerchunk_codecs::register_codecs();
    for id in zarrs_kerchunk_codecs::IDS {
        assert!(zarrs_kerchunk_codecs::is_decodable(id), "{id}");
    }
    for name in &cases {
        let array = open(name).unwrap_or_else(|e| panic!("{name}: {e}"));
        let bytes =
            array.retrieve_array_subset::<ArrayBytes>(&array.subset_all()).unwrap_or_else(|e| panic!("{name}: {e}"));
        let bytes = bytes.into_fixed().unwrap().into_owned();
        let (shape, truth) = npy(&folder().join(format!("{name}.npy")));
        let ours = band_first(&dims(&array), array.shape(), &bytes);
        assert_eq!(ours.len(), truth.len(), "{name}: {shape:?}");
        if lossy(name) {
            // JPEG and lossy WebP: decoders differ from GDAL's (libjpeg-turbo, libwebp) by a few units.
            let worst = ours.iter().zip(&truth).map(|(a, b)| a.abs_diff(*b)).max().unwrap_or(0);
            assert!(worst <= TOLERANCE, "{name}: {worst} units from rasterio's values");
            eprintln!("{name}: at most {worst} units from rasterio's values");
            if name.starts_with("jpeg_") {
                let (_, theirs) = npy(&folder().join(format!("{name}.imagecodecs.npy")));
                assert_eq!(ours.len(), theirs.len(), "{name}");
                let far = ours.iter().zip(&theirs).map(|(a, b)| a.abs_diff(*b)).max().unwrap_or(0);
                let many = ours.iter().zip(&theirs).filter(|(a, b)| a.abs_diff(**b) > 1).count();
                eprintln!("{name}: at most {far} units from imagecodecs', {many} of {} by more than 1", ours.len());
                assert!(
                    far <= from_libjpeg(),
                    "{name}: {far} units from imagecodecs' values (at most {})",
                    from_libjpeg()
                );
            }
        } else {
            assert!(ours == truth, "{name}: differs from rasterio's values");
        }
    }
    registration.unregister();
    assert!(!zarrs_kerchunk_codecs::is_decodable("imagecodecs_lzw"));
}
