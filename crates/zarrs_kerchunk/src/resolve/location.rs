//! Locations: a local path or a URL, as a user or a reference writes it.
//! Relative reference URLs resolve against the folder (or URL prefix) of the
//! reference file, never the process working directory.

use std::path::{Component, Path, PathBuf};

use url::Url;

use crate::error::ResolveError;

/// A local path or a URL.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Location {
    Local(PathBuf),
    Remote(Url),
}

impl Location {
    /// Read a location as a user or a reference writes it: `file://`,
    /// `s3://` and other URLs, or a plain local path.
    pub(crate) fn parse(text: &str) -> Result<Self, ResolveError> {
        let invalid = |reason: String| ResolveError::InvalidLocation { location: text.to_owned(), reason };
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
    pub(crate) fn join(&self, reference: &str) -> Result<Self, ResolveError> {
        if has_scheme(reference) {
            return Self::parse(reference);
        }
        match self {
            Self::Local(file) => {
                let folder = file.parent().unwrap_or(Path::new(""));
                Ok(Self::Local(folder.join(reference)))
            }
            Self::Remote(url) => url.join(reference).map(Self::Remote).map_err(|e| ResolveError::InvalidLocation {
                location: reference.to_owned(),
                reason: format!("cannot resolve it against {url}: {e}"),
            }),
        }
    }

    /// The location `relative` inside the folder (or URL prefix) `self`.
    #[cfg(feature = "parquet")]
    pub(crate) fn child(&self, relative: &str) -> Result<Self, ResolveError> {
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
    #[cfg(feature = "parquet")]
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

    /// The same location with a local path made absolute and its `.` and
    /// `..` components resolved by their names, so that a path is compared
    /// with a folder as it will be opened: `/data/../etc` is `/etc`, and so
    /// is `file:///data/a%2F..%2F..%2Fetc`, whose `%2F` decode into `/`.
    /// Symbolic links are not followed (a link inside a folder is the
    /// folder owner's choice). URLs are already normalised by `url`.
    pub(crate) fn normalized(self) -> Result<Self, ResolveError> {
        let Self::Local(path) = self else { return Ok(self) };
        let absolute = std::path::absolute(&path).map_err(|_| ResolveError::NotAUrl(path.display().to_string()))?;
        let mut normal = PathBuf::new();
        for component in absolute.components() {
            match component {
                Component::ParentDir => {
                    normal.pop();
                }
                Component::CurDir => {}
                other => normal.push(other),
            }
        }
        Ok(Self::Local(normal))
    }

    /// The location as a URL (`file://` for local paths, made absolute).
    pub(crate) fn to_url(&self) -> Result<Url, ResolveError> {
        match self {
            Self::Remote(url) => Ok(url.clone()),
            Self::Local(path) => std::path::absolute(path)
                .ok()
                .and_then(|p| Url::from_file_path(p).ok())
                .ok_or_else(|| ResolveError::NotAUrl(path.display().to_string())),
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
    fn local_paths_are_normalised_by_name() {
        let normal = |text: &str| Location::parse(text).unwrap().normalized().unwrap().to_string();
        assert_eq!(normal("/data/../etc/passwd"), "/etc/passwd");
        assert_eq!(normal("file:///data/a%2F..%2F..%2Fetc/passwd"), "/etc/passwd");
        assert_eq!(normal("/data/./x/../y.nc"), "/data/y.nc");
        assert_eq!(normal("/../../x"), "/x");
        let relative = Location::parse("/data/refs.json").unwrap().join("../etc/passwd").unwrap();
        assert_eq!(relative.normalized().unwrap().to_string(), "/etc/passwd");
        assert_eq!(normal("s3://b/a/../k"), "s3://b/k");
    }

    #[test]
    #[cfg(feature = "parquet")]
    fn children_of_folders() {
        let local = Location::parse("/data/refs.parq/").unwrap().without_trailing_slash();
        assert_eq!(local.child("a/refs.0.parq").unwrap(), Location::Local("/data/refs.parq/a/refs.0.parq".into()));
        assert_eq!(local.join("data.nc").unwrap(), Location::Local("/data/data.nc".into()));
        let remote = Location::parse("https://host/d/refs.parq/").unwrap().without_trailing_slash();
        assert_eq!(remote.to_string(), "https://host/d/refs.parq");
        assert_eq!(remote.child(".zmetadata").unwrap().to_string(), "https://host/d/refs.parq/.zmetadata");
        assert_eq!(remote.join("data.nc").unwrap().to_string(), "https://host/d/data.nc");
    }
}
