//! GRIB2 files scanned into references: where each message is (from the
//! messages' lengths, or an inventory beside the file), what each message
//! is (its sections 1 to 5 and eccodes' tables, without eccodes), and the
//! hierarchy kerchunk's `scan_grib` + `grib_tree` make of them.
//!
//! | module | what |
//! |---|---|
//! | `locate` | each message's offset, length and edition |
//! | `inventory` | NOAA's `.idx` and ECMWF's `.index` |
//! | `keys` | a message's keys from its sections |
//! | `tables` | eccodes' concepts and code tables (`tables/make.py`) |
//! | `describe` | cfgrib's names, levels, times and attributes of a message |
//! | `tree` | the references: groups, arrays and coordinates |

mod describe;
mod grid;
mod inventory;
mod keys;
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

/// The axes of the regular grids seen so far, by their grid section.
type GridCache = Vec<(Vec<u8>, Arc<tree::Axes>)>;

fn message_error(url: &str, message: &GribMessage, reason: &str) -> ScanError {
    locate::malformed(url, format!("the message at byte {}: {reason}", message.offset))
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
    let messages = locate(reader, url, options).await?;
    let mut scanned = Vec::with_capacity(messages.len());
    let mut skipped = Vec::new();
    let (mut grids, mut names) = (GridCache::new(), describe::NameCache::default());
    for message in &messages {
        let described = if message.edition == 2 {
            describe_message(reader, message, (url, options), (&mut grids, &mut names)).await?
        } else {
            Err("GRIB edition 1 messages are not scanned into references yet".to_owned())
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
    let references = tree::build(&scanned, url, &mut skipped);
    Ok((references, skipped))
}

/// One GRIB2 message described: `Ok(Err(reason))` for what is not scanned
/// yet (a template, a grid), `Err` for a file that cannot be read.
async fn describe_message(
    reader: &mut BlockReader<'_>,
    message: &GribMessage,
    (url, options): (&str, &ScanOptions),
    (grids, names): (&mut GridCache, &mut describe::NameCache),
) -> Result<Result<tree::Scanned, String>, ScanError> {
    let bytes = header(reader, message, url, options).await?;
    let keys = match keys::MessageKeys::read(&bytes) {
        Ok(keys) => keys,
        Err(reason) => return Err(message_error(url, message, &reason)),
    };
    let description = match describe::describe(&keys, names) {
        Ok(description) => description,
        Err(reason) => return Ok(Err(reason)),
    };
    let axes = if description.grid_type == "regular_ll" {
        // One computation a grid, not a message: the messages of a file share a few grids.
        let known = grids.iter().find(|(grid, _)| *grid == keys.grid).map(|(_, axes)| Arc::clone(axes));
        let axes = match known {
            Some(axes) => axes,
            None => match grid::regular_axes(&keys.grid, keys.get("numberOfDataPoints")) {
                Some(axes) => {
                    let axes = Arc::new(axes);
                    grids.push((keys.grid.clone(), Arc::clone(&axes)));
                    axes
                }
                None => {
                    return Ok(Err("a regular grid whose rows and columns are not one axis each (columns first, alternating rows, no rows, or not its number of points)".into()));
                }
            },
        };
        Some(axes)
    } else {
        None
    };
    Ok(Ok(tree::Scanned { message: *message, description, axes }))
}
