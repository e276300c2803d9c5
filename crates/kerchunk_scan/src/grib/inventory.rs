//! GRIB inventories: NOAA's `.idx` (wgrib2) and ECMWF's `.index` (JSON lines),
//! which say where each message is without reading the file.

use object_store::path::Path;

use crate::error::ScanError;
use crate::grib::locate::malformed;
use crate::read::BlockReader;

/// The inventory beside the GRIB file `reader` reads (at `url`): NOAA's
/// `FILE.idx`, else ECMWF's `.index` in place of the file's extension;
/// its URL and entries, or `None` where there is neither.
///
/// # Errors
/// [`ScanError::Read`] if one is there and cannot be read; [`ScanError::Grib`]
/// naming the inventory where it is malformed or over `most` bytes.
pub(crate) async fn beside(
    reader: &mut BlockReader<'_>,
    url: &str,
    most: u64,
) -> Result<Option<(String, Vec<IndexEntry>)>, ScanError> {
    let path = reader.path().as_ref().to_owned();
    let size = reader.size();
    let without_extension = |name: &str| -> String {
        match name.rsplit_once('.') {
            Some((stem, extension)) if !extension.contains('/') => stem.to_owned(),
            _ => name.to_owned(),
        }
    };
    let noaa = (format!("{path}.idx"), format!("{url}.idx"));
    let ecmwf = (format!("{}.index", without_extension(&path)), format!("{}.index", without_extension(url)));
    for (kind, (sidecar, sidecar_url)) in [("noaa", noaa), ("ecmwf", ecmwf)] {
        let Ok(sidecar) = Path::parse(&sidecar) else { continue };
        let Some(bytes) = reader.sidecar(&sidecar, &sidecar_url, most).await? else { continue };
        let text = String::from_utf8_lossy(&bytes);
        let entries = if kind == "noaa" {
            parse_noaa_idx(&text, &sidecar_url, size)?
        } else {
            parse_ecmwf_index(&text, &sidecar_url, size)?
        };
        return Ok(Some((sidecar_url, entries)));
    }
    Ok(None)
}

/// One entry of a GRIB inventory: a message (or a field of one, NOAA's
/// `N.1`, `N.2`, which share their message's bytes) and what it says.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct IndexEntry {
    /// The message's number as the inventory writes it (`"12"`, `"12.2"`; ECMWF's line number from 1).
    pub number: String,
    /// Where the message starts.
    pub offset: u64,
    /// Its length.
    pub length: u64,
    /// The rest of the line: NOAA's `d=2024010100:TMP:2 m above ground:3 hour fcst:`,
    /// or ECMWF's JSON object.
    pub description: String,
}

/// A NOAA inventory (wgrib2's `.idx`: `N:offset:d=YYYYMMDDHH:VAR:level:forecast:`),
/// each message's length to the next message's offset, the last one's to
/// `file_size`. `N.1`, `N.2` (fields of one message) share its range.
///
/// # Errors
/// [`ScanError::Grib`] naming `url` and the line: a line without a number
/// and an offset, offsets that go backwards, or past `file_size`.
pub fn parse_noaa_idx(text: &str, url: &str, file_size: u64) -> Result<Vec<IndexEntry>, ScanError> {
    let mut entries: Vec<IndexEntry> = Vec::new();
    for (line_number, line) in text.lines().enumerate().filter(|(_, l)| !l.trim().is_empty()) {
        let bad = |why: &str| malformed(url, format!("line {}: {why}: {line:?}", line_number + 1));
        let mut parts = line.splitn(3, ':');
        let (Some(number), Some(offset)) = (parts.next(), parts.next()) else { return Err(bad("no offset")) };
        let offset: u64 = offset.trim().parse().map_err(|_| bad("the offset is not a number"))?;
        if number.trim().is_empty() || offset > file_size {
            return Err(bad("no message number, or an offset past the end of the file"));
        }
        if entries.last().is_some_and(|last| offset < last.offset) {
            return Err(bad("the offset goes back"));
        }
        entries.push(IndexEntry {
            number: number.trim().to_owned(),
            offset,
            length: 0,
            description: parts.next().unwrap_or_default().to_owned(),
        });
    }
    // Each message runs to the next message's start (fields of one message share it).
    for i in (0..entries.len()).rev() {
        let next = entries[i + 1..].iter().find(|e| e.offset > entries[i].offset).map_or(file_size, |e| e.offset);
        entries[i].length = next - entries[i].offset;
    }
    Ok(entries)
}

/// An ECMWF inventory (open data's `.index`: one JSON object a line, with the
/// MARS keys and `_offset`, `_length`).
///
/// # Errors
/// [`ScanError::Grib`] naming `url` and the line: not a JSON object, or
/// without whole `_offset` and `_length`, or a range past `file_size`.
pub fn parse_ecmwf_index(text: &str, url: &str, file_size: u64) -> Result<Vec<IndexEntry>, ScanError> {
    let mut entries = Vec::new();
    for (line_number, line) in text.lines().enumerate().filter(|(_, l)| !l.trim().is_empty()) {
        let bad = |why: &str| malformed(url, format!("line {}: {why}", line_number + 1));
        let object: serde_json::Map<String, serde_json::Value> =
            serde_json::from_str(line).map_err(|e| bad(&format!("not a JSON object ({e})")))?;
        let number = |key: &str| object.get(key).and_then(serde_json::Value::as_u64);
        let (Some(offset), Some(length)) = (number("_offset"), number("_length")) else {
            return Err(bad("no whole _offset and _length"));
        };
        if offset.checked_add(length).is_none_or(|end| end > file_size) {
            return Err(bad("a range past the end of the file"));
        }
        entries.push(IndexEntry {
            number: (line_number + 1).to_string(),
            offset,
            length,
            description: line.to_owned(),
        });
    }
    Ok(entries)
}
