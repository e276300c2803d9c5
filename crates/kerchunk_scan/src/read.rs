//! Reading a scanned file: ranged reads in aligned blocks through one small
//! cache, so that a header read in pieces and the small arrays inlined after
//! it cost a few requests, and counted, so that a scan can say what it read.

use std::collections::HashMap;
use std::ops::Range;
use std::sync::Arc;

use bytes::{Bytes, BytesMut};
use futures::StreamExt;
use object_store::path::Path;
use object_store::{ObjectStore, ObjectStoreExt};

use crate::error::ScanError;

/// What a scan read from its file.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct ReadStats {
    /// Requests made to the store (the size query included).
    pub requests: u64,
    /// Bytes the store returned.
    pub bytes: u64,
}

/// One file of a store, read in blocks of `block` bytes.
pub(crate) struct BlockReader<'a> {
    store: &'a Arc<dyn ObjectStore>,
    path: &'a Path,
    url: &'a str,
    size: u64,
    block: u64,
    blocks: HashMap<u64, Bytes>,
    stats: ReadStats,
}

impl<'a> BlockReader<'a> {
    /// Ask the store for the file's size (one request).
    pub(crate) async fn open(
        store: &'a Arc<dyn ObjectStore>,
        path: &'a Path,
        url: &'a str,
        block: u64,
    ) -> Result<Self, ScanError> {
        let meta = store.head(path).await.map_err(|source| read_error(url, source))?;
        let stats = ReadStats { requests: 1, bytes: 0 };
        Ok(Self { store, path, url, size: meta.size, block: block.max(1), blocks: HashMap::new(), stats })
    }

    /// The file's size, in bytes.
    pub(crate) fn size(&self) -> u64 {
        self.size
    }

    /// What was read so far.
    pub(crate) fn stats(&self) -> ReadStats {
        self.stats
    }

    /// The bytes of `range`, which must lie inside the file; the blocks it
    /// touches that are not cached are fetched in one request.
    pub(crate) async fn read(&mut self, range: Range<u64>) -> Result<Bytes, ScanError> {
        debug_assert!(range.start <= range.end && range.end <= self.size);
        if range.is_empty() {
            return Ok(Bytes::new());
        }
        let (first, last) = (range.start / self.block, (range.end - 1) / self.block);
        let missing: Vec<u64> = (first..=last).filter(|b| !self.blocks.contains_key(b)).collect();
        if let (Some(&from), Some(&to)) = (missing.first(), missing.last()) {
            // One request from the first missing block to the last; blocks cached in between are read again.
            let fetch = from * self.block..((to + 1) * self.block).min(self.size);
            let bytes =
                self.store.get_range(self.path, fetch.clone()).await.map_err(|source| read_error(self.url, source))?;
            self.stats.requests += 1;
            self.stats.bytes += bytes.len() as u64;
            if bytes.len() as u64 != fetch.end - fetch.start {
                return Err(ScanError::ShortRead { url: self.url.to_owned(), range: fetch, got: bytes.len() as u64 });
            }
            for block in from..=to {
                let start = (block - from) * self.block;
                let end = (start + self.block).min(bytes.len() as u64);
                #[expect(clippy::cast_possible_truncation, reason = "offsets into a buffer in memory")]
                self.blocks.insert(block, bytes.slice(start as usize..end as usize));
            }
        }
        if first == last {
            let start = range.start - first * self.block;
            #[expect(clippy::cast_possible_truncation, reason = "offsets into a block in memory")]
            return Ok(self.blocks[&first].slice(start as usize..(start + range.end - range.start) as usize));
        }
        #[expect(clippy::cast_possible_truncation, reason = "a range that was read into memory")]
        let mut out = BytesMut::with_capacity((range.end - range.start) as usize);
        for block in first..=last {
            let data = &self.blocks[&block];
            let base = block * self.block;
            let from = range.start.max(base) - base;
            let to = range.end.min(base + data.len() as u64) - base;
            #[expect(clippy::cast_possible_truncation, reason = "offsets into a block in memory")]
            out.extend_from_slice(&data[from as usize..to as usize]);
        }
        Ok(out.freeze())
    }
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
        let cached = |range: &Range<u64>| {
            let (first, last) = (range.start / self.block, range.end.saturating_sub(1) / self.block);
            (first..=last).all(|block| self.blocks.contains_key(&block))
        };
        let (store, path, url) = (self.store, self.path, self.url);
        let fetched: Vec<Result<Option<Bytes>, ScanError>> = futures::stream::iter(ranges.iter().map(|range| {
            let skip = range.is_empty() || cached(range);
            async move {
                if skip {
                    return Ok(None);
                }
                let bytes = store.get_range(path, range.clone()).await.map_err(|source| read_error(url, source))?;
                if bytes.len() as u64 != range.end - range.start {
                    return Err(ScanError::ShortRead {
                        url: url.to_owned(),
                        range: range.clone(),
                        got: bytes.len() as u64,
                    });
                }
                Ok(Some(bytes))
            }
        }))
        .buffered(CONCURRENT_RANGES)
        .collect()
        .await;
        let mut out = Vec::with_capacity(ranges.len());
        for (range, fetched) in ranges.iter().zip(fetched) {
            match fetched? {
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

fn read_error(url: &str, source: object_store::Error) -> ScanError {
    ScanError::Read { url: url.to_owned(), source }
}
