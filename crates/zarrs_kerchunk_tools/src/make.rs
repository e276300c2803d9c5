//! Making one reference set from files: patterns expanded by listing their
//! store, every file scanned by [`kerchunk_scan`] (a bounded number at once),
//! and the sets combined along a dimension when there are several.

use std::sync::Arc;

use futures::{StreamExt, TryStreamExt};
use kerchunk::ReferenceSet;
use kerchunk_scan::{CombineOptionError, CombineOptions, CoordinateSource, ScanError, ScanOptions, Skipped, scan};
use zarrs_kerchunk::StoreRegistry;
use zarrs_kerchunk::object_store::registry::ObjectStoreRegistry;
use zarrs_kerchunk::object_store::{self, ObjectStore};

use crate::output::{OutputError, place};

/// Files scanned at once unless told otherwise (the command line's `--jobs`).
pub const CONCURRENT_SCANS: usize = 16;

/// How several files' references become one set.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub enum Combining {
    /// Concatenated along one or more dimensions ([`kerchunk_scan::combine_with`]).
    Concat(CombineOptions),
    /// The union of their arrays, one file per variable ([`kerchunk_scan::merge`]).
    Merge,
}

/// The [`CombineOptions`] of the command line's `--concat` (repeatable, innermost first),
/// `--coord DIM=SOURCE` (repeatable; a dimension only there is combined along too, outside
/// those of `--concat`), `--units` and `--calendar`; `None` for no dimension. Python's
/// `tools.scan` builds them here too.
///
/// # Errors
/// [`CombineOptionError`]: an outer dimension without a source of one value per file, a
/// dimension given twice, units that are not CF time units.
pub fn combine_options(
    concat: &[String],
    coords: &[(String, CoordinateSource)],
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
    let mut options = CombineOptions::new(*innermost).with_coordinate(source(innermost).unwrap_or_default());
    for dimension in outer {
        let source = source(dimension).ok_or_else(|| {
            CombineOptionError::new(
                *dimension,
                "a dimension outside another takes one value per file: give --coord DIM=name:REGEX or DIM=attr:NAME",
            )
        })?;
        options = options.then_along(*dimension, source)?;
    }
    match units {
        Some(units) => options.with_time_units(units, calendar).map(Some),
        None => Ok(Some(options)),
    }
}

/// How `combining` is recorded under [`COMBINED_WITH`], with the `files` combined (as the
/// references name them: inline chunks name no file, so the references alone cannot tell).
fn record_of(combining: &Combining, files: &[String]) -> serde_json::Value {
    match combining {
        Combining::Merge => serde_json::json!({ "merge": true, "files": files }),
        Combining::Concat(options) => {
            let (units, calendar) = options.time_units().map_or((None, None), |(u, c)| (Some(u), c));
            let mut dimensions = vec![options.dimension.clone()];
            let mut coords = serde_json::Map::new();
            coords.insert(options.dimension.clone(), options.coordinate.to_string().into());
            for (dimension, source) in options.outer() {
                dimensions.push(dimension.to_owned());
                coords.insert(dimension.to_owned(), source.to_string().into());
            }
            serde_json::json!({
                "concat": dimensions, "coords": coords, "units": units, "calendar": calendar, "files": files,
            })
        }
    }
}

/// `set` with `record` under [`COMBINED_WITH`] in its root attributes.
fn with_record(set: &ReferenceSet, record: &serde_json::Value) -> ReferenceSet {
    let mut attributes = match set.get(".zattrs") {
        Some(kerchunk::Reference::Inline(text)) => serde_json::from_slice(text).ok(),
        _ => None,
    }
    .filter(serde_json::Value::is_object)
    .unwrap_or_else(|| serde_json::json!({}));
    attributes[COMBINED_WITH] = record.to_string().into();
    let mut builder = kerchunk::ReferenceSetBuilder::new();
    for (key, reference) in set.iter().filter(|(key, _)| key != ".zattrs") {
        builder.insert_reference(&key, reference);
    }
    builder.insert_inline(".zattrs", attributes.to_string().as_bytes());
    builder.build()
}

/// How `set` was combined, from its [`COMBINED_WITH`] record, if it can be combined that way
/// again, and the files it records.
fn recorded_combining(set: &ReferenceSet, location: &str) -> Result<(CombineOptions, Vec<String>), MakeError> {
    let not_combined = || MakeError::NotCombined(location.to_owned());
    let Some(kerchunk::Reference::Inline(text)) = set.get(".zattrs") else { return Err(not_combined()) };
    let attributes: serde_json::Value = serde_json::from_slice(text).map_err(|_| not_combined())?;
    let record: serde_json::Value = serde_json::from_str(attributes[COMBINED_WITH].as_str().ok_or_else(not_combined)?)
        .map_err(|_| not_combined())?;
    let cannot = || MakeError::CannotAppend { location: location.to_owned(), how: record.to_string() };
    let dimensions = record["concat"].as_array().filter(|d| d.len() == 1).ok_or_else(cannot)?;
    let dimension = dimensions[0].as_str().ok_or_else(cannot)?;
    let source: CoordinateSource = record["coords"][dimension].as_str().unwrap_or("auto").parse().unwrap_or_default();
    if !matches!(source, CoordinateSource::Auto | CoordinateSource::Data | CoordinateSource::Cf) {
        return Err(cannot());
    }
    let mut options = CombineOptions::new(dimension).with_coordinate(source);
    if let Some(units) = record["units"].as_str() {
        options = options.with_time_units(units, record["calendar"].as_str()).map_err(|_| cannot())?;
    }
    let files =
        record["files"].as_array().into_iter().flatten().filter_map(|f| f.as_str().map(str::to_owned)).collect();
    Ok((options, files))
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
    /// Several files, and no dimension to combine them along (nor merging).
    #[error("several files need a dimension to combine them along (concat), or merging")]
    NeedsConcat,
    /// A file's path or URL cannot be reached.
    #[error(transparent)]
    Place(#[from] OutputError),
    /// Scanning a file, or combining the sets, failed.
    #[error(transparent)]
    Scan(#[from] ScanError),
    /// The runtime for the scans could not start.
    #[error("cannot start the I/O runtime: {0}")]
    Runtime(#[source] std::io::Error),
    /// The references appended to hold no record of how they were combined.
    #[error("{0} holds no record of how it was combined (root attribute {COMBINED_WITH}): make it with scan --concat")]
    NotCombined(String),
    /// The references appended to were combined in a way appending cannot repeat yet.
    #[error("{location}: cannot append to a set combined with {how}: only --concat with coordinates from the data")]
    CannotAppend {
        /// The references.
        location: String,
        /// How they were combined, as recorded.
        how: String,
    },
    /// A file to append is in the references already.
    #[error("{file} is in {location} already (--skip-existing leaves it out)")]
    AlreadyIn {
        /// The file, as the references name it.
        file: String,
        /// The references.
        location: String,
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

/// The root attribute in which a set made by combining keeps, as JSON text, how it was
/// combined (`{"concat": ["time"], "units": null, "calendar": null}`), so that appending to it
/// ([`append_references`]) repeats none of it. Text, not an object: xarray shows root
/// attributes as the dataset's, and netCDF writers refuse objects.
pub const COMBINED_WITH: &str = "zarrs_kerchunk_combined_with";

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
/// references name it by; `progress` is called after each file.
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
    if files.len() > 1 && combining.is_none() {
        return Err(MakeError::NeedsConcat);
    }
    let concat = match combining {
        Some(Combining::Concat(concat)) => Some(concat),
        _ => None,
    };
    let (mut made, mut sets) = scan_all(files, concat, options, jobs, registry, url_of, progress)?;
    made.references = match combining {
        Some(combining @ Combining::Concat(concat)) => {
            with_record(&kerchunk_scan::combine_with(sets, concat)?, &record_of(combining, &made.files))
        }
        Some(combining @ Combining::Merge) => {
            with_record(&kerchunk_scan::merge(sets)?, &record_of(combining, &made.files))
        }
        None => sets.pop().map(|(_, set)| set).unwrap_or_default(),
    };
    Ok(made)
}

/// Scan `files` and add their references to `existing` (read from `location`), combined the
/// way `existing` records under [`COMBINED_WITH`]: a daily job's new files appended along
/// time, without scanning the old ones again. A file whose URL (`url_of`) the set already
/// references is an error, or left out with `skip_existing`. The other arguments are
/// [`make_references`]'.
///
/// # Errors
/// [`MakeError::NotCombined`] or [`MakeError::CannotAppend`] if `existing` holds no record, or
/// one of a way appending cannot repeat yet (several dimensions, names, attributes, merging);
/// [`MakeError::AlreadyIn`]; and what [`make_references`] gives.
#[expect(clippy::too_many_arguments, reason = "make_references' arguments, and the set and its location")]
pub fn append_references(
    existing: ReferenceSet,
    location: &str,
    files: &[String],
    skip_existing: bool,
    options: &ScanOptions,
    jobs: usize,
    registry: &StoreRegistry,
    url_of: impl Fn(&str) -> String,
    progress: impl Fn() + Sync,
) -> Result<Made, MakeError> {
    let (combining, mut recorded) = recorded_combining(&existing, location)?;
    // The files the record names, and those the references name (a set made before files were recorded).
    let mut known: std::collections::HashSet<&str> = existing
        .iter()
        .filter_map(|(_, reference)| match reference {
            kerchunk::Reference::Range { url, .. } | kerchunk::Reference::Whole { url } => url,
            _ => None,
        })
        .collect();
    known.extend(recorded.iter().map(String::as_str));
    let mut new: Vec<String> = Vec::with_capacity(files.len());
    for file in files {
        let url = url_of(file);
        match (known.contains(url.as_str()), skip_existing) {
            (false, _) => new.push(file.clone()),
            (true, true) => {}
            (true, false) => return Err(MakeError::AlreadyIn { file: url, location: location.to_owned() }),
        }
    }
    drop(known);
    let (mut made, sets) = scan_all(&new, Some(&combining), options, jobs, registry, url_of, progress)?;
    recorded.extend(made.files.iter().cloned());
    let mut inputs = Vec::with_capacity(sets.len() + 1);
    inputs.push((location.to_owned(), existing));
    inputs.extend(sets);
    let combined = kerchunk_scan::combine_with(inputs, &combining)?;
    made.references = with_record(&combined, &record_of(&Combining::Concat(combining), &recorded));
    Ok(made)
}

/// The references of `source` (a JSON set or a parquet root), all of them, in memory: what
/// [`append_references`] adds to.
///
/// # Errors
/// [`MakeError::Existing`] if a record cannot be read.
pub fn load_references(source: &dyn kerchunk::ReferenceSource, location: &str) -> Result<ReferenceSet, MakeError> {
    if let Some(set) = source.in_memory() {
        let mut builder = kerchunk::ReferenceSetBuilder::new();
        for (key, reference) in set.iter() {
            builder.insert_reference(&key, reference);
        }
        return Ok(builder.build());
    }
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().map_err(MakeError::Runtime)?;
    runtime.block_on(async {
        let mut builder = kerchunk::ReferenceSetBuilder::new();
        let mut walk = source.walk(kerchunk::Walk::All);
        while let Some(entry) = walk.next().await {
            let (key, reference) =
                entry.map_err(|e| MakeError::Existing { location: location.to_owned(), reason: e.to_string() })?;
            builder.insert_reference(&key, reference.as_reference());
        }
        Ok(builder.build())
    })
}

/// Every file of `files` scanned, `jobs` at once (the coordinate along `concat` held inline
/// when it comes from the data): what making them cost, and each file's references.
fn scan_all(
    files: &[String],
    concat: Option<&CombineOptions>,
    options: &ScanOptions,
    jobs: usize,
    registry: &StoreRegistry,
    url_of: impl Fn(&str) -> String,
    progress: impl Fn() + Sync,
) -> Result<(Made, Vec<(String, ReferenceSet)>), MakeError> {
    let mut options = options.clone();
    // A coordinate from the data is read from the references: held inline.
    if let Some(concat) = concat
        .filter(|c| matches!(c.coordinate, CoordinateSource::Auto | CoordinateSource::Data | CoordinateSource::Cf))
    {
        options = options.with_inlined_variables([concat.dimension.clone()]);
    }
    let mut places = Vec::with_capacity(files.len());
    for file in files {
        let (store, path) = place(file, registry, false)?;
        places.push((store, path, url_of(file)));
    }
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build().map_err(MakeError::Runtime)?;
    let scans = runtime.block_on(
        futures::stream::iter(places.iter().map(|(store, path, url)| {
            let (options, progress) = (&options, &progress);
            async move {
                let scan = scan(store, path, url, options).await;
                progress();
                scan.map(|scan| (url.clone(), scan))
            }
        }))
        .buffered(jobs.max(1))
        .collect::<Vec<_>>(),
    );
    let (mut made, mut sets) = (
        Made { references: ReferenceSet::default(), files: Vec::new(), requests: 0, bytes: 0, skipped: Vec::new() },
        Vec::with_capacity(scans.len()),
    );
    for scan in scans {
        let (url, scan) = scan?;
        made.skipped.extend(scan.skipped.into_iter().map(|skipped| (url.clone(), skipped)));
        made.requests += scan.stats.requests;
        made.bytes += scan.stats.bytes;
        made.files.push(url.clone());
        sets.push((url, scan.references));
    }
    Ok((made, sets))
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
