//! `cat`: the values of an array or a slice of it, as text or a `.npy` file:
//! decoded through the CF conventions (unpacked, masked, times as dates), or
//! as stored with `--raw`.

use std::io::Write;
use std::ops::Range;
use std::path::Path;

use serde_json::Value;
use zarrs_cf::{Calendar, DateTime, Decoded, Variable};
use zarrs_kerchunk::ReferenceStore;

use crate::array::{Element, NamedArray, fixed};
use crate::cf::{self, Picking};
use crate::outcome::{Outcome, Result};

pub(crate) fn run(
    store: &ReferenceStore,
    path: &str,
    slice: Option<&str>,
    npy: Option<&Path>,
    picking: &Picking,
) -> Result {
    let array = NamedArray::open(store, path)?;
    let (variable, ranges) = cf::pick(store, path, array.shape(), slice.unwrap_or(""), picking)?;
    let shape: Vec<u64> = ranges.iter().map(|r| r.end - r.start).collect();
    let descr = array.descr().ok_or_else(|| format!("{}: its dtype is not a NumPy type string", array.path))?;
    let viewed = variable.as_ref().filter(|v| !picking.raw() && v.decoded_type().is_some());
    if let Some(variable) = viewed
        && cf::decodes(variable)
    {
        let values = match npy {
            Some(file) => return write_decoded_npy(file, variable, &ranges).map(|()| Outcome::Done),
            None => cf::labels(variable, &ranges)?,
        };
        print_decoded(variable, &ranges, &values)?;
        return Ok(Outcome::Done);
    }
    let Some((element, bytes)) = array.read(&ranges)? else {
        // Text (HDF5 strings, `vlen-utf8`): printed as JSON strings; no `.npy` of objects.
        let texts = array.read_texts(&ranges)?.filter(|_| npy.is_none()).ok_or_else(|| {
            format!("{}: elements of variable length ({descr}) cannot be written as .npy or printed", array.path)
        })?;
        print_texts(&shape, &texts, descr)?;
        return Ok(Outcome::Done);
    };
    match (npy, viewed) {
        (Some(file), _) => write_npy(file, &npy_descr(descr, element), &shape, &bytes)?,
        // Nothing to decode: the stored values, with the variable's dimensions, coordinates and units.
        (None, Some(variable)) => {
            let values: Vec<String> = bytes.chunks(element.size()).map(|v| format_element(element, v)).collect();
            print_decoded(variable, &ranges, &values)?;
        }
        (None, None) => print_values(element, &shape, &bytes, descr)?,
    }
    Ok(Outcome::Done)
}

/// `values` (of `ranges`), one line per row of the last dimension, each
/// headed by the coordinates (or indices) of the others.
fn print_decoded(variable: &Variable<ReferenceStore>, ranges: &[Range<u64>], values: &[String]) -> Result<()> {
    let shape: Vec<u64> = ranges.iter().map(|r| r.end - r.start).collect();
    let units = variable.units().filter(|_| variable.time_units().is_none());
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    writeln!(
        out,
        "# {}: shape {shape:?} ({}), {}{}",
        variable.path(),
        variable.dims().join(", "),
        cf::describe(variable),
        units.map_or_else(String::new, |u| format!(", units {u}"))
    )?;
    let scalars = cf::scalar_coordinates(variable);
    if !scalars.is_empty() {
        writeln!(out, "# at {}", scalars.join(", "))?;
    }
    let heads = shape.len().saturating_sub(1);
    // The columns' coordinates, when the rows are not the coordinate itself.
    if heads > 0
        && let Some(columns) = cf::coordinate_labels(variable, heads, &ranges[heads])?
    {
        writeln!(out, "# {}: {}", variable.dims()[heads], columns.join(" "))?;
    }
    let labels: Vec<Option<Vec<String>>> =
        (0..heads).map(|d| cf::coordinate_labels(variable, d, &ranges[d])).collect::<Result<_>>()?;
    let row = usize::try_from(shape.last().copied().unwrap_or(1))?.max(1);
    for (n, values) in values.chunks(row).enumerate() {
        let head: Vec<String> = row_head(&shape, n as u64)
            .into_iter()
            .enumerate()
            .map(|(d, index)| {
                let label = labels[d].as_ref().and_then(|l| l.get(usize::try_from(index).ok()?).cloned());
                format!("{}={}", variable.dims()[d], label.unwrap_or_else(|| (ranges[d].start + index).to_string()))
            })
            .collect();
        if head.is_empty() {
            writeln!(out, "{}", values.join(" "))?;
        } else {
            writeln!(out, "[{}]: {}", head.join(", "), values.join(" "))?;
        }
    }
    Ok(out.flush()?)
}

/// The decoded values as a `.npy` file: float32 or float64 as xarray
/// decodes them, `datetime64[ns]` for Gregorian dates, ISO text for other calendars.
fn write_decoded_npy(file: &Path, variable: &Variable<ReferenceStore>, ranges: &[Range<u64>]) -> Result<()> {
    let shape: Vec<u64> = ranges.iter().map(|r| r.end - r.start).collect();
    let native = if cfg!(target_endian = "little") { '<' } else { '>' };
    if let Some(units) = variable.time_units() {
        let dates = variable.read_times(ranges)?;
        let nanos: Option<Vec<i64>> =
            dates.iter().map(|d| d.map_or(Some(i64::MIN), |d| gregorian_nanos(units.calendar(), d))).collect();
        if let Some(nanos) = nanos {
            let bytes: Vec<u8> = nanos.iter().flat_map(|n| n.to_ne_bytes()).collect();
            return write_npy(file, &format!("{native}M8[ns]"), &shape, &bytes);
        }
        let texts: Vec<String> = dates.iter().map(|d| d.map(|d| d.to_string()).unwrap_or_default()).collect();
        let width = texts.iter().map(|t| t.chars().count()).max().unwrap_or(1).max(1);
        let bytes: Vec<u8> = texts
            .iter()
            .flat_map(|t| {
                t.chars()
                    .map(u32::from)
                    .chain(std::iter::repeat(0))
                    .take(width)
                    .flat_map(u32::to_ne_bytes)
                    .collect::<Vec<_>>()
            })
            .collect();
        return write_npy(file, &format!("{native}U{width}"), &shape, &bytes);
    }
    let values = variable.read(ranges)?;
    let (descr, bytes): (String, Vec<u8>) = match variable.decoded_type() {
        #[expect(clippy::cast_possible_truncation, reason = "float32 values, held exactly in f64")]
        Some(Decoded::Float32) => {
            (format!("{native}f4"), values.iter().flat_map(|&v| (v as f32).to_ne_bytes()).collect())
        }
        _ => (format!("{native}f8"), values.iter().flat_map(|&v| v.to_ne_bytes()).collect()),
    };
    write_npy(file, &descr, &shape, &bytes)
}

/// Nanoseconds since 1970-01-01 of a date `NumPy`'s `datetime64[ns]` holds: a
/// Gregorian date (from 1582-10-15 in the standard calendar) within its range.
fn gregorian_nanos(calendar: Calendar, date: DateTime) -> Option<i64> {
    let gregorian = match calendar {
        Calendar::ProlepticGregorian => true,
        Calendar::Standard => (date.year, date.month, date.day) >= (1582, 10, 15),
        _ => false,
    };
    if !gregorian {
        return None;
    }
    let day = i128::from(Calendar::ProlepticGregorian.day_number(date.year, date.month, date.day)?);
    let seconds = i128::from(date.hour * 3600 + date.minute * 60 + date.second);
    i64::try_from((day * 86_400 + seconds) * 1_000_000_000 + i128::from(date.nanosecond))
        .ok()
        .filter(|&n| n != i64::MIN)
}

/// NumPy-style indices, one per dimension (`3`, `1:4`, `:`, `-1`, `2:`); missing ones are whole.
pub(crate) fn parse_slice(text: &str, shape: &[u64]) -> Result<Vec<Range<u64>>> {
    let parts: Vec<&str> = if text.trim().is_empty() { Vec::new() } else { text.split(',').map(str::trim).collect() };
    if parts.len() > shape.len() {
        return Err(
            format!("the slice {text:?} has {} entries but the array {} dimensions", parts.len(), shape.len()).into()
        );
    }
    let index = |part: &str, len: u64, dim: usize| -> Result<u64> {
        let i: i64 = part.parse().map_err(|_| format!("{part:?} in dimension {dim} is not an integer"))?;
        let len_i = i64::try_from(len)?;
        let i = if i < 0 { i + len_i } else { i };
        if (0..=len_i).contains(&i) {
            Ok(u64::try_from(i)?)
        } else {
            Err(format!("index {part} is outside dimension {dim} of length {len}").into())
        }
    };
    shape
        .iter()
        .enumerate()
        .map(|(dim, &len)| {
            let Some(part) = parts.get(dim) else { return Ok(0..len) };
            let range = match part.split_once(':') {
                None => {
                    let i = index(part, len, dim)?;
                    if i >= len {
                        return Err(format!("index {part} is outside dimension {dim} of length {len}").into());
                    }
                    i..i + 1
                }
                Some((start, end)) => {
                    let start = if start.is_empty() { 0 } else { index(start, len, dim)? };
                    let end = if end.is_empty() { len } else { index(end, len, dim)? };
                    start..end.max(start)
                }
            };
            Ok(range)
        })
        .collect()
}

fn format_element(element: Element, bytes: &[u8]) -> String {
    match element {
        Element::Bool => (bytes[0] != 0).to_string(),
        Element::Int(1) => i8::from_ne_bytes(fixed(bytes)).to_string(),
        Element::Int(2) => i16::from_ne_bytes(fixed(bytes)).to_string(),
        Element::Int(4) => i32::from_ne_bytes(fixed(bytes)).to_string(),
        Element::Int(_) => i64::from_ne_bytes(fixed(bytes)).to_string(),
        Element::Uint(1) => bytes[0].to_string(),
        Element::Uint(2) => u16::from_ne_bytes(fixed(bytes)).to_string(),
        Element::Uint(4) => u32::from_ne_bytes(fixed(bytes)).to_string(),
        Element::Uint(_) => u64::from_ne_bytes(fixed(bytes)).to_string(),
        Element::Float(4) => f32::from_ne_bytes(fixed(bytes)).to_string(),
        Element::Float(_) => f64::from_ne_bytes(fixed(bytes)).to_string(),
        Element::Other(_) => bytes.iter().fold(String::new(), |mut hex, b| {
            let _ = std::fmt::Write::write_fmt(&mut hex, format_args!("{b:02x}"));
            hex
        }),
    }
}

/// One line per row of the last dimension, each headed by the indices of the others.
fn print_values(element: Element, shape: &[u64], bytes: &[u8], descr: &str) -> Result<()> {
    let size = element.size();
    let row = usize::try_from(shape.last().copied().unwrap_or(1))?.max(1);
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    writeln!(out, "# shape {shape:?}, dtype {descr}")?;
    for (n, values) in bytes.chunks(size * row).enumerate() {
        let head = row_head(shape, n as u64);
        let values: Vec<String> = values.chunks(size).map(|v| format_element(element, v)).collect();
        if head.is_empty() {
            writeln!(out, "{}", values.join(" "))?;
        } else {
            writeln!(out, "{head:?}: {}", values.join(" "))?;
        }
    }
    Ok(out.flush()?)
}

/// Text values, one JSON string each, a row of the last dimension per line.
fn print_texts(shape: &[u64], texts: &[String], descr: &str) -> Result<()> {
    let row = usize::try_from(shape.last().copied().unwrap_or(1))?.max(1);
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    writeln!(out, "# shape {shape:?}, dtype {descr} (text)")?;
    for (n, values) in texts.chunks(row).enumerate() {
        let head = row_head(shape, n as u64);
        let values: Vec<String> = values.iter().map(|t| Value::from(t.as_str()).to_string()).collect();
        if head.is_empty() {
            writeln!(out, "{}", values.join(" "))?;
        } else {
            writeln!(out, "{head:?}: {}", values.join(" "))?;
        }
    }
    Ok(out.flush()?)
}

/// The indices, in every dimension but the last, of row `n` of an array of `shape` printed a row per line.
fn row_head(shape: &[u64], n: u64) -> Vec<u64> {
    let mut rest = n;
    let mut head = vec![0; shape.len().saturating_sub(1)];
    for (i, &len) in shape[..head.len()].iter().enumerate().rev() {
        head[i] = rest % len.max(1);
        rest /= len.max(1);
    }
    head
}

/// The `.npy` type of values of the `NumPy` type `descr` as zarrs decodes them.
fn npy_descr(descr: &str, element: Element) -> String {
    let native = if cfg!(target_endian = "little") { '<' } else { '>' };
    match element {
        // zarrs decodes numbers into native byte order.
        Element::Int(n) | Element::Uint(n) | Element::Float(n) if n > 1 => format!("{native}{}", &descr[1..]),
        _ => descr.to_owned(),
    }
}

/// A `NumPy` `.npy` file (format 1.0) of `bytes`, values of the type `descr`.
fn write_npy(file: &Path, descr: &str, shape: &[u64], bytes: &[u8]) -> Result<()> {
    let dims: Vec<String> = shape.iter().map(ToString::to_string).collect();
    let shape = if dims.len() == 1 { format!("({},)", dims[0]) } else { format!("({})", dims.join(", ")) };
    let mut header = format!("{{'descr': '{descr}', 'fortran_order': False, 'shape': {shape}, }}");
    // Magic (6) + version (2) + length (2) + header + newline, padded to 64 bytes.
    let total = (10 + header.len() + 1).div_ceil(64) * 64;
    header.push_str(&" ".repeat(total - 10 - header.len() - 1));
    header.push('\n');
    let mut out = std::io::BufWriter::new(
        std::fs::File::create(file).map_err(|e| format!("cannot write {}: {e}", file.display()))?,
    );
    out.write_all(b"\x93NUMPY\x01\x00")?;
    out.write_all(&u16::try_from(header.len())?.to_le_bytes())?;
    out.write_all(header.as_bytes())?;
    out.write_all(bytes)?;
    Ok(out.flush()?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slices_read_as_numpy_reads_them() {
        let shape = [5, 7, 9];
        assert_eq!(parse_slice("", &shape).unwrap(), [0..5, 0..7, 0..9]);
        assert_eq!(parse_slice("1, 2:4", &shape).unwrap(), [1..2, 2..4, 0..9]);
        assert_eq!(parse_slice("-1,:,3:", &shape).unwrap(), [4..5, 0..7, 3..9]);
        assert_eq!(parse_slice(":-2", &shape).unwrap(), [0..3, 0..7, 0..9]);
        assert!(parse_slice("5", &shape).is_err());
        assert!(parse_slice("a", &shape).is_err());
        assert!(parse_slice("0,0,0,0", &shape).is_err());
    }
}
