//! Opening reference sets: the builder and its options, and the stores'
//! `open` shortcuts. The top layer: it finds the references, picks their
//! [`ReferenceSource`], and wires the resolver, the runtime and the store.

use std::sync::Arc;

use object_store::ObjectStore;
use object_store::registry::ObjectStoreRegistry;
use object_store_disk_cache::DiskCache;
use url::Url;

use crate::error::{OpenError, ReadError, ResolveError};
use crate::fetch::{self, BatchOptions, Coalescing};
use crate::resolve::{
    ANONYMOUS, CachedRegistry, DEFAULT_READ_DEADLINE, Location, Pins, Resolver, Source, StoreRegistry, UrlRewrite,
};
#[cfg(feature = "parquet")]
use crate::sources::parquet::{ParquetRoot, RecordCacheOptions};
use crate::store::{AsyncReferenceStore, Core, IoRuntime, MetadataPolicy, ReferenceStore};
#[cfg(feature = "parquet")]
use kerchunk::parquet::ParquetLayout;
use kerchunk::zarr::metadata::{self, CodecCheck};
use kerchunk::{Limits, ParseOptions};
use kerchunk::{ParseError, ReferenceSet, ReferenceSource};

/// Opens reference sets with options: object stores per URL prefix,
/// `object_store` configuration keys, a default target and template overrides.
///
/// ```no_run
/// use std::sync::Arc;
/// use zarrs_kerchunk::ReferenceStoreBuilder;
///
/// // Public data on S3 without credentials, from a custom endpoint.
/// let store = ReferenceStoreBuilder::new()
///     .with_anonymous()
///     .with_option("aws_region", "us-west-2")
///     .with_option("aws_endpoint", "https://s3.example.org")
///     .open("s3://bucket/refs/combined.json")?;
///
/// // A pre-configured store for one bucket; longest prefix wins.
/// let bucket = Arc::new(object_store::memory::InMemory::new());
/// let store = ReferenceStoreBuilder::new()
///     .with_store("s3://my-bucket/", bucket)
///     .with_template_override("root", "s3://my-bucket/netcdf")
///     .open("refs.json")?;
/// # Ok::<(), zarrs_kerchunk::OpenError>(())
/// ```
#[derive(Clone, Debug, Default)]
pub struct ReferenceStoreBuilder {
    parse: ParseOptions,
    stores: Vec<(String, Arc<dyn ObjectStore>)>,
    /// The caller's registry; `None`: a [`StoreRegistry`] with `options`.
    registry: Option<Arc<dyn ObjectStoreRegistry>>,
    options: Vec<(String, String)>,
    #[cfg(feature = "remote")]
    retry: Option<object_store::RetryConfig>,
    runtime: IoRuntime,
    target: Option<String>,
    allow_local_from_remote: bool,
    allowed_prefixes: Option<Vec<String>>,
    rewrites: Vec<(String, String)>,
    pins: Option<Arc<Pins>>,
    read_deadline: Option<std::time::Duration>,
    #[cfg(feature = "parquet")]
    record_cache: RecordCacheOptions,
    batch: BatchOptions,
    read_ahead: Option<u64>,
    codec_check: Option<CodecCheck>,
    cache: Option<Arc<DiskCache>>,
    #[cfg(feature = "aws")]
    s3_credentials: Vec<(String, object_store::aws::AwsCredentialProvider)>,
    #[cfg(feature = "http")]
    http_credentials: Option<crate::HttpCredentials>,
}

/// The default read-ahead budget of a store: [`ReferenceStoreBuilder::with_read_ahead`].
pub const DEFAULT_READ_AHEAD: u64 = 64 << 20;

impl ReferenceStoreBuilder {
    /// Default options: stores created from each URL with the cloud
    /// environment's credentials (see [`StoreRegistry`]), no default target.
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }

    /// Serve every URL under `prefix` (for example `s3://bucket/` or
    /// `https://host/data/`) from `store`, with paths relative to the prefix.
    /// The longest matching prefix wins. Also applies to the reference file itself.
    #[must_use]
    pub fn with_store(mut self, prefix: impl Into<String>, store: Arc<dyn ObjectStore>) -> Self {
        self.stores.push((prefix.into(), store));
        self
    }

    /// Find the object store of every URL in `registry` instead of a
    /// [`StoreRegistry`]; [`with_option`](Self::with_option),
    /// [`with_anonymous`](Self::with_anonymous), `with_timeout` and `with_retry`
    /// then no longer apply, and
    /// stores given to [`with_store`](Self::with_store) are registered in it.
    #[must_use]
    pub fn with_registry(mut self, registry: Arc<dyn ObjectStoreRegistry>) -> Self {
        self.registry = Some(registry);
        self
    }

    /// Set an `object_store` configuration key for the stores this builder
    /// creates; see [`StoreRegistry::with_option`].
    #[must_use]
    pub fn with_option(mut self, key: impl Into<String>, value: impl Into<String>) -> Self {
        self.options.push((key.into(), value.into()));
        self
    }

    /// Read public data without credentials; see [`StoreRegistry::with_anonymous`].
    #[must_use]
    pub fn with_anonymous(self) -> Self {
        ANONYMOUS.iter().fold(self, |builder, (key, value)| builder.with_option(*key, *value))
    }

    /// Give up on a request to a remote target after `timeout` (default 60 s;
    /// also 5 s to connect and 10 s without a byte, set with the configuration
    /// keys `connect_timeout` and `read_timeout`). See [`StoreRegistry::new`].
    #[must_use]
    pub fn with_timeout(self, timeout: std::time::Duration) -> Self {
        self.with_option("timeout", format!("{}ms", timeout.as_millis()))
    }

    /// Retry failed requests to remote targets as `retry` says (default: up to
    /// 3 retries within 30 s). See [`StoreRegistry::with_retry`].
    #[cfg(feature = "remote")]
    #[must_use]
    pub fn with_retry(mut self, retry: object_store::RetryConfig) -> Self {
        self.retry = Some(retry);
        self
    }

    /// Give up on any one read of a target in an object store (all its
    /// ranges, retries included) after `deadline`; default 2 minutes, above
    /// the created stores' own request timeout and retry window. Unlike
    /// [`with_timeout`](Self::with_timeout), it also bounds stores given to
    /// [`with_store`](Self::with_store) or [`with_registry`](Self::with_registry),
    /// which may have no timeouts of their own. Needs a tokio runtime with
    /// timers enabled, as `object_store`'s HTTP clients do.
    #[must_use]
    pub fn with_read_deadline(mut self, deadline: std::time::Duration) -> Self {
        self.read_deadline = Some(deadline);
        self
    }

    /// Run the sync store's remote reads on the runtime of `handle` instead of
    /// the runtime this crate shares across the process. The runtime must be
    /// driven by threads of its own: a multi-thread runtime, or a
    /// current-thread runtime that some other thread blocks on.
    #[must_use]
    pub fn with_runtime(mut self, handle: tokio::runtime::Handle) -> Self {
        self.runtime = IoRuntime::with_handle(handle);
        self
    }

    /// The target of references whose URL is `null` (fsspec's `target`).
    /// A relative location resolves against the reference file's folder.
    #[must_use]
    pub fn with_target(mut self, location: impl Into<String>) -> Self {
        self.target = Some(location.into());
        self
    }

    /// Replace (or add) a version 1 template (fsspec's `template_overrides`).
    #[must_use]
    pub fn with_template_override(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.parse = self.parse.with_template_override(name, value);
        self
    }

    /// Bound what one reference document may make the reader do (see [`Limits`]).
    #[must_use]
    pub fn with_limits(mut self, limits: Limits) -> Self {
        self.parse = self.parse.with_limits(limits);
        self
    }

    /// Set how reference documents are parsed.
    #[must_use]
    pub fn with_parse_options(mut self, options: ParseOptions) -> Self {
        self.parse = options;
        self
    }

    /// Let a reference file read from a remote location point at local files.
    /// Off by default, so that a downloaded reference set cannot read the local disk.
    #[must_use]
    pub fn allow_local_files_from_remote_references(mut self, allow: bool) -> Self {
        self.allow_local_from_remote = allow;
        self
    }

    /// Let references read only targets under these prefixes (`s3://bucket/data/`,
    /// `https://host/archive/`, `file:///data/`), and refuse every other target with
    /// an error naming the key, the URL and this rule. Each prefix is a folder and
    /// must end with `/`, so that `s3://data/` never admits `s3://data-private/`.
    /// Prefixes are compared with the final URL, after templates, `gen` and
    /// relative resolution, segment by segment. Default: any target (but see
    /// [`allow_local_files_from_remote_references`](Self::allow_local_files_from_remote_references)).
    ///
    /// ```
    /// use zarrs_kerchunk::ReferenceStoreBuilder;
    /// let builder = ReferenceStoreBuilder::new().with_allowed_prefixes(["s3://era5-archive/", "https://data.example.org/pub/"]);
    /// # let _ = builder;
    /// ```
    #[must_use]
    pub fn with_allowed_prefixes<I: IntoIterator<Item = S>, S: Into<String>>(mut self, prefixes: I) -> Self {
        self.allowed_prefixes = Some(prefixes.into_iter().map(Into::into).collect());
        self
    }

    /// Read targets under `from_prefix` from `to_prefix` instead: data that
    /// moved (to another bucket, a mirror, a local copy) is read without
    /// regenerating the references. A prefix ending in `/` is a folder and
    /// maps to a folder; one without names a single file. The rewrite applies
    /// to the final URL, after templates, `gen` and relative resolution, and
    /// before the access policy, which then judges the rewritten URL (a
    /// remote reference set rewritten onto local files also needs
    /// [`allow_local_files_from_remote_references`](Self::allow_local_files_from_remote_references)).
    /// When several prefixes match, the longest wins; a target is rewritten once.
    ///
    /// ```
    /// use zarrs_kerchunk::ReferenceStoreBuilder;
    /// let builder = ReferenceStoreBuilder::new()
    ///     .with_url_rewrite("s3://old-bucket/netcdf/", "https://mirror.example.org/netcdf/")
    ///     .with_url_rewrite("s3://old-bucket/netcdf/2020/", "/data/copy/2020/");
    /// # let _ = builder;
    /// ```
    #[must_use]
    pub fn with_url_rewrite(mut self, from_prefix: impl Into<String>, to_prefix: impl Into<String>) -> Self {
        self.rewrites.push((from_prefix.into(), to_prefix.into()));
        self
    }

    /// Check every read of a pinned target against its pin (see
    /// `zarrs_kerchunk_tools::inspect::pin`): a target whose ETag, or
    /// last-modified time where it has no ETag, or size differs from the pin
    /// is [`ReadError::Stale`], an error naming the key, the URL, the pinned
    /// and the found values, never other bytes. Object stores are asked with
    /// `If-Match` or `If-Unmodified-Since`, so there is no extra request.
    /// Targets without a pin, or under a prefix given to
    /// [`Pins::relax_under`], are read unchecked.
    #[must_use]
    pub fn with_pins(mut self, pins: Pins) -> Self {
        self.pins = Some(Arc::new(pins));
        self
    }

    /// Read remote targets, and remote reference documents and parquet
    /// record files, through `cache`: a folder of byte ranges shared by
    /// processes, each served only for the version (ETag, else size and
    /// last-modified time) of the object it came from, and checked against
    /// its checksum on every read. Each remote object's version is checked
    /// with one `HEAD` per process, or none if it is pinned
    /// ([`with_pins`](Self::with_pins)) unless the cache was asked to
    /// ([`DiskCache::with_pinned_revalidation`]). Local files are read as they
    /// are. Applies to the builder's own registry and to one given to
    /// [`with_registry`](Self::with_registry).
    ///
    /// ```
    /// use std::sync::Arc;
    /// use zarrs_kerchunk::{DiskCache, ReferenceStoreBuilder};
    ///
    /// let folder = tempfile::tempdir()?;
    /// let cache = Arc::new(DiskCache::new(folder.path())?.with_max_bytes(2 << 30));
    /// let builder = ReferenceStoreBuilder::new().with_cache(Arc::clone(&cache));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    #[must_use]
    pub fn with_cache(mut self, cache: Arc<DiskCache>) -> Self {
        self.cache = Some(cache);
        self
    }

    /// Sign requests to S3 buckets under `prefix` (`s3://bucket/`) with the
    /// credentials `provider` gives, such as an [`S3CredentialsEndpoint`](crate::S3CredentialsEndpoint)'s
    /// temporary ones, renewed as they expire (see [`StoreRegistry::with_s3_credentials`]).
    /// For the builder's own registry, not one given to [`with_registry`](Self::with_registry).
    /// A prefix that is not an `s3://` URL is an error when the references are opened.
    #[cfg(feature = "aws")]
    #[must_use]
    pub fn with_s3_credentials(
        mut self,
        prefix: impl Into<String>,
        provider: object_store::aws::AwsCredentialProvider,
    ) -> Self {
        self.s3_credentials.push((prefix.into(), provider));
        self
    }

    /// Send bearer tokens, headers and `.netrc` logins with HTTP(S) requests,
    /// each only to the hosts it is for (see [`HttpCredentials`](crate::HttpCredentials)
    /// and [`StoreRegistry::with_http_credentials`]). For the builder's own
    /// registry, not one given to [`with_registry`](Self::with_registry).
    #[cfg(feature = "http")]
    #[must_use]
    pub fn with_http_credentials(mut self, credentials: crate::HttpCredentials) -> Self {
        self.http_credentials = Some(credentials);
        self
    }

    /// Read at most `reads` blocks at once in a batch ([`ReferenceStore::prefetch`]); default 16.
    #[must_use]
    pub fn with_fetch_concurrency(mut self, reads: usize) -> Self {
        self.batch.concurrency = reads.max(1);
        self
    }

    /// In a batch, read ranges of one file that are at most `max_gap` bytes
    /// apart as one block of at most `max_block` bytes (default: 64 KiB and
    /// 256 MiB, as fsspec). `max_gap` 0 merges only touching ranges.
    #[must_use]
    pub fn with_coalescing(mut self, max_gap: u64, max_block: u64) -> Self {
        self.batch.coalescing = Coalescing { max_gap, max_block };
        self
    }

    /// Hold at most `bytes` of chunks read ahead (default
    /// [`DEFAULT_READ_AHEAD`], 64 MiB); 0 turns read-ahead off.
    ///
    /// When chunks of an array on a remote target are read whole at
    /// consecutive C-order positions, as zarrs does for a region that spans
    /// whole rows, the store reads the next chunks in the background, in a
    /// few large concurrent reads, before zarrs asks for them. The window
    /// holds as many chunks as the run has read (at least 1 MiB's worth), up
    /// to `bytes`, and never crosses the end of the block of the grid (row,
    /// plane, ...) that the reads have not yet been seen to cross; random
    /// reads read nothing ahead. A read that stops part way so fetches at
    /// most as much again as it read, or 1 MiB, that it never uses. Chunks
    /// read ahead and never asked for are dropped when their run is given up
    /// (after eight newer runs) or by [`ReferenceStore::clear_prefetched`].
    #[must_use]
    pub fn with_read_ahead(mut self, bytes: u64) -> Self {
        self.read_ahead = Some(bytes);
        self
    }

    /// Ask `check` which codec ids have a decoder: an array whose metadata
    /// names another is refused when it is opened, with an error naming the
    /// array and the codec. The default refuses the ids of
    /// [`UNDECODABLE_CODECS`](kerchunk::zarr::metadata::UNDECODABLE_CODECS);
    /// a reader that registers codecs with zarrs asks zarrs' registry
    /// (`zarrs_kerchunk_codecs::is_decodable`).
    #[must_use]
    pub fn with_codec_check(mut self, check: CodecCheck) -> Self {
        self.codec_check = Some(check);
        self
    }

    /// Bound the cache of decoded parquet record files (default: 128 records, 256 MiB).
    #[cfg(feature = "parquet")]
    #[must_use]
    pub fn with_record_cache(mut self, options: RecordCacheOptions) -> Self {
        self.record_cache = options;
        self
    }

    /// Open the references at `location` as a sync store: a JSON reference
    /// file, or a parquet reference root (a folder, or a URL prefix, holding
    /// `.zmetadata`), told apart as fsspec does (see [`open_async`](Self::open_async)).
    ///
    /// # Errors
    /// [`OpenError`] if the location is invalid, the references cannot be
    /// read, or they are not a valid reference set.
    pub fn open(&self, location: &str) -> Result<ReferenceStore, OpenError> {
        // A local reference file is read and parsed on the calling thread, which waits for it
        // either way: without a runtime to hand it to, every step of the opening runs in place
        // (`fetch::off_the_executor`), so a tool opening a thousand sets pays no hand-offs
        // between threads. Anything else (a folder, a parquet root's metadata, a URL, a local
        // prefix served by a store given here) is opened on the I/O runtime.
        if self.stores.is_empty()
            && tokio::runtime::Handle::try_current().is_err()
            && !location.ends_with(".zmetadata")
            && matches!(Location::parse(location), Ok(Location::Local(path)) if path.is_file())
        {
            let core = futures::executor::block_on(self.open_core(location))?;
            return Ok(ReferenceStore::from_core(Arc::new(core), self.runtime.clone()));
        }
        let (builder, text) = (self.clone(), location.to_owned());
        let core = self
            .runtime
            .block_on(async move { builder.open_core(&text).await })
            .map_err(|source| OpenError::Read { location: location.to_owned(), source })??;
        Ok(ReferenceStore::from_core(Arc::new(core), self.runtime.clone()))
    }

    /// Open the references at `location` as an async store.
    ///
    /// `location` is a parquet root if it is a local folder, ends with `/`,
    /// `.parq` or `.parquet`, or names a root's `.zmetadata`; a remote location
    /// that does not exist is also tried as a parquet root. Anything else is a
    /// JSON reference file. Opening a parquet root reads only its `.zmetadata`.
    ///
    /// # Errors
    /// [`OpenError`] if the location is invalid, the references cannot be
    /// read, or they are not a valid reference set.
    pub async fn open_async(&self, location: &str) -> Result<AsyncReferenceStore, OpenError> {
        Ok(AsyncReferenceStore::from_core(Arc::new(self.open_core(location).await?)))
    }

    /// A sync store over references from any source; relative URLs resolve
    /// against `base` (the location the reference file would have).
    ///
    /// # Errors
    /// [`OpenError`] if `base` or a registered prefix is invalid.
    pub fn build(&self, source: impl ReferenceSource + 'static, base: &str) -> Result<ReferenceStore, OpenError> {
        let (location, resolver) = self.prepare(base)?;
        let core = self.core(Arc::new(source), location, resolver);
        Ok(ReferenceStore::from_core(Arc::new(core), self.runtime.clone()))
    }

    /// An async store over references from any source; see [`build`](Self::build).
    ///
    /// # Errors
    /// [`OpenError`] if `base` or a registered prefix is invalid.
    pub fn build_async(
        &self,
        source: impl ReferenceSource + 'static,
        base: &str,
    ) -> Result<AsyncReferenceStore, OpenError> {
        let (location, resolver) = self.prepare(base)?;
        let core = self.core(Arc::new(source), location, resolver);
        Ok(AsyncReferenceStore::from_core(Arc::new(core)))
    }

    async fn open_core(&self, text: &str) -> Result<Core, OpenError> {
        let (location, resolver) = self.prepare(text)?;
        #[cfg(feature = "parquet")]
        if let Some(root) = parquet_root(&location).await {
            return self.open_parquet(root, resolver).await;
        }
        let source = resolver.source(&location, &location).map_err(|source| resolve_error(&location, source))?;
        if let Source::Local { path, .. } = &source
            && let Some(file) = fetch::open_local(path.clone()).await.map_err(|source| read_error(&location, source))?
        {
            // A local file is read once, a block at a time, and never held whole; parsing is
            // CPU work, done on the blocking pool. Only text that is not JSON is read again,
            // whole, below, to report its line and column.
            let (options, name) = (self.parse.clone(), location.to_string());
            let streamed = fetch::off_the_executor(move || ReferenceSet::from_json_reader(file, &options, &name))
                .await
                .map_err(|e| read_error(&location, ReadError::Task(e)))?;
            match streamed {
                Ok(references) => return Ok(self.core(Arc::new(references), location, resolver)),
                Err(error) if error.is_not_json() => {}
                Err(error) => return Err(error.into()),
            }
        }
        let limit = self.parse.limits().max_document_bytes();
        match fetch::read_if_exists(&source, limit).await.map_err(|source| read_error(&location, source))? {
            Some(bytes) => {
                // Parsing a large document is CPU work: on the blocking pool, not the executor.
                // A local file got here because it is not JSON: read whole for the error's line.
                let streamed = matches!(source, Source::Local { .. });
                let (options, name) = (self.parse.clone(), location.to_string());
                let parse = move || {
                    if streamed {
                        ReferenceSet::from_json_at(&bytes, &options, &name)
                    } else {
                        parse_whole(&bytes, &options, &name)
                    }
                };
                let references =
                    fetch::off_the_executor(parse).await.map_err(|e| read_error(&location, ReadError::Task(e)))?;
                let references = references?;
                Ok(self.core(Arc::new(references), location, resolver))
            }
            // An object store has no folders: a missing object may be a parquet root's prefix.
            #[cfg(feature = "parquet")]
            None if matches!(location, Location::Remote(_)) => {
                let root = location.clone().without_trailing_slash();
                self.open_parquet(root, resolver).await.map_err(|error| OpenError::NotFound {
                    location: location.to_string(),
                    reason: format!("not found, and not a parquet reference root either ({error})"),
                })
            }
            None => Err(OpenError::NotFound { location: location.to_string(), reason: "file not found".into() }),
        }
    }

    /// Open the parquet reference root `root`: read and parse its `.zmetadata`.
    #[cfg(feature = "parquet")]
    async fn open_parquet(&self, root: Location, resolver: Arc<Resolver>) -> Result<Core, OpenError> {
        let file = root.child(".zmetadata").map_err(|source| resolve_error(&root, source))?;
        let source = resolver.source(&file, &root).map_err(|source| resolve_error(&file, source))?;
        let bytes = fetch::read_if_exists(&source, self.parse.limits().max_document_bytes())
            .await
            .map_err(|source| read_error(&file, source))?
            .ok_or_else(|| OpenError::NotFound {
                location: file.to_string(),
                reason: "not found: a parquet reference root holds a .zmetadata file".into(),
            })?;
        let layout = ParquetLayout::parse(&bytes, &file.to_string())?;
        let max_file_bytes = self.parse.limits().max_document_bytes();
        let index = ParquetRoot::new(layout, self.record_cache, root.clone(), Arc::clone(&resolver), max_file_bytes);
        Ok(self.core(Arc::new(index), root, resolver))
    }

    /// A store core with this builder's target and batch options.
    fn core(&self, source: Arc<dyn ReferenceSource>, location: Location, resolver: Arc<Resolver>) -> Core {
        Core::new(
            source,
            location,
            resolver,
            self.target.clone(),
            self.batch,
            MetadataPolicy {
                max_chunk_bytes: self.parse.limits().max_chunk_bytes(),
                decodable: self.codec_check.unwrap_or(metadata::listed_as_decodable),
            },
            self.read_ahead.unwrap_or(DEFAULT_READ_AHEAD),
        )
    }

    /// A [`StoreRegistry`] with this builder's configuration keys, retries and credentials.
    #[cfg_attr(
        not(feature = "aws"),
        expect(clippy::unnecessary_wraps, reason = "S3 credentials' prefixes can be wrong")
    )]
    fn default_registry(&self) -> Result<Arc<dyn ObjectStoreRegistry>, OpenError> {
        let registry = self.options.iter().fold(StoreRegistry::new(), |r, (k, v)| r.with_option(k, v));
        #[cfg(feature = "remote")]
        let registry = match &self.retry {
            Some(retry) => registry.with_retry(retry.clone()),
            None => registry,
        };
        #[cfg(feature = "aws")]
        let registry = self.s3_credentials.iter().try_fold(registry, |registry, (prefix, provider)| {
            registry
                .with_s3_credentials(prefix, Arc::clone(provider))
                .map_err(|source| OpenError::Resolve { location: prefix.clone(), source })
        })?;
        #[cfg(feature = "http")]
        let registry = match &self.http_credentials {
            Some(credentials) => registry.with_http_credentials(credentials.clone()),
            None => registry,
        };
        Ok(Arc::new(registry))
    }

    /// The registry targets are found in: the caller's or the builder's own,
    /// read through the cache if there is one.
    fn registry(&self) -> Result<Arc<dyn ObjectStoreRegistry>, OpenError> {
        let registry = match &self.registry {
            Some(registry) => Arc::clone(registry),
            None => self.default_registry()?,
        };
        Ok(match &self.cache {
            Some(cache) => Arc::new(CachedRegistry { inner: registry, cache: Arc::clone(cache) }),
            None => registry,
        })
    }

    fn prepare(&self, location: &str) -> Result<(Location, Arc<Resolver>), OpenError> {
        let invalid = |location: &str, source| OpenError::Resolve { location: location.to_owned(), source };
        let parsed = Location::parse(location).map_err(|source| invalid(location, source))?;
        let registry = self.registry()?;
        let mut local_overrides = Vec::new();
        for (prefix, store) in &self.stores {
            let url: Url =
                Location::parse(prefix).and_then(|p| p.to_url()).map_err(|source| invalid(prefix, source))?;
            if url.scheme() == "file" {
                local_overrides.push(url.clone());
            }
            registry.register(url, Arc::clone(store));
        }
        let rewrites = self
            .rewrites
            .iter()
            .map(|(from, to)| UrlRewrite::new(from, to).map_err(|source| invalid(from, source)))
            .collect::<Result<_, _>>()?;
        let mut resolver = Resolver::new(registry, local_overrides, self.allow_local_from_remote)
            .with_read_deadline(self.read_deadline.unwrap_or(DEFAULT_READ_DEADLINE))
            .with_rewrites(rewrites);
        if self.cache.is_some() {
            resolver = resolver.with_cached_reads();
        }
        if let Some(pins) = &self.pins {
            resolver = resolver.with_pins(Arc::clone(pins));
        }
        if let Some(prefixes) = &self.allowed_prefixes {
            let folder = |prefix: &String| -> Result<Url, OpenError> {
                let mut url =
                    Location::parse(prefix).and_then(|p| p.to_url()).map_err(|source| invalid(prefix, source))?;
                // A local path loses its trailing '/' on the way to a file URL: the folder is as written.
                if url.scheme() == "file" && prefix.ends_with('/') && !url.path().ends_with('/') {
                    url.set_path(&format!("{}/", url.path()));
                }
                if !url.path().ends_with('/') {
                    let reason = "an allowed prefix names a folder and ends with '/'".into();
                    return Err(invalid(prefix, ResolveError::InvalidLocation { location: prefix.clone(), reason }));
                }
                Ok(url)
            };
            resolver = resolver.with_allowed_prefixes(prefixes.iter().map(folder).collect::<Result<_, _>>()?);
        }
        Ok((parsed, Arc::new(resolver)))
    }
}

impl ReferenceStore {
    /// Open the reference file at `location` (a local path or a URL) with default options.
    ///
    /// See [`ReferenceStoreBuilder`] for credentials, endpoints, a default
    /// target and template overrides.
    ///
    /// # Errors
    /// [`OpenError`] if the file cannot be read or parsed.
    pub fn open(location: &str) -> Result<Self, OpenError> {
        ReferenceStoreBuilder::new().open(location)
    }
}

impl AsyncReferenceStore {
    /// Open the reference file at `location` (a local path or a URL) with default options.
    ///
    /// See [`ReferenceStoreBuilder`] for credentials, endpoints, a default
    /// target and template overrides.
    ///
    /// # Errors
    /// [`OpenError`] if the file cannot be read or parsed.
    pub async fn open(location: &str) -> Result<Self, OpenError> {
        ReferenceStoreBuilder::new().open_async(location).await
    }
}

/// The parquet root `location` names, if it names one by its form: a local
/// folder, a name ending with `/`, `.parq` or `.parquet`, or a root's `.zmetadata`.
#[cfg(feature = "parquet")]
async fn parquet_root(location: &Location) -> Option<Location> {
    let text = location.to_string();
    if text.ends_with("/.zmetadata") {
        return location.join(".").ok().map(Location::without_trailing_slash);
    }
    let looks_like_a_root = match location {
        // A file system call: on the blocking pool, not the executor.
        Location::Local(path) => {
            let path = path.clone();
            fetch::off_the_executor(move || path.is_dir()).await.unwrap_or(false)
        }
        Location::Remote(url) => {
            let path = url.path();
            path.ends_with('/') || [".parq", ".parquet"].iter().any(|suffix| path.ends_with(suffix))
        }
    };
    looks_like_a_root.then(|| location.clone().without_trailing_slash())
}

/// A whole document's references: streamed first, as a local file is (the
/// faster reader), then, if the stream does not take it (bare NaN tokens; a
/// syntax error, to report with its line), read as text.
fn parse_whole(bytes: &[u8], options: &ParseOptions, location: &str) -> Result<ReferenceSet, ParseError> {
    match ReferenceSet::from_json_reader(bytes, options, location) {
        Err(error) if error.is_not_json() => ReferenceSet::from_json_at(bytes, options, location),
        result => result,
    }
}

fn read_error(location: &Location, source: ReadError) -> OpenError {
    OpenError::Read { location: location.to_string(), source }
}

fn resolve_error(location: &Location, source: ResolveError) -> OpenError {
    OpenError::Resolve { location: location.to_string(), source }
}
