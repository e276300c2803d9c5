//! The attributes that change what a stored value decodes to. Combining takes
//! an array's `.zattrs` from one file, so these must be the same in every file
//! whose chunks it holds: concatenated under the first file's `scale_factor`,
//! a later file packed with another decodes silently wrong (kerchunk #586,
//! `VirtualiZarr` #1004).

use std::collections::BTreeMap;

use kerchunk::ReferenceSet;
use serde_json::Value;

use super::{attributes, zarray};

/// What xarray's CF decoding (and [`zarrs_cf`]) reads to turn a stored value
/// into the value it means: packing (`scale_factor`, `add_offset`), masks
/// (`_FillValue`, `missing_value`, the valid range, which `zarrs_cf` masks
/// with), signedness (`_Unsigned`), units and calendars (dates and time
/// deltas, and what any number is a number of), and the types xarray restores
/// (`dtype`: `bool` kept as int8; `_Encoding`: text kept as bytes).
pub(super) const DECODING_ATTRIBUTES: [&str; 12] = [
    "scale_factor",
    "add_offset",
    "_FillValue",
    "missing_value",
    "valid_min",
    "valid_max",
    "valid_range",
    "_Unsigned",
    "units",
    "calendar",
    "dtype",
    "_Encoding",
];

/// The first of [`DECODING_ATTRIBUTES`] (but those in `skip`) whose value in
/// `ours` (an array's `.zattrs`, if it has one) differs from that in `theirs`:
/// its name and both values as messages show them. An attribute one file has
/// and another lacks differs; a list of one value is that value (kerchunk
/// writes HDF5's attributes of one element either way).
pub(super) fn differing_encoding(
    ours: Option<&Value>,
    theirs: Option<&Value>,
    skip: &[&str],
) -> Option<(&'static str, String, String)> {
    let get = |attrs: Option<&Value>, name: &str| match attrs.and_then(|attrs| attrs.get(name)) {
        Some(Value::Array(values)) if values.len() == 1 => Some(values[0].clone()),
        other => other.cloned(),
    };
    let describe = |value: Option<Value>| value.map_or_else(|| "(none)".to_owned(), |value| value.to_string());
    DECODING_ATTRIBUTES.into_iter().filter(|name| !skip.contains(name)).find_map(|name| {
        let (a, b) = (get(ours, name), get(theirs, name));
        (a != b).then(|| (name, describe(a), describe(b)))
    })
}

/// The attributes that decide what the stored values of the array at `path` of `set` decode
/// to, as xarray reads them: each it has of `scale_factor`, `add_offset`, `_FillValue`,
/// `missing_value`, `valid_min`, `valid_max`, `valid_range`, `_Unsigned`, `units`, `calendar`,
/// `dtype` and `_Encoding` (a list of one value as that value); `_FillValue` from its `.zarray`'s fill value where the attribute is absent
/// (kerchunk and our scans keep it there); and, for the `bounds` of the coordinate of one of
/// its dimensions, without units of their own, that coordinate's `units` and `calendar` (CF
/// 7.1, as xarray gives them). Empty where the array has no `.zarray` that is inline JSON.
///
/// Two sets describe the same stored values alike where these are equal: an audit compares
/// a combined set's with each target file's own.
#[must_use]
pub fn decoding_attributes(set: &ReferenceSet, path: &str) -> BTreeMap<String, Value> {
    let mut found = BTreeMap::new();
    let Some(meta) = zarray(set, path) else { return found };
    let attrs = attributes(set, path).filter(Value::is_object).unwrap_or_default();
    for name in DECODING_ATTRIBUTES {
        match attrs.get(name) {
            Some(Value::Array(values)) if values.len() == 1 => found.insert(name.to_owned(), values[0].clone()),
            Some(value) => found.insert(name.to_owned(), value.clone()),
            None => None,
        };
    }
    if !found.contains_key("_FillValue") && !meta["fill_value"].is_null() {
        found.insert("_FillValue".into(), meta["fill_value"].clone());
    }
    if !found.contains_key("units") {
        let (group, name) = path.rsplit_once('/').map_or(("", path), |(group, name)| (group, name));
        let dimensions = attrs.get("_ARRAY_DIMENSIONS").and_then(Value::as_array).cloned().unwrap_or_default();
        for dimension in dimensions.iter().filter_map(Value::as_str).filter(|d| *d != name) {
            let coordinate = if group.is_empty() { dimension.to_owned() } else { format!("{group}/{dimension}") };
            let Some(theirs) = attributes(set, &coordinate) else { continue };
            if theirs.get("bounds").and_then(Value::as_str) == Some(name) {
                for inherited in ["units", "calendar"] {
                    if let Some(value) = theirs.get(inherited).filter(|_| !found.contains_key(inherited)) {
                        found.insert(inherited.to_owned(), value.clone());
                    }
                }
                break;
            }
        }
    }
    found
}

/// The reason an error gives for `differing_encoding`'s answer: the attribute
/// and both files' values.
pub(super) fn encoding_reason((name, ours, theirs): (&str, String, String), first: &str) -> String {
    format!(
        "its {name} {ours} differs from {first}'s {theirs}: the combined set keeps one file's attributes, under \
         which the other's values would decode wrong"
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn every_decoding_attribute_is_compared() {
        for name in DECODING_ATTRIBUTES {
            let a = json!({ name: 1, "history": "a" });
            let b = json!({ name: 2, "history": "b" });
            let found = differing_encoding(Some(&a), Some(&b), &[]);
            assert_eq!(found, Some((name, "1".to_owned(), "2".to_owned())));
            assert_eq!(differing_encoding(Some(&a), Some(&b), &[name]), None, "{name} skipped");
            let lacking = differing_encoding(Some(&a), None, &[]);
            assert_eq!(lacking, Some((name, "1".to_owned(), "(none)".to_owned())));
        }
        // Attributes that change no value are not compared.
        let a = json!({"history": "a", "title": "x", "scale_factor": [0.5]});
        let b = json!({"history": "b", "title": "y", "scale_factor": 0.5});
        assert_eq!(differing_encoding(Some(&a), Some(&b), &[]), None);
    }
}
