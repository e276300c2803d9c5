//! Compressed reference files, recognised by their magic bytes whatever
//! their name (fsspec needs an explicit `compression` option instead).

use std::borrow::Cow;
use std::io::Read;

use crate::error::ReferenceError;

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
    result.map(Cow::Owned).map_err(|source| ReferenceError::Decompress { format, source })
}

/// `reader`, decompressing if it starts with a gzip or zstd magic number;
/// also the format's name, for errors.
///
/// # Errors
/// The error of reading the first bytes or the zstd header.
pub(crate) fn decompressing<'r>(
    mut reader: impl Read + 'r,
) -> std::io::Result<(Box<dyn Read + 'r>, Option<&'static str>)> {
    let mut head = Vec::with_capacity(ZSTD_MAGIC.len());
    (&mut reader).take(ZSTD_MAGIC.len() as u64).read_to_end(&mut head)?;
    let whole = std::io::Cursor::new(head.clone()).chain(reader);
    Ok(if head.starts_with(GZIP_MAGIC) {
        (Box::new(flate2::read::MultiGzDecoder::new(whole)), Some("gzip"))
    } else if head.starts_with(ZSTD_MAGIC) {
        (Box::new(zstd::stream::read::Decoder::new(whole)?), Some("zstd"))
    } else {
        (Box::new(whole), None)
    })
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
        for (bytes, format) in [(&gz[..], Some("gzip")), (&zst[..], Some("zstd")), (&json[..], None), (&b"{"[..], None)]
        {
            let (mut reader, found) = decompressing(bytes).unwrap();
            let mut out = Vec::new();
            reader.read_to_end(&mut out).unwrap();
            assert_eq!((&*out, found), (&*decompress(bytes).unwrap(), format));
        }
    }
}
