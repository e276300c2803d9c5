//! What combining reads of each file's metadata before it combines the file, worked out once
//! for files alike, and each file's references split as they are given.
//!
//! Preparing a file for a streamed combine reads its arrays' `.zarray` and `.zattrs` (which
//! arrays are coordinates, which hold times, which are renumbered) a hundred times for a file of
//! twenty arrays. An archive's files hold the same metadata byte for byte: a [`SetLayout`]
//! worked out for one serves the others, once [`SetLayout::fits`] has compared their metadata.

use std::collections::BTreeMap;

use kerchunk::{Reference, ReferenceSet, ReferenceSetBuilder};

use super::{
    CombineOptions, Keyed, array_paths, axis, chunk_indices, coordinate_paths, decoded_arrays, holds_times,
    is_metadata, ndim, not_a_chunk,
};
use crate::error::CombineError;

/// A set's metadata (each key whose name starts `.z`, with its bytes where they are inline), in
/// the order of [`ReferenceSet::loose`].
type Metadata = Vec<(Box<str>, Option<Box<[u8]>>)>;

/// What combining with some options reads of a set's metadata: the arrays whose values it
/// reads ([`decoded_arrays`](crate::decoded_arrays)) and those whose chunks it renumbers
/// (which [`split_combined_chunks`](crate::split_combined_chunks) sets aside), for the set it
/// was worked out for and every set whose metadata is the same ([`SetLayout::fits`]).
///
/// ```
/// use kerchunk::ReferenceSetBuilder;
/// use kerchunk_combine::{CombineOptions, SetLayout};
///
/// let file = |name: &str, time: f64| {
///     let meta = r#"{"shape":[1],"chunks":[1],"dtype":"<f8","fill_value":null,"compressor":null,"filters":null,"order":"C","zarr_format":2}"#;
///     let mut builder = ReferenceSetBuilder::new();
///     for array in ["time", "t"] {
///         builder.insert_inline(&format!("{array}/.zarray"), meta.as_bytes());
///         builder.insert_inline(&format!("{array}/.zattrs"), br#"{"_ARRAY_DIMENSIONS":["time"]}"#);
///     }
///     builder.insert_inline("time/0", &time.to_le_bytes());
///     builder.insert_range("t/0", Some(name), 100, 8);
///     builder.build()
/// };
/// let options = CombineOptions::new("time");
/// let layout = SetLayout::of(&file("a.nc", 0.0), &options);
/// assert_eq!(layout.decoded_arrays(), ["time"]);
/// // Another file of the archive: other values, the same metadata.
/// assert!(layout.fits(&file("b.nc", 1.0)));
/// ```
#[derive(Debug)]
pub struct SetLayout {
    metadata: Metadata,
    decoded: Vec<String>,
    /// Each renumbered array's path, with its number of dimensions.
    renumbered: BTreeMap<String, usize>,
}

impl SetLayout {
    /// What combining with `options` reads of `set`'s metadata.
    #[must_use]
    pub fn of(set: &ReferenceSet, options: &CombineOptions) -> Self {
        let metadata = metadata(set).map(|(key, bytes)| (key.into(), bytes.map(Into::into))).collect();
        Self { metadata, decoded: decoded_arrays(set, options), renumbered: renumbered_arrays(set, options) }
    }

    /// Whether `set`'s metadata is that of the set this was worked out for, byte for byte:
    /// then this is `set`'s layout too, for the same options.
    #[must_use]
    pub fn fits(&self, set: &ReferenceSet) -> bool {
        let mut theirs = metadata(set);
        let same = self.metadata.iter().all(|(key, bytes)| {
            theirs.next().is_some_and(|(their_key, their_bytes)| **key == *their_key && bytes.as_deref() == their_bytes)
        });
        same && theirs.next().is_none()
    }

    /// The arrays whose values combining reads, as [`decoded_arrays`](crate::decoded_arrays)
    /// gives them.
    #[must_use]
    pub fn decoded_arrays(&self) -> &[String] {
        &self.decoded
    }
}

/// Each metadata key of `set` (a key whose name starts `.z`), with its bytes where it is
/// inline, in the order of [`ReferenceSet::loose`] (metadata is never held in a chunk table).
fn metadata(set: &ReferenceSet) -> impl Iterator<Item = (&str, Option<&[u8]>)> {
    set.loose().filter(|(key, _)| is_metadata(key)).map(|(key, reference)| match reference {
        Reference::Inline(bytes) => (key, Some(bytes)),
        _ => (key, None),
    })
}

/// A file's references split as they are given, as
/// [`split_combined_chunks`](crate::split_combined_chunks) splits a whole set: the chunks of
/// the arrays its [`SetLayout`] renumbers, with each such array's `.zarray`, to be set aside, and
/// the rest. For references made as they are split (a set's targets renamed, say), without a
/// set made of them first.
#[derive(Debug)]
pub struct ChunkSplit<'a> {
    name: String,
    renumbered: &'a BTreeMap<String, usize>,
    /// `None`: the chunks are left out ([`combined_rest`](crate::combined_rest)).
    chunks: Option<ReferenceSetBuilder>,
    rest: ReferenceSetBuilder,
}

impl<'a> ChunkSplit<'a> {
    /// An empty split of the references of the file `name`, whose layout is `layout`: each
    /// renumbered array's `.zarray` is taken from `set`, the file's references as given, first,
    /// so that its chunks go to a dense table (20 bytes a chunk), not a map of key texts.
    #[must_use]
    pub fn new(name: &str, layout: &'a SetLayout, set: &ReferenceSet) -> Self {
        Self::of_arrays(name, &layout.renumbered, Some(set))
    }

    /// [`ChunkSplit::new`] for the arrays `renumbered` (each path with its number of
    /// dimensions), their chunks left out without a `set` to take their `.zarray`s from.
    pub(super) fn of_arrays(name: &str, renumbered: &'a BTreeMap<String, usize>, set: Option<&ReferenceSet>) -> Self {
        let chunks = set.map(|set| {
            let mut chunks = ReferenceSetBuilder::new();
            for path in renumbered.keys() {
                let key = format!("{path}/.zarray");
                if let Some(zarray) = set.get(&key) {
                    chunks.insert_reference(&key, zarray);
                }
            }
            chunks
        });
        Self { name: name.to_owned(), renumbered, chunks, rest: ReferenceSetBuilder::new() }
    }

    /// `reference`, under `key`, to the chunks set aside or to the rest.
    ///
    /// # Errors
    /// [`CombineError::Combine`] if `key`, below a renumbered array, is neither its metadata nor
    /// one of its chunks, as combining would find.
    pub fn insert(&mut self, key: &str, reference: Reference<'_>) -> Result<(), CombineError> {
        if let Some((path, name_in_array)) = key.rsplit_once('/')
            && let Some(&ndim) = self.renumbered.get(path)
            && !name_in_array.starts_with(".z")
        {
            if chunk_indices(name_in_array, ndim).is_none() {
                return Err(not_a_chunk(&self.name, path, key, ndim));
            }
            if let Some(chunks) = &mut self.chunks {
                chunks.insert_reference(key, reference);
            }
        } else {
            self.rest.insert_reference(key, reference);
        }
        Ok(())
    }

    /// The rest, what [`combine_streamed`](crate::combine_streamed) holds of the file, and the
    /// chunks to set aside.
    #[must_use]
    pub fn finish(self) -> (ReferenceSet, ReferenceSet) {
        (self.rest.build(), self.chunks.unwrap_or_default().build())
    }
}

/// The arrays of `set` whose chunks combining with `options` renumbers along every one of
/// its dimensions (those along it or, where no array has it, those that gain it), each with
/// its number of dimensions: what [`split_combined_chunks`](crate::split_combined_chunks) sets aside. An array without a
/// usable `.zarray` is left for combining to refuse.
pub(super) fn renumbered_arrays(set: &(impl Keyed + ?Sized), options: &CombineOptions) -> BTreeMap<String, usize> {
    let arrays = array_paths(set);
    let coordinates = coordinate_paths(set);
    let dimensions = std::iter::once(&options.dimension).chain(options.outer.iter().map(|(dimension, _)| dimension));
    let mut renumbered: Option<Vec<&String>> = None;
    for dimension in dimensions {
        let others = || arrays.iter().filter(move |path| *path != dimension);
        let along: Vec<&String> = others().filter(|path| axis(set, path, dimension).is_some()).collect();
        let level: Vec<&String> = if along.is_empty() {
            others().filter(|path| !coordinates.contains(path) && !options.identical.contains(path)).collect()
        } else {
            // Times along it are held whole: combining may write their values again.
            along.into_iter().filter(|path| !holds_times(set, path, dimension)).collect()
        };
        renumbered = Some(match renumbered {
            None => level,
            Some(before) => before.into_iter().filter(|path| level.contains(path)).collect(),
        });
    }
    renumbered.into_iter().flatten().filter_map(|path| Some((path.clone(), ndim(set, path)?))).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(zattrs: &str, extra: Option<&str>) -> ReferenceSet {
        let meta = r#"{"shape":[2,3],"chunks":[1,3],"dtype":"<f4","fill_value":null,"compressor":null,"filters":null,"order":"C","zarr_format":2}"#;
        let mut builder = ReferenceSetBuilder::new();
        builder.insert_inline("t/.zarray", meta.as_bytes());
        builder.insert_inline("t/.zattrs", zattrs.as_bytes());
        builder.insert_range("t/0.0", Some("f.nc"), 10, 12);
        builder.insert_range("t/1.0", Some("f.nc"), 22, 12);
        if let Some(path) = extra {
            builder.insert_inline(&format!("{path}/.zarray"), meta.as_bytes());
        }
        builder.build()
    }

    /// A layout fits a set whose metadata is the same byte for byte, whatever its chunks, and no
    /// other: an attribute changed, an array more, an array fewer. Each misfit's own layout
    /// differs, so a layout taken for it would have set aside the wrong arrays.
    #[test]
    fn a_layout_fits_only_the_same_metadata() {
        let options = CombineOptions::new("time");
        let dims = r#"{"_ARRAY_DIMENSIONS":["time","x"]}"#;
        let layout = SetLayout::of(&file(dims, None), &options);
        assert_eq!(layout.renumbered, BTreeMap::from([("t".to_owned(), 2)]));
        let mut other_chunks = ReferenceSetBuilder::new();
        for (key, reference) in file(dims, None).iter() {
            match reference {
                Reference::Range { .. } => other_chunks.insert_range(&key, Some("g.nc"), 99, 12),
                _ => other_chunks.insert_reference(&key, reference),
            }
        }
        assert!(layout.fits(&other_chunks.build()));
        let misfits = [
            file(r#"{"_ARRAY_DIMENSIONS":["x","time"]}"#, None),
            // Times along the dimension: held whole (not set aside), their values read.
            file(r#"{"_ARRAY_DIMENSIONS":["time","x"],"units":"days since 2000-01-01"}"#, None),
            file(dims, Some("u")),
        ];
        for misfit in &misfits {
            assert!(!layout.fits(misfit));
        }
        let times = SetLayout::of(&misfits[1], &options);
        assert_eq!((times.renumbered, times.decoded), (BTreeMap::new(), vec!["t".to_owned()]));
        let fewer = SetLayout::of(&file(dims, Some("u")), &options);
        assert!(!fewer.fits(&file(dims, None)));
    }
}
