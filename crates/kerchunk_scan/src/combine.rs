//! Many files' references into one set, concatenated along one dimension,
//! as kerchunk's `MultiZarrToZarr` does in its common case (`concat_dims`
//! one dimension, every other array identical across files).
//!
//! Each input must hold its coordinate along the dimension inline (a scan
//! with [`ScanOptions::with_inlined_variables`](crate::ScanOptions::with_inlined_variables)
//! does): its values order the files and become the combined coordinate.

use kerchunk::{Reference, ReferenceSet, ReferenceSetBuilder};
use serde_json::Value;

use crate::error::ScanError;

/// One input: the references of one file, and the name errors give it.
pub(crate) struct Input {
    pub(crate) name: String,
    pub(crate) references: ReferenceSet,
}

/// Combine `inputs` along `dimension`: the arrays that have it are
/// concatenated along it (chunk keys renumbered), in the order of the files'
/// first coordinate values; the others, and every group's metadata, come
/// from the first file.
pub(crate) fn combine(inputs: Vec<Input>, dimension: &str) -> Result<ReferenceSet, ScanError> {
    let (inputs, coordinates) = ordered(inputs, dimension)?;
    let Some(first) = inputs.first() else { return Ok(ReferenceSetBuilder::new().build()) };
    let mut builder = ReferenceSetBuilder::new();
    let arrays = array_paths(&first.references);
    // Everything that is not an array concatenated along the dimension: from the first file.
    let concatenated: Vec<(String, usize)> = arrays
        .iter()
        .filter(|path| path.as_str() != dimension)
        .filter_map(|path| axis(&first.references, path, dimension).map(|axis| (path.clone(), axis)))
        .collect();
    for (key, reference) in first.references.iter() {
        let owner =
            concatenated.iter().any(|(path, _)| key.strip_prefix(path.as_str()).is_some_and(|r| r.starts_with('/')));
        let coordinate = key.strip_prefix(dimension).is_some_and(|r| r.starts_with('/'));
        if !owner && !coordinate {
            builder.insert_reference(&key, reference);
        }
    }
    // The coordinate: every file's values, in one inline chunk.
    let mut meta = zarray(&first.references, dimension).expect("checked above");
    let values: Vec<u8> = coordinates.iter().flat_map(|(_, _, bytes)| bytes.iter().copied()).collect();
    let item = item_size(&coordinates[0].1).filter(|&n| n > 0).unwrap_or(1);
    let total = (values.len() / item) as u64;
    meta["shape"] = Value::from(vec![total]);
    meta["chunks"] = Value::from(vec![total]);
    builder.insert_inline(&format!("{dimension}/.zarray"), meta.to_string().as_bytes());
    if let Some(Reference::Inline(attrs)) = first.references.get(&format!("{dimension}/.zattrs")) {
        builder.insert_inline(&format!("{dimension}/.zattrs"), attrs);
    }
    builder.insert_inline(&chunk_key(dimension, 1, 0), &values);

    for (path, axis) in &concatenated {
        concatenate(&mut builder, &inputs, path, *axis, dimension)?;
    }
    Ok(builder.build())
}

/// Concatenate the array at `path` of every input along its axis `axis`
/// (the dimension's): check each file's metadata against the first's, and
/// renumber its chunk keys along the axis.
fn concatenate(
    builder: &mut ReferenceSetBuilder,
    inputs: &[Input],
    path: &str,
    axis: usize,
    dimension: &str,
) -> Result<(), ScanError> {
    let error = combine_error;
    let first = &inputs[0];
    // The metadata must be JSON with a shape and chunks that reach the axis its
    // `_ARRAY_DIMENSIONS` name: references may come from anywhere.
    let usable = |meta: Option<Value>, name: &str| {
        let reaches = |field: &str, meta: &Value| meta[field].as_array().is_some_and(|v| v.len() > axis);
        match meta {
            Some(meta) if reaches("shape", &meta) && reaches("chunks", &meta) => Ok(meta),
            Some(meta) => Err(error(
                name,
                path,
                format!(
                    "its shape {} or chunks {} have no axis {axis}, where {dimension} is",
                    meta["shape"], meta["chunks"]
                ),
            )),
            None => Err(error(name, path, "no .zarray that is inline JSON".into())),
        }
    };
    let mut meta = usable(zarray(&first.references, path), &first.name)?;
    let chunk = meta["chunks"][axis].as_u64().filter(|&c| c > 0).unwrap_or(1);
    let ndim = meta["shape"].as_array().map_or(0, Vec::len);
    let mut offset = 0u64;
    for (i, input) in inputs.iter().enumerate() {
        let theirs = usable(zarray(&input.references, path), &input.name)?;
        for field in ["dtype", "chunks", "fill_value", "compressor", "filters", "order"] {
            if theirs[field] != meta[field] {
                return Err(error(
                    &input.name,
                    path,
                    format!("its {field} {} differs from {}'s {}", theirs[field], first.name, meta[field]),
                ));
            }
        }
        let length = theirs["shape"][axis].as_u64().unwrap_or(0);
        let mut other = theirs["shape"].clone();
        other[axis] = meta["shape"][axis].clone();
        if other != meta["shape"] {
            return Err(error(
                &input.name,
                path,
                format!(
                    "its shape {} differs from {}'s {} beyond the dimension",
                    theirs["shape"], first.name, meta["shape"]
                ),
            ));
        }
        if i + 1 < inputs.len() && length % chunk != 0 {
            return Err(error(
                &input.name,
                path,
                format!("its length {length} along {dimension} is not a multiple of the chunk length {chunk}"),
            ));
        }
        let shift = offset / chunk;
        let prefix = format!("{path}/");
        for (key, reference) in input.references.iter() {
            let Some(name) = key.strip_prefix(&prefix).filter(|n| !n.starts_with(".z") && !n.contains('/')) else {
                continue;
            };
            let mut indices: Vec<u64> = match name.split('.').map(str::parse).collect() {
                Ok(indices) => indices,
                Err(_) => continue,
            };
            if indices.len() != ndim.max(1) {
                continue;
            }
            indices[axis] = indices[axis]
                .checked_add(shift)
                .ok_or_else(|| error(&input.name, path, format!("chunk {name} lies past 2^64 chunks")))?;
            let renamed: Vec<String> = indices.iter().map(u64::to_string).collect();
            builder.insert_reference(&format!("{prefix}{}", renamed.join(".")), reference);
        }
        offset = offset
            .checked_add(length)
            .ok_or_else(|| error(&input.name, path, "the combined length exceeds 2^64".into()))?;
    }
    meta["shape"][axis] = Value::from(offset);
    builder.insert_inline(&format!("{path}/.zarray"), meta.to_string().as_bytes());
    // Its other metadata (`.zattrs`), as the first file has it.
    for (key, reference) in first.references.iter() {
        if key.strip_prefix(path).and_then(|rest| rest.strip_prefix("/.z")).is_some_and(|rest| rest != "array") {
            builder.insert_reference(&key, reference);
        }
    }
    Ok(())
}

/// A file's coordinate: its first value, its dtype and the bytes of its values.
type Coordinate = (f64, String, Vec<u8>);

/// The inputs in the order of their first coordinate values, with their
/// coordinates; an error if one has no coordinate inline, or two start at
/// the same value, or their dtypes differ.
fn ordered(inputs: Vec<Input>, dimension: &str) -> Result<(Vec<Input>, Vec<Coordinate>), ScanError> {
    let error = |name: &str, reason: String| combine_error(name, dimension, reason);
    // Each file's coordinate: its dtype and the bytes of its values.
    let mut coordinates = Vec::with_capacity(inputs.len());
    for input in &inputs {
        let meta = zarray(&input.references, dimension)
            .ok_or_else(|| error(&input.name, "no coordinate array for the dimension".into()))?;
        let dtype = meta["dtype"].as_str().unwrap_or_default().to_owned();
        let bytes = match input.references.get(&chunk_key(dimension, 1, 0)) {
            Some(Reference::Inline(bytes)) if meta["chunks"] == meta["shape"] => bytes.to_vec(),
            _ => return Err(error(&input.name, "the coordinate is not held inline in one chunk".into())),
        };
        let first = first_value(&dtype, &bytes)
            .ok_or_else(|| error(&input.name, format!("no values of a numeric dtype ({dtype})")))?;
        coordinates.push((first, dtype, bytes));
    }
    // Files in the order of their coordinates.
    let mut pairs: Vec<(Input, Coordinate)> = inputs.into_iter().zip(coordinates).collect();
    pairs.sort_by(|a, b| a.1.0.total_cmp(&b.1.0));
    let (inputs, coordinates): (Vec<Input>, Vec<Coordinate>) = pairs.into_iter().unzip();
    for (pair, input) in coordinates.windows(2).zip(inputs.iter().skip(1)) {
        if pair[0].0.total_cmp(&pair[1].0).is_eq() {
            return Err(error(&input.name, format!("starts at the same value as another file ({})", pair[0].0)));
        }
        if pair[1].1 != pair[0].1 {
            return Err(error(&input.name, format!("dtype {} differs from {}", pair[1].1, pair[0].1)));
        }
    }
    Ok((inputs, coordinates))
}

/// The paths of the arrays of a set (every key ending in `/.zarray`, or `.zarray` at the root).
fn array_paths(set: &ReferenceSet) -> Vec<String> {
    set.iter().filter_map(|(key, _)| key.strip_suffix("/.zarray").map(str::to_owned)).collect()
}

/// The parsed `.zarray` of the array at `path`, if it is inline JSON.
fn zarray(set: &ReferenceSet, path: &str) -> Option<Value> {
    match set.get(&format!("{path}/.zarray"))? {
        Reference::Inline(text) => serde_json::from_slice(text).ok(),
        _ => None,
    }
}

/// The axis of `dimension` in the array at `path`, from its `_ARRAY_DIMENSIONS`.
fn axis(set: &ReferenceSet, path: &str, dimension: &str) -> Option<usize> {
    let Reference::Inline(text) = set.get(&format!("{path}/.zattrs"))? else { return None };
    let attrs: Value = serde_json::from_slice(text).ok()?;
    attrs["_ARRAY_DIMENSIONS"].as_array()?.iter().position(|d| d == dimension)
}

/// The key of the chunk at `index` along the first of `ndim` dimensions.
fn chunk_key(path: &str, ndim: usize, index: u64) -> String {
    let mut key = format!("{path}/{index}");
    for _ in 1..ndim {
        key.push_str(".0");
    }
    key
}

/// The size of one value of a numeric numpy dtype such as `>f8`.
fn item_size(dtype: &str) -> Option<usize> {
    dtype.get(2..)?.parse().ok()
}

/// The first value of `bytes` as a number, for ordering files.
fn first_value(dtype: &str, bytes: &[u8]) -> Option<f64> {
    let size = item_size(dtype).filter(|size| [1, 2, 4, 8].contains(size))?;
    let mut raw: Vec<u8> = bytes.get(..size)?.to_vec();
    if dtype.starts_with('>') {
        raw.reverse();
    }
    let mut word = [0u8; 8];
    word[..size.min(8)].copy_from_slice(&raw[..size.min(8)]);
    let unsigned = u64::from_le_bytes(word);
    #[expect(clippy::cast_precision_loss, clippy::cast_possible_wrap, reason = "an order of files, not a value kept")]
    Some(match (dtype.as_bytes().get(1)?, size) {
        (b'f', 8) => f64::from_bits(unsigned),
        (b'f', 4) => f64::from(f32::from_bits(u32::try_from(unsigned).ok()?)),
        (b'u', _) => unsigned as f64,
        (b'i', _) => {
            let shift = 64 - 8 * u32::try_from(size).ok()?;
            ((unsigned << shift) as i64 >> shift) as f64
        }
        _ => return None,
    })
}

fn combine_error(file: &str, array: &str, reason: String) -> ScanError {
    ScanError::Combine { file: file.to_owned(), array: array.to_owned(), reason }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A file with `time` = [start] and an array `v` whose metadata is `zarray` and `dims`.
    fn input(name: &str, start: f64, zarray: Option<&str>, dims: &str) -> Input {
        let mut builder = ReferenceSetBuilder::new();
        builder.insert_inline(
            "time/.zarray",
            br#"{"shape":[1],"chunks":[1],"dtype":"<f8","fill_value":null,"compressor":null,"filters":null,"order":"C","zarr_format":2}"#,
        );
        builder.insert_inline("time/.zattrs", br#"{"_ARRAY_DIMENSIONS":["time"]}"#);
        builder.insert_inline("time/0", &start.to_le_bytes());
        match zarray {
            Some(text) => builder.insert_inline("v/.zarray", text.as_bytes()),
            None => builder.insert_range("v/.zarray", Some("elsewhere.json"), 0, 10),
        }
        builder.insert_inline("v/.zattrs", format!(r#"{{"_ARRAY_DIMENSIONS":{dims}}}"#).as_bytes());
        builder.insert_range("v/0", Some(name), 0, 8);
        Input { name: name.to_owned(), references: builder.build() }
    }

    /// Metadata that does not fit what the attributes say is an error naming
    /// the file and the array, never a panic.
    #[test]
    fn inconsistent_metadata_is_an_error() {
        let good = r#"{"shape":[1],"chunks":[1],"dtype":"<f8","fill_value":null,"compressor":null,"filters":null,"order":"C","zarr_format":2}"#;
        let combined = combine(
            vec![input("b", 1.0, Some(good), r#"["time"]"#), input("a", 0.0, Some(good), r#"["time"]"#)],
            "time",
        );
        let combined = combined.unwrap();
        assert_eq!(combined.get("v/1"), Some(Reference::Range { url: Some("b"), offset: 0, length: 8 }));
        for (zarray, dims, needle) in [
            (Some(good), r#"["x", "y", "time"]"#, "have no axis 2"),
            (Some(r#"{"shape":5,"chunks":[1]}"#), r#"["time"]"#, "have no axis 0"),
            (None, r#"["time"]"#, "no .zarray that is inline JSON"),
        ] {
            let err = combine(vec![input("a", 0.0, zarray, dims), input("b", 1.0, zarray, dims)], "time").unwrap_err();
            assert!(err.to_string().contains("cannot combine a: \"v\"") && err.to_string().contains(needle), "{err}");
        }
        let err = combine(
            vec![input("a", 0.0, Some(good), r#"["time"]"#), input("b", 0.0, Some(good), r#"["time"]"#)],
            "time",
        );
        assert!(err.unwrap_err().to_string().contains("starts at the same value"));
    }
}
