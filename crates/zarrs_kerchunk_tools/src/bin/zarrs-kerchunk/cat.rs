//! `cat`: the values of an array or a slice of it, as text or a `.npy` file.

use std::io::Write;
use std::ops::Range;
use std::path::Path;

use zarrs_kerchunk::ReferenceStore;

use crate::array::{Element, NamedArray, fixed};
use crate::outcome::{Outcome, Result};

pub(crate) fn run(store: &ReferenceStore, path: &str, slice: Option<&str>, npy: Option<&Path>) -> Result {
    let array = NamedArray::open(store, path)?;
    let descr = array.descr().ok_or_else(|| format!("{}: its dtype is not a NumPy type string", array.path))?;
    let ranges = parse_slice(slice.unwrap_or(""), array.shape())?;
    let shape: Vec<u64> = ranges.iter().map(|r| r.end - r.start).collect();
    let (element, bytes) = array
        .read(&ranges)?
        .ok_or_else(|| format!("{}: elements of variable length ({descr}) cannot be printed", array.path))?;
    match npy {
        Some(file) => write_npy(file, descr, element, &shape, &bytes)?,
        None => print_values(element, &shape, &bytes, descr)?,
    }
    Ok(Outcome::Done)
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
        let mut rest = n as u64;
        let mut head = vec![0; shape.len().saturating_sub(1)];
        for (i, &len) in shape[..head.len()].iter().enumerate().rev() {
            head[i] = rest % len.max(1);
            rest /= len.max(1);
        }
        let values: Vec<String> = values.chunks(size).map(|v| format_element(element, v)).collect();
        if head.is_empty() {
            writeln!(out, "{}", values.join(" "))?;
        } else {
            writeln!(out, "{head:?}: {}", values.join(" "))?;
        }
    }
    Ok(out.flush()?)
}

/// A `NumPy` `.npy` file (format 1.0) of the values, in native byte order.
fn write_npy(file: &Path, descr: &str, element: Element, shape: &[u64], bytes: &[u8]) -> Result<()> {
    let native = if cfg!(target_endian = "little") { '<' } else { '>' };
    let descr = match element {
        // zarrs decodes numbers into native byte order.
        Element::Int(n) | Element::Uint(n) | Element::Float(n) if n > 1 => format!("{native}{}", &descr[1..]),
        _ => descr.to_owned(),
    };
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
