//! The keyword options of `ReferenceStore(location, **options)`, checked and
//! turned into a [`ReferenceStoreBuilder`]: the builder's options, in the
//! words of the Rust API and of `object_store`'s configuration keys.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyDict;
use zarrs_kerchunk::kerchunk::{Limits, ParseOptions};
use zarrs_kerchunk::object_store::aws::AwsCredentialProvider;
use zarrs_kerchunk::{DEFAULT_CACHE_BYTES, DiskCache, HttpCredentials, Pins, ReferenceStoreBuilder};
use zarrs_kerchunk_tools::credentials::{
    DEFAULT_TOKEN_VARIABLE, HttpOptions, default_netrc, s3_credential_providers, with_bearer_tokens,
};

/// Every option a store takes, as the Python caller gave them.
#[derive(Debug, Default)]
pub(crate) struct StoreOptions {
    storage_options: BTreeMap<String, String>,
    anonymous: bool,
    target: Option<String>,
    templates: BTreeMap<String, String>,
    allowed_prefixes: Option<Vec<String>>,
    allow_local: bool,
    url_rewrite: BTreeMap<String, String>,
    pins: Option<String>,
    relax_pins: Vec<String>,
    limits: BTreeMap<String, u64>,
    read_ahead: Option<u64>,
    fetch_concurrency: Option<usize>,
    timeout: Option<f64>,
    cache: Option<String>,
    cache_size: Option<u64>,
    cache_check_pins: bool,
    credentials: Option<Credentials>,
    http: HttpAuth,
}

/// Where each URL prefix's credentials come from: `{prefix: {"s3credentials": URL, "token_env": NAME}}`.
pub(crate) type Credentials = BTreeMap<String, BTreeMap<String, String>>;

/// How HTTP(S) requests are authenticated: the options `bearer_token`, `token_hosts`,
/// `headers` and `netrc`, as the command line's `--bearer-token`, `--token-host`, `--header`
/// and `--netrc`. `Debug` shows no token and no header's value.
#[derive(Clone, Default, FromPyObject)]
#[pyo3(from_item_all)]
pub(crate) struct HttpAuth {
    bearer_token: Option<String>,
    token_hosts: Vec<String>,
    headers: BTreeMap<String, BTreeMap<String, String>>,
    netrc: Option<NetrcChoice>,
}

impl std::fmt::Debug for HttpAuth {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let headers: Vec<String> = self
            .headers
            .iter()
            .flat_map(|(host, named)| named.keys().map(move |name| format!("{name} for {host}")))
            .collect();
        f.debug_struct("HttpAuth")
            .field("bearer_token", &self.bearer_token.as_ref().map(|_| "<given>"))
            .field("token_hosts", &self.token_hosts)
            .field("headers", &headers)
            .field("netrc", &self.netrc)
            .finish()
    }
}

/// `netrc=`: a file, or whether to look for one (`NETRC`, else `~/.netrc`).
#[derive(Clone, Debug, FromPyObject)]
pub(crate) enum NetrcChoice {
    /// `True`: look for one (the default); `False`: none.
    Look(bool),
    /// This file.
    File(std::path::PathBuf),
}

impl HttpAuth {
    /// The credentials these options and `sources` describe. The token is `bearer_token`, else
    /// `EARTHDATA_TOKEN`, read here: in this process, so a store unpickled by a Dask worker
    /// reads the worker's (a token given as an option travels with the store).
    ///
    /// # Errors
    /// `InvalidReferencesError` naming the option that cannot be used; never a secret.
    pub(crate) fn credentials(&self, sources: Option<&Credentials>) -> Result<HttpCredentials, crate::errors::Error> {
        let invalid =
            |e: &dyn std::fmt::Display| crate::errors::Error::new(crate::errors::Kind::Invalid, format!("option {e}"));
        let mut options = HttpOptions::default();
        options.bearer_token = self.bearer_token.clone().or_else(|| std::env::var(DEFAULT_TOKEN_VARIABLE).ok());
        options.token_hosts.clone_from(&self.token_hosts);
        options.headers = self
            .headers
            .iter()
            .flat_map(|(host, named)| named.iter().map(move |(name, value)| (host.clone(), format!("{name}: {value}"))))
            .collect();
        options.netrc = match &self.netrc {
            Some(NetrcChoice::File(file)) => Some(file.clone()),
            Some(NetrcChoice::Look(false)) => None,
            Some(NetrcChoice::Look(true)) | None => default_netrc(),
        };
        let credentials = options.credentials().map_err(|e| invalid(&e))?;
        let Some(sources) = sources else { return Ok(credentials) };
        with_bearer_tokens(&json_sources(sources), |variable| std::env::var(variable).ok(), credentials)
            .map_err(|e| invalid(&format!("credentials: {e}")))
    }
}

/// The object store's options for an icechunk repository's own storage: `storage_options`,
/// and `anonymous` as S3's unsigned requests.
pub(crate) fn repository_options(storage_options: &BTreeMap<String, String>, anonymous: bool) -> Vec<(String, String)> {
    let mut options: Vec<(String, String)> = storage_options.iter().map(|(k, v)| (k.clone(), v.clone())).collect();
    if anonymous {
        options.push(("aws_skip_signature".into(), "true".into()));
    }
    options
}

/// The names `options` may use, for the error that names an unknown one.
const NAMES: &str = "storage_options, anonymous, target, templates, allowed_prefixes, allow_local, \
                     url_rewrite, pins, relax_pins, limits, read_ahead, fetch_concurrency, timeout, cache, \
                     cache_size, cache_check_pins, credentials, bearer_token, token_hosts, headers, netrc";

impl StoreOptions {
    /// The object store's options for an icechunk repository's own storage:
    /// `storage_options`, and `anonymous` as S3's unsigned requests.
    pub(crate) fn repository_options(&self) -> Vec<(String, String)> {
        repository_options(&self.storage_options, self.anonymous)
    }

    /// The options in `options` (`None`: the defaults).
    ///
    /// # Errors
    /// `TypeError` for an unknown option or a value of the wrong type.
    pub(crate) fn extract(options: Option<&Bound<'_, PyDict>>) -> PyResult<Self> {
        let mut parsed = Self::default();
        let Some(options) = options else { return Ok(parsed) };
        for (name, value) in options.iter() {
            let name: String = name.extract()?;
            if value.is_none() {
                continue;
            }
            let typed = |what: &str, error: PyErr| {
                PyTypeError::new_err(format!("option {name}: expected {what}, got {}: {error}", type_name(&value)))
            };
            match name.as_str() {
                "storage_options" => parsed.storage_options = value.extract().map_err(|e| typed("a dict of str", e))?,
                "anonymous" => parsed.anonymous = value.extract().map_err(|e| typed("a bool", e))?,
                "target" => parsed.target = Some(value.extract().map_err(|e| typed("a str", e))?),
                "templates" => parsed.templates = value.extract().map_err(|e| typed("a dict of str", e))?,
                "allowed_prefixes" => {
                    parsed.allowed_prefixes = Some(value.extract().map_err(|e| typed("a list of str", e))?);
                }
                "allow_local" => parsed.allow_local = value.extract().map_err(|e| typed("a bool", e))?,
                "url_rewrite" => parsed.url_rewrite = value.extract().map_err(|e| typed("a dict of str", e))?,
                "pins" => parsed.pins = Some(value.extract().map_err(|e| typed("a path (str)", e))?),
                "relax_pins" => parsed.relax_pins = value.extract().map_err(|e| typed("a list of str", e))?,
                "limits" => parsed.limits = value.extract().map_err(|e| typed("a dict of int", e))?,
                "read_ahead" => parsed.read_ahead = Some(value.extract().map_err(|e| typed("an int", e))?),
                "fetch_concurrency" => {
                    parsed.fetch_concurrency = Some(value.extract().map_err(|e| typed("an int", e))?);
                }
                "timeout" => parsed.timeout = Some(value.extract().map_err(|e| typed("a number of seconds", e))?),
                "cache" => parsed.cache = Some(value.extract().map_err(|e| typed("a folder (str)", e))?),
                "cache_size" => parsed.cache_size = Some(value.extract().map_err(|e| typed("an int (bytes)", e))?),
                "cache_check_pins" => parsed.cache_check_pins = value.extract().map_err(|e| typed("a bool", e))?,
                "credentials" => {
                    parsed.credentials = Some(value.extract().map_err(|e| typed("a dict of dicts of str", e))?);
                }
                // Never the value in an error: it is a secret.
                "bearer_token" => {
                    parsed.http.bearer_token = Some(value.extract().map_err(|_| {
                        PyTypeError::new_err(format!("option bearer_token: expected a str, got {}", type_name(&value)))
                    })?);
                }
                "token_hosts" => parsed.http.token_hosts = value.extract().map_err(|e| typed("a list of str", e))?,
                "headers" => {
                    parsed.http.headers = value.extract().map_err(|_| {
                        PyTypeError::new_err(format!(
                            "option headers: expected a dict of hosts to dicts of str, got {}",
                            type_name(&value)
                        ))
                    })?;
                }
                "netrc" => parsed.http.netrc = Some(value.extract().map_err(|e| typed("a path (str) or a bool", e))?),
                _ => return Err(PyTypeError::new_err(format!("unknown option {name:?}; the options are {NAMES}"))),
            }
        }
        Ok(parsed)
    }

    /// The builder these options describe, reading on `runtime`.
    ///
    /// # Errors
    /// `ValueError` for a limit or timeout that cannot be used; the pins
    /// file's errors as [`crate::errors`] maps them.
    pub(crate) fn builder(&self, runtime: tokio::runtime::Handle) -> PyResult<ReferenceStoreBuilder> {
        let mut builder = ReferenceStoreBuilder::new()
            .with_runtime(runtime)
            .allow_local_files_from_remote_references(self.allow_local)
            .with_codec_check(zarrs_kerchunk_codecs::is_decodable);
        if self.anonymous {
            builder = builder.with_anonymous();
        }
        for (key, value) in &self.storage_options {
            builder = builder.with_option(key, value);
        }
        if let Some(target) = &self.target {
            builder = builder.with_target(target);
        }
        for (name, value) in &self.templates {
            builder = builder.with_template_override(name, value);
        }
        for (from, to) in &self.url_rewrite {
            builder = builder.with_url_rewrite(from, to);
        }
        if let Some(prefixes) = &self.allowed_prefixes {
            builder = builder.with_allowed_prefixes(prefixes);
        }
        if let Some(file) = &self.pins {
            let text =
                std::fs::read_to_string(file).map_err(|e| crate::errors::io_error(&format!("pins {file}"), &e))?;
            let mut pins = Pins::from_json(&text).map_err(|e| PyValueError::new_err(format!("pins {file}: {e}")))?;
            for prefix in &self.relax_pins {
                pins.relax_under(prefix).map_err(|e| PyValueError::new_err(format!("relax_pins {prefix}: {e}")))?;
            }
            builder = builder.with_pins(pins);
        }
        if !self.limits.is_empty() {
            builder = builder.with_parse_options(ParseOptions::default().with_limits(self.parse_limits()?));
        }
        if let Some(bytes) = self.read_ahead {
            builder = builder.with_read_ahead(bytes);
        }
        if let Some(reads) = self.fetch_concurrency {
            builder = builder.with_fetch_concurrency(reads);
        }
        if let Some(cache) = open_cache(self.cache.as_deref(), self.cache_size, self.cache_check_pins)? {
            builder = builder.with_cache(cache);
        }
        let http = self.http.credentials(self.credentials.as_ref())?;
        for (prefix, provider) in s3_credentials(self.credentials.as_ref(), &http)? {
            builder = builder.with_s3_credentials(prefix, provider);
        }
        builder = builder.with_http_credentials(http);
        if let Some(seconds) = self.timeout {
            let timeout = Duration::try_from_secs_f64(seconds)
                .map_err(|e| PyValueError::new_err(format!("option timeout: {seconds} seconds: {e}")))?;
            builder = builder.with_timeout(timeout);
        }
        Ok(builder)
    }

    fn parse_limits(&self) -> PyResult<Limits> {
        let mut limits = Limits::default();
        for (name, &value) in &self.limits {
            let size = || {
                usize::try_from(value).map_err(|_| PyValueError::new_err(format!("limit {name}: {value} is too large")))
            };
            limits = match name.as_str() {
                "max_document_bytes" => limits.with_max_document_bytes(value),
                "max_generated_references" => limits.with_max_generated_references(value),
                "max_generated_bytes" => limits.with_max_generated_bytes(value),
                "max_template_fuel" => limits.with_max_template_fuel(value),
                "max_template_seconds" => limits.with_max_template_time(Duration::from_secs(value)),
                "max_key_bytes" => limits.with_max_key_bytes(size()?),
                "max_chunk_bytes" => limits.with_max_chunk_bytes(value),
                _ => {
                    return Err(PyTypeError::new_err(format!(
                        "unknown limit {name:?}; the limits are max_document_bytes, max_generated_references, \
                         max_generated_bytes, max_template_fuel, max_template_seconds, max_key_bytes, max_chunk_bytes"
                    )));
                }
            };
        }
        Ok(limits)
    }
}

/// The disk cache in `folder` (none if `None` or empty), kept under `size`
/// bytes (default [`DEFAULT_CACHE_BYTES`]).
///
/// # Errors
/// The folder named, if it cannot be created.
pub(crate) fn open_cache(
    folder: Option<&str>,
    size: Option<u64>,
    check_pins: bool,
) -> Result<Option<Arc<DiskCache>>, crate::errors::Error> {
    let Some(folder) = folder.filter(|folder| !folder.is_empty()) else { return Ok(None) };
    let cache = DiskCache::new(folder).map_err(|e| crate::errors::cache_error(&e))?;
    Ok(Some(Arc::new(cache.with_max_bytes(size.unwrap_or(DEFAULT_CACHE_BYTES)).with_pinned_revalidation(check_pins))))
}

/// The S3 credential providers of `credentials`, each token read from the variable it names
/// (the package reads it, in this process: a store unpickled by a Dask worker reads the worker's);
/// without one, an endpoint is asked with `http` (a `.netrc` login).
///
/// # Errors
/// `InvalidReferencesError` naming the prefix of a source that cannot be used.
pub(crate) fn s3_credentials(
    credentials: Option<&Credentials>,
    http: &HttpCredentials,
) -> Result<Vec<(String, AwsCredentialProvider)>, crate::errors::Error> {
    let Some(credentials) = credentials else { return Ok(Vec::new()) };
    s3_credential_providers(&json_sources(credentials), |variable| std::env::var(variable).ok(), http)
        .map_err(|e| crate::errors::Error::new(crate::errors::Kind::Invalid, format!("option credentials: {e}")))
}

/// `credentials` as the JSON object the command line's `--credentials` file holds.
fn json_sources(credentials: &Credentials) -> serde_json::Map<String, serde_json::Value> {
    credentials
        .iter()
        .map(|(prefix, source)| {
            let source = source.iter().map(|(k, v)| (k.clone(), serde_json::Value::from(v.as_str()))).collect();
            (prefix.clone(), serde_json::Value::Object(source))
        })
        .collect()
}

fn type_name(value: &Bound<'_, PyAny>) -> String {
    value.get_type().name().map_or_else(|_| "?".to_owned(), |name| name.to_string())
}
