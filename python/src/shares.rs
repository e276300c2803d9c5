//! The shares of a scan spread over an executor, combined as they arrive: `ShareCombiner`
//! sets each file's references aside as its share comes back (`make::SetAsideFiles`), so the
//! caller holds one share at a time and what orders and checks the files, never every file's
//! chunks; `finish` writes the combined set, reading the files' references back one at a time.
//! For concatenating, along one dimension or several; `combine_shares` does the rest.

use std::sync::{Arc, Mutex, PoisonError};

use kerchunk_combine::{CombineOptions, FileRests};
use pyo3::prelude::*;
use pyo3::types::PyBytes;
use zarrs_kerchunk::kerchunk::{JsonWriteOptions, ParquetWriteOptions};
use zarrs_kerchunk_tools::make::{SetAsideFiles, combine_set_aside, streamable, url_in_references, writable};
use zarrs_kerchunk_tools::output::write_references;

use crate::errors::{Error, Kind};
use crate::packed;
use crate::runtime;
use crate::scan::{ScanArguments, make_error, shares_reader};
use crate::tools::{WriteOptions, output_error};

pub(crate) fn register(module: &Bound<'_, PyModule>) -> PyResult<()> {
    module.add_class::<ShareCombiner>()?;
    module.add_function(wrap_pyfunction!(share_combiner, module)?)?;
    Ok(())
}

/// A spread scan's shares, combined as they are added, then written.
#[pyclass(module = "zarrs_kerchunk._rs", frozen)]
pub(crate) struct ShareCombiner {
    state: Mutex<Option<State>>,
}

struct State {
    concat: CombineOptions,
    /// The files to combine, as given (paths or URLs), and as the references name them.
    files: Vec<String>,
    urls: Vec<String>,
    output: String,
    options: WriteOptions,
    json: JsonWriteOptions,
    parquet: ParquetWriteOptions,
    set_aside: Arc<SetAsideFiles>,
    /// Each file added so far, without its combined chunks (held as what differs from the first's).
    rests: FileRests,
}

/// A `ShareCombiner` for the shares of `files` (no patterns) scanned for `arguments`, to be
/// written to `output`; `None` where they cannot be combined a file at a time (merging, an
/// append, `subchunk`), for `combine_shares` to combine whole.
#[pyfunction]
#[expect(clippy::needless_pass_by_value, reason = "pyo3 extracts arguments by value")]
fn share_combiner(
    files: Vec<String>,
    output: &str,
    arguments: ScanArguments,
    options: WriteOptions,
) -> PyResult<Option<ShareCombiner>> {
    runtime::check_process()?;
    let (json, parquet) = options.formats(output)?;
    let (_, combining) = arguments.prepared()?;
    let concat = match streamable(combining.as_ref(), files.len()) {
        Some(concat) if arguments.append_to.is_none() && arguments.subchunk.is_empty() => concat.clone(),
        _ => return Ok(None),
    };
    let set_aside = Arc::new(SetAsideFiles::new(arguments.combine_memory_bytes()).map_err(|e| make_error(&e))?);
    let urls = files.iter().map(|file| url_in_references(file, output)).collect();
    let output = output.to_owned();
    let state = State { concat, files, urls, output, options, json, parquet, set_aside, rests: FileRests::new() };
    Ok(Some(ShareCombiner { state: Mutex::new(Some(state)) }))
}

#[pymethods]
impl ShareCombiner {
    /// Add the next share `scan_share` made: its files' URLs, in the order of the files, and
    /// their packed references (`packed::pack`), read here one file at a time.
    fn add(&self, py: Python<'_>, share: (Vec<String>, Bound<'_, PyBytes>)) -> PyResult<()> {
        let (urls, packed) = share;
        // Borrowed from the share's `bytes`, which are immutable and outlive the call.
        let packed = packed.as_bytes();
        py.detach(|| -> Result<(), Error> {
            let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
            let state = state.as_mut().ok_or_else(finished)?;
            for (index, url) in urls.iter().enumerate() {
                let expected = state.urls.get(state.rests.len() + index);
                if expected != Some(url) {
                    let expected = expected.map_or("no more files", String::as_str);
                    return Err(Error::new(Kind::Invalid, format!("a share's file {url} where {expected} comes next")));
                }
            }
            packed::each_file(&urls, packed, |url, set| {
                let (rest, chunks) = kerchunk_combine::split_combined_chunks(url, &set, &state.concat)
                    .map_err(|e| make_error(&e.into()))?;
                state.set_aside.keep(url, chunks).map_err(|e| make_error(&e))?;
                state.rests.push(url.to_owned(), rest);
                Ok(())
            })
        })
        .map_err(Into::into)
    }

    /// Combine the shares added (every file's) and write them: the JSON report of the
    /// combining (the references written and the files).
    fn finish(&self, py: Python<'_>) -> PyResult<String> {
        runtime::check_process()?;
        let report = py.detach(|| -> Result<serde_json::Value, Error> {
            let state = self.state.lock().unwrap_or_else(PoisonError::into_inner).take().ok_or_else(finished)?;
            if state.rests.len() != state.urls.len() {
                let reason = format!("{} of {} files' references were added", state.rests.len(), state.urls.len());
                return Err(Error::new(Kind::Invalid, reason));
            }
            let registry = state.options.registry()?;
            let reader = shares_reader(&state.urls, state.files, &registry)?;
            let combined = combine_set_aside(state.rests, &state.concat, state.set_aside, &state.urls, reader)
                .map_err(|e| make_error(&e))?;
            let combined = writable(combined).map_err(|e| make_error(&e))?;
            let written = write_references(combined.as_ref(), &state.output, &registry, &state.json, &state.parquet)
                .map_err(|e| output_error(&e))?;
            Ok(serde_json::json!({"references": written, "files": state.urls}))
        })?;
        Ok(report.to_string())
    }
}

/// A combiner used after `finish`.
fn finished() -> Error {
    Error::new(Kind::Invalid, "the shares were combined and written already")
}
