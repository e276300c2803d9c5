//! Reading byte ranges from a [`Source`], sync and async, one request list
//! at a time or as a batch over many files ([`read_batch`]) with neighbouring
//! ranges merged ([`coalesce`]) and a bounded number of reads in flight.
//!
//! Every read is checked: a target that answers with fewer (or more) bytes
//! than requested is an error, never a short or zero-filled value. Local
//! files are read with positioned reads on the calling thread in the sync
//! path; in the async path they are read on tokio's blocking pool when a
//! tokio runtime is present.

mod batch;
mod coalesce;
mod local;
mod object;

use std::io;
use std::path::PathBuf;

pub(crate) use batch::{BatchOptions, FileRequests, read_batch};
use bytes::Bytes;
pub(crate) use coalesce::Coalescing;
use local::observe_local;
pub(crate) use local::{read_local, size_local};
use object::Object;
use object_store::GetRange;

use crate::error::ReadError;
use crate::resolve::{Pin, Source};

/// What to read from a target: the whole of it, or part of it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Request {
    Whole,
    Part(GetRange),
    /// No bytes: a check that the target is at least this long, so that a
    /// partial read of a reference that lies past the target's end fails as
    /// a whole read of it does. Answered with empty bytes.
    Fits(u64),
}

impl Request {
    /// The range to ask an object store for (`None`: the whole object).
    fn get_range(&self) -> Option<GetRange> {
        match self {
            Self::Whole | Self::Fits(_) => None,
            Self::Part(range) => Some(range.clone()),
        }
    }
}

/// Read `requests` from `source`, asynchronously.
pub(crate) async fn read_async(source: &Source, requests: Vec<Request>) -> Result<Vec<Bytes>, ReadError> {
    match source {
        Source::Local { path, pin } => {
            let (path, pin) = (path.clone(), pin.clone());
            off_the_runtime(move || read_local(&path, pin.as_deref(), &requests)).await
        }
        Source::Object { store, path, policy, pin } => {
            Object { store, path, policy, pin: pin.as_deref() }.read(&requests).await
        }
    }
}

/// The whole of `source`, or `None` if it does not exist; a file of more
/// than `limit` bytes is an error, found before its bytes are held: from the
/// file's or the object's size, and while the body streams in (a server may
/// not say, or lie).
pub(crate) async fn read_if_exists(source: &Source, limit: u64) -> Result<Option<Bytes>, ReadError> {
    match source {
        Source::Local { path, .. } => {
            let read = with_local_file(path.clone(), move |file| {
                if file.metadata()?.len() > limit {
                    return Ok(None);
                }
                let mut bytes = Vec::new();
                io::Read::read_to_end(&mut io::Read::take(file, limit.saturating_add(1)), &mut bytes)?;
                Ok(Some(Bytes::from(bytes)).filter(|bytes| bytes.len() as u64 <= limit))
            });
            match read.await?.transpose().map_err(|source| ReadError::Io { path: path.clone(), source })? {
                None => Ok(None),
                Some(None) => Err(ReadError::TooLarge { limit }),
                Some(Some(bytes)) => Ok(Some(bytes)),
            }
        }
        Source::Object { store, path, policy, pin } => {
            Object { store, path, policy, pin: pin.as_deref() }.read_if_exists(limit).await
        }
    }
}

/// The local file at `path`, opened (on tokio's blocking pool when a runtime
/// is present); `None` if there is no such file.
pub(crate) async fn open_local(path: PathBuf) -> Result<Option<std::fs::File>, ReadError> {
    with_local_file(path, |file| file).await
}

/// `read` applied to the local file at `path`, opened (on tokio's blocking
/// pool when a runtime is present); `None` if there is no such file.
pub(crate) async fn with_local_file<T: Send + 'static>(
    path: PathBuf,
    read: impl FnOnce(std::fs::File) -> T + Send + 'static,
) -> Result<Option<T>, ReadError> {
    off_the_runtime(move || match std::fs::File::open(&path) {
        Ok(file) => Ok(Some(read(file))),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(source) => Err(ReadError::Io { path, source }),
    })
    .await
}

/// Run blocking file I/O on tokio's blocking pool when a runtime is present.
async fn off_the_runtime<T: Send + 'static>(
    read: impl FnOnce() -> Result<T, ReadError> + Send + 'static,
) -> Result<T, ReadError> {
    off_the_executor(read).await.map_err(ReadError::Task)?
}

/// Run `work` (blocking I/O, or CPU work such as parsing a whole document or
/// decoding a record file) on tokio's blocking pool when a runtime is present,
/// so that it never holds up the executor's other tasks; in place otherwise.
///
/// # Errors
/// The [`JoinError`](tokio::task::JoinError) of a task that panicked or was cancelled.
pub(crate) async fn off_the_executor<T: Send + 'static>(
    work: impl FnOnce() -> T + Send + 'static,
) -> Result<T, tokio::task::JoinError> {
    match tokio::runtime::Handle::try_current() {
        Ok(handle) => handle.spawn_blocking(work).await,
        Err(_) => Ok(work()),
    }
}

/// What `source` is now (its size, and the ETag and last-modified time a
/// store gives), with one metadata request and no check against any pin.
pub(crate) async fn observe(source: &Source) -> Result<Pin, ReadError> {
    match source {
        Source::Local { path, .. } => {
            let path = path.clone();
            off_the_runtime(move || observe_local(&path)).await
        }
        Source::Object { store, path, policy, .. } => Object { store, path, policy, pin: None }.observe().await,
    }
}

/// The size of a target, asynchronously.
pub(crate) async fn size_async(source: &Source) -> Result<u64, ReadError> {
    match source {
        Source::Local { path, pin } => {
            let (path, pin) = (path.clone(), pin.clone());
            off_the_runtime(move || size_local(&path, pin.as_deref())).await
        }
        Source::Object { store, path, policy, pin } => Object { store, path, policy, pin: pin.as_deref() }.size().await,
    }
}
