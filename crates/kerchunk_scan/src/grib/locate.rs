//! Where each message of a GRIB file is, from the messages' own lengths.
//!
//! Unlike kerchunk's `scan_grib`, which reads every message's length from
//! GRIB2's octets (a GRIB1 file becomes one bogus message) and loops forever
//! on bytes after the last message, each message's edition says where its
//! length is, and bytes that are no message (WMO headers, padding) are
//! skipped: the search only ever moves forward.

use std::sync::Arc;

use object_store::ObjectStore;
use object_store::path::Path;

use crate::error::ScanError;
use crate::options::ScanOptions;
use crate::read::BlockReader;

/// One message of a GRIB file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GribMessage {
    /// Where it starts (its `GRIB` marker), in bytes from the file's start.
    pub offset: u64,
    /// Its length, from its indicator section (section 0).
    pub length: u64,
    /// Its GRIB edition, 1 or 2.
    pub edition: u8,
}

/// The octets of GRIB2's indicator section, and the least of GRIB1's a length reads from.
const INDICATOR: u64 = 16;

pub(crate) fn malformed(url: &str, reason: String) -> ScanError {
    ScanError::Grib { url: url.to_owned(), reason }
}

/// Every message of the GRIB file at `path`, in order, from their indicator
/// sections: one read per message header at most (with the reader's blocks
/// and read-ahead), none of the data.
///
/// # Errors
/// [`ScanError::Read`] if the file cannot be read; [`ScanError::Grib`] naming
/// the offset where a message's length runs past the end of the file, is
/// shorter than its indicator, or is GRIB1's large-message convention (over
/// 8 MiB), or where a file holds more messages than
/// [`ScanOptions::with_max_references`] or more bytes that are no message in
/// one place than [`ScanOptions::with_max_header_bytes`]; a file with no
/// message at all.
pub async fn grib_messages(
    store: &Arc<dyn ObjectStore>,
    path: &Path,
    url: &str,
    options: &ScanOptions,
) -> Result<Vec<GribMessage>, ScanError> {
    let mut reader = BlockReader::open(store, path, url, (options.block_bytes, options.first_read_bytes)).await?;
    locate(&mut reader, url, options).await
}

/// A message's length and edition from its first 16 bytes (`indicator`,
/// starting with `GRIB`), where each edition keeps its length; `None` for
/// another edition (`GRIB` inside other bytes); an error for a GRIB1
/// length of ECMWF's large-message convention, which is not read.
pub(crate) fn indicator_length(indicator: &[u8]) -> Result<Option<(u64, u8)>, String> {
    let Some(indicator) = indicator.get(..16) else { return Ok(None) };
    Ok(match indicator[7] {
        1 => {
            let length = u64::from_be_bytes([0, 0, 0, 0, 0, indicator[4], indicator[5], indicator[6]]);
            if length & 0x80_0000 != 0 {
                return Err("is over 8 MiB (ECMWF's large-message convention), which is not read".into());
            }
            Some((length, 1))
        }
        2 => Some((u64::from_be_bytes(indicator[8..16].try_into().unwrap_or_default()), 2)),
        _ => None,
    })
}

pub(crate) async fn locate(
    reader: &mut BlockReader<'_>,
    url: &str,
    options: &ScanOptions,
) -> Result<Vec<GribMessage>, ScanError> {
    let (max_messages, max_skip) = (options.max_references, options.max_header_bytes);
    let size = reader.size();
    let mut messages = Vec::new();
    let mut at = 0;
    while let Some(start) = next_marker(reader, url, at, max_skip).await? {
        if start + INDICATOR > size {
            break; // `GRIB` in the last bytes, too close to the end for a message
        }
        let indicator = reader.read(start..start + INDICATOR).await?;
        let (length, edition) = match indicator_length(&indicator) {
            Ok(Some(found)) => found,
            Ok(None) => {
                // `GRIB` inside other bytes, not a message: look on past it.
                at = start + 1;
                continue;
            }
            Err(reason) => return Err(malformed(url, format!("the GRIB1 message at byte {start} {reason}"))),
        };
        if length < INDICATOR || length > size - start {
            return Err(malformed(
                url,
                format!(
                    "the GRIB{edition} message at byte {start} says it is {length} bytes long, and the file has {} after it",
                    size - start
                ),
            ));
        }
        if messages.len() as u64 >= max_messages {
            return Err(malformed(
                url,
                format!("more than {max_messages} messages (ScanOptions::with_max_references)"),
            ));
        }
        messages.push(GribMessage { offset: start, length, edition });
        at = start + length;
    }
    if messages.is_empty() {
        return Err(malformed(url, "no GRIB message in it".into()));
    }
    Ok(messages)
}

/// Where the next `GRIB` marker at or after `at` starts, reading forward a
/// block at a time (a marker across two blocks is found); `None` at the end.
/// The reader keeps what it reads: more than `max_skip` bytes without a
/// marker is an error, not a file read whole into memory.
async fn next_marker(
    reader: &mut BlockReader<'_>,
    url: &str,
    from: u64,
    max_skip: u64,
) -> Result<Option<u64>, ScanError> {
    let size = reader.size();
    let step = 64 * 1024;
    let mut at = from;
    while at + 4 <= size {
        if at - from > max_skip {
            return Err(malformed(
                url,
                format!(
                    "no GRIB message in the {max_skip} bytes from byte {from} (ScanOptions::with_max_header_bytes)"
                ),
            ));
        }
        let end = (at + step).min(size);
        let window = reader.read(at..end).await?;
        if let Some(found) = window.windows(4).position(|w| w == b"GRIB") {
            return Ok(Some(at + found as u64));
        }
        // The last three bytes again, in case a marker straddles the windows.
        at = end.saturating_sub(3).max(at + 1);
    }
    Ok(None)
}
