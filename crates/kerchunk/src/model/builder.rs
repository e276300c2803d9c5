//! Building a [`ReferenceSet`]: interning URLs, packing inline values into
//! one arena, and placing each chunk key in its array's dense table.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use foldhash::HashMap as FastHashMap;

use super::table::{ChunkTable, MAX_URLS, Tables};
use super::{ReferenceSet, Stored, UrlId, span};
use crate::zarr::grid::ChunkGrid;

/// Builds a [`ReferenceSet`], interning URLs and packing inline values into one arena.
///
/// Inserting a key that is already present replaces it (as `gen` output
/// replaces same-named `refs` in fsspec).
///
/// Once an array's `.zarray` has been inserted, its chunk keys go straight
/// into a dense table; chunk keys inserted before their `.zarray` are moved
/// there when the set is built. Documents that put metadata first (kerchunk
/// and zarr do) therefore never hold chunk keys as text.
#[derive(Debug, Default)]
pub struct ReferenceSetBuilder {
    loose: BTreeMap<Box<str>, Stored>,
    tables: Tables,
    urls: Vec<Arc<str>>,
    url_ids: FastHashMap<Arc<str>, UrlId>,
    /// The URL interned last: references to one file tend to come together.
    last_url: Option<(Arc<str>, UrlId)>,
    /// The table of the array whose chunk came last, out of `tables` while it
    /// is filled: documents list an array's chunks together, and finding each
    /// chunk's table by its path took a sixth of a large document's load.
    filling: Option<(Box<str>, ChunkTable)>,
    inline: Vec<u8>,
    /// A parser's policy: refuse a document with a malformed reference
    /// instead of keeping the key ([`crate::MalformedReferences::Refuse`]).
    pub(crate) refuse_malformed: bool,
}

impl ReferenceSetBuilder {
    /// An empty builder.
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }

    /// Intern `url`, returning its id; `None` stands for the default target.
    ///
    /// # Panics
    /// If more than `2^31 - 2` distinct URLs are interned: 20 bytes a chunk
    /// leave 31 bits for a URL id, and a document naming that many files
    /// runs out of memory long before.
    fn intern(&mut self, url: Option<&str>) -> Option<UrlId> {
        let url = url?;
        if let Some((last, id)) = &self.last_url
            && **last == *url
        {
            return Some(*id);
        }
        if let Some((known, &id)) = self.url_ids.get_key_value(url) {
            self.last_url = Some((Arc::clone(known), id));
            return Some(id);
        }
        let id = u32::try_from(self.urls.len()).ok().filter(|&id| id < MAX_URLS).expect("fewer than 2^31 - 2 URLs");
        let id = UrlId(id);
        let url: Arc<str> = Arc::from(url);
        self.urls.push(Arc::clone(&url));
        self.last_url = Some((Arc::clone(&url), id));
        self.url_ids.insert(url, id);
        Some(id)
    }

    /// Set `key` to an inline value.
    pub fn insert_inline(&mut self, key: &str, value: &[u8]) {
        let start = self.inline.len() as u64;
        self.inline.extend_from_slice(value);
        self.insert(key, Stored::Inline { start, len: value.len() as u64 });
    }

    /// Set `key` to the whole of `url` (`None`: the default target).
    ///
    /// # Panics
    /// If more than `2^31 - 2` distinct URLs are inserted.
    pub fn insert_whole(&mut self, key: &str, url: Option<&str>) {
        let url = self.intern(url);
        self.insert(key, Stored::Whole(url));
    }

    /// Set `key` to `length` bytes of `url` from `offset` (`None`: the default target).
    ///
    /// # Panics
    /// If more than `2^31 - 2` distinct URLs are inserted.
    pub fn insert_range(&mut self, key: &str, url: Option<&str>, offset: u64, length: u64) {
        let url = self.intern(url);
        self.insert(key, Stored::Range { url, offset, length });
    }

    /// Set `key` to a reference that cannot be read, saying why (see
    /// [`Reference::Malformed`](super::Reference::Malformed)): the key exists,
    /// and reading it is an error with `reason`.
    pub fn insert_malformed(&mut self, key: &str, reason: &str) {
        let start = self.inline.len() as u64;
        self.inline.extend_from_slice(reason.as_bytes());
        self.insert(key, Stored::Malformed { start, len: reason.len() as u64 });
    }

    /// Set `key` to `reference`, of whatever kind (a copy of another set's entry).
    ///
    /// # Panics
    /// As [`insert_range`](Self::insert_range), for a reference naming a URL.
    pub fn insert_reference(&mut self, key: &str, reference: super::Reference<'_>) {
        match reference {
            super::Reference::Inline(bytes) => self.insert_inline(key, bytes),
            super::Reference::Whole { url } => self.insert_whole(key, url),
            super::Reference::Range { url, offset, length } => self.insert_range(key, url, offset, length),
            super::Reference::Malformed { reason } => self.insert_malformed(key, reason),
        }
    }

    fn insert(&mut self, key: &str, entry: Stored) {
        if let Some((path, table)) = &mut self.filling
            && let Some(position) = chunk_position(path, table, key)
        {
            table.insert(position, entry);
            return;
        }
        self.put_back_filling();
        if let Some((path, position)) = self.tables.find(key) {
            let table = self.tables.get_mut(path).expect("a found table");
            table.insert(position, entry);
            // Nested keys (`0/1/2`) are found by counting slashes across every table:
            // their tables stay in place.
            if table.grid().separator() == '.' || table.grid().dims().len() < 2 {
                let path: Box<str> = path.into();
                self.filling = self.tables.take(&path).map(|table| (path, table));
            }
            return;
        }
        self.loose.insert(key.into(), entry);
        if let Some(path) = key.strip_suffix(".zarray").and_then(array_path) {
            self.array_metadata_changed(key, path);
        }
    }

    /// Return the table being filled to `tables`, before anything else looks there.
    fn put_back_filling(&mut self) {
        if let Some((path, table)) = self.filling.take() {
            self.tables.put_back(path, table);
        }
    }

    /// Keep the table of the array at `path` in step with its `.zarray`, `key`.
    fn array_metadata_changed(&mut self, key: &str, path: &str) {
        let grid = match self.loose.get(key) {
            Some(&Stored::Inline { start, len }) => {
                ChunkGrid::from_zarray_document(&self.inline[span(start, len)]).ok()
            }
            _ => None,
        };
        if grid.is_some() && self.tables.get(path).map(ChunkTable::grid) == grid.as_ref() {
            return;
        }
        // The grid changed: the chunks placed by the old one become plain keys again.
        if let Some(old) = self.tables.remove(path) {
            for (position, entry) in old.entries() {
                self.loose.insert(old.key(path, position).into(), entry);
            }
        }
        if let Some(grid) = grid.filter(|grid| grid.count() > 0) {
            self.tables.insert(path, ChunkTable::new(grid));
        }
    }

    /// Finish the set.
    ///
    /// # Panics
    /// Never: the `expect`s state invariants of the builder's own bookkeeping.
    #[must_use]
    pub fn build(mut self) -> ReferenceSet {
        self.put_back_filling();
        loop {
            // Chunk keys inserted before their array's `.zarray` move to its table, as
            // older than any reference the table holds: no table held them when inserted.
            let mut claimed: HashMap<Box<str>, Vec<(u64, Stored)>> = HashMap::new();
            let keys: Vec<Box<str>> = self.loose.keys().filter(|k| self.tables.locate(k).is_some()).cloned().collect();
            for key in keys {
                let entry = self.loose.remove(&key).expect("a listed key");
                let (path, position) = self.tables.find(&key).expect("a located key");
                claimed.entry(path.into()).or_default().push((position, entry));
            }
            for (path, entries) in claimed {
                self.tables.get_mut(&path).expect("a found table").insert_older(entries);
            }
            // Tables too sparse to be dense give their keys back; these may fit another table.
            let mut demoted = false;
            for (path, mut table) in self.tables.take_all() {
                if table.finish() {
                    self.tables.insert(&path, table);
                } else {
                    demoted = true;
                    for (position, entry) in table.entries() {
                        self.loose.insert(table.key(&path, position).into(), entry);
                    }
                }
            }
            if !demoted {
                break;
            }
        }
        let len = self.loose.len() + self.tables.sorted().map(|(_, t)| t.present()).sum::<usize>();
        self.inline.shrink_to_fit();
        ReferenceSet { loose: self.loose, tables: self.tables, urls: self.urls, inline: self.inline.into(), len }
    }
}

/// The position of the chunk `key` names in `table`, the table of the array
/// at `path` (with `.`-joined chunk keys), if it names one: what
/// [`Tables::find`](super::table::Tables::find) would find there.
fn chunk_position(path: &str, table: &ChunkTable, key: &str) -> Option<u64> {
    let chunk = if path.is_empty() { key } else { key.strip_prefix(path)?.strip_prefix('/')? };
    // A `/` in `chunk` (a key of an array inside this one) is no chunk name of a
    // `.`-joined or one-dimensional grid: `position` refuses it.
    table.grid().position(chunk, true)
}

/// The array path of a key that ended in `.zarray` (given without it): `""` for the root.
fn array_path(rest: &str) -> Option<&str> {
    if rest.is_empty() { Some("") } else { rest.strip_suffix('/') }
}
