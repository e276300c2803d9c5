//! Local files: positioned reads on the calling thread, each checked against
//! the file's real length before anything is allocated for it, and against
//! its pin, if it has one.

use std::fs::File;
use std::io;
use std::path::Path;

use bytes::Bytes;
use object_store::GetRange;

use super::Request;
use crate::error::ReadError;
use crate::resolve::Pin;

/// Read `requests` from the local file at `path` on the calling thread.
pub(crate) fn read_local(path: &Path, pin: Option<&Pin>, requests: &[Request]) -> Result<Vec<Bytes>, ReadError> {
    let io_error = |source| ReadError::Io { path: path.to_owned(), source };
    let file = File::open(path).map_err(io_error)?;
    // One `fstat` per call: a reference's length is the document's word, the
    // file's length is real, and nothing is allocated before they agree.
    let metadata = file.metadata().map_err(io_error)?;
    check_pin(pin, &metadata)?;
    let len = metadata.len();
    let past_end = |range| ReadError::PastEnd { range, file_len: Some(len) };
    requests
        .iter()
        .map(|request| {
            let range = match request {
                Request::Fits(end) if *end > len => return Err(past_end(0..*end)),
                Request::Fits(_) => return Ok(Bytes::new()),
                Request::Whole => 0..len,
                Request::Part(GetRange::Bounded(range)) => range.clone(),
                Request::Part(GetRange::Offset(start)) => *start..len.max(*start),
                Request::Part(GetRange::Suffix(n)) => len.checked_sub(*n).ok_or_else(|| past_end(0..*n))?..len,
            };
            if range.end > len {
                return Err(past_end(range));
            }
            // Bounded by the file's real length; a length past usize cannot be held, so it is refused too.
            let mut buf = vec![0; usize::try_from(range.end - range.start).map_err(|_| past_end(range.clone()))?];
            read_exact_at(&file, &mut buf, range.start).map_err(|e| match e.kind() {
                // The file shrank between the length check and the read.
                io::ErrorKind::UnexpectedEof => past_end(range),
                _ => io_error(e),
            })?;
            Ok(Bytes::from(buf))
        })
        .collect()
}

/// Fill `buf` from `file` at `offset`, without moving a shared cursor where
/// the platform has positioned reads.
#[cfg(unix)]
fn read_exact_at(file: &File, buf: &mut [u8], offset: u64) -> io::Result<()> {
    std::os::unix::fs::FileExt::read_exact_at(file, buf, offset)
}

/// Fill `buf` from `file` at `offset` (Windows has no `read_exact_at`; `seek_read` may read less).
#[cfg(windows)]
fn read_exact_at(file: &File, mut buf: &mut [u8], mut offset: u64) -> io::Result<()> {
    use std::os::windows::fs::FileExt;
    while !buf.is_empty() {
        match file.seek_read(buf, offset) {
            Ok(0) => return Err(io::ErrorKind::UnexpectedEof.into()),
            Ok(n) => {
                buf = &mut buf[n..];
                offset += n as u64;
            }
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

/// Fill `buf` from `file` at `offset`: a seek, then a read (the file is this call's own).
#[cfg(not(any(unix, windows)))]
fn read_exact_at(mut file: &File, buf: &mut [u8], offset: u64) -> io::Result<()> {
    use std::io::{Read, Seek};
    file.seek(io::SeekFrom::Start(offset))?;
    file.read_exact(buf)
}

/// The size of a local file.
pub(crate) fn size_local(path: &Path, pin: Option<&Pin>) -> Result<u64, ReadError> {
    let found = observe_local(path)?;
    pin.map_or(Ok(()), |pin| pin.check(&found))?;
    Ok(found.size)
}

/// What the local file at `path` is now, in the terms of a pin, unchecked.
pub(crate) fn observe_local(path: &Path) -> Result<Pin, ReadError> {
    std::fs::metadata(path).map(|m| observed(&m)).map_err(|source| ReadError::Io { path: path.to_owned(), source })
}

/// A file's size and modification time, as a pin records them.
fn observed(metadata: &std::fs::Metadata) -> Pin {
    Pin::new(metadata.len(), None, metadata.modified().ok().map(chrono::DateTime::<chrono::Utc>::from))
}

fn check_pin(pin: Option<&Pin>, metadata: &std::fs::Metadata) -> Result<(), ReadError> {
    pin.map_or(Ok(()), |pin| pin.check(&observed(metadata)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn local_reads_are_exact_and_checked_before_allocating() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f.bin");
        std::fs::write(&path, b"0123456789").unwrap();
        let got = read_local(
            &path,
            None,
            &[
                Request::Whole,
                Request::Part(GetRange::Bounded(2..5)),
                Request::Part(GetRange::Offset(8)),
                Request::Part(GetRange::Suffix(3)),
                Request::Part(GetRange::Bounded(4..4)),
            ],
        )
        .unwrap();
        assert_eq!(got, [&b"0123456789"[..], b"234", b"89", b"789", b""]);
        let err = read_local(&path, None, &[Request::Part(GetRange::Bounded(8..12))]).unwrap_err();
        assert!(matches!(err, ReadError::PastEnd { file_len: Some(10), .. }), "{err}");
        assert!(err.to_string().contains("past the end") && err.to_string().contains("10 bytes"), "{err}");
        // A length no file has: an error, not an allocation of it.
        let err = read_local(&path, None, &[Request::Part(GetRange::Bounded(0..u64::MAX))]).unwrap_err();
        assert!(matches!(err, ReadError::PastEnd { .. }), "{err}");
        let err = read_local(&dir.path().join("missing"), None, &[Request::Whole]).unwrap_err();
        assert!(err.to_string().contains("not found"), "{err}");
    }
}
