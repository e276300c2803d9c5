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

/// Where one wanted range lies: the index of its block and its range within the block.
pub(crate) type Placement = (usize, Range<usize>);

/// The blocks to read, and where each input range lies in them.
pub(crate) fn coalesce(ranges: &[Range<u64>], options: Coalescing) -> (Vec<Range<u64>>, Vec<Placement>) {
    let mut order: Vec<usize> = (0..ranges.len()).collect();
    order.sort_by_key(|&i| (ranges[i].start, ranges[i].end));
    let mut blocks: Vec<Range<u64>> = Vec::new();
    let mut placed = vec![(0, 0..0); ranges.len()];
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
        #[allow(clippy::cast_possible_truncation)] // within a block, which is read into memory
        let within = (range.start - start) as usize..(range.end - start) as usize;
        placed[i] = (index, within);
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
        assert_eq!(placed, [(1, 0..10), (0, 0..10), (0, 15..20), (2, 0..10), (0, 5..8), (1, 15..90)]);
        // No gap allowed: only touching or overlapping ranges merge.
        let (blocks, _) = coalesce(&[0..10, 10..20, 21..30], Coalescing { max_gap: 0, max_block: 100 });
        assert_eq!(blocks, [0..20, 21..30]);
        assert_eq!(coalesce(&[], options).0, []);
    }
}
