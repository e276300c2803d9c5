//! GRIB files scanned into references: where each message is (from the
//! messages' lengths, or an inventory beside the file), what each message
//! is (its sections 1 to 5 and eccodes' tables, without eccodes), and the
//! hierarchy kerchunk's `scan_grib` + `grib_tree` make of them.
//!
//! | module | what |
//! |---|---|
//! | `locate` | each message's offset, length and edition |
//! | `inventory` | NOAA's `.idx` and ECMWF's `.index` |
//! | `listed` | the messages an inventory lists, and which share a header read |
//! | `keys` | a message's keys from its sections |
//! | `tables` | eccodes' concepts and code tables (`tables/make.py`) |
//! | `describe` | cfgrib's names, levels, times and attributes of a GRIB2 message |
//! | `edition1` | the same of a GRIB1 message |
//! | `grid` | a grid's attributes, and a regular grid's latitudes and longitudes |
//! | `tree` | the references: groups, arrays and coordinates |
//! | `combine` | several files' trees read back as messages, made one tree |

mod combine;
mod describe;
mod edition1;
mod grid;
mod inventory;
mod keys;
mod listed;
mod locate;
mod tables;
mod tree;

pub use inventory::{IndexEntry, parse_ecmwf_index, parse_noaa_idx};
pub(crate) use locate::locate;
pub use locate::{GribMessage, grib_messages};

use std::sync::Arc;

use kerchunk::ReferenceSet;

use crate::error::ScanError;
use crate::options::{ScanOptions, Skipped, UnsupportedArrays};
use crate::read::BlockReader;
use keys::Unread;
use listed::Header;

/// The axes of the regular grids seen so far, by their grid section: one
/// computation a grid, not a message, as the messages of a file share a few grids.
#[derive(Default)]
struct GridCache(Vec<(Vec<u8>, Arc<tree::Axes>)>);

impl GridCache {
    /// The axes of the grid whose section is `grid`, computed by `compute` the first time; or,
    /// for a message left out, why they are not computed.
    fn axes(
        &mut self,
        grid: &[u8],
        grid_type: &str,
        compute: impl FnOnce() -> Result<tree::Axes, grib_grids::GridError>,
    ) -> Result<Arc<tree::Axes>, String> {
        if let Some((_, axes)) = self.0.iter().find(|(known, _)| known == grid) {
            return Ok(Arc::clone(axes));
        }
        let axes = Arc::new(
            compute().map_err(|error| format!("a {grid_type} grid whose coordinates are not computed: {error}"))?,
        );
        self.0.push((grid.to_vec(), Arc::clone(&axes)));
        Ok(axes)
    }
}

fn message_error(url: &str, message: &GribMessage, reason: &str) -> ScanError {
    locate::malformed(url, format!("the message at byte {}: {reason}", message.offset))
}

/// Where the sections before the data end (the start of section 6, 7 or
/// `7777`) in `bytes`, the start of a message of `length` bytes; `None` where
/// `bytes` stops first, or a section is malformed (which [`header`] reports).
fn header_end(bytes: &[u8], length: u64) -> Option<usize> {
    let mut at: usize = 16;
    loop {
        if at as u64 + 5 > length {
            return Some(at);
        }
        let head = bytes.get(at..at + 5)?;
        if &head[..4] == b"7777" || head[4] >= 6 {
            return Some(at);
        }
        let section = u32::from_be_bytes([head[0], head[1], head[2], head[3]]) as usize;
        if section < 5 {
            return None;
        }
        at = at.checked_add(section)?;
    }
}

/// The bytes of `message` from its start to the end of its data
/// representation section (5): everything but the bitmap and the data.
async fn header(
    reader: &mut BlockReader<'_>,
    message: &GribMessage,
    url: &str,
    options: &ScanOptions,
) -> Result<bytes::Bytes, ScanError> {
    let mut at: u64 = 16;
    while at + 5 <= message.length {
        let head = reader.read(message.offset + at..message.offset + at + 5).await?;
        if &head[..4] == b"7777" || head[4] >= 6 {
            break;
        }
        let length = u64::from(u32::from_be_bytes([head[0], head[1], head[2], head[3]]));
        if length < 5 {
            return Err(message_error(
                url,
                message,
                &format!("section {} at octet {} is {length} octets long", head[4], at + 1),
            ));
        }
        at = at.saturating_add(length);
        if at > options.max_header_bytes {
            return Err(message_error(
                url,
                message,
                &format!(
                    "its sections before the data are over {} bytes (ScanOptions::with_max_header_bytes)",
                    options.max_header_bytes
                ),
            ));
        }
    }
    reader.read(message.offset..message.offset + at.min(message.length)).await
}

/// The references of the GRIB file `reader` reads (at `url`): every GRIB2
/// message, in `grib_tree`'s hierarchy, and what was left out.
pub(crate) async fn scan(
    reader: &mut BlockReader<'_>,
    url: &str,
    options: &ScanOptions,
) -> Result<(ReferenceSet, Vec<Skipped>), ScanError> {
    let listed =
        if options.grib_inventory { inventory::beside(reader, url, options.max_header_bytes).await? } else { None };
    let messages: Vec<(GribMessage, Option<Header>)> = match &listed {
        Some((inventory, entries)) => {
            let levels = options.grib_levels_from_inventory;
            let listed = listed::from_inventory(reader, url, (inventory, entries), levels).await?;
            listed.into_iter().map(|(message, header)| (message, Some(header))).collect()
        }
        None => locate(reader, url, options).await?.into_iter().map(|message| (message, None)).collect(),
    };
    let mut scanned = Vec::with_capacity(messages.len());
    let mut skipped = Vec::new();
    let (mut grids, mut names) = (GridCache::default(), describe::NameCache::default());
    for (message, header_known) in &messages {
        let prefix = match header_known {
            Some(Header::Read(prefix)) => Some(prefix),
            _ => None,
        };
        let described = if let Some(Header::Made(made)) = header_known {
            describe_message(made, message, url, (&mut grids, &mut names))?
        } else if message.edition == 2 {
            let prefix = prefix.and_then(|p| Some(p.slice(..header_end(p, message.length)?)));
            let bytes = match prefix {
                Some(bytes) => bytes,
                None => header(reader, message, url, options).await?,
            };
            describe_message(&bytes, message, url, (&mut grids, &mut names))?
        } else {
            let prefix = prefix.and_then(|p| Some(p.slice(..edition1::header_end(p).ok()?)));
            let bytes = match prefix {
                Some(bytes) => bytes,
                None => header1(reader, message, url, options).await?,
            };
            describe_edition1(&bytes, message, url, (&mut grids, &mut names))?
        };
        match described {
            Ok(one) => scanned.push(one),
            Err(reason) if options.unsupported == UnsupportedArrays::Skip => {
                skipped.push(Skipped { path: format!("the message at byte {}", message.offset), reason });
            }
            Err(reason) => return Err(message_error(url, message, &reason)),
        }
    }
    if scanned.is_empty() {
        let reasons: Vec<&str> = skipped.iter().map(|s| s.reason.as_str()).take(3).collect();
        return Err(locate::malformed(
            url,
            format!("none of its {} messages could be scanned: {}", messages.len(), reasons.join("; ")),
        ));
    }
    let references = tree::build(&scanned, &mut skipped);
    Ok((references, skipped))
}

/// The bytes of GRIB1 `message` from its start to the end of its grid
/// definition section (2), or of its product definition section (1) where it has none.
async fn header1(
    reader: &mut BlockReader<'_>,
    message: &GribMessage,
    url: &str,
    options: &ScanOptions,
) -> Result<bytes::Bytes, ScanError> {
    let mut end = 8 + 28;
    loop {
        if end > message.length || end > options.max_header_bytes {
            return Err(message_error(url, message, "its sections before the data run past the message"));
        }
        let bytes = reader.read(message.offset..message.offset + end).await?;
        match edition1::header_end(&bytes) {
            Ok(at) if at as u64 <= end => return Ok(bytes.slice(..at)),
            // A section's length is past what was read: read up to the end it gives, or to it.
            Ok(at) => end = at as u64,
            Err(need) => end = (need as u64).max(end + 1),
        }
    }
}

/// One GRIB1 message described from its header `bytes`, as [`describe_message`].
fn describe_edition1(
    bytes: &[u8],
    message: &GribMessage,
    url: &str,
    (grids, names): (&mut GridCache, &mut describe::NameCache),
) -> Result<Result<tree::Scanned, String>, ScanError> {
    let keys = match edition1::Keys1::read(bytes) {
        Ok(keys) => keys,
        Err(Unread::NotScanned(reason)) => return Ok(Err(reason)),
        Err(Unread::Malformed(reason)) => return Err(message_error(url, message, &reason)),
    };
    let (description, grid) = match edition1::describe(keys, names) {
        Ok(described) => described,
        Err(reason) => return Ok(Err(reason)),
    };
    let axes = match grids.axes(&description.grid, description.grid_type, || grid.axes()) {
        Ok(axes) => axes,
        Err(reason) => return Ok(Err(reason)),
    };
    Ok(Ok(tree::Scanned { url: url.into(), message: *message, description, axes: Some(axes) }))
}

/// One GRIB2 message described from its header `bytes`: `Ok(Err(reason))`
/// for what is not scanned yet (a template, a grid), `Err` for a malformed message.
fn describe_message(
    bytes: &[u8],
    message: &GribMessage,
    url: &str,
    (grids, names): (&mut GridCache, &mut describe::NameCache),
) -> Result<Result<tree::Scanned, String>, ScanError> {
    let keys = match keys::MessageKeys::read(bytes) {
        Ok(keys) => keys,
        Err(Unread::NotScanned(reason)) => return Ok(Err(reason)),
        Err(Unread::Malformed(reason)) => return Err(message_error(url, message, &reason)),
    };
    let description = match describe::describe(&keys, names) {
        Ok(description) => description,
        Err(reason) => return Ok(Err(reason)),
    };
    // Grids whose rows keep one latitude and columns one longitude have 1-D coordinates, as kerchunk's.
    let axes = if matches!(description.grid_type, "regular_ll" | "regular_gg" | "mercator") {
        let points = usize::try_from(keys.get("numberOfDataPoints").unwrap_or(0)).unwrap_or(0);
        match grids.axes(&keys.grid, description.grid_type, || grib_grids::axes(&keys.grid, points)) {
            Ok(axes) => Some(axes),
            Err(reason) => return Ok(Err(reason)),
        }
    } else {
        None
    };
    Ok(Ok(tree::Scanned { url: url.into(), message: *message, description, axes }))
}

/// The messages of several GRIB files' references (`inputs`, each named,
/// as [`scan`] made them) in one tree, and what was left out.
pub(crate) fn combine(inputs: &[(String, ReferenceSet)]) -> Result<(ReferenceSet, Vec<Skipped>), ScanError> {
    let messages = combine::messages(inputs).map_err(|(name, reason)| locate::malformed(&name, reason))?;
    let mut skipped = Vec::new();
    Ok((tree::build(&messages, &mut skipped), skipped))
}
