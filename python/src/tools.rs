//! The tools of `zarrs_kerchunk_tools` as Python functions: statistics,
//! audits and pins of an opened set, conversion, and references made from
//! files. Reports cross as JSON text, which the Python side turns into
//! dicts; every call runs with the GIL released.

use std::sync::Arc;

use kerchunk_scan::{CombineOptionError, CoordinateSource, ScanError, ScanOptions, UnsupportedArrays};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use zarrs_kerchunk::kerchunk::{
    JsonVersion, JsonWriteOptions, ParquetWriteOptions, PathEncoding, WriteError, error_chain,
};
use zarrs_kerchunk::{ReferenceStoreBuilder, StoreRegistry};
use zarrs_kerchunk_tools::inspect::{self, AuditOptions, InspectError};
use zarrs_kerchunk_tools::make::{
    Combining, MakeError, append_references, combine_options, expand, load_references, make_references,
    url_in_references,
};
use zarrs_kerchunk_tools::output::{OutputError, write_references};

use crate::errors::{self, Error, Kind, object_store_kind, read_kind};
use crate::runtime;
use crate::store::StoreHandle;

pub(crate) fn register(module: &Bound<'_, PyModule>) -> PyResult<()> {
    module.add_function(wrap_pyfunction!(stats, module)?)?;
    module.add_function(wrap_pyfunction!(audit, module)?)?;
    module.add_function(wrap_pyfunction!(pin, module)?)?;
    module.add_function(wrap_pyfunction!(convert, module)?)?;
    module.add_function(wrap_pyfunction!(scan, module)?)?;
    Ok(())
}

/// What the set's references point at, as JSON: per array, per target.
#[pyfunction]
fn stats(py: Python<'_>, store: &StoreHandle) -> PyResult<String> {
    runtime::check_process()?;
    let store = store.zarrs_store();
    let stats = py.detach(|| inspect::stats(store)).map_err(|e| inspect_error(&e))?;
    to_json(&stats)
}

/// Every target checked against what its references need, as JSON.
#[pyfunction]
#[pyo3(signature = (store, concurrency=16))]
fn audit(py: Python<'_>, store: &StoreHandle, concurrency: usize) -> PyResult<String> {
    runtime::check_process()?;
    let store = store.zarrs_store();
    let options = AuditOptions::default().with_concurrency(concurrency);
    let audit = py.detach(|| inspect::audit(store, &options)).map_err(|e| inspect_error(&e))?;
    to_json(&audit)
}

/// Pins for every target that passes the audit, and the audit, both as JSON.
#[pyfunction]
#[pyo3(signature = (store, concurrency=16))]
fn pin(py: Python<'_>, store: &StoreHandle, concurrency: usize) -> PyResult<(String, String)> {
    runtime::check_process()?;
    let store = store.zarrs_store();
    let options = AuditOptions::default().with_concurrency(concurrency);
    let (pins, audit) = py.detach(|| inspect::pin(store, &options)).map_err(|e| inspect_error(&e))?;
    Ok((pins.to_json(), to_json(&audit)?))
}

/// How references are written, and where a URL's store comes from.
#[derive(FromPyObject)]
#[pyo3(from_item_all)]
struct WriteOptions {
    version: u8,
    url_templates: bool,
    zstd: Option<i32>,
    record_size: u64,
    paths: String,
    compression: bool,
    storage_options: std::collections::BTreeMap<String, String>,
    anonymous: bool,
}

impl WriteOptions {
    fn registry(&self) -> StoreRegistry {
        let registry = if self.anonymous { StoreRegistry::new().with_anonymous() } else { StoreRegistry::new() };
        self.storage_options.iter().fold(registry, |registry, (key, value)| registry.with_option(key, value))
    }

    fn formats(&self, output: &str) -> PyResult<(JsonWriteOptions, ParquetWriteOptions)> {
        let encoding = match self.paths.as_str() {
            "plain" => PathEncoding::Plain,
            "dictionary" => PathEncoding::Dictionary,
            "auto" => PathEncoding::AboveRepetition(10.0),
            other => return Err(PyValueError::new_err(format!("paths: {other:?} is not plain, dictionary or auto"))),
        };
        let mut parquet =
            ParquetWriteOptions::default().with_record_size(self.record_size).with_path_encoding(encoding);
        if !self.compression {
            parquet = parquet.with_zstd(None);
        }
        let mut json = JsonWriteOptions::default().with_url_templates(self.url_templates);
        match self.version {
            0 => json = json.with_version(JsonVersion::V0),
            1 => {}
            other => return Err(PyValueError::new_err(format!("version: {other} is not 0 or 1"))),
        }
        if let Some(level) = self.zstd.or(output.to_ascii_lowercase().ends_with(".zst").then_some(3)) {
            json = json.with_zstd(level);
        }
        Ok((json, parquet))
    }
}

/// Write the references of `store` to `output`; the number of references written.
#[pyfunction]
#[expect(clippy::needless_pass_by_value, reason = "pyo3 extracts arguments by value")]
fn convert(py: Python<'_>, store: &StoreHandle, output: &str, options: WriteOptions) -> PyResult<u64> {
    runtime::check_process()?;
    let (json, parquet) = options.formats(output)?;
    let registry = options.registry();
    let source = store.zarrs_store();
    py.detach(|| write_references(source.source().as_ref(), output, &registry, &json, &parquet))
        .map_err(|e| output_error(&e).into())
}

/// What `scan` takes besides the files.
#[derive(FromPyObject)]
#[pyo3(from_item_all)]
struct ScanArguments {
    /// The dimensions to combine along, innermost first (the command line's `--concat`).
    concat: Vec<String>,
    /// Where each dimension's values come from (`kerchunk_scan::CoordinateSource`'s text; `--coord`).
    coords: Vec<(String, String)>,
    /// The CF units, and their calendar, the combined times are written in.
    units: Option<String>,
    calendar: Option<String>,
    /// How many files to scan at once.
    jobs: usize,
    /// Merge files of one variable each rather than concatenate.
    merge: bool,
    /// A combined set to add the files to (`make::append_references`), written again to `output`.
    append_to: Option<String>,
    /// Leave out files the set to append to has already.
    skip_existing: bool,
    inline_threshold: Option<u64>,
    fail_unsupported: bool,
    /// Arrays whose chunks to split, and into how many (`kerchunk_scan::subchunk`).
    subchunk: Vec<(String, u64)>,
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
    let registry = options.registry();
    let mut scan_options = ScanOptions::default();
    if let Some(bytes) = arguments.inline_threshold {
        scan_options = scan_options.with_inline_threshold(bytes);
    }
    if arguments.fail_unsupported {
        scan_options = scan_options.with_unsupported_arrays(UnsupportedArrays::Fail);
    }
    let coords = arguments
        .coords
        .iter()
        .map(|(dimension, source)| Ok((dimension.clone(), source.parse::<CoordinateSource>()?)))
        .collect::<Result<Vec<_>, CombineOptionError>>();
    let invalid = |e: CombineOptionError| Error::new(Kind::Invalid, e.to_string());
    let concat = combine_options(
        &arguments.concat,
        &coords.map_err(invalid)?,
        arguments.units.as_deref(),
        arguments.calendar.as_deref(),
    )
    .map_err(invalid)?;
    let combining = if arguments.merge { Some(Combining::Merge) } else { concat.map(Combining::Concat) };
    let report = py.detach(|| -> Result<serde_json::Value, Error> {
        let mut expanded = Vec::new();
        for file in &files {
            expanded.extend(expand(file, &registry).map_err(|e| make_error(&e))?);
        }
        let made = if let Some(location) = &arguments.append_to {
            let existing = ReferenceStoreBuilder::new()
                .with_registry(Arc::new(options.registry()))
                .open(location)
                .map_err(|e| errors::open_error(location, &e))?;
            let existing = load_references(existing.source().as_ref(), location).map_err(|e| make_error(&e))?;
            append_references(
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
        } else {
            make_references(
                &expanded,
                combining.as_ref(),
                &scan_options,
                arguments.jobs,
                &registry,
                |file| url_in_references(file, output),
                || {},
            )
        }
        .map_err(|e| make_error(&e))?;
        let mut references = made.references;
        for (array, factor) in &arguments.subchunk {
            references = kerchunk_scan::subchunk(&references, array, *factor)
                .map_err(|e| Error::new(Kind::Invalid, e.to_string()))?;
        }
        let written =
            write_references(&references, output, &registry, &json, &parquet).map_err(|e| output_error(&e))?;
        let skipped: Vec<_> = made
            .skipped
            .iter()
            .map(|(file, skipped)| serde_json::json!({"file": file, "path": skipped.path, "reason": skipped.reason}))
            .collect();
        Ok(serde_json::json!({
            "references": written, "files": made.files, "requests": made.requests,
            "bytes": made.bytes, "skipped": skipped,
        }))
    })?;
    Ok(report.to_string())
}

fn to_json(value: &impl serde::Serialize) -> PyResult<String> {
    serde_json::to_string(value).map_err(|e| PyValueError::new_err(format!("cannot report: {e}")))
}

fn inspect_error(error: &InspectError) -> PyErr {
    let kind = match error {
        InspectError::Runtime(error) => read_kind(error),
        InspectError::Storage(_) => Kind::Unreachable,
        _ => Kind::Invalid,
    };
    Error::new(kind, error_chain(error)).into()
}

fn output_error(error: &OutputError) -> Error {
    let kind = match error {
        OutputError::Place { .. } => Kind::Invalid,
        OutputError::Store { source, .. } => object_store_kind(source),
        OutputError::Io { source, .. } if source.kind() == std::io::ErrorKind::PermissionDenied => Kind::Denied,
        OutputError::Write { source, .. } if matches!(**source, WriteError::Read(_)) => Kind::Invalid,
        _ => Kind::Unreachable,
    };
    Error::new(kind, error_chain(error))
}

fn make_error(error: &MakeError) -> Error {
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
