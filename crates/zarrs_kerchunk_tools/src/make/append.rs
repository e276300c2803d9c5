//! Adding files to a set made by combining: the record a combined set keeps of how it was
//! combined, and the append that repeats it without scanning the old files again.

use std::collections::HashMap;
use std::sync::Arc;

use futures::StreamExt;
use kerchunk::{Reference, ReferenceSet, ReferenceSetBuilder, ReferenceSource};
use kerchunk_combine::{CombineOptions, CoordinateSource, FileRests, StreamedCombine};
use kerchunk_scan::ScanOptions;
use zarrs_kerchunk::StoreRegistry;

use super::streamed::recorded_streamed;
use super::{Combining, Made, MakeError, Scanned, scan_files};

/// The root attribute in which a set made by combining keeps, as JSON text, how it was
/// combined (`{"concat": ["time"], "units": null, "calendar": null}`), so that appending to it
/// ([`append_references`]) repeats none of it. Text, not an object: xarray shows root
/// attributes as the dataset's, and netCDF writers refuse objects.
pub const COMBINED_WITH: &str = "zarrs_kerchunk_combined_with";

/// How `combining` is recorded under [`COMBINED_WITH`], with the `files` combined (as the
/// references name them: inline chunks name no file, so the references alone cannot tell).
pub(super) fn record_of(combining: &Combining, files: &[String]) -> serde_json::Value {
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
pub(super) fn with_record(set: &ReferenceSet, record: &serde_json::Value) -> ReferenceSet {
    // A Zarr v3 set (files of uneven length) keeps its root's attributes in its `zarr.json`.
    if let Some(Reference::Inline(text)) = set.get("zarr.json")
        && let Ok(mut root) = serde_json::from_slice::<serde_json::Value>(text)
        && root["attributes"].is_object()
    {
        root["attributes"][COMBINED_WITH] = record.to_string().into();
        let mut builder = ReferenceSetBuilder::new();
        for (key, reference) in set.iter().filter(|(key, _)| key != "zarr.json") {
            builder.insert_reference(&key, reference);
        }
        builder.insert_inline("zarr.json", root.to_string().as_bytes());
        return builder.build();
    }
    let mut attributes = match set.get(".zattrs") {
        Some(Reference::Inline(text)) => serde_json::from_slice(text).ok(),
        _ => None,
    }
    .filter(serde_json::Value::is_object)
    .unwrap_or_else(|| serde_json::json!({}));
    attributes[COMBINED_WITH] = record.to_string().into();
    let mut builder = ReferenceSetBuilder::new();
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
    // A Zarr v3 set (files of uneven length) keeps the root's attributes in its `zarr.json`.
    let (key, pointer) = if set.get(".zattrs").is_none() && set.get("zarr.json").is_some() {
        ("zarr.json", "/attributes")
    } else {
        (".zattrs", "")
    };
    let Some(Reference::Inline(text)) = set.get(key) else { return Err(not_combined()) };
    let document: serde_json::Value = serde_json::from_slice(text).map_err(|_| not_combined())?;
    let attributes = document.pointer(pointer).ok_or_else(not_combined)?;
    let record: serde_json::Value = serde_json::from_str(attributes[COMBINED_WITH].as_str().ok_or_else(not_combined)?)
        .map_err(|_| not_combined())?;
    let cannot = || MakeError::CannotAppend { location: location.to_owned(), how: record.to_string() };
    // Innermost first; a record without a dimension's source predates it: the files' own coordinates, as then.
    let mut dimensions = record["concat"].as_array().into_iter().flatten().map(|dimension| {
        let dimension = dimension.as_str().ok_or_else(cannot)?;
        let source: CoordinateSource =
            record["coords"][dimension].as_str().unwrap_or("auto").parse().map_err(|_| cannot())?;
        Ok::<_, MakeError>((dimension, source))
    });
    let (dimension, source) = dimensions.next().ok_or_else(cannot)??;
    let mut options = CombineOptions::new(dimension).with_coordinate(source);
    for outer in dimensions {
        let (dimension, source) = outer?;
        options = options.then_along(dimension, source).map_err(|_| cannot())?;
    }
    if let Some(units) = record["units"].as_str() {
        options = options.with_time_units(units, record["calendar"].as_str()).map_err(|_| cannot())?;
    }
    let files =
        record["files"].as_array().into_iter().flatten().filter_map(|f| f.as_str().map(str::to_owned)).collect();
    Ok((options, files))
}

/// An append to a combined set, planned: how the set was combined (from its [`COMBINED_WITH`]
/// record), the files it records, and which of the files offered are new to it. The new files
/// are scanned for [`combining`](Self::combining) (here by [`append_references`], or spread
/// over other machines by [`scan_files`]), then [`combine`](Self::combine)d with the set.
#[derive(Clone, Debug)]
pub struct AppendPlan {
    combining: Combining,
    recorded: Vec<String>,
    new: Vec<String>,
}

impl AppendPlan {
    /// Plan adding `files` to `existing` (read from `location`): a file whose URL (`url_of`)
    /// the set already references is an error, or left out with `skip_existing`.
    ///
    /// # Errors
    /// [`MakeError::NotCombined`] or [`MakeError::CannotAppend`] if `existing` holds no record,
    /// or one of a way appending cannot repeat (merging); [`MakeError::AlreadyIn`].
    pub fn new(
        existing: &ReferenceSet,
        location: &str,
        files: &[String],
        skip_existing: bool,
        url_of: impl Fn(&str) -> String,
    ) -> Result<Self, MakeError> {
        let (combining, recorded) = recorded_combining(existing, location)?;
        // The files the record names, and those the references name (a set made before files were recorded).
        let mut known: std::collections::HashSet<&str> = existing
            .iter()
            .filter_map(|(_, reference)| match reference {
                Reference::Range { url, .. } | Reference::Whole { url } => url,
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
        Ok(Self { combining: Combining::Concat(combining), recorded, new })
    }

    /// How the set was combined: what the new files are scanned and combined for.
    #[must_use]
    pub fn combining(&self) -> &Combining {
        &self.combining
    }

    /// How the set was combined, as its record says it (`{"concat": ["time"], "coords":
    /// {"time": "cf"}, "units": ..., "calendar": ...}`), without its files: the options that
    /// scan the new files elsewhere as they would be scanned here.
    #[must_use]
    pub fn record(&self) -> serde_json::Value {
        let mut record = record_of(&self.combining, &[]);
        if let Some(object) = record.as_object_mut() {
            object.remove("files");
        }
        record
    }

    /// The files to scan: those offered that the set does not have, in their order.
    #[must_use]
    pub fn files(&self) -> &[String] {
        &self.new
    }

    /// `existing` (read from `location`) with the new files' references `scanned` (each named
    /// by its URL, in the order of [`files`](Self::files)) combined into it, the record naming
    /// them too; `reader` reads ranges of the new files where arrays must be compared (see
    /// [`FilePlaces::reader`](super::FilePlaces::reader)). The set's chunks are not copied:
    /// they are read back, renumbered, as the result is written ([`Appended::Streamed`]).
    ///
    /// Along one dimension whose values are in the files' data, the set is combined with the
    /// new files as one more file. Otherwise (several dimensions, values from names or
    /// attributes) the new files are combined first, as the set records, and the two sets are
    /// then concatenated along the one dimension whose values differ, both holding them: an
    /// append adds times after the set's to every member, or a member with every time the
    /// set has; whatever else the set holds must be the same.
    ///
    /// # Errors
    /// [`MakeError::Combine`] if the sets cannot be combined: a file whose times fall within the
    /// set's, an array that differs. [`MakeError::ExtendsSeveral`] if the new files differ from
    /// the set along several dimensions (new times for some members only).
    pub fn combine(
        self,
        existing: ReferenceSet,
        location: &str,
        scanned: Vec<(String, ReferenceSet)>,
        reader: Option<kerchunk_combine::RangeReader>,
    ) -> Result<Appended, MakeError> {
        let how = self.record().to_string();
        let cannot = || MakeError::CannotAppend { location: location.to_owned(), how: how.clone() };
        let mut recorded = self.recorded;
        recorded.extend(scanned.iter().map(|(url, _)| url.clone()));
        let Combining::Concat(options) = &self.combining else { return Err(cannot()) };
        // Nothing new (every file offered skipped): the set as it is. Combining it alone would
        // take each coordinate from it as from one file, which a value from file names refuses.
        if scanned.is_empty() {
            return Ok(Appended::Whole(existing));
        }
        // A Zarr v3 set (files of uneven length) is combined in its v2 form, its uneven grids
        // kept for combining to continue (`kerchunk_v3::set_v2`); the result is v3 again.
        let existing = if existing.get("zarr.json").is_some() && existing.get(".zgroup").is_none() {
            kerchunk_v3::set_v2(&existing)
                .map_err(|error| MakeError::Existing { location: location.to_owned(), reason: error.to_string() })?
        } else {
            existing
        };
        let record = record_of(&self.combining, &recorded);
        let with_reader = move |options: CombineOptions| match &reader {
            Some(reader) => options.with_range_reader(Arc::clone(reader)),
            None => options,
        };
        let from_data =
            matches!(options.coordinate, CoordinateSource::Auto | CoordinateSource::Data | CoordinateSource::Cf);
        if from_data && options.outer().next().is_none() {
            let mut inputs = Vec::with_capacity(scanned.len() + 1);
            inputs.push((location.to_owned(), existing));
            inputs.extend(scanned);
            return combine_held(inputs, &with_reader(options.clone()), &record);
        }
        let name = scanned[0].0.clone();
        let new = kerchunk_combine::combine_with(scanned, &with_reader(options.clone()))?;
        // Both sets hold every dimension's values now. The new files extend the one dimension
        // whose values differ: new times for every member, or a new member at every time.
        let dimensions = std::iter::once(options.dimension.as_str()).chain(options.outer().map(|(d, _)| d));
        let differing: Vec<&str> = dimensions.filter(|d| !same_coordinate(&existing, &new, d)).collect();
        let dimension = match differing[..] {
            [one] => one,
            [_, _, ..] => {
                let dimensions = differing.iter().map(|d| (*d).to_owned()).collect();
                return Err(MakeError::ExtendsSeveral { location: location.to_owned(), dimensions });
            }
            // The same values everywhere: combining along the innermost says which file repeats them.
            [] => options.dimension.as_str(),
        };
        let mut along = CombineOptions::new(dimension);
        if let (Some((units, calendar)), true) = (options.time_units(), dimension == options.dimension) {
            // The innermost's units as the set records them; parsed once already, when the record was read.
            along = along.with_time_units(units, calendar).map_err(|_| cannot())?;
        }
        combine_held(vec![(location.to_owned(), existing), (name, new)], &with_reader(along), &record)
    }
}

/// The references an append makes ([`AppendPlan::combine`]).
#[derive(Debug)]
#[non_exhaustive]
pub enum Appended {
    /// In one set: when no file was new, the set as it was.
    Whole(ReferenceSet),
    /// The set and the new files combined, each one's chunks held as it was and read back,
    /// renumbered, as the result is walked: where combining whole held the set three times
    /// over (read, combined, recorded), this holds it once.
    Streamed(StreamedCombine),
}

impl Appended {
    /// The references, for the writers.
    #[must_use]
    pub fn into_source(self) -> Box<dyn ReferenceSource> {
        match self {
            Self::Whole(set) => Box::new(set),
            Self::Streamed(combined) => Box::new(combined),
        }
    }

    /// The references, all of them in one set (as `--subchunk` splits them); `location` is
    /// the set appended to, which errors name.
    ///
    /// # Errors
    /// [`MakeError::Existing`] if a chunk set aside cannot be read back.
    pub fn into_whole(self, location: &str) -> Result<ReferenceSet, MakeError> {
        match self {
            Self::Whole(set) => Ok(set),
            Self::Streamed(combined) => load_references(&combined, location),
        }
    }
}

/// `inputs` combined with `options`, `record` recorded, as [`combine_with`](kerchunk_combine::combine_with)
/// combines them but without copying their chunks: each input is held in memory as it is (an
/// append's inputs are there already) and its chunks read back, renumbered, as the result is
/// walked.
fn combine_held(
    inputs: Vec<(String, ReferenceSet)>,
    options: &CombineOptions,
    record: &serde_json::Value,
) -> Result<Appended, MakeError> {
    let mut held = HashMap::new();
    let mut rests = FileRests::new();
    for (name, set) in inputs {
        // The chunks are read back from the set itself: only what orders and checks it is copied.
        rests.push(name.clone(), kerchunk_combine::combined_rest(&name, &set, options)?);
        held.insert(name, Arc::new(set));
    }
    let combined = recorded_streamed(rests, options, Arc::new(held), record)?;
    // The new files may leave the set's chunks uneven (a file after a last chunk cut short):
    // the set is then Zarr v3, on a rectilinear grid, or its chunks would read misplaced.
    if combined.is_uneven() {
        return Ok(Appended::Streamed(combined.written_as_v3()?));
    }
    Ok(Appended::Streamed(combined))
}

/// Whether `a` and `b` hold the same coordinate array for `dimension`: the same metadata and
/// the same references for each of its chunks. Combined sets write their coordinates the same
/// way, so the same values are the same references.
fn same_coordinate(a: &ReferenceSet, b: &ReferenceSet, dimension: &str) -> bool {
    // Metadata compared as JSON: a parquet root may keep it written another way.
    let metadata = |set: &ReferenceSet, name: &str| match set.get(&format!("{dimension}/{name}")) {
        Some(Reference::Inline(text)) => serde_json::from_slice::<serde_json::Value>(text).ok(),
        _ => None,
    };
    let Some(zarray) = metadata(a, ".zarray") else { return false };
    if metadata(b, ".zarray").as_ref() != Some(&zarray) || metadata(a, ".zattrs") != metadata(b, ".zattrs") {
        return false;
    }
    let (Some(length), Some(chunk)) = (zarray["shape"][0].as_u64(), zarray["chunks"][0].as_u64()) else {
        return false;
    };
    let chunks = if chunk == 0 { 0 } else { length.div_ceil(chunk) };
    (0..chunks).all(|i| {
        let key = format!("{dimension}/{i}");
        a.get(&key) == b.get(&key)
    })
}

/// Scan `files` and add their references to `existing` (read from `location`), combined the
/// way `existing` records under [`COMBINED_WITH`]: a daily job's new files appended along
/// time, without scanning the old ones again ([`AppendPlan`], then [`scan_files`] here). A file
/// whose URL (`url_of`) the set already references is an error, or left out with
/// `skip_existing`. The other arguments are [`make_references`](super::make_references)'.
///
/// Returns what scanning cost (its `references` left empty) and the references.
///
/// # Errors
/// What [`AppendPlan::new`], [`AppendPlan::combine`] and
/// [`make_references`](super::make_references) give.
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
) -> Result<(Made, Appended), MakeError> {
    let plan = AppendPlan::new(&existing, location, files, skip_existing, &url_of)?;
    let Scanned { made, sets, places } =
        scan_files(plan.files(), Some(plan.combining()), options, jobs, registry, url_of, progress)?;
    let appended = plan.combine(existing, location, sets, Some(places.reader()?))?;
    Ok((made, appended))
}

/// The references of `source` (a JSON set or a parquet root), all of them, in memory: what
/// [`append_references`] adds to.
///
/// # Errors
/// [`MakeError::Existing`] if a record cannot be read.
pub fn load_references(source: &dyn ReferenceSource, location: &str) -> Result<ReferenceSet, MakeError> {
    if let Some(set) = source.in_memory() {
        let mut builder = ReferenceSetBuilder::new();
        for (key, reference) in set.iter() {
            builder.insert_reference(&key, reference);
        }
        return Ok(builder.build());
    }
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().map_err(MakeError::Runtime)?;
    runtime.block_on(async {
        let mut builder = ReferenceSetBuilder::new();
        let mut walk = source.walk(kerchunk::Walk::All);
        while let Some(entry) = walk.next().await {
            let (key, reference) =
                entry.map_err(|e| MakeError::Existing { location: location.to_owned(), reason: e.to_string() })?;
            builder.insert_reference(&key, reference.as_reference());
        }
        Ok(builder.build())
    })
}
