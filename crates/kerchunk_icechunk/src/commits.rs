//! Where an export's references are committed: in one commit on the
//! branch, or in parts on a working branch of their own that the branch is
//! moved to at the end, so that the session never holds more than a part.

use std::sync::Arc;

use icechunk::format::SnapshotId;
use icechunk::session::Session;
use icechunk::{Repository, Store};
use tokio::sync::RwLock;

use crate::error::{ExportError, RepositoryError};

/// The parts of an export committed one at a time.
struct Parts {
    /// The working branch the parts are committed on.
    working: String,
    /// The branch's tip when the export started: it is moved from there only.
    base: SnapshotId,
    /// Chunks a part.
    every: u64,
    /// Chunks written since the last part.
    written: u64,
    /// Parts committed.
    committed: u32,
}

/// The session an export writes through, and its commits.
pub(crate) struct Commits<'a> {
    repository: &'a Repository,
    location: &'a str,
    branch: String,
    /// The commit message (the parts' with their numbers after it).
    message: &'a str,
    session: Arc<RwLock<Session>>,
    store: Store,
    parts: Option<Parts>,
}

impl<'a> Commits<'a> {
    /// A session on `branch` of `repository` (at `location`, for errors),
    /// committed with `message` in one commit, or in parts of `every` chunks.
    pub(crate) async fn start(
        repository: &'a Repository,
        location: &'a str,
        branch: &str,
        message: &'a str,
        every: Option<u64>,
    ) -> Result<Self, ExportError> {
        let (writing, parts) = match every {
            None => (branch.to_owned(), None),
            Some(every) => {
                let base = repository
                    .lookup_branch(branch)
                    .await
                    .map_err(RepositoryError::at(location, format!("finding branch {branch}")))?;
                let working = working_branch(branch);
                repository
                    .create_branch(&working, &base)
                    .await
                    .map_err(RepositoryError::at(location, format!("making the working branch {working}")))?;
                let parts = Parts { working: working.clone(), base, every: every.max(1), written: 0, committed: 0 };
                (working, Some(parts))
            }
        };
        let session = match repository.writable_session(&writing).await {
            Ok(session) => session,
            Err(e) => {
                if parts.is_some() {
                    drop(repository.delete_branch(&writing).await);
                }
                return Err(RepositoryError::at(location, format!("a session on branch {writing}"))(e).into());
            }
        };
        let session = Arc::new(RwLock::new(session));
        let store = Store::from_session(Arc::clone(&session)).await;
        Ok(Self { repository, location, branch: branch.to_owned(), message, session, store, parts })
    }

    /// The store over the session.
    pub(crate) fn store(&self) -> &Store {
        &self.store
    }

    /// Count `chunks` just written, committing a part (with the message and
    /// its number) when they make one.
    pub(crate) async fn written(&mut self, chunks: u64) -> Result<(), ExportError> {
        let Some(parts) = &mut self.parts else { return Ok(()) };
        parts.written += chunks;
        if parts.written < parts.every {
            return Ok(());
        }
        parts.committed += 1;
        parts.written = 0;
        let (number, working) = (parts.committed, parts.working.clone());
        let mut session = self.session.write().await;
        session
            .commit(format!("{} (part {number})", self.message))
            .execute()
            .await
            .map_err(RepositoryError::at(self.location, format!("committing part {number} on {working}")))?;
        // A committed session writes no more: the next part is a new one, which the store reads through the lock.
        *session = self
            .repository
            .writable_session(&working)
            .await
            .map_err(RepositoryError::at(self.location, format!("a session on branch {working}")))?;
        Ok(())
    }

    /// Commit what is left with the message; in parts, move the branch to the
    /// last part (if no one else moved it meanwhile) and delete the working
    /// branch. The snapshot the branch now points to.
    pub(crate) async fn finish(self) -> Result<SnapshotId, ExportError> {
        let mut session = self.session.write().await;
        let Some(parts) = &self.parts else {
            return Ok(session
                .commit(self.message)
                .execute()
                .await
                .map_err(RepositoryError::at(self.location, "the commit"))?);
        };
        // A commit even if the last part ended with the last chunk: the branch's commit is the one with `message`.
        let snapshot = session
            .commit(self.message)
            .allow_empty(true)
            .execute()
            .await
            .map_err(RepositoryError::at(self.location, format!("the last commit on {}", parts.working)))?;
        self.repository.reset_branch(&self.branch, &snapshot, Some(&parts.base)).await.map_err(RepositoryError::at(
            self.location,
            format!(
                "moving branch {} to the export's last commit ({snapshot}; it was kept on {}): if the branch moved \
             since the export started, the export is not on it",
                self.branch, parts.working
            ),
        ))?;
        self.repository
            .delete_branch(&parts.working)
            .await
            .map_err(RepositoryError::at(self.location, format!("deleting the working branch {}", parts.working)))?;
        Ok(snapshot)
    }

    /// Give up: delete the working branch, if any (its commits are left for
    /// icechunk's garbage collection).
    pub(crate) async fn abandon(self) {
        if let Some(parts) = &self.parts {
            drop(self.repository.delete_branch(&parts.working).await);
        }
    }
}

/// A branch name no one else uses: the branch's, the process's and the time's.
fn working_branch(branch: &str) -> String {
    let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos());
    format!("{branch}-zarrs-kerchunk-export-{}-{nanos}", std::process::id())
}

#[cfg(test)]
mod tests {
    use bytes::Bytes;

    use super::*;

    const GROUP: &[u8] = br#"{"zarr_format": 3, "node_type": "group"}"#;

    /// A commit on `branch` by another writer.
    async fn commit_elsewhere(repository: &Repository, branch: &str, message: &str) -> SnapshotId {
        let session = Arc::new(RwLock::new(repository.writable_session(branch).await.unwrap()));
        let store = Store::from_session(Arc::clone(&session)).await;
        store.set("zarr.json", Bytes::from_static(GROUP)).await.unwrap();
        session.write().await.commit(message).execute().await.unwrap()
    }

    /// An export in parts whose branch another writer moved meanwhile leaves the branch where the
    /// other writer put it, says so, and keeps its working branch with the parts.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_branch_that_moved_meanwhile_is_left_where_it_is() {
        let storage = icechunk::storage::new_in_memory_storage().await.unwrap();
        let repository = Repository::create(storage).execute().await.unwrap();
        let mut commits = Commits::start(&repository, "memory", "main", "ours", Some(1)).await.unwrap();
        commits.store().set("zarr.json", Bytes::from_static(GROUP)).await.unwrap();
        commits.written(1).await.unwrap();
        let theirs = commit_elsewhere(&repository, "main", "theirs").await;
        let error = commits.finish().await.unwrap_err().to_string();
        assert!(error.contains("moving branch main") && error.contains("the export is not on it"), "{error}");
        assert_eq!(repository.lookup_branch("main").await.unwrap(), theirs);
        let branches = repository.list_branches().await.unwrap();
        assert_eq!(branches.len(), 2, "{branches:?}");
        assert!(branches.iter().any(|name| name.starts_with("main-zarrs-kerchunk-export-")), "{branches:?}");
    }

    /// Abandoned, an export in parts leaves no working branch, and its branch as it was.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn an_abandoned_export_leaves_no_branch() {
        let storage = icechunk::storage::new_in_memory_storage().await.unwrap();
        let repository = Repository::create(storage).execute().await.unwrap();
        let before = repository.lookup_branch("main").await.unwrap();
        let mut commits = Commits::start(&repository, "memory", "main", "ours", Some(1)).await.unwrap();
        commits.store().set("zarr.json", Bytes::from_static(GROUP)).await.unwrap();
        commits.written(1).await.unwrap();
        commits.abandon().await;
        assert_eq!(repository.lookup_branch("main").await.unwrap(), before);
        assert_eq!(repository.list_branches().await.unwrap().into_iter().collect::<Vec<_>>(), ["main"]);
    }
}
