//! Reading byte ranges from a [`Source`], sync and async.
//!
//! Every read is checked: a target that answers with fewer (or more) bytes
//! than requested is an error, never a short or zero-filled value. Local
//! files are read with positioned reads on the calling thread in the sync
//! path; in the async path they are read on tokio's blocking pool when a
//! tokio runtime is present.

use std::fs::File;
use std::io;
use std::ops::Range;
use std::os::unix::fs::FileExt;
use std::path::Path;

use bytes::Bytes;
use object_store::{GetOptions, GetRange, ObjectStore, ObjectStoreExt};

use crate::error::error_chain;
use crate::resolve::Source;

/// What to read from a target: the whole of it, or part of it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Request {
    Whole,
    Part(GetRange),
}

impl Request {
    /// The range to ask an object store for (`None`: the whole object).
    fn get_range(&self) -> Option<GetRange> {
        match self {
            Self::Whole => None,
            Self::Part(range) => Some(range.clone()),
        }
    }
}

/// Read `requests` from `source` on the calling thread. Remote sources must
/// use [`read_async`]; this handles local files only.
pub(crate) fn read_local(path: &Path, requests: &[Request]) -> Result<Vec<Bytes>, String> {
    let file = File::open(path).map_err(|e| io_message(&e))?;
    let len = std::cell::OnceCell::new();
    let file_len = || -> Result<u64, String> {
        len.get_or_init(|| file.metadata().map(|m| m.len()).map_err(|e| io_message(&e))).clone()
    };
    requests
        .iter()
        .map(|request| {
            let range = match request {
                Request::Whole => 0..file_len()?,
                Request::Part(GetRange::Bounded(range)) => range.clone(),
                Request::Part(GetRange::Offset(start)) => *start..file_len()?.max(*start),
                Request::Part(GetRange::Suffix(n)) => {
                    let len = file_len()?;
                    len.checked_sub(*n).ok_or_else(|| format!("the last {n} bytes were asked of a {len}-byte file"))?
                        ..len
                }
            };
            let mut buf = vec![0; usize::try_from(range.end - range.start).map_err(|e| error_chain(&e))?];
            file.read_exact_at(&mut buf, range.start).map_err(|e| match e.kind() {
                io::ErrorKind::UnexpectedEof => short_read(&range, file_len().ok()),
                _ => io_message(&e),
            })?;
            Ok(Bytes::from(buf))
        })
        .collect()
}

/// Read `requests` from `source`, asynchronously.
pub(crate) async fn read_async(source: &Source, requests: Vec<Request>) -> Result<Vec<Bytes>, String> {
    match source {
        Source::Local(path) => {
            let path = path.clone();
            off_the_runtime(move || read_local(&path, &requests)).await
        }
        Source::Object { store, path } => read_object(store.as_ref(), path, &requests).await,
    }
}

/// The whole of `source`, or `None` if it does not exist.
pub(crate) async fn read_if_exists(source: &Source) -> Result<Option<Bytes>, String> {
    match source {
        Source::Local(path) => {
            let path = path.clone();
            off_the_runtime(move || match std::fs::read(&path) {
                Ok(bytes) => Ok(Some(Bytes::from(bytes))),
                Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
                Err(e) => Err(io_message(&e)),
            })
            .await
        }
        Source::Object { store, path } => match store.get(path).await {
            Ok(got) => got.bytes().await.map(Some).map_err(|e| error_chain(&e)),
            Err(object_store::Error::NotFound { .. }) => Ok(None),
            Err(e) => Err(error_chain(&e)),
        },
    }
}

/// Run blocking file I/O on tokio's blocking pool when a runtime is present.
async fn off_the_runtime<T: Send + 'static>(
    read: impl FnOnce() -> Result<T, String> + Send + 'static,
) -> Result<T, String> {
    match tokio::runtime::Handle::try_current() {
        Ok(handle) => handle.spawn_blocking(read).await.map_err(|e| format!("local read task failed: {e}"))?,
        Err(_) => read(),
    }
}

async fn read_object(
    store: &dyn ObjectStore,
    path: &object_store::path::Path,
    requests: &[Request],
) -> Result<Vec<Bytes>, String> {
    // Bounded ranges go in one `get_ranges` call, which coalesces neighbours and fetches in parallel.
    let bounded: Vec<Range<u64>> = requests
        .iter()
        .filter_map(|r| match r {
            Request::Part(GetRange::Bounded(range)) if !range.is_empty() => Some(range.clone()),
            _ => None,
        })
        .collect();
    let mut fetched = match bounded.len() {
        0 => Vec::new(),
        1 => vec![store.get_range(path, bounded[0].clone()).await.map_err(|e| error_chain(&e))?],
        _ => store.get_ranges(path, &bounded).await.map_err(|e| error_chain(&e))?,
    }
    .into_iter();
    let mut out = Vec::with_capacity(requests.len());
    for request in requests {
        let bytes = match request {
            Request::Part(GetRange::Bounded(range)) if range.is_empty() => Bytes::new(),
            Request::Part(GetRange::Bounded(range)) => {
                let bytes = fetched.next().ok_or("the store returned fewer ranges than requested")?;
                if bytes.len() as u64 != range.end - range.start {
                    return Err(short_read_of(range, bytes.len()));
                }
                bytes
            }
            // The whole object, or an open-ended range of it (from an offset, or a suffix).
            Request::Whole | Request::Part(_) => {
                let options = GetOptions { range: request.get_range(), ..GetOptions::default() };
                store
                    .get_opts(path, options)
                    .await
                    .map_err(|e| error_chain(&e))?
                    .bytes()
                    .await
                    .map_err(|e| error_chain(&e))?
            }
        };
        out.push(bytes);
    }
    Ok(out)
}

/// The size of a target file.
pub(crate) fn size_local(path: &Path) -> Result<u64, String> {
    std::fs::metadata(path).map(|m| m.len()).map_err(|e| io_message(&e))
}

/// The size of a target, asynchronously.
pub(crate) async fn size_async(source: &Source) -> Result<u64, String> {
    match source {
        Source::Local(path) => tokio::fs::metadata(path).await.map(|m| m.len()).map_err(|e| io_message(&e)),
        Source::Object { store, path } => store.head(path).await.map(|meta| meta.size).map_err(|e| error_chain(&e)),
    }
}

fn io_message(error: &io::Error) -> String {
    match error.kind() {
        io::ErrorKind::NotFound => format!("file not found ({error})"),
        _ => error.to_string(),
    }
}

fn short_read(range: &Range<u64>, file_len: Option<u64>) -> String {
    let len = file_len.map_or_else(String::new, |n| format!(" of {n} bytes"));
    format!(
        "bytes {}..{} lie past the end of the target file{len}: the reference does not match the file",
        range.start, range.end
    )
}

fn short_read_of(range: &Range<u64>, got: usize) -> String {
    format!(
        "asked for bytes {}..{} ({} bytes) but the target returned {got} bytes: the reference does not match the target",
        range.start,
        range.end,
        range.end - range.start
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn local_reads_are_exact() {
        let dir = std::env::temp_dir().join(format!("zk-fetch-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("f.bin");
        std::fs::write(&path, b"0123456789").unwrap();
        let got = read_local(
            &path,
            &[
                Request::Whole,
                Request::Part(GetRange::Bounded(2..5)),
                Request::Part(GetRange::Offset(8)),
                Request::Part(GetRange::Suffix(3)),
                Request::Part(GetRange::Bounded(4..4)),
            ],
        )
        .unwrap();
        assert_eq!(got, [&b"0123456789"[..], b"234", b"89", b"789", b""]);
        let err = read_local(&path, &[Request::Part(GetRange::Bounded(8..12))]).unwrap_err();
        assert!(err.contains("past the end") && err.contains("10 bytes"), "{err}");
        let err = read_local(&dir.join("missing"), &[Request::Whole]).unwrap_err();
        assert!(err.contains("not found"), "{err}");
        std::fs::remove_dir_all(dir).unwrap();
    }
}
