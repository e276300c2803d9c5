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
//!
//! Along several dimensions, the chunks set aside are those of the arrays
//! renumbered along every one of them (`t(member, time, x)`); an array along
//! some only (`time_bnds(time)`, or a member's `height(member)`) is combined as
//! whole sets are. Each set-aside array's files are placed within their group
//! along the inner dimensions, and the groups along the outer one
//! (each holder of its chunks a group of files).

use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::Arc;

use futures::stream::{self, BoxStream};
use kerchunk::zarr::metadata::is_metadata_key;
use kerchunk::{BoxError, Listing, Lookup, OwnedReference, ReferenceSet, ReferenceSource, SourceError, Walk};

use kerchunk_v3::Uneven;

use super::layout::{ChunkSplit, renumbered_arrays};
use super::placement::{Holder, Placement, Renumber, Unplaced, dotted, push_dotted};
use super::{CombineOptions, FileRests, Input, array_paths, chunk_indices, combine_error, combine_placing, zarray};
use crate::error::CombineError;

/// A renumbered chunk: its combined indices, its name in its array where that is not its
/// indices joined by `.` ([`Renumber::renumber`]), and its reference.
type Chunk = (Vec<u64>, Option<String>, OwnedReference);

/// Renumbered chunks as they are read back.
type Chunks<'a> = Box<dyn Iterator<Item = Result<Chunk, SourceError>> + Send + 'a>;

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

/// Each file's chunks held in memory, by name: where a budget is no concern (a few files, or
/// sets in memory already, read back whole with [`combined_rest`]).
impl<S: std::hash::BuildHasher + Send + Sync> SetAside for HashMap<String, Arc<ReferenceSet>, S> {
    fn references(&self, name: &str) -> Result<Arc<ReferenceSet>, BoxError> {
        self.get(name).cloned().ok_or_else(|| format!("no references were set aside for {name}").into())
    }
}

/// `set`, the references of the file `name`, split in two: the chunks of the
/// arrays that combining with `options` renumbers along each of its dimensions
/// (those along it or, where no array has it, those that gain it), with each
/// such array's `.zarray` (a copy, which keeps the chunks in a dense table), to be
/// [set aside](SetAside), and the rest, what [`combine_streamed`] holds of each
/// file to order and check it.
///
/// # Errors
/// [`CombineError::Combine`] if a key below such an array is neither its metadata
/// nor one of its chunks, as combining would find.
pub fn split_combined_chunks(
    name: &str,
    set: &ReferenceSet,
    options: &CombineOptions,
) -> Result<(ReferenceSet, ReferenceSet), CombineError> {
    let renumbered = renumbered_arrays(set, options);
    split(ChunkSplit::of_arrays(name, &renumbered, Some(set)), set)
}

/// What [`split_combined_chunks`] holds of `set` besides the chunks it sets aside, alone: for
/// a set that is itself what [`combine_streamed`] reads back, its [`SetAside`] giving the whole
/// set under `name` (the reads take the renumbered arrays' chunks from it and nothing else), so
/// that its chunks are never copied. An append's set, in memory already, is held so.
///
/// # Errors
/// As [`split_combined_chunks`].
pub fn combined_rest(name: &str, set: &ReferenceSet, options: &CombineOptions) -> Result<ReferenceSet, CombineError> {
    let renumbered = renumbered_arrays(set, options);
    Ok(split(ChunkSplit::of_arrays(name, &renumbered, None), set)?.0)
}

/// Every reference of `set` given to `split`, and what it makes of them.
fn split(mut split: ChunkSplit<'_>, set: &ReferenceSet) -> Result<(ReferenceSet, ReferenceSet), CombineError> {
    for (key, reference) in set.iter() {
        split.insert(&key, reference)?;
    }
    Ok(split.finish())
}

/// Combine files whose chunks were [set aside](SetAside): `rests` holds each
/// file's references but those chunks ([`split_combined_chunks`]), named as
/// `set_aside` names them, combined as [`combine_with`](crate::combine_with)
/// combines whole sets (the same checks, the same order, the same result),
/// along one dimension or several.
///
/// ```
/// use std::collections::HashMap;
/// use std::sync::Arc;
///
/// use kerchunk::{Lookup, Reference, ReferenceSet, ReferenceSetBuilder, ReferenceSource as _};
/// use kerchunk_combine::{CombineOptions, FileRests, combine_streamed, split_combined_chunks};
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
/// // Each file's chunks held in memory (a tool would write them to disk past a budget).
/// let (mut rests, mut held) = (FileRests::new(), HashMap::<String, Arc<ReferenceSet>>::new());
/// // As each file's scan ends: its chunks set aside, the rest held.
/// for (name, time) in [("b.nc", 1.0), ("a.nc", 0.0)] {
///     let (rest, chunks) = split_combined_chunks(name, &file(name, time), &options)?;
///     held.insert(name.to_owned(), Arc::new(chunks));
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
/// As [`combine_with`](crate::combine_with); [`CombineError::Combine`] also if an
/// array combining concatenates lacks the dimension in some file (its chunks were
/// not set aside), or a file set aside chunks of an array combining takes once
/// (which the first file has without the dimension).
pub fn combine_streamed(
    rests: FileRests,
    options: &CombineOptions,
    set_aside: Arc<dyn SetAside>,
) -> Result<StreamedCombine, CombineError> {
    let inputs: Vec<Input> =
        rests.into_files().into_iter().map(|(name, references)| Input { name, references }).collect();
    // Each array some file set aside, and the first file that did, for the check below that
    // combining places them all.
    let mut set_aside_by: BTreeMap<String, String> = BTreeMap::new();
    // Files whose metadata is that of a set seen before set aside the same arrays.
    let mut metadata_seen = HashSet::new();
    for input in &inputs {
        if let Some(like) = input.references.metadata_as()
            && !metadata_seen.insert(Arc::as_ptr(like))
        {
            continue;
        }
        for path in renumbered_arrays(&input.references, options).into_keys() {
            set_aside_by.entry(path).or_insert_with(|| input.name.clone());
        }
    }
    let mut placements = Vec::new();
    let (base, uneven) = combine_placing(inputs, options, Some(&mut placements))?;
    // A file whose array lacks the dimension kept its chunks, which combining renumbered here.
    for placement in &placements {
        let prefix = format!("{}/", placement.path);
        if base.keys_with_prefix(&prefix).iter().any(|key| !key[prefix.len()..].starts_with(".z")) {
            let first = placement.first_file();
            let reason = format!("{} is among its dimensions in {first} but not in every file", options.dimension);
            return Err(combine_error(first, &placement.path, reason));
        }
    }
    // A file's chunks set aside that no placement reads back would be lost.
    for (path, name) in set_aside_by {
        if !placements.iter().any(|placement| placement.path == path) {
            let reason = "its chunks were set aside to be renumbered, but combining takes the array once".into();
            return Err(combine_error(&name, &path, reason));
        }
    }
    let mut combined = StreamedCombine::new(base, placements, set_aside);
    combined.uneven = uneven;
    Ok(combined)
}

/// A combined set whose renumbered chunks are read back from each file's
/// set-aside chunks as it is walked ([`combine_streamed`]): a
/// [`ReferenceSource`] for the writers. A walk visits the metadata, then each
/// array in path order, its chunks in grid order, holding one file's chunks at
/// a time where the files' chunks follow one another in grid order: along each
/// array's first axis, a new one, or an axis with one chunk along every axis
/// before it (`time` in `t(member, time, x)`, one member a file). Where they
/// interleave (a later axis, after one of several chunks), it holds all the
/// chunks that interleave: every file's, or, along several dimensions, one
/// outer group's where only the inner dimension interleaves. A lookup of a renumbered chunk reads its
/// file back; a listing that reaches below such an array reads every file back.
/// Reads back block the calling thread.
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
    /// The arrays whose files' chunks make no regular grid along the dimension: the set is
    /// written as Zarr v3 ([`StreamedCombine::written_as_v3`]).
    uneven: BTreeMap<String, Uneven>,
    /// Once written as Zarr v3: `base` as v3 (its metadata as `zarr.json`, its chunks under v3
    /// keys); the renumbered chunks are then named with v3 keys as they are read back.
    v3_base: Option<Box<ReferenceSet>>,
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
        let last = std::sync::Mutex::default();
        Self { base, placements, arrays, dotted, set_aside, last, uneven: BTreeMap::new(), v3_base: None }
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
        let uneven = std::mem::take(&mut self.uneven);
        Self { uneven, ..Self::new(base, placements, Arc::clone(&self.set_aside)) }
    }

    /// Whether some array's files make uneven chunks along the dimension (lengths that are
    /// not a multiple of the chunk length, or files chunked differently): the set is then
    /// written as Zarr v3, [`StreamedCombine::written_as_v3`].
    #[must_use]
    pub fn is_uneven(&self) -> bool {
        !self.uneven.is_empty()
    }

    /// The combined set as Zarr v3, its uneven arrays on rectilinear grids
    /// ([`kerchunk_v3::set_v3`]): the metadata and the chunks held (the coordinate, the arrays
    /// taken once) written again now, and the chunks set aside named with v3 keys as a walk
    /// reads them back, a file at a time, as before.
    ///
    /// # Errors
    /// [`CombineError::Combine`] naming the array if the set cannot be written as Zarr v3.
    pub fn written_as_v3(mut self) -> Result<Self, CombineError> {
        let v3 = kerchunk_v3::set_v3(&self.base, &self.uneven)
            .map_err(|error| combine_error("the combined set", &error.path, error.reason))?;
        self.v3_base = Some(Box::new(v3));
        Ok(self)
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

    /// The chunks the file `name` set aside of the renumbered array `placement`, renumbered
    /// by `renumber`, in grid order, each with its combined indices.
    fn file_chunks(&self, placement: &Placement, name: &str, renumber: Renumber) -> Result<Vec<Chunk>, SourceError> {
        let set = self.read_back(name)?;
        let prefix = format!("{}/", placement.path);
        let mut chunks = Vec::new();
        // A chunk by its name (perhaps a key, under the array, that is not a chunk), placed.
        let named = |chunk: &str, reference: OwnedReference| -> Result<Option<Chunk>, SourceError> {
            if chunk.contains('/') || chunk.starts_with(".z") {
                return Ok(None);
            }
            let (indices, renamed) =
                renumber.named(chunk, placement.ndim).map_err(|why| unplaced(why, placement, chunk, name))?;
            Ok(Some((indices, renamed, reference)))
        };
        // This array's chunks alone: its table's, and the keys under it no table holds (a set's
        // every key, walked once for each of its arrays, made combining quadratic in arrays).
        if let Some((grid, held)) = set.array_chunks_owned(&placement.path) {
            // A table's chunk is named by its indices, which are taken without writing the
            // name where it would be their indices joined by `.`.
            let by_indices = !grid.is_v3() && grid.separator() == '.' && !grid.dims().is_empty();
            for (position, reference) in held {
                let outside = || SourceError::Fetch {
                    what: "references set aside for combining",
                    location: name.to_owned(),
                    source: format!("{:?}: chunk {position} lies outside its grid", placement.path).into(),
                };
                if by_indices {
                    let mut indices = grid.indices(position).ok_or_else(outside)?;
                    let renamed = renumber
                        .renumber(&mut indices, None, placement.ndim)
                        .map_err(|why| unplaced(why, placement, &dotted(&indices), name))?;
                    chunks.push((indices, renamed, reference));
                } else {
                    chunks.extend(named(&grid.chunk_name(position).ok_or_else(outside)?, reference)?);
                }
            }
        }
        for (key, _) in set.loose().filter(|(key, _)| key.starts_with(&prefix)) {
            if let Some(reference) = set.get_owned(key) {
                chunks.extend(named(&key[prefix.len()..], reference)?);
            }
        }
        chunks.sort_by(|a, b| a.0.cmp(&b.0));
        Ok(chunks)
    }

    /// The chunks of the renumbered array `placement`, in grid order, each with its combined
    /// indices and its name in the array. Where its holders' chunks follow one another in grid
    /// order at every level ([`Placement::in_grid_order`]), one file is read back at a time;
    /// otherwise the holders' chunks interleave, and all are read back and sorted together
    /// (memory as combining whole sets).
    fn placed_chunks<'a>(&'a self, placement: &'a Placement) -> Chunks<'a> {
        let each =
            placement.holders.iter().map(move |(holder, renumber)| self.held_chunks(placement, holder, *renumber));
        if placement.in_grid_order() {
            return Box::new(each.flatten());
        }
        let mut all = Vec::new();
        for chunk in each.flatten() {
            match chunk {
                Ok(chunk) => all.push(chunk),
                Err(error) => return Box::new(std::iter::once(Err(error))),
            }
        }
        all.sort_by(|a, b| a.0.cmp(&b.0));
        Box::new(all.into_iter().map(Ok))
    }

    /// The chunks of one holder of `placement` (a file, or a group of them), renumbered by
    /// `renumber`, in the holder's grid order (a file's read back when this is called).
    fn held_chunks<'a>(&'a self, placement: &'a Placement, holder: &'a Holder, renumber: Renumber) -> Chunks<'a> {
        match holder {
            Holder::File(name) => match self.file_chunks(placement, name, renumber) {
                Ok(chunks) => Box::new(chunks.into_iter().map(Ok)),
                Err(error) => Box::new(std::iter::once(Err(error))),
            },
            Holder::Group(group) => Box::new(self.placed_chunks(group).map(move |chunk| {
                let (mut indices, name, reference) = chunk?;
                let renamed = renumber.renumber(&mut indices, name.as_deref(), placement.ndim).map_err(|why| {
                    let chunk = name.unwrap_or_else(|| dotted(&indices));
                    unplaced(why, placement, &chunk, group.first_file())
                })?;
                Ok((indices, renamed, reference))
            })),
        }
    }

    /// The chunks of `placement` with their keys, as a walk gives them.
    fn placed_entries<'a>(&'a self, placement: &'a Placement) -> Entries<'a> {
        let v3 = self.v3_base.is_some();
        Box::new(self.placed_chunks(placement).map(move |chunk| {
            let (indices, name, reference) = chunk?;
            let key = if v3 {
                kerchunk_v3::chunk_key(&placement.path, &indices)
            } else {
                let mut key = String::with_capacity(placement.path.len() + 1 + 4 * indices.len());
                key.push_str(&placement.path);
                key.push('/');
                match name {
                    Some(name) => key.push_str(&name),
                    None => push_dotted(&mut key, &indices),
                }
                key
            };
            Ok((key, reference))
        }))
    }

    /// An uneven set read as Zarr v2 would place its chunks on a grid they do not make: an
    /// error, unless it was written as Zarr v3 ([`StreamedCombine::written_as_v3`]).
    fn regular(&self) -> Result<(), SourceError> {
        match self.uneven.keys().next() {
            Some(path) => Err(SourceError::Fetch {
                what: "a combined set",
                location: path.clone(),
                source: "its files' chunks are uneven: the set is read as Zarr v3 only (written_as_v3)".into(),
            }),
            None => Ok(()),
        }
    }

    /// Every reference of the set written as Zarr v3 as a walk visits them: the metadata, then
    /// each array's chunks (those set aside read back a file at a time).
    fn v3_entries<'a>(
        &'a self,
        v3: &'a ReferenceSet,
        walk: Walk,
    ) -> impl Iterator<Item = Result<(String, OwnedReference), SourceError>> + Send + 'a {
        let is_node = |key: &str| key == "zarr.json" || key.ends_with("/zarr.json");
        let metadata = v3.iter_owned().filter(move |(key, _)| is_node(key));
        let metadata = metadata.map(|(key, reference)| Ok((key.into_owned(), reference)));
        let all = walk == Walk::All;
        let held = v3.iter_owned().filter(move |(key, _)| all && !is_node(key));
        let held = held.map(|(key, reference)| Ok((key.into_owned(), reference)));
        let placed = self.placements.values().filter(move |_| all).flat_map(move |p| self.placed_entries(p));
        metadata.chain(held).chain(placed)
    }

    /// The reference of `key`, a v3 key of the set written as Zarr v3: held, or a renumbered
    /// chunk read back from its file.
    fn v3_lookup(&self, v3: &ReferenceSet, key: &str) -> Result<Lookup, SourceError> {
        if let Some(found) = v3.get_owned(key) {
            return Ok(Lookup::Ready(Some(found)));
        }
        for (path, placement) in &self.placements {
            let Some(rest) = key.strip_prefix(path.as_str()).and_then(|rest| rest.strip_prefix("/c")) else {
                continue;
            };
            let indices = rest.split('/').skip(1).map(str::parse).collect::<Result<Vec<u64>, _>>();
            let Some((name, original)) = indices.ok().and_then(|indices| placement.holder(&indices)) else {
                return Ok(Lookup::Ready(None));
            };
            return Ok(Lookup::Ready(self.read_back(name)?.get_owned(&format!("{path}/{original}"))));
        }
        Ok(Lookup::Ready(None))
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
                Some(placement) => self.placed_entries(placement),
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
        let mut keys = self.v3_base.as_deref().unwrap_or(&self.base).keys_with_prefix(prefix);
        for placement in self.placements.values() {
            let folder = format!("{}/", placement.path);
            if !(folder.starts_with(prefix) || prefix.starts_with(&folder)) {
                continue;
            }
            for entry in self.placed_entries(placement) {
                let (key, _) = entry?;
                if key.starts_with(prefix) {
                    keys.push(key);
                }
            }
        }
        Ok(keys)
    }
}

/// The error of a chunk of a holder of `placement` (the file `file`, or a group whose first file
/// it is) that cannot be renumbered, the chunk `name`.
fn unplaced(why: Unplaced, placement: &Placement, name: &str, file: &str) -> SourceError {
    let key = format!("{}/{name}", placement.path);
    let reason = match why {
        Unplaced::NotAChunk => format!("{key:?} is not a chunk key of {:?}", placement.path),
        Unplaced::Overflow => format!("{key:?} would lie past 2^64 chunks"),
    };
    SourceError::Fetch { what: "references set aside for combining", location: file.into(), source: reason.into() }
}

impl ReferenceSource for StreamedCombine {
    fn lookup(&self, key: &str) -> Result<Lookup, SourceError> {
        if let Some(v3) = &self.v3_base {
            return self.v3_lookup(v3, key);
        }
        self.regular()?;
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
        match &self.v3_base {
            Some(v3) => Box::pin(stream::iter(self.v3_entries(v3, walk))),
            None => match self.regular() {
                Ok(()) => Box::pin(stream::iter(self.entries(walk))),
                Err(error) => Box::pin(stream::iter(std::iter::once(Err(error)))),
            },
        }
    }

    fn holds_only_dotted_chunk_keys(&self) -> bool {
        // The renumbered chunks are written so; the rest must be too. A v3 set's keys are not.
        self.dotted && self.v3_base.is_none()
    }
}

#[cfg(test)]
mod tests {
    use futures::StreamExt as _;
    use kerchunk::{Reference, ReferenceSetBuilder};

    use super::*;

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

    /// Files of 3 and 2 times in chunks of 2 along time: combined a file at a time, the set is
    /// written as Zarr v3 as its walk goes, with the same references under the same v3 keys as
    /// combining the whole sets gives, and its chunks looked up by their v3 keys.
    #[test]
    fn an_uneven_set_is_walked_and_looked_up_as_zarr_v3() {
        let uneven = |name: &str, times: &[f64]| {
            let mut builder = ReferenceSetBuilder::new();
            let zarray = |n: usize, chunk: usize| {
                format!(
                    r#"{{"shape":[{n}],"chunks":[{chunk}],"dtype":"<f8","fill_value":null,"compressor":null,"filters":null,"order":"C","zarr_format":2}}"#
                )
            };
            builder.insert_inline("time/.zarray", zarray(times.len(), times.len()).as_bytes());
            builder.insert_inline("time/.zattrs", br#"{"_ARRAY_DIMENSIONS":["time"]}"#);
            builder.insert_inline("time/0", &times.iter().flat_map(|t| t.to_le_bytes()).collect::<Vec<u8>>());
            builder.insert_inline("v/.zarray", zarray(times.len(), 2).as_bytes());
            builder.insert_inline("v/.zattrs", br#"{"_ARRAY_DIMENSIONS":["time"]}"#);
            for chunk in 0..times.len().div_ceil(2) {
                builder.insert_range(&format!("v/{chunk}"), Some(name), 16 * chunk as u64, 16);
            }
            builder.build()
        };
        let options = CombineOptions::new("time");
        let files = || {
            [("b.nc".to_owned(), uneven("b.nc", &[3.0, 4.0])), ("a.nc".to_owned(), uneven("a.nc", &[0.0, 1.0, 2.0]))]
        };
        let whole = crate::combine_with(files().into_iter().collect(), &options).unwrap();
        let (mut held, mut rests) = (HashMap::new(), FileRests::new());
        for (name, set) in &files() {
            let (rest, chunks) = split_combined_chunks(name, set, &options).unwrap();
            held.insert(name.clone(), Arc::new(chunks));
            rests.push(name.clone(), rest);
        }
        let streamed = combine_streamed(rests, &options, Arc::new(held)).unwrap();
        assert!(streamed.is_uneven());
        let runtime = tokio::runtime::Builder::new_current_thread().build().unwrap();
        // Read as v2, its chunks would be misplaced: refused until it is written as v3.
        let first = runtime.block_on(streamed.walk(Walk::All).next()).unwrap();
        assert!(first.unwrap_err().to_string().contains("the set is read as Zarr v3 only"));
        assert!(streamed.lookup("v/2").is_err());
        let v3 = streamed.written_as_v3().unwrap();
        let walked: Vec<(String, OwnedReference)> =
            runtime.block_on(v3.walk(Walk::All).map(Result::unwrap).collect::<Vec<_>>());
        let mut keys: Vec<&str> = walked.iter().map(|(k, _)| k.as_str()).collect();
        keys.sort_unstable();
        assert_eq!(keys, ["time/c/0", "time/zarr.json", "v/c/0", "v/c/1", "v/c/2", "v/zarr.json", "zarr.json"]);
        assert_eq!(walked.len(), whole.len());
        for (key, reference) in &walked {
            assert_eq!(Some(reference.as_reference()), whole.get(key), "{key}");
        }
        let Ok(Lookup::Ready(Some(found))) = v3.lookup("v/c/2") else { panic!("v/c/2") };
        assert_eq!(found.as_reference(), Reference::Range { url: Some("b.nc"), offset: 0, length: 16 });
        assert!(matches!(v3.lookup("v/c/3"), Ok(Lookup::Ready(None))));
        assert!(matches!(v3.lookup("v/1"), Ok(Lookup::Ready(None))));
        assert!(matches!(v3.lookup("v/zarr.json"), Ok(Lookup::Ready(Some(_)))));
    }

    /// `files` combined whole and a file at a time with `options`: the streamed combine,
    /// after a check that its walk gives the whole set's references, in the writers' order.
    fn streamed_as_whole(files: &[(&str, ReferenceSet)], options: &CombineOptions) -> StreamedCombine {
        let copy = |set: &ReferenceSet| {
            let mut builder = ReferenceSetBuilder::new();
            set.iter().for_each(|(key, reference)| builder.insert_reference(&key, reference));
            builder.build()
        };
        let owned = || files.iter().map(|(n, set)| ((*n).to_owned(), copy(set))).collect::<Vec<_>>();
        let whole = crate::combine_with(owned(), options).unwrap();
        let (mut held, mut rests) = (HashMap::new(), FileRests::new());
        for (name, set) in owned() {
            let (rest, chunks) = split_combined_chunks(&name, &set, options).unwrap();
            held.insert(name.clone(), Arc::new(chunks));
            rests.push(name, rest);
        }
        let streamed = combine_streamed(rests, options, Arc::new(held)).unwrap();
        let runtime = tokio::runtime::Builder::new_current_thread().build().unwrap();
        let walked: Vec<(String, OwnedReference)> =
            runtime.block_on(streamed.walk(Walk::All).map(Result::unwrap).collect::<Vec<_>>());
        assert_eq!(walked.len(), whole.len());
        for (key, reference) in &walked {
            assert_eq!(Some(reference.as_reference()), whole.get(key), "{key}");
        }
        let chunks: Vec<&String> = walked.iter().map(|(k, _)| k).filter(|k| !k.contains(".z")).collect();
        assert!(chunks.is_sorted(), "{chunks:?}");
        streamed
    }

    /// One member's file at one time, both in its data: `t(member, time, x)` in two chunks,
    /// `w(time)` the same in every member, `s(member)` the same at every time.
    fn member_file(name: &str, member: f64, time: f64) -> ReferenceSet {
        let mut builder = ReferenceSetBuilder::new();
        for (path, dims, value) in [("time", "time", time), ("member", "member", member), ("w", "time", time)] {
            builder.insert_inline(&format!("{path}/.zarray"), meta("[1]", "[1]").as_bytes());
            builder
                .insert_inline(&format!("{path}/.zattrs"), format!(r#"{{"_ARRAY_DIMENSIONS":["{dims}"]}}"#).as_bytes());
            builder.insert_inline(&format!("{path}/0"), &value.to_le_bytes());
        }
        builder.insert_inline("s/.zarray", meta("[1]", "[1]").as_bytes());
        builder.insert_inline("s/.zattrs", br#"{"_ARRAY_DIMENSIONS":["member"]}"#);
        builder.insert_range("s/0", Some(name), 100, 8);
        builder.insert_inline("t/.zarray", meta("[1,1,2]", "[1,1,1]").as_bytes());
        builder.insert_inline("t/.zattrs", br#"{"_ARRAY_DIMENSIONS":["member","time","x"]}"#);
        builder.insert_range("t/0.0.0", Some(name), 0, 8);
        builder.insert_range("t/0.0.1", Some(name), 8, 8);
        builder.build()
    }

    /// The `.zarray` of a float64 array of `shape` in chunks of `chunks` (JSON lists).
    fn meta(shape: &str, chunks: &str) -> String {
        format!(
            r#"{{"shape":{shape},"chunks":{chunks},"dtype":"<f8","fill_value":null,"compressor":null,"filters":null,"order":"C","zarr_format":2}}"#
        )
    }

    /// A file at one time, holding no member: `v(time, x)` in two chunks along x.
    fn series_file(name: &str, time: f64) -> ReferenceSet {
        let mut builder = ReferenceSetBuilder::new();
        builder.insert_inline("time/.zarray", meta("[1]", "[1]").as_bytes());
        builder.insert_inline("time/.zattrs", br#"{"_ARRAY_DIMENSIONS":["time"]}"#);
        builder.insert_inline("time/0", &time.to_le_bytes());
        builder.insert_inline("v/.zarray", meta("[1,2]", "[1,1]").as_bytes());
        builder.insert_inline("v/.zattrs", br#"{"_ARRAY_DIMENSIONS":["time","x"]}"#);
        builder.insert_range("v/0.0", Some(name), 0, 8);
        builder.insert_range("v/0.1", Some(name), 8, 8);
        builder.build()
    }

    /// Along time within each member, then along member, both from the data: only the chunks
    /// of the array along both wait to be read back, each from its file through its member's
    /// group; `w` (along time only) and `s` (along member only) are combined as whole sets are.
    #[test]
    fn along_two_dimensions_the_chunks_along_both_are_read_back() {
        let options = CombineOptions::new("time").then_along("member", crate::CoordinateSource::Auto).unwrap();
        let files: Vec<(&str, ReferenceSet)> =
            [("m7_t1", 7.0, 1.0), ("m2_t0", 2.0, 0.0), ("m7_t0", 7.0, 0.0), ("m2_t1", 2.0, 1.0)]
                .into_iter()
                .map(|(name, member, time)| (name, member_file(name, member, time)))
                .collect();
        let (_, set_aside) = split_combined_chunks("m7_t1", &files[0].1, &options).unwrap();
        let keys: Vec<String> = set_aside.iter().map(|(key, _)| key.into_owned()).collect();
        assert_eq!(keys, ["t/.zarray", "t/0.0.0", "t/0.0.1"], "only t's chunks are set aside, with t's .zarray");
        let streamed = streamed_as_whole(&files, &options);
        assert!(streamed.base().keys_with_prefix("t/").iter().all(|key| key.contains(".z")));
        // Along time, the second axis, after one chunk along member: still a file at a time.
        assert!(streamed.placements["t"].in_grid_order());
        // Member 7 second, time 1 second: m7_t1's second chunk.
        let Ok(Lookup::Ready(Some(found))) = streamed.lookup("t/1.1.1") else { panic!("t/1.1.1") };
        assert_eq!(found.as_reference(), Reference::Range { url: Some("m7_t1"), offset: 8, length: 8 });
        let Ok(Lookup::Ready(Some(found))) = streamed.lookup("s/1") else { panic!("s/1") };
        assert_eq!(found.as_reference(), Reference::Range { url: Some("m7_t0"), offset: 100, length: 8 });
        assert!(matches!(streamed.lookup("t/2.0.0"), Ok(Lookup::Ready(None))));
        assert_eq!(streamed.list_prefix("t/1.").unwrap().keys.len(), 4);
    }

    /// Members only in the names (a new first axis), time in each file's first axis: every
    /// holder's chunks follow the last's, so the walk reads one file back at a time.
    #[test]
    fn a_new_outer_dimension_walks_a_file_at_a_time() {
        let source: crate::CoordinateSource = r"name:m(\d+)".parse().unwrap();
        let options = CombineOptions::new("time").then_along("member", source).unwrap();
        let files: Vec<(&str, ReferenceSet)> = [("m7_b", 1.0), ("m2_a", 0.0), ("m7_a", 0.0), ("m2_b", 1.0)]
            .into_iter()
            .map(|(n, t)| (n, series_file(n, t)))
            .collect();
        let streamed = streamed_as_whole(&files, &options);
        let placement = &streamed.placements["v"];
        assert!(placement.in_grid_order());
        assert!(matches!(&placement.holders[1].0, Holder::Group(group) if group.first_file() == "m7_a"));
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
        let error = combine_streamed(rests, &options, Arc::new(held)).unwrap_err().to_string();
        assert!(error.contains("\"v\"") && error.contains("not in every file"), "{error}");
    }

    /// A file's set-aside chunks are held in a dense table (20 bytes a chunk), as the file's
    /// own were, not as key texts: their `.zarray` goes with them.
    #[test]
    fn set_aside_chunks_are_held_densely() {
        let mut builder = ReferenceSetBuilder::new();
        builder.insert_inline("time/.zarray", meta("[1000]", "[1000]").as_bytes());
        builder.insert_inline("time/.zattrs", br#"{"_ARRAY_DIMENSIONS":["time"]}"#);
        builder.insert_inline("time/0", &[0; 8000]);
        builder.insert_inline("v/.zarray", meta("[1000]", "[1]").as_bytes());
        builder.insert_inline("v/.zattrs", br#"{"_ARRAY_DIMENSIONS":["time"]}"#);
        for i in 0..1000u64 {
            builder.insert_range(&format!("v/{i}"), Some("f.nc"), i * 8, 8);
        }
        let (_, chunks) = split_combined_chunks("f.nc", &builder.build(), &CombineOptions::new("time")).unwrap();
        assert_eq!(chunks.len(), 1001, "v's chunks and its .zarray");
        assert!(chunks.memory_size() < 1000 * 32, "{} bytes for 1 000 chunks", chunks.memory_size());
    }

    /// A file whose chunks of an array were set aside, where the first file's array (without
    /// the dimension, and without chunks, beside `v` along it) is taken once, is refused rather
    /// than lose them.
    #[test]
    fn chunks_set_aside_that_combining_would_not_place_are_an_error() {
        let options = CombineOptions::new("time");
        let (mut rests, mut held) = (FileRests::new(), HashMap::new());
        for (name, start, dims) in [("a.nc", 0.0, r#"["x"]"#), ("b.nc", 1.0, r#"["time"]"#)] {
            let mut builder = ReferenceSetBuilder::new();
            let meta = r#"{"shape":[1],"chunks":[1],"dtype":"<f8","fill_value":null,"compressor":null,"filters":null,"order":"C","zarr_format":2}"#;
            builder.insert_inline("time/.zarray", meta.as_bytes());
            builder.insert_inline("time/.zattrs", br#"{"_ARRAY_DIMENSIONS":["time"]}"#);
            builder.insert_inline("time/0", &f64::to_le_bytes(start));
            builder.insert_inline("p/.zarray", meta.as_bytes());
            builder.insert_inline("p/.zattrs", format!(r#"{{"_ARRAY_DIMENSIONS":{dims}}}"#).as_bytes());
            builder.insert_inline("v/.zarray", meta.as_bytes());
            builder.insert_inline("v/.zattrs", br#"{"_ARRAY_DIMENSIONS":["time"]}"#);
            builder.insert_range("v/0", Some(name), 8, 8);
            if name == "b.nc" {
                builder.insert_range("p/0", Some(name), 0, 8);
            }
            let (rest, chunks) = split_combined_chunks(name, &builder.build(), &options).unwrap();
            held.insert(name.to_owned(), Arc::new(chunks));
            rests.push(name.to_owned(), rest);
        }
        let error = combine_streamed(rests, &options, Arc::new(held)).unwrap_err().to_string();
        assert!(error.contains("b.nc") && error.contains("\"p\"") && error.contains("set aside"), "{error}");
    }
}
