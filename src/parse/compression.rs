//! Compressed reference files, recognised by their magic bytes whatever
//! their name (fsspec needs an explicit `compression` option instead).

use std::borrow::Cow;
use std::io::Read;

use crate::ReferenceError;

const GZIP_MAGIC: &[u8] = &[0x1f, 0x8b];
const ZSTD_MAGIC: &[u8] = &[0x28, 0xb5, 0x2f, 0xfd];

/// Decompress `bytes` if they start with a gzip or zstd magic number.
///
/// # Errors
/// [`ReferenceError::Decompress`] if the stream is corrupt.
pub(crate) fn decompress(bytes: &[u8]) -> Result<Cow<'_, [u8]>, ReferenceError> {
    let (format, result) = if bytes.starts_with(GZIP_MAGIC) {
        let mut out = Vec::new();
        ("gzip", flate2::read::MultiGzDecoder::new(bytes).read_to_end(&mut out).map(|_| out))
    } else if bytes.starts_with(ZSTD_MAGIC) {
        ("zstd", zstd::stream::decode_all(bytes))
    } else {
        return Ok(Cow::Borrowed(bytes));
    };
    result.map(Cow::Owned).map_err(|e| ReferenceError::Decompress { format, reason: e.to_string() })
}

#[cfg(test)]
mod tests {
    use std::io::Write;

    use super::*;

    #[test]
    fn detects_by_magic() {
        let json = br#"{"a": "b"}"#;
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        gz.write_all(json).unwrap();
        let gz = gz.finish().unwrap();
        assert_eq!(&*decompress(&gz).unwrap(), json);
        let zst = zstd::encode_all(&json[..], 3).unwrap();
        assert_eq!(&*decompress(&zst).unwrap(), json);
        assert!(matches!(decompress(json).unwrap(), Cow::Borrowed(_)));
        let err = decompress(&zst[..6]).unwrap_err();
        assert!(err.to_string().contains("zstd"), "{err}");
    }
}
