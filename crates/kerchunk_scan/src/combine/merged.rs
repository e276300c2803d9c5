//! Merging without holding every file's chunks at once, as
//! [`streamed`](super::streamed) combines along dimensions: each file's
//! chunks of its data arrays (those that are not coordinates) are set aside
//! as its scan ends, the rest held to merge and check the files, and the
//! merged set reads each array's chunks back from the one file it is taken
//! from, as a writer walks it.

use std::collections::BTreeMap;
use std::sync::Arc;

use kerchunk::{ReferenceSet, ReferenceSetBuilder};

use super::placement::{Holder, Placement, Renumber};
use super::{
    FileRests, Input, Keyed, RangeReader, SetAside, StreamedCombine, array_paths, chunk_indices, combine_error,
    coordinate_paths, merge, zarray,
};
use crate::error::ScanError;

/// The data arrays of `set` (not coordinates), each with its number of dimensions: those whose
/// chunks [`split_merged_chunks`] sets aside. An array without a usable `.zarray` is held.
fn data_arrays(set: &(impl Keyed + ?Sized)) -> BTreeMap<String, usize> {
    let coordinates = coordinate_paths(set);
    array_paths(set)
        .into_iter()
        .filter(|path| !coordinates.contains(path))
        .filter_map(|path| {
            let ndim = zarray(set, &path)?["shape"].as_array()?.len();
            Some((path, ndim))
        })
        .collect()
}

/// `set`, the references of the file `name`, split in two for [`merge_streamed`]: the chunks of
/// its data arrays (every array that is not a coordinate), keys written as their indices with
/// `.` between them, to be [set aside](SetAside), and the rest, what merging holds of each file.
#[must_use]
pub fn split_merged_chunks(set: &ReferenceSet) -> (ReferenceSet, ReferenceSet) {
    let data = data_arrays(set);
    let (mut rest, mut chunks) = (ReferenceSetBuilder::new(), ReferenceSetBuilder::new());
    for (key, reference) in set.iter() {
        // Any other key below the array stays with the rest, which merging copies as it is.
        let is_chunk = key.rsplit_once('/').is_some_and(|(path, chunk)| {
            data.get(path).is_some_and(|&ndim| {
                chunk_indices(chunk, ndim)
                    .is_some_and(|indices| indices.iter().map(u64::to_string).collect::<Vec<_>>().join(".") == chunk)
            })
        });
        if is_chunk {
            chunks.insert_reference(&key, reference);
        } else {
            rest.insert_reference(&key, reference);
        }
    }
    (rest.build(), chunks.build())
}

/// Merge files whose data arrays' chunks were [set aside](SetAside) (each file's under its name
/// in `rests`, [`split_merged_chunks`]), as [`merge`](crate::merge) merges whole sets: the same
/// checks, the same result. A data array one file holds (one file per variable) has its chunks
/// read back from that file as the result is walked; one that several files hold has theirs
/// read back at once, to be compared (through `reader` where they are ranges) and held.
///
/// # Errors
/// As [`merge`](crate::merge); [`ScanError::Combine`] also if the chunks of an array several
/// files hold cannot be read back to compare them.
pub fn merge_streamed(
    rests: FileRests,
    set_aside: Arc<dyn SetAside>,
    reader: Option<&RangeReader>,
) -> Result<StreamedCombine, ScanError> {
    let mut inputs: Vec<Input> =
        rests.into_files().into_iter().map(|(name, references)| Input { name, references }).collect();
    let data: Vec<BTreeMap<String, usize>> = inputs.iter().map(|input| data_arrays(&input.references)).collect();
    let holds: Vec<Vec<String>> = inputs.iter().map(|input| array_paths(&input.references)).collect();
    let mut paths: Vec<&String> = data.iter().flat_map(BTreeMap::keys).collect();
    paths.sort();
    paths.dedup();
    let mut placements = Vec::new();
    for path in paths {
        let holders: Vec<usize> = (0..inputs.len()).filter(|&i| holds[i].contains(path)).collect();
        let prefix = format!("{path}/");
        // Keys below it that are not chunk keys as written stayed with the rest: merged whole.
        let odd = |input: &Input| {
            input.references.iter().any(|(key, _)| key.strip_prefix(&prefix).is_some_and(|k| !k.starts_with(".z")))
        };
        if let [owner] = holders[..]
            && let Some(&ndim) = data[owner].get(path)
            && !odd(&inputs[owner])
        {
            // Held by one file, which set its chunks aside: read back from it as it is walked.
            let holder = Holder::File(inputs[owner].name.clone());
            let unchanged = Renumber::Shift { axis: 0, by: 0 };
            placements.push(Placement {
                path: path.clone(),
                ndim,
                holders: vec![(holder, unchanged)],
                contiguous: true,
            });
        } else {
            // Held by several, which merging compares: their chunks back among their
            // references, merged as whole sets are.
            for &i in holders.iter().filter(|&&i| data[i].contains_key(path)) {
                inputs[i] = with_chunks(&inputs[i], path, set_aside.as_ref())?;
            }
        }
    }
    let base = merge(&inputs, reader)?;
    Ok(StreamedCombine::new(base, placements, set_aside))
}

/// `input` with its set-aside chunks of the array `path` back among its references.
fn with_chunks(input: &Input, path: &str, set_aside: &dyn SetAside) -> Result<Input, ScanError> {
    let chunks = set_aside.references(&input.name).map_err(|error| {
        combine_error(&input.name, path, format!("its chunks cannot be read back to compare them: {error}"))
    })?;
    let mut builder = ReferenceSetBuilder::new();
    input.references.iter().for_each(|(key, reference)| builder.insert_reference(&key, reference));
    let prefix = format!("{path}/");
    for (key, reference) in chunks.iter().filter(|(key, _)| key.starts_with(&prefix)) {
        builder.insert_reference(&key, reference);
    }
    Ok(Input { name: input.name.clone(), references: builder.build().into() })
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use kerchunk::{Lookup, Reference, ReferenceSource as _};

    use super::super::streamed::tests::{Held, meta};
    use super::*;

    /// A file of one variable `name(x)` in two chunks, beside `x` and a data array `s` that
    /// every file holds, with the value `shared`.
    fn variable(file: &str, name: &str, shared: f64) -> ReferenceSet {
        let mut builder = ReferenceSetBuilder::new();
        for (path, shape, chunks) in [("x", "[2]", "[2]"), ("s", "[1]", "[1]"), (name, "[2]", "[1]")] {
            builder.insert_inline(&format!("{path}/.zarray"), meta(shape, chunks).as_bytes());
            builder.insert_inline(&format!("{path}/.zattrs"), br#"{"_ARRAY_DIMENSIONS":["x"]}"#);
        }
        builder.insert_inline("x/0", &[0u8; 16]);
        builder.insert_inline("s/0", &shared.to_le_bytes());
        builder.insert_range(&format!("{name}/0"), Some(file), 0, 8);
        builder.insert_range(&format!("{name}/1"), Some(file), 8, 8);
        builder.build()
    }

    fn merged(files: &[(&str, ReferenceSet)]) -> Result<StreamedCombine, ScanError> {
        let (mut held, mut rests) = (HashMap::new(), FileRests::new());
        for (name, set) in files {
            let (rest, chunks) = split_merged_chunks(set);
            held.insert((*name).to_owned(), Arc::new(chunks));
            rests.push((*name).to_owned(), rest);
        }
        merge_streamed(rests, Arc::new(Held(held)), None)
    }

    /// Each variable's chunks are read back from its one file; `s`, which both hold, is
    /// compared with its chunks read back and held; one that differs is merge's error.
    #[test]
    fn variables_are_read_back_and_shared_arrays_compared() {
        let files = [("a.nc", variable("a.nc", "t", 1.0)), ("b.nc", variable("b.nc", "rh", 1.0))];
        let streamed = merged(&files).unwrap();
        assert!(streamed.base().keys_with_prefix("t/").iter().all(|key| key.contains(".z")));
        assert!(streamed.base().get("s/0").is_some(), "s is held, from a.nc");
        let Ok(Lookup::Ready(Some(found))) = streamed.lookup("rh/1") else { panic!("rh/1") };
        assert_eq!(found.as_reference(), Reference::Range { url: Some("b.nc"), offset: 8, length: 8 });
        let differing = [("a.nc", variable("a.nc", "t", 1.0)), ("b.nc", variable("b.nc", "rh", 2.0))];
        let whole = crate::merge(differing.iter().map(|(n, s)| ((*n).to_owned(), copy(s))).collect(), None);
        let error = merged(&differing).unwrap_err().to_string();
        assert_eq!(error, whole.unwrap_err().to_string());
        assert!(error.contains("b.nc") && error.contains("\"s\""), "{error}");
    }

    fn copy(set: &ReferenceSet) -> ReferenceSet {
        let mut builder = ReferenceSetBuilder::new();
        set.iter().for_each(|(key, reference)| builder.insert_reference(&key, reference));
        builder.build()
    }
}
