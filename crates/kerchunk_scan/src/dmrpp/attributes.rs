//! DAP4 attributes as zarr attributes, typed as the sidecar types them, by the rules the HDF5
//! scanner applies to the same attributes read from the file: netCDF-4 and dimension-scale
//! bookkeeping left out, a numeric `_FillValue` made the fill value, one value as a scalar.

use roxmltree::Node;

use super::{dap_children, value_texts};
use crate::hdf5::attrs::HIDDEN;
use crate::zarr::{AttrValue, FloatValue, float, string};

/// The attributes among `node`'s children, in their order, and for each one left out because
/// it has no JSON form, a sentence saying which and why.
pub(crate) fn transfer(node: Node<'_, '_>, keep_fill_value: bool) -> (Vec<(String, AttrValue)>, Vec<String>) {
    let mut kept = Vec::new();
    let mut left_out = Vec::new();
    for attribute in dap_children(node, "Attribute") {
        let name = attribute.attribute("name").unwrap_or_default();
        if HIDDEN.contains(&name) {
            continue;
        }
        match value(attribute, name, keep_fill_value) {
            Ok(Some(value)) => kept.push((name.to_owned(), value)),
            Ok(None) => {}
            Err(reason) => left_out.push(format!("attribute {name:?} left out: {reason}")),
        }
    }
    (kept, left_out)
}

/// The first value of `node`'s attribute `name`, as text, if it has one.
pub(crate) fn first_value<'a>(node: Node<'a, '_>, name: &str) -> Option<(&'a str, String)> {
    let attribute = dap_children(node, "Attribute").find(|a| a.attribute("name") == Some(name))?;
    let kind = attribute.attribute("type").unwrap_or("String");
    value_texts(attribute).into_iter().next().map(|text| (kind, text))
}

/// One attribute's value, `None` where the HDF5 scanner drops it.
fn value(attribute: Node<'_, '_>, name: &str, keep_fill_value: bool) -> Result<Option<AttrValue>, String> {
    let kind = attribute.attribute("type").unwrap_or("String");
    if kind == "Container" {
        return container(attribute).map(|json| Some(AttrValue::Json(json)));
    }
    let texts = value_texts(attribute);
    match kind {
        "String" | "URL" => {
            if texts.iter().any(|t| t == "DIMENSION_SCALE") {
                return Ok(None);
            }
            Ok(Some(match <[String; 1]>::try_from(texts) {
                Ok([only]) => AttrValue::Text(only),
                Err(texts) if texts.is_empty() => AttrValue::Text(String::new()),
                Err(texts) => AttrValue::Texts(texts),
            }))
        }
        // A numeric `_FillValue` is the array's fill value, not an attribute, unless asked to keep it.
        _ if name == "_FillValue" && !keep_fill_value => Ok(None),
        _ => numbers(kind, &texts).map(Some),
    }
}

/// Values of a numeric DAP4 type as JSON numbers: integers exactly, floats in the shortest
/// form that reads back as their type.
fn numbers(kind: &str, texts: &[String]) -> Result<AttrValue, String> {
    let bad = |text: &str| format!("{text:?} is not a value of type {kind}");
    match kind {
        "Byte" | "Char" | "Int8" | "UInt8" | "Int16" | "UInt16" | "Int32" | "UInt32" | "Int64" | "UInt64" => texts
            .iter()
            .map(|t| t.trim().parse::<i128>().map_err(|_| bad(t)))
            .collect::<Result<Vec<_>, _>>()
            .map(AttrValue::Integers),
        "Float32" => texts
            .iter()
            .map(|t| t.trim().parse::<f32>().map(FloatValue::F32).map_err(|_| bad(t)))
            .collect::<Result<Vec<_>, _>>()
            .map(AttrValue::Floats),
        "Float64" => texts
            .iter()
            .map(|t| t.trim().parse::<f64>().map(FloatValue::F64).map_err(|_| bad(t)))
            .collect::<Result<Vec<_>, _>>()
            .map(AttrValue::Floats),
        other => Err(format!("its type {other}, which has no JSON form here")),
    }
}

/// A container of attributes as a JSON object, its members typed as above.
fn container(node: Node<'_, '_>) -> Result<String, String> {
    let mut out = String::from("{");
    for (i, member) in dap_children(node, "Attribute").enumerate() {
        let name = member.attribute("name").unwrap_or_default();
        let json = match value(member, name, false)? {
            None => continue,
            Some(AttrValue::Text(text)) => string(&text),
            Some(AttrValue::Texts(texts)) => {
                format!("[{}]", texts.iter().map(|t| string(t)).collect::<Vec<_>>().join(","))
            }
            Some(AttrValue::Json(json)) => json,
            Some(AttrValue::Integers(values)) => one_or_list(values.iter().map(i128::to_string).collect()),
            Some(AttrValue::Floats(values)) => one_or_list(
                values
                    .iter()
                    .map(|&f| {
                        let mut text = String::new();
                        float(&mut text, f);
                        text
                    })
                    .collect(),
            ),
        };
        if i > 0 && out.len() > 1 {
            out.push(',');
        }
        out.push_str(&string(name));
        out.push(':');
        out.push_str(&json);
    }
    out.push('}');
    Ok(out)
}

fn one_or_list(items: Vec<String>) -> String {
    match <[String; 1]>::try_from(items) {
        Ok([only]) => only,
        Err(items) => format!("[{}]", items.join(",")),
    }
}
