//! The reference model: what every key of a reference set points to.
//!
//! A [`ReferenceSet`] is built once by a parser and then only read. It knows
//! nothing of I/O: URLs are kept as written (after template expansion) and
//! interned, so that the layers above can resolve each distinct URL once.
//! The public view of an entry is the borrowed [`Reference`]; the storage
//! behind it is private so it can become columnar without changing the API.

use std::collections::{BTreeMap, HashMap};
use std::ops::Bound;

use bytes::Bytes;

/// The index of an interned target URL in a [`ReferenceSet`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct UrlId(u32);

impl UrlId {
    /// The id that stands for a `null` URL: the store's configured default target.
    pub const DEFAULT_TARGET: UrlId = UrlId(u32::MAX);

    /// The position of this URL in [`ReferenceSet::urls`], or `None` for
    /// [`UrlId::DEFAULT_TARGET`].
    #[must_use]
    pub fn index(self) -> Option<usize> {
        (self != Self::DEFAULT_TARGET).then_some(self.0 as usize)
    }
}

/// What one key of a reference set holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reference<'a> {
    /// The value itself (inline text, decoded base64, or a JSON object as JSON text).
    Inline(&'a [u8]),
    /// The whole of a target file: `[url]`.
    Whole(UrlId),
    /// `length` bytes of a target file starting at `offset`: `[url, offset, length]`.
    Range {
        /// The target file.
        url: UrlId,
        /// The first byte.
        offset: u64,
        /// The number of bytes.
        length: u64,
    },
}

/// What one key holds, owned and format-independent: what
/// [`ReferenceStore::reference`](crate::ReferenceStore::reference) answers for
/// JSON sets and parquet roots alike. URLs are as written in the references.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum OwnedReference {
    /// The value itself.
    Inline(Bytes),
    /// The whole of a target file (`None`: the default target).
    Whole {
        /// The target file.
        url: Option<String>,
    },
    /// `length` bytes of a target file from `offset` (`None`: the default target).
    Range {
        /// The target file.
        url: Option<String>,
        /// The first byte.
        offset: u64,
        /// The number of bytes.
        length: u64,
    },
}

#[derive(Clone, Copy, Debug)]
enum Entry {
    Inline { start: usize, len: usize },
    Whole(UrlId),
    Range { url: UrlId, offset: u64, length: u64 },
}

/// A parsed reference set: every key mapped to inline bytes or a target byte range.
///
/// Keys are kept sorted, so listings are cheap and deterministic.
#[derive(Debug, Default)]
pub struct ReferenceSet {
    entries: BTreeMap<Box<str>, Entry>,
    urls: Vec<Box<str>>,
    inline: Bytes,
}

impl ReferenceSet {
    /// The reference for `key`, if the set has one.
    #[must_use]
    pub fn get(&self, key: &str) -> Option<Reference<'_>> {
        self.entries.get(key).map(|entry| self.view(*entry))
    }

    /// The inline value of `key` as shared bytes (no copy), if `key` is inline.
    pub(crate) fn inline_bytes(&self, key: &str) -> Option<Bytes> {
        match self.entries.get(key)? {
            Entry::Inline { start, len } => Some(self.inline.slice(*start..start + len)),
            _ => None,
        }
    }

    /// The number of keys.
    #[must_use]
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether the set has no keys.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Every key with its reference, in sorted key order.
    pub fn iter(&self) -> impl Iterator<Item = (&str, Reference<'_>)> {
        self.entries.iter().map(|(k, e)| (&**k, self.view(*e)))
    }

    /// The keys that start with `prefix`, in sorted order.
    pub fn keys_with_prefix<'a>(&'a self, prefix: &'a str) -> impl Iterator<Item = &'a str> + 'a {
        self.entries
            .range::<str, _>((Bound::Included(prefix), Bound::Unbounded))
            .map(|(k, _)| &**k)
            .take_while(move |k| k.starts_with(prefix))
    }

    /// The first key at or after `from` in sorted order.
    pub(crate) fn first_key_from(&self, from: &str) -> Option<&str> {
        self.entries.range::<str, _>((Bound::Included(from), Bound::Unbounded)).next().map(|(k, _)| &**k)
    }

    /// The distinct target URLs, indexed by [`UrlId::index`].
    #[must_use]
    pub fn urls(&self) -> &[Box<str>] {
        &self.urls
    }

    /// The URL text of `id`, or `None` for the default target.
    #[must_use]
    pub fn url(&self, id: UrlId) -> Option<&str> {
        id.index().map(|i| &*self.urls[i])
    }

    fn view(&self, entry: Entry) -> Reference<'_> {
        match entry {
            Entry::Inline { start, len } => Reference::Inline(&self.inline[start..start + len]),
            Entry::Whole(url) => Reference::Whole(url),
            Entry::Range { url, offset, length } => Reference::Range { url, offset, length },
        }
    }
}

/// Builds a [`ReferenceSet`], interning URLs and packing inline values into one arena.
///
/// Inserting a key that is already present replaces it (as `gen` output
/// replaces same-named `refs` in fsspec).
#[derive(Debug, Default)]
pub struct ReferenceSetBuilder {
    entries: BTreeMap<Box<str>, Entry>,
    urls: Vec<Box<str>>,
    url_ids: HashMap<Box<str>, UrlId>,
    inline: Vec<u8>,
}

impl ReferenceSetBuilder {
    /// An empty builder.
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }

    /// Intern `url`, returning its id. `None` stands for the default target.
    ///
    /// # Panics
    /// Panics if more than `u32::MAX - 1` distinct URLs are interned.
    pub fn intern(&mut self, url: Option<&str>) -> UrlId {
        let Some(url) = url else {
            return UrlId::DEFAULT_TARGET;
        };
        if let Some(id) = self.url_ids.get(url) {
            return *id;
        }
        let id = UrlId(u32::try_from(self.urls.len()).expect("fewer than 2^32 distinct URLs"));
        assert!(id != UrlId::DEFAULT_TARGET, "too many distinct URLs");
        self.urls.push(url.into());
        self.url_ids.insert(url.into(), id);
        id
    }

    /// Set `key` to an inline value.
    pub fn insert_inline(&mut self, key: &str, value: &[u8]) {
        let start = self.inline.len();
        self.inline.extend_from_slice(value);
        self.entries.insert(key.into(), Entry::Inline { start, len: value.len() });
    }

    /// Set `key` to the whole of `url` (`None`: the default target).
    pub fn insert_whole(&mut self, key: &str, url: Option<&str>) {
        let url = self.intern(url);
        self.entries.insert(key.into(), Entry::Whole(url));
    }

    /// Set `key` to `length` bytes of `url` from `offset` (`None`: the default target).
    pub fn insert_range(&mut self, key: &str, url: Option<&str>, offset: u64, length: u64) {
        let url = self.intern(url);
        self.entries.insert(key.into(), Entry::Range { url, offset, length });
    }

    /// The number of keys so far.
    #[must_use]
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether no key has been inserted.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Finish the set.
    #[must_use]
    pub fn build(self) -> ReferenceSet {
        ReferenceSet { entries: self.entries, urls: self.urls, inline: Bytes::from(self.inline) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
        let Some(Reference::Range { url, offset: 15, length: 5 }) = set.get("x/1") else { panic!() };
        assert_eq!(set.url(url), Some("s3://b/f.nc"));
        assert_eq!(set.get("y/0"), Some(Reference::Whole(UrlId::DEFAULT_TARGET)));
        assert_eq!(set.url(UrlId::DEFAULT_TARGET), None);
        assert_eq!(set.keys_with_prefix("x/").collect::<Vec<_>>(), ["x/0", "x/1"]);
        assert_eq!(set.inline_bytes("a").as_deref(), Some(&b"data"[..]));
    }
}
