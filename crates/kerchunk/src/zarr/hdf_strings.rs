//! kerchunk's `fill_hdf_strings` arrays as zarrs reads them: text.
//!
//! kerchunk's HDF5 scanner (with zarr-python 2) writes an HDF5 variable-length
//! string dataset as an object array (`|O`) whose one filter, `fill_hdf_strings`,
//! turns the chunk's 16-byte heap ids into Python objects: the strings its
//! `id_map` gives (`vlen_encode="encode"`), or none (`"null"`). zarrs has no
//! object type; it reads `|O` as text through numcodecs' `vlen-utf8`. Served
//! with `vlen-utf8` before the filter, the filter (`zarrs_kerchunk_codecs`)
//! decodes the ids into `vlen-utf8`'s bytes, which zarrs then reads as text.

use serde_json::{Map, Value};

/// `|O` whose only filter is `fill_hdf_strings` → `vlen-utf8` then that filter.
pub(super) fn as_text(meta: &mut Map<String, Value>) -> bool {
    if meta.get("dtype").and_then(Value::as_str) != Some("|O") {
        return false;
    }
    let Some(Value::Array(filters)) = meta.get_mut("filters") else { return false };
    if filters.len() != 1 || filters[0].get("id").and_then(Value::as_str) != Some("fill_hdf_strings") {
        return false;
    }
    filters.insert(0, serde_json::json!({"id": "vlen-utf8"}));
    true
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    #[test]
    fn object_arrays_of_heap_ids_become_text() {
        let filter = json!({"id": "fill_hdf_strings", "dtype": "S16", "id_map": null});
        let mut meta = json!({"dtype": "|O", "filters": [filter.clone()]});
        assert!(super::as_text(meta.as_object_mut().unwrap()));
        assert_eq!(meta["filters"], json!([{"id": "vlen-utf8"}, filter]));
        // Anything else is left to zarrs.
        for other in
            [json!({"dtype": "|O", "filters": [{"id": "vlen-utf8"}]}), json!({"dtype": "<f8", "filters": [filter]})]
        {
            let mut doc = other.clone();
            assert!(!super::as_text(doc.as_object_mut().unwrap()), "{other}");
        }
    }
}
