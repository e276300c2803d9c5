//! Where a repository is, as the command line and Python write it:
//! `icechunk://PATH` for a local folder, `icechunk+s3://bucket/prefix` in a
//! bucket; `@REF` after either names a branch to write to, or a branch, tag
//! or snapshot to read (`main` by default).

use std::sync::Arc;

use icechunk::Repository;

use crate::error::{ExportError, ImportError, RepositoryError};

/// A repository's place and the branch to use.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct IcechunkLocation {
    /// Where the repository's storage is: a local folder, or a URL
    /// (`s3://bucket/prefix`).
    pub storage: String,
    /// The branch to write to, or the branch, tag or snapshot to read
    /// (`main` unless `@REF` says otherwise).
    pub branch: String,
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
        Some(Self { storage, branch: branch.to_owned() })
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
        let fail = |what: &str, source: Box<dyn std::error::Error + Send + Sync>| {
            ImportError::Repository(RepositoryError::at(&self.storage, what)(source))
        };
        let not_found = || ImportError::NotFound { location: self.storage.clone() };
        if self.is_local() && !std::path::Path::new(&self.storage).is_dir() {
            return Err(not_found());
        }
        let path = self.local_folder().map_err(|e| fail("finding its folder", e))?;
        let storage = icechunk::new_local_filesystem_storage(&path)
            .await
            .map_err(|e| fail("opening its storage", Box::new(e)))?;
        if !Repository::exists(Arc::clone(&storage), None).await.map_err(|e| fail("looking for it", Box::new(e)))? {
            return Err(not_found());
        }
        Repository::open(storage).execute().await.map_err(|e| fail("opening it", Box::new(e)))
    }

    /// The repository's storage as a URL (`file:///data/repo`), which
    /// references to the chunks it stores point into.
    ///
    /// # Errors
    /// [`ImportError::Repository`] naming why the folder cannot be found.
    pub fn storage_url(&self) -> Result<String, ImportError> {
        let failed = |reason: Box<dyn std::error::Error + Send + Sync>| {
            ImportError::Repository(RepositoryError::at(&self.storage, "finding its folder")(reason))
        };
        let folder = self.local_folder().map_err(failed)?;
        url::Url::from_directory_path(&folder)
            .map(|url| url.to_string())
            .map_err(|()| failed(format!("{} is not an absolute folder", folder.display()).into()))
    }

    /// The local folder, which must exist.
    fn local_folder(&self) -> Result<std::path::PathBuf, Box<dyn std::error::Error + Send + Sync>> {
        if !self.is_local() {
            return Err("repositories in object storage are not read yet: use icechunk://PATH".into());
        }
        Ok(std::fs::canonicalize(&self.storage)?)
    }

    /// The repository, opened, or created where there is none.
    ///
    /// # Errors
    /// [`ExportError::Repository`] if its storage cannot be reached, or is
    /// in a bucket of a kind this build does not write to.
    pub async fn open_or_create(&self) -> Result<Repository, ExportError> {
        let fail = |what: &str, source: Box<dyn std::error::Error + Send + Sync>| {
            ExportError::Repository(RepositoryError::at(&self.storage, what)(source))
        };
        if !self.is_local() {
            return Err(fail(
                "opening it",
                "repositories in object storage are not written yet: use icechunk://PATH".into(),
            ));
        }
        std::fs::create_dir_all(&self.storage).map_err(|e| fail("making its folder", Box::new(e)))?;
        let path = std::fs::canonicalize(&self.storage).map_err(|e| fail("finding its folder", Box::new(e)))?;
        let storage = icechunk::new_local_filesystem_storage(&path)
            .await
            .map_err(|e| fail("opening its storage", Box::new(e)))?;
        let repository = Repository::open_or_create(Arc::clone(&storage))
            .execute()
            .await
            .map_err(|e| fail("opening or creating it", Box::new(e)))?;
        Ok(repository)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn locations_parse_as_the_issue_writes_them() {
        let local = IcechunkLocation::parse("icechunk://repo/here").unwrap();
        assert_eq!((local.storage.as_str(), local.branch.as_str(), local.is_local()), ("repo/here", "main", true));
        let s3 = IcechunkLocation::parse("icechunk+s3://bucket/prefix@dev").unwrap();
        assert_eq!((s3.storage.as_str(), s3.branch.as_str(), s3.is_local()), ("s3://bucket/prefix", "dev", false));
        assert!(IcechunkLocation::parse("refs.json").is_none());
        assert!(IcechunkLocation::parse("s3://bucket/refs.json").is_none());
        assert!(IcechunkLocation::parse("icechunk+bucket").is_none());
    }
}
