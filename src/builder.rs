//! Options for opening reference sets.

use std::sync::Arc;

use object_store::ObjectStore;
use url::Url;

use crate::fetch::{self, Request};
use crate::resolve::{Location, Resolver};
use crate::store::{AsyncReferenceStore, BlockingRuntime, Core, ReferenceStore, read_blocking};
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

    /// Open the reference file at `location` as a sync store.
    ///
    /// # Errors
    /// [`ReferenceError`] if the location is invalid, the file cannot be read,
    /// or it is not a valid reference set.
    pub fn open(&self, location: &str) -> Result<ReferenceStore, ReferenceError> {
        let (location, resolver) = self.prepare(location)?;
        let runtime = Arc::new(BlockingRuntime::default());
        let source = resolver.source(&location, &location).map_err(|reason| read_error(&location, reason))?;
        let bytes =
            read_blocking(&runtime, &source, vec![Request::Whole]).map_err(|reason| read_error(&location, reason))?;
        let core = self.core(&bytes[0], location, resolver)?;
        Ok(ReferenceStore::from_core(Arc::new(core), runtime))
    }

    /// Open the reference file at `location` as an async store.
    ///
    /// # Errors
    /// [`ReferenceError`] if the location is invalid, the file cannot be read,
    /// or it is not a valid reference set.
    pub async fn open_async(&self, location: &str) -> Result<AsyncReferenceStore, ReferenceError> {
        let (location, resolver) = self.prepare(location)?;
        let source = resolver.source(&location, &location).map_err(|reason| read_error(&location, reason))?;
        let bytes =
            fetch::read_async(&source, vec![Request::Whole]).await.map_err(|reason| read_error(&location, reason))?;
        let core = self.core(&bytes[0], location, resolver)?;
        Ok(AsyncReferenceStore::from_core(Arc::new(core)))
    }

    /// A sync store over references already in memory; relative URLs resolve against `base`
    /// (the location the reference file would have).
    ///
    /// # Errors
    /// [`ReferenceError`] if `base` or a registered prefix is invalid.
    pub fn build(&self, references: ReferenceSet, base: &str) -> Result<ReferenceStore, ReferenceError> {
        let (location, resolver) = self.prepare(base)?;
        let core = Core::new(references, location, resolver, self.target.clone());
        Ok(ReferenceStore::from_core(Arc::new(core), Arc::default()))
    }

    /// An async store over references already in memory; see [`build`](Self::build).
    ///
    /// # Errors
    /// [`ReferenceError`] if `base` or a registered prefix is invalid.
    pub fn build_async(&self, references: ReferenceSet, base: &str) -> Result<AsyncReferenceStore, ReferenceError> {
        let (location, resolver) = self.prepare(base)?;
        let core = Core::new(references, location, resolver, self.target.clone());
        Ok(AsyncReferenceStore::from_core(Arc::new(core)))
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

    fn core(&self, bytes: &[u8], location: Location, resolver: Resolver) -> Result<Core, ReferenceError> {
        let references = ReferenceSet::from_json_at(bytes, &self.parse, &location.to_string())?;
        Ok(Core::new(references, location, resolver, self.target.clone()))
    }
}

fn read_error(location: &Location, reason: String) -> ReferenceError {
    ReferenceError::Read { location: location.to_string(), reason }
}
