//! The default [`ObjectStoreRegistry`]: stores registered per URL prefix,
//! and for any other URL a store created once per bucket or host from
//! `object_store`'s own configuration keys and the cloud environment.

use std::collections::HashSet;
use std::ffi::OsString;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use object_store::ObjectStore;
use object_store::path::Path;
use object_store::registry::{DefaultObjectStoreRegistry, ObjectStoreRegistry};
#[cfg(feature = "remote")]
use object_store::{BackoffConfig, ObjectStoreScheme, RetryConfig};
use object_store_disk_cache::DiskCache;
use url::Url;

/// The environment variables a created store reads: the three clouds' own
/// prefixes. Nothing else, so that a variable such as `TOKEN` or `ENDPOINT`
/// set for another program never reconfigures a client.
const ENVIRONMENT_PREFIXES: [&str; 3] = ["AWS_", "GOOGLE_", "AZURE_"];

/// How long a created store waits by default: to connect, for the next bytes
/// of an answer, and for a whole request. A server that accepts and never
/// answers, or stops in the middle of a body, fails a request within
/// [`DEFAULT_IDLE_TIMEOUT`] instead of `object_store`'s 30 s, and a read
/// within the retry budget below instead of 180 s.
pub(crate) const DEFAULT_CONNECT_TIMEOUT: Duration = Duration::from_secs(5);
/// See [`DEFAULT_CONNECT_TIMEOUT`].
pub(crate) const DEFAULT_IDLE_TIMEOUT: Duration = Duration::from_secs(10);
/// See [`DEFAULT_CONNECT_TIMEOUT`]; a large whole-file read may need more.
pub(crate) const DEFAULT_REQUEST_TIMEOUT: Duration = Duration::from_mins(1);

#[cfg(feature = "remote")]
/// The default retry budget of a created store: three retries of a failed
/// request (5xx, connection errors, timeouts), backing off from 100 ms, and
/// none once 30 s have passed since the first try.
pub(crate) fn default_retry() -> RetryConfig {
    RetryConfig {
        backoff: BackoffConfig {
            init_backoff: Duration::from_millis(100),
            max_backoff: Duration::from_secs(5),
            base: 2.0,
        },
        max_retries: 3,
        retry_timeout: Duration::from_secs(30),
    }
}

/// The configuration keys that make S3, GCS and Azure clients skip request signing.
pub(crate) const ANONYMOUS: [(&str, &str); 3] =
    [("aws_skip_signature", "true"), ("google_skip_signature", "true"), ("azure_skip_signature", "true")];

/// The registry a [`ReferenceStoreBuilder`](crate::ReferenceStoreBuilder)
/// uses unless given another: stores registered for URL prefixes (the
/// longest prefix wins), and for any other URL a store created on first use
/// for its bucket or host with [`object_store::parse_url_opts`], from the
/// configuration keys given here, then the `AWS_*`, `GOOGLE_*` and `AZURE_*`
/// environment variables (read once, non-UTF-8 entries skipped). An
/// `http://` URL also sets `allow_http`.
///
/// ```
/// use std::sync::Arc;
/// use object_store::registry::ObjectStoreRegistry;
/// use zarrs_kerchunk::StoreRegistry;
///
/// let registry = StoreRegistry::new().with_option("aws_region", "eu-west-1").with_anonymous();
/// let memory = Arc::new(object_store::memory::InMemory::new());
/// registry.register(url::Url::parse("s3://my-bucket/")?, memory);
/// let (_store, path) = registry.resolve(&url::Url::parse("s3://my-bucket/a/b.nc")?)?;
/// assert_eq!(path.as_ref(), "a/b.nc");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug)]
pub struct StoreRegistry {
    stores: DefaultObjectStoreRegistry,
    /// Prefixes registered by the user: URLs under them get no created store.
    registered: Mutex<Vec<Url>>,
    /// `scheme://authority` of every store created so far.
    created: Mutex<HashSet<String>>,
    options: Vec<(String, String)>,
    #[cfg(feature = "remote")]
    retry: RetryConfig,
    /// The disk cache every remote store's reads go through, if any.
    cache: Option<Arc<DiskCache>>,
    /// Credential providers of the S3 buckets under each prefix.
    #[cfg(feature = "aws")]
    s3_credentials: Vec<(Url, object_store::aws::AwsCredentialProvider)>,
    /// What HTTP(S) stores send, and to whom.
    #[cfg(feature = "http")]
    http_credentials: super::HttpCredentials,
}

impl Default for StoreRegistry {
    fn default() -> Self {
        Self {
            stores: DefaultObjectStoreRegistry::new(),
            registered: Mutex::default(),
            created: Mutex::default(),
            options: Vec::new(),
            #[cfg(feature = "remote")]
            retry: default_retry(),
            cache: None,
            #[cfg(feature = "aws")]
            s3_credentials: Vec::new(),
            #[cfg(feature = "http")]
            http_credentials: super::HttpCredentials::new(),
        }
    }
}

impl StoreRegistry {
    /// A registry with no stores, and the default timeouts and retries:
    /// 5 s to connect, 10 s without a byte, 60 s for a whole request, and up
    /// to 3 retries within 30 s. A stalled server therefore fails a read in
    /// tens of seconds, not minutes. Configuration keys (`connect_timeout`,
    /// `read_timeout`, `timeout`) and [`with_retry`](Self::with_retry) change them.
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }

    /// Retry failed requests of created stores as `retry` says (default: see [`new`](Self::new)).
    #[cfg(feature = "remote")]
    #[must_use]
    pub fn with_retry(mut self, retry: RetryConfig) -> Self {
        self.retry = retry;
        self
    }

    /// Set an `object_store` configuration key for the stores this registry
    /// creates, in the service's own words: `aws_region`, `aws_endpoint`,
    /// `google_service_account`, `azure_storage_account_name`, `allow_http`,
    /// `timeout`, ... Keys a service does not know are ignored by it. Keys
    /// given here win over the environment.
    #[must_use]
    pub fn with_option(mut self, key: impl Into<String>, value: impl Into<String>) -> Self {
        self.options.push((key.into(), value.into()));
        self
    }

    /// Read public data without credentials: skip request signing on S3, GCS and Azure.
    #[must_use]
    pub fn with_anonymous(self) -> Self {
        ANONYMOUS.iter().fold(self, |registry, (key, value)| registry.with_option(*key, *value))
    }

    /// Read every remote store's objects through `cache` (local files and
    /// in-memory stores are read as they are): the stores this registry
    /// creates and those registered with it.
    #[must_use]
    pub fn with_cache(mut self, cache: Arc<DiskCache>) -> Self {
        self.cache = Some(cache);
        self
    }

    /// Sign requests to S3 buckets under `prefix` (`s3://bucket/`) with the
    /// credentials `provider` gives, such as an [`S3CredentialsEndpoint`](crate::S3CredentialsEndpoint)'s
    /// temporary ones, renewed as they expire; the longest prefix wins. The
    /// store of a bucket is made once, so one provider serves each bucket.
    ///
    /// # Errors
    /// [`ResolveError::InvalidLocation`](crate::ResolveError::InvalidLocation) if `prefix` is not an `s3://` URL.
    #[cfg(feature = "aws")]
    pub fn with_s3_credentials(
        mut self,
        prefix: &str,
        provider: object_store::aws::AwsCredentialProvider,
    ) -> Result<Self, crate::ResolveError> {
        let invalid = |reason: String| crate::ResolveError::InvalidLocation { location: prefix.to_owned(), reason };
        let url = Url::parse(prefix).map_err(|e| invalid(e.to_string()))?;
        if url.scheme() != "s3" || url.host_str().is_none() {
            return Err(invalid("S3 credentials are for s3://bucket/ prefixes".to_owned()));
        }
        self.s3_credentials.push((url, provider));
        Ok(self)
    }

    /// Send bearer tokens, headers and `.netrc` logins with the requests of
    /// the HTTP(S) stores this registry creates, each only to the hosts it
    /// is for, with redirects followed hop by hop and cookies kept (see
    /// [`HttpCredentials`](crate::HttpCredentials)). Stores registered by the
    /// caller are used as they are.
    #[cfg(feature = "http")]
    #[must_use]
    pub fn with_http_credentials(mut self, credentials: super::HttpCredentials) -> Self {
        self.http_credentials = credentials;
        self
    }

    /// The provider of the longest S3 prefix `url` lies under, if any.
    #[cfg(feature = "aws")]
    fn s3_credentials_for(&self, url: &Url) -> Option<object_store::aws::AwsCredentialProvider> {
        self.s3_credentials
            .iter()
            .filter(|(prefix, _)| is_prefix(prefix, url))
            .max_by_key(|(prefix, _)| prefix.path().len())
            .map(|(_, provider)| Arc::clone(provider))
    }

    #[cfg(feature = "remote")]
    /// The credentials a store created for `url` uses beyond its configuration keys.
    fn authentication(&self, url: &Url) -> Authentication {
        #[cfg(not(feature = "aws"))]
        let _ = url;
        Authentication {
            #[cfg(feature = "aws")]
            s3: self.s3_credentials_for(url),
            #[cfg(feature = "http")]
            http: self.http_credentials.clone(),
        }
    }

    fn is_registered(&self, url: &Url) -> bool {
        self.registered.lock().unwrap_or_else(PoisonError::into_inner).iter().any(|prefix| is_prefix(prefix, url))
    }

    /// Create the store serving `url`'s bucket or host, once.
    fn create_store_for(&self, url: &Url) -> object_store::Result<()> {
        let authority = format!("{}://{}", url.scheme(), &url[url::Position::BeforeHost..url::Position::AfterPort]);
        let mut created = self.created.lock().unwrap_or_else(PoisonError::into_inner);
        if created.contains(&authority) {
            return Ok(());
        }
        // Local files and memory take no configuration: the environment is not read for them
        // (a Python parser called on each of many small files read it once a file).
        let options: Vec<(String, String)> = if is_cached_scheme(url) {
            // An `http://` URL asks for plain HTTP, which object_store refuses unless allowed.
            let allow_http = (url.scheme() == "http").then(|| ("allow_http".to_owned(), "true".to_owned()));
            let timeouts = [
                ("connect_timeout", DEFAULT_CONNECT_TIMEOUT),
                ("read_timeout", DEFAULT_IDLE_TIMEOUT),
                ("timeout", DEFAULT_REQUEST_TIMEOUT),
            ]
            .map(|(key, value)| (key.to_owned(), format!("{}ms", value.as_millis())));
            // Later keys win: the defaults, then the environment, then the caller's keys.
            timeouts
                .into_iter()
                .chain(cloud_environment())
                .chain(allow_http)
                .chain(self.options.iter().cloned())
                .collect()
        } else {
            Vec::new()
        };
        #[cfg(feature = "remote")]
        let (store, path) = create_store(url, options, &self.retry, &self.authentication(url))?;
        #[cfg(not(feature = "remote"))]
        let (store, path) = object_store::parse_url_opts(url, options)?;
        // The store may be scoped below the host (a bucket in the path): register it at that depth.
        self.stores.register(root_of(url, &path), Arc::from(store));
        created.insert(authority);
        Ok(())
    }
}

impl ObjectStoreRegistry for StoreRegistry {
    fn register(&self, url: Url, store: Arc<dyn ObjectStore>) -> Option<Arc<dyn ObjectStore>> {
        self.registered.lock().unwrap_or_else(PoisonError::into_inner).push(url.clone());
        self.stores.register(url, store)
    }

    fn resolve(&self, url: &Url) -> object_store::Result<(Arc<dyn ObjectStore>, Path)> {
        if !self.is_registered(url) {
            self.create_store_for(url)?;
        }
        let resolved = self.stores.resolve(url)?;
        Ok(match &self.cache {
            Some(cache) => through_cache(cache, url, resolved),
            None => resolved,
        })
    }
}

/// A registry whose remote stores are read through a disk cache: a caller's
/// registry, given to a builder that was asked for a cache.
#[derive(Debug)]
pub(crate) struct CachedRegistry {
    pub(crate) inner: Arc<dyn ObjectStoreRegistry>,
    pub(crate) cache: Arc<DiskCache>,
}

impl ObjectStoreRegistry for CachedRegistry {
    fn register(&self, url: Url, store: Arc<dyn ObjectStore>) -> Option<Arc<dyn ObjectStore>> {
        self.inner.register(url, store)
    }

    fn resolve(&self, url: &Url) -> object_store::Result<(Arc<dyn ObjectStore>, Path)> {
        Ok(through_cache(&self.cache, url, self.inner.resolve(url)?))
    }
}

/// The store `url` resolved to, read through `cache` if it is remote (not
/// local files, not memory): the same decorator for the same store each time.
fn through_cache(
    cache: &Arc<DiskCache>,
    url: &Url,
    (store, path): (Arc<dyn ObjectStore>, Path),
) -> (Arc<dyn ObjectStore>, Path) {
    if !is_cached_scheme(url) {
        return (store, path);
    }
    // The cache records each range's URL: never a user name or password a URL carries.
    let mut root = root_of(url, &path);
    let _ = root.set_username("");
    let _ = root.set_password(None);
    (cache.wrap(root.as_str(), store), path)
}

/// Whether objects at `url` are read through a disk cache, when there is
/// one: all but local files and in-memory stores.
pub(crate) fn is_cached_scheme(url: &Url) -> bool {
    !matches!(url.scheme(), "file" | "memory")
}

/// The URL of the root of the store that serves `url` as `path`: `url`
/// without the segments of `path` (a bucket or a prefix may stay in it).
fn root_of(url: &Url, path: &Path) -> Url {
    let depth = segments(url.path()).count().saturating_sub(segments(path.as_ref()).count());
    let mut root = url.clone();
    root.set_query(None);
    root.set_fragment(None);
    root.set_path(&segments(url.path()).take(depth).fold(String::from("/"), |p, s| p + s + "/"));
    root
}

#[cfg(feature = "remote")]
/// Credentials a created store uses beyond its configuration keys.
struct Authentication {
    #[cfg(feature = "aws")]
    s3: Option<object_store::aws::AwsCredentialProvider>,
    #[cfg(feature = "http")]
    http: super::HttpCredentials,
}

#[cfg(feature = "remote")]
/// The store for `url`'s bucket or host, configured by `options` (keys a
/// service does not know are skipped) and retrying as `retry` says: what
/// [`object_store::parse_url_opts`] does, plus the retry configuration it has no key for.
fn create_store(
    url: &Url,
    options: Vec<(String, String)>,
    retry: &RetryConfig,
    authentication: &Authentication,
) -> object_store::Result<(Box<dyn ObjectStore>, Path)> {
    macro_rules! configured {
        ($builder:ty, $url:expr) => {{
            options.into_iter().fold(<$builder>::new().with_url($url), |builder, (key, value)| {
                match key.to_ascii_lowercase().parse() {
                    Ok(key) => builder.with_config(key, value),
                    Err(_) => builder,
                }
            })
        }};
    }
    #[allow(unused_macros, reason = "used by the gcp and azure features only")]
    macro_rules! build {
        ($builder:ty, $url:expr) => {{ Box::new(configured!($builder, $url).with_retry(retry.clone()).build()?) as Box<dyn ObjectStore> }};
    }
    let (scheme, path) = ObjectStoreScheme::parse(url)?;
    let store = match scheme {
        #[cfg(feature = "aws")]
        ObjectStoreScheme::AmazonS3 => {
            let mut builder = configured!(object_store::aws::AmazonS3Builder, url.to_string());
            if let Some(credentials) = &authentication.s3 {
                builder = builder.with_credentials(Arc::clone(credentials));
            }
            Box::new(builder.with_retry(retry.clone()).build()?) as Box<dyn ObjectStore>
        }
        #[cfg(feature = "gcp")]
        ObjectStoreScheme::GoogleCloudStorage => build!(object_store::gcp::GoogleCloudStorageBuilder, url.to_string()),
        #[cfg(feature = "azure")]
        ObjectStoreScheme::MicrosoftAzure => build!(object_store::azure::MicrosoftAzureBuilder, url.to_string()),
        #[cfg(feature = "http")]
        ObjectStoreScheme::Http => {
            // Every created HTTP store follows its redirects itself, with or without
            // credentials, so that a refusal names the host that refused.
            let connector = super::http_auth::CredentialsConnector { credentials: authentication.http.clone() };
            let builder = configured!(object_store::http::HttpBuilder, &url[..url::Position::BeforePath]);
            Box::new(builder.with_http_connector(connector).with_retry(retry.clone()).build()?) as Box<dyn ObjectStore>
        }
        // Local files and memory take no configuration.
        _ => return object_store::parse_url(url),
    };
    Ok((store, Path::parse(path)?))
}

/// The environment variables of [`ENVIRONMENT_PREFIXES`] that are UTF-8.
fn cloud_environment() -> impl Iterator<Item = (String, String)> {
    std::env::vars_os().filter_map(|(name, value): (OsString, OsString)| {
        let (name, value) = (name.into_string().ok()?, value.into_string().ok()?);
        ENVIRONMENT_PREFIXES.iter().any(|prefix| name.starts_with(prefix)).then_some((name, value))
    })
}

fn segments(path: &str) -> impl Iterator<Item = &str> {
    path.split('/').filter(|s| !s.is_empty())
}

/// Whether `url` lies under `prefix`, segment by segment.
pub(crate) fn is_prefix(prefix: &Url, url: &Url) -> bool {
    prefix.scheme() == url.scheme()
        && prefix[url::Position::BeforeHost..url::Position::AfterPort]
            == url[url::Position::BeforeHost..url::Position::AfterPort]
        && {
            let (mut p, mut u) = (segments(prefix.path()), segments(url.path()));
            p.all(|s| u.next() == Some(s))
        }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn registered_prefixes_win_and_other_urls_get_a_created_store() {
        let registry = StoreRegistry::new();
        let memory: Arc<dyn ObjectStore> = Arc::new(object_store::memory::InMemory::new());
        registry.register(Url::parse("s3://bucket/sub/").unwrap(), Arc::clone(&memory));
        let (store, path) = registry.resolve(&Url::parse("s3://bucket/sub/a/b.nc").unwrap()).unwrap();
        assert!(Arc::ptr_eq(&store, &memory));
        assert_eq!(path.as_ref(), "a/b.nc");
        let (_, path) = registry.resolve(&Url::parse("memory:///x/y").unwrap()).unwrap();
        assert_eq!(path.as_ref(), "x/y");
    }

    #[test]
    fn a_cached_store_is_named_without_the_query_or_credentials_of_its_url() {
        let folder = tempfile::tempdir().unwrap();
        let cache = Arc::new(DiskCache::new(folder.path()).unwrap());
        let registry = StoreRegistry::new().with_cache(Arc::clone(&cache));
        let url = Url::parse("https://user:secret@example.com/data/a.nc?token=secret").unwrap();
        let (store, path) = registry.resolve(&url).unwrap();
        assert_eq!(path.as_ref(), "data/a.nc");
        let shown = store.to_string();
        assert!(shown.starts_with("DiskCache("), "{shown}");
        assert!(!shown.contains("secret") && !format!("{store:?}").contains("secret"), "{store:?}");
        assert!(format!("{cache:?}").starts_with("DiskCache { dir: "), "{cache:?}");
    }

    #[test]
    fn only_the_cloud_environment_is_read() {
        assert!(cloud_environment().all(|(name, _)| ENVIRONMENT_PREFIXES.iter().any(|p| name.starts_with(p))));
    }
}
