//! Merging byte ranges of one file into fewer, larger reads (no I/O).
//!
//! Ranges closer than `max_gap` are read as one block, as long as the block
//! stays within `max_block` bytes; each range is then a slice of its block.
//! fsspec's defaults are 64 kB and 256 MB.

use std::ops::Range;

/// How ranges are merged.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Coalescing {
    pub(crate) max_gap: u64,
    pub(crate) max_block: u64,
}

impl Default for Coalescing {
    fn default() -> Self {
        Self { max_gap: 64 * 1024, max_block: 256 * 1024 * 1024 }
    }
}

use bytes::Bytes;

use crate::error::ReadError;

/// Where one wanted part lies in the blocks read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Placement {
    /// All of block `.0`, whatever its length (a whole-file read).
    Whole(usize),
    /// Bytes `.1` of block `.0`, counted from the block's start.
    Within(usize, Range<u64>),
}

impl Placement {
    /// The wanted bytes, from the blocks read; an error if a block is too short.
    pub(crate) fn slice(self, blocks: &[Bytes]) -> Result<Bytes, ReadError> {
        match self {
            Self::Whole(block) => Ok(blocks[block].clone()),
            Self::Within(block, range) => {
                let bytes = &blocks[block];
                if range.end > bytes.len() as u64 {
                    return Err(ReadError::WrongLength { range, got: bytes.len() as u64 });
                }
                #[expect(clippy::cast_possible_truncation, reason = "below the length of a block in memory")]
                Ok(bytes.slice(range.start as usize..range.end as usize))
            }
        }
    }
}

/// The blocks to read, and where each input range lies in them.
pub(crate) fn coalesce(ranges: &[Range<u64>], options: Coalescing) -> (Vec<Range<u64>>, Vec<Placement>) {
    let mut order: Vec<usize> = (0..ranges.len()).collect();
    order.sort_by_key(|&i| (ranges[i].start, ranges[i].end));
    let mut blocks: Vec<Range<u64>> = Vec::new();
    let mut placed = vec![Placement::Within(0, 0..0); ranges.len()];
    for i in order {
        let range = &ranges[i];
        let joins = blocks.last().is_some_and(|block| {
            range.start <= block.end.saturating_add(options.max_gap)
                && range.end.max(block.end) - block.start <= options.max_block
        });
        if joins {
            let block = blocks.last_mut().expect("checked");
            block.end = block.end.max(range.end);
        } else {
            blocks.push(range.clone());
        }
        let index = blocks.len() - 1;
        let start = blocks[index].start;
        placed[i] = Placement::Within(index, range.start - start..range.end - start);
    }
    (blocks, placed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn neighbours_merge_within_the_gap_and_block_limits() {
        let options = Coalescing { max_gap: 10, max_block: 100 };
        let ranges = [50..60, 0..10, 15..20, 200..210, 5..8, 65..140];
        let (blocks, placed) = coalesce(&ranges, options);
        assert_eq!(blocks, [0..20, 50..140, 200..210]);
        let within = |block, range| Placement::Within(block, range);
        assert_eq!(
            placed,
            [
                within(1, 0..10),
                within(0, 0..10),
                within(0, 15..20),
                within(2, 0..10),
                within(0, 5..8),
                within(1, 15..90)
            ]
        );
        // No gap allowed: only touching or overlapping ranges merge.
        let (blocks, _) = coalesce(&[0..10, 10..20, 21..30], Coalescing { max_gap: 0, max_block: 100 });
        assert_eq!(blocks, [0..20, 21..30]);
        assert_eq!(coalesce(&[], options).0, []);
    }
}
