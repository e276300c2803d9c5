//! Split an uncompressed array's chunks into smaller ones, as kerchunk's
//! `kerchunk.utils.subchunk(store, variable, factor)` does: a contiguous
//! dataset or a NetCDF-3 variable is one range of the file, and a reader that
//! wants a part of it reads it all; split `factor` ways along its first
//! dimension longer than 1, each chunk is a range of its own.

use kerchunk::{OwnedReference, Reference, ReferenceSet, ReferenceSetBuilder};
use serde_json::Value;

/// Why an array cannot be split.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
#[error("cannot split {array:?} into {factor} chunks: {reason}")]
pub struct SubchunkError {
    /// The array.
    pub array: String,
    /// The factor asked for.
    pub factor: u64,
    /// Why not.
    pub reason: String,
}

/// `references` with the chunks of `array` (a path such as `temp` or
/// `group/temp`) each split into `factor` chunks along the first dimension
/// whose chunk length is not 1. Every other reference is kept as it is.
///
/// As kerchunk's `subchunk`: the array must have no compressor, and no chunk
/// may be inline. Unlike it, and so that no chunk reads other bytes than
/// before: the array must have no filters either and be in C order;
/// `factor` must divide that chunk length exactly (kerchunk carries a factor
/// that spans dimensions only partly, a `TODO` in its code); every chunk must
/// be a byte range whose length `factor` divides (kerchunk rounds down, and
/// asks the store for a whole file's size); and new chunks that lie wholly
/// past the array's end are left out.
///
/// # Errors
/// [`SubchunkError`] naming the array, the factor and the reason.
pub fn subchunk(references: &ReferenceSet, array: &str, factor: u64) -> Result<ReferenceSet, SubchunkError> {
    let array = array.trim_matches('/');
    let refuse = |reason: String| SubchunkError { array: array.to_owned(), factor, reason };
    let zarray_key = format!("{array}/.zarray");
    let Some(OwnedReference::Inline(zarray)) = references.get_owned(&zarray_key) else {
        return Err(refuse(format!("{zarray_key} is not inline metadata in the references")));
    };
    let mut meta: Value =
        serde_json::from_slice(&zarray).map_err(|e| refuse(format!("{zarray_key} is not JSON: {e}")))?;
    if factor < 2 {
        return Err(refuse("the factor must be 2 or more".to_owned()));
    }
    if !meta["compressor"].is_null() {
        return Err(refuse("its chunks are compressed".to_owned()));
    }
    if meta["filters"].as_array().is_some_and(|f| !f.is_empty()) {
        return Err(refuse("its chunks are filtered".to_owned()));
    }
    if meta["order"].as_str() == Some("F") {
        return Err(refuse("its chunks are in Fortran order".to_owned()));
    }
    let numbers = |field: &str| -> Option<Vec<u64>> { meta[field].as_array()?.iter().map(Value::as_u64).collect() };
    let (Some(shape), Some(mut chunks)) = (numbers("shape"), numbers("chunks")) else {
        return Err(refuse(format!("{zarray_key} has no shape or chunks")));
    };
    let Some(axis) = chunks.iter().position(|&c| c != 1) else {
        return Err(refuse("every chunk length is 1".to_owned()));
    };
    if chunks[axis] % factor != 0 {
        return Err(refuse(format!("it does not divide the chunk length {} of dimension {axis}", chunks[axis])));
    }
    chunks[axis] /= factor;
    meta["chunks"] = Value::from(chunks.clone());
    let new_count = shape.get(axis).map_or(0, |&n| n.div_ceil(chunks[axis]));

    let prefix = format!("{array}/");
    // A chunk key of the array: its indices, and the separator between them.
    let chunk_index = |key: &str| -> Option<(Vec<u64>, char)> {
        let rest = key.strip_prefix(&prefix)?;
        let separator = if rest.contains('/') { '/' } else { '.' };
        Some((rest.split(separator).map(|p| p.parse().ok()).collect::<Option<_>>()?, separator))
    };
    let mut out = ReferenceSetBuilder::new();
    for (key, value) in references.iter() {
        let Some((mut position, separator)) = chunk_index(&key) else {
            if key != zarray_key {
                out.insert_reference(&key, value);
            }
            continue;
        };
        let (url, offset, length) = match value {
            Reference::Range { url, offset, length } => (url, offset, length),
            Reference::Inline(_) => return Err(refuse(format!("chunk {key} is inline"))),
            Reference::Whole { .. } => {
                return Err(refuse(format!("chunk {key} is a whole file, whose length the references do not say")));
            }
            Reference::Malformed { reason } => return Err(refuse(format!("chunk {key} is malformed: {reason}"))),
        };
        if length % factor != 0 {
            return Err(refuse(format!("chunk {key} has {length} bytes, which {factor} does not divide")));
        }
        let Some(first) = position.get(axis).and_then(|&i| i.checked_mul(factor)) else {
            return Err(refuse(format!("chunk {key} has no index {axis}, or one too large")));
        };
        let part = length / factor;
        for k in 0..factor {
            position[axis] = first + k;
            if position[axis] >= new_count.max(1) {
                break; // wholly past the array's end
            }
            let index: Vec<String> = position.iter().map(ToString::to_string).collect();
            let new_key = format!("{prefix}{}", index.join(&separator.to_string()));
            let start = offset.checked_add(k * part).ok_or_else(|| refuse(format!("chunk {key} ends past 2^64")))?;
            out.insert_range(&new_key, url, start, part);
        }
    }
    out.insert_inline(&zarray_key, meta.to_string().as_bytes());
    Ok(out.build())
}
