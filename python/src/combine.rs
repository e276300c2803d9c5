//! Reference sets that exist combined, as a Python function: `combine` (`tools.combine`), the
//! command line's `combine`, with `tools.scan`'s combining arguments. Runs with the GIL released.

use std::sync::Arc;

use pyo3::prelude::*;
use zarrs_kerchunk::ReferenceStoreBuilder;
use zarrs_kerchunk_tools::icechunk::{IcechunkLocation, open_icechunk};
use zarrs_kerchunk_tools::make::{MakeError, append_sets, combine_sets};
use zarrs_kerchunk_tools::output::write_references;

use crate::errors::{Error, Kind, icechunk_error, open_error};
use crate::runtime;
use crate::scan::{ScanArguments, expand_all, load, make_error};
use crate::tools::{WriteOptions, output_error};

pub(crate) fn register(module: &Bound<'_, PyModule>) -> PyResult<()> {
    module.add_function(wrap_pyfunction!(combine, module)?)?;
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
        let builder = ReferenceStoreBuilder::new()
            .with_runtime(runtime::handle())
            .with_registry(Arc::clone(&registry) as _)
            .with_codec_check(zarrs_kerchunk_codecs::is_decodable);
        // The sets that cannot be opened, each with the exception its failure is in Python.
        let failures = std::sync::Mutex::new(std::collections::HashMap::new());
        let open = |location: &str| {
            let store = match IcechunkLocation::parse(location) {
                Some(repository) => open_icechunk(&builder, &repository.with_options(options.repository_options()))
                    .map_err(|e| icechunk_error(&e)),
                None => builder.open(location).map_err(|e| open_error(location, &e)),
            };
            store.map_err(|error| {
                let reason = error.message.clone();
                failures.lock().unwrap_or_else(std::sync::PoisonError::into_inner).insert(location.to_owned(), error);
                MakeError::Input { location: location.to_owned(), reason }
            })
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
