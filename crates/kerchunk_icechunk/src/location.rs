//! Where a repository is, as the command line and Python write it:
//! `icechunk://PATH` for a local folder, `icechunk+s3://bucket/prefix` in a
//! bucket, `icechunk+gs://bucket/prefix` in a Google Cloud Storage bucket,
//! `icechunk+az://container/prefix` in an Azure container; `@REF` after any names a branch to
//! write to, or a branch, tag or snapshot to read (`main` by default).

use std::sync::Arc;

use icechunk::Repository;

use crate::error::{ExportError, ImportError, RepositoryError};

/// A repository's place, the branch to use, and how to reach its storage.
#[derive(Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct IcechunkLocation {
    /// Where the repository's storage is: a local folder, or a URL
    /// (`s3://bucket/prefix`, `gs://bucket/prefix`, `az://container/prefix`).
    pub storage: String,
    /// The branch to write to, or the branch, tag or snapshot to read
    /// (`main` unless `@REF` says otherwise).
    pub branch: String,
    /// The object store's options, in `object_store`'s words (`aws_region`,
    /// `google_service_account`, `azure_storage_account_name`, ...).
    options: Vec<(String, String)>,
}

/// The options' values are left out: they hold keys.
impl std::fmt::Debug for IcechunkLocation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let keys: Vec<&str> = self.options.iter().map(|(key, _)| key.as_str()).collect();
        f.debug_struct("IcechunkLocation")
            .field("storage", &self.storage)
            .field("branch", &self.branch)
            .field("options", &keys)
            .finish()
    }
}

impl IcechunkLocation {
    /// `text` as a repository's location, if it is one (`icechunk://PATH[@REF]`,
    /// `icechunk+s3://bucket/prefix[@REF]`); `None` for any other text, such as a
    /// reference file's path.
    #[must_use]
    pub fn parse(text: &str) -> Option<Self> {
        let (storage, branch) = match text.rsplit_once('@') {
            Some((storage, branch)) if !branch.is_empty() && !branch.contains('/') => (storage, branch),
            _ => (text, "main"),
        };
        let storage = if let Some(path) = storage.strip_prefix("icechunk://") {
            path.to_owned()
        } else {
            let rest = storage.strip_prefix("icechunk+")?;
            if !rest.contains("://") {
                return None;
            }
            rest.to_owned()
        };
        Some(Self { storage, branch: branch.to_owned(), options: Vec::new() })
    }

    /// The same location, its object store reached with `options`
    /// (`object_store`'s keys: `aws_region`, `aws_endpoint`,
    /// `aws_access_key_id`, ...; the command line's `--option`).
    #[must_use]
    pub fn with_options<I: IntoIterator<Item = (K, V)>, K: Into<String>, V: Into<String>>(
        mut self,
        options: I,
    ) -> Self {
        self.options.extend(options.into_iter().map(|(k, v)| (k.into(), v.into())));
        self
    }

    /// Whether the repository is in a local folder.
    #[must_use]
    pub fn is_local(&self) -> bool {
        !self.storage.contains("://")
    }

    /// The repository, which must exist.
    ///
    /// # Errors
    /// [`ImportError::NotFound`] if there is none; [`ImportError::Repository`]
    /// if its storage cannot be reached or read.
    pub async fn open(&self) -> Result<Repository, ImportError> {
        let fail = |(what, source): Failure| ImportError::Repository(RepositoryError::at(&self.storage, what)(source));
        let not_found = || ImportError::NotFound { location: self.storage.clone() };
        if self.is_local() && !std::path::Path::new(&self.storage).is_dir() {
            return Err(not_found());
        }
        let storage = self.storage(false).await.map_err(fail)?;
        let exists = Repository::exists(Arc::clone(&storage), None).await;
        if !exists.map_err(|e| fail(("looking for it", Box::new(e))))? {
            return Err(not_found());
        }
        Repository::open(storage).execute().await.map_err(|e| fail(("opening it", Box::new(e))))
    }

    /// The repository's storage as a URL (`file:///data/repo/`,
    /// `s3://bucket/prefix/`), which references to the chunks it stores point into.
    ///
    /// # Errors
    /// [`ImportError::Repository`] naming why a local folder cannot be found.
    pub fn storage_url(&self) -> Result<String, ImportError> {
        let failed = |reason: Box<dyn std::error::Error + Send + Sync>| {
            ImportError::Repository(RepositoryError::at(&self.storage, "finding its folder")(reason))
        };
        if !self.is_local() {
            return Ok(format!("{}/", self.storage.trim_end_matches('/')));
        }
        let folder = std::fs::canonicalize(&self.storage).map_err(|e| failed(Box::new(e)))?;
        url::Url::from_directory_path(&folder)
            .map(|url| url.to_string())
            .map_err(|()| failed(format!("{} is not an absolute folder", folder.display()).into()))
    }

    /// The repository, opened, or created where there is none.
    ///
    /// # Errors
    /// [`ExportError::Repository`] if its storage cannot be reached, or is
    /// in a kind of object store this build does not reach.
    pub async fn open_or_create(&self) -> Result<Repository, ExportError> {
        let fail = |(what, source): Failure| ExportError::Repository(RepositoryError::at(&self.storage, what)(source));
        let storage = self.storage(true).await.map_err(fail)?;
        let repository = Repository::open_or_create(storage).execute().await;
        repository.map_err(|e| fail(("opening or creating it", Box::new(e))))
    }

    /// icechunk's storage of the repository: a local folder (made if
    /// `create`), an S3 or GCS bucket's prefix, or an Azure container's.
    async fn storage(&self, create: bool) -> Result<Arc<dyn icechunk::Storage + Send + Sync>, Failure> {
        if self.is_local() {
            if create {
                std::fs::create_dir_all(&self.storage).map_err(|e| ("making its folder", e.into()))?;
            }
            let path = std::fs::canonicalize(&self.storage).map_err(|e| ("finding its folder", e.into()))?;
            return icechunk::new_local_filesystem_storage(&path).await.map_err(|e| ("opening its storage", e.into()));
        }
        #[cfg(feature = "aws")]
        if self.storage.starts_with("s3://") {
            return crate::s3::storage(&self.storage, &self.options).await.map_err(|e| ("opening its storage", e));
        }
        #[cfg(feature = "gcp")]
        if self.storage.starts_with("gs://") || self.storage.starts_with("gcs://") {
            return crate::gcs::storage(&self.storage, &self.options).map_err(|e| ("opening its storage", e));
        }
        #[cfg(feature = "azure")]
        if self.storage.starts_with("az://") || self.storage.starts_with("azure://") {
            return crate::azure::storage(&self.storage, &self.options).await.map_err(|e| ("opening its storage", e));
        }
        Err((
            "opening its storage",
            "repositories in object storage are reached in S3 buckets (icechunk+s3://, feature aws), GCS buckets \
             (icechunk+gs://, feature gcp) and Azure containers (icechunk+az://, feature azure) only"
                .into(),
        ))
    }
}

/// What was being done, and why it failed.
type Failure = (&'static str, Box<dyn std::error::Error + Send + Sync>);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn locations_parse_as_the_issue_writes_them() {
        let local = IcechunkLocation::parse("icechunk://repo/here").unwrap();
        assert_eq!((local.storage.as_str(), local.branch.as_str(), local.is_local()), ("repo/here", "main", true));
        let az = IcechunkLocation::parse("icechunk+az://container/a/b").unwrap();
        assert_eq!((az.storage.as_str(), az.branch.as_str()), ("az://container/a/b", "main"));
        let s3 = IcechunkLocation::parse("icechunk+s3://bucket/prefix@dev").unwrap();
        assert_eq!((s3.storage.as_str(), s3.branch.as_str(), s3.is_local()), ("s3://bucket/prefix", "dev", false));
        assert!(IcechunkLocation::parse("refs.json").is_none());
        assert!(IcechunkLocation::parse("s3://bucket/refs.json").is_none());
        assert!(IcechunkLocation::parse("icechunk+bucket").is_none());
    }
}
