//! One DAP4 variable of a sidecar: its element type (with `byteOrder`), and where its bytes
//! are: `dmrpp:chunks` (the filters in pipeline order, the chunk shape, each allocated chunk's
//! offset, size and position), one chunk without a position (contiguous data), or
//! `dmrpp:compact` (the bytes themselves, base64).

use std::fmt::Write as _;

use base64::Engine as _;
use hdf5_reader::ByteOrder;
use hdf5_reader::messages::filter_pipeline::FilterDescription;
use roxmltree::Node;

use super::{attribute_of, dmrpp_child, dmrpp_children};
use crate::hdf5::dtype::{Dtype, Kind};
use crate::hdf5::layout::{DEFLATE, SHUFFLE, zarr_filters};
use crate::hdf5::{whole_chunks, zero_key};
use crate::zarr::Fill;

/// HDF5's filter id of fletcher32.
const FLETCHER32: u16 = 3;

/// Where one chunk's bytes are.
pub(crate) enum Chunk {
    /// Held in the references.
    Inline(Vec<u8>),
    /// A byte range of the data file, or of the file a chunk's own `href` names.
    Range { href: Option<String>, offset: u64, length: u64 },
}

/// Where an array's bytes are.
pub(crate) struct Layout {
    /// The chunk shape.
    pub(crate) chunks: Vec<u64>,
    /// The filters, as HDF5 describes them (to decode chunks with), and as zarr v2's.
    pub(crate) pipeline: Vec<FilterDescription>,
    pub(crate) filters: Vec<String>,
    /// The chunks the index holds, by key.
    pub(crate) data: Vec<(String, Chunk)>,
}

impl Layout {
    fn unfiltered(chunks: Vec<u64>, data: Vec<(String, Chunk)>) -> Self {
        Self { chunks, pipeline: Vec::new(), filters: Vec::new(), data }
    }
}

/// The element type of a variable of DAP4 type `dap` (`Float32`, `Int16`, ...), stored in
/// `order`; a `String` of fixed length is `fixed` bytes long.
pub(crate) fn element(dap: &str, order: ByteOrder, fixed: Option<u32>) -> Result<Dtype, String> {
    let order_char = match order {
        ByteOrder::LittleEndian => '<',
        ByteOrder::BigEndian => '>',
    };
    let number = |letter: char, size: u8, kind: Kind| {
        let order = if size == 1 { '|' } else { order_char };
        Ok(Dtype { numpy: format!("{order}{letter}{size}"), itemsize: u64::from(size), kind })
    };
    let int = |size: u8, signed: bool| number(if signed { 'i' } else { 'u' }, size, Kind::Int { size, signed, order });
    let float = |size: u8| number('f', size, Kind::Float { size, order });
    let bytes = |n: u32| Ok(Dtype { numpy: format!("|S{n}"), itemsize: u64::from(n), kind: Kind::Bytes(n) });
    match dap {
        "Byte" | "UInt8" => int(1, false),
        "Int8" => int(1, true),
        "Int16" => int(2, true),
        "UInt16" => int(2, false),
        "Int32" => int(4, true),
        "UInt32" => int(4, false),
        "Int64" => int(8, true),
        "UInt64" => int(8, false),
        "Float32" => float(4),
        "Float64" => float(8),
        "Char" => bytes(1),
        "String" => match fixed {
            Some(n) if n > 0 => bytes(n),
            _ => Err("a string without dmrpp:FixedLengthStringArray: variable-length, whose values a sidecar \
                      does not index, or fixed-length in a sidecar older than build_dmrpp 3.21, which did not \
                      say so"
                .to_owned()),
        },
        other => Err(format!("a {other}, which zarr v2 has no type for")),
    }
}

/// A `fillValue` (DAP4's text of a value) in an array of `kind`.
pub(crate) fn fill_of_text(kind: Kind, text: &str) -> Option<Fill> {
    if let Kind::Bytes(_) = kind {
        return Some(Fill::Bytes(text.as_bytes().to_vec()));
    }
    let text = text.trim();
    let integer = text.parse::<i128>().ok();
    #[expect(clippy::cast_precision_loss, reason = "as numpy converts")]
    let float = match integer {
        Some(n) => n as f64,
        None => text.parse::<f64>().ok()?,
    };
    #[expect(clippy::cast_possible_truncation, reason = "as numpy converts, truncating")]
    let integer = integer.or_else(|| float.is_finite().then_some(float as i128));
    crate::hdf5::dtype::number_in(kind, integer, float)
}

/// The layout of a variable of `element`s and `shape` (holding `nbytes` bytes of values),
/// from `variable`'s `dmrpp:` children; values the sidecar holds at most `most` bytes.
pub(crate) fn layout(
    variable: Node<'_, '_>,
    element: &Dtype,
    shape: &[u64],
    nbytes: u64,
    most: u64,
) -> Result<Layout, String> {
    let whole = |chunk: Chunk| if nbytes == 0 { Vec::new() } else { vec![(zero_key(shape.len()), chunk)] };
    if let Some(bytes) = compact(variable) {
        let bytes = bytes?;
        let data = usize::try_from(nbytes)
            .ok()
            .and_then(|n| bytes.get(..n))
            .ok_or_else(|| format!("compact data of {} bytes for {nbytes} bytes of values", bytes.len()))?;
        return Ok(Layout::unfiltered(whole_chunks(shape), whole(Chunk::Inline(data.to_vec()))));
    }
    let held = dmrpp_child(variable, "compact").or_else(|| dmrpp_child(variable, "missingdata"));
    if held.is_some() && nbytes > most {
        return Err(format!(
            "its {nbytes} bytes of values, held in the sidecar, are more than the limit of {most} \
             (ScanOptions::with_max_header_bytes)"
        ));
    }
    if let Some(data) = missing_data(variable, nbytes, nbytes == element.itemsize) {
        return Ok(Layout::unfiltered(whole_chunks(shape), whole(Chunk::Inline(data?))));
    }
    // The chunks, in `dmrpp:chunks` or (older sidecars) directly under the variable.
    let chunks = dmrpp_child(variable, "chunks");
    let holder = chunks.unwrap_or(variable);
    let listed: Vec<Node<'_, '_>> = dmrpp_children(holder, "chunk").collect();
    let sizes = chunks.and_then(|c| dmrpp_child(c, "chunkDimensionSizes"));
    let pipeline = match chunks {
        Some(chunks) => pipeline(chunks)?,
        None => Vec::new(),
    };
    let Some(sizes) = sizes else {
        // Contiguous: one chunk of the whole array, at most.
        if !pipeline.is_empty() {
            return Err("filters on data with no chunk shape (dmrpp:chunkDimensionSizes)".to_owned());
        }
        return match listed.as_slice() {
            [] => Ok(Layout::unfiltered(whole_chunks(shape), Vec::new())),
            [chunk] => {
                let (href, offset, stored) = place(*chunk)?;
                if stored < nbytes {
                    return Err(format!("contiguous storage of {stored} bytes for {nbytes} bytes of values"));
                }
                Ok(Layout::unfiltered(whole_chunks(shape), whole(Chunk::Range { href, offset, length: nbytes })))
            }
            more => Err(format!("{} chunks and no chunk shape (dmrpp:chunkDimensionSizes)", more.len())),
        };
    };
    let chunk_shape = numbers(sizes.text().unwrap_or_default())
        .ok_or_else(|| format!("dmrpp:chunkDimensionSizes {:?} is not a list of sizes", sizes.text()))?;
    if chunk_shape.len() != shape.len() || chunk_shape.contains(&0) {
        return Err(format!("chunks {chunk_shape:?} for shape {shape:?}"));
    }
    let (elements, unfiltered) = chunk_shape
        .iter()
        .try_fold(1u64, |n, &c| n.checked_mul(c))
        .and_then(|elements| Some((elements, elements.checked_mul(element.itemsize)?)))
        .ok_or_else(|| format!("chunks {chunk_shape:?} hold more bytes than u64 counts"))?;
    let filters = zarr_filters(&pipeline, 0, element.itemsize, elements)?;
    let mut out = Vec::with_capacity(listed.len());
    for chunk in listed {
        let position = match chunk.attribute("chunkPositionInArray") {
            Some(text) => numbers(text.trim().trim_start_matches('[').trim_end_matches(']'))
                .ok_or_else(|| format!("chunkPositionInArray {text:?} is not a position"))?,
            // One chunk without a position is the first (bes writes a lone chunk so).
            None => vec![0; shape.len()],
        };
        if position.len() != shape.len() {
            return Err(format!("a chunk at {position:?} in an array of {} dimensions", shape.len()));
        }
        // A chunk wholly outside the extent is stale: readers ignore it.
        if position.iter().zip(shape).any(|(&p, &s)| p >= s) {
            continue;
        }
        let mut key = String::new();
        for (axis, (&p, &c)) in position.iter().zip(&chunk_shape).enumerate() {
            if p % c != 0 {
                return Err(format!("a chunk at {position:?}, not on the chunk grid {chunk_shape:?}"));
            }
            let _ = write!(key, "{}{}", if axis > 0 { "." } else { "" }, p / c);
        }
        let (href, offset, stored) = place(chunk)?;
        let length = if pipeline.is_empty() { unfiltered } else { stored };
        out.push((key, Chunk::Range { href, offset, length }));
    }
    Ok(Layout { chunks: chunk_shape, pipeline, filters, data: out })
}

/// The values of a variable's `dmrpp:missingdata`, if it has one: values the file lacks (or holds
/// in a form references cannot point at: a variable-length array, padded), which `build_dmrpp`
/// wrote into the sidecar as bes's reader reads them back: base64 of the zlib stream of the
/// values, or of the `one` value itself.
fn missing_data(variable: Node<'_, '_>, nbytes: u64, one: bool) -> Option<Result<Vec<u8>, String>> {
    let text: String = dmrpp_child(variable, "missingdata")?.text().unwrap_or_default().split_whitespace().collect();
    let read = || -> Result<Vec<u8>, String> {
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(text)
            .map_err(|e| format!("its dmrpp:missingdata is not base64: {e}"))?;
        let size = usize::try_from(nbytes).map_err(|e| e.to_string())?;
        if one {
            // One value, as it is (bes's reader copies it for an array of one, or a Byte).
            return bytes.get(..size).map(<[u8]>::to_vec).ok_or_else(|| {
                format!("its dmrpp:missingdata holds {} bytes for {nbytes} bytes of values", bytes.len())
            });
        }
        let mut values = Vec::with_capacity(size);
        let mut stream =
            std::io::Read::take(flate2::read::ZlibDecoder::new(bytes.as_slice()), nbytes.saturating_add(1));
        std::io::Read::read_to_end(&mut stream, &mut values)
            .map_err(|e| format!("its dmrpp:missingdata does not inflate: {e}"))?;
        if values.len() != size {
            return Err(format!("its dmrpp:missingdata holds {} bytes for {nbytes} bytes of values", values.len()));
        }
        Ok(values)
    };
    Some(read())
}

/// The bytes of a variable's `dmrpp:compact`, if it has one.
pub(crate) fn compact(variable: Node<'_, '_>) -> Option<Result<Vec<u8>, String>> {
    let text: String = dmrpp_child(variable, "compact")?.text().unwrap_or_default().split_whitespace().collect();
    Some(
        base64::engine::general_purpose::STANDARD
            .decode(text)
            .map_err(|e| format!("its dmrpp:compact data is not base64: {e}")),
    )
}

/// The filters of `dmrpp:chunks`, in pipeline order, as HDF5 describes them: `compressionType`'s
/// names, with `deflateLevel`'s levels for its deflates in turn.
fn pipeline(chunks: Node<'_, '_>) -> Result<Vec<FilterDescription>, String> {
    let names = chunks.attribute("compressionType").unwrap_or_default();
    let levels = attribute_of(chunks, "deflateLevel").or_else(|| attribute_of(chunks, "deflate_level"));
    let mut levels = levels.unwrap_or_default().split_whitespace();
    let mut out = Vec::new();
    for name in names.split_whitespace() {
        let (id, client_data) = match name {
            // The level only matters to a writer; numcodecs' default where the sidecar gives none.
            "deflate" => (DEFLATE, vec![levels.next().and_then(|l| l.parse().ok()).unwrap_or(1)]),
            "shuffle" => (SHUFFLE, Vec::new()),
            "fletcher32" => (FLETCHER32, Vec::new()),
            other => {
                return Err(format!("the {other} filter (compressionType {names:?}), which zarr v2 has no codec for"));
            }
        };
        out.push(FilterDescription { id, name: None, client_data });
    }
    Ok(out)
}

/// A chunk's file (its own `href`, if it has one), offset and stored size.
fn place(chunk: Node<'_, '_>) -> Result<(Option<String>, u64, u64), String> {
    if dmrpp_child(chunk, "block").is_some() {
        return Err("its chunks are HDF4 linked blocks (dmrpp:block), several ranges each, which a reference \
                    cannot express"
            .to_owned());
    }
    let number = |name: &str| -> Result<u64, String> {
        let text = chunk.attribute(name).ok_or_else(|| format!("a dmrpp:chunk without {name}"))?;
        text.trim().parse().map_err(|_| format!("a dmrpp:chunk's {name} {text:?} is not a size"))
    };
    let (offset, size) = (number("offset")?, number("nBytes")?);
    offset.checked_add(size).ok_or_else(|| format!("a dmrpp:chunk at {offset} of {size} bytes ends past 2^64"))?;
    let href = match attribute_of(chunk, "href") {
        None => None,
        Some(href) if href.contains("://") => Some(href.to_owned()),
        Some(href) => {
            return Err(format!(
                "a chunk's href {href:?} is relative: a path under the Hyrax catalog that made the sidecar, which \
                 it alone does not locate"
            ));
        }
    };
    Ok((href, offset, size))
}

/// Whitespace- or comma-separated sizes.
fn numbers(text: &str) -> Option<Vec<u64>> {
    text.split(|c: char| c == ',' || c.is_whitespace()).filter(|t| !t.is_empty()).map(|t| t.parse().ok()).collect()
}
