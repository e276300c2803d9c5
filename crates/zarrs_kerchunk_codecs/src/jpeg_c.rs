//! `imagecodecs_jpeg` through libjpeg-turbo's decoder (feature `jpeg-c`),
//! the decoder imagecodecs, GDAL and rasterio use: mozjpeg's build of it,
//! whose decompression is libjpeg-turbo's (the slow-but-exact integer
//! inverse DCT, "fancy" chroma upsampling, libjpeg's YCbCr tables), so tiles
//! decode to imagecodecs' values exactly. Compiled from source by the
//! `mozjpeg-sys` crate (no NASM: its C paths compute what the SIMD ones do).
//!
//! imagecodecs tells libjpeg the stream's colour space when tifffile knows
//! it (TIFF's photometric); the safe `mozjpeg` API cannot, so an Adobe
//! marker saying the same is spliced in before the frame, which is what
//! libjpeg reads the colour space from otherwise. libjpeg reports errors by
//! unwinding (mozjpeg-sys built with `unwinding`); they are caught here.

use mozjpeg::ColorSpace;

use crate::error::DecodeError;

/// Decode the whole JPEG `stream` into at most `size` bytes of samples
/// interleaved by pixel: grey, RGB, or four components as stored (CMYK).
/// `adobe_transform`, where TIFF says the stream's colour space, is the
/// Adobe marker's way of saying it: 0 RGB or CMYK as stored, 1 YCbCr, 2 YCCK.
pub(crate) fn decode(stream: &[u8], adobe_transform: Option<u8>, size: usize) -> Result<Vec<u8>, DecodeError> {
    let stream = with_colour_space(stream, adobe_transform);
    let decoded = std::panic::catch_unwind(|| -> std::io::Result<Vec<u8>> {
        let decompress = mozjpeg::Decompress::with_markers(&[]).from_mem(&stream)?;
        let components = decompress.components().len();
        let (width, height) = decompress.size();
        if width.saturating_mul(height).saturating_mul(components) > size {
            // Told apart from libjpeg's own errors by its kind, which mozjpeg never gives.
            return Err(std::io::ErrorKind::FileTooLarge.into());
        }
        let out = match components {
            1 => ColorSpace::JCS_GRAYSCALE,
            4 => ColorSpace::JCS_CMYK,
            _ => ColorSpace::JCS_RGB,
        };
        let mut started = decompress.to_colorspace(out)?;
        let samples = started.read_scanlines::<u8>()?;
        started.finish()?;
        Ok(samples)
    });
    match decoded {
        Ok(Ok(samples)) if samples.len() <= size => Ok(samples),
        Ok(Ok(_)) => Err(DecodeError::TooLong { size }),
        Ok(Err(error)) if error.kind() == std::io::ErrorKind::FileTooLarge => Err(DecodeError::TooLong { size }),
        Ok(Err(error)) => Err(DecodeError::in_format("JPEG (libjpeg-turbo)", error)),
        Err(panic) => {
            let message = panic
                .downcast_ref::<String>()
                .map(String::as_str)
                .or_else(|| panic.downcast_ref::<&str>().copied())
                .unwrap_or("a corrupt stream");
            Err(DecodeError::in_format("JPEG (libjpeg-turbo)", message))
        }
    }
}

/// `stream` with an Adobe marker (APP14) before its frame header whose
/// `transform` says the colour space, for libjpeg to take as the stream's; as
/// it is without one, or without a frame header to put it before.
fn with_colour_space(stream: &[u8], transform: Option<u8>) -> Vec<u8> {
    let Some(transform) = transform else { return stream.to_vec() };
    let Some(frame) = frame_header(stream) else { return stream.to_vec() };
    let adobe = [0xFF, 0xEE, 0x00, 0x0E, b'A', b'd', b'o', b'b', b'e', 0x00, 0x64, 0x00, 0x00, 0x00, 0x00, transform];
    let mut out = Vec::with_capacity(stream.len() + adobe.len());
    out.extend_from_slice(&stream[..frame]);
    out.extend_from_slice(&adobe);
    out.extend_from_slice(&stream[frame..]);
    out
}

/// Where the first frame header (SOF0 to SOF15, not DHT, JPG or DAC) starts,
/// walking the marker segments from the start of image.
fn frame_header(stream: &[u8]) -> Option<usize> {
    let mut at = 2;
    if !stream.starts_with(&[0xFF, 0xD8]) {
        return None;
    }
    while at + 4 <= stream.len() {
        if stream[at] != 0xFF {
            return None;
        }
        let marker = stream[at + 1];
        if (0xC0..=0xCF).contains(&marker) && !matches!(marker, 0xC4 | 0xC8 | 0xCC) {
            return Some(at);
        }
        if marker == 0xFF {
            // Fill bytes before a marker.
            at += 1;
            continue;
        }
        let length = usize::from(u16::from_be_bytes([stream[at + 2], stream[at + 3]]));
        at += 2 + length;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_marker_goes_before_the_frame() {
        // SOI, a DQT of 3 bytes, SOF0.
        let stream = [0xFF, 0xD8, 0xFF, 0xDB, 0x00, 0x03, 0x07, 0xFF, 0xC0, 0x00, 0x02];
        assert_eq!(frame_header(&stream), Some(7));
        let spliced = with_colour_space(&stream, Some(0));
        assert_eq!(&spliced[7..11], &[0xFF, 0xEE, 0x00, 0x0E]);
        assert_eq!(spliced[22], 0, "transform 0: RGB as stored");
        assert_eq!(&spliced[23..], &stream[7..]);
        assert_eq!(with_colour_space(&stream, None), stream);
        assert_eq!(frame_header(&[0xFF, 0xD8, 0x00]), None);
    }

    /// Every JPEG tile of the test files (GDAL's grey, RGB and YCbCr; tifffile's YCbCr at each
    /// subsampling, RGB, grey and CMYK; Pillow's progressive tiles; rasterio's RGBA and YCbCr COGs, every level) through the
    /// pure-Rust decoder of builds without `jpeg-c`: within 4 of libjpeg-turbo (whose values the
    /// integration tests hold equal to imagecodecs'), and within 1 but for three components
    /// coded as YCbCr, whose chroma jpeg-decoder upsamples and converts otherwise. Builds
    /// without `jpeg-c` check the pure decoder against imagecodecs' values directly.
    #[test]
    fn the_pure_decoder_is_near_libjpeg_on_every_tile() {
        use crate::decode_only::Decode;
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/codecs/tiff");
        let files = [
            ("jpeg_gray", root.clone()),
            ("jpeg_rgb", root.clone()),
            ("jpeg_ycbcr", root.clone()),
            ("jpeg_tifffile_ycbcr444", root.clone()),
            ("jpeg_tifffile_ycbcr422", root.clone()),
            ("jpeg_tifffile_ycbcr420", root.clone()),
            ("jpeg_tifffile_rgb", root.clone()),
            ("jpeg_tifffile_gray", root.clone()),
            ("jpeg_tifffile_cmyk", root.clone()),
            ("jpeg_progressive", root.clone()),
            ("alpha", root.join("real")),
            ("cogeo", root.join("real")),
            ("goes", root.join("real")),
        ];
        let (mut tiles, mut grid_tiles) = (0, 0);
        for (case, folder) in files {
            let file = std::fs::read(folder.join(format!("{case}.tif"))).unwrap();
            let text = std::fs::read(folder.join(format!("{case}.kerchunk.json"))).unwrap();
            let refs: serde_json::Value = serde_json::from_slice(&text).unwrap();
            let refs = refs.get("refs").unwrap_or(&refs).as_object().unwrap();
            for zarray in refs.iter().filter(|(key, _)| key.ends_with(".zarray")).map(|(_, zarray)| zarray) {
                let zarray: serde_json::Value = serde_json::from_str(zarray.as_str().unwrap()).unwrap();
                let axis = |field: &str| {
                    zarray[field].as_array().unwrap().iter().map(|n| n.as_u64().unwrap()).collect::<Vec<_>>()
                };
                grid_tiles += axis("shape").iter().zip(axis("chunks")).map(|(s, c)| s.div_ceil(c)).product::<u64>();
            }
            for (key, value) in refs {
                let Some(range) = value.as_array() else { continue };
                let array = key.rsplit_once('/').map_or("", |(array, _)| array);
                let zarray = &refs[&if array.is_empty() { ".zarray".to_owned() } else { format!("{array}/.zarray") }];
                let zarray: serde_json::Value = serde_json::from_str(zarray.as_str().unwrap()).unwrap();
                let codec =
                    crate::image::Jpeg::new(serde_json::from_value(zarray["compressor"].clone()).unwrap()).unwrap();
                let size: usize = zarray["chunks"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|n| usize::try_from(n.as_u64().unwrap()).unwrap())
                    .product();
                let (offset, length) = (
                    usize::try_from(range[1].as_u64().unwrap()).unwrap(),
                    usize::try_from(range[2].as_u64().unwrap()).unwrap(),
                );
                let tile = &file[offset..offset + length];
                let libjpeg = codec.decode(tile, size).unwrap_or_else(|e| panic!("{case} {key}: {e}"));
                let pure = codec.decode_pure(tile, size).unwrap_or_else(|e| panic!("{case} {key}: {e}"));
                assert_eq!(pure.len(), libjpeg.len(), "{case} {key}");
                let far = pure.iter().zip(&libjpeg).map(|(a, b)| a.abs_diff(*b)).max().unwrap_or(0);
                let one = ["jpeg_gray", "jpeg_rgb", "jpeg_tifffile_gray", "jpeg_tifffile_cmyk", "alpha"];
                let bound = if one.contains(&case) { 1 } else { 4 };
                assert!(far <= bound, "{case} {key}: {far} from libjpeg-turbo (at most {bound})");
                tiles += 1;
            }
        }
        // Every tile of every grid, each checked.
        assert_eq!(tiles, grid_tiles);
    }

    /// A tile that decodes to more than its chunk is refused before it is decoded, as too long.
    #[test]
    fn a_tile_larger_than_its_chunk_is_too_long() {
        let folder = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/codecs/tiff");
        let file = std::fs::read(folder.join("jpeg_tifffile_gray.tif")).unwrap();
        let refs: serde_json::Value =
            serde_json::from_slice(&std::fs::read(folder.join("jpeg_tifffile_gray.kerchunk.json")).unwrap()).unwrap();
        let range = refs["0.0"].as_array().unwrap();
        let (offset, length) = (
            usize::try_from(range[1].as_u64().unwrap()).unwrap(),
            usize::try_from(range[2].as_u64().unwrap()).unwrap(),
        );
        let tile = &file[offset..offset + length];
        assert_eq!(decode(tile, None, 32 * 32).unwrap().len(), 32 * 32);
        assert!(matches!(decode(tile, None, 32 * 32 - 1), Err(DecodeError::TooLong { size: 1023 })));
    }

    /// A stream libjpeg refuses is an error naming the decoder, not a panic.
    #[test]
    fn corrupt_streams_are_errors() {
        let error = decode(&[0xFF, 0xD8, 0xFF, 0xC0, 0x00, 0x02, 0xFF, 0xD9], None, 1 << 20).unwrap_err();
        assert!(error.to_string().starts_with("JPEG (libjpeg-turbo): "), "{error}");
    }
}
