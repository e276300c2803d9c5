//! FITS images with BZERO and BSCALE, as kerchunk's FITS scanner references
//! them (`tests/codecs/fits`, made by its `make.py` with astropy): each reads
//! the FITS standard's values (`stored * BSCALE + BZERO`), which astropy gives.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use zarrs::array::Array;
use zarrs_kerchunk::ReferenceStoreBuilder;

fn folder() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/codecs/fits")
}

/// A `.npy` file of little-endian float64: its values.
fn npy(path: &Path) -> Vec<f64> {
    let bytes = std::fs::read(path).unwrap();
    let header_len = usize::from(u16::from_le_bytes([bytes[8], bytes[9]]));
    let header = std::str::from_utf8(&bytes[10..10 + header_len]).unwrap();
    assert!(header.contains("'<f8'"), "{header}");
    bytes[10 + header_len..].chunks_exact(8).map(|b| f64::from_le_bytes(b.try_into().unwrap())).collect()
}

#[test]
fn scaled_images_read_the_fits_values() {
    let _codecs = zarrs_kerchunk_codecs::register_codecs();
    for (name, exact) in [("uint16", true), ("uint32", true), ("scaled_i2", false)] {
        let builder = ReferenceStoreBuilder::new().with_codec_check(zarrs_kerchunk_codecs::is_decodable);
        let store = Arc::new(builder.open(folder().join(format!("{name}.kerchunk.json")).to_str().unwrap()).unwrap());
        let array = Array::open(store, "/PRIMARY").unwrap_or_else(|e| panic!("{name}: {e}"));
        let ours =
            array.retrieve_array_subset::<Vec<f64>>(&array.subset_all()).unwrap_or_else(|e| panic!("{name}: {e}"));
        let truth = npy(&folder().join(format!("{name}.npy")));
        assert_eq!(ours.len(), truth.len(), "{name}");
        for (i, (a, b)) in ours.iter().zip(&truth).enumerate() {
            // BSCALE 1 adds whole numbers exactly; otherwise dividing by 1 / BSCALE is within one rounding.
            let close = if exact { a.to_bits() == b.to_bits() } else { (a - b).abs() <= b.abs() * f64::EPSILON };
            assert!(close, "{name}: value {i} is {a}, where FITS gives {b}");
        }
    }
}
