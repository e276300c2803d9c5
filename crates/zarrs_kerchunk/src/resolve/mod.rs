//! Turning locations and reference URLs into places bytes can be read from.
//!
//! A [`Location`] is a local path or a URL. The [`Resolver`] maps each
//! location to a [`Source`]: a local file, read with plain positioned reads,
//! or an [`ObjectStore`] and a path in it, found in an
//! [`ObjectStoreRegistry`] (by default a [`StoreRegistry`]). Every target a
//! store reads passes through [`Resolver::source`], the one place where the
//! access policy is applied, on the final URL.

#[cfg(feature = "http")]
mod http_auth;
mod location;
mod pins;
mod policy;
mod registry;
mod rewrite;
#[cfg(all(feature = "aws", feature = "http"))]
mod s3credentials;

use std::path::PathBuf;
use std::sync::Arc;

use object_store::ObjectStore;
use object_store::registry::ObjectStoreRegistry;
use url::Url;

#[cfg(feature = "http")]
pub use http_auth::{EARTHDATA_HOSTS, HttpCredentials, HttpCredentialsError};
pub(crate) use location::Location;
pub use pins::{Pin, Pins, PinsError};
pub(crate) use policy::{DEFAULT_READ_DEADLINE, ReadPolicy};
pub(crate) use registry::ANONYMOUS;
pub(crate) use registry::CachedRegistry;
pub use registry::StoreRegistry;
use registry::{is_cached_scheme, is_prefix};
pub(crate) use rewrite::UrlRewrite;
#[cfg(all(feature = "aws", feature = "http"))]
pub use s3credentials::S3CredentialsEndpoint;

use crate::error::ResolveError;

/// Where the bytes of one target live.
#[derive(Clone, Debug)]
pub(crate) enum Source {
    /// A local file, read with positioned reads (no async machinery).
    Local {
        path: PathBuf,
        /// What the file must still be, if it was pinned.
        pin: Option<Arc<Pin>>,
    },
    /// An object in an object store, read under the resolver's policy.
    Object {
        store: Arc<dyn ObjectStore>,
        path: object_store::path::Path,
        policy: Arc<ReadPolicy>,
        /// What the object must still be, if it was pinned.
        pin: Option<Arc<Pin>>,
    },
}

impl Source {
    /// Whether reads of this source go over a network (or to an object store).
    pub(crate) fn is_remote(&self) -> bool {
        matches!(self, Self::Object { .. })
    }

    /// Whether reads of this source go through a disk cache, which merges
    /// what it lacks itself.
    pub(crate) fn through_cache(&self) -> bool {
        matches!(self, Self::Object { policy, .. } if policy.through_cache)
    }

    /// The local file at `path`, unpinned.
    pub(crate) fn local(path: PathBuf) -> Self {
        Self::Local { path, pin: None }
    }

    /// What the target must still be, if it was pinned.
    pub(crate) fn pin(&self) -> Option<&Pin> {
        let (Self::Local { pin, .. } | Self::Object { pin, .. }) = self;
        pin.as_deref()
    }

    fn with_pin(mut self, pinned: Option<&Pin>) -> Self {
        let (Self::Local { pin, .. } | Self::Object { pin, .. }) = &mut self;
        *pin = pinned.cloned().map(Arc::new);
        self
    }
}

/// Maps locations to [`Source`]s, applying the access policy.
#[derive(Debug)]
pub(crate) struct Resolver {
    registry: Arc<dyn ObjectStoreRegistry>,
    /// `file://` prefixes the user registered a store for: local paths under
    /// them are read through that store rather than directly.
    local_overrides: Vec<Url>,
    allow_local_from_remote: bool,
    /// What each pinned target must still be.
    pins: Option<Arc<Pins>>,
    /// The prefixes targets must lie under; `None`: any.
    allowed: Option<Vec<Url>>,
    /// Where targets moved.
    rewrites: Vec<UrlRewrite>,
    /// The rules every object read obeys.
    policy: Arc<ReadPolicy>,
    /// The same, for objects read through a disk cache, if there is one.
    cached_policy: Option<Arc<ReadPolicy>>,
}

impl Resolver {
    pub(crate) fn new(
        registry: Arc<dyn ObjectStoreRegistry>,
        local_overrides: Vec<Url>,
        allow_local_from_remote: bool,
    ) -> Self {
        Self {
            registry,
            local_overrides,
            allow_local_from_remote,
            pins: None,
            allowed: None,
            rewrites: Vec::new(),
            policy: Arc::default(),
            cached_policy: None,
        }
    }

    /// Give up on any one read of an object after `deadline`.
    pub(crate) fn with_read_deadline(mut self, deadline: std::time::Duration) -> Self {
        self.policy = Arc::new(ReadPolicy::new(deadline, false));
        if self.cached_policy.is_some() {
            self.cached_policy = Some(Arc::new(ReadPolicy::new(deadline, true)));
        }
        self
    }

    /// Remote objects are read through a disk cache: ask it for the ranges needed, unmerged.
    pub(crate) fn with_cached_reads(mut self) -> Self {
        self.cached_policy = Some(Arc::new(ReadPolicy::new(self.policy.deadline, true)));
        self
    }

    /// Let references read only targets under `prefixes` (each a folder: it ends in `/`).
    pub(crate) fn with_allowed_prefixes(mut self, prefixes: Vec<Url>) -> Self {
        self.allowed = Some(prefixes);
        self
    }

    /// Check every read of a pinned target against its pin.
    pub(crate) fn with_pins(mut self, pins: Arc<Pins>) -> Self {
        self.pins = Some(pins);
        self
    }

    /// Read targets under each rewrite's `from` prefix from its `to` prefix instead.
    pub(crate) fn with_rewrites(mut self, rewrites: Vec<UrlRewrite>) -> Self {
        self.rewrites = rewrites;
        self
    }

    /// The source of the target a reference names as `text`, written in the
    /// reference file at `referrer`: the one place every target URL, after
    /// templates and `gen`, passes through.
    ///
    /// A remote reference file may not name URLs with whitespace or control
    /// characters. The URL is resolved, normalised (local paths by name) and
    /// rewritten; the result must lie under an allowed prefix, if any are
    /// set; and the policy of [`source`](Self::source) applies to it.
    /// Returns the resolved location with its source.
    pub(crate) fn target(&self, text: &str, referrer: &Location) -> Result<(Location, Source), ResolveError> {
        if matches!(referrer, Location::Remote(_)) && text.chars().any(|c| c.is_whitespace() || c.is_control()) {
            return Err(ResolveError::Ambiguous { url: text.to_owned() });
        }
        let target = rewrite::rewrite(&self.rewrites, referrer.join(text)?.normalized()?)?;
        let url = target.to_url()?;
        if let Some(allowed) = &self.allowed
            && !allowed.iter().any(|prefix| lies_under(prefix, &url))
        {
            let allowed = allowed.iter().map(Url::as_str).collect::<Vec<_>>().join(", ");
            return Err(ResolveError::NotAllowed { url: url.to_string(), allowed });
        }
        let mut source = self.source_at(&url, referrer)?;
        if let Some(pins) = &self.pins {
            source = source.with_pin(pins.get(url.as_str()));
        }
        Ok((target, source))
    }

    /// The source for `target`, a location named by the reference file at `referrer`.
    ///
    /// The target is classified by its URL's scheme, after every template and
    /// relative resolution: a remote reference file may not point at local
    /// files unless that was allowed, however the URL was spelled.
    pub(crate) fn source(&self, target: &Location, referrer: &Location) -> Result<Source, ResolveError> {
        self.source_at(&target.to_url()?, referrer)
    }

    /// [`source`](Self::source), for a target already turned into its URL.
    fn source_at(&self, url: &Url, referrer: &Location) -> Result<Source, ResolveError> {
        let local = url.scheme() == "file";
        if local && matches!(referrer, Location::Remote(_)) && !self.allow_local_from_remote {
            return Err(ResolveError::LocalFromRemote);
        }
        if local && !self.local_overrides.iter().any(|prefix| is_prefix(prefix, url)) {
            let path = url.to_file_path().map_err(|()| ResolveError::InvalidLocation {
                location: url.to_string(),
                reason: "not a local file URL".into(),
            })?;
            return Ok(Source::local(path));
        }
        let (store, path) = self
            .registry
            .resolve(url)
            .map_err(|source| ResolveError::ObjectStore { url: url.to_string(), source: Box::new(source) })?;
        let policy = match &self.cached_policy {
            Some(cached) if is_cached_scheme(url) => cached,
            _ => &self.policy,
        };
        Ok(Source::Object { store, path, policy: Arc::clone(policy), pin: None })
    }
}

/// Whether `url` names something inside the folder `prefix` (whose path ends in `/`):
/// the same scheme and authority, and a longer path that starts with the folder's.
fn lies_under(prefix: &Url, url: &Url) -> bool {
    let authority = |u: &Url| u[url::Position::BeforeHost..url::Position::AfterPort].to_owned();
    prefix.scheme() == url.scheme()
        && authority(prefix) == authority(url)
        && url.path().len() > prefix.path().len()
        && url.path().starts_with(prefix.path())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn resolver(prefix: &str, store: Arc<dyn ObjectStore>) -> Resolver {
        let registry = StoreRegistry::new();
        registry.register(Url::parse(prefix).unwrap(), store);
        Resolver::new(Arc::new(registry), Vec::new(), false)
    }

    #[test]
    fn registered_prefixes_win_and_remote_cannot_read_local() {
        let memory: Arc<dyn ObjectStore> = Arc::new(object_store::memory::InMemory::new());
        let resolver = resolver("s3://bucket/sub/", Arc::clone(&memory));
        let referrer = Location::parse("s3://bucket/refs.json").unwrap();
        let target = Location::parse("s3://bucket/sub/a/b.nc").unwrap();
        let Source::Object { store, path, .. } = resolver.source(&target, &referrer).unwrap() else { panic!() };
        assert!(Arc::ptr_eq(&store, &memory));
        assert_eq!(path.as_ref(), "a/b.nc");
        let local = Location::parse("/etc/passwd").unwrap();
        let err = resolver.source(&local, &referrer).unwrap_err();
        assert!(matches!(err, ResolveError::LocalFromRemote), "{err}");
        assert!(matches!(resolver.source(&local, &local).unwrap(), Source::Local { .. }));
        // A relative reference that is a file URL in disguise is still local.
        let disguised = referrer.join("file:/etc/passwd").unwrap();
        let err = resolver.source(&disguised, &referrer).unwrap_err();
        assert!(matches!(err, ResolveError::LocalFromRemote), "{disguised}: {err}");
    }

    #[test]
    fn allowed_prefixes_are_folders_and_deny_everything_else() {
        let memory: Arc<dyn ObjectStore> = Arc::new(object_store::memory::InMemory::new());
        let resolver = resolver("s3://data/", Arc::clone(&memory))
            .with_allowed_prefixes(vec![Url::parse("s3://data/").unwrap(), Url::parse("https://h/pub/").unwrap()]);
        let referrer = Location::parse("s3://data/refs.json").unwrap();
        assert!(resolver.target("s3://data/a/b.nc", &referrer).is_ok());
        assert!(resolver.target("a/b.nc", &referrer).is_ok(), "relative, inside");
        let (above, _) = resolver.target("../../etc/x", &referrer).unwrap();
        assert_eq!(above.to_string(), "s3://data/etc/x", "a relative URL cannot climb out of its bucket");
        for outside in [
            "s3://data-private/a.nc",
            "s3://other/a.nc",
            "https://h/public/x",
            "https://h/pub",
            "https://h:444/pub/x",
            "file:///etc/passwd",
            "file:/etc/passwd",
        ] {
            let err = resolver.target(outside, &referrer).unwrap_err();
            assert!(matches!(err, ResolveError::NotAllowed { .. }), "{outside}: {err}");
        }
        for ambiguous in ["s3://data/a b.nc", "s3://data/a\tb", "s3://data/a\u{0}b", "s3://data/a\nb"] {
            let err = resolver.target(ambiguous, &referrer).unwrap_err();
            assert!(matches!(err, ResolveError::Ambiguous { .. }), "{ambiguous:?}: {err}");
        }
        // Local targets are compared as they will be opened, `..` and `%2F` resolved.
        let data = Resolver::new(Arc::new(StoreRegistry::new()), Vec::new(), false)
            .with_allowed_prefixes(vec![Url::parse("file:///data/").unwrap()]);
        let refs = Location::parse("/data/refs.json").unwrap();
        assert!(data.target("x/y.nc", &refs).is_ok());
        for escape in ["../etc/passwd", "file:///data/a%2F..%2F..%2Fetc/passwd", "/data/../etc/passwd", "x/../../etc"] {
            let err = data.target(escape, &refs).unwrap_err();
            assert!(matches!(err, ResolveError::NotAllowed { .. }), "{escape}: {err}");
        }
        // An object path with an encoded `/..` is one object's name, never a climb above the prefix.
        for url in ["s3://data/a%2F..%2F..%2Fsecret", "https://h/pub/a%2F..%2F..%2Fsecret"] {
            match resolver.target(url, &referrer) {
                Ok((_, Source::Object { path, .. })) => {
                    assert!(path.parts().all(|part| part.as_ref() != ".."), "{url}: {path:?}");
                    assert_eq!(path.parts().count(), 1, "{url}: {path:?}");
                }
                Ok((_, source)) => panic!("{url}: {source:?}"),
                Err(err) => assert!(matches!(err, ResolveError::ObjectStore { .. }), "{url}: {err}"),
            }
        }
        // A local reference file may name local paths with spaces.
        let local = Location::parse("/data/refs.json").unwrap();
        let open = Resolver::new(Arc::new(StoreRegistry::new()), Vec::new(), false);
        assert!(matches!(open.target("part 1.nc", &local).unwrap().1, Source::Local { .. }));
    }

    #[test]
    fn memory_urls_get_a_store() {
        let resolver = Resolver::new(Arc::new(StoreRegistry::new()), Vec::new(), false);
        let target = Location::parse("memory:///x/y").unwrap();
        let Source::Object { path, .. } = resolver.source(&target, &target).unwrap() else { panic!() };
        assert_eq!(path.as_ref(), "x/y");
    }
}
