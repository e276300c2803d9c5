//! Where each URL prefix's credentials come from, as the command line's `--credentials FILE`
//! and the Python package's `credentials=` give them:
//!
//! ```json
//! {"s3://podaac-ops-cumulus-protected/": {"s3credentials": "https://archive.podaac.earthdata.nasa.gov/s3credentials", "token_env": "EARTHDATA_TOKEN"},
//!  "https://data.ornldaac.earthdata.nasa.gov/": {"bearer_env": "EARTHDATA_TOKEN"}}
//! ```
//!
//! - An `s3://` prefix's buckets are read with temporary keys from its endpoint
//!   ([`S3CredentialsEndpoint`]), asked for with the bearer token in the variable `token_env`
//!   names (`EARTHDATA_TOKEN` by default).
//! - The URLs under an `http(s)://` prefix are sent the bearer token in the variable `bearer_env`
//!   names.
//! - A prefix whose source is `{}` uses the defaults.
//!
//! The sources hold the variable's name, never the token: the caller looks it up (the library
//! reads no variable), so a store pickled to a Dask worker carries how to get credentials, and
//! each worker gets its own.

use std::sync::Arc;

use zarrs_kerchunk::object_store::aws::AwsCredentialProvider;
use zarrs_kerchunk::{HttpCredentials, S3CredentialsEndpoint};

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

/// What one prefix's source says.
enum Source<'a> {
    /// Temporary S3 keys from an endpoint, asked for with the token in a variable.
    S3Endpoint { endpoint: &'a str, variable: &'a str },
    /// A bearer token, from a variable, for the URLs under the prefix.
    Bearer { variable: &'a str },
    /// Nothing beyond the defaults.
    Defaults,
}

/// Read one prefix's source, refusing keys that do not belong to its kind of URL.
fn source<'a>(prefix: &str, value: &'a serde_json::Value) -> Result<Source<'a>, CredentialsError> {
    let bad = |reason: &str| CredentialsError { prefix: prefix.to_owned(), reason: reason.to_owned() };
    let object = value.as_object().ok_or_else(|| bad("expected an object such as {\"s3credentials\": URL}"))?;
    let scheme = prefix.split_once("://").map(|(scheme, _)| scheme.to_ascii_lowercase());
    let (allowed, example): (&[&str], &str) = match scheme.as_deref() {
        Some("s3") => (&["s3credentials", "token_env"], "s3credentials and token_env"),
        Some("http" | "https") => (&["bearer_env"], "bearer_env"),
        _ => return Err(bad("credentials are for s3:// and http(s):// prefixes")),
    };
    if let Some(key) = object.keys().find(|key| !allowed.contains(&key.as_str())) {
        return Err(bad(&format!("unknown key {key:?}; for this prefix the keys are {example}")));
    }
    let text = |key: &str| -> Result<Option<&'a str>, CredentialsError> {
        object.get(key).map(|v| v.as_str().ok_or_else(|| bad(&format!("{key} is not a string")))).transpose()
    };
    Ok(match (text("s3credentials")?, text("bearer_env")?) {
        (Some(endpoint), _) => {
            Source::S3Endpoint { endpoint, variable: text("token_env")?.unwrap_or(DEFAULT_TOKEN_VARIABLE) }
        }
        (None, Some(variable)) => Source::Bearer { variable },
        (None, None) if object.contains_key("token_env") => {
            return Err(bad("token_env without an s3credentials endpoint"));
        }
        (None, None) => Source::Defaults,
    })
}

/// The S3 credential providers `sources` describes, by prefix, each token looked up by `token`
/// (given a variable's name). An endpoint is asked with its token if the variable is set, and
/// otherwise with what `http` gives the hosts on the way: a `.netrc` login for the login host
/// the DAAC redirects to.
///
/// # Errors
/// [`CredentialsError`] naming the prefix for a source that is not an object, names an endpoint
/// that is not an HTTP(S) URL, or has a key that its kind of prefix does not take.
pub fn s3_credential_providers(
    sources: &serde_json::Map<String, serde_json::Value>,
    token: impl Fn(&str) -> Option<String>,
    http: &HttpCredentials,
) -> Result<Vec<(String, AwsCredentialProvider)>, CredentialsError> {
    let mut providers = Vec::new();
    for (prefix, value) in sources {
        if let Source::S3Endpoint { endpoint, variable } = source(prefix, value)? {
            let bad = |e: &dyn std::fmt::Display| CredentialsError { prefix: prefix.clone(), reason: e.to_string() };
            let credentials = match token(variable).filter(|token| !token.is_empty()) {
                Some(token) => http.clone().with_bearer_token(&token, [endpoint]).map_err(|e| bad(&e))?,
                None => http.clone(),
            };
            let provider = S3CredentialsEndpoint::with_http_credentials(endpoint, credentials).map_err(|e| bad(&e))?;
            providers.push((prefix.clone(), Arc::new(provider) as AwsCredentialProvider));
        }
    }
    Ok(providers)
}

/// `credentials` with the bearer tokens `sources` gives HTTP(S) prefixes, each for the URLs
/// under its prefix (the longest prefix wins), each token looked up by `token`.
///
/// # Errors
/// As [`s3_credential_providers`], and for a variable that is not set.
pub fn with_bearer_tokens(
    sources: &serde_json::Map<String, serde_json::Value>,
    token: impl Fn(&str) -> Option<String>,
    mut credentials: HttpCredentials,
) -> Result<HttpCredentials, CredentialsError> {
    for (prefix, value) in sources {
        let bad = |reason: String| CredentialsError { prefix: prefix.clone(), reason };
        if let Source::Bearer { variable } = source(prefix, value)? {
            let token = token(variable)
                .filter(|token| !token.is_empty())
                .ok_or_else(|| bad(format!("bearer_env names {variable}, which is not set")))?;
            credentials = credentials.with_bearer_token(&token, [prefix.as_str()]).map_err(|e| bad(e.to_string()))?;
        }
    }
    Ok(credentials)
}

/// The `.netrc` file used when none is named, as requests and curl find it: `NETRC`, else
/// `~/.netrc`, if it is a file. (The command line and the Python package read these variables;
/// the library reads none.)
#[must_use]
pub fn default_netrc() -> Option<std::path::PathBuf> {
    let file = std::env::var_os("NETRC")
        .map(std::path::PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|home| std::path::Path::new(&home).join(".netrc")));
    file.filter(|file| file.is_file())
}

/// How HTTP(S) requests are authenticated, as the command line's and the Python package's
/// options say: a bearer token and the hosts it is for, headers, and a `.netrc` file.
#[derive(Clone, Debug, Default)]
#[non_exhaustive]
pub struct HttpOptions {
    /// A bearer token (an Earthdata Login token), sent to `token_hosts`.
    pub bearer_token: Option<String>,
    /// The hosts the token is for; NASA Earthdata's ([`zarrs_kerchunk::EARTHDATA_HOSTS`]) if empty.
    pub token_hosts: Vec<String>,
    /// Headers, each `(host, "Name: value")`.
    pub headers: Vec<(String, String)>,
    /// A `.netrc` file whose machines' logins are used.
    pub netrc: Option<std::path::PathBuf>,
}

impl HttpOptions {
    /// The credentials these options describe.
    ///
    /// # Errors
    /// [`CredentialsError`] naming the option (`--bearer-token`, `--header`, `--netrc`) and why;
    /// never a token's, a header's or a password's value.
    pub fn credentials(&self) -> Result<HttpCredentials, CredentialsError> {
        let bad = |option: &str, reason: String| CredentialsError { prefix: option.to_owned(), reason };
        let mut credentials = HttpCredentials::new();
        if let Some(token) = self.bearer_token.as_deref().filter(|token| !token.trim().is_empty()) {
            credentials = if self.token_hosts.is_empty() {
                credentials.with_bearer_token(token, zarrs_kerchunk::EARTHDATA_HOSTS)
            } else {
                credentials.with_bearer_token(token, &self.token_hosts)
            }
            .map_err(|e| bad("--bearer-token", e.to_string()))?;
        }
        for (host, header) in &self.headers {
            let (name, value) = header
                .split_once(':')
                .ok_or_else(|| bad("--header", format!("for {host}: expected HOST='NAME: VALUE'")))?;
            credentials = credentials.with_header(host, name, value).map_err(|e| bad("--header", e.to_string()))?;
        }
        if let Some(netrc) = &self.netrc {
            credentials = credentials.with_netrc_file(netrc).map_err(|e| bad("--netrc", e.to_string()))?;
        }
        Ok(credentials)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sources(json: &str) -> serde_json::Map<String, serde_json::Value> {
        serde_json::from_str(json).unwrap()
    }

    #[test]
    fn keys_that_do_not_belong_to_a_prefix_are_refused_by_name() {
        let none = |_: &str| None;
        let wrong = sources(r#"{"https://data.example.org/": {"s3credentials": "https://e/s3credentials"}}"#);
        let error = s3_credential_providers(&wrong, none, &HttpCredentials::new()).unwrap_err();
        assert!(error.to_string().contains("unknown key \"s3credentials\"; for this prefix the keys are bearer_env"));
        let wrong = sources(r#"{"s3://bucket/": {"bearer_env": "T"}}"#);
        let error = with_bearer_tokens(&wrong, none, HttpCredentials::new()).unwrap_err();
        assert!(error.to_string().starts_with("s3://bucket/: unknown key \"bearer_env\""), "{error}");
        let unset = sources(r#"{"https://data.example.org/": {"bearer_env": "ZK_NOT_SET"}}"#);
        let error = with_bearer_tokens(&unset, none, HttpCredentials::new()).unwrap_err();
        assert!(error.to_string().contains("ZK_NOT_SET, which is not set"), "{error}");
        let defaults = sources(r#"{"s3://bucket/": {}, "https://data.example.org/": {}}"#);
        assert!(s3_credential_providers(&defaults, none, &HttpCredentials::new()).unwrap().is_empty());
        assert!(with_bearer_tokens(&defaults, none, HttpCredentials::new()).unwrap().is_empty());
    }

    #[test]
    fn a_header_without_a_name_is_refused_without_showing_it() {
        let options =
            HttpOptions { headers: vec![("data.example.org".into(), "sekrit".into())], ..HttpOptions::default() };
        let error = options.credentials().unwrap_err();
        assert!(error.to_string().starts_with("--header: for data.example.org: expected"), "{error}");
        assert!(!error.to_string().contains("sekrit"), "{error}");
    }
}
