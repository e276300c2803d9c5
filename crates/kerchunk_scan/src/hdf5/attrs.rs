//! HDF5 attributes as zarr attributes, by kerchunk's rules: its hidden
//! netCDF-4 and dimension-scale bookkeeping left out, one-element arrays as
//! scalars, an empty fixed-length string as a space.

use hdf5_reader::messages::datatype::StringSize;
use hdf5_reader::{Attribute, Datatype};

use super::dtype::{Kind, dtype, float_at, int_at};
use crate::zarr::{AttrValue, FloatValue, float, string};

/// Attributes kerchunk leaves out: HDF5 dimension-scale and netCDF-4
/// bookkeeping, which the zarr side expresses as `_ARRAY_DIMENSIONS`.
pub(crate) const HIDDEN: [&str; 8] = [
    "REFERENCE_LIST",
    "CLASS",
    "DIMENSION_LIST",
    "NAME",
    "_Netcdf4Dimid",
    "_Netcdf4Coordinates",
    "_nc3_strict",
    "_NCProperties",
];

/// `attributes` as zarr attributes, in their order, and for each one left
/// out because it has no JSON form, a sentence saying which and why.
pub(crate) fn transfer(attributes: &[Attribute], keep_fill_value: bool) -> (Vec<(String, AttrValue)>, Vec<String>) {
    let mut kept = Vec::new();
    let mut left_out = Vec::new();
    for attribute in attributes {
        if HIDDEN.contains(&attribute.name.as_str()) {
            continue;
        }
        match value(attribute, keep_fill_value) {
            Ok(Some(value)) => kept.push((attribute.name.clone(), value)),
            Ok(None) => {}
            Err(reason) => left_out.push(format!("attribute {:?} left out: {reason}", attribute.name)),
        }
    }
    (kept, left_out)
}

/// Whether `attributes` mark a dimension scale (`CLASS = "DIMENSION_SCALE"`).
pub(crate) fn is_dimension_scale(attributes: &[Attribute]) -> bool {
    attributes.iter().any(|a| a.name == "CLASS" && a.read_string().is_ok_and(|s| s == "DIMENSION_SCALE"))
}

/// The value of one attribute, `None` where kerchunk drops it.
fn value(attribute: &Attribute, keep_fill_value: bool) -> Result<Option<AttrValue>, String> {
    // A null dataspace (h5py's Empty) is the empty string.
    if attribute.shape == [0] && attribute.raw_data.is_empty() {
        return Ok(Some(AttrValue::Text(String::new())));
    }
    let texts = match &attribute.datatype {
        Datatype::String { size: StringSize::Fixed(_), .. } => Some((attribute.read_strings(), true)),
        Datatype::String { size: StringSize::Variable, .. } | Datatype::VarLen { .. }
            if attribute.decoded_strings.is_some() =>
        {
            Some((attribute.read_strings(), false))
        }
        _ => None,
    };
    if let Some((texts, fixed)) = texts {
        let mut texts = texts.map_err(|e| e.to_string())?;
        // h5py gives fixed-length strings as bytes, which kerchunk decodes
        // and then writes a space for an empty one.
        if fixed {
            texts.iter_mut().filter(|t| t.is_empty()).for_each(|t| t.push(' '));
        }
        if texts.iter().any(|t| t == "DIMENSION_SCALE") {
            return Ok(None);
        }
        return Ok(Some(match <[String; 1]>::try_from(texts) {
            Ok([only]) => AttrValue::Text(only),
            Err(texts) => AttrValue::Texts(texts),
        }));
    }
    // A numeric `_FillValue` is the array's fill value, not an attribute
    // (a textual one, on netCDF characters, stays: kerchunk keeps it), unless asked to keep it.
    if attribute.name == "_FillValue" && !keep_fill_value {
        return Ok(None);
    }
    let element = dtype(&attribute.datatype).map_err(|reason| format!("its type: {reason}"))?;
    let itemsize = usize::try_from(element.itemsize).unwrap_or(usize::MAX);
    if itemsize == 0 || !attribute.raw_data.len().is_multiple_of(itemsize) {
        return Err(format!("{} bytes of values of {itemsize} bytes", attribute.raw_data.len()));
    }
    let items: Vec<String> = attribute.raw_data.chunks(itemsize).map(|bytes| item(element.kind, bytes)).collect();
    let json = if attribute.shape.len() <= 1 && items.len() == 1 {
        items.into_iter().next().unwrap_or_default()
    } else {
        nested(&items, &attribute.shape)
    };
    Ok(Some(AttrValue::Json(json)))
}

/// One value as JSON.
fn item(kind: Kind, bytes: &[u8]) -> String {
    let mut out = String::new();
    match kind {
        Kind::Int { signed, order, .. } => out = int_at(bytes, signed, order).to_string(),
        Kind::Float { size: 4, order } => {
            #[expect(clippy::cast_possible_truncation, reason = "a value read from 4 bytes")]
            float(&mut out, FloatValue::F32(float_at(bytes, order) as f32));
        }
        Kind::Float { order, .. } => float(&mut out, FloatValue::F64(float_at(bytes, order))),
        Kind::Bool => out = (bytes.iter().any(|&b| b != 0)).to_string(),
        Kind::Complex { size, order } => {
            // JSON has no complex numbers; kerchunk writes Python's text of one.
            let (re, im) = bytes.split_at(usize::from(size));
            let (re, im) = (float_at(re, order), float_at(im, order));
            out = string(&format!("({re}{}{}j)", if im < 0.0 { '-' } else { '+' }, im.abs()));
        }
        Kind::Bytes(_) | Kind::VlenString => out = string(&String::from_utf8_lossy(bytes)),
    }
    out
}

/// `items` as nested JSON lists of `shape` (row-major).
fn nested(items: &[String], shape: &[u64]) -> String {
    match shape {
        [] | [_] => format!("[{}]", items.join(",")),
        [first, ..] => {
            let rows = usize::try_from(*first).unwrap_or(1).max(1);
            let per_row = items.len() / rows;
            let parts: Vec<String> = items.chunks(per_row.max(1)).map(|row| nested(row, &shape[1..])).collect();
            format!("[{}]", parts.join(","))
        }
    }
}
