//! Temporary S3 credentials from an HTTPS endpoint, as NASA Earthdata's
//! DAACs hand them out (`GET https://<daac>/s3credentials` with an Earthdata
//! Login bearer token): `accessKeyId`, `secretAccessKey`, `sessionToken` and
//! `expiration`, valid for an hour. They are fetched when first needed and
//! again before they expire, behind `object_store`'s credential-provider
//! trait, so that a long read never signs a request with expired keys.

use std::fmt;
use std::sync::Arc;

use chrono::{DateTime, Utc};
use object_store::aws::AwsCredential;
use object_store::http::HttpBuilder;
use object_store::path::Path;
use object_store::{ClientOptions, CredentialProvider, ObjectStore, ObjectStoreExt};
use url::Url;

use super::http_auth::{CredentialsConnector, HttpCredentials};
use crate::error::ResolveError;

/// Renew credentials this long before they expire, at most (a quarter of
/// their lifetime for shorter-lived ones).
const RENEW_BEFORE: chrono::TimeDelta = chrono::TimeDelta::minutes(5);

/// A credentials endpoint's answer is a few hundred bytes; more is not one.
const MAX_ANSWER: usize = 64 << 10;

/// Temporary S3 credentials fetched from an endpoint that answers
/// `{"accessKeyId", "secretAccessKey", "sessionToken", "expiration"}` (a
/// DAAC's `/s3credentials`), with a bearer token if given, and renewed
/// before they expire. Give it to [`StoreRegistry::with_s3_credentials`](crate::StoreRegistry::with_s3_credentials)
/// or [`ReferenceStoreBuilder::with_s3_credentials`](crate::ReferenceStoreBuilder::with_s3_credentials)
/// for the buckets it is for.
///
/// The token is sent to the endpoint's host only, and appears in no error
/// and no `Debug` output.
pub struct S3CredentialsEndpoint {
    url: Url,
    store: Arc<dyn ObjectStore>,
    path: Path,
    current: tokio::sync::Mutex<Option<Current>>,
}

/// Credentials in hand, and when to fetch new ones.
struct Current {
    credential: Arc<AwsCredential>,
    renew_at: DateTime<Utc>,
}

impl fmt::Debug for S3CredentialsEndpoint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("S3CredentialsEndpoint").field("url", &self.url.as_str()).finish_non_exhaustive()
    }
}

impl S3CredentialsEndpoint {
    /// Credentials from the endpoint at `url` (`https://`, or `http://` for
    /// a local one), asked for with `Authorization: Bearer <bearer_token>`
    /// if a token is given (sent to the endpoint's host only).
    ///
    /// # Errors
    /// [`ResolveError::InvalidLocation`] for a URL that is not HTTP(S), or
    /// a token that cannot be a header's value.
    pub fn new(url: &str, bearer_token: Option<&str>) -> Result<Self, ResolveError> {
        let credentials = match bearer_token {
            Some(token) => HttpCredentials::new()
                .with_bearer_token(token, [url])
                .map_err(|e| ResolveError::InvalidLocation { location: url.to_owned(), reason: e.to_string() })?,
            None => HttpCredentials::new(),
        };
        Self::with_http_credentials(url, credentials)
    }

    /// Credentials from the endpoint at `url`, asked for with what
    /// `credentials` give each host on the way: a bearer token for the
    /// endpoint's host, or a `.netrc` login for the login host a DAAC
    /// redirects to (Earthdata Login), whose cookie is then kept.
    ///
    /// # Errors
    /// [`ResolveError::InvalidLocation`] for a URL that is not HTTP(S).
    pub fn with_http_credentials(url: &str, credentials: HttpCredentials) -> Result<Self, ResolveError> {
        let invalid =
            |reason: &str| ResolveError::InvalidLocation { location: url.to_owned(), reason: reason.to_owned() };
        let parsed = Url::parse(url).map_err(|e| invalid(&e.to_string()))?;
        if !matches!(parsed.scheme(), "https" | "http") || parsed.host_str().is_none() {
            return Err(invalid("a credentials endpoint is an http(s):// URL"));
        }
        let options = ClientOptions::new().with_allow_http(parsed.scheme() == "http");
        let origin = &parsed[..url::Position::BeforePath];
        let store = HttpBuilder::new()
            .with_url(origin)
            .with_client_options(options)
            .with_http_connector(CredentialsConnector { credentials })
            .with_retry(super::registry::default_retry())
            .build()
            .map_err(|e| invalid(&e.to_string()))?;
        let path = Path::parse(parsed.path().trim_start_matches('/')).map_err(|e| invalid(&e.to_string()))?;
        Ok(Self { url: parsed, store: Arc::new(store), path, current: tokio::sync::Mutex::new(None) })
    }

    /// New credentials from the endpoint, and when to renew them.
    async fn fetch(&self) -> object_store::Result<Current> {
        let url = self.url.as_str();
        let answer = self.store.get(&self.path).await.map_err(|e| match e {
            object_store::Error::Unauthenticated { .. } | object_store::Error::PermissionDenied { .. } => {
                object_store::Error::PermissionDenied {
                    path: url.to_owned(),
                    source: format!("the credentials endpoint {url} refused the request (access denied): {e}").into(),
                }
            }
            other => refused(url, &format!("cannot reach it: {other}")),
        })?;
        let bytes = answer.bytes().await.map_err(|e| refused(url, &format!("its answer broke off: {e}")))?;
        if bytes.len() > MAX_ANSWER {
            return Err(refused(url, &format!("its answer is {} bytes, not credentials", bytes.len())));
        }
        let json: serde_json::Value =
            serde_json::from_slice(&bytes).map_err(|e| refused(url, &format!("its answer is not JSON: {e}")))?;
        let field = |name: &str| -> object_store::Result<String> {
            json.get(name)
                .and_then(serde_json::Value::as_str)
                .map(str::to_owned)
                .ok_or_else(|| refused(url, &format!("its answer has no {name}")))
        };
        let expiration = field("expiration")?;
        let expires = parse_expiration(&expiration)
            .ok_or_else(|| refused(url, &format!("its expiration {expiration:?} is not a date and time")))?;
        let now = Utc::now();
        if expires <= now {
            return Err(refused(url, &format!("its credentials expired at {expiration}")));
        }
        let credential = AwsCredential {
            key_id: field("accessKeyId")?,
            secret_key: field("secretAccessKey")?,
            token: Some(field("sessionToken")?),
        };
        let renew_at = expires - RENEW_BEFORE.min((expires - now) / 4);
        Ok(Current { credential: Arc::new(credential), renew_at })
    }
}

#[async_trait::async_trait]
impl CredentialProvider for S3CredentialsEndpoint {
    type Credential = AwsCredential;

    async fn get_credential(&self) -> object_store::Result<Arc<AwsCredential>> {
        // One fetch at a time: concurrent requests that find the credentials
        // due wait for the one renewal.
        let mut current = self.current.lock().await;
        if let Some(held) = current.as_ref().filter(|held| Utc::now() < held.renew_at) {
            return Ok(Arc::clone(&held.credential));
        }
        let fresh = self.fetch().await?;
        let credential = Arc::clone(&fresh.credential);
        *current = Some(fresh);
        Ok(credential)
    }
}

/// The endpoint's answer could not give credentials: why, naming it.
fn refused(url: &str, why: &str) -> object_store::Error {
    object_store::Error::Generic {
        store: "S3CredentialsEndpoint",
        source: format!("temporary S3 credentials from {url}: {why}").into(),
    }
}

/// A DAAC's `2026-01-27 00:50:09+00:00`, or RFC 3339.
fn parse_expiration(text: &str) -> Option<DateTime<Utc>> {
    DateTime::parse_from_rfc3339(text)
        .or_else(|_| DateTime::parse_from_str(text, "%Y-%m-%d %H:%M:%S%:z"))
        .or_else(|_| DateTime::parse_from_str(text, "%Y-%m-%d %H:%M:%S%.f%:z"))
        .ok()
        .map(|time| time.with_timezone(&Utc))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn expirations_read_as_the_daacs_and_rfc_3339_write_them() {
        let want = DateTime::parse_from_rfc3339("2026-01-27T00:50:09Z").unwrap().with_timezone(&Utc);
        assert_eq!(parse_expiration("2026-01-27 00:50:09+00:00"), Some(want));
        assert_eq!(parse_expiration("2026-01-27T00:50:09Z"), Some(want));
        assert_eq!(parse_expiration("2026-01-27 01:50:09+01:00"), Some(want));
        assert_eq!(parse_expiration("tomorrow"), None);
    }

    #[test]
    fn the_token_is_in_no_debug_output() {
        let endpoint = S3CredentialsEndpoint::new("https://daac.example/s3credentials", Some("sekrit-token")).unwrap();
        let shown = format!("{endpoint:?}");
        assert!(shown.contains("daac.example") && !shown.contains("sekrit"), "{shown}");
        let error = S3CredentialsEndpoint::new("ftp://daac.example/s3credentials", Some("sekrit-token")).unwrap_err();
        assert!(error.to_string().contains("http(s)://") && !error.to_string().contains("sekrit"), "{error}");
    }
}
