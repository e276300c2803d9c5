//! Options for opening reference sets.

use std::sync::Arc;

use object_store::ObjectStore;
use url::Url;

use crate::fetch::{self, BatchOptions, Coalescing};
use crate::parquet::ParquetLayout;
use crate::resolve::{Location, Resolver, Source};
use crate::store::{
    AsyncReferenceStore, BlockingRuntime, Core, Index, ParquetIndex, RecordCacheOptions, ReferenceStore,
};
use crate::{ParseOptions, ReferenceError, ReferenceSet};

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
/// # Ok::<(), zarrs_kerchunk::ReferenceError>(())
/// ```
#[derive(Clone, Debug, Default)]
pub struct ReferenceStoreBuilder {
    parse: ParseOptions,
    stores: Vec<(String, Arc<dyn ObjectStore>)>,
    options: Vec<(String, String)>,
    target: Option<String>,
    allow_local_from_remote: bool,
    record_cache: RecordCacheOptions,
    batch: BatchOptions,
}

impl ReferenceStoreBuilder {
    /// Default options: stores created from each URL with the environment's
    /// credentials (`AWS_*`, `GOOGLE_*`, `AZURE_*` variables), no default target.
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

    /// Set an `object_store` configuration key for the stores this builder
    /// creates, in the service's own words: `aws_region`, `aws_endpoint`,
    /// `aws_skip_signature`, `google_service_account`, `azure_storage_account_name`,
    /// `allow_http`, `timeout`, ... Keys a service does not know are ignored by it.
    #[must_use]
    pub fn with_option(mut self, key: impl Into<String>, value: impl Into<String>) -> Self {
        self.options.push((key.into(), value.into()));
        self
    }

    /// Read public data without credentials (skip request signing on S3, GCS and Azure).
    #[must_use]
    pub fn with_anonymous(self) -> Self {
        self.with_option("aws_skip_signature", "true")
            .with_option("google_skip_signature", "true")
            .with_option("azure_skip_signature", "true")
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

    /// Bound the cache of decoded parquet record files (default: 128 records, 256 MiB).
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
    /// [`ReferenceError`] if the location is invalid, the references cannot be
    /// read, or they are not a valid reference set.
    pub fn open(&self, location: &str) -> Result<ReferenceStore, ReferenceError> {
        let runtime = Arc::new(BlockingRuntime::default());
        let (builder, text) = (self.clone(), location.to_owned());
        let core = runtime
            .block_on(async move { builder.open_core(&text).await })
            .map_err(|reason| ReferenceError::Read { location: location.to_owned(), reason })??;
        Ok(ReferenceStore::from_core(Arc::new(core), runtime))
    }

    /// Open the references at `location` as an async store.
    ///
    /// `location` is a parquet root if it is a local folder, ends with `/`,
    /// `.parq` or `.parquet`, or names a root's `.zmetadata`; a remote location
    /// that does not exist is also tried as a parquet root. Anything else is a
    /// JSON reference file. Opening a parquet root reads only its `.zmetadata`.
    ///
    /// # Errors
    /// [`ReferenceError`] if the location is invalid, the references cannot be
    /// read, or they are not a valid reference set.
    pub async fn open_async(&self, location: &str) -> Result<AsyncReferenceStore, ReferenceError> {
        Ok(AsyncReferenceStore::from_core(Arc::new(self.open_core(location).await?)))
    }

    async fn open_core(&self, text: &str) -> Result<Core, ReferenceError> {
        let (location, resolver) = self.prepare(text)?;
        if let Some(root) = parquet_root(&location) {
            return self.open_parquet(root, resolver).await;
        }
        let source = resolver.source(&location, &location).map_err(|reason| read_error(&location, reason))?;
        if let Source::Local(path) = &source {
            // A local file is streamed a block at a time and never held whole. What the stream
            // does not take (bare NaN tokens; a syntax error, to report with its line) is read
            // whole below.
            let (options, name) = (self.parse.clone(), location.to_string());
            let streamed =
                fetch::with_local_file(path.clone(), move |file| ReferenceSet::from_json_reader(file, &options, &name))
                    .await
                    .map_err(|reason| read_error(&location, reason))?;
            match streamed {
                Some(Ok(references)) => return Ok(self.core(Index::Json(references), location, resolver)),
                Some(Err(ReferenceError::Json { .. })) | None => {}
                Some(Err(error)) => return Err(error),
            }
        }
        match fetch::read_if_exists(&source).await.map_err(|reason| read_error(&location, reason))? {
            Some(bytes) => {
                let references = ReferenceSet::from_json_at(&bytes, &self.parse, &location.to_string())?;
                Ok(self.core(Index::Json(references), location, resolver))
            }
            // An object store has no folders: a missing object may be a parquet root's prefix.
            None if matches!(location, Location::Remote(_)) => {
                let root = location.clone().without_trailing_slash();
                self.open_parquet(root, resolver).await.map_err(|error| {
                    read_error(&location, format!("not found, and not a parquet reference root either ({error})"))
                })
            }
            None => Err(read_error(&location, "file not found".into())),
        }
    }

    /// Open the parquet reference root `root`: read and parse its `.zmetadata`.
    async fn open_parquet(&self, root: Location, resolver: Resolver) -> Result<Core, ReferenceError> {
        let file = root.child(".zmetadata")?;
        let source = resolver.source(&file, &root).map_err(|reason| read_error(&file, reason))?;
        let bytes = fetch::read_if_exists(&source)
            .await
            .map_err(|reason| read_error(&file, reason))?
            .ok_or_else(|| read_error(&file, "not found: a parquet reference root holds a .zmetadata file".into()))?;
        let layout = ParquetLayout::parse(&bytes, &file.to_string())?;
        let index = Index::Parquet(ParquetIndex::new(layout, self.record_cache));
        Ok(self.core(index, root, resolver))
    }

    /// A sync store over references already in memory; relative URLs resolve against `base`
    /// (the location the reference file would have).
    ///
    /// # Errors
    /// [`ReferenceError`] if `base` or a registered prefix is invalid.
    pub fn build(&self, references: ReferenceSet, base: &str) -> Result<ReferenceStore, ReferenceError> {
        let (location, resolver) = self.prepare(base)?;
        let core = self.core(Index::Json(references), location, resolver);
        Ok(ReferenceStore::from_core(Arc::new(core), Arc::default()))
    }

    /// An async store over references already in memory; see [`build`](Self::build).
    ///
    /// # Errors
    /// [`ReferenceError`] if `base` or a registered prefix is invalid.
    pub fn build_async(&self, references: ReferenceSet, base: &str) -> Result<AsyncReferenceStore, ReferenceError> {
        let (location, resolver) = self.prepare(base)?;
        let core = self.core(Index::Json(references), location, resolver);
        Ok(AsyncReferenceStore::from_core(Arc::new(core)))
    }

    /// A store core with this builder's target and batch options.
    fn core(&self, index: Index, location: Location, resolver: Resolver) -> Core {
        Core::new(index, location, resolver, self.target.clone()).with_batch_options(self.batch)
    }

    fn prepare(&self, location: &str) -> Result<(Location, Resolver), ReferenceError> {
        let location = Location::parse(location)?;
        let stores = self
            .stores
            .iter()
            .map(|(prefix, store)| {
                let url = Location::parse(prefix)?.to_url().ok_or_else(|| ReferenceError::InvalidLocation {
                    location: prefix.clone(),
                    reason: "cannot be expressed as a URL".into(),
                })?;
                Ok((url, Arc::clone(store)))
            })
            .collect::<Result<Vec<(Url, _)>, ReferenceError>>()?;
        Ok((location, Resolver::new(stores, self.options.clone(), self.allow_local_from_remote)))
    }
}

/// The parquet root `location` names, if it names one by its form: a local
/// folder, a name ending with `/`, `.parq` or `.parquet`, or a root's `.zmetadata`.
fn parquet_root(location: &Location) -> Option<Location> {
    let text = location.to_string();
    if text.ends_with("/.zmetadata") {
        return location.join(".").ok().map(Location::without_trailing_slash);
    }
    let looks_like_a_root = match location {
        Location::Local(path) => path.is_dir(),
        Location::Remote(url) => {
            let path = url.path();
            path.ends_with('/') || [".parq", ".parquet"].iter().any(|suffix| path.ends_with(suffix))
        }
    };
    looks_like_a_root.then(|| location.clone().without_trailing_slash())
}

fn read_error(location: &Location, reason: String) -> ReferenceError {
    ReferenceError::Read { location: location.to_string(), reason }
}
