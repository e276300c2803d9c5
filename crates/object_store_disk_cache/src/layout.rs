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
    /// The layout under `root`, its folders created.
    pub(crate) fn create(root: &Path) -> std::io::Result<Self> {
        let base = root.join("v1");
        let layout = Self { objects: base.join("objects"), temporary: base.join("tmp") };
        std::fs::create_dir_all(&layout.objects)?;
        std::fs::create_dir_all(&layout.temporary)?;
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

/// The ranges a version's folder holds, from their files' names (files that
/// are not ranges are left out).
pub(crate) fn ranges_in(version: &Path) -> BTreeSet<(u64, u64)> {
    let Ok(entries) = std::fs::read_dir(version) else { return BTreeSet::new() };
    entries
        .filter_map(|entry| {
            let name = entry.ok()?.file_name();
            let (start, end) = name.to_str()?.split_once('-')?;
            let (start, end) = (start.parse().ok()?, end.parse().ok()?);
            (start < end).then_some((start, end))
        })
        .collect()
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

/// How many cached ranges starting before a byte are looked at for one covering it.
const LOOK_BACK: usize = 64;

/// `wanted`, in order, as parts of the cached `ranges` (the one reaching
/// furthest where several cover a byte) and the gaps between them.
pub(crate) fn pieces(ranges: &BTreeSet<(u64, u64)>, wanted: &Range<u64>) -> Vec<Piece> {
    let mut out = Vec::new();
    let mut at = wanted.start;
    while at < wanted.end {
        // Of the nearest ranges starting at or before `at`, the one reaching
        // furthest. Looking no further back keeps a read of an object with
        // many cached ranges fast; a long range it misses is only fetched again.
        let covering = ranges
            .range(..=(at, u64::MAX))
            .rev()
            .take(LOOK_BACK)
            .filter(|(_, end)| *end > at)
            .max_by_key(|(_, end)| *end);
        if let Some(&(start, end)) = covering {
            let to = end.min(wanted.end);
            out.push(Piece::Cached { from: start..end, take: at..to });
            at = to;
        } else {
            let next = ranges.range((at, 0)..).map(|(start, _)| *start).next().unwrap_or(u64::MAX);
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
        let ranges: BTreeSet<(u64, u64)> = [(0, 10), (5, 20), (30, 40)].into_iter().collect();
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
        assert_eq!(pieces(&BTreeSet::new(), &(0..1)), vec![Piece::Missing(0..1)]);
    }
}
