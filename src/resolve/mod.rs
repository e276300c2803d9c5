//! Turning locations and reference URLs into places bytes can be read from.
//!
//! A [`Location`] is a local path or a URL. The [`Resolver`] maps each
//! location to a [`Source`]: a local file, read with plain positioned reads,
//! or an [`ObjectStore`] and a path in it, found in an
//! [`ObjectStoreRegistry`] (by default a [`StoreRegistry`]). Every target a
//! store reads passes through [`Resolver::source`], the one place where the
//! access policy is applied, on the final URL.

mod location;
mod registry;

use std::path::PathBuf;
use std::sync::Arc;

use object_store::ObjectStore;
use object_store::registry::ObjectStoreRegistry;
use url::Url;

pub(crate) use location::Location;
pub(crate) use registry::ANONYMOUS;
pub use registry::StoreRegistry;
use registry::is_prefix;

use crate::error::ResolveError;

/// Where the bytes of one target live.
#[derive(Clone, Debug)]
pub(crate) enum Source {
    /// A local file, read with positioned reads (no async machinery).
    Local(PathBuf),
    /// An object in an object store.
    Object { store: Arc<dyn ObjectStore>, path: object_store::path::Path },
}

/// Maps locations to [`Source`]s, applying the access policy.
#[derive(Debug)]
pub(crate) struct Resolver {
    registry: Arc<dyn ObjectStoreRegistry>,
    /// `file://` prefixes the user registered a store for: local paths under
    /// them are read through that store rather than directly.
    local_overrides: Vec<Url>,
    allow_local_from_remote: bool,
}

impl Resolver {
    pub(crate) fn new(
        registry: Arc<dyn ObjectStoreRegistry>,
        local_overrides: Vec<Url>,
        allow_local_from_remote: bool,
    ) -> Self {
        Self { registry, local_overrides, allow_local_from_remote }
    }

    /// The source for `target`, a location named by the reference file at `referrer`.
    ///
    /// The target is classified by its URL's scheme, after every template and
    /// relative resolution: a remote reference file may not point at local
    /// files unless that was allowed, however the URL was spelled.
    pub(crate) fn source(&self, target: &Location, referrer: &Location) -> Result<Source, ResolveError> {
        let url = target.to_url()?;
        let local = url.scheme() == "file";
        if local && matches!(referrer, Location::Remote(_)) && !self.allow_local_from_remote {
            return Err(ResolveError::LocalFromRemote);
        }
        if local && !self.local_overrides.iter().any(|prefix| is_prefix(prefix, &url)) {
            let path = url.to_file_path().map_err(|()| ResolveError::InvalidLocation {
                location: url.to_string(),
                reason: "not a local file URL".into(),
            })?;
            return Ok(Source::Local(path));
        }
        let (store, path) = self
            .registry
            .resolve(&url)
            .map_err(|source| ResolveError::ObjectStore { url: url.to_string(), source: Box::new(source) })?;
        Ok(Source::Object { store, path })
    }
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
        let Source::Object { store, path } = resolver.source(&target, &referrer).unwrap() else { panic!() };
        assert!(Arc::ptr_eq(&store, &memory));
        assert_eq!(path.as_ref(), "a/b.nc");
        let local = Location::parse("/etc/passwd").unwrap();
        let err = resolver.source(&local, &referrer).unwrap_err();
        assert!(matches!(err, ResolveError::LocalFromRemote), "{err}");
        assert!(matches!(resolver.source(&local, &local).unwrap(), Source::Local(_)));
        // A relative reference that is a file URL in disguise is still local.
        let disguised = referrer.join("file:/etc/passwd").unwrap();
        let err = resolver.source(&disguised, &referrer).unwrap_err();
        assert!(matches!(err, ResolveError::LocalFromRemote), "{disguised}: {err}");
    }

    #[test]
    fn memory_urls_get_a_store() {
        let resolver = Resolver::new(Arc::new(StoreRegistry::new()), Vec::new(), false);
        let target = Location::parse("memory:///x/y").unwrap();
        let Source::Object { path, .. } = resolver.source(&target, &target).unwrap() else { panic!() };
        assert_eq!(path.as_ref(), "x/y");
    }
}
