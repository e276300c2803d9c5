//! Dense chunk tables: the chunk references of one array as three columns
//! (target, offset, length) indexed by C-order chunk position, 20 bytes a
//! chunk and no key text. Keys are computed from positions when listed.

use foldhash::HashMap;

use super::{Stored, UrlId};
use crate::zarr::grid::ChunkGrid;

/// Codes of the `target` column. Bit 31 marks a whole-file reference; the low
/// 31 bits hold the URL index or one of the codes below.
const WHOLE: u32 = 1 << 31;
/// No reference at this position.
const MISSING: u32 = u32::MAX;
/// An inline value: `offset` and `length` are its span of the set's arena.
const INLINE: u32 = WHOLE - 1;
/// A `null` URL: the store's default target.
const DEFAULT_URL: u32 = WHOLE - 2;
/// A malformed reference: `offset` and `length` are the span of its reason in the set's arena.
const MALFORMED: u32 = WHOLE - 3;
/// How many distinct URLs a set can intern: the rest of the 31 bits are codes.
pub(super) const MAX_URLS: u32 = MALFORMED;

/// A table grows its columns to a position only while at least one slot in
/// `DENSITY` holds a reference (or the columns stay below `ALWAYS_DENSE`
/// slots); references further out wait in a staging list, and a table still
/// that sparse when the set is built is given back to the key map.
const DENSITY: u64 = 4;
///
/// `ALWAYS_DENSE` stays small because every array gets it: a document of many
/// arrays, each with one chunk far out in its grid, must not cost a large
/// table per array (64 slots are 1.25 KiB, no more than the `.zarray` text).
const ALWAYS_DENSE: u64 = 64;

/// The chunk references of one array.
#[derive(Debug)]
pub(super) struct ChunkTable {
    grid: ChunkGrid,
    targets: Vec<u32>,
    offsets: Vec<u64>,
    lengths: Vec<u64>,
    /// How many slots hold a reference.
    present: usize,
    /// References to positions past the columns, in insertion order (only while building).
    staged: Vec<(u64, Stored)>,
    /// The smallest and one past the largest staged position.
    staged_span: (u64, u64),
}

impl ChunkTable {
    pub(super) fn new(grid: ChunkGrid) -> Self {
        Self {
            grid,
            targets: Vec::new(),
            offsets: Vec::new(),
            lengths: Vec::new(),
            present: 0,
            staged: Vec::new(),
            staged_span: (u64::MAX, 0),
        }
    }

    pub(super) fn grid(&self) -> &ChunkGrid {
        &self.grid
    }

    /// The number of chunk references (once built).
    pub(super) fn present(&self) -> usize {
        self.present
    }

    /// Whether the table holds no reference, placed or staged.
    pub(super) fn is_empty(&self) -> bool {
        self.present + self.staged.len() == 0
    }

    /// The reference at `position`, if any.
    pub(super) fn get(&self, position: u64) -> Option<Stored> {
        let i = usize::try_from(position).ok()?;
        decode(*self.targets.get(i)?, self.offsets[i], self.lengths[i])
    }

    /// Every reference with its position, in C order (staged ones last).
    pub(super) fn entries(&self) -> impl Iterator<Item = (u64, Stored)> + '_ {
        let dense = self.targets.iter().zip(&self.offsets).zip(&self.lengths).enumerate();
        dense.filter_map(|(i, ((&t, &o), &l))| Some((i as u64, decode(t, o, l)?))).chain(self.staged.iter().copied())
    }

    /// The key of the chunk at `position` of the array at `path`.
    pub(super) fn key(&self, path: &str, position: u64) -> String {
        let mut key = String::with_capacity(path.len() + 1 + 8 * self.grid.dims().len().max(1));
        if !path.is_empty() {
            key.push_str(path);
            key.push('/');
        }
        let inside = self.grid.push_chunk_name(position, &mut key);
        assert!(inside, "a position inside the grid");
        key
    }

    /// Whether some key of this table may start with `prefix`.
    pub(super) fn may_hold_prefix(&self, path: &str, prefix: &str) -> bool {
        let folder = folder(path);
        !self.is_empty() && (folder.starts_with(prefix) || prefix.starts_with(&folder))
    }

    /// Set the reference at `position` (inside the grid), replacing any.
    pub(super) fn insert(&mut self, position: u64, entry: Stored) {
        let len = self.targets.len() as u64;
        if position < len {
            self.write(position, entry);
        } else if position < self.slot_budget(1) {
            self.grow(position + 1);
            self.write(position, entry);
        } else {
            self.staged.push((position, entry));
            self.staged_span = (self.staged_span.0.min(position), self.staged_span.1.max(position + 1));
            if self.staged.len() as u64 >= len.max(4096) && self.staged_span.1 <= self.slot_budget(0) {
                self.grow(self.staged_span.1);
            }
        }
    }

    /// Set references that are older than every one the table holds: each
    /// fills its position only if no newer reference does.
    pub(super) fn insert_older(&mut self, entries: Vec<(u64, Stored)>) {
        let len = self.targets.len() as u64;
        let (dense, beyond): (Vec<_>, Vec<_>) = entries.into_iter().partition(|&(position, _)| position < len);
        for (position, entry) in dense {
            if self.get(position).is_none() {
                self.write(position, entry);
            }
        }
        // Staged references are placed in order, so the older ones go first.
        for &(position, _) in &beyond {
            self.staged_span = (self.staged_span.0.min(position), self.staged_span.1.max(position + 1));
        }
        self.staged.splice(0..0, beyond);
    }

    /// Finish building: hold every staged reference in the columns, or
    /// return `false` if the table would be too sparse to keep (its
    /// references are then still in [`entries`](Self::entries)).
    pub(super) fn finish(&mut self) -> bool {
        if !self.staged.is_empty() {
            if self.staged_span.1 > self.slot_budget(0) {
                return false;
            }
            self.grow(self.staged_span.1);
        }
        self.targets.shrink_to_fit();
        self.offsets.shrink_to_fit();
        self.lengths.shrink_to_fit();
        self.staged = Vec::new();
        true
    }

    /// The bytes of memory the columns take.
    pub(super) fn memory_size(&self) -> usize {
        self.targets.capacity() * size_of::<u32>()
            + (self.offsets.capacity() + self.lengths.capacity()) * size_of::<u64>()
    }

    /// How many slots the columns may have with `more` references added.
    fn slot_budget(&self, more: usize) -> u64 {
        let references = (self.present + self.staged.len() + more) as u64;
        references.saturating_mul(DENSITY).max(ALWAYS_DENSE)
    }

    /// Grow the columns to `end` slots and move in the staged references that now fit.
    fn grow(&mut self, end: u64) {
        let end = usize::try_from(end).expect("slots bounded by the references held");
        if end > self.targets.capacity() {
            // Double, but never past the grid: a grid filled in C order ends with no spare capacity.
            let count = usize::try_from(self.grid.count()).unwrap_or(usize::MAX);
            let additional = end.max(self.targets.len() * 2).min(count).max(end) - self.targets.len();
            self.targets.reserve_exact(additional);
            self.offsets.reserve_exact(additional);
            self.lengths.reserve_exact(additional);
        }
        self.targets.resize(end, MISSING);
        self.offsets.resize(end, 0);
        self.lengths.resize(end, 0);
        if self.staged_span.0 < end as u64 {
            // In insertion order, so a later reference to a position still replaces an earlier one.
            let staged = std::mem::take(&mut self.staged);
            self.staged_span = (u64::MAX, 0);
            for (position, entry) in staged {
                if position < end as u64 {
                    self.write(position, entry);
                } else {
                    self.staged.push((position, entry));
                    self.staged_span = (self.staged_span.0.min(position), self.staged_span.1.max(position + 1));
                }
            }
        }
    }

    fn write(&mut self, position: u64, entry: Stored) {
        #[expect(clippy::cast_possible_truncation, reason = "below the columns' length")]
        let i = position as usize;
        let (target, offset, length) = encode(entry);
        self.present += usize::from(self.targets[i] == MISSING);
        (self.targets[i], self.offsets[i], self.lengths[i]) = (target, offset, length);
    }
}

fn encode(entry: Stored) -> (u32, u64, u64) {
    // Interning caps ids below `MAX_URLS`, so an id never collides with a code.
    let url_code = |url: Option<UrlId>| url.map_or(DEFAULT_URL, |UrlId(id)| id);
    match entry {
        Stored::Inline { start, len } => (INLINE, start, len),
        Stored::Malformed { start, len } => (MALFORMED, start, len),
        Stored::Whole(url) => (WHOLE | url_code(url), 0, 0),
        Stored::Range { url, offset, length } => (url_code(url), offset, length),
    }
}

fn decode(target: u32, offset: u64, length: u64) -> Option<Stored> {
    if target == MISSING {
        return None;
    }
    let url = match target & !WHOLE {
        INLINE => return Some(Stored::Inline { start: offset, len: length }),
        MALFORMED => return Some(Stored::Malformed { start: offset, len: length }),
        DEFAULT_URL => None,
        index => Some(UrlId(index)),
    };
    Some(if target & WHOLE == 0 { Stored::Range { url, offset, length } } else { Stored::Whole(url) })
}

/// The folder of the array at `path`: `path/`, or `""` for an array at the root.
pub(super) fn folder(path: &str) -> String {
    if path.is_empty() { String::new() } else { format!("{path}/") }
}

/// The chunk tables of a set, by array path, and which key names which chunk.
#[derive(Debug, Default)]
pub(super) struct Tables {
    by_path: HashMap<Box<str>, ChunkTable>,
    /// The dimension counts (2 or more) of arrays whose chunk keys are
    /// nested folders (`dimension_separator` `/`), where a key's array path
    /// is found by counting `/` from the right.
    nested_ndims: Vec<usize>,
}

impl Tables {
    /// The table holding `key` and the chunk's position, if `key` is the
    /// canonical name of a chunk inside some table's grid.
    pub(super) fn locate(&self, key: &str) -> Option<(&ChunkTable, u64)> {
        let (path, position) = self.find(key)?;
        Some((&self.by_path[path], position))
    }

    pub(super) fn get_mut(&mut self, path: &str) -> Option<&mut ChunkTable> {
        self.by_path.get_mut(path)
    }

    /// The array path (a slice of `key`) and chunk position `key` names.
    pub(super) fn find<'k>(&self, key: &'k str) -> Option<(&'k str, u64)> {
        let (dir, chunk) = match memchr::memrchr(b'/', key.as_bytes()) {
            Some(i) => (&key[..i], &key[i + 1..]),
            None => ("", key),
        };
        if let Some(table) = self.by_path.get(dir) {
            let grid = table.grid();
            // With fewer than 2 dimensions, a chunk name has no separator to tell apart.
            if (grid.separator() == '.' || grid.dims().len() < 2)
                && let Some(position) = grid.position(chunk, true)
            {
                return Some((dir, position));
            }
        }
        for &ndim in &self.nested_ndims {
            let mut slashes = key.rmatch_indices('/').map(|(i, _)| i);
            let (path, chunk) = match slashes.nth(ndim - 1) {
                Some(i) => (&key[..i], &key[i + 1..]),
                None if key.matches('/').count() == ndim - 1 => ("", key),
                None => continue,
            };
            if let Some(table) = self.by_path.get(path) {
                let grid = table.grid();
                if grid.separator() == '/'
                    && grid.dims().len() == ndim
                    && let Some(position) = grid.position(chunk, true)
                {
                    return Some((path, position));
                }
            }
        }
        None
    }

    pub(super) fn get(&self, path: &str) -> Option<&ChunkTable> {
        self.by_path.get(path)
    }

    pub(super) fn insert(&mut self, path: &str, table: ChunkTable) {
        self.by_path.insert(path.into(), table);
        self.index_nesting();
    }

    /// Take out the table at `path` for a while, to [`put_back`](Self::put_back)
    /// unchanged in grid before any other use of the tables.
    pub(super) fn take(&mut self, path: &str) -> Option<ChunkTable> {
        self.by_path.remove(path)
    }

    /// Return a table that [`take`](Self::take) took out.
    pub(super) fn put_back(&mut self, path: Box<str>, table: ChunkTable) {
        self.by_path.insert(path, table);
    }

    pub(super) fn remove(&mut self, path: &str) -> Option<ChunkTable> {
        let table = self.by_path.remove(path);
        self.index_nesting();
        table
    }

    /// Every table, taken out.
    pub(super) fn take_all(&mut self) -> Vec<(Box<str>, ChunkTable)> {
        self.nested_ndims.clear();
        self.by_path.drain().collect()
    }

    /// The tables with at least one reference, sorted by path.
    pub(super) fn sorted(&self) -> impl Iterator<Item = (&str, &ChunkTable)> {
        let mut tables: Vec<(&str, &ChunkTable)> =
            self.by_path.iter().filter(|(_, t)| !t.is_empty()).map(|(p, t)| (&**p, t)).collect();
        tables.sort_unstable_by_key(|(path, _)| *path);
        tables.into_iter()
    }

    /// The bytes of memory the tables take.
    pub(super) fn memory_size(&self) -> usize {
        self.by_path
            .iter()
            .map(|(path, table)| path.len() + size_of::<(Box<str>, ChunkTable)>() + table.memory_size())
            .sum()
    }

    fn index_nesting(&mut self) {
        let mut ndims: Vec<usize> = self
            .by_path
            .values()
            .map(ChunkTable::grid)
            .filter(|grid| grid.separator() == '/' && grid.dims().len() >= 2)
            .map(|grid| grid.dims().len())
            .collect();
        ndims.sort_unstable();
        ndims.dedup();
        self.nested_ndims = ndims;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn table(shape: u64) -> ChunkTable {
        ChunkTable::new(ChunkGrid::from_zarray(&json!({"shape": [shape], "chunks": [1]})).unwrap())
    }

    fn range(offset: u64) -> Stored {
        Stored::Range { url: Some(UrlId(3)), offset, length: 1 }
    }

    #[test]
    fn codes_round_trip() {
        for entry in [
            Stored::Inline { start: 5, len: 0 },
            Stored::Malformed { start: 7, len: 12 },
            Stored::Whole(Some(UrlId(0))),
            Stored::Whole(None),
            Stored::Range { url: Some(UrlId(MAX_URLS - 1)), offset: u64::MAX, length: 0 },
            Stored::Range { url: None, offset: 1, length: 2 },
        ] {
            let (t, o, l) = encode(entry);
            assert_eq!(decode(t, o, l), Some(entry));
        }
        assert_eq!(decode(MISSING, 0, 0), None);
    }

    #[test]
    fn out_of_order_positions_are_staged_then_placed_in_insertion_order() {
        let mut t = table(1 << 40);
        t.insert(3, range(0));
        t.insert(1 << 30, range(1)); // far out: staged
        t.insert(1 << 30, range(2)); // replaces the staged one
        t.insert(2, range(3));
        assert_eq!(t.staged.len(), 2);
        assert!(!t.finish(), "2^30 slots for 3 references is too sparse");
        let back: Vec<_> = t.entries().collect();
        assert_eq!(back, [(2, range(3)), (3, range(0)), (1 << 30, range(1)), (1 << 30, range(2))]);

        let mut t = table(1 << 20);
        for i in (0..100_000).rev() {
            t.insert(i, range(i));
        }
        assert!(t.finish());
        assert_eq!((t.present(), t.targets.len()), (100_000, 100_000));
        assert!(t.entries().all(|(i, e)| e == range(i)));
    }

    #[test]
    fn c_order_filling_leaves_no_spare_capacity() {
        let mut t = table(300_000);
        for i in 0..300_000 {
            t.insert(i, range(i));
        }
        assert_eq!(t.targets.capacity(), 300_000);
        assert_eq!(t.memory_size(), 300_000 * 20);
    }
}
