//! Where each URL prefix's credentials come from, as the command line's `--credentials FILE`
//! and the Python package's `credentials=` give them:
//!
//! ```json
//! {"s3://podaac-ops-cumulus-protected/": {"s3credentials": "https://archive.podaac.earthdata.nasa.gov/s3credentials", "token_env": "EARTHDATA_TOKEN"}}
//! ```
//!
//! Each S3 prefix's buckets are read with temporary keys from its endpoint
//! ([`S3CredentialsEndpoint`]), asked for with the bearer token in the variable `token_env`
//! names (`EARTHDATA_TOKEN` by default). The sources hold the variable's name, never the token:
//! the caller looks it up (the library reads no variable), so a store pickled to a Dask worker
//! carries how to get credentials, and each worker gets its own.

use std::sync::Arc;

use zarrs_kerchunk::S3CredentialsEndpoint;
use zarrs_kerchunk::object_store::aws::AwsCredentialProvider;

/// The variable holding the bearer token unless a source names another.
pub const DEFAULT_TOKEN_VARIABLE: &str = "EARTHDATA_TOKEN";

/// A source of credentials that cannot be used: its prefix, and why.
#[derive(Debug, thiserror::Error)]
#[error("{prefix}: {reason}")]
#[non_exhaustive]
pub struct CredentialsError {
    /// The URL prefix the source is for.
    pub prefix: String,
    /// Why it cannot be used.
    pub reason: String,
}

/// The S3 credential providers `sources` describes, by prefix, each token looked up by `token`
/// (given a variable's name; `None` sends no token).
///
/// # Errors
/// [`CredentialsError`] naming the prefix for a source that is not an object, lacks its
/// `s3credentials` endpoint, names an endpoint that is not an HTTP(S) URL, or has a key this
/// version does not read (`bearer_env`, for HTTPS hosts, is refused by name: not supported yet).
pub fn s3_credential_providers(
    sources: &serde_json::Map<String, serde_json::Value>,
    token: impl Fn(&str) -> Option<String>,
) -> Result<Vec<(String, AwsCredentialProvider)>, CredentialsError> {
    let mut providers = Vec::new();
    for (prefix, source) in sources {
        let bad = |reason: &str| CredentialsError { prefix: prefix.clone(), reason: reason.to_owned() };
        let source = source.as_object().ok_or_else(|| bad("expected an object such as {\"s3credentials\": URL}"))?;
        for key in source.keys() {
            match key.as_str() {
                "s3credentials" | "token_env" => {}
                "bearer_env" => return Err(bad("bearer tokens for HTTP(S) hosts (bearer_env) are not supported yet")),
                other => return Err(bad(&format!("unknown key {other:?}; the keys are s3credentials and token_env"))),
            }
        }
        let text = |key: &str| -> Result<Option<&str>, CredentialsError> {
            source.get(key).map(|v| v.as_str().ok_or_else(|| bad(&format!("{key} is not a string")))).transpose()
        };
        let endpoint = text("s3credentials")?.ok_or_else(|| bad("no s3credentials endpoint"))?;
        let variable = text("token_env")?.unwrap_or(DEFAULT_TOKEN_VARIABLE);
        let token = token(variable).filter(|token| !token.is_empty());
        let provider = S3CredentialsEndpoint::new(endpoint, token.as_deref()).map_err(|e| bad(&e.to_string()))?;
        providers.push((prefix.clone(), Arc::new(provider) as AwsCredentialProvider));
    }
    Ok(providers)
}
