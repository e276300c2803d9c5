//! A dimension no file has, from one value per file: each array that is not
//! a coordinate gains it as a new first axis, one file per position.

use kerchunk::ReferenceSetBuilder;
use serde_json::Value;

use super::placement::{Holder, Placement, Renumber};
use super::{
    Input, attributes, combine_error, differing_encoding, differing_field, encoding_reason, not_a_chunk, zarray,
};
use crate::error::CombineError;

/// The array at `path`, which no file has along `dimension`, with the
/// dimension as a new first axis: each input's chunks at its position along
/// it (chunk length 1), after a check that every file has the same metadata.
/// Returns where each file's chunks went.
pub(super) fn stack(
    builder: &mut ReferenceSetBuilder,
    inputs: &[Input],
    path: &str,
    dimension: &str,
) -> Result<Placement, CombineError> {
    let first = &inputs[0];
    let meta = zarray(&first.references, path)
        .filter(|meta| meta["shape"].is_array() && meta["chunks"].is_array())
        .ok_or_else(|| {
            combine_error(&first.name, path, "no .zarray that is inline JSON with a shape and chunks".into())
        })?;
    let prefix = format!("{path}/");
    let ndim = meta["shape"].as_array().map_or(0, Vec::len);
    let holders = Vec::with_capacity(inputs.len());
    let mut placement = Placement { path: path.to_owned(), ndim, holders, contiguous: true, uneven: None };
    for (position, input) in (0u64..).zip(inputs) {
        let theirs = zarray(&input.references, path)
            .ok_or_else(|| combine_error(&input.name, path, format!("it is missing, where {} has it", first.name)))?;
        let differing = if theirs["shape"] == meta["shape"] { differing_field(&theirs, &meta) } else { Some("shape") };
        if let Some(field) = differing {
            return Err(combine_error(
                &input.name,
                path,
                format!("its {field} {} differs from {}'s {}", theirs[field], first.name, meta[field]),
            ));
        }
        let (ours_attrs, first_attrs) = (attributes(&input.references, path), attributes(&first.references, path));
        if let Some(differing) = differing_encoding(ours_attrs.as_ref(), first_attrs.as_ref(), &[]) {
            return Err(combine_error(&input.name, path, encoding_reason(differing, &first.name)));
        }
        let renumber = Renumber::Stack { position, scalar: ndim == 0 };
        for (key, reference) in input.references.with_prefix(&prefix) {
            let Some(name) = key.strip_prefix(&prefix).filter(|n| !n.starts_with(".z")) else { continue };
            // A position cannot overflow: it counts files.
            let renamed = renumber.name(name, ndim).map_err(|_| not_a_chunk(&input.name, path, &key, ndim))?;
            builder.insert_reference(&format!("{prefix}{renamed}"), reference);
        }
        placement.holders.push((Holder::File(input.name.clone()), renumber));
    }
    let mut stacked = meta.clone();
    let prepend = |values: &Value, first: u64| {
        let mut out = vec![Value::from(first)];
        out.extend(values.as_array().into_iter().flatten().cloned());
        Value::from(out)
    };
    stacked["shape"] = prepend(&meta["shape"], inputs.len() as u64);
    stacked["chunks"] = prepend(&meta["chunks"], 1);
    builder.insert_inline(&format!("{path}/.zarray"), stacked.to_string().as_bytes());
    let mut attrs = attributes(&first.references, path)
        .filter(Value::is_object)
        .unwrap_or_else(|| Value::Object(serde_json::Map::new()));
    let mut dims = vec![Value::from(dimension)];
    dims.extend(attrs["_ARRAY_DIMENSIONS"].as_array().into_iter().flatten().cloned());
    attrs["_ARRAY_DIMENSIONS"] = Value::from(dims);
    builder.insert_inline(&format!("{path}/.zattrs"), attrs.to_string().as_bytes());
    for (key, reference) in first.references.with_prefix(&prefix) {
        let other = key.strip_prefix(&prefix).is_some_and(|n| n.starts_with(".z") && n != ".zarray" && n != ".zattrs");
        if other {
            builder.insert_reference(&key, reference);
        }
    }
    Ok(placement)
}
