//! Reference sets that exist combined, as a Python function: `combine` (`tools.combine`), the
//! command line's `combine`, with `tools.scan`'s combining arguments. Runs with the GIL released.

use std::sync::Arc;

use pyo3::prelude::*;
use zarrs_kerchunk::ReferenceStoreBuilder;
use zarrs_kerchunk_tools::icechunk::{IcechunkLocation, open_icechunk};
use zarrs_kerchunk_tools::make::{MakeError, combine_sets};
use zarrs_kerchunk_tools::output::write_references;

use crate::errors::{Error, Kind, icechunk_error, open_error};
use crate::runtime;
use crate::scan::{ScanArguments, expand_all, make_error};
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
    let registry = Arc::new(options.registry());
    let (_, combining) = arguments.prepared()?;
    let combining = combining.ok_or_else(|| Error::new(Kind::Invalid, MakeError::NeedsConcat.to_string()))?;
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
        let memory = arguments.combine_memory_bytes();
        let combined = combine_sets(&sets, open, &combining, output, Arc::clone(&registry), memory, || {});
        let combined = match combined {
            Ok(combined) => combined,
            Err(MakeError::Input { location, reason }) => {
                let mut failures = failures.into_inner().unwrap_or_else(std::sync::PoisonError::into_inner);
                let input = || make_error(&MakeError::Input { location: location.clone(), reason });
                return Err(failures.remove(&location).unwrap_or_else(input));
            }
            Err(error) => return Err(make_error(&error)),
        };
        let written = write_references(combined.references.as_ref(), output, &registry, &json, &parquet)
            .map_err(|e| output_error(&e))?;
        Ok(serde_json::json!({"references": written, "sets": combined.sets}))
    })?;
    Ok(report.to_string())
}
