//! The tools of `zarrs_kerchunk_tools` as Python functions: statistics,
//! audits and pins of an opened set, and conversion (references made from
//! files are in `scan.rs`). Reports cross as JSON text, which the Python side turns into
//! dicts; every call runs with the GIL released.

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use zarrs_kerchunk::StoreRegistry;
use zarrs_kerchunk::kerchunk::{
    JsonVersion, JsonWriteOptions, ParquetWriteOptions, PathEncoding, WriteError, error_chain,
};
use zarrs_kerchunk_tools::encodings;
use zarrs_kerchunk_tools::icechunk::{ExportOptions, IcechunkLocation, write_icechunk};
use zarrs_kerchunk_tools::inspect::{self, AuditOptions, InspectError};
use zarrs_kerchunk_tools::output::{OutputError, write_references};

use crate::errors::{Error, Kind, icechunk_error, object_store_kind, read_kind};
use crate::options::StoreOptions;
use crate::runtime;
use crate::store::StoreHandle;

pub(crate) fn register(module: &Bound<'_, PyModule>) -> PyResult<()> {
    module.add_function(wrap_pyfunction!(stats, module)?)?;
    module.add_function(wrap_pyfunction!(audit, module)?)?;
    module.add_function(wrap_pyfunction!(audit_encodings, module)?)?;
    module.add_function(wrap_pyfunction!(pin, module)?)?;
    module.add_function(wrap_pyfunction!(convert, module)?)?;
    module.add_function(wrap_pyfunction!(convert_icechunk, module)?)?;
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

/// Each target's own decoding attributes against those the set gives its arrays, as JSON
/// (`encodings::audit_encodings`), the targets read through `options`' object stores.
#[pyfunction]
#[expect(clippy::needless_pass_by_value, reason = "pyo3 extracts arguments by value")]
fn audit_encodings(py: Python<'_>, store: &StoreHandle, concurrency: usize, options: WriteOptions) -> PyResult<String> {
    runtime::check_process()?;
    let (location, store, registry) = (store.location().to_owned(), store.zarrs_store(), options.registry()?);
    let audit = py
        .detach(|| encodings::audit_encodings(store, &location, &registry, concurrency))
        .map_err(|e| crate::scan::make_error(&e))?;
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
pub(crate) struct WriteOptions {
    version: u8,
    url_templates: bool,
    zstd: Option<i32>,
    record_size: u64,
    paths: String,
    compression: bool,
    storage_options: std::collections::BTreeMap<String, String>,
    anonymous: bool,
    cache: Option<String>,
    cache_size: Option<u64>,
    credentials: Option<crate::options::Credentials>,
    http: crate::options::HttpAuth,
}

impl WriteOptions {
    /// The object store's options for an icechunk repository's own storage:
    /// `storage_options`, and `anonymous` as S3's unsigned requests.
    pub(crate) fn repository_options(&self) -> Vec<(String, String)> {
        crate::options::repository_options(&self.storage_options, self.anonymous)
    }

    /// The registry of the stores files and outputs are read and written
    /// through: remote ones through the disk cache, if one is asked for.
    ///
    /// # Errors
    /// The cache folder named, if it cannot be created.
    pub(crate) fn registry(&self) -> Result<StoreRegistry, crate::errors::Error> {
        let registry = if self.anonymous { StoreRegistry::new().with_anonymous() } else { StoreRegistry::new() };
        let mut registry =
            self.storage_options.iter().fold(registry, |registry, (key, value)| registry.with_option(key, value));
        let http = self.http.credentials(self.credentials.as_ref())?;
        for (prefix, provider) in crate::options::s3_credentials(self.credentials.as_ref(), &http)? {
            registry = registry.with_s3_credentials(&prefix, provider).map_err(|e| {
                crate::errors::Error::new(crate::errors::Kind::Invalid, format!("option credentials: {e}"))
            })?;
        }
        let registry = registry.with_http_credentials(http);
        Ok(match crate::options::open_cache(self.cache.as_deref(), self.cache_size, false)? {
            Some(cache) => registry.with_cache(cache),
            None => registry,
        })
    }

    pub(crate) fn formats(&self, output: &str) -> PyResult<(JsonWriteOptions, ParquetWriteOptions)> {
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
    let registry = options.registry()?;
    let source = store.zarrs_store();
    py.detach(|| write_references(source.source().as_ref(), output, &registry, &json, &parquet))
        .map_err(|e| output_error(&e).into())
}

/// The set's references committed into the icechunk repository at `location`
/// (`icechunk://PATH[@BRANCH]`, `icechunk+s3://bucket/prefix`), created if
/// absent, its storage reached with `options` (`storage_options`,
/// `anonymous`); a JSON report of the commit.
#[pyfunction]
#[pyo3(signature = (store, location, message=None, options=None, manifest_split=None, commit_every=None))]
fn convert_icechunk(
    py: Python<'_>,
    store: &StoreHandle,
    location: &str,
    message: Option<&str>,
    options: Option<&Bound<'_, pyo3::types::PyDict>>,
    manifest_split: Option<u32>,
    commit_every: Option<u64>,
) -> PyResult<String> {
    runtime::check_process()?;
    let Some(parsed) = IcechunkLocation::parse(location) else {
        return Err(Error::new(Kind::Invalid, format!("{location} is not an icechunk://PATH location")).into());
    };
    let parsed = parsed.with_options(StoreOptions::extract(options)?.repository_options());
    let source = store.zarrs_store();
    let mut export = ExportOptions::default().with_commit_every(commit_every);
    if let Some(message) = message {
        export = export.with_message(message);
    }
    if let Some(chunks) = manifest_split {
        export = export.with_manifest_split(chunks);
    }
    let exported =
        py.detach(|| write_icechunk(source, &parsed, export)).map_err(|e| PyErr::from(icechunk_error(&e)))?;
    let report = serde_json::json!({
        "snapshot": exported.snapshot,
        "branch": parsed.branch,
        "groups": exported.groups,
        "arrays": exported.arrays,
        "virtual_chunks": exported.virtual_chunks,
        "inline_chunks": exported.inline_chunks,
        "containers": exported.containers,
    });
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

pub(crate) fn output_error(error: &OutputError) -> Error {
    let kind = match error {
        OutputError::Place { .. } => Kind::Invalid,
        OutputError::Store { source, .. } => object_store_kind(source),
        OutputError::Io { source, .. } if source.kind() == std::io::ErrorKind::PermissionDenied => Kind::Denied,
        OutputError::Write { source, .. } if matches!(**source, WriteError::Read(_)) => Kind::Invalid,
        _ => Kind::Unreachable,
    };
    Error::new(kind, error_chain(error))
}
