//! Codecs for [`zarrs`] under the ids that kerchunk, tifffile's zarr store
//! and numcodecs write, so that the reference sets they make decode in Rust.
//!
//! zarrs picks codecs by id from a registry of the whole process:
//! [`register_codecs`] adds these for every array opened after it, whatever
//! its store, and [`is_decodable`] says whether a codec id has a decoder
//! (these, or zarrs' own).
//!
//! | id | written by | what it is |
//! |---|---|---|
//! | `imagecodecs_lzw` | tifffile (`kerchunk.tiff`) | TIFF's LZW (compression 5) |
//! | `imagecodecs_packbits` | tifffile | TIFF's `PackBits` (compression 32773) |
//! | `imagecodecs_zstd` | tifffile | Zstandard (TIFF compression 50000) |
//! | `lzma` | tifffile, numcodecs | XZ or LZMA-alone containers (TIFF compression 34925) |
//! | `imagecodecs_delta` | tifffile | TIFF predictor 2 (horizontal differencing), a filter |
//! | `imagecodecs_floatpred` | tifffile | TIFF predictor 3 (floating point), a filter |
//! | `deflate` | kerchunk (zip members) | a zip member: its local file header, then raw deflate |
//! | `imagecodecs_jpeg`, `imagecodecs_webp` | tifffile | JPEG (with the file's tables, grey, RGB, YCbCr or CMYK; libjpeg-turbo's decoder with the feature `jpeg-c`, else pure Rust within 4 of it) and WebP tiles, lossy |
//! | `imagecodecs_png` | tifffile | PNG tiles (8 and 16 bits) |
//! | `imagecodecs_lerc` | tifffile | LERC tiles, plain or in zlib or zstd (GDAL's `LERC`, `LERC_DEFLATE`, `LERC_ZSTD`) |
//! | `imagecodecs_jpeg2k`, `imagecodecs_jpegxl` | tifffile | JPEG 2000 and JPEG XL tiles (8 and 16 bits) |
//! | `imagecodecs_lz4h5`, `imagecodecs_bitshuffle` | `kerchunk_scan` (HDF5's LZ4 and bitshuffle plugins, filters 32004 and 32008), imagecodecs | HDF5's LZ4 blocks; bits transposed in blocks (with LZ4: `lz4h5` then `bitshuffle`) |
//! | `fill_hdf_strings` | kerchunk (HDF5 with `vlen_encode="encode"` or `"null"`) | HDF5 strings by their heap ids, as text |
//! | `fixedscaleoffset` | numcodecs, kerchunk (FITS) | `stored / scale + offset` in float64, as numcodecs computes |
//! | `delta`, `astype`, `quantize`, `bitround` | numcodecs | its filters zarrs lacks (a cumulative sum, numpy's casts, nothing to undo) |
//! | `fletcher32` | kerchunk, `kerchunk_scan` (HDF5's filter 3), numcodecs | HDF5's checksum, checked and stripped; in place of zarrs' own, which checks data of an odd length wrong (deflate then fletcher32, one-byte types) |
//! | `grib` | kerchunk (`scan_grib`) | a GRIB2 message's values, as eccodes decodes them (templates 5.0, 5.2, 5.3, 5.4, 5.40, 5.41, 5.42; GRIB1 simple packing) and a projected grid's coordinates (Lambert, Mercator, polar stereographic, equal area, rotated, by `grib_grids`) |
//!
//! Every codec here only decodes, and stops at the chunk's size: a stream
//! that would decode to more is an error after at most one chunk's memory.
//! Decoding is pure Rust (weezl, ruzstd, lzma-rust2, zlib-rs, png, rust-aec,
//! hayro-jpeg2000, jpeg-decoder, image-webp, lerc-rs, jxl-oxide, `lz4_flex` through
//! `hdf5_plugin_filters`). JPEG 2000 makes this crate's
//! minimum Rust 1.92.
//!
//! ```
//! use std::sync::Arc;
//! # let location = concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/codecs/tiff/lzw_u16_pred2.kerchunk.json");
//! // A GeoTIFF with LZW and predictor 2, as kerchunk.tiff.tiff_to_zarr references it:
//! // {"compressor": {"id": "imagecodecs_lzw"}, "filters": [{"id": "imagecodecs_delta", ...}]}
//! let _codecs = zarrs_kerchunk_codecs::register_codecs();
//! let store = Arc::new(zarrs_kerchunk::ReferenceStore::open(location)?);
//! let array = zarrs::array::Array::open(store, "/")?;
//! let values: Vec<u16> = array.retrieve_array_subset(&[0..2, 0..3])?;
//! assert_eq!(values.len(), 6);
//! assert!(zarrs_kerchunk_codecs::is_decodable("imagecodecs_lzw"));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # Compatibility
//!
//! | `zarrs_kerchunk_codecs` | `zarrs` |
//! |---|---|
//! | 0.1 | 0.23 |

mod bounded;
pub mod crop;
mod decode_only;
mod deflate;
mod error;
mod fletcher32;
mod grib;
mod hdf5_plugins;
mod hdf_strings;
mod image;
#[cfg(feature = "jpeg-c")]
mod jpeg_c;
mod jpegxl;
mod layout;
mod lerc;
mod lzma;
mod lzw;
mod numeric;
mod packbits;
mod predictor;
mod registry;
#[cfg(test)]
mod tests;
mod zstd;

pub use error::DecodeError;
pub use registry::{CodecsRegistration, IDS, is_decodable, register_codecs};
