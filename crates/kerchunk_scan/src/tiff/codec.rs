//! An image's pixels as zarr v2 sees them: the dtype from its samples, and
//! the compressor and filters from its compression and predictor, under the
//! codec ids tifffile's `write_fsspec` (kerchunk's `tiff_to_zarr`) writes and
//! `zarrs_kerchunk_codecs` decodes.

use base64::Engine as _;
use serde_json::{Value, json};

use crate::tiff::ifd::{Ifd, tag};

/// The dtype of `ifd`'s samples in the file's byte order (`|u1`, `<f4`,
/// `>i2`...), or why zarr cannot hold them.
pub(crate) fn dtype(ifd: &Ifd, big_endian: bool) -> Result<String, String> {
    let bits = ifd.unsigned(tag::BITS_PER_SAMPLE).unwrap_or(&[1]);
    let formats = ifd.unsigned(tag::SAMPLE_FORMAT).unwrap_or(&[1]);
    let (Some(&first_bits), Some(&format)) = (bits.first(), formats.first()) else {
        return Err("no bits per sample".into());
    };
    if bits.iter().any(|&b| b != first_bits) || formats.iter().any(|&f| f != format) {
        return Err(format!("samples of different types (bits {bits:?}, formats {formats:?})"));
    }
    let kind = match (format, first_bits) {
        (1, 8 | 16 | 32 | 64) => 'u',
        (2, 8 | 16 | 32 | 64) => 'i',
        (3, 16 | 32 | 64) => 'f',
        _ => return Err(format!("{first_bits}-bit samples of format {format} (zarr has no such dtype)")),
    };
    let order = if first_bits == 8 {
        '|'
    } else if big_endian {
        '>'
    } else {
        '<'
    };
    Ok(format!("{order}{kind}{}", first_bits / 8))
}

/// What decodes one stored tile or strip.
#[derive(Debug)]
pub(crate) struct Pipeline {
    /// The zarr v2 compressor (`Value::Null` for none).
    pub(crate) compressor: Value,
    /// The filters (the predictor), empty for none.
    pub(crate) filters: Vec<Value>,
}

/// The compressor and filters of `ifd`'s tiles, each chunk `chunk` long on
/// each axis, as tifffile writes them; `jfif` says whether the first JPEG
/// tile carries a JFIF marker (tifffile's `is_jfif`, which sets the colour space).
///
/// # Errors
/// A compression, predictor or layout tifffile does not reference either.
pub(crate) fn pipeline(ifd: &Ifd, dtype: &str, chunk: &[u64], jfif: bool) -> Result<Pipeline, String> {
    let compression = ifd.first(tag::COMPRESSION, 1);
    let samples = ifd.first(tag::SAMPLES_PER_PIXEL, 1);
    let planar = ifd.first(tag::PLANAR_CONFIGURATION, 1);
    let photometric = ifd.first(tag::PHOTOMETRIC, 1);
    if ifd.first(tag::FILL_ORDER, 1) != 1 {
        return Err("bits filled from the lowest (FillOrder 2)".into());
    }
    let is_jpeg = matches!(compression, 7 | 33007 | 34892);
    if photometric == 6 && !is_jpeg {
        let subsampling = ifd.unsigned(tag::YCBCR_SUBSAMPLING).unwrap_or(&[2, 2]);
        if subsampling.iter().any(|&s| s != 1) {
            return Err("YCbCr samples subsampled outside JPEG".into());
        }
    }
    let id = |id: &str| json!({ "id": id });
    let compressor = match compression {
        1 => Value::Null,
        5 => id("imagecodecs_lzw"),
        8 | 32946 | 50013 => id("zlib"),
        32773 => id("imagecodecs_packbits"),
        34925 => id("lzma"),
        50000 => id("imagecodecs_zstd"),
        50001 if samples == 4 => json!({ "hasalpha": true, "id": "imagecodecs_webp" }),
        50001 => id("imagecodecs_webp"),
        34887 => id("imagecodecs_lerc"),
        34933 => id("imagecodecs_png"),
        33003..=33005 | 34712 => id("imagecodecs_jpeg2k"),
        22610 | 34934 => id("imagecodecs_jpegxr"),
        50002 | 52546 => id("imagecodecs_jpegxl"),
        7 | 33007 | 34892 => jpeg(ifd, (photometric, planar), jfif),
        other => return Err(format!("compression {other}, which tifffile does not reference either")),
    };
    let predictor = ifd.first(tag::PREDICTOR, 1);
    let (filter, dist) = match predictor {
        1 => return Ok(Pipeline { compressor, filters: Vec::new() }),
        2 => ("imagecodecs_delta", 1),
        34892 => ("imagecodecs_delta", 2),
        34893 => ("imagecodecs_delta", 4),
        3 => ("imagecodecs_floatpred", 1),
        34894 => ("imagecodecs_floatpred", 2),
        34895 => ("imagecodecs_floatpred", 4),
        other => return Err(format!("predictor {other}")),
    };
    // Differences run along x: the last axis, or the one before the samples of a pixel.
    let axis = if planar == 1 && samples > 1 { -2 } else { -1 };
    let filters = vec![json!({ "axis": axis, "dist": dist, "dtype": dtype, "id": filter, "shape": chunk })];
    Ok(Pipeline { compressor, filters })
}

/// tifffile's `imagecodecs_jpeg` configuration: the file's tables, and the
/// colour spaces of its `jpeg_decode_colorspace` (libjpeg's numbers).
fn jpeg(ifd: &Ifd, (photometric, planar): (u64, u64), jfif: bool) -> Value {
    let tables = ifd.bytes(tag::JPEG_TABLES).map(|t| base64::engine::general_purpose::STANDARD.encode(t));
    let extra = ifd.unsigned(tag::EXTRA_SAMPLES).is_some_and(|e| !e.is_empty());
    let (mut colorspace, mut data): (Value, Value) = (Value::Null, Value::Null);
    if !extra {
        match photometric {
            6 => data = json!(2),
            2 => {
                if !jfif {
                    colorspace = json!(2);
                }
                data = json!(2);
            }
            5 => data = json!(4),
            other if other > 3 => data = json!(photometric_name(other)),
            _ => {}
        }
    }
    if planar != 1 {
        data = json!(1);
    }
    let bits = ifd.unsigned(tag::BITS_PER_SAMPLE).and_then(|b| b.first().copied()).unwrap_or(8);
    json!({
        "bitspersample": bits,
        "colorspace_data": data,
        "colorspace_jpeg": colorspace,
        "header": null,
        "id": "imagecodecs_jpeg",
        "tables": tables,
    })
}

/// tifffile's `PHOTOMETRIC` names of the interpretations past 3.
fn photometric_name(code: u64) -> String {
    match code {
        4 => "MASK".into(),
        8 => "CIELAB".into(),
        9 => "ICCLAB".into(),
        10 => "ITULAB".into(),
        32844 => "LOGL".into(),
        32845 => "LOGLUV".into(),
        32803 => "CFA".into(),
        34892 => "LINEAR_RAW".into(),
        other => other.to_string(),
    }
}
