//! The attributes that change what a stored value decodes to. Combining takes
//! an array's `.zattrs` from one file, so these must be the same in every file
//! whose chunks it holds: concatenated under the first file's `scale_factor`,
//! a later file packed with another decodes silently wrong (kerchunk #586,
//! `VirtualiZarr` #1004).

use serde_json::Value;

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
