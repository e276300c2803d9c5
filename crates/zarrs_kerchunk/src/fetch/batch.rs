//! Batches: many ranges of many files, merged per file into blocks and read
//! with a bounded number of reads in flight.

use std::ops::Range;

use bytes::Bytes;
use futures::StreamExt;
use object_store::GetRange;

use super::coalesce::{self, Coalescing, Placement};
use super::{Request, read_async};
use crate::error::ReadError;
use crate::resolve::Source;

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
pub(crate) async fn read_batch(files: Vec<FileRequests>, options: BatchOptions) -> Vec<Result<Vec<Bytes>, ReadError>> {
    // Per file: the reads to make, and where each wanted range lies in them.
    let plans: Vec<(Vec<Request>, Vec<Placement>)> = files
        .iter()
        .map(|(source, wanted)| {
            if wanted.iter().any(Option::is_none) {
                let placed = wanted
                    .iter()
                    .map(|range| match range {
                        None => Placement::Whole(0),
                        Some(range) => Placement::Within(0, range.clone()),
                    })
                    .collect();
                (vec![Request::Whole], placed)
            } else {
                let ranges: Vec<Range<u64>> = wanted.iter().flatten().cloned().collect();
                // Through a disk cache, blocks hold only the bytes wanted (ranges
                // that touch still merge): the cache merges what it lacks itself,
                // and a warm cache then serves whichever way a batch is planned.
                let coalescing = if source.through_cache() {
                    Coalescing { max_gap: 0, ..options.coalescing }
                } else {
                    options.coalescing
                };
                let (blocks, placed) = coalesce::coalesce(&ranges, coalescing);
                (blocks.into_iter().map(|b| Request::Part(GetRange::Bounded(b))).collect(), placed)
            }
        })
        .collect();
    // Each read: a file, the blocks it reads and their requests. A block a
    // read, but through a cache, where a file's blocks are one read, so that
    // the cache sees them together and merges what it lacks of all of them.
    let reads: Vec<(usize, Vec<usize>, Vec<Request>)> = plans
        .iter()
        .enumerate()
        .flat_map(|(file, (requests, _))| {
            if files[file].0.through_cache() {
                vec![(file, (0..requests.len()).collect(), requests.clone())]
            } else {
                requests.iter().enumerate().map(|(block, request)| (file, vec![block], vec![request.clone()])).collect()
            }
        })
        .collect();
    let mut fetched: Vec<Vec<Option<Bytes>>> =
        plans.iter().map(|(requests, _)| requests.iter().map(|_| None).collect()).collect();
    // A file's first failed read fails the file.
    let mut failed: Vec<Option<ReadError>> = plans.iter().map(|_| None).collect();
    let mut stream = futures::stream::iter(reads)
        .map(|(file, blocks, requests)| {
            let source = files[file].0.clone();
            async move {
                let read = async move { read_async(&source, requests).await };
                // Each read a task of its own: polled from one task, every
                // response would be received (and copied) on one thread.
                let bytes = match tokio::runtime::Handle::try_current() {
                    Ok(runtime) => runtime.spawn(read).await.unwrap_or_else(|e| Err(ReadError::Task(e))),
                    Err(_) => read.await,
                };
                (file, blocks, bytes)
            }
        })
        .buffer_unordered(options.concurrency.max(1));
    while let Some((file, blocks, bytes)) = stream.next().await {
        match bytes {
            Ok(read) => {
                for (block, bytes) in blocks.into_iter().zip(read) {
                    fetched[file][block] = Some(bytes);
                }
            }
            Err(error) => {
                failed[file].get_or_insert(error);
            }
        }
    }
    plans
        .into_iter()
        .zip(fetched)
        .zip(failed)
        .map(|(((_, placed), blocks), failed)| {
            if let Some(error) = failed {
                return Err(error);
            }
            let blocks: Vec<Bytes> =
                blocks.into_iter().map(|b| b.ok_or(ReadError::MissingRanges)).collect::<Result<_, _>>()?;
            placed.into_iter().map(|placement| placement.slice(&blocks)).collect()
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn batches_merge_ranges_and_share_whole_reads() {
        let dir = tempfile::tempdir().unwrap();
        let (a, b) = (dir.path().join("a.bin"), dir.path().join("b.bin"));
        std::fs::write(&a, b"0123456789").unwrap();
        std::fs::write(&b, b"abcdef").unwrap();
        let files = vec![
            (Source::local(a.clone()), vec![Some(6..9), Some(0..2), Some(1..4)]),
            (Source::local(b.clone()), vec![Some(2..4), None]),
            (Source::local(a), vec![Some(8..12)]),
            (Source::local(dir.path().join("missing")), vec![Some(0..1)]),
        ];
        let got = futures::executor::block_on(read_batch(files, BatchOptions::default()));
        assert_eq!(got[0].as_ref().unwrap(), &[&b"678"[..], b"01", b"123"]);
        assert_eq!(got[1].as_ref().unwrap(), &[&b"cd"[..], b"abcdef"]);
        assert!(matches!(got[2], Err(ReadError::PastEnd { .. })), "{:?}", got[2]);
        assert!(got[3].as_ref().unwrap_err().to_string().contains("not found"), "{:?}", got[3]);
    }
}
