//! Compressed reference files, recognised by their magic bytes whatever
//! their name (fsspec needs an explicit `compression` option instead).

use std::borrow::Cow;
use std::io::Read;

use crate::error::ParseError;

const GZIP_MAGIC: &[u8] = &[0x1f, 0x8b];
const ZSTD_MAGIC: &[u8] = &[0x28, 0xb5, 0x2f, 0xfd];

/// Decompress `bytes` if they start with a gzip or zstd magic number; the
/// document, compressed or not, may be at most `limit` bytes (decompression
/// stops there).
///
/// # Errors
/// [`ParseError::Decompress`] if the stream is corrupt,
/// [`ParseError::TooLarge`] if the document is larger than `limit`.
pub(crate) fn decompress<'b>(bytes: &'b [u8], limit: u64, location: &str) -> Result<Cow<'b, [u8]>, ParseError> {
    let too_large = || ParseError::TooLarge { location: location.to_owned(), limit };
    let (format, decoder): (_, Box<dyn Read>) = if bytes.starts_with(GZIP_MAGIC) {
        ("gzip", Box::new(flate2::read::MultiGzDecoder::new(bytes)))
    } else if bytes.starts_with(ZSTD_MAGIC) {
        let decoder = zstd::stream::read::Decoder::new(bytes)
            .map_err(|source| ParseError::Decompress { format: "zstd", source })?;
        ("zstd", Box::new(decoder))
    } else if bytes.len() as u64 > limit {
        return Err(too_large());
    } else {
        return Ok(Cow::Borrowed(bytes));
    };
    let mut out = Vec::new();
    decoder
        .take(limit.saturating_add(1))
        .read_to_end(&mut out)
        .map_err(|source| ParseError::Decompress { format, source })?;
    if out.len() as u64 > limit {
        return Err(too_large());
    }
    Ok(Cow::Owned(out))
}

/// `reader`, decompressing if it starts with a gzip or zstd magic number;
/// also the format's name, for errors. Reading past `limit` bytes (of the
/// document, after decompression) fails with [`std::io::ErrorKind::FileTooLarge`].
///
/// # Errors
/// The error of reading the first bytes or the zstd header.
pub(crate) fn decompressing<'r>(
    mut reader: impl Read + 'r,
    limit: u64,
) -> std::io::Result<(Box<dyn Read + 'r>, Option<&'static str>)> {
    let mut head = Vec::with_capacity(ZSTD_MAGIC.len());
    (&mut reader).take(ZSTD_MAGIC.len() as u64).read_to_end(&mut head)?;
    let whole = std::io::Cursor::new(head.clone()).chain(reader);
    let (reader, format): (Box<dyn Read + 'r>, _) = if head.starts_with(GZIP_MAGIC) {
        (Box::new(flate2::read::MultiGzDecoder::new(whole)), Some("gzip"))
    } else if head.starts_with(ZSTD_MAGIC) {
        (Box::new(zstd::stream::read::Decoder::new(whole)?), Some("zstd"))
    } else {
        (Box::new(whole), None)
    };
    Ok((Box::new(Limited { inner: reader, left: limit }), format))
}

/// A reader that fails once more than its limit has been read.
struct Limited<R> {
    inner: R,
    left: u64,
}

impl<R: Read> Read for Limited<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        // Ask for one byte more than allowed, to tell "exactly the limit" from "more".
        let room = usize::try_from(self.left.saturating_add(1)).unwrap_or(usize::MAX).min(buf.len());
        let n = self.inner.read(&mut buf[..room])?;
        match self.left.checked_sub(n as u64) {
            Some(left) => {
                self.left = left;
                Ok(n)
            }
            None => Err(std::io::Error::new(std::io::ErrorKind::FileTooLarge, "the document is larger than its limit")),
        }
    }
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
        let decompress = |bytes| decompress(bytes, u64::MAX, "refs");
        assert_eq!(&*decompress(&gz).unwrap(), json);
        let zst = zstd::encode_all(&json[..], 3).unwrap();
        assert_eq!(&*decompress(&zst).unwrap(), json);
        assert!(matches!(decompress(json).unwrap(), Cow::Borrowed(_)));
        let err = decompress(&zst[..6]).unwrap_err();
        assert!(err.to_string().contains("zstd"), "{err}");
        for (bytes, format) in [(&gz[..], Some("gzip")), (&zst[..], Some("zstd")), (&json[..], None), (&b"{"[..], None)]
        {
            let (mut reader, found) = decompressing(bytes, u64::MAX).unwrap();
            let mut out = Vec::new();
            reader.read_to_end(&mut out).unwrap();
            assert_eq!((&*out, found), (&*decompress(bytes).unwrap(), format));
        }
    }

    /// A document at its limit reads; one byte more is refused, compressed or
    /// not, whole or streamed, and a bomb is never decompressed past the limit.
    #[test]
    fn documents_are_read_up_to_their_limit() {
        let json = br#"{"a": "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"}"#;
        let n = json.len() as u64;
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        gz.write_all(json).unwrap();
        let gz = gz.finish().unwrap();
        let zst = zstd::encode_all(&json[..], 3).unwrap();
        for bytes in [&json[..], &gz, &zst] {
            assert_eq!(&*decompress(bytes, n, "refs").unwrap(), json);
            let err = decompress(bytes, n - 1, "refs").unwrap_err();
            assert!(matches!(err, ParseError::TooLarge { limit, .. } if limit == n - 1), "{err}");
            let mut out = Vec::new();
            decompressing(bytes, n).unwrap().0.read_to_end(&mut out).unwrap();
            assert_eq!(out, json);
            let err = decompressing(bytes, n - 1).unwrap().0.read_to_end(&mut Vec::new()).unwrap_err();
            assert_eq!(err.kind(), std::io::ErrorKind::FileTooLarge);
        }
        // 256 MiB of zeros in a few kB of zstd: refused after the first MiB.
        let bomb = zstd::encode_all(std::io::repeat(0).take(256 << 20), 1).unwrap();
        assert!(bomb.len() < 100_000);
        assert!(matches!(decompress(&bomb, 1 << 20, "bomb").unwrap_err(), ParseError::TooLarge { .. }));
    }
}
