//! Where cached ranges live in the cache's folder, and which of them serve a
//! range asked for.
//!
//! ```text
//! DIR/v1/objects/<XXH3-128 of the URL>/<XXH3-128 of the version>/<start>-<end>
//! DIR/v1/tmp/    files being written, renamed into place when whole
//! ```
//!
//! A version is the object's ETag where the store gives one, else its size
//! and last-modified time: ranges of one version never serve another.

use std::collections::BTreeSet;
use std::ops::Range;
use std::path::{Path, PathBuf};

use twox_hash::XxHash3_128;

use crate::entry::Described;

/// The folders of one cache.
#[derive(Clone, Debug)]
pub(crate) struct Layout {
    objects: PathBuf,
    temporary: PathBuf,
}

impl Layout {
    /// The layout under `root`, its folders created: readable by their
    /// owner only where the file system says who owns what, since cached
    /// bytes may come from private buckets.
    pub(crate) fn create(root: &Path) -> std::io::Result<Self> {
        let base = root.join("v1");
        let layout = Self { objects: base.join("objects"), temporary: base.join("tmp") };
        let mut folders = std::fs::DirBuilder::new();
        folders.recursive(true);
        #[cfg(unix)]
        std::os::unix::fs::DirBuilderExt::mode(&mut folders, 0o700);
        folders.create(&layout.objects)?;
        folders.create(&layout.temporary)?;
        Ok(layout)
    }

    pub(crate) fn objects(&self) -> &Path {
        &self.objects
    }

    pub(crate) fn temporary(&self) -> &Path {
        &self.temporary
    }

    /// The folder of every version of the object at `url`.
    pub(crate) fn object(&self, url: &str) -> PathBuf {
        self.objects.join(format!("{:032x}", XxHash3_128::oneshot(url.as_bytes())))
    }

    /// The folder of the ranges of one version of an object.
    pub(crate) fn version(&self, what: &Described) -> PathBuf {
        self.object(&what.url).join(version_name(what.etag.as_deref(), what.size, &what.last_modified.to_rfc3339()))
    }

    /// The folder of the ranges of the version of `url` whose ETag is `etag`.
    pub(crate) fn version_of_etag(&self, url: &str, etag: &str) -> PathBuf {
        self.object(url).join(version_name(Some(etag), 0, ""))
    }
}

/// A version's folder name: its ETag's hash, else its size's and time's.
fn version_name(etag: Option<&str>, size: u64, last_modified: &str) -> String {
    let key = match etag {
        Some(etag) => format!("etag:{etag}"),
        None => format!("size:{size}:modified:{last_modified}"),
    };
    format!("{:032x}", XxHash3_128::oneshot(key.as_bytes()))
}

/// The file of one range in a version's folder.
pub(crate) fn range_file(version: &Path, range: &Range<u64>) -> PathBuf {
    version.join(format!("{}-{}", range.start, range.end))
}

/// The ranges cached of one version of an object, by start.
#[derive(Clone, Debug, Default)]
pub(crate) struct Ranges {
    held: BTreeSet<(u64, u64)>,
    /// At least the length of the longest range held: a range covering a
    /// byte starts at most this far before it.
    longest: u64,
}

impl Ranges {
    /// The ranges a version's folder holds, from their files' names (files
    /// that are not ranges are left out).
    pub(crate) fn listed(version: &Path) -> Self {
        let mut ranges = Self::default();
        let Ok(entries) = std::fs::read_dir(version) else { return ranges };
        for entry in entries.flatten() {
            let name = entry.file_name();
            let Some((start, end)) = name.to_str().and_then(|name| name.split_once('-')) else { continue };
            if let (Ok(start), Ok(end)) = (start.parse(), end.parse())
                && start < end
            {
                ranges.insert(&(start..end));
            }
        }
        ranges
    }

    pub(crate) fn insert(&mut self, range: &Range<u64>) {
        self.held.insert((range.start, range.end));
        self.longest = self.longest.max(range.end - range.start);
    }

    pub(crate) fn remove(&mut self, range: &Range<u64>) {
        self.held.remove(&(range.start, range.end));
    }

    pub(crate) fn iter(&self) -> impl Iterator<Item = Range<u64>> + '_ {
        self.held.iter().map(|&(start, end)| start..end)
    }
}

/// One part of a range asked for: bytes a cached range holds, or bytes to fetch.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Piece {
    /// `take` (in the object's offsets) from the cached range `from`.
    Cached {
        from: Range<u64>,
        take: Range<u64>,
    },
    Missing(Range<u64>),
}

/// `wanted`, in order, as parts of the cached `ranges` (the one reaching
/// furthest where several cover a byte) and the gaps between them.
pub(crate) fn pieces(ranges: &Ranges, wanted: &Range<u64>) -> Vec<Piece> {
    let mut out = Vec::new();
    let mut at = wanted.start;
    while at < wanted.end {
        // Of the ranges starting at or before `at` (no earlier than the
        // longest range's length), the one reaching furthest.
        let covering = ranges
            .held
            .range((at.saturating_sub(ranges.longest), 0)..=(at, u64::MAX))
            .filter(|(_, end)| *end > at)
            .max_by_key(|(_, end)| *end);
        if let Some(&(start, end)) = covering {
            let to = end.min(wanted.end);
            out.push(Piece::Cached { from: start..end, take: at..to });
            at = to;
        } else {
            let next = ranges.held.range((at, 0)..).map(|(start, _)| *start).next().unwrap_or(u64::MAX);
            let to = next.min(wanted.end);
            out.push(Piece::Missing(at..to));
            at = to;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cached_ranges_serve_what_they_cover_and_the_gaps_are_fetched() {
        let mut ranges = Ranges::default();
        for range in [0..10, 5..20, 30..40] {
            ranges.insert(&range);
        }
        assert_eq!(pieces(&ranges, &(2..8)), vec![Piece::Cached { from: 0..10, take: 2..8 }]);
        assert_eq!(
            pieces(&ranges, &(8..35)),
            vec![
                Piece::Cached { from: 5..20, take: 8..20 },
                Piece::Missing(20..30),
                Piece::Cached { from: 30..40, take: 30..35 },
            ]
        );
        assert_eq!(pieces(&ranges, &(40..50)), vec![Piece::Missing(40..50)]);
        assert_eq!(pieces(&Ranges::default(), &(0..1)), vec![Piece::Missing(0..1)]);
        // A long range far before the byte still covers it.
        ranges.insert(&(100..10_000));
        for start in 101..200 {
            ranges.insert(&(start..start + 1));
        }
        assert_eq!(pieces(&ranges, &(5000..5010)), vec![Piece::Cached { from: 100..10_000, take: 5000..5010 }]);
    }
}
