//! Reading a scanned file: ranged reads in aligned blocks through one small
//! cache, so that a header read in pieces and the small arrays inlined after
//! it cost a few requests, and counted, so that a scan can say what it read.

use std::collections::HashMap;
use std::ops::Range;
use std::sync::Arc;

use bytes::{Bytes, BytesMut};
use futures::StreamExt;
use object_store::path::Path;
use object_store::{GetOptions, GetRange, ObjectStore, ObjectStoreExt};

use crate::error::ScanError;

/// What a scan read from its file.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct ReadStats {
    /// Requests made to the store (a size query included, where one was needed).
    pub requests: u64,
    /// Bytes the store returned.
    pub bytes: u64,
}

/// The blocks of one file read so far: which to fetch for a range, and a
/// range's bytes put together from them. Shared by the async reader
/// (NetCDF-3) and the blocking one the HDF5 parser calls.
pub(crate) struct Blocks {
    size: u64,
    block: u64,
    held: HashMap<u64, Bytes>,
}

impl Blocks {
    /// No block of a file of `size` bytes read yet, in blocks of `block` bytes.
    pub(crate) fn new(size: u64, block: u64) -> Self {
        Self { size, block: block.max(1), held: HashMap::new() }
    }

    /// The file's size, in bytes.
    pub(crate) fn size(&self) -> u64 {
        self.size
    }

    /// The size of a block, in bytes.
    pub(crate) fn block(&self) -> u64 {
        self.block
    }

    /// The bytes to fetch so that every block of `range` (inside the file) is
    /// held: from the first missing block to the last (blocks held in between
    /// are fetched again, so that it is one request), or `None`.
    pub(crate) fn missing(&self, range: &Range<u64>) -> Option<Range<u64>> {
        if range.is_empty() {
            return None;
        }
        let (first, last) = (range.start / self.block, (range.end - 1) / self.block);
        let from = (first..=last).find(|b| !self.held.contains_key(b))?;
        let to = (first..=last).rev().find(|b| !self.held.contains_key(b)).unwrap_or(from);
        Some(from * self.block..((to + 1) * self.block).min(self.size))
    }

    /// How far past `end` (a block boundary) a fetch may reach toward
    /// `target` without reading again a block it holds.
    pub(crate) fn missing_until(&self, end: u64, target: u64) -> u64 {
        let mut reach = end;
        while reach < target.min(self.size) && !self.held.contains_key(&(reach / self.block)) {
            reach += self.block;
        }
        reach.min(target).min(self.size)
    }

    /// Hold the blocks of `fetched`, a range [`Blocks::missing`] gave, whose
    /// bytes are `bytes` (as many as it spans).
    pub(crate) fn insert(&mut self, fetched: &Range<u64>, bytes: &Bytes) {
        let from = fetched.start / self.block;
        let count = (fetched.end - fetched.start).div_ceil(self.block);
        for block in from..from + count {
            let start = (block - from) * self.block;
            let end = (start + self.block).min(bytes.len() as u64);
            #[expect(clippy::cast_possible_truncation, reason = "offsets into a buffer in memory")]
            self.held.insert(block, bytes.slice(start as usize..end as usize));
        }
    }

    /// The missing blocks of `ranges` (each inside the file), as runs of
    /// consecutive blocks of at most `most` bytes each (rounded down to whole
    /// blocks, at least one), in file order.
    pub(crate) fn missing_runs(&self, ranges: &[Range<u64>], most: u64) -> Vec<Range<u64>> {
        let mut wanted: Vec<u64> = ranges
            .iter()
            .filter(|r| !r.is_empty())
            .flat_map(|r| r.start / self.block..=(r.end - 1) / self.block)
            .filter(|b| !self.held.contains_key(b))
            .collect();
        wanted.sort_unstable();
        wanted.dedup();
        let per_run = (most / self.block).max(1);
        let mut runs: Vec<Range<u64>> = Vec::new();
        for block in wanted {
            match runs.last_mut() {
                Some(run) if run.end == block && run.end - run.start < per_run => run.end += 1,
                _ => runs.push(block..block + 1),
            }
        }
        runs.into_iter().map(|run| run.start * self.block..(run.end * self.block).min(self.size)).collect()
    }

    /// Whether every block of `range` is held.
    pub(crate) fn holds(&self, range: &Range<u64>) -> bool {
        self.missing(range).is_none()
    }

    /// The bytes of `range`, whose blocks are all held.
    pub(crate) fn assemble(&self, range: &Range<u64>) -> Bytes {
        if range.is_empty() {
            return Bytes::new();
        }
        let (first, last) = (range.start / self.block, (range.end - 1) / self.block);
        if first == last {
            let start = range.start - first * self.block;
            #[expect(clippy::cast_possible_truncation, reason = "offsets into a block in memory")]
            return self.held[&first].slice(start as usize..(start + range.end - range.start) as usize);
        }
        #[expect(clippy::cast_possible_truncation, reason = "a range that was read into memory")]
        let mut out = BytesMut::with_capacity((range.end - range.start) as usize);
        for block in first..=last {
            let data = &self.held[&block];
            let base = block * self.block;
            let from = range.start.max(base) - base;
            let to = range.end.min(base + data.len() as u64) - base;
            #[expect(clippy::cast_possible_truncation, reason = "offsets into a block in memory")]
            out.extend_from_slice(&data[from as usize..to as usize]);
        }
        out.freeze()
    }
}

/// One file of a store, read in blocks through [`Blocks`].
pub(crate) struct BlockReader<'a> {
    store: &'a Arc<dyn ObjectStore>,
    path: &'a Path,
    url: &'a str,
    blocks: Blocks,
    stats: ReadStats,
}

impl<'a> BlockReader<'a> {
    /// Read the file's first `first` bytes (rounded up to whole blocks) and
    /// learn its size in the same request: a ranged read's answer says the
    /// object's size, and a header (NetCDF-3) or an HDF5 file's metadata
    /// usually lies at its start. An empty file costs a second request (its
    /// size, without a range).
    pub(crate) async fn open(
        store: &'a Arc<dyn ObjectStore>,
        path: &'a Path,
        url: &'a str,
        blocks: (u64, u64),
    ) -> Result<Self, ScanError> {
        let (block, options) = first_read(blocks);
        // A failure (also a missing file's, or an empty file's) falls back to
        // the size query, which reports it.
        let Ok(got) = store.get_opts(path, options).await else {
            let meta = store.head(path).await.map_err(|source| read_error(url, source))?;
            let stats = ReadStats { requests: 2, bytes: 0 };
            return Ok(Self { store, path, url, blocks: Blocks::new(meta.size, block), stats });
        };
        Self::with_first(store, path, url, block, got).await
    }

    /// [`BlockReader::open`] for a file that may not be there: `None` (after the one request
    /// that says so) where there is none, or the store refuses it as S3 refuses a missing key to
    /// whom may not list the bucket.
    pub(crate) async fn open_if_exists(
        store: &'a Arc<dyn ObjectStore>,
        path: &'a Path,
        url: &'a str,
        blocks: (u64, u64),
    ) -> Result<Option<Self>, ScanError> {
        let (block, options) = first_read(blocks);
        match store.get_opts(path, options).await {
            Err(object_store::Error::NotFound { .. } | object_store::Error::PermissionDenied { .. }) => Ok(None),
            // Another failure (an empty file's, say) is reported by `open`'s own way.
            Err(_) => Self::open(store, path, url, blocks).await.map(Some),
            Ok(got) => Self::with_first(store, path, url, block, got).await.map(Some),
        }
    }

    /// The reader of a file whose first bytes `got` answered.
    async fn with_first(
        store: &'a Arc<dyn ObjectStore>,
        path: &'a Path,
        url: &'a str,
        block: u64,
        got: object_store::GetResult,
    ) -> Result<Self, ScanError> {
        let (size, range) = (got.meta.size, got.range.clone());
        let bytes = got.bytes().await.map_err(|source| read_error(url, source))?;
        if range.start != 0 || bytes.len() as u64 != range.end - range.start {
            return Err(ScanError::ShortRead { url: url.to_owned(), range, got: bytes.len() as u64 });
        }
        let mut blocks = Blocks::new(size, block);
        blocks.insert(&range, &bytes);
        let stats = ReadStats { requests: 1, bytes: bytes.len() as u64 };
        Ok(Self { store, path, url, blocks, stats })
    }

    /// Counts `requests` more made for this file (a look for a sidecar that was not there).
    pub(crate) fn count_requests(&mut self, requests: u64) {
        self.stats.requests += requests;
    }

    /// The file's size, in bytes.
    pub(crate) fn size(&self) -> u64 {
        self.blocks.size()
    }

    /// The whole object at `path` in the file's store (a sidecar, such as a
    /// GRIB inventory), counted in the reads; `None` where there is none; an
    /// error naming `url` where it is over `most` bytes.
    pub(crate) async fn sidecar(&mut self, path: &Path, url: &str, most: u64) -> Result<Option<Bytes>, ScanError> {
        match self.store.get(path).await {
            Ok(got) => {
                if got.meta.size > most {
                    return Err(ScanError::Grib {
                        url: url.to_owned(),
                        reason: format!(
                            "it is {} bytes, over the {most} of ScanOptions::with_max_header_bytes",
                            got.meta.size
                        ),
                    });
                }
                let bytes = got.bytes().await.map_err(|source| read_error(url, source))?;
                self.stats.requests += 1;
                self.stats.bytes += bytes.len() as u64;
                Ok(Some(bytes))
            }
            // S3 answers 403, not 404, for a missing key to whom may not list the bucket:
            // either way the scan goes on without the sidecar (and reads the file itself).
            Err(object_store::Error::NotFound { .. } | object_store::Error::PermissionDenied { .. }) => {
                self.stats.requests += 1;
                Ok(None)
            }
            Err(source) => Err(read_error(url, source)),
        }
    }

    /// The file's path in its store.
    pub(crate) fn path(&self) -> &Path {
        self.path
    }

    /// What was read so far.
    pub(crate) fn stats(&self) -> ReadStats {
        self.stats
    }

    /// The blocks read and the count of what was read, to go on reading
    /// the file another way (the HDF5 parser's blocking storage).
    pub(crate) fn into_parts(self) -> (Blocks, ReadStats) {
        (self.blocks, self.stats)
    }

    /// The bytes of `range`, which must lie inside the file; the blocks it
    /// touches that are not cached are fetched in one request.
    pub(crate) async fn read(&mut self, range: Range<u64>) -> Result<Bytes, ScanError> {
        debug_assert!(range.start <= range.end && range.end <= self.size());
        if let Some(fetch) = self.blocks.missing(&range) {
            let bytes = fetch_exact(self.store, self.path, self.url, fetch.clone()).await?;
            self.stats.requests += 1;
            self.stats.bytes += bytes.len() as u64;
            self.blocks.insert(&fetch, &bytes);
        }
        Ok(self.blocks.assemble(&range))
    }
}

/// The bytes of `range` of a file, exactly: a store that returns another
/// number of bytes is an error.
pub(crate) async fn fetch_exact(
    store: &Arc<dyn ObjectStore>,
    path: &Path,
    url: &str,
    range: Range<u64>,
) -> Result<Bytes, ScanError> {
    let bytes = store.get_range(path, range.clone()).await.map_err(|source| read_error(url, source))?;
    if bytes.len() as u64 != range.end - range.start {
        return Err(ScanError::ShortRead { url: url.to_owned(), range, got: bytes.len() as u64 });
    }
    Ok(bytes)
}

/// Ranges [`BlockReader::read_exact_ranges`] fetches at once.
const CONCURRENT_RANGES: usize = 8;

impl BlockReader<'_> {
    /// The bytes of each of `ranges` (inside the file), in order: those the
    /// cache holds from it, the others fetched exactly, several at once and
    /// not cached. For data spread through a file (the values of a record
    /// variable, one per record), where whole blocks would read far more
    /// than the values and one request each in turn would wait longest.
    pub(crate) async fn read_exact_ranges(&mut self, ranges: &[Range<u64>]) -> Result<Vec<Bytes>, ScanError> {
        let blocks = &self.blocks;
        let fetched = fetch_exact_ranges(self.store, self.path, self.url, ranges, |range| {
            range.is_empty() || blocks.holds(range)
        })
        .await?;
        let mut out = Vec::with_capacity(ranges.len());
        for (range, fetched) in ranges.iter().zip(fetched) {
            match fetched {
                Some(bytes) => {
                    self.stats.requests += 1;
                    self.stats.bytes += bytes.len() as u64;
                    out.push(bytes);
                }
                None => out.push(self.read(range.clone()).await?),
            }
        }
        Ok(out)
    }
}

/// Each of `ranges` of a file fetched exactly, [`CONCURRENT_RANGES`] at once, in order: `None`
/// for those `had` says are had already.
pub(crate) async fn fetch_exact_ranges(
    store: &Arc<dyn ObjectStore>,
    path: &Path,
    url: &str,
    ranges: &[Range<u64>],
    had: impl Fn(&Range<u64>) -> bool,
) -> Result<Vec<Option<Bytes>>, ScanError> {
    let fetched: Vec<Result<Option<Bytes>, ScanError>> = futures::stream::iter(ranges.iter().map(|range| {
        let skip = had(range);
        async move {
            if skip {
                return Ok(None);
            }
            fetch_exact(store, path, url, range.clone()).await.map(Some)
        }
    }))
    .buffered(CONCURRENT_RANGES)
    .collect()
    .await;
    fetched.into_iter().collect()
}

/// The block size (at least 1) and the request for a file's first `first` bytes, rounded up to
/// whole blocks.
fn first_read((block, first): (u64, u64)) -> (u64, GetOptions) {
    let block = block.max(1);
    let first = first.max(1).div_ceil(block).saturating_mul(block);
    (block, GetOptions { range: Some(GetRange::Bounded(0..first)), ..GetOptions::default() })
}

pub(crate) fn read_error(url: &str, source: object_store::Error) -> ScanError {
    ScanError::Read { url: url.to_owned(), source }
}
