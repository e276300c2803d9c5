//! Arrays along the combined dimension that hold CF times other than the
//! coordinate itself: the coordinate's `bounds` (`time_bnds(time, nv)`, which
//! takes its units from the coordinate, as CF and xarray have it) and any array
//! with time units of its own. Where the files' units differ, or the coordinate
//! was written again in other units, their values are decoded to dates and
//! written again as the coordinate's are; concatenated as written, each file's
//! numbers would be read in another file's units.

use std::io::Read as _;

use kerchunk::{Reference, ReferenceSetBuilder};
use serde_json::{Value, json};
use zarrs_cf::TimeUnits;

use super::coordinate::numbers;
use super::{Input, Keyed, RangeReader, attributes, chunk_indices, combine_error, item_size, zarray};
use crate::error::CombineError;

/// The most values an array of times is written again with: it is held
/// inline, so it is small; a `.zarray` that claims more is refused rather
/// than allocated.
const MOST_VALUES: u64 = 1 << 24;

/// The time units an array's values are in, as one file gives them.
#[derive(Clone, Debug)]
pub(super) struct ArrayTimes {
    /// The units, parsed.
    pub(super) units: TimeUnits,
    /// `units` and `calendar` as written, for messages.
    described: String,
    /// Whether they are the coordinate's (the array is its `bounds` and has no units of its own).
    pub(super) inherited: bool,
}

/// The CF time units of the array at `path` in `set` (not the coordinate
/// along `dimension` itself): its own `units` and `calendar` or, where it has
/// no `units` and is the `bounds` of that coordinate, the coordinate's. `None`
/// if they are not CF time units that can be decoded (those are compared as
/// any other attribute).
pub(super) fn array_times(set: &(impl Keyed + ?Sized), path: &str, dimension: &str) -> Option<ArrayTimes> {
    if path == dimension {
        return None;
    }
    let own = attributes(set, path).filter(Value::is_object).unwrap_or_else(|| json!({}));
    let text = |attrs: &Value, name: &str| attrs.get(name).and_then(Value::as_str).map(str::to_owned);
    let (units, calendar, inherited) = if let Some(units) = text(&own, "units") {
        (units, text(&own, "calendar"), false)
    } else {
        let coordinate = attributes(set, dimension)?;
        let group = dimension.rsplit_once('/').map_or("", |(group, _)| group);
        let bounds = text(&coordinate, "bounds")?;
        let named = if group.is_empty() { bounds } else { format!("{group}/{bounds}") };
        if named != path {
            return None;
        }
        let calendar = text(&own, "calendar").or_else(|| text(&coordinate, "calendar"));
        (text(&coordinate, "units")?, calendar, true)
    };
    let parsed = TimeUnits::parse(&units, calendar.as_deref()).ok()??;
    let described = match &calendar {
        Some(calendar) => format!("units {units:?} (calendar {calendar:?})"),
        None => format!("units {units:?}"),
    };
    Some(ArrayTimes { units: parsed, described, inherited })
}

/// Whether the array at `path` holds CF times (see [`array_times`]): such an
/// array is held whole, never set aside, since combining may write its values
/// again.
pub(super) fn holds_times(set: &(impl Keyed + ?Sized), path: &str, dimension: &str) -> bool {
    array_times(set, path, dimension).is_some()
}

/// Whether the times of the array at `path` must be written again: its units
/// in some file (`ours`, each input's) are not `target`, the units the combined
/// array's values will be read in. An input whose array holds no CF times
/// where the first's does is an error.
pub(super) fn needs_rewriting(
    inputs: &[Input],
    path: &str,
    ours: &[Option<ArrayTimes>],
    target: &TimeUnits,
) -> Result<bool, CombineError> {
    let first = &ours[0];
    let mut differ = false;
    for (input, times) in inputs.iter().zip(ours) {
        let Some(times) = times else {
            let theirs = first.as_ref().map_or_else(String::new, |t| t.described.clone());
            return Err(combine_error(
                &input.name,
                path,
                format!("it holds no CF times, where {} has them in {theirs}", inputs[0].name),
            ));
        };
        if times.units.calendar() != target.calendar() {
            return Err(combine_error(
                &input.name,
                path,
                format!(
                    "its times are in the {} calendar ({}), where {} writes them in the {}: dates of two calendars \
                     cannot be one array",
                    times.units.calendar(),
                    times.described,
                    inputs[0].name,
                    target.calendar()
                ),
            ));
        }
        differ |= times.units != *target;
    }
    Ok(differ)
}

/// The array at `path` (along `dimension`, at `axis`) of every input, its
/// values decoded to dates with each file's units (`ours`) and written again
/// in `target`, as float64 in one inline chunk; its `.zattrs` the first file's,
/// with `target_text` (units and calendar) where it had units of its own.
/// Every file's chunks must be held inline or read through `reader`, each stored
/// raw or with zlib; a value that is missing, the fill value or no date is an
/// error: it cannot be written in other units.
pub(super) fn rewrite(
    builder: &mut ReferenceSetBuilder,
    inputs: &[Input],
    path: &str,
    (axis, dimension): (usize, &str),
    ours: &[Option<ArrayTimes>],
    (target, target_text): (&TimeUnits, (&str, &str)),
    reader: Option<&RangeReader>,
) -> Result<(), CombineError> {
    let first = &inputs[0];
    let mut blocks: Vec<(Vec<u64>, Vec<f64>)> = Vec::with_capacity(inputs.len());
    for (input, times) in inputs.iter().zip(ours) {
        let error = |reason: String| {
            combine_error(
                &input.name,
                path,
                format!("its times along {dimension} must be written again in one unit, but {reason}"),
            )
        };
        let Some(times) = times else { return Err(error("it holds no CF times".into())) };
        let meta =
            zarray(&input.references, path).ok_or_else(|| error("it has no .zarray that is inline JSON".into()))?;
        let (shape, values) = stored_values(input, path, &meta, reader).map_err(error)?;
        if shape.len() <= axis {
            return Err(error(format!("its shape {shape:?} has no axis {axis}")));
        }
        let fills = fill_values(&meta, attributes(&input.references, path).as_ref());
        let mut written = Vec::with_capacity(values.len());
        for value in values {
            #[expect(clippy::float_cmp, reason = "a fill value is that value exactly")]
            if fills.iter().any(|fill| (fill.is_nan() && value.is_nan()) || *fill == value) {
                return Err(error(format!("it holds its fill value {value}, which is no time")));
            }
            let date = times.units.date(value).ok_or_else(|| error(format!("its value {value} is not a date")))?;
            let value = target
                .value(date)
                .ok_or_else(|| error(format!("its time {date} is not a date of the {} calendar", target.calendar())))?;
            written.push(value);
        }
        if let Some((first_shape, _)) = blocks.first() {
            let mut beyond = shape.clone();
            beyond[axis] = first_shape[axis];
            if beyond != *first_shape {
                return Err(error(format!(
                    "its shape {shape:?} differs from {}'s {first_shape:?} beyond the dimension",
                    first.name
                )));
            }
        }
        blocks.push((shape, written));
    }
    let mut shape = blocks[0].0.clone();
    shape[axis] = blocks.iter().map(|(shape, _)| shape[axis]).sum();
    let outer: u64 = shape[..axis].iter().product();
    let inner: u64 = shape[axis + 1..].iter().product();
    let mut values = Vec::with_capacity(blocks.iter().map(|(_, values)| values.len()).sum());
    for o in 0..outer {
        for (block_shape, block) in &blocks {
            let run = usize::try_from(block_shape[axis] * inner).unwrap_or(usize::MAX);
            let start = usize::try_from(o).unwrap_or(usize::MAX).saturating_mul(run);
            values.extend_from_slice(&block[start..start + run]);
        }
    }
    let meta = json!({
        "shape": shape, "chunks": shape, "dtype": "<f8", "fill_value": null,
        "compressor": null, "filters": null, "order": "C", "zarr_format": 2,
    });
    builder.insert_inline(&format!("{path}/.zarray"), meta.to_string().as_bytes());
    let mut attrs = attributes(&first.references, path).filter(Value::is_object).unwrap_or_else(|| json!({}));
    if let Some(attrs) = attrs.as_object_mut() {
        // No value written is a fill value, and none is packed.
        for name in ["_FillValue", "missing_value", "scale_factor", "add_offset", "_Unsigned"] {
            attrs.remove(name);
        }
        if !ours[0].as_ref().is_some_and(|times| times.inherited) {
            attrs.insert("units".into(), Value::from(target_text.0));
            attrs.insert("calendar".into(), Value::from(target_text.1));
        }
    }
    builder.insert_inline(&format!("{path}/.zattrs"), attrs.to_string().as_bytes());
    let key = format!("{path}/{}", vec!["0"; shape.len().max(1)].join("."));
    builder.insert_inline(&key, &values.iter().flat_map(|v| v.to_le_bytes()).collect::<Vec<u8>>());
    Ok(())
}

/// The numbers an array's fill value and `_FillValue` and `missing_value`
/// attributes name (NaN among them where one is NaN).
fn fill_values(meta: &Value, attrs: Option<&Value>) -> Vec<f64> {
    let number = |value: &Value| match value {
        Value::Number(n) => n.as_f64(),
        Value::String(s) if s.eq_ignore_ascii_case("nan") => Some(f64::NAN),
        _ => None,
    };
    let mut fills: Vec<f64> = number(&meta["fill_value"]).into_iter().collect();
    for name in ["_FillValue", "missing_value"] {
        match attrs.and_then(|attrs| attrs.get(name)) {
            Some(Value::Array(values)) => fills.extend(values.iter().filter_map(number)),
            Some(value) => fills.extend(number(value)),
            None => {}
        }
    }
    fills
}

/// The shape and values (in C order) of the array at `path` of `input`, whose
/// chunks must all be held inline or by range references `reader` reads, each
/// stored raw or zlib-compressed, without filters.
fn stored_values(
    input: &Input,
    path: &str,
    meta: &Value,
    reader: Option<&RangeReader>,
) -> Result<(Vec<u64>, Vec<f64>), String> {
    let dims = |field: &str| -> Result<Vec<u64>, String> {
        meta[field]
            .as_array()
            .and_then(|values| values.iter().map(Value::as_u64).collect::<Option<Vec<u64>>>())
            .ok_or_else(|| format!("its {field} {} is not a list of lengths", meta[field]))
    };
    let (shape, chunks) = (dims("shape")?, dims("chunks")?);
    if shape.len() != chunks.len() || chunks.contains(&0) {
        return Err(format!("its chunks {chunks:?} do not fit its shape {shape:?}"));
    }
    let dtype = meta["dtype"].as_str().unwrap_or_default();
    let size = item_size(dtype).ok_or_else(|| format!("its dtype {} is not numeric", meta["dtype"]))?;
    let zlib = match &meta["compressor"] {
        Value::Null => false,
        compressor if compressor["id"] == "zlib" => true,
        compressor => return Err(format!("its compressor {compressor} is not read here (only zlib)")),
    };
    if !(meta["filters"].is_null() || meta["filters"].as_array().is_some_and(Vec::is_empty)) {
        return Err(format!("its filters {} are not read here", meta["filters"]));
    }
    if meta["order"] == "F" && shape.len() > 1 {
        return Err("its values are in Fortran order, which is not read here".into());
    }
    let total = shape.iter().try_fold(1u64, |n, &d| n.checked_mul(d)).filter(|&n| n <= MOST_VALUES);
    let per_chunk = chunks.iter().try_fold(1u64, |n, &d| n.checked_mul(d)).filter(|&n| n <= MOST_VALUES);
    let (Some(total), Some(per_chunk)) = (total, per_chunk) else {
        return Err(format!("its shape {shape:?} or chunks {chunks:?} hold more than {MOST_VALUES} values"));
    };
    if total == 0 {
        return Ok((shape, Vec::new()));
    }
    let to_usize = |n: u64| usize::try_from(n).map_err(|_| "it is too large".to_owned());
    let mut values = vec![f64::NAN; to_usize(total)?];
    let mut seen = vec![false; values.len()];
    let chunk_bytes = to_usize(per_chunk)? * size;
    for (key, reference) in input.references.with_prefix(&format!("{path}/")) {
        let Some(name) = key.strip_prefix(path).and_then(|rest| rest.strip_prefix('/')) else { continue };
        if name.starts_with(".z") {
            continue;
        }
        let indices = chunk_indices(name, shape.len()).ok_or_else(|| format!("{key:?} is not a chunk key"))?;
        let stored = match (reference, reader) {
            (Reference::Inline(bytes), _) => bytes.to_vec(),
            (Reference::Range { url, offset, length }, Some(reader)) => reader(&input.name, url, offset, length)
                .map_err(|e| format!("its chunk {key} cannot be read: {e}"))?
                .ok_or_else(|| format!("its chunk {key} cannot be read here"))?,
            _ => return Err(format!("its chunk {key} is neither inline nor a range that can be read here")),
        };
        let bytes = if zlib {
            let mut out = Vec::with_capacity(chunk_bytes);
            let read = flate2::read::ZlibDecoder::new(&stored[..]).take(chunk_bytes as u64 + 1).read_to_end(&mut out);
            read.map_err(|e| format!("its chunk {key} does not inflate: {e}"))?;
            out
        } else {
            stored
        };
        if bytes.len() != chunk_bytes {
            return Err(format!("its chunk {key} holds {} bytes, not {chunk_bytes}", bytes.len()));
        }
        let numbers = numbers(dtype, &bytes).ok_or_else(|| format!("its dtype {dtype} is not numeric"))?;
        // Each value of the chunk that lies within the array, at its place in C order.
        let origin: Vec<u64> = indices.iter().zip(&chunks).map(|(i, c)| i.saturating_mul(*c)).collect();
        if origin.iter().zip(&shape).any(|(o, s)| o >= s) && !shape.is_empty() {
            return Err(format!("its chunk {key} lies outside its shape {shape:?}"));
        }
        for (within, value) in numbers.into_iter().enumerate() {
            let mut rest = within as u64;
            let mut at = 0u64;
            let mut inside = true;
            for axis in (0..shape.len()).rev() {
                let position = origin[axis] + rest % chunks[axis];
                rest /= chunks[axis];
                inside &= position < shape[axis];
                let stride: u64 = shape[axis + 1..].iter().product();
                at += position * stride;
            }
            if inside {
                let at = to_usize(at)?;
                values[at] = value;
                seen[at] = true;
            }
        }
    }
    if let Some(missing) = seen.iter().position(|seen| !seen) {
        return Err(format!("its value {missing} (in C order) is in no chunk it holds"));
    }
    Ok((shape, values))
}
