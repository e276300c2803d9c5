//! References made from files, as Python functions: `scan` (everything here), and the two
//! halves of a scan spread over an executor: `scan_share` (some of the files, on a worker; the
//! references come back as compact JSON bytes, which pickle) and `combine_shares` (on the
//! caller). Reports cross as JSON text; every call runs with the GIL released.

use std::sync::Arc;

use kerchunk_combine::{CombineOptionError, CoordinateSource};
use kerchunk_scan::{DmrppSidecars, ScanError, ScanOptions, UnsupportedArrays};
use pyo3::prelude::*;
use pyo3::types::PyBytes;
use zarrs_kerchunk::kerchunk::{JsonWriteOptions, ParquetWriteOptions, ReferenceSet, error_chain};
use zarrs_kerchunk::{RecordCacheOptions, ReferenceStoreBuilder, StoreRegistry};
use zarrs_kerchunk_tools::make::{
    AppendPlan, Appended, Combining, FilePlaces, Made, MakeError, Scanned, append_references, combine_options,
    combine_scans, expand, load_references, make_references, make_streamed, scan_files, streamable, url_in_references,
    without_named_sidecars, writable,
};
use zarrs_kerchunk_tools::output::{rewrite_references, write_references};

use crate::errors::{self, Error, Kind, object_store_kind};
use crate::packed;
use crate::runtime;
use crate::tools::{WriteOptions, output_error};

pub(crate) fn register(module: &Bound<'_, PyModule>) -> PyResult<()> {
    module.add_function(wrap_pyfunction!(scan, module)?)?;
    module.add_function(wrap_pyfunction!(expand_files, module)?)?;
    module.add_function(wrap_pyfunction!(scan_share, module)?)?;
    module.add_function(wrap_pyfunction!(combine_shares, module)?)?;
    module.add_function(wrap_pyfunction!(plan_append, module)?)?;
    Ok(())
}

/// What `scan` takes besides the files.
#[derive(FromPyObject)]
#[pyo3(from_item_all)]
#[expect(clippy::struct_excessive_bools, reason = "independent keyword arguments of tools.scan")]
pub(crate) struct ScanArguments {
    /// The dimensions to combine along, innermost first (the command line's `--concat`).
    concat: Vec<String>,
    /// Where each dimension's values come from (`kerchunk_combine::CoordinateSource`'s text; `--coord`).
    coords: Vec<(String, String)>,
    /// The CF units, and their calendar, the combined times are written in.
    units: Option<String>,
    calendar: Option<String>,
    /// How many files to scan at once.
    jobs: usize,
    /// Concatenating: how many MiB of the files' combined chunks to hold in
    /// memory, the rest in a temporary file (the command line's `--combine-memory`).
    combine_memory: usize,
    /// Arrays taken once rather than given a new dimension (`--identical`).
    identical: Vec<String>,
    /// Merge files of one variable each rather than concatenate.
    merge: bool,
    /// A combined set to add the files to (`make::append_references`), written again to `output`.
    pub(crate) append_to: Option<String>,
    /// Leave out files the set to append to has already.
    pub(crate) skip_existing: bool,
    inline_threshold: Option<u64>,
    fail_unsupported: bool,
    /// Whether a GRIB file's inventory beside it gives its messages (`ScanOptions::with_grib_inventory`).
    grib_inventory: bool,
    /// Whether messages an inventory lists as one variable at several levels share a header
    /// read (`ScanOptions::with_grib_levels_from_inventory`).
    grib_levels_from_inventory: bool,
    /// Arrays whose chunks to split, and into how many (`kerchunk_scan::subchunk`).
    pub(crate) subchunk: Vec<(String, u64)>,
    /// Whether a file's DMR++ sidecar is read in its place: `auto`, `never` or `only` (`--dmrpp`).
    dmrpp: String,
}

/// Make references from `files` (paths, URLs or patterns) and write them to
/// `output`; a JSON report of what was made.
#[pyfunction]
#[expect(clippy::needless_pass_by_value, reason = "pyo3 extracts arguments by value")]
fn scan(
    py: Python<'_>,
    files: Vec<String>,
    output: &str,
    arguments: ScanArguments,
    options: WriteOptions,
) -> PyResult<String> {
    runtime::check_process()?;
    let (json, parquet) = options.formats(output)?;
    let registry = options.registry()?;
    let (scan_options, combining) = arguments.prepared()?;
    let report = py.detach(|| -> Result<serde_json::Value, Error> {
        let expanded = without_named_sidecars(expand_all(&files, &registry)?, arguments.sidecars()?);
        let streamable = streamable(combining.as_ref(), expanded.len()).filter(|_| arguments.subchunk.is_empty());
        if let Some(concat) = streamable.filter(|_| arguments.append_to.is_none()) {
            // Each file's chunks wait aside until written: memory does not grow with the files.
            let url_of = |file: &str| url_in_references(file, output);
            let streamed = make_streamed(
                &expanded,
                concat,
                &scan_options,
                arguments.jobs,
                &registry,
                url_of,
                || {},
                arguments.combine_memory_bytes(),
            )
            .map_err(|e| make_error(&e))?;
            let mut report = report_of(&streamed.made);
            let references = writable(streamed.references).map_err(|e| make_error(&e))?;
            let written = write_references(references.as_ref(), output, &registry, &json, &parquet)
                .map_err(|e| output_error(&e))?;
            report["references"] = written.into();
            return Ok(report);
        }
        if let Some(location) = &arguments.append_to {
            let existing = load(location, &options)?;
            let (made, appended) = append_references(
                existing,
                location,
                &expanded,
                arguments.skip_existing,
                &scan_options,
                arguments.jobs,
                &registry,
                |file| url_in_references(file, output),
                || {},
            )
            .map_err(|e| make_error(&e))?;
            let mut report = report_of(&made);
            arguments.write(appended, output, &registry, &options, &json, &parquet, &mut report)?;
            return Ok(report);
        }
        let mut made = make_references(
            &expanded,
            combining.as_ref(),
            &scan_options,
            arguments.jobs,
            &registry,
            |file| url_in_references(file, output),
            || {},
        )
        .map_err(|e| make_error(&e))?;
        let references = Appended::Whole(std::mem::take(&mut made.references));
        let mut report = report_of(&made);
        arguments.write(references, output, &registry, &options, &json, &parquet, &mut report)?;
        Ok(report)
    })?;
    Ok(report.to_string())
}

impl ScanArguments {
    /// `dmrpp` as the scanner takes it.
    pub(crate) fn sidecars(&self) -> Result<DmrppSidecars, Error> {
        match self.dmrpp.as_str() {
            "auto" => Ok(DmrppSidecars::Auto),
            "never" => Ok(DmrppSidecars::Never),
            "only" => Ok(DmrppSidecars::Only),
            other => Err(Error::new(Kind::Invalid, format!("dmrpp={other:?}: it is \"auto\", \"never\" or \"only\""))),
        }
    }

    /// The memory `combine_memory` gives, in bytes.
    pub(crate) fn combine_memory_bytes(&self) -> usize {
        self.combine_memory.saturating_mul(1 << 20)
    }

    /// The scan's options and the combining these arguments ask for.
    pub(crate) fn prepared(&self) -> Result<(ScanOptions, Option<Combining>), Error> {
        let mut scan_options = ScanOptions::default();
        if let Some(bytes) = self.inline_threshold {
            scan_options = scan_options.with_inline_threshold(bytes);
        }
        if self.fail_unsupported {
            scan_options = scan_options.with_unsupported_arrays(UnsupportedArrays::Fail);
        }
        scan_options = scan_options
            .with_grib_inventory(self.grib_inventory)
            .with_grib_levels_from_inventory(self.grib_levels_from_inventory)
            .with_dmrpp_sidecars(self.sidecars()?);
        let invalid = |e: CombineOptionError| Error::new(Kind::Invalid, e.to_string());
        let coords = self
            .coords
            .iter()
            .map(|(dimension, source)| Ok((dimension.clone(), source.parse::<CoordinateSource>()?)))
            .collect::<Result<Vec<_>, CombineOptionError>>()
            .map_err(invalid)?;
        let concat =
            combine_options(&self.concat, &coords, &self.identical, self.units.as_deref(), self.calendar.as_deref())
                .map_err(invalid)?;
        Ok((scan_options, if self.merge { Some(Combining::Merge) } else { concat.map(Combining::Concat) }))
    }
}

impl ScanArguments {
    /// `references` (an append's read back as they are written, unless `subchunk` asks for
    /// chunks split, which needs them whole) written to `output`, and what was written put in
    /// `report`: the references, and the record files written, unchanged and removed where an
    /// append is written back to the parquet root it extends (only the records that change
    /// are: `output::rewrite_references`).
    #[expect(clippy::too_many_arguments, reason = "the place, its store's options, the formats, the report")]
    pub(crate) fn write(
        &self,
        references: Appended,
        output: &str,
        registry: &StoreRegistry,
        options: &WriteOptions,
        json: &JsonWriteOptions,
        parquet: &ParquetWriteOptions,
        report: &mut serde_json::Value,
    ) -> Result<(), Error> {
        let references = if self.subchunk.is_empty() {
            references.into_source()
        } else {
            let mut whole =
                references.into_whole(self.append_to.as_deref().unwrap_or(output)).map_err(|e| make_error(&e))?;
            for (array, factor) in &self.subchunk {
                whole = kerchunk_scan::subchunk(&whole, array, *factor)
                    .map_err(|e| Error::new(Kind::Invalid, e.to_string()))?;
            }
            Box::new(whole)
        };
        let references = references.as_ref();
        let (written, update) = match self.append_to.as_deref().filter(|location| *location == output) {
            Some(location) => {
                let previous = ReferenceStoreBuilder::new()
                    .with_registry(Arc::new(options.registry()?))
                    .with_record_cache(RecordCacheOptions::default().with_max_records(2))
                    .open(location)
                    .map_err(|e| errors::open_error(location, &e))?;
                rewrite_references(references, previous.source().as_ref(), output, registry, json, parquet)
            }
            None => write_references(references, output, registry, json, parquet).map(|written| (written, None)),
        }
        .map_err(|e| output_error(&e))?;
        report["references"] = written.into();
        if let Some(update) = update {
            report["records"] = serde_json::json!({
                "written": update.records_written, "unchanged": update.records_kept, "removed": update.records_removed,
            });
        }
        Ok(())
    }
}

/// The set at `location` (JSON or parquet), all of it, in memory: what an append adds to.
pub(crate) fn load(location: &str, options: &WriteOptions) -> Result<ReferenceSet, Error> {
    let existing = ReferenceStoreBuilder::new()
        .with_registry(Arc::new(options.registry()?))
        .open(location)
        .map_err(|e| errors::open_error(location, &e))?;
    load_references(existing.source().as_ref(), location).map_err(|e| make_error(&e))
}

/// What was made, as `tools.scan` reports it (`references` 0 until they are written).
fn report_of(made: &Made) -> serde_json::Value {
    let skipped: Vec<_> = made
        .skipped
        .iter()
        .map(|(file, skipped)| serde_json::json!({"file": file, "path": skipped.path, "reason": skipped.reason}))
        .collect();
    serde_json::json!({
        "references": 0, "files": made.files, "requests": made.requests,
        "bytes": made.bytes, "skipped": skipped,
    })
}

/// The files `files` name (patterns expanded by listing their stores), in order.
#[pyfunction]
#[expect(clippy::needless_pass_by_value, reason = "pyo3 extracts arguments by value")]
fn expand_files(py: Python<'_>, files: Vec<String>, options: WriteOptions) -> PyResult<Vec<String>> {
    runtime::check_process()?;
    let registry = options.registry()?;
    py.detach(|| expand_all(&files, &registry)).map_err(Into::into)
}

/// Every file `files` names, patterns expanded.
pub(crate) fn expand_all(files: &[String], registry: &StoreRegistry) -> Result<Vec<String>, Error> {
    let mut expanded = Vec::new();
    for file in files {
        expanded.extend(expand(file, registry).map_err(|e| make_error(&e))?);
    }
    Ok(expanded)
}

/// A share of a spread scan as it travels: its files' URLs and their packed references.
type Share = (Vec<String>, Py<PyBytes>);

/// Scan `files` (no patterns), on a worker: the share of the scan (`packed::pack`: each
/// file's URL as the references at `output` will name it, and all their references in one
/// compressed `bytes`), and a JSON report of the scan (`references` 0: nothing is written here).
#[pyfunction]
#[expect(clippy::needless_pass_by_value, reason = "pyo3 extracts arguments by value")]
fn scan_share(
    py: Python<'_>,
    files: Vec<String>,
    output: &str,
    arguments: ScanArguments,
    options: WriteOptions,
) -> PyResult<(Share, String)> {
    runtime::check_process()?;
    let registry = options.registry()?;
    let (scan_options, combining) = arguments.prepared()?;
    let (made, (urls, packed)) = py.detach(|| -> Result<_, Error> {
        let Scanned { made, sets, .. } = scan_files(
            &files,
            combining.as_ref(),
            &scan_options,
            arguments.jobs,
            &registry,
            |file| url_in_references(file, output),
            || {},
        )
        .map_err(|e| make_error(&e))?;
        Ok((made, packed::pack(sets)?))
    })?;
    Ok(((urls, PyBytes::new(py, &packed).unbind()), report_of(&made).to_string()))
}

/// The shares `scan_share` made (in the order of the files, which are `files`), combined as
/// `arguments` say (reading the files where arrays that must be the same are held by range
/// references) and written to `output`; the JSON report of the combining (the references
/// written and the files).
#[pyfunction]
#[expect(clippy::needless_pass_by_value, reason = "pyo3 extracts arguments by value")]
fn combine_shares(
    py: Python<'_>,
    shares: Vec<(Vec<String>, Bound<'_, PyBytes>)>,
    files: Vec<String>,
    output: &str,
    arguments: ScanArguments,
    options: WriteOptions,
) -> PyResult<String> {
    runtime::check_process()?;
    let (json, parquet) = options.formats(output)?;
    let registry = options.registry()?;
    let (_, combining) = arguments.prepared()?;
    // Borrowed from the shares' `bytes`, which are immutable and outlive the call.
    let shares: Vec<(&[String], &[u8])> =
        shares.iter().map(|(urls, packed)| (urls.as_slice(), packed.as_bytes())).collect();
    let report = py.detach(|| -> Result<serde_json::Value, Error> {
        let urls: Vec<String> = shares.iter().flat_map(|(urls, _)| urls.iter().cloned()).collect();
        let files_scanned = files.clone();
        let reader = shares_reader(&urls, files, &registry)?;
        let mut sets = Vec::with_capacity(urls.len());
        for &(share_urls, packed) in &shares {
            packed::each_file(share_urls, packed, |url, set| {
                sets.push((url.to_owned(), set));
                Ok(())
            })?;
        }
        let references = match &arguments.append_to {
            // The shares scanned the files `plan_append` gave, for the set's recorded combining.
            Some(location) => {
                let existing = load(location, &options)?;
                let plan = AppendPlan::new(&existing, location, &files_scanned, arguments.skip_existing, |file| {
                    url_in_references(file, output)
                })
                .map_err(|e| make_error(&e))?;
                plan.combine(existing, location, sets, Some(reader))
            }
            None => combine_scans(sets, combining.as_ref(), &urls, Some(reader)).map(Appended::Whole),
        }
        .map_err(|e| make_error(&e))?;
        let mut report = serde_json::json!({"files": urls});
        arguments.write(references, output, &registry, &options, &json, &parquet, &mut report)?;
        Ok(report)
    })?;
    Ok(report.to_string())
}

/// The files of `files` (no patterns) that the set `arguments.append_to` does not have (those
/// it has are an error, or left out with `arguments.skip_existing`), and how the set records it
/// was combined, as JSON text (`make::AppendPlan::record`): what a spread append scans, and
/// the options it scans them with.
#[pyfunction]
#[expect(clippy::needless_pass_by_value, reason = "pyo3 extracts arguments by value")]
fn plan_append(
    py: Python<'_>,
    files: Vec<String>,
    output: &str,
    arguments: ScanArguments,
    options: WriteOptions,
) -> PyResult<(Vec<String>, String)> {
    runtime::check_process()?;
    let Some(location) = arguments.append_to.as_deref() else {
        return Err(Error::new(Kind::Invalid, "plan_append needs append_to").into());
    };
    py.detach(|| {
        let existing = load(location, &options)?;
        let plan = AppendPlan::new(&existing, location, &files, arguments.skip_existing, |file| {
            url_in_references(file, output)
        })
        .map_err(|e| make_error(&e))?;
        Ok::<_, Error>((plan.files().to_vec(), plan.record().to_string()))
    })
    .map_err(Into::into)
}

/// What reads the range references of a spread scan's files on the caller: the files' URLs
/// as the shares name them, paired in order with `files`, the paths or URLs scanned.
pub(crate) fn shares_reader(
    urls: &[String],
    files: Vec<String>,
    registry: &StoreRegistry,
) -> Result<kerchunk_combine::RangeReader, Error> {
    let named: Vec<(String, String)> = urls.iter().cloned().zip(files).collect();
    FilePlaces::locate(&named, registry).and_then(FilePlaces::reader).map_err(|e| make_error(&e))
}

pub(crate) fn make_error(error: &MakeError) -> Error {
    let kind = match error {
        MakeError::NoMatch(_) => Kind::NotFound,
        MakeError::List { source, .. } => object_store_kind(source),
        MakeError::Place(error) => return output_error(error),
        MakeError::Scan(ScanError::Read { source, .. }) => object_store_kind(source),
        MakeError::Scan(ScanError::ShortRead { .. }) => Kind::Unreachable,
        _ => Kind::Invalid,
    };
    Error::new(kind, error_chain(error))
}
