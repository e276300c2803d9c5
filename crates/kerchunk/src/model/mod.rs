//! The reference model: what every key of a reference set points to.
//!
//! A [`ReferenceSet`] is built once by a parser and then only read. It knows
//! nothing of I/O: URLs are kept as written (after template expansion) and
//! interned, so that the layers above can resolve each distinct URL once.
//!
//! The storage is columnar, because chunk references are nearly all of a
//! large set: the chunk keys of each array whose `.zarray` the set holds
//! live in a chunk table, dense columns indexed by C-order chunk position
//! (20 bytes a chunk, no key text). Only the other keys (metadata, keys
//! outside every grid, arrays too sparse for a dense table) are kept in a
//! sorted map. Inline values of both share one arena.

mod builder;
mod source;
mod table;

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::ops::Bound;
use std::sync::Arc;

use bytes::Bytes;

pub use builder::ReferenceSetBuilder;
pub use source::{Listing, Lookup, PendingKeys, PendingReference, ReferenceSource, Walk};
use table::{ChunkTable, Tables};

use crate::zarr::ChunkGrid;

/// The index of an interned target URL in a [`ReferenceSet`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(crate) struct UrlId(u32);

/// What one key of a reference set holds, borrowed from the set.
///
/// A `url` of `None` is a `null` URL in the document: the store's default
/// target (`zarrs_kerchunk::ReferenceStoreBuilder::with_target`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reference<'a> {
    /// The value itself (inline text, decoded base64, or a JSON object as JSON text).
    Inline(&'a [u8]),
    /// The whole of a target file: `[url]`.
    Whole {
        /// The target file, as written (after templates).
        url: Option<&'a str>,
    },
    /// `length` bytes of a target file starting at `offset`: `[url, offset, length]`.
    Range {
        /// The target file, as written (after templates).
        url: Option<&'a str>,
        /// The first byte.
        offset: u64,
        /// The number of bytes.
        length: u64,
    },
    /// A reference the document states but that cannot be read: a wrong
    /// number of elements, an offset that is not a non-negative integer, an
    /// end past `u64::MAX`, undecodable base64, and the like. Its key exists,
    /// and every read of it is an error naming the key and `reason`; the
    /// other keys of the set read as usual (as fsspec and GDAL read them).
    Malformed {
        /// What is wrong with the reference.
        reason: &'a str,
    },
}

/// What one key holds, owned: a [`Reference`] that outlives its source, as
/// every [`ReferenceSource`] answers, JSON sets and parquet roots alike.
/// Cloning is cheap (shared bytes and URLs).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum OwnedReference {
    /// The value itself.
    Inline(Bytes),
    /// The whole of a target file.
    Whole {
        /// The target file, as written (`None`: the default target).
        url: Option<Arc<str>>,
    },
    /// `length` bytes of a target file from `offset`.
    Range {
        /// The target file, as written (`None`: the default target).
        url: Option<Arc<str>>,
        /// The first byte.
        offset: u64,
        /// The number of bytes.
        length: u64,
    },
    /// A reference that cannot be read (see [`Reference::Malformed`]).
    Malformed {
        /// What is wrong with the reference.
        reason: Arc<str>,
    },
}

impl OwnedReference {
    /// The borrowed form.
    #[must_use]
    pub fn as_reference(&self) -> Reference<'_> {
        match self {
            Self::Inline(bytes) => Reference::Inline(bytes),
            Self::Whole { url } => Reference::Whole { url: url.as_deref() },
            Self::Range { url, offset, length } => {
                Reference::Range { url: url.as_deref(), offset: *offset, length: *length }
            }
            Self::Malformed { reason } => Reference::Malformed { reason },
        }
    }
}

/// One reference, as stored: inline values and the reasons of malformed
/// references are spans of the set's arena, URLs an interned id (`None`: a
/// `null` URL).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Stored {
    Inline { start: u64, len: u64 },
    Malformed { start: u64, len: u64 },
    Whole(Option<UrlId>),
    Range { url: Option<UrlId>, offset: u64, length: u64 },
}

/// A parsed reference set: every key mapped to inline bytes or a target byte range.
#[derive(Debug, Default)]
pub struct ReferenceSet {
    /// Every key that no chunk table holds, sorted.
    loose: BTreeMap<Box<str>, Stored>,
    /// The chunk references of arrays, by array path.
    tables: Tables,
    urls: Vec<Arc<str>>,
    inline: Bytes,
    len: usize,
}

impl ReferenceSet {
    /// The reference for `key`, if the set has one.
    #[must_use]
    pub fn get(&self, key: &str) -> Option<Reference<'_>> {
        self.entry(key).map(|entry| self.view(entry))
    }

    /// The reference for `key` in its owned form: shared bytes and URLs, no copy.
    #[must_use]
    pub fn get_owned(&self, key: &str) -> Option<OwnedReference> {
        self.entry(key).map(|entry| self.owned(entry))
    }

    fn entry(&self, key: &str) -> Option<Stored> {
        // A key that names a chunk of a table is only ever held by that table.
        match self.tables.locate(key) {
            Some((table, position)) => table.get(position),
            None => self.loose.get(key).copied(),
        }
    }

    /// The number of keys.
    #[must_use]
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the set has no keys.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Every key with its reference: first the keys outside array chunk
    /// grids (metadata, mostly) in sorted order, then each array's chunks in
    /// C order of their chunk position, arrays in sorted order of their path.
    ///
    /// Chunk keys are built as they are visited (they are not stored), hence
    /// the [`Cow`].
    pub fn iter(&self) -> impl Iterator<Item = (Cow<'_, str>, Reference<'_>)> {
        self.entries().map(|(key, entry)| (key, self.view(entry)))
    }

    /// [`iter`](Self::iter), with each reference in its owned form.
    pub fn iter_owned(&self) -> impl Iterator<Item = (Cow<'_, str>, OwnedReference)> {
        self.entries().map(|(key, entry)| (key, self.owned(entry)))
    }

    fn entries(&self) -> impl Iterator<Item = (Cow<'_, str>, Stored)> {
        let loose = self.loose.iter().map(|(k, e)| (Cow::Borrowed(&**k), *e));
        let chunks = self.tables.sorted().flat_map(move |(path, table)| {
            table.entries().map(move |(position, entry)| (Cow::Owned(table.key(path, position)), entry))
        });
        loose.chain(chunks)
    }

    /// The keys that start with `prefix`, in sorted order.
    #[must_use]
    pub fn keys_with_prefix(&self, prefix: &str) -> Vec<String> {
        let mut keys: Vec<String> =
            self.loose_keys_from(prefix).take_while(|k| k.starts_with(prefix)).map(str::to_owned).collect();
        for (path, table) in self.tables.sorted() {
            if !table.may_hold_prefix(path, prefix) {
                continue;
            }
            keys.extend(
                table.entries().map(|(position, _)| table.key(path, position)).filter(|k| k.starts_with(prefix)),
            );
        }
        keys.sort_unstable();
        keys
    }

    /// The grid of the chunk table of the array at `path`, if it has one.
    pub(crate) fn table_grid(&self, path: &str) -> Option<&ChunkGrid> {
        self.tables.get(path).map(ChunkTable::grid)
    }

    /// The keys directly under the folder `prefix` (`""` or ending in `/`) and
    /// its child folders (each ending in `/`), both sorted.
    pub(crate) fn list_dir(&self, prefix: &str) -> (Vec<String>, Vec<String>) {
        let (mut keys, mut folders) = (Vec::new(), Vec::new());
        let mut file = |key: &str| match key[prefix.len()..].split_once('/') {
            Some((child, _)) => folders.push(format!("{prefix}{child}/")),
            None => keys.push(key.to_owned()),
        };
        let mut cursor = Cow::Borrowed(prefix);
        while let Some(key) = self.loose_keys_from(&cursor).next().filter(|k| k.starts_with(prefix)) {
            file(key);
            let rest = &key[prefix.len()..];
            cursor = match rest.split_once('/') {
                // Jump past every key under this child: '0' sorts right after '/'.
                Some((child, _)) => Cow::Owned(format!("{prefix}{child}0")),
                None => Cow::Owned(format!("{key}\0")),
            };
        }
        for (path, table) in self.tables.sorted() {
            if !table.may_hold_prefix(path, prefix) {
                continue;
            }
            let folder = table::folder(path);
            if folder.len() > prefix.len() {
                // The whole array lies in one child folder: no need to visit its chunks.
                file(&folder);
            } else {
                for (position, _) in table.entries() {
                    let key = table.key(path, position);
                    if key.starts_with(prefix) {
                        file(&key);
                    }
                }
            }
        }
        for names in [&mut keys, &mut folders] {
            names.sort_unstable();
            names.dedup();
        }
        (keys, folders)
    }

    /// The keys that no chunk table holds, sorted, with their references: the metadata, and the
    /// chunk keys of arrays without a table ([`array_chunks`](Self::array_chunks)) or outside
    /// their grid. With `array_chunks`, every key of the set without building chunk keys.
    pub fn loose(&self) -> impl Iterator<Item = (&str, Reference<'_>)> {
        self.loose.iter().map(|(key, entry)| (&**key, self.view(*entry)))
    }

    /// The chunk references the chunk table of the array at `path` holds, with the table's grid:
    /// each with its chunk's C-order position in that grid, in that order. `None` if the set
    /// keeps the array's chunk keys, if any, among the [`loose`](Self::loose) ones.
    ///
    /// ```
    /// use kerchunk::{Reference, ReferenceSetBuilder};
    ///
    /// let mut builder = ReferenceSetBuilder::new();
    /// builder.insert_inline("a/.zarray", br#"{"shape":[4],"chunks":[2],"dtype":"<i2","fill_value":null,"compressor":null,"filters":null,"order":"C","zarr_format":2}"#);
    /// builder.insert_range("a/1", Some("data.bin"), 8, 4);
    /// let set = builder.build();
    /// let (grid, chunks) = set.array_chunks("a").unwrap();
    /// assert_eq!(grid.dims(), [2]);
    /// let chunks: Vec<_> = chunks.collect();
    /// assert_eq!(chunks, [(1, Reference::Range { url: Some("data.bin"), offset: 8, length: 4 })]);
    /// ```
    #[must_use]
    pub fn array_chunks(&self, path: &str) -> Option<(&ChunkGrid, impl Iterator<Item = (u64, Reference<'_>)>)> {
        let table = self.tables.get(path)?;
        Some((table.grid(), table.entries().map(|(position, entry)| (position, self.view(entry)))))
    }

    /// [`array_chunks`](Self::array_chunks), each reference in its owned form.
    #[must_use]
    pub fn array_chunks_owned(&self, path: &str) -> Option<(&ChunkGrid, impl Iterator<Item = (u64, OwnedReference)>)> {
        let table = self.tables.get(path)?;
        Some((table.grid(), table.entries().map(|(position, entry)| (position, self.owned(entry)))))
    }

    /// The keys outside chunk tables from `from` on, in sorted order.
    fn loose_keys_from<'a>(&'a self, from: &str) -> impl Iterator<Item = &'a str> + use<'a> {
        self.loose.range::<str, _>((Bound::Included(from), Bound::Unbounded)).map(|(k, _)| &**k)
    }

    /// The distinct target URLs, as written (after templates), in the order
    /// they were first met. A `null` URL is not among them.
    pub fn urls(&self) -> impl ExactSizeIterator<Item = &str> {
        self.urls.iter().map(|url| &**url)
    }

    fn url(&self, id: Option<UrlId>) -> Option<&str> {
        id.map(|UrlId(i)| &*self.urls[i as usize])
    }

    /// The bytes of memory the references take: the key map, the chunk
    /// tables, the URLs and the inline arena (allocator overhead not counted).
    #[must_use]
    pub fn memory_size(&self) -> usize {
        // A B-tree node holds up to 11 entries; count each entry with its share of a node.
        let loose: usize = self.loose.keys().map(|k| k.len() + size_of::<(Box<str>, Stored)>() * 3 / 2).sum();
        let urls: usize = self.urls.iter().map(|u| u.len() + size_of::<Arc<str>>() + 2 * size_of::<usize>()).sum();
        loose + self.tables.memory_size() + urls + self.inline.len()
    }

    fn owned(&self, entry: Stored) -> OwnedReference {
        let url = |id: Option<UrlId>| id.map(|UrlId(i)| Arc::clone(&self.urls[i as usize]));
        match entry {
            Stored::Inline { start, len } => OwnedReference::Inline(self.inline.slice(span(start, len))),
            Stored::Whole(id) => OwnedReference::Whole { url: url(id) },
            Stored::Range { url: id, offset, length } => OwnedReference::Range { url: url(id), offset, length },
            Stored::Malformed { start, len } => {
                OwnedReference::Malformed { reason: Arc::from(self.reason(start, len)) }
            }
        }
    }

    fn view(&self, entry: Stored) -> Reference<'_> {
        match entry {
            Stored::Inline { start, len } => Reference::Inline(&self.inline[span(start, len)]),
            Stored::Whole(url) => Reference::Whole { url: self.url(url) },
            Stored::Range { url, offset, length } => Reference::Range { url: self.url(url), offset, length },
            Stored::Malformed { start, len } => Reference::Malformed { reason: self.reason(start, len) },
        }
    }

    /// The reason of a malformed reference: text the builder put in the arena.
    fn reason(&self, start: u64, len: u64) -> &str {
        std::str::from_utf8(&self.inline[span(start, len)]).unwrap_or("malformed reference")
    }

    /// The keys whose references are malformed, with what is wrong with each
    /// (see [`Reference::Malformed`]), in the order of [`iter`](Self::iter).
    pub fn malformed(&self) -> impl Iterator<Item = (Cow<'_, str>, &str)> {
        // Only a malformed chunk's key is built: combining asks this of every set it opens.
        let is_malformed = |entry: &Stored| matches!(entry, Stored::Malformed { .. });
        let loose = self.loose.iter().filter(move |(_, e)| is_malformed(e)).map(|(k, e)| (Cow::Borrowed(&**k), *e));
        let chunks = self.tables.sorted().flat_map(move |(path, table)| {
            table
                .entries()
                .filter(move |(_, e)| is_malformed(e))
                .map(move |(position, entry)| (Cow::Owned(table.key(path, position)), entry))
        });
        loose.chain(chunks).filter_map(|(key, entry)| match self.view(entry) {
            Reference::Malformed { reason } => Some((key, reason)),
            _ => None,
        })
    }
}

/// The arena span of an inline value; spans index an in-memory arena, so they fit a `usize`.
#[expect(clippy::cast_possible_truncation, reason = "spans of an arena in memory")]
fn span(start: u64, len: u64) -> std::ops::Range<usize> {
    start as usize..(start + len) as usize
}

#[cfg(test)]
mod tests {
    use super::*;
    use table::ChunkTable;

    #[test]
    fn interning_and_views() {
        let mut b = ReferenceSetBuilder::new();
        b.insert_inline("a", b"data");
        b.insert_range("x/0", Some("s3://b/f.nc"), 10, 5);
        b.insert_range("x/1", Some("s3://b/f.nc"), 15, 5);
        b.insert_whole("y/0", None);
        let set = b.build();
        assert_eq!(set.urls().len(), 1);
        assert_eq!(set.get("a"), Some(Reference::Inline(b"data")));
        assert_eq!(set.get("x/1"), Some(Reference::Range { url: Some("s3://b/f.nc"), offset: 15, length: 5 }));
        assert_eq!(set.get("y/0"), Some(Reference::Whole { url: None }));
        assert_eq!(set.urls().collect::<Vec<_>>(), ["s3://b/f.nc"]);
        assert_eq!(set.keys_with_prefix("x/"), ["x/0", "x/1"]);
        assert_eq!(set.get_owned("a"), Some(OwnedReference::Inline(Bytes::from_static(b"data"))));
        let Some(OwnedReference::Range { url: Some(url), .. }) = set.get_owned("x/0") else { panic!() };
        let Some(OwnedReference::Range { url: Some(other), .. }) = set.get_owned("x/1") else { panic!() };
        assert!(Arc::ptr_eq(&url, &other), "URLs are shared, not copied");
    }

    fn zarray(shape: &[u64], chunks: &[u64], separator: &str) -> Vec<u8> {
        let doc = format!(
            r#"{{"shape": {shape:?}, "chunks": {chunks:?}, "dimension_separator": "{separator}", "fill_value": NaN}}"#
        );
        doc.into_bytes()
    }

    /// Every key with its reference, sorted, URLs as text.
    fn dump(set: &ReferenceSet) -> Vec<String> {
        let mut lines: Vec<String> = set
            .iter()
            .map(|(k, r)| match r {
                Reference::Inline(v) => format!("{k} inline {v:?}"),
                Reference::Whole { url } => format!("{k} whole {url:?}"),
                Reference::Range { url, offset, length } => format!("{k} {url:?} {offset} {length}"),
                Reference::Malformed { reason } => format!("{k} malformed {reason}"),
            })
            .collect();
        lines.sort();
        lines
    }

    #[test]
    fn chunk_keys_live_in_tables_whatever_the_order() {
        let insert_chunks = |b: &mut ReferenceSetBuilder| {
            b.insert_range("a/1.2", Some("f"), 12, 1);
            b.insert_whole("a/0.0", None);
            b.insert_inline("a/2.1", b"tiny");
            b.insert_range("a/01.2", Some("f"), 99, 1); // not canonical: a key of its own
            b.insert_range("a/3.0", Some("f"), 99, 1); // outside the grid
            b.insert_range("a/1.2", Some("g"), 120, 2); // replaces the first
        };
        let metadata_first = {
            let mut b = ReferenceSetBuilder::new();
            b.insert_inline("a/.zarray", &zarray(&[5, 9], &[2, 3], "."));
            insert_chunks(&mut b);
            b.build()
        };
        let metadata_last = {
            let mut b = ReferenceSetBuilder::new();
            insert_chunks(&mut b);
            b.insert_inline("a/.zarray", &zarray(&[5, 9], &[2, 3], "."));
            b.build()
        };
        for set in [&metadata_first, &metadata_last] {
            assert_eq!(set.len(), 6);
            assert_eq!(set.tables.get("a").map(ChunkTable::present), Some(3));
            assert!(matches!(set.get("a/1.2"), Some(Reference::Range { url: Some("g"), offset: 120, length: 2 })));
            assert_eq!(set.get("a/0.0"), Some(Reference::Whole { url: None }));
            assert_eq!(set.get("a/2.1"), Some(Reference::Inline(b"tiny")));
            assert!(set.get("a/01.2").is_some() && set.get("a/3.0").is_some());
            assert_eq!(set.get("a/1.1"), None);
            assert_eq!(set.get("a/1"), None);
        }
        assert_eq!(dump(&metadata_first), dump(&metadata_last));
        assert_eq!(set_keys(&metadata_first, ""), (vec![], vec!["a/".to_owned()]));
        assert_eq!(
            set_keys(&metadata_first, "a/"),
            (["a/.zarray", "a/0.0", "a/01.2", "a/1.2", "a/2.1", "a/3.0"].map(String::from).to_vec(), vec![])
        );
        assert_eq!(metadata_first.keys_with_prefix("a/1"), ["a/1.2"]);
    }

    fn set_keys(set: &ReferenceSet, prefix: &str) -> (Vec<String>, Vec<String>) {
        set.list_dir(prefix)
    }

    #[test]
    fn nested_and_root_arrays() {
        let mut b = ReferenceSetBuilder::new();
        b.insert_inline(".zarray", &zarray(&[4], &[2], "."));
        b.insert_inline("g/n/.zarray", &zarray(&[4, 4, 4], &[2, 2, 2], "/"));
        b.insert_inline("g/one/.zarray", &zarray(&[4], &[1], "/"));
        b.insert_range("1", Some("r"), 1, 1);
        b.insert_range("g/n/1/0/1", Some("n"), 101, 1);
        b.insert_range("g/n/1.0.1", Some("n"), 0, 1); // the wrong separator: a plain key
        b.insert_range("g/one/3", Some("o"), 3, 1);
        let set = b.build();
        let present = |path: &str| set.tables.get(path).map(ChunkTable::present);
        assert_eq!((present(""), present("g/n"), present("g/one")), (Some(1), Some(1), Some(1)));
        assert!(matches!(set.get("g/n/1/0/1"), Some(Reference::Range { offset: 101, .. })));
        assert!(set.get("g/n/1.0.1").is_some() && set.get("g/n/1/0/0").is_none());
        assert_eq!(
            set.list_dir("g/n/"),
            (vec!["g/n/.zarray".to_owned(), "g/n/1.0.1".to_owned()], vec!["g/n/1/".to_owned()])
        );
        assert_eq!(set.list_dir("g/n/1/0/"), (vec!["g/n/1/0/1".to_owned()], vec![]));
        assert_eq!(set.list_dir("g/"), (vec![], vec!["g/n/".to_owned(), "g/one/".to_owned()]));
        assert_eq!(set.list_dir("").0, [".zarray", "1"]);
        assert_eq!(set.len(), 7);
    }

    /// The builder keeps the table it fills out of the others (`filling`):
    /// switching between arrays, one inside another and the root, must place
    /// every chunk as looking each one up would.
    #[test]
    fn chunks_of_interleaved_arrays_find_their_tables() {
        let mut b = ReferenceSetBuilder::new();
        b.insert_inline(".zarray", &zarray(&[3], &[1], "."));
        b.insert_inline("v/.zarray", &zarray(&[2, 2], &[1, 1], "."));
        b.insert_inline("v/x/.zarray", &zarray(&[2], &[1], "."));
        for (key, offset) in [("v/0.0", 1), ("v/x/1", 2), ("0", 3), ("v/0.1", 4), ("v/x/0", 5), ("2", 6), ("v/1.1", 7)]
        {
            b.insert_range(key, Some("f"), offset, 1);
        }
        b.insert_range("v/0.0", Some("f"), 8, 1); // replaces the first
        b.insert_range("v/x/2", Some("f"), 9, 1); // outside v/x's grid: a plain key
        let set = b.build();
        let present = |path: &str| set.tables.get(path).map(ChunkTable::present);
        assert_eq!((present(""), present("v"), present("v/x")), (Some(2), Some(3), Some(2)));
        for (key, offset) in [("v/0.0", 8), ("v/x/1", 2), ("0", 3), ("v/0.1", 4), ("v/x/0", 5), ("2", 6), ("v/1.1", 7)]
        {
            assert!(matches!(set.get(key), Some(Reference::Range { offset: o, .. }) if o == offset), "{key}");
        }
        assert!(set.loose.contains_key("v/x/2"));
        assert_eq!(set.len(), 11, "3 .zarray, 7 chunks in tables, 1 plain key");
    }

    #[test]
    fn a_changed_zarray_moves_chunks_back_to_keys() {
        let mut b = ReferenceSetBuilder::new();
        b.insert_inline("a/.zarray", &zarray(&[10], &[1], "."));
        b.insert_range("a/7", Some("f"), 7, 1);
        b.insert_inline("a/.zarray", &zarray(&[5], &[1], "."));
        b.insert_range("a/2", Some("f"), 2, 1);
        let set = b.build();
        // a/7 lies outside the new grid; it stays, as a plain key.
        assert!(matches!(set.get("a/7"), Some(Reference::Range { offset: 7, .. })));
        assert!(set.loose.contains_key("a/7"));
        assert_eq!(set.tables.get("a").map(ChunkTable::present), Some(1));
        // Metadata that is not a chunk grid leaves every key plain.
        let mut b = ReferenceSetBuilder::new();
        b.insert_inline("a/.zarray", &zarray(&[10], &[1], "."));
        b.insert_range("a/7", Some("f"), 7, 1);
        b.insert_whole("a/.zarray", Some("meta.json"));
        let set = b.build();
        assert!(set.tables.get("a").is_none() && set.get("a/7").is_some());
    }

    #[test]
    fn sparse_grids_stay_keys() {
        let mut b = ReferenceSetBuilder::new();
        b.insert_inline("a/.zarray", &zarray(&[1 << 40], &[1], "."));
        for i in [5u64, 1 << 39, 17] {
            b.insert_range(&format!("a/{i}"), Some("f"), i, 1);
        }
        let set = b.build();
        assert!(set.tables.get("a").is_none());
        assert_eq!(set.len(), 4);
        assert!(
            matches!(set.get(&format!("a/{}", 1u64 << 39)), Some(Reference::Range { offset, .. }) if offset == 1 << 39)
        );
        assert!(set.memory_size() < 10_000);
    }

    #[test]
    fn a_dense_table_costs_20_bytes_a_chunk() {
        let mut b = ReferenceSetBuilder::new();
        b.insert_inline("v/.zarray", &zarray(&[100, 1000], &[1, 1], "."));
        for i in 0..100 {
            for j in 0..1000 {
                b.insert_range(&format!("v/{i}.{j}"), Some("data.bin"), (i * 1000 + j) * 8, 8);
            }
        }
        let set = b.build();
        assert_eq!(set.len(), 100_001);
        let per_chunk = set.memory_size() / 100_000;
        assert_eq!(per_chunk, 20);
        assert!(matches!(set.get("v/99.999"), Some(Reference::Range { offset: 799_992, length: 8, .. })));
    }

    /// Memory follows the references, not the grids: many arrays that each
    /// hold one chunk far out in a large grid cost no dense table each.
    #[test]
    fn one_far_chunk_per_array_costs_no_table() {
        let mut b = ReferenceSetBuilder::new();
        for a in 0..2000 {
            b.insert_inline(&format!("a{a}/.zarray"), &zarray(&[1 << 20], &[1], "."));
            b.insert_range(&format!("a{a}/{}", (1 << 16) - 1), Some("f"), 0, 1);
        }
        let set = b.build();
        assert_eq!(set.len(), 4000);
        let per_array = set.memory_size() / 2000;
        assert!(per_array < 2048, "{per_array} bytes an array");
        assert!(matches!(set.get("a1999/65535"), Some(Reference::Range { url: Some("f"), .. })));
    }
}
