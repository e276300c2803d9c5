//! A scanned file, or a reference set, as VirtualiZarr's manifests need it
//! (`zarrs_kerchunk.virtualizarr`): every group's attributes, and every array's metadata with its
//! chunk references as columns (an index into the set's URLs, the offsets and the lengths, as
//! native-endian bytes), so that the Python side builds a `ChunkManifest` from arrays, never from
//! a dictionary per chunk. Inline chunks come apart, by position.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use kerchunk_scan::{ParserThread, ScanOptions};
use pyo3::prelude::*;
use pyo3::types::{PyByteArray, PyBytes, PyDict, PyList, PyTuple};
use zarrs_kerchunk::ReferenceStore;
use zarrs_kerchunk::kerchunk::zarr::ChunkGrid;
use zarrs_kerchunk::kerchunk::{Reference, ReferenceSet};
use zarrs_kerchunk_tools::make::{load_references, make_references};

use crate::errors::{Error, Kind};
use crate::runtime;
use crate::scan::{ScanArguments, make_error};
use crate::store::StoreHandle;
use crate::tools::WriteOptions;

pub(crate) fn register(module: &Bound<'_, PyModule>) -> PyResult<()> {
    module.add_function(wrap_pyfunction!(scan_manifests, module)?)?;
    module.add_function(wrap_pyfunction!(reference_manifests, module)?)?;
    Ok(())
}

/// The URL index of a chunk with no reference: a missing chunk, read as the fill value.
const MISSING: u32 = u32::MAX;

/// The URL index of an inline chunk, whose bytes are in `inlined`. Target URLs are numbered below.
const INLINED: u32 = u32::MAX - 1;

/// The most chunks an array's manifest is built for: its columns are dense over the chunk grid
/// (20 bytes a chunk here, more in VirtualiZarr's arrays), and a file may declare any grid. The
/// scanner's own default bound on a file's references (`ScanOptions::with_max_references`).
const MAX_CHUNKS: u64 = 10_000_000;

/// One array's chunk references, as columns over its chunk grid (C order).
struct Columns {
    zarray: String,
    zattrs: String,
    grid: ChunkGrid,
    url_index: Vec<u32>,
    offsets: Vec<u64>,
    lengths: Vec<u64>,
    inlined: Vec<(Vec<u64>, Vec<u8>)>,
}

/// The manifests of the file at `url` (a path or URL), scanned with `arguments` (those of
/// `tools.scan`) and read with `options`' stores: `{"urls": [...], "groups": {path: attrs},
/// "arrays": {path: {...}}}`. Target URLs are absolute (`file://` for local files).
#[pyfunction]
#[expect(clippy::needless_pass_by_value, reason = "pyo3 extracts arguments by value")]
fn scan_manifests(
    py: Python<'_>,
    url: String,
    arguments: ScanArguments,
    options: WriteOptions,
) -> PyResult<Bound<'_, PyDict>> {
    runtime::check_process()?;
    let registry = options.registry()?;
    let (scan_options, _): (ScanOptions, _) = arguments.prepared()?;
    // Zarr 3 readers take CF's `_FillValue` from the attributes only: keep it there, as
    // VirtualiZarr's HDF parser does.
    let scan_options = scan_options.with_fill_value_attribute(true);
    // Polled by the shared multi-thread runtime's `block_on` (below), where blocking is allowed:
    // HDF5 parsed on this thread, not handed to another and back.
    let scan_options = scan_options.with_parser_thread(ParserThread::CallingThread);
    let answer = py.detach(|| -> Result<_, Error> {
        // Scanned on the process's runtime, whose threads and buffers outlive the call.
        let runtime = runtime::handle();
        let _entered = runtime.enter();
        let made = make_references(std::slice::from_ref(&url), None, &scan_options, 1, &registry, absolute_url, || {})
            .map_err(|e| make_error(&e))?;
        // The scan names every target by its absolute URL.
        let columns = columns(&made.references, |url| Ok(url.map(str::to_owned)));
        // Freed on a worker: freeing a small file's references took 3% of the call (perf), which
        // the caller, a parser called on one file after another, need not wait for.
        drop(runtime.spawn_blocking(move || drop(made)));
        columns
    })?;
    into_dict(py, answer)
}

/// The manifests of the reference set `store` opened (JSON, parquet or an icechunk repository),
/// its targets as the store reads them (templates expanded, relative URLs against the set's
/// folder, or against `fs_root` if given, as VirtualiZarr's `fs_root`), absolute (`file://`
/// for local files): what [`scan_manifests`] gives.
#[pyfunction]
#[pyo3(signature = (store, fs_root=None))]
#[expect(clippy::needless_pass_by_value, reason = "pyo3 extracts arguments by value")]
fn reference_manifests<'py>(
    py: Python<'py>,
    store: &StoreHandle,
    fs_root: Option<String>,
) -> PyResult<Bound<'py, PyDict>> {
    runtime::check_process()?;
    let (zarrs, location) = (Arc::clone(store.zarrs_store()), store.location().to_owned());
    let answer = py.detach(|| -> Result<_, Error> {
        let loaded;
        let set = if let Some(set) = zarrs.references() {
            set
        } else {
            loaded = load_references(zarrs.source().as_ref(), &location).map_err(|e| make_error(&e))?;
            &loaded
        };
        if set.get("zarr.json").is_some() {
            return Err(Error::new(
                Kind::Invalid,
                format!("{location}: Zarr v3 references (zarr.json) are not read here"),
            ));
        }
        columns(set, |url| target_url(&zarrs, url, fs_root.as_deref()).map(Some))
    })?;
    into_dict(py, answer)
}

/// The absolute URL `store` reads the target written `written` from; a relative one joined to
/// `fs_root` first, if given.
fn target_url(store: &ReferenceStore, written: Option<&str>, fs_root: Option<&str>) -> Result<String, String> {
    let joined = match (written, fs_root) {
        (Some(url), Some(root)) if !url.contains("://") && !url.starts_with('/') && !url.contains("{{") => {
            Some(format!("{}/{url}", root.trim_end_matches('/')))
        }
        _ => None,
    };
    let target = store.target(joined.as_deref().or(written)).map_err(|e| e.to_string())?;
    Ok(target.url().to_owned())
}

/// The Python answer: `{"urls": [...], "groups": {path: attrs}, "arrays": {path: {...}}}`.
fn into_dict(py: Python<'_>, (urls, groups, arrays): Manifests) -> PyResult<Bound<'_, PyDict>> {
    let result = PyDict::new(py);
    result.set_item("urls", PyList::new(py, &urls)?)?;
    result.set_item("groups", groups)?;
    let out = PyDict::new(py);
    for (path, columns) in arrays {
        let array = PyDict::new(py);
        array.set_item("zarray", columns.zarray)?;
        array.set_item("zattrs", columns.zattrs)?;
        array.set_item("one_url", one_url(&columns.url_index))?;
        array.set_item("grid", columns.grid.dims())?;
        array.set_item("url_index", native_bytes(py, &columns.url_index, u32::to_ne_bytes)?)?;
        array.set_item("offsets", native_bytes(py, &columns.offsets, u64::to_ne_bytes)?)?;
        array.set_item("lengths", native_bytes(py, &columns.lengths, u64::to_ne_bytes)?)?;
        let inlined = PyDict::new(py);
        for (position, bytes) in columns.inlined {
            inlined.set_item(PyTuple::new(py, position)?, PyBytes::new(py, &bytes))?;
        }
        array.set_item("inlined", inlined)?;
        out.set_item(path, array)?;
    }
    result.set_item("arrays", out)?;
    Ok(result)
}

/// `file` as an absolute URL: a local path as `file://`.
fn absolute_url(file: &str) -> String {
    if file.contains("://") {
        return file.to_owned();
    }
    std::path::absolute(file)
        .ok()
        .and_then(|path| url::Url::from_file_path(path).ok())
        .map_or_else(|| file.to_owned(), String::from)
}

/// The one URL index of every chunk of an array, where each is a range of that URL or inline
/// (and one at least a range): the Python side writes that URL into every path (inline chunks
/// are marked after), which numpy does several times faster than it gathers paths by index.
fn one_url(url_index: &[u32]) -> Option<u32> {
    let mut ranges = url_index.iter().filter(|&&id| id != INLINED);
    let first = *ranges.next()?;
    (first != MISSING && ranges.all(|&id| id == first)).then_some(first)
}

/// `values` as a `bytearray` of their native-endian bytes, which numpy takes as an array of
/// their type (the reader is this process), writable, without a copy.
fn native_bytes<'py, T: Copy, const N: usize>(
    py: Python<'py>,
    values: &[T],
    to_ne: fn(T) -> [u8; N],
) -> PyResult<Bound<'py, PyByteArray>> {
    PyByteArray::new_with(py, values.len() * N, |buffer| {
        for (bytes, &value) in buffer.chunks_exact_mut(N).zip(values) {
            bytes.copy_from_slice(&to_ne(value));
        }
        Ok(())
    })
}

/// A set's target URLs, its groups' attributes (JSON text, by path) and its arrays' columns.
type Manifests = (Vec<String>, BTreeMap<String, String>, BTreeMap<String, Columns>);

/// The set's manifests, each target's URL as `resolve` gives it (`None`: one it cannot hold).
fn columns(
    set: &ReferenceSet,
    resolve: impl FnMut(Option<&str>) -> Result<Option<String>, String>,
) -> Result<Manifests, Error> {
    let text = |key: &str| -> Result<Option<String>, Error> {
        match set.get(key) {
            None => Ok(None),
            Some(Reference::Inline(bytes)) => {
                String::from_utf8(bytes.to_vec()).map(Some).map_err(|_| invalid(key, "metadata that is not UTF-8"))
            }
            Some(_) => Err(invalid(key, "metadata that is not inline")),
        }
    };
    // Metadata keys are never in chunk tables: the loose keys hold them all.
    let (mut groups, mut arrays) = (BTreeMap::new(), BTreeMap::new());
    for (key, _) in set.loose() {
        let (node, name) = key.rsplit_once('/').unwrap_or(("", key));
        match name {
            ".zgroup" => {
                groups.insert(node.to_owned(), text(&prefixed(node, ".zattrs"))?.unwrap_or_else(|| "{}".into()));
            }
            ".zarray" => {
                let zarray = text(key)?.unwrap_or_default();
                let zattrs = text(&prefixed(node, ".zattrs"))?.unwrap_or_else(|| "{}".into());
                arrays.insert(node.to_owned(), Columns::new(key, zarray, zattrs)?);
            }
            _ => {}
        }
    }
    let mut targets = Targets { resolve, urls: Vec::new(), ids: HashMap::new(), last: None };
    for (path, columns) in &mut arrays {
        let Some((grid, chunks)) = set.array_chunks(path) else { continue };
        if grid.dims() != columns.grid.dims() {
            return Err(invalid(&prefixed(path, ".zarray"), "a chunk grid the reference set reads otherwise"));
        }
        for (index, reference) in chunks {
            let key = || grid.chunk_name(index).map_or_else(|| path.clone(), |name| prefixed(path, &name));
            columns.place(index, reference, &mut targets, key)?;
        }
    }
    // The chunk keys no table holds (an array too sparse for one, or a key outside its grid).
    for (key, reference) in set.loose() {
        let Some((path, rest)) = array_of(key, &arrays) else { continue };
        let columns = arrays.get_mut(&path).expect("a found array");
        // Indices read as Python's `int` reads them (`00` as 0), as these keys always were.
        let index = columns
            .grid
            .position(rest, false)
            .ok_or_else(|| invalid(key, "a chunk key outside the array's chunk grid"))?;
        columns.place(index, reference, &mut targets, || key.to_owned())?;
    }
    Ok((targets.urls, groups, arrays))
}

fn invalid(key: &str, why: &str) -> Error {
    Error::new(Kind::Invalid, format!("{key}: {why}"))
}

/// The target URLs met so far, each resolved once.
struct Targets<F> {
    resolve: F,
    urls: Vec<String>,
    ids: HashMap<Option<String>, u32>,
    /// The last URL met, as written, and its index: a file's chunks name one URL in runs.
    last: Option<(Option<String>, u32)>,
}

impl<F: FnMut(Option<&str>) -> Result<Option<String>, String>> Targets<F> {
    /// The index of the target written `url` (of the chunk `key`), resolved if new.
    fn id(&mut self, url: Option<&str>, key: impl Fn() -> String) -> Result<u32, Error> {
        if let Some((last, id)) = &self.last
            && last.as_deref() == url
        {
            return Ok(*id);
        }
        let id = if let Some(&id) = self.ids.get(&url.map(str::to_owned)) {
            id
        } else {
            let why = |reason: String| invalid(&key(), &format!("its target {}: {reason}", url.unwrap_or("(null)")));
            let resolved = (self.resolve)(url).map_err(why)?.ok_or_else(|| why("no URL".into()))?;
            let id = u32::try_from(self.urls.len())
                .ok()
                .filter(|&id| id < INLINED)
                .ok_or_else(|| invalid(&key(), "too many target files"))?;
            self.urls.push(resolved);
            self.ids.insert(url.map(str::to_owned), id);
            id
        };
        self.last = Some((url.map(str::to_owned), id));
        Ok(id)
    }
}

impl Columns {
    /// An array's empty columns, from its `.zarray` (at `key`) and `.zattrs`.
    fn new(key: &str, zarray: String, zattrs: String) -> Result<Self, Error> {
        let grid = ChunkGrid::from_zarray_document(zarray.as_bytes()).map_err(|e| invalid(key, &e.to_string()))?;
        if grid.count() > MAX_CHUNKS {
            let why = format!("a grid of {} chunks, more than the {MAX_CHUNKS} a manifest is built for", grid.count());
            return Err(invalid(key, &why));
        }
        let count = usize::try_from(grid.count()).map_err(|_| invalid(key, "too many chunks"))?;
        Ok(Self {
            zarray,
            zattrs,
            grid,
            url_index: vec![MISSING; count],
            offsets: vec![0; count],
            lengths: vec![0; count],
            inlined: Vec::new(),
        })
    }

    /// The chunk at C-order `position` (named `key` in errors) referenced by `reference`.
    fn place<F>(
        &mut self,
        position: u64,
        reference: Reference<'_>,
        targets: &mut Targets<F>,
        key: impl Fn() -> String,
    ) -> Result<(), Error>
    where
        F: FnMut(Option<&str>) -> Result<Option<String>, String>,
    {
        // Inside the grid, whose count fits in memory (`new`).
        let Some(index) = usize::try_from(position).ok().filter(|&index| index < self.url_index.len()) else {
            return Err(invalid(&key(), "a chunk key outside the array's chunk grid"));
        };
        match reference {
            Reference::Inline(bytes) => {
                let indices = self.grid.indices(position).unwrap_or_default();
                self.url_index[index] = INLINED;
                self.inlined.push((indices, bytes.to_vec()));
            }
            Reference::Range { url, offset, length } => {
                let id = targets.id(url, &key)?;
                (self.url_index[index], self.offsets[index], self.lengths[index]) = (id, offset, length);
            }
            Reference::Whole { .. } => {
                return Err(invalid(
                    &key(),
                    "a whole-file reference, which VirtualiZarr's manifests cannot hold (they need an offset and a length)",
                ));
            }
            Reference::Malformed { reason } => return Err(invalid(&key(), reason)),
        }
        Ok(())
    }
}

/// The array a loose chunk key belongs to, and the key's chunk part: the array whose path the
/// key starts with, its rest no metadata and, unless the array's separator is `/`, no folder.
fn array_of<'k>(key: &'k str, arrays: &BTreeMap<String, Columns>) -> Option<(String, &'k str)> {
    let (node, name) = key.rsplit_once('/').unwrap_or(("", key));
    if name.starts_with(".z") {
        return None;
    }
    if arrays.get(node).is_some_and(|columns| columns.grid.separator() != '/') {
        return Some((node.to_owned(), name));
    }
    // Nested chunk keys (`a/0/1`): an array with `/` as separator whose path the key starts with.
    arrays
        .iter()
        .filter(|(_, columns)| columns.grid.separator() == '/')
        .find_map(|(path, _)| key.strip_prefix(&prefixed(path, "")).map(|rest| (path.clone(), rest)))
}

/// `name` under the node at `path` (`""`: the root).
fn prefixed(path: &str, name: &str) -> String {
    if path.is_empty() { name.to_owned() } else { format!("{path}/{name}") }
}
