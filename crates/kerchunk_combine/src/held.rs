//! What combining holds of each file, and how little it can be.
//!
//! An archive's files are alike: the same arrays, metadata and coordinates,
//! with only the values along the combined dimension (and the names of the
//! files their ranges point into) differing. Combining a file at a time
//! ([`FileRests`]) therefore holds each file's references as what differs from
//! the first file's, so that what it holds grows with what differs between the
//! files, not with their metadata; combining reads each through
//! [`FileReferences`], as if whole.

use std::borrow::Cow;
use std::sync::Arc;

use kerchunk::{OwnedReference, Reference, ReferenceSet};

use super::is_metadata;

/// Keys and their references, as combining reads a file's: a whole
/// [`ReferenceSet`] or a [`FileReferences`].
pub(super) trait Keyed {
    /// The reference of `key`, if there is one.
    fn reference(&self, key: &str) -> Option<Reference<'_>>;
    /// Every key that no chunk table holds, its metadata keys among them, in no particular
    /// order (perhaps some chunk keys too): the keys to look through for arrays, without
    /// building a key for each chunk.
    fn untabled_keys(&self) -> Box<dyn Iterator<Item = Cow<'_, str>> + '_>;
}

impl Keyed for ReferenceSet {
    fn reference(&self, key: &str) -> Option<Reference<'_>> {
        self.get(key)
    }

    fn untabled_keys(&self) -> Box<dyn Iterator<Item = Cow<'_, str>> + '_> {
        Box::new(self.loose().map(|(key, _)| Cow::Borrowed(key)))
    }
}

/// One file's references, as combining reads them: a whole set, or another
/// file's with the keys that differ.
#[derive(Debug)]
pub(crate) enum FileReferences {
    /// The file's own set, boxed: a set is nearly three times the size of the other form
    /// (152 bytes, 56), and a combine holds one of these for every file.
    Whole(Box<ReferenceSet>),
    /// `like`, but for the keys `changed` (sorted, each with this file's
    /// reference) and those `removed` (sorted, absent here).
    Alike { like: Arc<ReferenceSet>, changed: Vec<(Box<str>, OwnedReference)>, removed: Vec<Box<str>> },
}

impl From<ReferenceSet> for FileReferences {
    fn from(set: ReferenceSet) -> Self {
        Self::Whole(Box::new(set))
    }
}

impl FileReferences {
    /// `set`, held as what differs from `like` when that is at most half its keys
    /// (a file unlike the others is held whole, as cheaply as it comes).
    pub(super) fn alike(set: ReferenceSet, like: &Arc<ReferenceSet>) -> Self {
        let half = set.len() / 2;
        let mut changed = Vec::new();
        for (key, reference) in set.iter() {
            if like.get(&key) != Some(reference) {
                changed.push((Box::<str>::from(key.as_ref()), owned(reference)));
                // Past half, stop copying: the file is held whole.
                if changed.len() > half {
                    break;
                }
            }
        }
        if changed.len() > half {
            return Self::Whole(Box::new(set));
        }
        let mut removed: Vec<Box<str>> =
            like.iter().filter(|(key, _)| set.get(key).is_none()).map(|(key, _)| key.as_ref().into()).collect();
        if changed.len() + removed.len() > half {
            return Self::Whole(Box::new(set));
        }
        changed.sort_unstable_by(|a, b| a.0.cmp(&b.0));
        removed.sort_unstable();
        changed.shrink_to_fit();
        removed.shrink_to_fit();
        Self::Alike { like: Arc::clone(like), changed, removed }
    }

    /// The reference of `key`, if the file has one.
    pub(crate) fn get(&self, key: &str) -> Option<Reference<'_>> {
        match self {
            Self::Whole(set) => set.get(key),
            Self::Alike { like, changed, removed } => match changed.binary_search_by(|(k, _)| k.as_ref().cmp(key)) {
                Ok(at) => Some(changed[at].1.as_reference()),
                Err(_) if holds(removed, key) => None,
                Err(_) => like.get(key),
            },
        }
    }

    /// Every key of the file with its reference, in no particular order.
    pub(crate) fn iter(&self) -> Box<dyn Iterator<Item = (Cow<'_, str>, Reference<'_>)> + '_> {
        match self {
            Self::Whole(set) => Box::new(set.iter()),
            Self::Alike { like, changed, removed } => {
                let own =
                    changed.iter().map(|(key, reference)| (Cow::Borrowed(key.as_ref()), reference.as_reference()));
                let shared = like.iter().filter(move |(key, _)| {
                    changed.binary_search_by(|(k, _)| k.as_ref().cmp(key)).is_err() && !holds(removed, key)
                });
                Box::new(own.chain(shared))
            }
        }
    }

    /// The set whose metadata (every key whose name starts `.z`: `.zarray`, `.zattrs`,
    /// `.zgroup`) is the file's too, where it is held as what differs from it: what is read of
    /// its metadata can be read once for every file alike.
    pub(crate) fn metadata_as(&self) -> Option<&Arc<ReferenceSet>> {
        let Self::Alike { like, changed, removed } = self else { return None };
        let differs = changed.iter().any(|(key, _)| is_metadata(key)) || removed.iter().any(|key| is_metadata(key));
        (!differs).then_some(like)
    }

    /// Every key of the file that starts with `prefix` (an array's, say), with its reference,
    /// in no particular order: found without walking the file's other keys, which, done for each
    /// of its arrays, made combining quadratic in arrays.
    pub(crate) fn with_prefix(&self, prefix: &str) -> Vec<(String, Reference<'_>)> {
        match self {
            Self::Whole(set) => set.keys_with_prefix(prefix).into_iter().filter_map(|key| of(set, key)).collect(),
            Self::Alike { like, changed, removed } => {
                let start = changed.partition_point(|(key, _)| key.as_ref() < prefix);
                let own = changed[start..].iter().take_while(|(key, _)| key.starts_with(prefix));
                let own = own.map(|(key, reference)| (key.to_string(), reference.as_reference()));
                let shared = like.keys_with_prefix(prefix).into_iter().filter(|key| {
                    changed.binary_search_by(|(k, _)| k.as_ref().cmp(key)).is_err() && !holds(removed, key)
                });
                own.chain(shared.filter_map(|key| of(like, key))).collect()
            }
        }
    }
}

impl Keyed for FileReferences {
    fn reference(&self, key: &str) -> Option<Reference<'_>> {
        self.get(key)
    }

    fn untabled_keys(&self) -> Box<dyn Iterator<Item = Cow<'_, str>> + '_> {
        match self {
            Self::Whole(set) => set.untabled_keys(),
            Self::Alike { like, changed, removed } => {
                let own = changed.iter().map(|(key, _)| Cow::Borrowed(key.as_ref()));
                let shared = like.loose().map(|(key, _)| key).filter(move |key| {
                    changed.binary_search_by(|(k, _)| k.as_ref().cmp(key)).is_err() && !holds(removed, key)
                });
                Box::new(own.chain(shared.map(Cow::Borrowed)))
            }
        }
    }
}

/// `key` with its reference in `set`, if it has one.
fn of(set: &ReferenceSet, key: String) -> Option<(String, Reference<'_>)> {
    set.get(&key).map(|reference| (key, reference))
}

/// Whether the sorted `keys` hold `key`.
fn holds(keys: &[Box<str>], key: &str) -> bool {
    keys.binary_search_by(|k| k.as_ref().cmp(key)).is_ok()
}

/// `reference` in its owned form, its bytes and URL copied: the set's own owned form
/// ([`ReferenceSet::get_owned`]) shares its arena, which would keep the whole set alive.
fn owned(reference: Reference<'_>) -> OwnedReference {
    match reference {
        Reference::Inline(bytes) => OwnedReference::Inline(bytes.to_vec().into()),
        Reference::Whole { url } => OwnedReference::Whole { url: url.map(Arc::from) },
        Reference::Range { url, offset, length } => OwnedReference::Range { url: url.map(Arc::from), offset, length },
        Reference::Malformed { reason } => OwnedReference::Malformed { reason: Arc::from(reason) },
    }
}

/// What [`combine_streamed`](crate::combine_streamed) holds of each file to order
/// and check it: each file's references but its combined chunks
/// ([`split_combined_chunks`](crate::split_combined_chunks)), in the order added,
/// each held as what differs from the first file's. Files alike, as an
/// archive's are, cost what differs (their coordinate values, and the ranges
/// that name them), not their metadata again.
#[derive(Debug, Default)]
pub struct FileRests {
    /// The first file's, which the others are held against.
    first: Option<Arc<ReferenceSet>>,
    files: Vec<(String, FileReferences)>,
}

impl FileRests {
    /// No files yet.
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }

    /// Add the rest of the file `name`'s references (`rest`), after those added before.
    pub fn push(&mut self, name: String, rest: ReferenceSet) {
        let held = if let Some(first) = &self.first {
            FileReferences::alike(rest, first)
        } else {
            let first = Arc::new(rest);
            self.first = Some(Arc::clone(&first));
            FileReferences::Alike { like: first, changed: Vec::new(), removed: Vec::new() }
        };
        self.files.push((name, held));
    }

    /// The number of files added.
    #[must_use]
    pub fn len(&self) -> usize {
        self.files.len()
    }

    /// Whether no file was added.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.files.is_empty()
    }

    /// Every file's name and references, in the order added.
    pub(super) fn into_files(self) -> Vec<(String, FileReferences)> {
        self.files
    }
}

impl FromIterator<(String, ReferenceSet)> for FileRests {
    fn from_iter<I: IntoIterator<Item = (String, ReferenceSet)>>(iter: I) -> Self {
        let mut rests = Self::new();
        for (name, rest) in iter {
            rests.push(name, rest);
        }
        rests
    }
}

#[cfg(test)]
mod tests {
    use kerchunk::ReferenceSetBuilder;

    use super::*;

    fn set(entries: &[(String, String)]) -> ReferenceSet {
        let mut builder = ReferenceSetBuilder::new();
        for (key, value) in entries {
            builder.insert_inline(key, value.as_bytes());
        }
        builder.build()
    }

    /// Eight keys every file shares, and `extra`.
    fn with(extra: &[(&str, &str)]) -> Vec<(String, String)> {
        let mut all: Vec<(String, String)> = (0..8).map(|i| (format!("k{i}"), format!("v{i}"))).collect();
        all.extend(extra.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())));
        all
    }

    /// The inline entries of `held`, sorted.
    fn entries_of(held: &FileReferences) -> Vec<(String, Vec<u8>)> {
        let mut read: Vec<(String, Vec<u8>)> = held
            .iter()
            .map(|(key, reference)| match reference {
                Reference::Inline(bytes) => (key.into_owned(), bytes.to_vec()),
                other => panic!("{key}: {other:?}"),
            })
            .collect();
        read.sort();
        read
    }

    /// A file held against another reads as itself: changed, removed and shared keys alike.
    #[test]
    fn a_file_held_as_its_differences_reads_as_itself() {
        let first = with(&[("time/0", "0")]);
        let mut second = with(&[("time/0", "1"), ("new", "x")]);
        second.retain(|(key, _)| key != "k3");
        let third = vec![("only".to_owned(), "c".to_owned())];
        let mut rests = FileRests::new();
        for (name, entries) in [("a", &first), ("b", &second), ("c", &third)] {
            rests.push(name.into(), set(entries));
        }
        let files = rests.into_files();
        assert!(
            matches!(&files[1].1, FileReferences::Alike { changed, removed, .. } if changed.len() == 2 && removed.len() == 1),
            "{:?}",
            files[1].1
        );
        assert!(matches!(files[2].1, FileReferences::Whole(_)), "a file unlike the first is held whole");
        for ((_, held), entries) in files.iter().zip([&first, &second, &third]) {
            let mut expected: Vec<(String, Vec<u8>)> =
                entries.iter().map(|(k, v)| (k.clone(), v.as_bytes().to_vec())).collect();
            expected.sort();
            assert_eq!(entries_of(held), expected);
            let whole = set(entries);
            for key in ["k0", "k3", "time/0", "new", "only", "absent"] {
                assert_eq!(held.get(key), whole.get(key), "{key}");
            }
        }
    }
}
