//! Reference sets that exist combined, as Python functions: `combine` (`tools.combine`), the
//! command line's `combine`, with `tools.scan`'s combining arguments, and `combine_references`
//! (kerchunk's `MultiZarrToZarr`), which takes sets in memory and gives kerchunk's `refs` dict.
//! Both combine with the GIL released.

use std::sync::Arc;

use pyo3::prelude::*;
use pyo3::types::{PyAny, PyDict};
use zarrs_kerchunk::{OpenError, ReferenceStoreBuilder};
use zarrs_kerchunk_tools::icechunk::{IcechunkLocation, open_icechunk};
use zarrs_kerchunk_tools::make::{MakeError, append_sets, combine_sets};
use zarrs_kerchunk_tools::output::write_references;

use crate::documents::Document;
use crate::errors::{Error, Kind, icechunk_error, open_error};
use crate::refs_dict::{Inlining, refs_dict};
use crate::runtime;
use crate::scan::{ScanArguments, expand_all, load, make_error};
use crate::tools::{WriteOptions, output_error};

pub(crate) fn register(module: &Bound<'_, PyModule>) -> PyResult<()> {
    module.add_function(wrap_pyfunction!(combine, module)?)?;
    module.add_function(wrap_pyfunction!(combine_references, module)?)?;
    Ok(())
}

/// Combine the reference sets `refs` (paths, URLs, patterns, icechunk repositories) as
/// `arguments` say and write them to `output`; a JSON report: the sets and the references written.
#[pyfunction]
#[expect(clippy::needless_pass_by_value, reason = "pyo3 extracts arguments by value")]
fn combine(
    py: Python<'_>,
    refs: Vec<String>,
    output: &str,
    arguments: ScanArguments,
    options: WriteOptions,
) -> PyResult<String> {
    runtime::check_process()?;
    // The sets' coordinates are decoded here, with any codec their references name.
    runtime::register_codecs();
    let (json, parquet) = options.formats(output)?;
    let registry = Arc::new(options.registry()?);
    let (_, combining) = arguments.prepared()?;
    let report = py.detach(|| -> Result<serde_json::Value, Error> {
        let mut sets = Vec::new();
        for location in &refs {
            if IcechunkLocation::parse(location).is_some() {
                sets.push(location.clone());
            } else {
                sets.extend(expand_all(std::slice::from_ref(location), &registry)?);
            }
        }
        let builder = sets_builder(&registry);
        // The sets that cannot be opened, each with the exception its failure is in Python.
        let failures = std::sync::Mutex::new(std::collections::HashMap::new());
        let open = |location: &str| {
            let store = match IcechunkLocation::parse(location) {
                Some(repository) => open_icechunk(&builder, &repository.with_options(options.repository_options()))
                    .map_err(|e| icechunk_error(&e)),
                None => builder.open(location).map_err(|e| open_error(location, &e)),
            };
            store.map_err(|error| failed_to_open(&failures, location, error))
        };
        if let Some(location) = &arguments.append_to {
            let existing = load(location, &options)?;
            let skip = arguments.skip_existing;
            let (added, appended) = append_sets(existing, location, &sets, skip, open, output, Arc::clone(&registry))
                .map_err(|error| opened(&failures, error))?;
            let mut report = serde_json::json!({"references": 0, "sets": added});
            arguments.write(appended, output, &registry, &options, &json, &parquet, &mut report)?;
            return Ok(report);
        }
        let Some(combining) = &combining else {
            return Err(Error::new(Kind::Invalid, MakeError::NeedsConcat.to_string()));
        };
        let memory = arguments.combine_memory_bytes();
        let combined = combine_sets(&sets, open, combining, output, Arc::clone(&registry), memory, || {})
            .map_err(|error| opened(&failures, error))?;
        let written = write_references(combined.references.as_ref(), output, &registry, &json, &parquet)
            .map_err(|e| output_error(&e))?;
        Ok(serde_json::json!({"references": written, "sets": combined.sets}))
    })?;
    Ok(report.to_string())
}

/// Combine the reference sets `sets` as `arguments` say (concatenating or merging, never
/// appending), their targets named as references written to `output` would name them, and
/// return kerchunk's `refs` dict of the result and the sets combined. Each set is `(name, None)`,
/// the references at location `name` (patterns expanded), or `(name, Some(document))`, a kerchunk
/// document (a dict) that errors call `name`, whose relative URLs resolve against
/// `base` (the location the document would have). Range references shorter than `inline_below`
/// bytes, but for coordinates and the arrays `not_inlined` names, are read and held inline, as
/// kerchunk's `MultiZarrToZarr` holds them ([`Inlining`]).
#[pyfunction]
#[expect(clippy::needless_pass_by_value, reason = "pyo3 extracts arguments by value")]
#[expect(clippy::too_many_arguments, reason = "a private entry point, its arguments as Python gives them")]
fn combine_references<'py>(
    py: Python<'py>,
    sets: Vec<(String, Option<Bound<'py, PyAny>>)>,
    base: &str,
    output: &str,
    arguments: ScanArguments,
    options: WriteOptions,
    inline_below: u64,
    not_inlined: Vec<String>,
) -> PyResult<(Bound<'py, PyDict>, Vec<String>)> {
    runtime::check_process()?;
    runtime::register_codecs();
    let registry = Arc::new(options.registry()?);
    let (_, combining) = arguments.prepared()?;
    let Some(combining) = combining else {
        return Err(Error::new(Kind::Invalid, MakeError::NeedsConcat.to_string()).into());
    };
    // Documents are read here, with the GIL; locations and documents' text on combining's threads.
    let sets = sets
        .into_iter()
        .map(|(name, document)| Ok((name, document.as_ref().map(Document::new).transpose()?)))
        .collect::<PyResult<Vec<_>>>()?;
    let builder = sets_builder(&registry);
    let combined = py.detach(|| -> Result<_, Error> {
        let mut names = Vec::with_capacity(sets.len());
        let mut documents = std::collections::HashMap::new();
        for (name, document) in sets {
            match document {
                Some(document) => {
                    documents.insert(name.clone(), document);
                    names.push(name);
                }
                None => names.extend(expand_all(std::slice::from_ref(&name), &registry)?),
            }
        }
        // Each set is opened once: its document is taken, not copied.
        let documents = std::sync::Mutex::new(documents);
        let failures = std::sync::Mutex::new(std::collections::HashMap::new());
        let open = |location: &str| {
            let document = documents.lock().unwrap_or_else(std::sync::PoisonError::into_inner).remove(location);
            let store = match document {
                Some(document) => document
                    .read(location)
                    .map_err(OpenError::from)
                    .and_then(|set| builder.build(set, base))
                    .map_err(|e| open_error(location, &e)),
                None => builder.open(location).map_err(|e| open_error(location, &e)),
            };
            store.map_err(|error| failed_to_open(&failures, location, error))
        };
        let memory = arguments.combine_memory_bytes();
        combine_sets(&names, open, &combining, output, Arc::clone(&registry), memory, || {})
            .map_err(|error| opened(&failures, error))
    })?;
    let inlining = Inlining { below: inline_below, kept: &not_inlined, builder: &builder, base: output };
    Ok((refs_dict(py, combined.references.as_ref(), &inlining)?, combined.sets))
}

/// The builder of the stores sets are opened with: through `registry`, on the shared runtime,
/// refusing arrays whose codecs are not registered.
fn sets_builder(registry: &Arc<zarrs_kerchunk::StoreRegistry>) -> ReferenceStoreBuilder {
    ReferenceStoreBuilder::new()
        .with_runtime(runtime::handle())
        .with_registry(Arc::clone(registry) as _)
        .with_codec_check(zarrs_kerchunk_codecs::is_decodable)
}

/// `error`, the failure to open the set at `location`, kept in `failures` as the exception
/// Python is given, and what combining is told.
fn failed_to_open(
    failures: &std::sync::Mutex<std::collections::HashMap<String, Error>>,
    location: &str,
    error: Error,
) -> MakeError {
    let reason = error.message.clone();
    failures.lock().unwrap_or_else(std::sync::PoisonError::into_inner).insert(location.to_owned(), error);
    MakeError::Input { location: location.to_owned(), reason }
}

/// `error`, from combining or appending: for a set that could not be opened, the exception its
/// opening raised (kept in `failures` by location), else the error as `make_error` gives it.
fn opened(failures: &std::sync::Mutex<std::collections::HashMap<String, Error>>, error: MakeError) -> Error {
    match error {
        MakeError::Input { location, reason } => {
            let found = failures.lock().unwrap_or_else(std::sync::PoisonError::into_inner).remove(&location);
            found.unwrap_or_else(|| make_error(&MakeError::Input { location, reason }))
        }
        error => make_error(&error),
    }
}
