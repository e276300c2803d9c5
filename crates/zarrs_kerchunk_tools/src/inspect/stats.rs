//! What a reference set holds, per array: references by kind, the chunk
//! grid and its gaps, inline bytes, and the bytes each target supplies.

use std::fmt;

use serde::Serialize;

use zarrs_kerchunk::{AsyncReferenceStore, ReferenceStore, ResolveError, Target};

use super::InspectError;
use super::tally::{ArrayTally, Kinds, Tally, TargetUse, Written};

/// A target as a store resolves it, or why it cannot.
pub(super) type Resolution = Result<Target, std::sync::Arc<ResolveError>>;

/// References counted by kind.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct ReferenceCounts {
    /// References to a byte range of a target.
    pub range: u64,
    /// References to a whole target file.
    pub whole: u64,
    /// Values held inline in the reference document.
    pub inline: u64,
    /// The bytes of the inline values.
    pub inline_bytes: u64,
    /// Malformed references: keys whose every read is an error
    /// ([`kerchunk::Reference::Malformed`]).
    pub malformed: u64,
}

impl ReferenceCounts {
    /// All references, malformed ones included.
    #[must_use]
    pub fn total(&self) -> u64 {
        self.range + self.whole + self.inline + self.malformed
    }
}

impl From<Kinds> for ReferenceCounts {
    fn from(kinds: Kinds) -> Self {
        Self {
            range: kinds.range,
            whole: kinds.whole,
            inline: kinds.inline,
            inline_bytes: kinds.inline_bytes,
            malformed: kinds.malformed,
        }
    }
}

/// How the references use one target.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct TargetStats {
    /// The target's URL, resolved (absolute, rewritten, `file://` for local
    /// files); as written if it cannot be resolved.
    pub url: String,
    /// References to it.
    pub references: u64,
    /// Bytes of it that ranges reference (whole-file references not counted).
    pub referenced_bytes: u64,
    /// The largest offset + length of a range: the target must be at least this long.
    pub needed_bytes: u64,
    /// References to the whole file.
    pub whole_file_references: u64,
}

/// The references of one array.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct ArrayStats {
    /// The array's path in the hierarchy (`""` for an array at the root).
    pub path: String,
    /// Its chunk references, by kind.
    pub references: ReferenceCounts,
    /// The number of chunks in its grid, if its `.zarray` has a usable grid.
    pub grid_chunks: Option<u64>,
    /// Chunks of the grid without a reference (read as the fill value).
    pub missing_chunks: Option<u64>,
    /// Keys in the array's folder that name no chunk of its grid.
    pub stray_keys: u64,
    /// Why the `.zarray` has no usable grid, if it has none.
    pub grid_error: Option<String>,
    /// Bytes of targets that ranges reference.
    pub referenced_bytes: u64,
    /// The targets the array's chunks read, most bytes first.
    pub targets: Vec<TargetStats>,
}

/// What a reference set holds; see [`stats`].
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct Stats {
    /// Every array, by path.
    pub arrays: Vec<ArrayStats>,
    /// Metadata and keys outside any array.
    pub other: ReferenceCounts,
    /// Every target of the set, most bytes first.
    pub targets: Vec<TargetStats>,
    /// The memory the references take, for a JSON set held in memory
    /// (a parquet root holds only a bounded cache of its records).
    pub memory_bytes: Option<u64>,
}

impl Stats {
    /// Every reference of the set.
    #[must_use]
    pub fn references(&self) -> u64 {
        self.other.total() + self.arrays.iter().map(|a| a.references.total()).sum::<u64>()
    }

    /// The malformed references of the set: keys whose every read is an error.
    #[must_use]
    pub fn malformed(&self) -> u64 {
        self.other.malformed + self.arrays.iter().map(|a| a.references.malformed).sum::<u64>()
    }
}

/// What the references of `store` hold, per array and per target, from one
/// walk over them: a parquet root's records are read one at a time and
/// never held together. No target is read.
///
/// # Errors
/// [`InspectError`] if the references cannot be walked or a `.zarray` cannot be read.
pub async fn stats_async(store: &AsyncReferenceStore) -> Result<Stats, InspectError> {
    let tally = Tally::walk(store).await?;
    let mut arrays: Vec<ArrayStats> =
        tally.arrays.into_iter().map(|(path, array)| array_stats(store, path, array)).collect();
    arrays.sort_by(|a, b| a.path.cmp(&b.path));
    Ok(Stats {
        arrays,
        other: tally.other.into(),
        targets: target_stats(store, tally.targets),
        memory_bytes: store.source().in_memory().map(|set| set.memory_size() as u64),
    })
}

/// [`stats_async`], on the runtime of a sync store.
///
/// # Errors
/// See [`stats_async`].
pub fn stats(store: &ReferenceStore) -> Result<Stats, InspectError> {
    let store_async = store.to_async();
    store.block_on(async move { stats_async(&store_async).await })?
}

fn array_stats(store: &AsyncReferenceStore, path: String, array: ArrayTally) -> ArrayStats {
    let targets = target_stats(store, array.targets);
    let (grid_chunks, grid_error) = match array.grid {
        Ok(grid) => (Some(grid.count()), None),
        Err(error) => (None, Some(error.to_string())),
    };
    ArrayStats {
        path,
        references: array.chunks.into(),
        grid_chunks,
        missing_chunks: grid_chunks.map(|n| n.saturating_sub(array.present)),
        stray_keys: array.stray_keys,
        grid_error,
        referenced_bytes: targets.iter().map(|t| t.referenced_bytes).sum(),
        targets,
    }
}

/// The targets by resolved URL (two spellings of one file are one target), most bytes first.
fn target_stats(
    store: &AsyncReferenceStore,
    targets: std::collections::HashMap<Written, TargetUse>,
) -> Vec<TargetStats> {
    let mut by_url: std::collections::HashMap<String, TargetUse> = std::collections::HashMap::new();
    for (written, usage) in targets {
        let url = target_url(&store.target(written.as_deref()), written.as_ref());
        by_url.entry(url).or_default().merge(&usage);
    }
    let mut stats: Vec<TargetStats> = by_url
        .into_iter()
        .map(|(url, usage)| TargetStats {
            url,
            references: usage.references,
            referenced_bytes: usage.bytes,
            needed_bytes: usage.end,
            whole_file_references: usage.whole_file_references,
        })
        .collect();
    stats.sort_by(|a, b| b.referenced_bytes.cmp(&a.referenced_bytes).then_with(|| a.url.cmp(&b.url)));
    stats
}

/// A target's URL as reports and pins name it: resolved (`file://` for a
/// local file) if it can be, else as written.
pub(super) fn target_url(resolution: &Resolution, written: Option<&std::sync::Arc<str>>) -> String {
    match resolution {
        Ok(resolved) => resolved.url().to_owned(),
        Err(_) => written.map_or_else(|| "(the default target)".to_owned(), ToString::to_string),
    }
}

impl fmt::Display for Stats {
    /// A table: one line per array, then the totals.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "{:<24} {:>9} {:>9} {:>7} {:>7} {:>9} {:>9} {:>12} {:>12} {:>8}",
            "array", "range", "whole", "inline", "stray", "chunks", "missing", "inline B", "referenced B", "targets"
        )?;
        let optional = |n: Option<u64>| n.map_or_else(|| "-".to_owned(), |n| n.to_string());
        for array in &self.arrays {
            let path = if array.path.is_empty() { "/" } else { &array.path };
            writeln!(
                f,
                "{path:<24} {:>9} {:>9} {:>7} {:>7} {:>9} {:>9} {:>12} {:>12} {:>8}",
                array.references.range,
                array.references.whole,
                array.references.inline,
                array.stray_keys,
                optional(array.grid_chunks),
                optional(array.missing_chunks),
                array.references.inline_bytes,
                array.referenced_bytes,
                array.targets.len(),
            )?;
            if let Some(error) = &array.grid_error {
                writeln!(f, "  (no chunk grid: {error})")?;
            }
        }
        writeln!(
            f,
            "{:<24} {:>9} {:>9} {:>7} {:>7} {:>9} {:>9} {:>12}",
            "(metadata, other)",
            self.other.range,
            self.other.whole,
            self.other.inline,
            "",
            "",
            "",
            self.other.inline_bytes
        )?;
        let bytes: u64 = self.targets.iter().map(|t| t.referenced_bytes).sum();
        write!(f, "{} references, {} targets, {bytes} referenced bytes", self.references(), self.targets.len())?;
        if let Some(memory) = self.memory_bytes {
            write!(f, ", {memory} bytes of memory for the references")?;
        }
        match self.malformed() {
            0 => writeln!(f),
            n => writeln!(f, "\n{n} malformed references: reading them is an error (audit names them)"),
        }
    }
}
