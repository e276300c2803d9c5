//! Reading byte ranges from a [`Source`], sync and async, one request list
//! at a time or as a batch over many files ([`read_batch`]) with neighbouring
//! ranges merged ([`coalesce`]) and a bounded number of reads in flight.
//!
//! Every read is checked: a target that answers with fewer (or more) bytes
//! than requested is an error, never a short or zero-filled value. Local
//! files are read with positioned reads on the calling thread in the sync
//! path; in the async path they are read on tokio's blocking pool when a
//! tokio runtime is present.

mod coalesce;

use std::fs::File;
use std::io;
use std::ops::Range;
use std::os::unix::fs::FileExt;
use std::path::Path;

use bytes::Bytes;
pub(crate) use coalesce::Coalescing;
use coalesce::Placement;
use futures::StreamExt;
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
            let read = with_local_file(path.clone(), |mut file| {
                let mut bytes = Vec::new();
                io::Read::read_to_end(&mut file, &mut bytes).map(|_| Bytes::from(bytes))
            });
            read.await?.transpose().map_err(|e| io_message(&e))
        }
        Source::Object { store, path } => match store.get(path).await {
            Ok(got) => got.bytes().await.map(Some).map_err(|e| error_chain(&e)),
            Err(object_store::Error::NotFound { .. }) => Ok(None),
            Err(e) => Err(error_chain(&e)),
        },
    }
}

/// `read` applied to the local file at `path`, opened (on tokio's blocking
/// pool when a runtime is present); `None` if there is no such file.
pub(crate) async fn with_local_file<T: Send + 'static>(
    path: std::path::PathBuf,
    read: impl FnOnce(std::fs::File) -> T + Send + 'static,
) -> Result<Option<T>, String> {
    off_the_runtime(move || match std::fs::File::open(&path) {
        Ok(file) => Ok(Some(read(file))),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(io_message(&e)),
    })
    .await
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

/// How a batch is read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct BatchOptions {
    pub(crate) coalescing: Coalescing,
    /// Reads in flight at once, across all files.
    pub(crate) concurrency: usize,
}

impl Default for BatchOptions {
    fn default() -> Self {
        Self { coalescing: Coalescing::default(), concurrency: 16 }
    }
}

/// What a batch wants of one file: byte ranges, or the whole file (`None`).
pub(crate) type FileRequests = (Source, Vec<Option<Range<u64>>>);

/// Read many ranges of many files: per file, ranges are merged into blocks
/// (or served from one whole read if the whole file is wanted too); blocks
/// of all files are read with at most `options.concurrency` in flight.
/// Returns, per file, one value per wanted range, each of exactly its length.
pub(crate) async fn read_batch(files: Vec<FileRequests>, options: BatchOptions) -> Vec<Result<Vec<Bytes>, String>> {
    // Per file: the reads to make, and where each wanted range lies in them.
    let plans: Vec<(Vec<Request>, Vec<Placement>)> = files
        .iter()
        .map(|(_, wanted)| {
            if wanted.iter().any(Option::is_none) {
                let whole = wanted.iter().map(|range| (0, range.clone().map_or(0..usize::MAX, as_usize))).collect();
                (vec![Request::Whole], whole)
            } else {
                let ranges: Vec<Range<u64>> = wanted.iter().flatten().cloned().collect();
                let (blocks, placed) = coalesce::coalesce(&ranges, options.coalescing);
                (blocks.into_iter().map(|b| Request::Part(GetRange::Bounded(b))).collect(), placed)
            }
        })
        .collect();
    let reads: Vec<(usize, usize, Request)> = plans
        .iter()
        .enumerate()
        .flat_map(|(file, (requests, _))| {
            requests.iter().enumerate().map(move |(block, request)| (file, block, request.clone()))
        })
        .collect();
    let mut fetched: Vec<Vec<Option<Result<Bytes, String>>>> =
        plans.iter().map(|(requests, _)| vec![None; requests.len()]).collect();
    let mut stream = futures::stream::iter(reads)
        .map(|(file, block, request)| {
            let source = &files[file].0;
            async move {
                let bytes = read_async(source, vec![request]).await.map(|mut v| v.pop().unwrap_or_default());
                (file, block, bytes)
            }
        })
        .buffer_unordered(options.concurrency.max(1));
    while let Some((file, block, bytes)) = stream.next().await {
        fetched[file][block] = Some(bytes);
    }
    plans
        .into_iter()
        .zip(fetched)
        .map(|((_, placed), blocks)| {
            let blocks: Vec<Bytes> =
                blocks.into_iter().map(|b| b.unwrap_or_else(|| Err("not read".into()))).collect::<Result<_, _>>()?;
            placed
                .into_iter()
                .map(|(block, within)| {
                    let bytes = &blocks[block];
                    let within = if within.end == usize::MAX { 0..bytes.len() } else { within };
                    if within.end > bytes.len() {
                        return Err(short_read_of(&(within.start as u64..within.end as u64), bytes.len()));
                    }
                    Ok(bytes.slice(within))
                })
                .collect()
        })
        .collect()
}

#[allow(clippy::cast_possible_truncation)] // ranges of files read into memory
fn as_usize(range: Range<u64>) -> Range<usize> {
    range.start as usize..range.end as usize
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

    #[test]
    fn batches_merge_ranges_and_share_whole_reads() {
        let dir = std::env::temp_dir().join(format!("zk-batch-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let (a, b) = (dir.join("a.bin"), dir.join("b.bin"));
        std::fs::write(&a, b"0123456789").unwrap();
        std::fs::write(&b, b"abcdef").unwrap();
        let files = vec![
            (Source::Local(a.clone()), vec![Some(6..9), Some(0..2), Some(1..4)]),
            (Source::Local(b.clone()), vec![Some(2..4), None]),
            (Source::Local(a), vec![Some(8..12)]),
            (Source::Local(dir.join("missing")), vec![Some(0..1)]),
        ];
        let got = futures::executor::block_on(read_batch(files, BatchOptions::default()));
        assert_eq!(got[0].as_ref().unwrap(), &[&b"678"[..], b"01", b"123"]);
        assert_eq!(got[1].as_ref().unwrap(), &[&b"cd"[..], b"abcdef"]);
        assert!(got[2].as_ref().unwrap_err().contains("past the end"), "{:?}", got[2]);
        assert!(got[3].as_ref().unwrap_err().contains("not found"), "{:?}", got[3]);
        std::fs::remove_dir_all(dir).unwrap();
    }
}
