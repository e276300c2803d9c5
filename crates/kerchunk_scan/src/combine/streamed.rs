//! Combining without holding every file's chunks at once.
//!
//! Each file's references are set aside as the file is scanned (on disk, say:
//! a [`SetAside`]), and combining keeps only what ordering and checking the
//! files need: every file's references but the chunks of the arrays that are
//! concatenated or stacked ([`without_combined_chunks`]). Those are the bulk
//! of an archive's references, and they are only renumbered: the combined set
//! ([`StreamedCombine`]) reads them back one file at a time, as a writer
//! walks it, so a writer's memory grows with one file's references, not with
//! the number of files.

use std::collections::{BTreeMap, HashSet};
use std::sync::Arc;

use futures::stream::{self, BoxStream};
use kerchunk::zarr::metadata::is_metadata_key;
use kerchunk::{
    BoxError, Listing, Lookup, OwnedReference, ReferenceSet, ReferenceSetBuilder, ReferenceSource, SourceError, Walk,
};

use super::{
    CombineOptions, Input, array_paths, axis, chunk_indices, combine_error, combine_placing, coordinate_paths,
    not_a_chunk, zarray,
};
use crate::error::ScanError;

/// Where each file's whole references wait while the files are ordered and
/// checked: what [`StreamedCombine`] reads back, a file at a time.
pub trait SetAside: Send + Sync + std::fmt::Debug {
    /// The references of the file `name` (as combining names it), as they were set aside.
    ///
    /// # Errors
    /// Why they cannot be read back.
    fn references(&self, name: &str) -> Result<Arc<ReferenceSet>, BoxError>;
}

/// Where one file's chunks of a combined array go: their indices shifted
/// along the dimension, or a new first index.
#[derive(Clone, Copy, Debug)]
pub(super) enum Renumber {
    /// Concatenated: `by` chunks added to the index along `axis`.
    Shift { axis: usize, by: u64 },
    /// Stacked on a new first axis, at `position` (`scalar`: the array had no dimensions).
    Stack { position: u64, scalar: bool },
}

/// A chunk key that cannot be renumbered.
pub(super) enum Unplaced {
    /// It is not a chunk key of the array.
    NotAChunk,
    /// Its index would pass 2^64.
    Overflow,
}

impl Renumber {
    /// The combined name of the chunk `name` of an array of `ndim` dimensions.
    pub(super) fn name(self, name: &str, ndim: usize) -> Result<String, Unplaced> {
        let mut indices = chunk_indices(name, ndim).ok_or(Unplaced::NotAChunk)?;
        match self {
            Self::Shift { axis, by } => {
                indices[axis] = indices[axis].checked_add(by).ok_or(Unplaced::Overflow)?;
                Ok(indices.iter().map(u64::to_string).collect::<Vec<_>>().join("."))
            }
            // A 0-d array's one chunk is `0`; with the new axis it is the position alone.
            Self::Stack { position, scalar: true } => Ok(position.to_string()),
            Self::Stack { position, scalar: false } => Ok(format!("{position}.{name}")),
        }
    }

    /// The file's own name of the combined chunk `indices`, if the file holds it.
    fn original(self, indices: &[u64]) -> Option<String> {
        let mut indices = indices.to_vec();
        match self {
            Self::Shift { axis, by } => indices[axis] = indices.get(axis)?.checked_sub(by)?,
            Self::Stack { scalar: true, .. } => return Some("0".into()),
            Self::Stack { .. } => {
                indices.remove(0);
            }
        }
        Some(indices.iter().map(u64::to_string).collect::<Vec<_>>().join("."))
    }
}

/// A combined array whose chunks are renumbered from each file's: the files in
/// the combined order, each with where its chunks go.
#[derive(Debug)]
pub(super) struct Placement {
    pub(super) path: String,
    /// Dimensions of each file's array.
    pub(super) ndim: usize,
    pub(super) files: Vec<(String, Renumber)>,
}

impl Placement {
    /// The file that holds the combined chunk `indices`, and its own name for it.
    fn holder(&self, indices: &[u64]) -> Option<(&str, String)> {
        let at = match self.files.first()?.1 {
            Renumber::Shift { axis, .. } => {
                let index = *indices.get(axis)?;
                let after =
                    self.files.partition_point(|(_, r)| matches!(r, Renumber::Shift { by, .. } if *by <= index));
                after.checked_sub(1)?
            }
            Renumber::Stack { .. } => usize::try_from(*indices.first()?).ok()?,
        };
        let (name, renumber) = self.files.get(at)?;
        Some((name, renumber.original(indices)?))
    }
}

/// `set`, the references of the file `name`, without the chunks of the arrays
/// that combining with `options` renumbers (those along its dimension or, where
/// no array has it, those that gain it): what [`combine_streamed`] takes of each
/// file, while the whole set is [set aside](SetAside).
///
/// # Errors
/// [`ScanError::Combine`] if a key below such an array is neither its metadata
/// nor one of its chunks, as combining would find.
pub fn without_combined_chunks(
    name: &str,
    set: &ReferenceSet,
    options: &CombineOptions,
) -> Result<ReferenceSet, ScanError> {
    let dimension = options.dimension.as_str();
    let arrays: Vec<String> = array_paths(set).into_iter().filter(|path| path != dimension).collect();
    let along: Vec<&String> = arrays.iter().filter(|path| axis(set, path, dimension).is_some()).collect();
    let renumbered: Vec<&String> = if along.is_empty() {
        let coordinates = coordinate_paths(set);
        arrays.iter().filter(|path| !coordinates.contains(path) && !options.identical.contains(path)).collect()
    } else {
        along
    };
    // Each with its dimensions; an array without a usable `.zarray` is left for combining to refuse.
    let renumbered: BTreeMap<&str, usize> = renumbered
        .into_iter()
        .filter_map(|path| Some((path.as_str(), zarray(set, path)?["shape"].as_array()?.len())))
        .collect();
    let mut builder = ReferenceSetBuilder::new();
    for (key, reference) in set.iter() {
        if let Some((path, chunk)) = key.rsplit_once('/')
            && let Some(&ndim) = renumbered.get(path)
            && !chunk.starts_with(".z")
        {
            if chunk_indices(chunk, ndim).is_none() {
                return Err(not_a_chunk(name, path, &key, ndim));
            }
            continue;
        }
        builder.insert_reference(&key, reference);
    }
    Ok(builder.build())
}

/// Combine files whose references were [set aside](SetAside): `skeletons` are
/// each file's references [`without_combined_chunks`], named as `set_aside`
/// names them, combined as [`combine_with`](crate::combine_with) combines
/// whole sets (the same checks, the same order, the same result), along one
/// dimension (`options` with no outer ones).
///
/// # Errors
/// As [`combine_with`](crate::combine_with); [`ScanError::Combine`] also if
/// `options` combine along several dimensions.
pub fn combine_streamed(
    skeletons: Vec<(String, ReferenceSet)>,
    options: &CombineOptions,
    set_aside: Arc<dyn SetAside>,
) -> Result<StreamedCombine, ScanError> {
    if let Some((dimension, _)) = options.outer.first() {
        let reason = "combining a file at a time is along one dimension; combine whole sets for several".into();
        return Err(combine_error("", dimension, reason));
    }
    let inputs = skeletons.into_iter().map(|(name, references)| Input { name, references }).collect();
    let mut placements = Vec::new();
    let base = combine_placing(inputs, options, Some(&mut placements))?;
    Ok(StreamedCombine::new(base, placements, set_aside))
}

/// A combined set whose renumbered chunks are read back from each file's
/// set-aside references as it is walked ([`combine_streamed`]): a
/// [`ReferenceSource`] for the writers. A walk visits the metadata, then each
/// array in path order, its chunks in grid order, holding one file's
/// references at a time; so does a lookup of a renumbered chunk (reading its
/// file back), and a listing that reaches below such an array (reading every
/// file back). Reads back block the calling thread.
pub struct StreamedCombine {
    /// Everything but the renumbered chunks.
    base: ReferenceSet,
    /// The arrays whose chunks are renumbered, by path.
    placements: BTreeMap<String, Placement>,
    /// Every array's path, sorted as the parquet layout sorts its fields.
    arrays: Vec<String>,
    /// Whether every key of `base` but metadata is a chunk of an array, its indices joined by `.`.
    dotted: bool,
    set_aside: Arc<dyn SetAside>,
}

impl std::fmt::Debug for StreamedCombine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StreamedCombine")
            .field("base", &self.base.len())
            .field("placements", &self.placements.keys().collect::<Vec<_>>())
            .finish_non_exhaustive()
    }
}

impl StreamedCombine {
    fn new(base: ReferenceSet, placements: Vec<Placement>, set_aside: Arc<dyn SetAside>) -> Self {
        let placements: BTreeMap<String, Placement> = placements.into_iter().map(|p| (p.path.clone(), p)).collect();
        // Chunks of the renumbered arrays come from the files alone (combining the skeletons can
        // carry some, from a file whose array was not set aside as the first file's was).
        let renumbered = |key: &str| {
            key.rsplit_once('/').is_some_and(|(path, chunk)| placements.contains_key(path) && !chunk.starts_with(".z"))
        };
        let base = if base.iter().any(|(key, _)| renumbered(&key)) {
            let mut builder = ReferenceSetBuilder::new();
            base.iter().filter(|(key, _)| !renumbered(key)).for_each(|(key, r)| builder.insert_reference(&key, r));
            builder.build()
        } else {
            base
        };
        let mut arrays = array_paths(&base);
        arrays.sort();
        let ndims: BTreeMap<&str, usize> = arrays
            .iter()
            .filter_map(|path| Some((path.as_str(), zarray(&base, path)?["shape"].as_array()?.len())))
            .collect();
        let dotted = base.iter().all(|(key, _)| {
            is_metadata_key(&key)
                || key.rsplit_once('/').is_some_and(|(path, chunk)| {
                    ndims.get(path).is_some_and(|&ndim| chunk_indices(chunk, ndim).is_some())
                })
        });
        Self { base, placements, arrays, dotted, set_aside }
    }

    /// Everything but the renumbered chunks: the combined metadata and
    /// coordinate, and the arrays taken once.
    #[must_use]
    pub fn base(&self) -> &ReferenceSet {
        &self.base
    }

    /// The same combined set over another `base`: the metadata changed (root
    /// attributes added, say), the renumbered arrays the same.
    #[must_use]
    pub fn with_base(mut self, base: ReferenceSet) -> Self {
        let placements = std::mem::take(&mut self.placements).into_values().collect();
        Self::new(base, placements, self.set_aside)
    }

    /// The chunks of `path` (not renumbered), in grid order.
    fn base_chunks(&self, path: &str) -> Vec<(String, OwnedReference)> {
        let mut chunks: Vec<(Option<Vec<u64>>, String, OwnedReference)> = self
            .base
            .keys_with_prefix(&format!("{path}/"))
            .into_iter()
            .filter_map(|key| {
                let (_, chunk) = key.rsplit_once('/').filter(|(p, c)| *p == path && !c.starts_with(".z"))?;
                let indices = chunk.split('.').map(str::parse).collect::<Result<Vec<u64>, _>>().ok();
                let reference = self.base.get_owned(&key)?;
                Some((indices, key, reference))
            })
            .collect();
        chunks.sort_by(|a, b| (a.0.is_none(), &a.0, &a.1).cmp(&(b.0.is_none(), &b.0, &b.1)));
        chunks.into_iter().map(|(_, key, reference)| (key, reference)).collect()
    }

    /// The chunks of the file `name` of the renumbered array `placement`, renumbered, in grid order.
    fn file_chunks(
        &self,
        placement: &Placement,
        name: &str,
        renumber: Renumber,
    ) -> Result<Vec<(String, OwnedReference)>, SourceError> {
        let set = self.read_back(name)?;
        let prefix = format!("{}/", placement.path);
        let mut chunks = Vec::new();
        for (key, reference) in set.iter_owned() {
            let Some(chunk) = key.strip_prefix(&prefix).filter(|c| !c.contains('/') && !c.starts_with(".z")) else {
                continue;
            };
            let renamed = renumber.name(chunk, placement.ndim).map_err(|why| {
                let reason = match why {
                    Unplaced::NotAChunk => format!("{key:?} is not a chunk key of {:?}", placement.path),
                    Unplaced::Overflow => format!("{key:?} would lie past 2^64 chunks"),
                };
                SourceError::Fetch {
                    what: "references set aside for combining",
                    location: name.into(),
                    source: reason.into(),
                }
            })?;
            let indices: Vec<u64> = renamed.split('.').filter_map(|i| i.parse().ok()).collect();
            chunks.push((indices, format!("{prefix}{renamed}"), reference));
        }
        chunks.sort_by(|a, b| a.0.cmp(&b.0));
        Ok(chunks.into_iter().map(|(_, key, reference)| (key, reference)).collect())
    }

    fn read_back(&self, name: &str) -> Result<Arc<ReferenceSet>, SourceError> {
        self.set_aside.references(name).map_err(|source| SourceError::Fetch {
            what: "references set aside for combining",
            location: name.to_owned(),
            source,
        })
    }

    /// Every reference as a walk visits them.
    fn entries(&self, walk: Walk) -> impl Iterator<Item = Result<(String, OwnedReference), SourceError>> + Send + '_ {
        let metadata = self.base.iter_owned().filter(|(key, _)| is_metadata_key(key));
        let metadata = metadata.map(|(key, reference)| Ok((key.into_owned(), reference)));
        let all = walk == Walk::All;
        let arrays = self.arrays.iter().filter(move |_| all).flat_map(move |path| {
            let chunks: Box<dyn Iterator<Item = Result<(String, OwnedReference), SourceError>> + Send + '_> =
                match self.placements.get(path) {
                    Some(placement) => Box::new(placement.files.iter().flat_map(move |(name, renumber)| {
                        match self.file_chunks(placement, name, *renumber) {
                            Ok(chunks) => chunks.into_iter().map(Ok).collect::<Vec<_>>(),
                            Err(error) => vec![Err(error)],
                        }
                    })),
                    None => Box::new(self.base_chunks(path).into_iter().map(Ok)),
                };
            chunks
        });
        let arrays_set: HashSet<&str> = self.arrays.iter().map(String::as_str).collect();
        let stray = self.base.iter_owned().filter(move |(key, _)| {
            all && !is_metadata_key(key)
                && !key
                    .rsplit_once('/')
                    .is_some_and(|(path, chunk)| arrays_set.contains(path) && !chunk.starts_with(".z"))
        });
        metadata.chain(arrays).chain(stray.map(|(key, reference)| Ok((key.into_owned(), reference))))
    }

    /// Every key that starts with `prefix`.
    fn keys_with_prefix(&self, prefix: &str) -> Result<Vec<String>, SourceError> {
        let mut keys = self.base.keys_with_prefix(prefix);
        for placement in self.placements.values() {
            let folder = format!("{}/", placement.path);
            if !(folder.starts_with(prefix) || prefix.starts_with(&folder)) {
                continue;
            }
            for (name, renumber) in &placement.files {
                let chunks = self.file_chunks(placement, name, *renumber)?;
                keys.extend(chunks.into_iter().map(|(key, _)| key).filter(|key| key.starts_with(prefix)));
            }
        }
        Ok(keys)
    }
}

impl ReferenceSource for StreamedCombine {
    fn lookup(&self, key: &str) -> Result<Lookup, SourceError> {
        let Some((path, chunk)) = key.rsplit_once('/') else { return Ok(Lookup::Ready(self.base.get_owned(key))) };
        let Some(placement) = self.placements.get(path).filter(|_| !chunk.starts_with(".z")) else {
            return Ok(Lookup::Ready(self.base.get_owned(key)));
        };
        let Some(indices) = chunk.split('.').map(str::parse).collect::<Result<Vec<u64>, _>>().ok() else {
            return Ok(Lookup::Ready(None));
        };
        let Some((name, original)) = placement.holder(&indices) else { return Ok(Lookup::Ready(None)) };
        // The file's own key renumbers to this one (a key written otherwise, `07`, is another chunk).
        let found = self.read_back(name)?.get_owned(&format!("{path}/{original}"));
        Ok(Lookup::Ready(found))
    }

    fn list_prefix(&self, prefix: &str) -> Result<Listing, SourceError> {
        Ok(Listing::ready(self.keys_with_prefix(prefix)?, Vec::new()))
    }

    fn list_dir(&self, prefix: &str) -> Result<Listing, SourceError> {
        let (mut keys, mut prefixes) = (Vec::new(), Vec::new());
        for key in self.keys_with_prefix(prefix)? {
            match key[prefix.len()..].split_once('/') {
                Some((folder, _)) => prefixes.push(format!("{prefix}{folder}/")),
                None => keys.push(key),
            }
        }
        prefixes.sort();
        prefixes.dedup();
        Ok(Listing::ready(keys, prefixes))
    }

    fn walk(&self, walk: Walk) -> BoxStream<'_, Result<(String, OwnedReference), SourceError>> {
        Box::pin(stream::iter(self.entries(walk)))
    }

    fn holds_only_dotted_chunk_keys(&self) -> bool {
        // The renumbered chunks are written so; the rest must be too.
        self.dotted
    }
}
