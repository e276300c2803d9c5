//! NetCDF-3 files (classic, 64-bit offset, CDF-5) into references, laid out
//! as kerchunk's `NetCDF3ToZarr` lays them out: a fixed variable is one chunk,
//! one range; a record variable is a chunk per record along the unlimited
//! dimension, each a range at the record stride. Only the header is read,
//! and the bytes of arrays small enough to inline.

use kerchunk::{ReferenceSet, ReferenceSetBuilder};
use netcdf_reader::classic::data::compute_record_stride;
use netcdf_reader::classic::header::{ClassicHeader, parse_header};
use netcdf_reader::{NcAttrValue, NcAttribute, NcFormat, NcType, NcVariable};

use crate::error::ScanError;
use crate::options::ScanOptions;
use crate::read::BlockReader;
use crate::zarr::{AttrValue, Fill, FloatValue, zarray, zattrs};

/// `numrecs` of a file written while streaming: the count is not in the header.
const STREAMING: u32 = u32::MAX;

/// kerchunk's `NetCDF3ToZarr` default `inline_threshold`.
const NETCDF3_INLINE_THRESHOLD: u64 = 100;

/// The references of the NetCDF-3 file `reader` reads, naming it `url`.
pub(crate) async fn scan(
    reader: &mut BlockReader<'_>,
    url: &str,
    options: &ScanOptions,
) -> Result<ReferenceSet, ScanError> {
    let (header, format, streaming) = read_header(reader, url, options.max_header_bytes).await?;
    let size = reader.size();
    let invalid = |variable: &NcVariable, reason: String| ScanError::Variable {
        url: url.to_owned(),
        variable: variable.name.clone(),
        reason,
    };
    let stride = compute_record_stride(&header.variables).map_err(|source| header_error(url, source))?;
    let numrecs = if streaming {
        // The records run to the end of the file.
        let first = header.variables.iter().filter(|v| v.is_record_var).map(|v| v.data_offset).min();
        match first {
            Some(first) if stride > 0 => size.saturating_sub(first) / stride,
            _ => 0,
        }
    } else {
        header.numrecs
    };
    let mut builder = ReferenceSetBuilder::new();
    let mut references = 0u64;
    builder.insert_inline(".zgroup", br#"{"zarr_format":2}"#);
    builder.insert_inline(".zattrs", zattrs(&attributes(&header.global_attributes, &[])).as_bytes());
    for variable in &header.variables {
        let (dtype, item) = dtype(&variable.dtype, format)
            .ok_or_else(|| invalid(variable, format!("type {:?} is not a NetCDF-3 type", variable.dtype)))?;
        let mut shape: Vec<u64> = variable.dimensions.iter().map(|d| d.size).collect();
        if variable.is_record_var
            && let Some(records) = shape.first_mut()
        {
            *records = numrecs;
        }
        let inner = if variable.is_record_var { &shape[1..] } else { &shape[..] };
        let piece = inner
            .iter()
            .try_fold(item, |n, &d| n.checked_mul(d))
            .ok_or_else(|| invalid(variable, "its size exceeds 2^64 bytes".into()))?;
        // Where each chunk lies: the whole variable, or one record each. The
        // last one is checked against the file before any is listed, and an
        // empty variable has none: the header's counts are not trusted.
        let count = match (piece, variable.is_record_var) {
            (0, _) => 0,
            (_, true) => numrecs,
            (_, false) => 1,
        };
        if count > 0 {
            let end = (count - 1)
                .checked_mul(if variable.is_record_var { stride } else { 0 })
                .and_then(|last| last.checked_add(variable.data_offset))
                .and_then(|last| last.checked_add(piece));
            if end.is_none_or(|end| end > size) {
                return Err(invalid(
                    variable,
                    format!(
                        "its data ends past the end of the file ({size} bytes): the file is truncated or the header is wrong"
                    ),
                ));
            }
        }
        options.count_references(&mut references, count, url, &variable.name)?;
        let pieces = (0..count).map(|i| variable.data_offset + i * stride);
        let chunks: Vec<u64> =
            if variable.is_record_var { [1].iter().chain(inner).copied().collect() } else { shape.clone() };
        let fill = fill_value(variable);
        let dims: Vec<String> = variable.dimensions.iter().map(|d| d.name.clone()).collect();
        let skip: &[&str] = if options.fill_value_attribute { &[] } else { &["_FillValue"] };
        let mut attrs = attributes(&variable.attributes, skip);
        attrs.push(("_ARRAY_DIMENSIONS".to_owned(), AttrValue::Texts(dims)));
        let name = &variable.name;
        builder.insert_inline(&format!("{name}/.zattrs"), zattrs(&attrs).as_bytes());
        let total = piece.saturating_mul(count);
        let inline = total < options.inline_threshold.unwrap_or(NETCDF3_INLINE_THRESHOLD)
            || options.inline_variables.contains(name);
        if total > 0 && inline {
            // Small enough to hold in the references: one chunk, the whole array.
            let ranges: Vec<std::ops::Range<u64>> = pieces.map(|offset| offset..offset + piece).collect();
            let bytes: Vec<u8> = reader.read_exact_ranges(&ranges).await?.concat();
            builder.insert_inline(&format!("{name}/.zarray"), zarray(&shape, &shape, dtype, &fill).as_bytes());
            builder.insert_inline(&chunk_key(name, shape.len(), 0), &bytes);
            continue;
        }
        builder.insert_inline(&format!("{name}/.zarray"), zarray(&shape, &chunks, dtype, &fill).as_bytes());
        for (i, offset) in pieces.enumerate() {
            builder.insert_range(&chunk_key(name, shape.len(), i as u64), Some(url), offset, piece);
        }
    }
    Ok(builder.build())
}

/// Read the header, in larger reads until it parses, within `max` bytes.
async fn read_header(
    reader: &mut BlockReader<'_>,
    url: &str,
    max: u64,
) -> Result<(ClassicHeader, NcFormat, bool), ScanError> {
    let size = reader.size();
    let first = reader.read(0..size.min(8)).await?;
    let format = match first.get(..4) {
        Some([b'C', b'D', b'F', 1]) => NcFormat::Classic,
        Some([b'C', b'D', b'F', 2]) => NcFormat::Offset64,
        Some([b'C', b'D', b'F', 5]) => NcFormat::Cdf5,
        Some(b"\x89HDF") => return Err(not_netcdf3(url, "an HDF5 file (NetCDF-4 is HDF5)")),
        Some(magic) => {
            return Err(not_netcdf3(url, &format!("it starts with \"{}\", not CDF 1, 2 or 5", magic.escape_ascii())));
        }
        None => return Err(not_netcdf3(url, &format!("it has {size} bytes"))),
    };
    let streaming = format != NcFormat::Cdf5 && first.get(4..8) == Some(&STREAMING.to_be_bytes()[..]);
    // The header's length is known only once it is parsed, and a header cut
    // short may fail as malformed rather than as short (a count larger than
    // the bytes left): read more until it parses, or until there is no more.
    let mut len = size.min(max).min(64 << 10);
    loop {
        let bytes = reader.read(0..len).await?;
        match parse_header(&bytes, format) {
            Ok(header) => return Ok((header, format, streaming)),
            Err(source) if len < size.min(max) => {
                let want = match source {
                    netcdf_reader::Error::UnexpectedEof { offset, needed, .. } => offset.saturating_add(needed),
                    _ => 0,
                };
                len = want.max(len.saturating_mul(2)).min(size).min(max);
            }
            Err(_) if len < size => return Err(ScanError::HeaderTooLarge { url: url.to_owned(), limit: max }),
            Err(source) => return Err(header_error(url, source)),
        }
    }
}

/// The numpy dtype of a NetCDF-3 type (always big-endian) and its size.
fn dtype(nc: &NcType, format: NcFormat) -> Option<(&'static str, u64)> {
    let cdf5 = format == NcFormat::Cdf5;
    Some(match nc {
        NcType::Byte => ("|i1", 1),
        NcType::Char => ("|S1", 1),
        NcType::Short => (">i2", 2),
        NcType::Int => (">i4", 4),
        NcType::Float => (">f4", 4),
        NcType::Double => (">f8", 8),
        NcType::UByte if cdf5 => ("|u1", 1),
        NcType::UShort if cdf5 => (">u2", 2),
        NcType::UInt if cdf5 => (">u4", 4),
        NcType::Int64 if cdf5 => (">i8", 8),
        NcType::UInt64 if cdf5 => (">u8", 8),
        _ => return None,
    })
}

/// The zarr fill value: the variable's `_FillValue`, in its type; `null` without one.
fn fill_value(variable: &NcVariable) -> Fill {
    let Some(attribute) = variable.attributes.iter().find(|a| a.name == "_FillValue") else { return Fill::Null };
    let float = matches!(variable.dtype, NcType::Float | NcType::Double);
    match &attribute.value {
        NcAttrValue::Chars(text) => Fill::Bytes(text.as_bytes().iter().copied().take(1).collect()),
        NcAttrValue::Floats(v) if float => v.first().map_or(Fill::Null, |f| Fill::Float(f64::from(*f))),
        NcAttrValue::Doubles(v) if float => v.first().map_or(Fill::Null, |f| Fill::Float(*f)),
        value => match integers(value).and_then(|v| v.first().copied()) {
            Some(n) if float =>
            {
                #[expect(clippy::cast_precision_loss, reason = "a fill value of a float variable given as an integer")]
                Fill::Float(n as f64)
            }
            Some(n) => Fill::Integer(n),
            None => Fill::Null,
        },
    }
}

/// Attributes as JSON values, in header order, without those named in `skip`.
fn attributes(attributes: &[NcAttribute], skip: &[&str]) -> Vec<(String, AttrValue)> {
    attributes
        .iter()
        .filter(|a| !skip.contains(&a.name.as_str()))
        .filter_map(|a| {
            let value = match &a.value {
                NcAttrValue::Chars(text) => AttrValue::Text(text.clone()),
                NcAttrValue::Strings(texts) => AttrValue::Texts(texts.clone()),
                NcAttrValue::Floats(v) => AttrValue::Floats(v.iter().map(|f| FloatValue::F32(*f)).collect()),
                NcAttrValue::Doubles(v) => AttrValue::Floats(v.iter().map(|f| FloatValue::F64(*f)).collect()),
                other => AttrValue::Integers(integers(other)?),
            };
            Some((a.name.clone(), value))
        })
        .collect()
}

/// The values of an integer attribute, widened.
fn integers(value: &NcAttrValue) -> Option<Vec<i128>> {
    Some(match value {
        NcAttrValue::Bytes(v) => v.iter().map(|&n| i128::from(n)).collect(),
        NcAttrValue::Shorts(v) => v.iter().map(|&n| i128::from(n)).collect(),
        NcAttrValue::Ints(v) => v.iter().map(|&n| i128::from(n)).collect(),
        NcAttrValue::UBytes(v) => v.iter().map(|&n| i128::from(n)).collect(),
        NcAttrValue::UShorts(v) => v.iter().map(|&n| i128::from(n)).collect(),
        NcAttrValue::UInts(v) => v.iter().map(|&n| i128::from(n)).collect(),
        NcAttrValue::Int64s(v) => v.iter().map(|&n| i128::from(n)).collect(),
        NcAttrValue::UInt64s(v) => v.iter().map(|&n| i128::from(n)).collect(),
        _ => return None,
    })
}

/// The key of chunk `index` along the first dimension of an `ndim`-dimensional array.
fn chunk_key(name: &str, ndim: usize, index: u64) -> String {
    let mut key = format!("{name}/{index}");
    for _ in 1..ndim {
        key.push_str(".0");
    }
    key
}

fn not_netcdf3(url: &str, reason: &str) -> ScanError {
    ScanError::NotNetcdf3 { url: url.to_owned(), reason: reason.to_owned() }
}

fn header_error(url: &str, source: netcdf_reader::Error) -> ScanError {
    ScanError::Header { url: url.to_owned(), source }
}
