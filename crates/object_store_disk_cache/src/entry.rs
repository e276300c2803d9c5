//! One cached range on disk: a file holding the range's bytes, what they are
//! (the object's URL, its version and metadata, the range) and a checksum of
//! all of it, written to a temporary file and renamed into place.
//!
//! ```text
//! "OSDC" | version u8 = 1 | header length u32 LE | header | body | XXH3-64 u64 LE
//! header: url, etag, last-modified (seconds and nanoseconds), object size, start, end
//! ```
//!
//! Every read checks the magic, the lengths, the checksum, and that the header
//! names the object, the version and the range asked for: a torn, truncated or
//! altered file, or one whose name collides with another's, is never served.

use std::fs::File;
use std::io::{self, Read, Write};
use std::ops::Range;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};

use bytes::Bytes;
use chrono::{DateTime, Utc};
use twox_hash::XxHash3_64;

const MAGIC: &[u8; 4] = b"OSDC";
const FORMAT: u8 = 1;
/// Magic, format and header length.
const PREFIX: usize = 4 + 1 + 4;
const CHECKSUM: usize = 8;
/// A header longer than this is damage, not a URL.
const MAX_HEADER: usize = 1 << 20;

/// What a cached range is of: the object, its version and its size.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Described {
    pub(crate) url: String,
    pub(crate) etag: Option<String>,
    pub(crate) last_modified: DateTime<Utc>,
    pub(crate) size: u64,
}

/// Why a cached file was not served.
#[derive(Debug)]
pub(crate) enum Unusable {
    /// There is no such file (never written, or evicted).
    Missing,
    /// The file is damaged, or describes something else: discard it.
    Damaged(&'static str),
    /// It could not be read (the range is fetched instead).
    Io,
}

/// The bytes of `range` of the object `what`, as they are stored.
pub(crate) fn encode(what: &Described, range: &Range<u64>, body: &[u8]) -> Vec<u8> {
    let header = encode_header(what, range);
    let mut out = Vec::with_capacity(PREFIX + header.len() + body.len() + CHECKSUM);
    out.extend_from_slice(MAGIC);
    out.push(FORMAT);
    out.extend_from_slice(&u32::try_from(header.len()).unwrap_or(u32::MAX).to_le_bytes());
    out.extend_from_slice(&header);
    out.extend_from_slice(body);
    let checksum = XxHash3_64::oneshot(&out);
    out.extend_from_slice(&checksum.to_le_bytes());
    out
}

/// Read the cached file at `path` and check it is `range` of `what`'s version.
pub(crate) fn read(path: &Path, what: &Described, range: &Range<u64>) -> Result<Bytes, Unusable> {
    let mut file = match File::open(path) {
        Ok(file) => file,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Err(Unusable::Missing),
        Err(_) => return Err(Unusable::Io),
    };
    let expected = range.end - range.start;
    let len = file.metadata().map_err(|_| Unusable::Io)?.len();
    // Never trust a length before the bytes are in hand: a file far longer than its range is damage.
    if len > expected.saturating_add((PREFIX + MAX_HEADER + CHECKSUM) as u64) {
        return Err(Unusable::Damaged("longer than its range"));
    }
    let mut bytes = Vec::with_capacity(usize::try_from(len).map_err(|_| Unusable::Damaged("too long"))?);
    file.read_to_end(&mut bytes).map_err(|_| Unusable::Io)?;
    let body = decode(&bytes, what, range)?;
    Ok(Bytes::from(bytes).slice(body))
}

/// The header's metadata of the cached file at `path`, checked whole: what an
/// object's version is when only its ETag is known (a pinned read).
pub(crate) fn read_described(path: &Path) -> Result<(Described, Range<u64>), Unusable> {
    let bytes = match std::fs::read(path) {
        Ok(bytes) => bytes,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Err(Unusable::Missing),
        Err(_) => return Err(Unusable::Io),
    };
    let (header, _) = split(&bytes)?;
    parse_header(header)
}

/// Where the body of a stored range lies in `bytes`, once everything is checked.
fn decode(bytes: &[u8], what: &Described, range: &Range<u64>) -> Result<Range<usize>, Unusable> {
    let (header, body) = split(bytes)?;
    let (described, stored) = parse_header(header)?;
    if described != *what || stored != *range {
        return Err(Unusable::Damaged("it describes another object, version or range"));
    }
    if (body.end - body.start) as u64 != range.end - range.start {
        return Err(Unusable::Damaged("its body is not as long as its range"));
    }
    Ok(body)
}

/// The header and the body's place in `bytes`, once the magic and the checksum are checked.
fn split(bytes: &[u8]) -> Result<(&[u8], Range<usize>), Unusable> {
    if bytes.len() < PREFIX + CHECKSUM || &bytes[..4] != MAGIC || bytes[4] != FORMAT {
        return Err(Unusable::Damaged("not a cached range of this format"));
    }
    let (content, checksum) = bytes.split_at(bytes.len() - CHECKSUM);
    let stored = u64::from_le_bytes(checksum.try_into().map_err(|_| Unusable::Damaged("truncated"))?);
    if XxHash3_64::oneshot(content) != stored {
        return Err(Unusable::Damaged("its checksum does not match its bytes"));
    }
    let header_len = u32::from_le_bytes([bytes[5], bytes[6], bytes[7], bytes[8]]) as usize;
    if header_len > MAX_HEADER || PREFIX + header_len > content.len() {
        return Err(Unusable::Damaged("its header is longer than the file"));
    }
    Ok((&content[PREFIX..PREFIX + header_len], PREFIX + header_len..content.len()))
}

/// The header: each field a little-endian length or number, strings as UTF-8.
fn encode_header(what: &Described, range: &Range<u64>) -> Vec<u8> {
    let mut out = Vec::new();
    put_str(&mut out, &what.url);
    match &what.etag {
        Some(etag) => {
            out.push(1);
            put_str(&mut out, etag);
        }
        None => out.push(0),
    }
    out.extend_from_slice(&what.last_modified.timestamp().to_le_bytes());
    out.extend_from_slice(&what.last_modified.timestamp_subsec_nanos().to_le_bytes());
    for n in [what.size, range.start, range.end] {
        out.extend_from_slice(&n.to_le_bytes());
    }
    out
}

fn parse_header(mut header: &[u8]) -> Result<(Described, Range<u64>), Unusable> {
    let url = take_str(&mut header)?;
    let etag = match take(&mut header, 1)?[0] {
        0 => None,
        1 => Some(take_str(&mut header)?),
        _ => return Err(Unusable::Damaged("its header is malformed")),
    };
    let seconds = i64::from_le_bytes(take_array(&mut header)?);
    let nanos = u32::from_le_bytes(take_array(&mut header)?);
    let last_modified =
        DateTime::from_timestamp(seconds, nanos).ok_or(Unusable::Damaged("its header's time is out of range"))?;
    let [size, start, end] = [(); 3].map(|()| take_array(&mut header).map(u64::from_le_bytes));
    let (size, start, end) = (size?, start?, end?);
    if !header.is_empty() || start > end || end > size {
        return Err(Unusable::Damaged("its header is malformed"));
    }
    Ok((Described { url, etag, last_modified, size }, start..end))
}

fn put_str(out: &mut Vec<u8>, text: &str) {
    out.extend_from_slice(&u32::try_from(text.len()).unwrap_or(u32::MAX).to_le_bytes());
    out.extend_from_slice(text.as_bytes());
}

fn take<'a>(header: &mut &'a [u8], n: usize) -> Result<&'a [u8], Unusable> {
    if header.len() < n {
        return Err(Unusable::Damaged("its header is truncated"));
    }
    let (head, rest) = header.split_at(n);
    *header = rest;
    Ok(head)
}

fn take_array<const N: usize>(header: &mut &[u8]) -> Result<[u8; N], Unusable> {
    take(header, N)?.try_into().map_err(|_| Unusable::Damaged("its header is truncated"))
}

fn take_str(header: &mut &[u8]) -> Result<String, Unusable> {
    let len = u32::from_le_bytes(take_array(header)?) as usize;
    let bytes = take(header, len)?;
    String::from_utf8(bytes.to_vec()).map_err(|_| Unusable::Damaged("its header is not UTF-8"))
}

/// Write `bytes` to `path` so that no reader ever sees part of them: into a
/// new file in `temporary` (on the same file system), then renamed over
/// `path`. A writer killed midway leaves only a file in `temporary`, which
/// no read looks at and the next sweep removes.
pub(crate) fn write_atomically(temporary: &Path, path: &Path, bytes: &[u8]) -> io::Result<()> {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let name = format!(
        "{}-{}-{:x}.part",
        std::process::id(),
        COUNTER.fetch_add(1, Ordering::Relaxed),
        XxHash3_64::oneshot(path.as_os_str().as_encoded_bytes())
    );
    let partial = temporary.join(name);
    let written = File::create(&partial).and_then(|mut file| file.write_all(bytes));
    let renamed = written.and_then(|()| {
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)?;
        }
        std::fs::rename(&partial, path)
    });
    if renamed.is_err() {
        let _ = std::fs::remove_file(&partial);
    }
    renamed
}

#[cfg(test)]
mod tests {
    use super::*;

    fn described() -> Described {
        Described {
            url: "s3://b/k.nc".into(),
            etag: Some("\"abc\"".into()),
            last_modified: DateTime::from_timestamp(1_700_000_000, 123_456_789).unwrap(),
            size: 100,
        }
    }

    #[test]
    fn a_stored_range_reads_back_and_any_damage_is_found() {
        let what = described();
        let encoded = encode(&what, &(10..15), b"hello");
        let body = decode(&encoded, &what, &(10..15)).unwrap();
        assert_eq!(&encoded[body], b"hello");
        // Every byte altered, every truncation: never served.
        for i in 0..encoded.len() {
            let mut altered = encoded.clone();
            altered[i] ^= 0x20;
            assert!(matches!(decode(&altered, &what, &(10..15)), Err(Unusable::Damaged(_))), "byte {i}");
            assert!(matches!(decode(&encoded[..i], &what, &(10..15)), Err(Unusable::Damaged(_))), "cut at {i}");
        }
        // Intact, but of another version or range.
        let other = Described { etag: Some("\"abd\"".into()), ..what.clone() };
        assert!(matches!(decode(&encoded, &other, &(10..15)), Err(Unusable::Damaged(_))));
        assert!(matches!(decode(&encoded, &what, &(11..16)), Err(Unusable::Damaged(_))));
    }
}
