//! Reference sets combined, whoever made them (kerchunk's `SingleHdf5ToZarr`, `NetCDF3ToZarr`,
//! `scan_grib`, `VirtualiZarr`'s `to_kerchunk`, our `scan`): as kerchunk's `MultiZarrToZarr`
//! combines a folder of per-file JSONs, with the checks `scan --concat` makes.
//!
//! Each set's targets are resolved as its store reads them (relative URLs against the set's
//! own location, templates expanded) and named as `scan` names files for the output, so the
//! combined set reads the same bytes from wherever it is written. The arrays whose values
//! combining reads (coordinates, times along a dimension) are decoded here, as zarr decodes
//! them (any chunking, compressor, filters and byte order, inline or a range), and held inline
//! in one chunk: combining reads them so.

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex};

use kerchunk::{Reference, ReferenceSet, ReferenceSetBuilder, ReferenceSource};
use kerchunk_combine::{CombineOptions, FileRests, RangeReader, SetLayout};
use zarrs::array::{Array, ArrayBytes};
use zarrs::storage::store::MemoryStore;
use zarrs::storage::{Bytes, ReadableStorageTraits as _, StoreKey, WritableStorageTraits as _};
use zarrs_kerchunk::object_store::ObjectStoreExt as _;
use zarrs_kerchunk::{ReferenceStore, StoreRegistry};

use super::streamed::combine_set_aside;
use super::{
    AppendPlan, Appended, Combining, MakeError, SetAsideFiles, load_references, record_of, url_in_references,
    with_record,
};
use crate::output::Places;

/// The most bytes of one array decoded to be held inline (a coordinate, a time's bounds):
/// 256 MiB, a coordinate of 32 million float64 values.
const MOST_DECODED_BYTES: u64 = 256 << 20;

/// How many sets each of [`combine_sets`]' threads may open and prepare ahead of the one it sets aside.
const PREPARED_AHEAD: usize = 8;

/// What [`combine_sets`] gives.
#[non_exhaustive]
pub struct CombinedSets {
    /// The sets combined, as given.
    pub sets: Vec<String>,
    /// The combined references, the way they were combined recorded (under
    /// [`COMBINED_WITH`](super::COMBINED_WITH)), for the writers.
    pub references: Box<dyn ReferenceSource>,
}

impl std::fmt::Debug for CombinedSets {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CombinedSets").field("sets", &self.sets).finish_non_exhaustive()
    }
}

/// The reference sets `sets` (each a location, as errors and the record name it, opened by
/// `open`), combined as `combining` says into one set to be written to `output`. Each set is
/// opened and read (on a thread a core, a few sets ahead), its targets named for `output` ([`url_in_references`]), the arrays combining reads
/// decoded ([`kerchunk_combine::decoded_arrays`]), and, when concatenating, its chunks set aside
/// (up to `memory` bytes in memory, the rest in a temporary file) as the next set is read:
/// memory grows with what orders and checks the sets, not with their chunks. Arrays that must
/// be the same in every set and are held by range references are compared by the bytes they
/// point at, read through `registry`. `progress` is called after each set. The codecs the sets'
/// decoded arrays use must be registered with zarrs (the command line registers
/// `zarrs_kerchunk_codecs`' and the sized zlib codec).
///
/// # Errors
/// [`MakeError::Input`] naming the set whose target cannot be resolved or whose array cannot
/// be decoded, or the error `open` gives; [`MakeError::Combine`] if the sets cannot be combined
/// (naming the set, the array and why); [`MakeError::SetAside`] if a set's chunks cannot be set aside.
pub fn combine_sets(
    sets: &[String],
    open: impl Fn(&str) -> Result<ReferenceStore, MakeError> + Sync,
    combining: &Combining,
    output: &str,
    registry: Arc<StoreRegistry>,
    memory: usize,
    progress: impl Fn(),
) -> Result<CombinedSets, MakeError> {
    let reader = target_reader(output, registry)?;
    let mut names = Vec::new();
    match combining {
        Combining::Concat(concat) => {
            let set_aside = Arc::new(SetAsideFiles::new(memory)?);
            let mut rests = FileRests::new();
            let layouts = Layouts::default();
            let prepare = |name: &String| split_prepared(name, &open(name)?, output, concat, &layouts);
            for_each_in_order(sets, prepare, |name, (rest, chunks)| {
                set_aside.keep(name, chunks)?;
                rests.push(name.clone(), rest);
                names.push(name.clone());
                progress();
                Ok(())
            })?;
            let references = combine_set_aside(rests, concat, set_aside, &names, reader)?;
            Ok(CombinedSets { sets: names, references: super::writable(references)? })
        }
        Combining::Merge => {
            let mut held_sets = Vec::with_capacity(sets.len());
            let prepare = |name: &String| {
                let store = open(name)?;
                let set = held(name, &store)?;
                let mut builder = ReferenceSetBuilder::new();
                rebased(name, &store, &set, output, |_| true, inserting(&mut builder))?;
                Ok(builder.build())
            };
            for_each_in_order(sets, prepare, |name, set| {
                held_sets.push((name.clone(), set));
                names.push(name.clone());
                progress();
                Ok(())
            })?;
            let merged = kerchunk_combine::merge(held_sets, Some(&reader))?;
            let references = with_record(&merged, &record_of(combining, &names));
            Ok(CombinedSets { sets: names, references: Box::new(references) })
        }
    }
}

/// The reference sets `sets` (opened by `open`) added to `existing`, a set made by combining
/// (read from `location`), combined the way it records under
/// [`COMBINED_WITH`](super::COMBINED_WITH), as [`append_references`](super::append_references)
/// adds files: a set `existing` already records is an error, or left out with
/// `skip_existing`. Each new set is prepared as [`combine_sets`] prepares it, its targets
/// named for `output` (where the result is written). Returns the sets added and the result.
///
/// # Errors
/// What [`AppendPlan::new`](super::AppendPlan::new), [`combine_sets`] and
/// [`AppendPlan::combine`](super::AppendPlan::combine) give.
pub fn append_sets(
    existing: ReferenceSet,
    location: &str,
    sets: &[String],
    skip_existing: bool,
    open: impl Fn(&str) -> Result<ReferenceStore, MakeError> + Sync,
    output: &str,
    registry: Arc<StoreRegistry>,
) -> Result<(Vec<String>, Appended), MakeError> {
    let plan = AppendPlan::new(&existing, location, sets, skip_existing, str::to_owned)?;
    let Combining::Concat(concat) = plan.combining() else {
        return Err(MakeError::CannotAppend { location: location.to_owned(), how: plan.record().to_string() });
    };
    let mut prepared_sets = Vec::with_capacity(plan.files().len());
    let prepare = |name: &String| prepared(name, &open(name)?, output, concat);
    for_each_in_order(plan.files(), prepare, |name, set| {
        prepared_sets.push((name.clone(), set));
        Ok(())
    })?;
    let added = plan.files().to_vec();
    let reader = target_reader(output, registry)?;
    Ok((added, plan.combine(existing, location, prepared_sets, Some(reader))?))
}

/// The set `store` reads (named `name`), its targets named for `output`, and the arrays
/// combining with `concat` reads decoded and held inline: one copy of the set made.
fn prepared(
    name: &str,
    store: &ReferenceStore,
    output: &str,
    concat: &CombineOptions,
) -> Result<ReferenceSet, MakeError> {
    let set = held(name, store)?;
    let decoded = kerchunk_combine::decoded_arrays(&set, concat);
    let mut builder = ReferenceSetBuilder::new();
    prepared_into(name, store, &set, &decoded, output, inserting(&mut builder))?;
    Ok(builder.build())
}

/// What [`rebased`] and [`prepared_into`] give each reference to, to make a set of them.
fn inserting(builder: &mut ReferenceSetBuilder) -> impl FnMut(&str, Reference<'_>) -> Result<(), MakeError> + '_ {
    |key, reference| {
        builder.insert_reference(key, reference);
        Ok(())
    }
}

/// [`prepared`], split as it is made ([`kerchunk_combine::split_combined_chunks`]): the rest
/// and the chunks to set aside, with the layout of its metadata (the last worked out, where it
/// fits) from `layouts`.
fn split_prepared(
    name: &str,
    store: &ReferenceStore,
    output: &str,
    concat: &CombineOptions,
    layouts: &Layouts,
) -> Result<(ReferenceSet, ReferenceSet), MakeError> {
    let set = held(name, store)?;
    let layout = layouts.of(&set, concat);
    let mut split = kerchunk_combine::ChunkSplit::new(name, &layout, &set);
    prepared_into(name, store, &set, layout.decoded_arrays(), output, |key, reference| {
        split.insert(key, reference).map_err(MakeError::from)
    })?;
    Ok(split.finish())
}

/// The last [`SetLayout`] worked out by [`split_prepared`]: an archive's files share their
/// metadata, and one layout serves them all.
#[derive(Default)]
struct Layouts(Mutex<Option<Arc<SetLayout>>>);

impl Layouts {
    /// The layout of `set` when combined with `concat` (the options of every set asked about).
    fn of(&self, set: &ReferenceSet, concat: &CombineOptions) -> Arc<SetLayout> {
        let last = self.0.lock().unwrap_or_else(std::sync::PoisonError::into_inner).clone();
        if let Some(layout) = last.filter(|layout| layout.fits(set)) {
            return layout;
        }
        let layout = Arc::new(SetLayout::of(set, concat));
        *self.0.lock().unwrap_or_else(std::sync::PoisonError::into_inner) = Some(Arc::clone(&layout));
        layout
    }
}

/// Each reference of `set` (read by `store`, named `name`) given to `insert`, its targets named
/// for `output`, the arrays `decoded` names decoded and held inline.
fn prepared_into(
    name: &str,
    store: &ReferenceStore,
    set: &ReferenceSet,
    decoded: &[String],
    output: &str,
    mut insert: impl FnMut(&str, Reference<'_>) -> Result<(), MakeError>,
) -> Result<(), MakeError> {
    let mut replaced = Vec::with_capacity(decoded.len());
    for path in decoded {
        replaced.push(decode_array(name, store, set, path)?);
    }
    let under = |key: &str| {
        decoded.iter().any(|path| key.strip_prefix(path.as_str()).is_some_and(|rest| rest.starts_with('/')))
    };
    // The decoded arrays' chunks and `.zarray` give way to theirs; their other metadata stays.
    let kept = |key: &str| {
        !under(key) || key.rsplit_once('/').is_some_and(|(_, name)| name.starts_with(".z") && name != ".zarray")
    };
    rebased(name, store, set, output, kept, &mut insert)?;
    for (path, zarray, chunk) in replaced {
        insert(&format!("{path}/.zarray"), Reference::Inline(zarray.to_string().as_bytes()))?;
        let key = format!("{path}/{}", vec!["0"; ndim(&zarray).max(1)].join("."));
        insert(&key, Reference::Inline(&chunk))?;
    }
    Ok(())
}

/// `prepare` applied to each of `sets` on threads of their own, one a core, at most a few sets
/// ahead of the last kept, and `keep` called with each set and its result in the order of
/// `sets`, on this thread; the first error, in that order, stops both.
fn for_each_in_order<T: Send>(
    sets: &[String],
    prepare: impl Fn(&String) -> Result<T, MakeError> + Sync,
    mut keep: impl FnMut(&String, T) -> Result<(), MakeError>,
) -> Result<(), MakeError> {
    let workers = std::thread::available_parallelism().map_or(1, std::num::NonZero::get).min(sets.len().max(1));
    let ahead = PREPARED_AHEAD * workers;
    let next_set = std::sync::atomic::AtomicUsize::new(0);
    // How many sets were kept: a worker takes a set only within `ahead` of it. `usize::MAX`
    // once this thread stops, so that none waits for it.
    let kept = (Mutex::new(0usize), std::sync::Condvar::new());
    let (send, results) = std::sync::mpsc::channel();
    std::thread::scope(|scope| {
        for _ in 0..workers {
            let (send, next_set, prepare, kept) = (send.clone(), &next_set, &prepare, &kept);
            scope.spawn(move || {
                loop {
                    let index = next_set.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    let Some(name) = sets.get(index) else { break };
                    let mut done = kept.0.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
                    while index >= done.saturating_add(ahead) {
                        done = kept.1.wait(done).unwrap_or_else(std::sync::PoisonError::into_inner);
                    }
                    drop(done);
                    if send.send((index, prepare(name))).is_err() {
                        break;
                    }
                }
            });
        }
        drop(send);
        let mut in_order = || {
            // Results come in any order: each waits here until those before it have been kept.
            let mut waiting = BTreeMap::new();
            let mut next = 0;
            for (index, result) in &results {
                waiting.insert(index, result);
                while let Some(result) = waiting.remove(&next) {
                    keep(&sets[next], result?)?;
                    next += 1;
                    *kept.0.lock().unwrap_or_else(std::sync::PoisonError::into_inner) = next;
                    kept.1.notify_all();
                }
            }
            Ok(())
        };
        let outcome = in_order();
        *kept.0.lock().unwrap_or_else(std::sync::PoisonError::into_inner) = usize::MAX;
        kept.1.notify_all();
        drop(results);
        outcome
    })
}

/// The set `store` reads: as the store holds it in memory (JSON), else read whole (a parquet
/// root, an icechunk repository).
fn held<'a>(name: &str, store: &'a ReferenceStore) -> Result<Held<'a>, MakeError> {
    let set = match store.references() {
        Some(set) => Held::InStore(set),
        None => load_references(store.source().as_ref(), name).map(Held::Read)?,
    };
    // Refused here, where the set and its own key can be named: combined, the key is renumbered,
    // and no output can hold the reference.
    if let Some((key, reason)) = set.malformed().next() {
        return Err(MakeError::Input {
            location: name.to_owned(),
            reason: format!("key {key:?} has a malformed reference: {reason}"),
        });
    }
    Ok(set)
}

/// A set as [`held`] gives it.
enum Held<'a> {
    InStore(&'a ReferenceSet),
    Read(ReferenceSet),
}

impl std::ops::Deref for Held<'_> {
    type Target = ReferenceSet;

    fn deref(&self) -> &ReferenceSet {
        match self {
            Self::InStore(set) => set,
            Self::Read(set) => set,
        }
    }
}

/// The number of dimensions of a `.zarray`.
fn ndim(zarray: &serde_json::Value) -> usize {
    zarray["shape"].as_array().map_or(0, Vec::len)
}

/// The array at `path` of `set` (its range chunks read through `store`) decoded as zarr decodes
/// it: its `.zarray` made one chunk of raw values in this machine's byte order, with no
/// compressor and no filters, and that chunk. The array is decoded from a copy in memory, so
/// that only its range chunks cost a read.
fn decode_array(
    name: &str,
    store: &ReferenceStore,
    set: &ReferenceSet,
    path: &str,
) -> Result<(String, serde_json::Value, Vec<u8>), MakeError> {
    let failed = |reason: String| MakeError::Input { location: name.to_owned(), reason: format!("{path:?}: {reason}") };
    let Some(Reference::Inline(text)) = set.get(&format!("{path}/.zarray")) else {
        return Err(failed("its .zarray is not inline JSON".into()));
    };
    let mut zarray: serde_json::Value =
        serde_json::from_slice(text).map_err(|e| failed(format!("its .zarray is not JSON: {e}")))?;
    let memory = Arc::new(MemoryStore::new());
    // The array's own keys, found without walking the set's others.
    for key in set.keys_with_prefix(&format!("{path}/")) {
        let Some(reference) = set.get(&key) else { continue };
        let stored = StoreKey::new(key.as_str()).map_err(|e| failed(e.to_string()))?;
        let bytes = match reference {
            Reference::Inline(bytes) => Bytes::copy_from_slice(bytes),
            Reference::Range { url, offset, length } if let Some(path) = unpinned_local(store, url) => {
                read_local(&path, offset, length).map_err(|e| failed(format!("cannot read {key}: {e}")))?
            }
            _ => store.get(&stored).map_err(|e| failed(format!("cannot read {key}: {e}")))?.unwrap_or_default(),
        };
        memory.set(&stored, bytes).map_err(|e| failed(e.to_string()))?;
    }
    let array = Array::open(memory, &format!("/{path}"))
        .map_err(|e| failed(format!("cannot be opened to read its values: {e}")))?;
    let size = array.data_type().fixed_size().ok_or_else(|| failed("its values are not of fixed size".into()))?;
    let bytes = array.shape().iter().try_fold(size as u64, |n, &d| n.checked_mul(d));
    if bytes.is_none_or(|bytes| bytes > MOST_DECODED_BYTES) {
        return Err(failed(format!("its values are larger than {MOST_DECODED_BYTES} bytes, which are held inline")));
    }
    let values = array
        .retrieve_array_subset::<ArrayBytes>(&array.subset_all())
        .map_err(|e| failed(format!("cannot read its values: {e}")))?
        .into_fixed()
        .map_err(|_| failed("its values are not of fixed size".into()))?
        .into_owned();
    let dtype = zarray["dtype"].as_str().unwrap_or_default();
    let native = if cfg!(target_endian = "little") { "<" } else { ">" };
    if let Some(kind) = dtype.strip_prefix(['<', '>']) {
        zarray["dtype"] = format!("{native}{kind}").into();
    }
    zarray["chunks"] = zarray["shape"].clone();
    zarray["compressor"] = serde_json::Value::Null;
    zarray["filters"] = serde_json::Value::Null;
    zarray["order"] = "C".into();
    Ok((path.to_owned(), zarray, values))
}

/// The local file a range with URL `url` reads, as `store` resolves it, when it is local and
/// not pinned: read here in place rather than through the store's runtime (a thousand sets'
/// coordinates, a read each). `None` for anything else, which the store reads.
fn unpinned_local(store: &ReferenceStore, url: Option<&str>) -> Option<std::path::PathBuf> {
    let target = store.target(url).ok().filter(|target| target.pin().is_none())?;
    url::Url::parse(target.url()).ok().filter(|url| url.scheme() == "file")?.to_file_path().ok()
}

/// `length` bytes of the local file at `path` from `offset`: an error if it holds fewer.
fn read_local(path: &std::path::Path, offset: u64, length: u64) -> Result<Bytes, String> {
    use std::io::{Read as _, Seek as _};
    if length > MOST_DECODED_BYTES {
        return Err(format!("{length} bytes are more than the {MOST_DECODED_BYTES} read at once"));
    }
    let failed = |e: std::io::Error| format!("{}: {e}", path.display());
    let mut file = std::fs::File::open(path).map_err(failed)?;
    file.seek(std::io::SeekFrom::Start(offset)).map_err(failed)?;
    let mut bytes = Vec::new();
    file.take(length).read_to_end(&mut bytes).map_err(failed)?;
    if bytes.len() as u64 != length {
        return Err(format!("{} holds {} bytes from {offset}, not {length}", path.display(), bytes.len()));
    }
    Ok(Bytes::from(bytes))
}

/// The keys of `set` (read by `store`, named `name`) that `kept` keeps, each given to `insert`
/// with every target named as the references written to `output` name it: resolved as the
/// store reads it (templates, relative URLs, rewrites), then a local file relative to the
/// output's folder when under it, else absolute; a URL as resolved.
fn rebased(
    name: &str,
    store: &ReferenceStore,
    set: &ReferenceSet,
    output: &str,
    kept: impl Fn(&str) -> bool,
    mut insert: impl FnMut(&str, Reference<'_>) -> Result<(), MakeError>,
) -> Result<(), MakeError> {
    // Each URL as written (and a null one) is named once: a set names few files, many times.
    let mut named: HashMap<String, Arc<str>> = HashMap::new();
    let mut null_named: Option<Arc<str>> = None;
    let mut rename = |url: Option<&str>| -> Result<Arc<str>, MakeError> {
        let done = match url {
            Some(url) => named.get(url),
            None => null_named.as_ref(),
        };
        if let Some(done) = done {
            return Ok(Arc::clone(done));
        }
        let failed = |reason: String| MakeError::Input {
            location: name.to_owned(),
            reason: format!("its target {}: {reason}", url.unwrap_or("(null)")),
        };
        let target = store.target(url).map_err(|e| failed(e.to_string()))?;
        let resolved = match url::Url::parse(target.url()) {
            Ok(parsed) if parsed.scheme() == "file" => {
                let path = parsed.to_file_path().map_err(|()| failed("not a local path".into()))?;
                url_in_references(&path.to_string_lossy(), output)
            }
            _ => target.url().to_owned(),
        };
        let resolved: Arc<str> = resolved.into();
        match url {
            Some(url) => named.insert(url.to_owned(), Arc::clone(&resolved)),
            None => null_named.replace(Arc::clone(&resolved)),
        };
        Ok(resolved)
    };
    for (key, reference) in set.iter().filter(|(key, _)| kept(key)) {
        match reference {
            Reference::Range { url, offset, length } => {
                insert(&key, Reference::Range { url: Some(&rename(url)?), offset, length })?;
            }
            Reference::Whole { url } => insert(&key, Reference::Whole { url: Some(&rename(url)?) })?,
            other => insert(&key, other)?,
        }
    }
    Ok(())
}

/// A [`RangeReader`] of the targets of sets named for `output` ([`rebased`]): a relative path
/// from the output's folder or an absolute path, read in place, or a URL through `registry`.
fn target_reader(output: &str, registry: Arc<StoreRegistry>) -> Result<RangeReader, MakeError> {
    let folder = std::path::absolute(output)
        .ok()
        .and_then(|path| path.parent().map(std::path::Path::to_path_buf))
        .filter(|_| !output.contains("://"));
    let places = Mutex::new(Places::default());
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().map_err(MakeError::Runtime)?;
    Ok(Arc::new(move |_name: &str, url: Option<&str>, offset: u64, length: u64| {
        let Some(url) = url else { return Ok(None) };
        // A local file is read in place: no store, no runtime.
        if !url.contains("://") {
            let path = folder.as_ref().map_or_else(|| std::path::PathBuf::from(url), |folder| folder.join(url));
            return read_local(&path, offset, length).map(|bytes| Some(bytes.to_vec()));
        }
        let (store, path) = places
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .place(url, &registry, false)
            .map_err(|e| e.to_string())?;
        let end = offset.checked_add(length).ok_or_else(|| format!("bytes {offset}+{length} overflow"))?;
        runtime
            .block_on(store.get_range(&path, offset..end))
            .map(|bytes| Some(bytes.to_vec()))
            .map_err(|e| e.to_string())
    }))
}
