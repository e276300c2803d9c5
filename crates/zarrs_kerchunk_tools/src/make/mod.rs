//! Making one reference set from files: patterns expanded by listing their
//! store, every file scanned by [`kerchunk_scan`] (a bounded number at once),
//! and the sets combined along a dimension when there are several.

use std::sync::Arc;

use futures::{StreamExt, TryStreamExt};
use kerchunk::ReferenceSet;
use kerchunk_combine::{CombineError, CombineOptionError, CombineOptions, CoordinateSource, RangeReader};
use kerchunk_scan::{DmrppSidecars, ScanError, ScanOptions, Skipped, scan};
use zarrs_kerchunk::StoreRegistry;
use zarrs_kerchunk::object_store::ObjectStoreExt as _;
use zarrs_kerchunk::object_store::registry::ObjectStoreRegistry;
use zarrs_kerchunk::object_store::{self, ObjectStore};

use crate::output::{OutputError, Places};

mod append;
mod set_aside;
#[cfg(feature = "combine")]
mod sets;
mod streamed;

pub use append::{AppendPlan, Appended, COMBINED_WITH, append_references, load_references};
use append::{record_of, with_record};
pub use set_aside::{SET_ASIDE_MEMORY, SetAsideFiles};
#[cfg(feature = "combine")]
pub use sets::{CombinedSets, append_sets, combine_sets};
pub use streamed::{Streamed, combine_set_aside, make_streamed, streamable, writable};

/// Files scanned at once unless told otherwise (the command line's `--jobs`).
pub const CONCURRENT_SCANS: usize = 16;

/// How several files' references become one set.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub enum Combining {
    /// Concatenated along one or more dimensions ([`kerchunk_combine::combine_with`]).
    Concat(CombineOptions),
    /// The union of their arrays, one file per variable ([`kerchunk_combine::merge`]).
    Merge,
}

/// The [`CombineOptions`] of the command line's `--concat` (repeatable, innermost first),
/// `--coord DIM=SOURCE` (repeatable; a dimension only there is combined along too, outside
/// those of `--concat`), `--identical` (arrays taken once rather than given a new dimension),
/// `--units` and `--calendar`; `None` for no dimension. Python's `tools.scan` builds them here
/// too.
///
/// # Errors
/// [`CombineOptionError`]: a dimension given twice, units that are not CF time units. An
/// outer dimension without `--coord` takes each file's one value from its data.
pub fn combine_options(
    concat: &[String],
    coords: &[(String, CoordinateSource)],
    identical: &[String],
    units: Option<&str>,
    calendar: Option<&str>,
) -> Result<Option<CombineOptions>, CombineOptionError> {
    let mut dimensions: Vec<&str> = concat.iter().map(String::as_str).collect();
    dimensions.extend(coords.iter().map(|(d, _)| d.as_str()).filter(|d| !concat.iter().any(|c| c == d)));
    let source = |dimension: &str| coords.iter().rev().find(|(d, _)| d == dimension).map(|(_, s)| s.clone());
    let Some((innermost, outer)) = dimensions.split_first() else {
        return match units {
            Some(units) => Err(CombineOptionError::new(units, "units need a dimension to combine along")),
            None => Ok(None),
        };
    };
    let mut options = CombineOptions::new(*innermost)
        .with_coordinate(source(innermost).unwrap_or_default())
        .with_identical(identical.iter().cloned());
    for dimension in outer {
        options = options.then_along(*dimension, source(dimension).unwrap_or_default())?;
    }
    match units {
        Some(units) => options.with_time_units(units, calendar).map(Some),
        None => Ok(Some(options)),
    }
}

/// Why references could not be made from files.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum MakeError {
    /// A pattern that is not one.
    #[error("{pattern}: not a pattern: {source}")]
    Pattern {
        /// The pattern as given.
        pattern: String,
        /// Why.
        #[source]
        source: glob::PatternError,
    },
    /// A pattern's folder could not be listed.
    #[error("cannot list {folder:?} for {pattern}: {source}")]
    List {
        /// The pattern as given.
        pattern: String,
        /// The folder listed.
        folder: String,
        /// The store's error.
        #[source]
        source: Box<object_store::Error>,
    },
    /// A pattern that matches nothing.
    #[error("no file matches {0}")]
    NoMatch(String),
    /// Several files, and no dimension to combine them along (nor merging); GRIB files alone
    /// need none.
    #[error(
        "several files need a dimension to combine them along (--concat DIM), or --merge (GRIB files alone need neither)"
    )]
    NeedsConcat,
    /// A file's path or URL cannot be reached.
    #[error(transparent)]
    Place(#[from] OutputError),
    /// Scanning a file failed.
    #[error(transparent)]
    Scan(#[from] ScanError),
    /// Combining the sets failed: naming the file or set, the array and why.
    #[error(transparent)]
    Combine(#[from] CombineError),
    /// A file's references could not be set aside to be combined a file at a time
    /// ([`SetAsideFiles`]).
    #[error("cannot set aside the references of {file} to combine them: {source}")]
    SetAside {
        /// The file, as the references name it.
        file: String,
        /// Why.
        #[source]
        source: kerchunk::BoxError,
    },
    /// The runtime for the scans could not start.
    #[error("cannot start the I/O runtime: {0}")]
    Runtime(#[source] std::io::Error),
    /// The references appended to hold no record of how they were combined.
    #[error("{0} holds no record of how it was combined (root attribute {COMBINED_WITH}): make it with scan --concat")]
    NotCombined(String),
    /// The references appended to were combined in a way appending cannot repeat yet.
    #[error("{location}: cannot append to a set combined with {how}: only to one made with --concat")]
    CannotAppend {
        /// The references.
        location: String,
        /// How they were combined, as recorded.
        how: String,
    },
    /// The files appended differ from the references along more than one of the dimensions
    /// they were combined along: an append extends one (new times for every member, or a new
    /// member at every time).
    #[error(
        "{location}: the files appended differ from it along {}: an append extends one dimension (new times for every member, or new members at every time)",
        .dimensions.join(" and ")
    )]
    ExtendsSeveral {
        /// The references.
        location: String,
        /// The dimensions along which the files appended hold other values, innermost first.
        dimensions: Vec<String>,
    },
    /// A file to append is in the references already.
    #[error("{file} is in {location} already (--skip-existing leaves it out)")]
    AlreadyIn {
        /// The file, as the references name it.
        file: String,
        /// The references.
        location: String,
    },
    /// A reference set to combine names a target that cannot be resolved, or holds an array
    /// combining reads that cannot be decoded.
    #[error("{location}: {reason}")]
    Input {
        /// The reference set, as given.
        location: String,
        /// What, and why.
        reason: String,
    },
    /// The references appended to could not be read.
    #[error("cannot read {location}: {reason}")]
    Existing {
        /// The references.
        location: String,
        /// Why.
        reason: String,
    },
}

/// The references made from files, and what making them cost.
#[derive(Debug)]
#[non_exhaustive]
pub struct Made {
    /// The references: one file's, or all of them combined.
    pub references: ReferenceSet,
    /// The files scanned, in order, as their references name them.
    pub files: Vec<String>,
    /// Requests made, over every file.
    pub requests: u64,
    /// Bytes read, over every file.
    pub bytes: u64,
    /// The arrays left out, with the file (as its references name it) each is from.
    pub skipped: Vec<(String, Skipped)>,
}

/// Scan `files` (paths or URLs; see [`expand`] for patterns) into one reference set,
/// combined as `combining` says when there are several (and the way recorded in the root
/// attributes, under [`COMBINED_WITH`]), `jobs` files scanned at once (at least one;
/// [`CONCURRENT_SCANS`] is the command line's default). `url_of` gives the URL a file's
/// references name it by; `progress` is called after each file. The files are read on the
/// Tokio runtime the calling thread has entered ([`Handle::enter`](tokio::runtime::Handle::enter)),
/// if any, else on one made for the call; either way the call blocks until they are scanned,
/// so it must not be made from an asynchronous task.
///
/// # Errors
/// [`MakeError`] if a file cannot be reached or scanned, or the sets cannot be combined.
pub fn make_references(
    files: &[String],
    combining: Option<&Combining>,
    options: &ScanOptions,
    jobs: usize,
    registry: &StoreRegistry,
    url_of: impl Fn(&str) -> String,
    progress: impl Fn() + Sync,
) -> Result<Made, MakeError> {
    let Scanned { mut made, sets, places } = scan_files(files, combining, options, jobs, registry, url_of, progress)?;
    if combining.is_none() && sets.len() > 1 && sets.iter().all(|(_, set)| is_grib(set)) {
        // GRIB files combine by their messages' own coordinates, with no dimension to name.
        let combined = kerchunk_scan::combine_grib(&sets)?;
        made.skipped.extend(combined.skipped.into_iter().map(|s| (made.files[0].clone(), s)));
        made.references = combined.references;
        return Ok(made);
    }
    // Only a combining compares values: one file's scan makes no runtime for a reader.
    let reader = combining.map(|_| places.reader()).transpose()?;
    made.references = combine_scans(sets, combining, &made.files, reader)?;
    Ok(made)
}

/// The references of many files, scanned by [`scan_files`] (here or, a share each, on other
/// machines), made one set as `combining` says and its record kept (under [`COMBINED_WITH`],
/// naming `files`); the one set when there is no combining.
///
/// Arrays that must be the same in every file are compared by their values: inline, and with
/// `reader` (see [`FilePlaces::reader`]) the stored bytes of range references too.
///
/// # Errors
/// [`MakeError::Combine`] if the sets cannot be combined ([`MakeError::Scan`] for GRIB sets, where two hold the
/// same message); [`MakeError::NeedsConcat`] for several sets and no combining, unless all are
/// GRIB files' references, which combine by their messages' coordinates.
pub fn combine_scans(
    mut sets: Vec<(String, ReferenceSet)>,
    combining: Option<&Combining>,
    files: &[String],
    reader: Option<RangeReader>,
) -> Result<ReferenceSet, MakeError> {
    Ok(match combining {
        Some(combining @ Combining::Concat(concat)) => {
            let concat = match reader {
                Some(reader) => concat.clone().with_range_reader(reader),
                None => concat.clone(),
            };
            with_record(&kerchunk_combine::combine_with(sets, &concat)?, &record_of(combining, files))
        }
        Some(combining @ Combining::Merge) => {
            with_record(&kerchunk_combine::merge(sets, reader.as_ref())?, &record_of(combining, files))
        }
        None if sets.len() > 1 && sets.iter().all(|(_, set)| is_grib(set)) => {
            let combined = kerchunk_scan::combine_grib(&sets)?;
            if let Some(repeated) = combined.skipped.first() {
                return Err(MakeError::Scan(kerchunk_scan::ScanError::Grib {
                    url: repeated.path.clone(),
                    reason: repeated.reason.clone(),
                }));
            }
            combined.references
        }
        None if sets.len() > 1 => return Err(MakeError::NeedsConcat),
        None => sets.pop().map(|(_, set)| set).unwrap_or_default(),
    })
}

/// Whether `set` is a GRIB file's references (`kerchunk_scan::scan_grib`'s tree).
fn is_grib(set: &ReferenceSet) -> bool {
    matches!(set.get(".zattrs"), Some(kerchunk::Reference::Inline(attributes))
        if serde_json::from_slice::<serde_json::Value>(attributes).is_ok_and(|a| a.get("GRIB_edition").is_some()))
}

/// Where each file is read from, by its name in the references (its URL): what
/// [`scan_files`] scanned, and what a [`RangeReader`] over the files reads.
pub struct FilePlaces(std::collections::HashMap<String, (Arc<dyn ObjectStore>, object_store::path::Path)>);

impl FilePlaces {
    /// `files` located: pairs of a file's name in the references and its path or URL here
    /// (for files scanned elsewhere, such as the shares of a spread scan).
    ///
    /// # Errors
    /// [`MakeError`] if a file cannot be reached.
    pub fn locate(files: &[(String, String)], registry: &StoreRegistry) -> Result<Self, MakeError> {
        let mut places = std::collections::HashMap::with_capacity(files.len());
        let mut stores = Places::default();
        for (name, file) in files {
            places.insert(name.clone(), stores.place(file, registry, false)?);
        }
        Ok(Self(places))
    }

    /// A [`RangeReader`] that reads a file's range references from the file itself. A name it
    /// does not know (a set being appended to), or a reference into another file than the one
    /// named (a group of files named after its first), it leaves unread.
    ///
    /// # Errors
    /// [`MakeError::Runtime`] if the runtime for the reads cannot start.
    pub fn reader(self) -> Result<RangeReader, MakeError> {
        let places = self.0;
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().map_err(MakeError::Runtime)?;
        Ok(Arc::new(move |name: &str, url: Option<&str>, offset: u64, length: u64| {
            let Some((store, path)) = places.get(name).filter(|_| url == Some(name)) else { return Ok(None) };
            let end = offset.checked_add(length).ok_or_else(|| format!("bytes {offset}+{length} overflow"))?;
            runtime
                .block_on(store.get_range(path, offset..end))
                .map(|bytes| Some(bytes.to_vec()))
                .map_err(|e| e.to_string())
        }))
    }
}

/// Every file of `files` scanned, `jobs` at once (at least one), as [`make_references`] scans
/// them for `combining` (the coordinate along its dimension held inline when it comes from the
/// data): what scanning cost, each file's references, named by `url_of`, for
/// [`combine_scans`], and where the files were read from.
///
/// # Errors
/// [`MakeError`] if a file cannot be reached or scanned.
pub fn scan_files(
    files: &[String],
    combining: Option<&Combining>,
    options: &ScanOptions,
    jobs: usize,
    registry: &StoreRegistry,
    url_of: impl Fn(&str) -> String,
    progress: impl Fn() + Sync,
) -> Result<Scanned, MakeError> {
    let mut sets = Vec::with_capacity(files.len());
    let keep = |url: &str, set| {
        sets.push((url.to_owned(), set));
        Ok(())
    };
    let (made, places) = scan_each(files, combining, options, jobs, registry, url_of, progress, keep)?;
    Ok(Scanned { made, sets, places })
}

/// [`scan_files`], each file's references (named by `url_of`) handed to `keep` as its scan
/// ends, in the order of `files`: what scanning cost and where the files were read from.
#[expect(clippy::too_many_arguments, reason = "scan_files' arguments, and what to keep")]
fn scan_each(
    files: &[String],
    combining: Option<&Combining>,
    options: &ScanOptions,
    jobs: usize,
    registry: &StoreRegistry,
    url_of: impl Fn(&str) -> String,
    progress: impl Fn() + Sync,
    mut keep: impl FnMut(&str, ReferenceSet) -> Result<(), MakeError>,
) -> Result<(Made, FilePlaces), MakeError> {
    let concat = match combining {
        Some(Combining::Concat(concat)) => Some(concat),
        _ => None,
    };
    let mut options = options.clone();
    // A coordinate from the data is read from the references: held inline.
    if let Some(concat) = concat
        .filter(|c| matches!(c.coordinate, CoordinateSource::Auto | CoordinateSource::Data | CoordinateSource::Cf))
    {
        options = options.with_inlined_variables([concat.dimension.clone()]);
    }
    let mut places = Vec::with_capacity(files.len());
    let mut stores = Places::default();
    for file in files {
        let (store, path) = stores.place(file, registry, false)?;
        places.push((store, path, url_of(file)));
    }
    let mut made =
        Made { references: ReferenceSet::default(), files: Vec::new(), requests: 0, bytes: 0, skipped: Vec::new() };
    let work = async {
        let mut scans = futures::stream::iter(places.iter().map(|(store, path, url)| {
            let (options, progress) = (&options, &progress);
            async move {
                let scan = scan(store, path, url, options).await;
                progress();
                scan.map(|scan| (url.clone(), scan))
            }
        }))
        .buffered(jobs.max(1));
        while let Some(scan) = scans.next().await {
            let (url, scan) = scan?;
            made.skipped.extend(scan.skipped.into_iter().map(|skipped| (url.clone(), skipped)));
            made.requests += scan.stats.requests;
            made.bytes += scan.stats.bytes;
            made.files.push(url.clone());
            keep(&url, scan.references)?;
        }
        Ok::<_, MakeError>(())
    };
    on_runtime(jobs, work)?;
    let places = FilePlaces(places.into_iter().map(|(store, path, url)| (url, (store, path))).collect());
    Ok((made, places))
}

/// `work` run to its end, blocking this thread: on the Tokio runtime this thread has entered,
/// if any (a caller's, whose threads and buffers outlive one call: a small file's scan costs
/// as much again on a runtime made for it), else on one made for it. One job needs no worker
/// threads: that runtime runs on this thread.
fn on_runtime<T>(jobs: usize, work: impl Future<Output = Result<T, MakeError>>) -> Result<T, MakeError> {
    if let Ok(entered) = tokio::runtime::Handle::try_current() {
        return entered.block_on(work);
    }
    let runtime = if jobs <= 1 {
        tokio::runtime::Builder::new_current_thread().enable_all().build()
    } else {
        tokio::runtime::Builder::new_multi_thread().enable_all().build()
    };
    runtime.map_err(MakeError::Runtime)?.block_on(work)
}

/// What [`scan_files`] gives.
#[non_exhaustive]
pub struct Scanned {
    /// What scanning cost (with `references` left empty).
    pub made: Made,
    /// Each file's references, named as the references name the file.
    pub sets: Vec<(String, ReferenceSet)>,
    /// Where each file was read from.
    pub places: FilePlaces,
}

/// `files` without the DMR++ sidecars of files also among them: scanned with `sidecars` other
/// than [`DmrppSidecars::Never`], a file is read through its sidecar, which a pattern that
/// matches both names (`granule.nc*`) would scan twice.
#[must_use]
pub fn without_named_sidecars(mut files: Vec<String>, sidecars: DmrppSidecars) -> Vec<String> {
    if sidecars != DmrppSidecars::Never {
        let named: std::collections::HashSet<String> = files.iter().cloned().collect();
        files.retain(|file| file.strip_suffix(".dmrpp").is_none_or(|data| !named.contains(data)));
    }
    files
}

/// The files `file` names: itself, or if it is a pattern (`*`, `?`, `[...]`),
/// every object of its store whose path matches it, in order. A pattern's
/// wildcards stay within one level of folders.
///
/// # Errors
/// [`MakeError`] if the pattern is malformed, its folder cannot be listed, or nothing matches.
pub fn expand(file: &str, registry: &StoreRegistry) -> Result<Vec<String>, MakeError> {
    let Some(wildcard) = file.find(['*', '?', '[']) else { return Ok(vec![file.to_owned()]) };
    let folder = &file[..file[..wildcard].rfind('/').map_or(0, |slash| slash + 1)];
    let pattern = glob::Pattern::new(&file[folder.len()..])
        .map_err(|source| MakeError::Pattern { pattern: file.to_owned(), source })?;
    let listing_failed =
        |source| MakeError::List { pattern: file.to_owned(), folder: folder.to_owned(), source: Box::new(source) };
    let (store, prefix): (Arc<dyn ObjectStore>, Option<object_store::path::Path>) = if folder.contains("://") {
        let url = url::Url::parse(folder)
            .map_err(|e| OutputError::Place { place: folder.to_owned(), reason: e.to_string() })?;
        let (store, path) = registry.resolve(&url).map_err(listing_failed)?;
        (store, Some(path).filter(|p| !p.as_ref().is_empty()))
    } else {
        let io = |source| OutputError::Io { place: folder.to_owned(), source };
        let local = std::path::absolute(if folder.is_empty() { "." } else { folder }).map_err(io)?;
        if !local.is_dir() {
            return Err(MakeError::NoMatch(file.to_owned()));
        }
        (Arc::new(object_store::local::LocalFileSystem::new_with_prefix(local).map_err(listing_failed)?), None)
    };
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().map_err(MakeError::Runtime)?;
    let listed: Vec<object_store::ObjectMeta> =
        runtime.block_on(store.list(prefix.as_ref()).try_collect()).map_err(listing_failed)?;
    let within = |location: &object_store::path::Path| -> String {
        let full = location.as_ref();
        match &prefix {
            Some(prefix) => full.strip_prefix(prefix.as_ref()).unwrap_or(full).trim_start_matches('/').to_owned(),
            None => full.to_owned(),
        }
    };
    let options = glob::MatchOptions { require_literal_separator: true, ..glob::MatchOptions::new() };
    let mut matched: Vec<String> = listed
        .iter()
        .map(|meta| within(&meta.location))
        .filter(|name| pattern.matches_with(name, options))
        .map(|name| format!("{folder}{name}"))
        .collect();
    matched.sort();
    if matched.is_empty() {
        return Err(MakeError::NoMatch(file.to_owned()));
    }
    Ok(matched)
}

/// How references written to `output` name `file`: a URL as given; a local
/// file by its path relative to the references' folder when both are local
/// and it lies under that folder (so the two move together), else by its
/// absolute path.
#[must_use]
pub fn url_in_references(file: &str, output: &str) -> String {
    if file.contains("://") {
        return file.to_owned();
    }
    let Ok(absolute) = std::path::absolute(file) else { return file.to_owned() };
    if !output.contains("://")
        && let Ok(output) = std::path::absolute(output)
        && let Some(relative) = output.parent().and_then(|folder| absolute.strip_prefix(folder).ok())
    {
        return relative.to_string_lossy().replace('\\', "/");
    }
    absolute.to_string_lossy().into_owned()
}
