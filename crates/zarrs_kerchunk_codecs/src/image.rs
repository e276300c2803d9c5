//! tifffile's image codecs: `imagecodecs_jpeg` (TIFF compression 7, with
//! the file's JPEG tables), `imagecodecs_webp` and `imagecodecs_png`,
//! decoded by image-rs' pure-Rust decoders (jpeg-decoder, image-webp, png)
//! into the tile's samples, interleaved by pixel. JPEG and lossy WebP are
//! lossy: decoders differ from libjpeg-turbo and libwebp by a few units (the
//! crate's README says how many).

use base64::Engine;
use serde::Deserialize;
use serde_json::{Map, Value};

use crate::decode_only::Decode;
use crate::error::DecodeError;

/// tifffile's configuration of `imagecodecs_jpeg`: the JPEG tables of the
/// file (base64), and libjpeg's colour spaces, as numbers or names.
#[derive(Clone, Debug, Deserialize)]
pub(crate) struct JpegConfiguration {
    #[serde(default)]
    tables: Option<String>,
    #[serde(default)]
    header: Option<String>,
    #[serde(default)]
    bitspersample: Option<u64>,
    #[serde(default)]
    colorspace_jpeg: Option<Value>,
    #[serde(default)]
    colorspace_data: Option<Value>,
}

/// `imagecodecs_jpeg`.
#[derive(Clone, Debug)]
pub(crate) struct Jpeg {
    written: JpegConfiguration,
    tables: Option<Vec<u8>>,
    header: Option<Vec<u8>>,
    /// The JPEG stream's colour space, where TIFF says it.
    space: Option<Space>,
}

/// libjpeg's colour spaces (`J_COLOR_SPACE`) that tifffile names.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Space {
    Grayscale,
    Rgb,
    YCbCr,
    Cmyk,
    Ycck,
}

impl Space {
    /// The Adobe marker's transform that says this colour space to libjpeg
    /// (none for grey, which it knows from the one component).
    #[cfg(feature = "jpeg-c")]
    fn adobe_transform(self) -> Option<u8> {
        match self {
            Self::Rgb | Self::Cmyk => Some(0),
            Self::YCbCr => Some(1),
            Self::Ycck => Some(2),
            Self::Grayscale => None,
        }
    }

    fn transform(self) -> jpeg_decoder::ColorTransform {
        use jpeg_decoder::ColorTransform;
        match self {
            Self::Grayscale => ColorTransform::Grayscale,
            Self::Rgb => ColorTransform::RGB,
            Self::YCbCr => ColorTransform::YCbCr,
            Self::Cmyk => ColorTransform::CMYK,
            Self::Ycck => ColorTransform::YCCK,
        }
    }
}

/// libjpeg's `J_COLOR_SPACE` as imagecodecs writes it: a number or its name.
fn colour_space(value: Option<&Value>) -> Result<Option<Space>, String> {
    let name = match value {
        None | Some(Value::Null) => return Ok(None),
        Some(Value::Number(n)) => match n.as_u64() {
            Some(0) => return Ok(None),
            Some(1) => "GRAYSCALE",
            Some(2) => "RGB",
            Some(3) => "YCBCR",
            Some(4) => "CMYK",
            Some(5) => "YCCK",
            _ => return Err(format!("colour space {n}")),
        },
        Some(Value::String(s)) => s.as_str(),
        Some(other) => return Err(format!("colour space {other}")),
    };
    Ok(Some(match name.to_ascii_uppercase().as_str() {
        "GRAYSCALE" | "MINISBLACK" => Space::Grayscale,
        "RGB" => Space::Rgb,
        "YCBCR" => Space::YCbCr,
        "CMYK" => Space::Cmyk,
        "YCCK" => Space::Ycck,
        "UNKNOWN" => return Ok(None),
        other => return Err(format!("colour space {other:?}")),
    }))
}

impl Jpeg {
    pub(crate) fn new(written: JpegConfiguration) -> Result<Self, String> {
        let base64 = |text: &Option<String>| -> Result<Option<Vec<u8>>, String> {
            text.as_ref()
                .map(|t| base64::engine::general_purpose::STANDARD.decode(t).map_err(|e| format!("tables: {e}")))
                .transpose()
        };
        if written.bitspersample.is_some_and(|b| b != 8) {
            return Err(format!("{} bits per sample (8 are decoded)", written.bitspersample.unwrap_or(0)));
        }
        // The colour space of the JPEG stream decides the transform; the
        // data's (RGB, grey) is what comes out either way.
        let space = colour_space(written.colorspace_jpeg.as_ref())?;
        colour_space(written.colorspace_data.as_ref())?;
        Ok(Self { tables: base64(&written.tables)?, header: base64(&written.header)?, space, written })
    }

    /// The tile as one whole JPEG stream: the tables spliced in before the
    /// tile's frame (tables without their end marker, tile without its start).
    fn stream(&self, tile: &[u8]) -> Vec<u8> {
        let mut stream = Vec::with_capacity(tile.len() + self.tables.as_ref().map_or(0, Vec::len) + 4);
        if let Some(header) = &self.header {
            stream.extend_from_slice(header);
            stream.extend_from_slice(tile);
            stream.extend_from_slice(&[0xFF, 0xD9]);
            return stream;
        }
        match &self.tables {
            Some(tables) if tables.len() >= 4 && tile.starts_with(&[0xFF, 0xD8]) => {
                stream.extend_from_slice(tables.strip_suffix(&[0xFF, 0xD9]).unwrap_or(tables));
                stream.extend_from_slice(&tile[2..]);
            }
            _ => stream.extend_from_slice(tile),
        }
        stream
    }
}

impl Decode for Jpeg {
    const ID: &'static str = "imagecodecs_jpeg";

    fn configuration(&self) -> Map<String, Value> {
        let mut map = Map::new();
        let c = &self.written;
        map.insert("tables".into(), c.tables.clone().map_or(Value::Null, Value::from));
        map.insert("header".into(), c.header.clone().map_or(Value::Null, Value::from));
        map.insert("bitspersample".into(), c.bitspersample.map_or(Value::Null, Value::from));
        map.insert("colorspace_jpeg".into(), c.colorspace_jpeg.clone().unwrap_or(Value::Null));
        map.insert("colorspace_data".into(), c.colorspace_data.clone().unwrap_or(Value::Null));
        map
    }

    fn decode(&self, encoded: &[u8], size: usize) -> Result<Vec<u8>, DecodeError> {
        #[cfg(feature = "jpeg-c")]
        return crate::jpeg_c::decode(&self.stream(encoded), self.space.and_then(Space::adobe_transform), size);
        #[cfg(not(feature = "jpeg-c"))]
        self.decode_pure(encoded, size)
    }
}

impl Jpeg {
    /// The tile decoded in pure Rust (jpeg-decoder; zune-jpeg for four
    /// components): within a few units of libjpeg-turbo (the crate's
    /// README says how many). The decoder of builds without `jpeg-c`, which
    /// every build's tests check.
    #[cfg_attr(feature = "jpeg-c", allow(dead_code, reason = "checked by the tests of every build"))]
    pub(crate) fn decode_pure(&self, encoded: &[u8], size: usize) -> Result<Vec<u8>, DecodeError> {
        let stream = self.stream(encoded);
        let mut decoder = jpeg_decoder::Decoder::new(&stream[..]);
        decoder.set_max_decoding_buffer_size(size);
        if let Some(space) = self.space {
            decoder.set_color_transform(space.transform());
        }
        decoder.read_info().map_err(DecodeError::corrupt)?;
        let info = decoder.info().ok_or_else(|| DecodeError::Layout("a JPEG without a frame header".into()))?;
        let samples =
            (usize::from(info.width) * usize::from(info.height)).saturating_mul(info.pixel_format.pixel_bytes());
        if samples > size {
            return Err(DecodeError::TooLong { size });
        }
        // Four components (GDAL's RGBA or CMYK tiles): libjpeg, and so imagecodecs, returns them
        // as stored. jpeg-decoder inverts CMYK and, on rasterio's alpha.tif, decodes one tile
        // wrongly from its 88th row (tests/codecs/tiff/real); zune-jpeg gives libjpeg's values.
        if info.pixel_format == jpeg_decoder::PixelFormat::CMYK32 && matches!(self.space, None | Some(Space::Cmyk)) {
            let options = zune_core::options::DecoderOptions::default()
                .jpeg_set_out_colorspace(zune_core::colorspace::ColorSpace::CMYK)
                .set_max_width(usize::from(info.width))
                .set_max_height(usize::from(info.height));
            let mut four = zune_jpeg::JpegDecoder::new_with_options(std::io::Cursor::new(&stream[..]), options);
            return four.decode().map_err(|e| DecodeError::in_format("JPEG of four components", e));
        }
        decoder.decode().map_err(DecodeError::corrupt)
    }
}

/// tifffile's configuration of `imagecodecs_webp` (`hasalpha` for 4 samples).
#[derive(Clone, Debug, Deserialize)]
pub(crate) struct Webp {
    #[serde(default)]
    hasalpha: Option<bool>,
}

impl Decode for Webp {
    const ID: &'static str = "imagecodecs_webp";

    fn configuration(&self) -> Map<String, Value> {
        let mut map = Map::new();
        if let Some(alpha) = self.hasalpha {
            map.insert("hasalpha".into(), alpha.into());
        }
        map
    }

    fn decode(&self, encoded: &[u8], size: usize) -> Result<Vec<u8>, DecodeError> {
        let mut decoder = image_webp::WebPDecoder::new(std::io::Cursor::new(encoded)).map_err(DecodeError::corrupt)?;
        decoder.set_memory_limit(size.saturating_add(1 << 16));
        let bytes = decoder.output_buffer_size().ok_or_else(|| DecodeError::Layout("a WebP too large".into()))?;
        if bytes > size {
            return Err(DecodeError::TooLong { size });
        }
        let mut pixels = vec![0; bytes];
        decoder.read_image(&mut pixels).map_err(DecodeError::corrupt)?;
        Ok(pixels)
    }
}

/// `imagecodecs_png`: TIFF tiles compressed as PNG images (compression
/// 34933, which tifffile writes and GDAL does not), decoded by the `png`
/// crate; 16-bit samples come out in little-endian order, as imagecodecs
/// returns them on the machines kerchunk runs on.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Png;

impl Decode for Png {
    const ID: &'static str = "imagecodecs_png";

    fn decode(&self, encoded: &[u8], size: usize) -> Result<Vec<u8>, DecodeError> {
        let limits = png::Limits { bytes: size.saturating_add(1 << 16) };
        let mut decoder = png::Decoder::new_with_limits(std::io::Cursor::new(encoded), limits);
        decoder.set_transformations(png::Transformations::IDENTITY);
        let mut reader = decoder.read_info().map_err(DecodeError::corrupt)?;
        let bytes = reader.output_buffer_size().ok_or_else(|| DecodeError::Layout("a PNG too large".into()))?;
        if bytes > size.saturating_add(1 << 16) {
            return Err(DecodeError::TooLong { size });
        }
        let mut pixels = vec![0; bytes];
        let frame = reader.next_frame(&mut pixels).map_err(DecodeError::corrupt)?;
        pixels.truncate(frame.buffer_size());
        if pixels.len() > size {
            return Err(DecodeError::TooLong { size });
        }
        if frame.bit_depth == png::BitDepth::Sixteen {
            pixels.chunks_exact_mut(2).for_each(|sample| sample.swap(0, 1));
        }
        Ok(pixels)
    }
}

/// `imagecodecs_jpeg2k`: TIFF tiles compressed as JPEG 2000 codestreams or
/// JP2 files (compression 34712, which tifffile writes and GDAL's `GTiff`
/// does not), decoded by `hayro-jpeg2000` into the tile's samples,
/// interleaved by pixel, in the smallest type of the components' precision
/// (8 bits one byte, 16 two), little-endian, as imagecodecs returns them.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Jpeg2k;

impl Decode for Jpeg2k {
    const ID: &'static str = "imagecodecs_jpeg2k";

    fn decode(&self, encoded: &[u8], size: usize) -> Result<Vec<u8>, DecodeError> {
        let settings = hayro_jpeg2000::DecodeSettings { resolve_palette_indices: false, ..Default::default() };
        let image =
            hayro_jpeg2000::Image::new(encoded, &settings).map_err(|e| DecodeError::in_format("JPEG 2000", e))?;
        let components = usize::from(image.color_space().num_channels()) + usize::from(image.has_alpha());
        let depth = image.original_bit_depth();
        let item = match depth {
            1..=8 => 1,
            9..=16 => 2,
            // Samples come as f32: whole numbers exactly only below 2^24.
            _ => return Err(DecodeError::Layout(format!("JPEG 2000 of {depth} bits (at most 16 are decoded)"))),
        };
        let pixels = u64::from(image.width()) * u64::from(image.height());
        // Checked before decoding: the header's size, at the components' precision.
        if pixels.saturating_mul(components as u64 * item as u64) > size as u64 {
            return Err(DecodeError::TooLong { size });
        }
        let mut context = hayro_jpeg2000::DecoderContext::default();
        let decoded = image.decode(&mut context).map_err(|e| DecodeError::in_format("JPEG 2000", e))?;
        let planes: Vec<&[f32]> = decoded.components().iter().map(hayro_jpeg2000::ComponentData::samples).collect();
        #[expect(clippy::cast_possible_truncation, reason = "checked above: the image fits the chunk")]
        let pixels = pixels as usize;
        if planes.len() != components || planes.iter().any(|plane| plane.len() < pixels) {
            return Err(DecodeError::Layout(format!("a JPEG 2000 image of {} components", planes.len())));
        }
        let mut out = Vec::with_capacity(pixels * components * item);
        for pixel in 0..pixels {
            for plane in &planes {
                // Whole numbers in f32 (exact at these precisions); two's complement for signed components.
                #[expect(clippy::cast_possible_truncation, reason = "rounded, at most 16 bits")]
                let sample = plane[pixel].round() as i32;
                out.extend_from_slice(&sample.to_le_bytes()[..item]);
            }
        }
        Ok(out)
    }
}
