//! numcodecs' `fixedscaleoffset` as zarrs reads it: the array's dtype is what
//! the filter decodes to, and the stored bytes' byte order is the array
//! dtype's (zarrs' bytes codec takes it from there, not from `astype`).
//!
//! kerchunk's FITS scanner writes BSCALE/BZERO images as an array of the
//! stored type (`>i2`) with a filter that decodes them to `<f8`:
//! numcodecs returns float64 from the filter whatever the array says, and
//! zarrs refuses the pair. Big-endian `astype` under a little-endian array
//! dtype is read by zarrs in the wrong byte order, silently.
//!
//! kerchunk 0.2.10 also writes FITS' BSCALE as numcodecs' `scale`, by which
//! numcodecs divides (`stored / scale + offset`), where FITS multiplies
//! (`stored * BSCALE + BZERO`). No reader ever read those arrays (zarr-python
//! 2 and 3 both fail on the dtype), and kerchunk's FITS scanner is the only
//! writer of a filter whose `dtype` is not its array's: there, `scale`
//! becomes `1 / scale`, so the values are the file's (astropy's).

use serde_json::{Map, Value};

/// A numpy dtype string's byte order and the rest (`>i2` → `('>', "i2")`).
fn split_order(dtype: &str) -> (Option<char>, &str) {
    match dtype.chars().next() {
        Some(order @ ('<' | '>' | '|' | '=')) => (Some(order), &dtype[1..]),
        _ => (None, dtype),
    }
}

/// `dtype`'s item size in bytes, if it says (`<f8`: 8).
fn item_size(dtype: &str) -> Option<usize> {
    split_order(dtype).1.get(1..)?.parse().ok()
}

/// An array whose one filter is `fixedscaleoffset`, served so that every
/// decoder reads it as numcodecs does:
/// - the array's dtype is the filter's `dtype` (what it decodes to; kerchunk's
///   FITS images say the stored type instead), if the array's is the
///   filter's `dtype` or `astype`;
/// - both in `astype`'s byte order, when it has one: zarrs' own codec reads
///   the stored bytes in the array's byte order, and this workspace's
///   (`zarrs_kerchunk_codecs`) writes the decoded ones in the filter's
///   `dtype`'s, which zarrs then reads in the array's.
///
/// A decoded value's byte order does not change it: the values are the same.
pub(super) fn decoded_type(meta: &mut Map<String, Value>) -> bool {
    let fits = fits_scale(meta);
    let Some(array) = meta.get("dtype").and_then(Value::as_str).map(str::to_owned) else { return fits };
    let Some(Value::Array(filters)) = meta.get_mut("filters") else { return fits };
    let [Value::Object(filter)] = filters.as_mut_slice() else { return fits };
    let text = |key: &str| filter.get(key).and_then(Value::as_str).map(str::to_owned);
    let (Some("fixedscaleoffset"), Some(decoded), Some(stored)) =
        (filter.get("id").and_then(Value::as_str), text("dtype"), text("astype").or_else(|| text("dtype")))
    else {
        return fits;
    };
    let body = split_order(&decoded).1;
    if split_order(&array).1 != body && split_order(&array).1 != split_order(&stored).1 {
        return fits; // neither type is the array's: zarrs reports it
    }
    let order = match split_order(&stored) {
        (Some(order @ ('<' | '>')), _) if item_size(&stored).is_some_and(|size| size > 1) => order.to_string(),
        _ => split_order(&decoded).0.map(String::from).unwrap_or_default(),
    };
    let served = if item_size(&decoded).is_some_and(|size| size > 1) { format!("{order}{body}") } else { decoded };
    if served == array && text("dtype").as_deref() == Some(served.as_str()) {
        return fits;
    }
    filter.insert("dtype".into(), Value::from(served.clone()));
    meta.insert("dtype".into(), Value::from(served));
    true
}

/// kerchunk's FITS filter (the first, decoding to a `dtype` that is not the
/// array's, stored as the array's): its `scale`, FITS' BSCALE, inverted.
fn fits_scale(meta: &mut Map<String, Value>) -> bool {
    let array = meta.get("dtype").and_then(Value::as_str).map(|d| split_order(d).1.to_owned());
    let Some(Value::Array(filters)) = meta.get_mut("filters") else { return false };
    let Some(Value::Object(filter)) = filters.first_mut() else { return false };
    let text = |key: &str| filter.get(key).and_then(Value::as_str).map(|d| split_order(d).1.to_owned());
    let is_fits = filter.get("id").and_then(Value::as_str) == Some("fixedscaleoffset")
        && text("astype").is_some_and(|stored| Some(stored) == array)
        && text("dtype").is_some_and(|decoded| Some(decoded) != array);
    match filter.get("scale").and_then(Value::as_f64) {
        Some(scale) if is_fits && scale.is_normal() && (1.0 / scale).to_bits() != scale.to_bits() => {
            filter.insert("scale".into(), Value::from(1.0 / scale));
            true
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    fn filter(dtype: &str, astype: &str) -> Value {
        json!({"id": "fixedscaleoffset", "scale": 1.0, "offset": 32768.0, "dtype": dtype, "astype": astype})
    }

    #[test]
    fn fits_images_take_the_decoded_type_in_the_stored_order() {
        // kerchunk.fits: a >i2 array whose filter decodes to <f8.
        let mut meta = json!({"dtype": ">i2", "filters": [filter("<f8", ">i2")]});
        assert!(super::decoded_type(meta.as_object_mut().unwrap()));
        assert_eq!((&meta["dtype"], &meta["filters"][0]["dtype"]), (&json!(">f8"), &json!(">f8")));
    }

    #[test]
    fn fits_bscale_multiplies() {
        let mut meta = json!({"dtype": ">i2", "filters": [{"id": "fixedscaleoffset", "scale": 0.25, "offset": 100.0, "dtype": "<f8", "astype": ">i2"}]});
        assert!(super::decoded_type(meta.as_object_mut().unwrap()));
        assert_eq!(meta["filters"][0]["scale"], json!(4.0));
        // A filter whose dtype is the array's is numcodecs' own: its scale divides.
        let mut meta = json!({"dtype": "<f8", "filters": [{"id": "fixedscaleoffset", "scale": 0.25, "offset": 0.0, "dtype": "<f8", "astype": "<i2"}]});
        assert!(!super::decoded_type(meta.as_object_mut().unwrap()));
        assert_eq!(meta["filters"][0]["scale"], json!(0.25));
    }

    #[test]
    fn stored_byte_order_is_served() {
        let mut meta = json!({"dtype": "<f8", "filters": [filter("<f8", ">i4")]});
        assert!(super::decoded_type(meta.as_object_mut().unwrap()));
        assert_eq!((&meta["dtype"], &meta["filters"][0]["dtype"]), (&json!(">f8"), &json!(">f8")));
    }

    #[test]
    fn agreeing_metadata_is_left_alone() {
        for meta in [
            json!({"dtype": "<f8", "filters": [filter("<f8", "<i2")]}),
            // One-byte stored values have no byte order.
            json!({"dtype": "<f8", "filters": [filter("<f8", "|u1")]}),
            json!({"dtype": "<f8", "filters": null}),
            json!({"dtype": "<f8", "filters": [{"id": "shuffle"}]}),
            // Neither the decoded nor the stored type is the array's: zarrs reports it.
            json!({"dtype": "<i8", "filters": [filter("<f8", "<i2")]}),
        ] {
            let mut doc = meta.clone();
            assert!(!super::decoded_type(doc.as_object_mut().unwrap()), "{meta}");
        }
    }
}
