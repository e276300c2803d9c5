//! Combining without holding every file's chunks at once.
//!
//! Each file's references are split as the file is scanned
//! ([`split_combined_chunks`]): the chunks of the arrays that are concatenated
//! or stacked, the bulk of an archive's references, which combining only
//! renumbers, are set aside (on disk, say: a [`SetAside`]); combining holds the
//! rest, what ordering and checking the files need. The combined set
//! ([`StreamedCombine`]) reads the chunks back one file at a time, as a writer
//! walks it, so memory grows with one file's chunks, not with the number of
//! files.

use std::collections::{BTreeMap, HashSet};
use std::sync::Arc;

use futures::stream::{self, BoxStream};
use kerchunk::zarr::metadata::is_metadata_key;
use kerchunk::{
    BoxError, Listing, Lookup, OwnedReference, ReferenceSet, ReferenceSetBuilder, ReferenceSource, SourceError, Walk,
};

use super::{
    CombineOptions, FileRests, Input, array_paths, axis, chunk_indices, combine_error, combine_placing,
    coordinate_paths, not_a_chunk, zarray,
};
use crate::error::ScanError;

/// A renumbered chunk: its combined indices, its key and its reference.
type Chunk = (Vec<u64>, String, OwnedReference);

/// References as a walk gives them.
type Entries<'a> = Box<dyn Iterator<Item = Result<(String, OwnedReference), SourceError>> + Send + 'a>;

/// Where each file's combined chunks ([`split_combined_chunks`]) wait while the
/// files are ordered and checked: what [`StreamedCombine`] reads back, a file at a time.
pub trait SetAside: Send + Sync + std::fmt::Debug {
    /// The chunks of the file `name` (as combining names it), as they were set aside.
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
        self.placed(name, ndim).map(|(_, renamed)| renamed)
    }

    /// The combined indices and name of the chunk `name` of an array of `ndim` dimensions.
    fn placed(self, name: &str, ndim: usize) -> Result<(Vec<u64>, String), Unplaced> {
        let mut indices = chunk_indices(name, ndim).ok_or(Unplaced::NotAChunk)?;
        match self {
            Self::Shift { axis, by } => {
                indices[axis] = indices[axis].checked_add(by).ok_or(Unplaced::Overflow)?;
                let renamed = indices.iter().map(u64::to_string).collect::<Vec<_>>().join(".");
                Ok((indices, renamed))
            }
            // A 0-d array's one chunk is `0`; with the new axis it is the position alone.
            Self::Stack { position, scalar: true } => Ok((vec![position], position.to_string())),
            Self::Stack { position, scalar: false } => {
                indices.insert(0, position);
                Ok((indices, format!("{position}.{name}")))
            }
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

/// `set`, the references of the file `name`, split in two: the chunks of the
/// arrays that combining with `options` renumbers (those along its dimension or,
/// where no array has it, those that gain it), to be [set aside](SetAside), and
/// the rest, what [`combine_streamed`] holds of each file to order and check it.
///
/// # Errors
/// [`ScanError::Combine`] if a key below such an array is neither its metadata
/// nor one of its chunks, as combining would find.
pub fn split_combined_chunks(
    name: &str,
    set: &ReferenceSet,
    options: &CombineOptions,
) -> Result<(ReferenceSet, ReferenceSet), ScanError> {
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
    let (mut rest, mut chunks) = (ReferenceSetBuilder::new(), ReferenceSetBuilder::new());
    for (key, reference) in set.iter() {
        if let Some((path, chunk)) = key.rsplit_once('/')
            && let Some(&ndim) = renumbered.get(path)
            && !chunk.starts_with(".z")
        {
            if chunk_indices(chunk, ndim).is_none() {
                return Err(not_a_chunk(name, path, &key, ndim));
            }
            chunks.insert_reference(&key, reference);
        } else {
            rest.insert_reference(&key, reference);
        }
    }
    Ok((rest.build(), chunks.build()))
}

/// Combine files whose chunks were [set aside](SetAside): `rests` holds each
/// file's references but those chunks ([`split_combined_chunks`]), named as
/// `set_aside` names them, combined as [`combine_with`](crate::combine_with)
/// combines whole sets (the same checks, the same order, the same result),
/// along one dimension (`options` with no outer ones).
///
/// ```
/// use std::collections::HashMap;
/// use std::sync::Arc;
///
/// use kerchunk::{Lookup, Reference, ReferenceSet, ReferenceSetBuilder, ReferenceSource as _};
/// use kerchunk_scan::{CombineOptions, FileRests, SetAside, combine_streamed, split_combined_chunks};
///
/// /// Each file's chunks, held in memory (a tool would write them to disk past a budget).
/// #[derive(Debug, Default)]
/// struct Held(HashMap<String, Arc<ReferenceSet>>);
///
/// impl SetAside for Held {
///     fn references(&self, name: &str) -> Result<Arc<ReferenceSet>, kerchunk::BoxError> {
///         self.0.get(name).cloned().ok_or_else(|| format!("{name} was not set aside").into())
///     }
/// }
///
/// // A file's references: one time, and one chunk of `t(time)` in the file.
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
/// let (mut rests, mut held) = (FileRests::new(), Held::default());
/// // As each file's scan ends: its chunks set aside, the rest held.
/// for (name, time) in [("b.nc", 1.0), ("a.nc", 0.0)] {
///     let (rest, chunks) = split_combined_chunks(name, &file(name, time), &options)?;
///     held.0.insert(name.to_owned(), Arc::new(chunks));
///     rests.push(name.to_owned(), rest);
/// }
/// let combined = combine_streamed(rests, &options, Arc::new(held))?;
/// // Ordered by time: b.nc's chunk comes second, read back from where it was set aside.
/// let Lookup::Ready(Some(second)) = combined.lookup("t/1")? else { panic!("t/1 is missing") };
/// assert_eq!(second.as_reference(), Reference::Range { url: Some("b.nc"), offset: 100, length: 8 });
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
///
/// # Errors
/// As [`combine_with`](crate::combine_with); [`ScanError::Combine`] also if
/// `options` combine along several dimensions, or an array combining
/// concatenates lacks the dimension in some file (its chunks were not set aside).
pub fn combine_streamed(
    rests: FileRests,
    options: &CombineOptions,
    set_aside: Arc<dyn SetAside>,
) -> Result<StreamedCombine, ScanError> {
    if let Some((dimension, _)) = options.outer.first() {
        let reason = "combining a file at a time is along one dimension; combine whole sets for several".into();
        return Err(combine_error("", dimension, reason));
    }
    let inputs = rests.into_files().into_iter().map(|(name, references)| Input { name, references }).collect();
    let mut placements = Vec::new();
    let base = combine_placing(inputs, options, Some(&mut placements))?;
    // A file whose array lacks the dimension kept its chunks, which combining renumbered here.
    for placement in &placements {
        let prefix = format!("{}/", placement.path);
        if base.keys_with_prefix(&prefix).iter().any(|key| !key[prefix.len()..].starts_with(".z")) {
            let first = placement.files.first().map_or("", |(name, _)| name.as_str());
            let reason = format!("{} is among its dimensions in {first} but not in every file", options.dimension);
            return Err(combine_error(first, &placement.path, reason));
        }
    }
    Ok(StreamedCombine::new(base, placements, set_aside))
}

/// A combined set whose renumbered chunks are read back from each file's
/// set-aside chunks as it is walked ([`combine_streamed`]): a
/// [`ReferenceSource`] for the writers. A walk visits the metadata, then each
/// array in path order, its chunks in grid order, holding one file's chunks at
/// a time (all the files' of an array along whose later axis they are
/// concatenated, which interleave in grid order); so does a lookup of a renumbered chunk (reading its
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
    /// The file read back last, for lookups: a writer looks chunks up in grid order, so
    /// one file's chunks one after another.
    last: std::sync::Mutex<Option<(String, Arc<ReferenceSet>)>>,
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
        Self { base, placements, arrays, dotted, set_aside, last: std::sync::Mutex::default() }
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
        Self::new(base, placements, Arc::clone(&self.set_aside))
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

    /// The chunks of the file `name` of the renumbered array `placement`, renumbered, in grid
    /// order, each with its combined indices.
    fn file_chunks(&self, placement: &Placement, name: &str, renumber: Renumber) -> Result<Vec<Chunk>, SourceError> {
        let set = self.read_back(name)?;
        let prefix = format!("{}/", placement.path);
        let mut chunks = Vec::new();
        for (key, reference) in set.iter_owned() {
            let Some(chunk) = key.strip_prefix(&prefix).filter(|c| !c.contains('/') && !c.starts_with(".z")) else {
                continue;
            };
            let (indices, renamed) = renumber.placed(chunk, placement.ndim).map_err(|why| {
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
            chunks.push((indices, format!("{prefix}{renamed}"), reference));
        }
        chunks.sort_by(|a, b| a.0.cmp(&b.0));
        Ok(chunks)
    }

    /// The chunks of the renumbered array `placement`, in grid order: one file's after
    /// another's where the dimension comes first (or is new), so one file is read back at a
    /// time; where it comes later, every file's chunks interleave in grid order, and all are read
    /// back and sorted together (memory as combining whole sets).
    fn placed_chunks<'a>(&'a self, placement: &'a Placement) -> Entries<'a> {
        let one_at_a_time =
            placement.files.iter().all(|(_, r)| matches!(r, Renumber::Shift { axis: 0, .. } | Renumber::Stack { .. }));
        let keyed = |chunks: Vec<Chunk>| chunks.into_iter().map(|(_, key, reference)| Ok((key, reference)));
        if one_at_a_time {
            return Box::new(placement.files.iter().flat_map(move |(name, renumber)| {
                match self.file_chunks(placement, name, *renumber) {
                    Ok(chunks) => keyed(chunks).collect::<Vec<_>>(),
                    Err(error) => vec![Err(error)],
                }
            }));
        }
        let mut all = Vec::new();
        for (name, renumber) in &placement.files {
            match self.file_chunks(placement, name, *renumber) {
                Ok(chunks) => all.extend(chunks),
                Err(error) => return Box::new(std::iter::once(Err(error))),
            }
        }
        all.sort_by(|a, b| a.0.cmp(&b.0));
        Box::new(keyed(all))
    }

    fn read_back(&self, name: &str) -> Result<Arc<ReferenceSet>, SourceError> {
        let mut last = self.last.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some((_, set)) = last.as_ref().filter(|(held, _)| held == name) {
            return Ok(Arc::clone(set));
        }
        let set = self.set_aside.references(name).map_err(|source| SourceError::Fetch {
            what: "references set aside for combining",
            location: name.to_owned(),
            source,
        })?;
        *last = Some((name.to_owned(), Arc::clone(&set)));
        Ok(set)
    }

    /// Every reference as a walk visits them.
    fn entries(&self, walk: Walk) -> impl Iterator<Item = Result<(String, OwnedReference), SourceError>> + Send + '_ {
        let metadata = self.base.iter_owned().filter(|(key, _)| is_metadata_key(key));
        let metadata = metadata.map(|(key, reference)| Ok((key.into_owned(), reference)));
        let all = walk == Walk::All;
        let arrays = self.arrays.iter().filter(move |_| all).flat_map(move |path| -> Entries<'_> {
            match self.placements.get(path) {
                Some(placement) => self.placed_chunks(placement),
                None => Box::new(self.base_chunks(path).into_iter().map(Ok)),
            }
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
                keys.extend(chunks.into_iter().map(|(_, key, _)| key).filter(|key| key.starts_with(prefix)));
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

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use futures::StreamExt as _;
    use kerchunk::Reference;

    use super::*;

    #[derive(Debug)]
    struct Held(HashMap<String, Arc<ReferenceSet>>);

    impl SetAside for Held {
        fn references(&self, name: &str) -> Result<Arc<ReferenceSet>, BoxError> {
            self.0.get(name).cloned().ok_or_else(|| format!("no {name}").into())
        }
    }

    /// A file at time `start` whose `v(x, time)` has two chunks along `x`, one along time.
    fn file(name: &str, start: f64) -> ReferenceSet {
        file_with(name, start, r#"["x","time"]"#)
    }

    /// The same, `v`'s dimensions named `dims`.
    fn file_with(name: &str, start: f64, dims: &str) -> ReferenceSet {
        let mut builder = ReferenceSetBuilder::new();
        let meta = |shape: &str| {
            format!(
                r#"{{"shape":{shape},"chunks":{shape},"dtype":"<f8","fill_value":null,"compressor":null,"filters":null,"order":"C","zarr_format":2}}"#
            )
        };
        builder.insert_inline("time/.zarray", meta("[1]").as_bytes());
        builder.insert_inline("time/.zattrs", br#"{"_ARRAY_DIMENSIONS":["time"]}"#);
        builder.insert_inline("time/0", &start.to_le_bytes());
        let v = r#"{"shape":[2,1],"chunks":[1,1],"dtype":"<f8","fill_value":null,"compressor":null,"filters":null,"order":"C","zarr_format":2}"#;
        builder.insert_inline("v/.zarray", v.as_bytes());
        builder.insert_inline("v/.zattrs", format!(r#"{{"_ARRAY_DIMENSIONS":{dims}}}"#).as_bytes());
        builder.insert_range("v/0.0", Some(name), 0, 8);
        builder.insert_range("v/1.0", Some(name), 8, 8);
        builder.build()
    }

    /// Along an axis that is not the first, the files' chunks interleave: the walk still gives
    /// them in grid order (what the parquet writer needs), and the same references as
    /// combining whole sets.
    #[test]
    fn chunks_along_a_later_axis_are_walked_in_grid_order() {
        let options = CombineOptions::new("time");
        let names = ["b.nc", "a.nc"];
        let whole = crate::combine_with(
            names.iter().zip([1.0, 0.0]).map(|(n, t)| ((*n).to_owned(), file(n, t))).collect(),
            &options,
        )
        .unwrap();
        let (mut held, mut rests) = (HashMap::new(), FileRests::new());
        for (name, start) in names.iter().zip([1.0, 0.0]) {
            let (rest, chunks) = split_combined_chunks(name, &file(name, start), &options).unwrap();
            held.insert((*name).to_owned(), Arc::new(chunks));
            rests.push((*name).to_owned(), rest);
        }
        let held = Held(held);
        let streamed = combine_streamed(rests, &options, Arc::new(held)).unwrap();
        let runtime = tokio::runtime::Builder::new_current_thread().build().unwrap();
        let walked: Vec<(String, OwnedReference)> =
            runtime.block_on(streamed.walk(Walk::All).map(Result::unwrap).collect::<Vec<_>>());
        let chunks: Vec<&str> =
            walked.iter().map(|(k, _)| k.as_str()).filter(|k| k.starts_with("v/") && !k.contains(".z")).collect();
        assert_eq!(chunks, ["v/0.0", "v/0.1", "v/1.0", "v/1.1"]);
        assert_eq!(walked.len(), whole.len());
        for (key, reference) in &walked {
            assert_eq!(Some(reference.as_reference()), whole.get(key), "{key}");
        }
        let Ok(Lookup::Ready(Some(found))) = streamed.lookup("v/1.1") else { panic!("v/1.1") };
        assert_eq!(found.as_reference(), Reference::Range { url: Some("b.nc"), offset: 8, length: 8 });
        assert!(matches!(streamed.lookup("v/2.0"), Ok(Lookup::Ready(None))));
    }

    /// A file whose array lacks the dimension the first file's has (beside another array that
    /// has it) kept its chunks: combining a file at a time refuses it, naming the array, rather
    /// than lose them.
    #[test]
    fn an_array_without_the_dimension_in_one_file_is_an_error() {
        let options = CombineOptions::new("time");
        let mut rests = FileRests::new();
        let mut held = HashMap::new();
        for (name, start, dims) in [("a.nc", 0.0, r#"["x","time"]"#), ("b.nc", 1.0, r#"["x","t"]"#)] {
            let mut builder = ReferenceSetBuilder::new();
            file_with(name, start, dims).iter().for_each(|(key, r)| builder.insert_reference(&key, r));
            let w = r#"{"shape":[1],"chunks":[1],"dtype":"<f8","fill_value":null,"compressor":null,"filters":null,"order":"C","zarr_format":2}"#;
            builder.insert_inline("w/.zarray", w.as_bytes());
            builder.insert_inline("w/.zattrs", br#"{"_ARRAY_DIMENSIONS":["time"]}"#);
            builder.insert_range("w/0", Some(name), 16, 8);
            let (rest, chunks) = split_combined_chunks(name, &builder.build(), &options).unwrap();
            held.insert(name.to_owned(), Arc::new(chunks));
            rests.push(name.to_owned(), rest);
        }
        let error = combine_streamed(rests, &options, Arc::new(Held(held))).unwrap_err().to_string();
        assert!(error.contains("\"v\"") && error.contains("not in every file"), "{error}");
    }
}
