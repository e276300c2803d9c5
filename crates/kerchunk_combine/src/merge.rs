//! Files that each hold some of the arrays (one file per variable) merged
//! into one set: the union of their arrays, as xarray's `merge` (and
//! `open_mfdataset` over such files) gives it.

use std::collections::BTreeSet;

use kerchunk::{ReferenceSet, ReferenceSetBuilder};

use super::{Input, RangeReader, array_paths, check_identical};
use crate::error::CombineError;

/// The union of the arrays of `inputs`: each array (every key under its
/// path) from the first file that has it, once every other file that has it
/// is checked to hold the same metadata and values (inline, or read through `reader` where
/// held by range references); every other key
/// (the groups' `.zgroup` and `.zattrs`, the root's) from the first file
/// that has it.
///
/// # Errors
/// [`CombineError::Combine`] naming the file and the array whose metadata or
/// inline values differ from the first file's that has it.
pub(crate) fn merge(inputs: &[Input], reader: Option<&RangeReader>) -> Result<ReferenceSet, CombineError> {
    let held: Vec<BTreeSet<String>> =
        inputs.iter().map(|input| array_paths(&input.references).into_iter().collect()).collect();
    let arrays: BTreeSet<&String> = held.iter().flatten().collect();
    let mut owner: Vec<(String, usize)> = Vec::with_capacity(arrays.len());
    for path in arrays {
        let holders: Vec<usize> = (0..inputs.len()).filter(|&i| held[i].contains(path)).collect();
        let subset: Vec<&Input> = holders.iter().map(|&i| &inputs[i]).collect();
        if subset.len() > 1 {
            let why = "and arrays of one name must be the same in every file that has them";
            check_identical(&subset, path, why, reader)?;
        }
        owner.push((path.clone(), holders[0]));
    }
    let array_of = |key: &str| {
        owner.iter().find(|(path, _)| key.strip_prefix(path.as_str()).is_some_and(|rest| rest.starts_with('/')))
    };
    let mut builder = ReferenceSetBuilder::new();
    let mut taken = BTreeSet::new();
    for (i, input) in inputs.iter().enumerate() {
        for (key, reference) in input.references.iter() {
            let from_here = match array_of(&key) {
                Some((_, holder)) => *holder == i,
                None => !taken.contains(key.as_ref()),
            };
            if from_here {
                taken.insert(key.to_string());
                builder.insert_reference(&key, reference);
            }
        }
    }
    Ok(builder.build())
}
