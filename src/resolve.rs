//! Turning locations and reference URLs into places bytes can be read from.
//!
//! A [`Location`] is a local path or a URL. Relative reference URLs are
//! resolved against the folder (or URL prefix) of the reference file, never
//! the process working directory. The [`Resolver`] then maps each location to
//! a [`Source`]: a local file, read with plain positioned reads, or an
//! [`ObjectStore`] and a path in it. Stores come from the user's per-prefix
//! registrations (longest prefix wins) or are created once per bucket/host
//! with `object_store`'s own configuration keys.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use object_store::ObjectStore;
use object_store::registry::{DefaultObjectStoreRegistry, ObjectStoreRegistry};
use url::Url;

use crate::ReferenceError;

/// A local path or a URL.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Location {
    Local(PathBuf),
    Remote(Url),
}

impl Location {
    /// Read a location as a user or a reference writes it: `file://`,
    /// `s3://` and other URLs, or a plain local path.
    pub(crate) fn parse(text: &str) -> Result<Self, ReferenceError> {
        let invalid = |reason: String| ReferenceError::InvalidLocation { location: text.to_owned(), reason };
        if !has_scheme(text) {
            return if text.is_empty() { Err(invalid("empty".into())) } else { Ok(Self::Local(PathBuf::from(text))) };
        }
        let url = Url::parse(text).map_err(|e| invalid(e.to_string()))?;
        if url.scheme() == "file" {
            let path = url.to_file_path().map_err(|()| invalid("not a local file URL".into()))?;
            return Ok(Self::Local(path));
        }
        Ok(Self::Remote(url))
    }

    /// Resolve a reference URL written inside the reference file at `self`.
    pub(crate) fn join(&self, reference: &str) -> Result<Self, ReferenceError> {
        if has_scheme(reference) {
            return Self::parse(reference);
        }
        match self {
            Self::Local(file) => {
                let folder = file.parent().unwrap_or(Path::new(""));
                Ok(Self::Local(folder.join(reference)))
            }
            Self::Remote(url) => url.join(reference).map(Self::Remote).map_err(|e| ReferenceError::InvalidLocation {
                location: reference.to_owned(),
                reason: format!("cannot resolve it against {url}: {e}"),
            }),
        }
    }

    /// The location `relative` inside the folder (or URL prefix) `self`.
    pub(crate) fn child(&self, relative: &str) -> Result<Self, ReferenceError> {
        match self {
            Self::Local(folder) => Ok(Self::Local(folder.join(relative))),
            Self::Remote(url) => {
                let mut folder = url.clone();
                if !folder.path().ends_with('/') {
                    folder.set_path(&format!("{}/", folder.path()));
                }
                Self::Remote(folder).join(relative)
            }
        }
    }

    /// The same location without a trailing `/`, so that it names a folder as if
    /// it were a file: [`join`](Self::join) then resolves against its parent.
    pub(crate) fn without_trailing_slash(self) -> Self {
        match self {
            Self::Local(path) => Self::Local(path.components().collect()),
            Self::Remote(mut url) => {
                let trimmed = url.path().trim_end_matches('/').to_owned();
                if !trimmed.is_empty() {
                    url.set_path(&trimmed);
                }
                Self::Remote(url)
            }
        }
    }

    /// The location as a URL (`file://` for local paths, made absolute).
    pub(crate) fn to_url(&self) -> Option<Url> {
        match self {
            Self::Remote(url) => Some(url.clone()),
            Self::Local(path) => std::path::absolute(path).ok().and_then(|p| Url::from_file_path(p).ok()),
        }
    }
}

impl std::fmt::Display for Location {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Local(path) => write!(f, "{}", path.display()),
            Self::Remote(url) => write!(f, "{url}"),
        }
    }
}

/// `scheme://` with a scheme of two or more characters (one letter is a Windows drive).
fn has_scheme(text: &str) -> bool {
    text.split_once("://").is_some_and(|(scheme, _)| {
        scheme.len() > 1
            && scheme.starts_with(|c: char| c.is_ascii_alphabetic())
            && scheme.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'))
    })
}

/// Where the bytes of one target live.
#[derive(Clone, Debug)]
pub(crate) enum Source {
    /// A local file, read with positioned reads (no async machinery).
    Local(PathBuf),
    /// An object in an object store.
    Object { store: Arc<dyn ObjectStore>, path: object_store::path::Path },
}

/// Maps locations to [`Source`]s.
#[derive(Debug)]
pub(crate) struct Resolver {
    registry: DefaultObjectStoreRegistry,
    user_prefixes: Vec<Url>,
    options: Vec<(String, String)>,
    created: Mutex<HashSet<String>>,
    allow_local_from_remote: bool,
}

impl Resolver {
    pub(crate) fn new(
        stores: Vec<(Url, Arc<dyn ObjectStore>)>,
        options: Vec<(String, String)>,
        allow_local_from_remote: bool,
    ) -> Self {
        let registry = DefaultObjectStoreRegistry::new();
        let mut user_prefixes = Vec::with_capacity(stores.len());
        for (prefix, store) in stores {
            registry.register(prefix.clone(), store);
            user_prefixes.push(prefix);
        }
        Self { registry, user_prefixes, options, created: Mutex::default(), allow_local_from_remote }
    }

    /// The source for `target`, a location named by the reference file at `referrer`.
    ///
    /// A remote reference file may not point at local files unless that was allowed.
    pub(crate) fn source(&self, target: &Location, referrer: &Location) -> Result<Source, String> {
        let url = target.to_url();
        let registered = url.as_ref().is_some_and(|u| self.user_prefixes.iter().any(|p| is_prefix(p, u)));
        match target {
            Location::Local(_) if matches!(referrer, Location::Remote(_)) && !self.allow_local_from_remote => {
                Err("a remote reference file may not read local files (see ReferenceStoreBuilder::allow_local_files_from_remote_references)".into())
            }
            Location::Local(path) if !registered => Ok(Source::Local(path.clone())),
            _ => {
                let url = url.ok_or("cannot express the location as a URL")?;
                if !registered {
                    self.create_store_for(&url)?;
                }
                let (store, path) = self.registry.resolve(&url).map_err(|e| crate::error::error_chain(&e))?;
                Ok(Source::Object { store, path })
            }
        }
    }

    /// Create the store serving `url`'s bucket or host, once.
    fn create_store_for(&self, url: &Url) -> Result<(), String> {
        let authority = format!("{}://{}", url.scheme(), &url[url::Position::BeforeHost..url::Position::AfterPort]);
        let mut created = self.created.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        if created.contains(&authority) {
            return Ok(());
        }
        // An `http://` URL asks for plain HTTP, which object_store refuses unless allowed.
        let allow_http = (url.scheme() == "http").then(|| ("allow_http".to_owned(), "true".to_owned()));
        let options = std::env::vars().chain(allow_http).chain(self.options.iter().cloned());
        let (store, path) = object_store::parse_url_opts(url, options).map_err(|e| crate::error::error_chain(&e))?;
        // The store may be scoped below the host (a bucket in the path): register it at that depth.
        let depth = segments(url.path()).count().saturating_sub(segments(path.as_ref()).count());
        let mut base = url.clone();
        base.set_query(None);
        base.set_fragment(None);
        base.set_path(&segments(url.path()).take(depth).fold(String::from("/"), |p, s| p + s + "/"));
        self.registry.register(base, Arc::from(store));
        created.insert(authority);
        Ok(())
    }
}

fn segments(path: &str) -> impl Iterator<Item = &str> {
    path.split('/').filter(|s| !s.is_empty())
}

fn is_prefix(prefix: &Url, url: &Url) -> bool {
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
    fn parse_locations() {
        assert_eq!(Location::parse("a/b.json").unwrap(), Location::Local("a/b.json".into()));
        assert_eq!(Location::parse("file:///x/y.json").unwrap(), Location::Local("/x/y.json".into()));
        assert!(matches!(Location::parse("s3://bucket/k.json").unwrap(), Location::Remote(_)));
        assert!(Location::parse("").is_err());
        assert!(Location::parse("http://[bad").is_err());
    }

    #[test]
    fn relative_urls_resolve_against_the_reference_file() {
        let local = Location::parse("/data/case/refs.json").unwrap();
        assert_eq!(local.join("data.nc").unwrap(), Location::Local("/data/case/data.nc".into()));
        assert_eq!(local.join("./sub/c.bin").unwrap(), Location::Local("/data/case/./sub/c.bin".into()));
        assert_eq!(local.join("/abs/x.nc").unwrap(), Location::Local("/abs/x.nc".into()));
        let remote = Location::parse("https://host/dir/refs.json").unwrap();
        assert_eq!(remote.join("data.nc").unwrap().to_string(), "https://host/dir/data.nc");
        assert_eq!(remote.join("../x.nc").unwrap().to_string(), "https://host/x.nc");
        assert_eq!(remote.join("s3://b/k").unwrap().to_string(), "s3://b/k");
        let bucket = Location::parse("s3://bucket/refs/r.json").unwrap();
        assert_eq!(bucket.join("part 1.nc").unwrap().to_string(), "s3://bucket/refs/part%201.nc");
    }

    #[test]
    fn children_of_folders() {
        let local = Location::parse("/data/refs.parq/").unwrap().without_trailing_slash();
        assert_eq!(local.child("a/refs.0.parq").unwrap(), Location::Local("/data/refs.parq/a/refs.0.parq".into()));
        assert_eq!(local.join("data.nc").unwrap(), Location::Local("/data/data.nc".into()));
        let remote = Location::parse("https://host/d/refs.parq/").unwrap().without_trailing_slash();
        assert_eq!(remote.to_string(), "https://host/d/refs.parq");
        assert_eq!(remote.child(".zmetadata").unwrap().to_string(), "https://host/d/refs.parq/.zmetadata");
        assert_eq!(remote.join("data.nc").unwrap().to_string(), "https://host/d/data.nc");
    }

    #[test]
    fn registered_prefixes_win_and_remote_cannot_read_local() {
        let memory: Arc<dyn ObjectStore> = Arc::new(object_store::memory::InMemory::new());
        let resolver = Resolver::new(vec![(Url::parse("s3://bucket/sub/").unwrap(), memory.clone())], vec![], false);
        let referrer = Location::parse("s3://bucket/refs.json").unwrap();
        let target = Location::parse("s3://bucket/sub/a/b.nc").unwrap();
        let Source::Object { store, path } = resolver.source(&target, &referrer).unwrap() else { panic!() };
        assert!(Arc::ptr_eq(&store, &memory));
        assert_eq!(path.as_ref(), "a/b.nc");
        let local = Location::parse("/etc/passwd").unwrap();
        let err = resolver.source(&local, &referrer).unwrap_err();
        assert!(err.contains("local"), "{err}");
        assert!(matches!(resolver.source(&local, &local).unwrap(), Source::Local(_)));
    }

    #[test]
    fn memory_urls_get_a_store() {
        let resolver = Resolver::new(vec![], vec![], false);
        let target = Location::parse("memory:///x/y").unwrap();
        let Source::Object { path, .. } = resolver.source(&target, &target).unwrap() else { panic!() };
        assert_eq!(path.as_ref(), "x/y");
    }
}
