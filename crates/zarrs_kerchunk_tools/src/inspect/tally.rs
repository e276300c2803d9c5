//! One walk over every reference of a store, counted by array and by target:
//! what [`stats`](super::stats) reports and [`audit`](super::audit) checks.
//! It holds counts, never references, so a parquet root's records pass
//! through one at a time.

use std::collections::HashMap;
use std::sync::Arc;

use futures::StreamExt;
use zarrs_storage::{AsyncReadableStorageTraits, StorageError, StoreKey};

use kerchunk::zarr::{ChunkGrid, GridError};
use kerchunk::{Lookup, OwnedReference, Walk};
use zarrs_kerchunk::AsyncReferenceStore;

use super::InspectError;

/// Why an array has no chunk grid to count against: reported, not fatal.
#[derive(Debug, thiserror::Error)]
pub(super) enum NoGrid {
    #[error("no .zarray")]
    Missing,
    #[error(transparent)]
    Grid(#[from] GridError),
}

/// A target as the references write it (`None`: the default target).
pub(super) type Written = Option<Arc<str>>;

/// How references use one target.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct TargetUse {
    pub(super) references: u64,
    /// Bytes referenced by ranges.
    pub(super) bytes: u64,
    /// The largest offset + length of a range: the target must be at least this long.
    pub(super) end: u64,
    pub(super) whole_file_references: u64,
}

impl TargetUse {
    fn add(&mut self, reference: &OwnedReference) {
        self.references += 1;
        match reference {
            OwnedReference::Range { offset, length, .. } => {
                self.bytes = self.bytes.saturating_add(*length);
                self.end = self.end.max(offset.saturating_add(*length));
            }
            OwnedReference::Whole { .. } => self.whole_file_references += 1,
            OwnedReference::Inline(_) | OwnedReference::Malformed { .. } => {}
        }
    }

    pub(super) fn merge(&mut self, other: &Self) {
        self.references += other.references;
        self.bytes = self.bytes.saturating_add(other.bytes);
        self.end = self.end.max(other.end);
        self.whole_file_references += other.whole_file_references;
    }
}

/// References counted by kind.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Kinds {
    pub(super) range: u64,
    pub(super) whole: u64,
    pub(super) inline: u64,
    pub(super) inline_bytes: u64,
    pub(super) malformed: u64,
}

impl Kinds {
    fn add(&mut self, reference: &OwnedReference) {
        match reference {
            OwnedReference::Range { .. } => self.range += 1,
            OwnedReference::Whole { .. } => self.whole += 1,
            OwnedReference::Inline(bytes) => {
                self.inline += 1;
                self.inline_bytes += bytes.len() as u64;
            }
            OwnedReference::Malformed { .. } => self.malformed += 1,
        }
    }
}

/// The references of one array.
#[derive(Debug)]
pub(super) struct ArrayTally {
    /// The array's grid, or why its `.zarray` has none.
    pub(super) grid: Result<ChunkGrid, NoGrid>,
    /// Chunk references, by kind.
    pub(super) chunks: Kinds,
    /// Keys in the array's folder that name no chunk of its grid (and are not metadata).
    pub(super) stray_keys: u64,
    /// Chunks of the grid that have a reference.
    pub(super) present: u64,
    pub(super) targets: HashMap<Written, TargetUse>,
}

/// Every reference of a store, counted.
#[derive(Debug, Default)]
pub(super) struct Tally {
    /// By array path (`""` for an array at the root).
    pub(super) arrays: HashMap<String, ArrayTally>,
    /// Metadata and keys outside any array.
    pub(super) other: Kinds,
    /// Every target, with the references of metadata and stray keys included.
    pub(super) targets: HashMap<Written, TargetUse>,
    /// The first [`MALFORMED_SHOWN`] keys whose references are malformed, with why.
    pub(super) malformed: Vec<(String, String)>,
}

/// How many malformed keys a tally names; it counts them all.
const MALFORMED_SHOWN: usize = 100;

impl Tally {
    /// Walk every reference of `store` once.
    pub(super) async fn walk(store: &AsyncReferenceStore) -> Result<Self, InspectError> {
        let mut tally = Self::default();
        // A Zarr v3 set (files of uneven length combined): its arrays are its `zarr.json`
        // documents, which the walk does not give first; found in a walk of their own.
        let v3 = match store.source().lookup("zarr.json")? {
            Lookup::Ready(found) => found.is_some(),
            Lookup::Pending(pending) => pending.await?.is_some(),
        };
        if v3 {
            let mut nodes = store.source().walk(Walk::All);
            while let Some(next) = nodes.next().await {
                let (key, reference) = next?;
                let (Some(path), OwnedReference::Inline(bytes)) = (node_path(&key), reference) else { continue };
                let node: serde_json::Value = serde_json::from_slice(&bytes).unwrap_or_default();
                if node["node_type"] == "array" {
                    let grid = ChunkGrid::from_zarr_json(&node).map_err(NoGrid::Grid);
                    tally.arrays.insert(path.to_owned(), ArrayTally::new(grid));
                }
            }
        }
        let mut references = store.source().walk(Walk::All);
        // The walk yields every metadata key first, so each array's grid is
        // known before its chunks arrive.
        while let Some(next) = references.next().await {
            let (key, reference) = next?;
            let array = if key == ".zarray" { Some("") } else { key.strip_suffix("/.zarray") };
            if let Some(array) = array {
                let grid = read_grid(store, array, &key).await?;
                tally.arrays.insert(array.to_owned(), ArrayTally::new(grid));
            }
            tally.add(&key, &reference);
        }
        Ok(tally)
    }

    fn add(&mut self, key: &str, reference: &OwnedReference) {
        let written = match reference {
            OwnedReference::Range { url, .. } | OwnedReference::Whole { url } => Some(url.clone()),
            OwnedReference::Inline(_) => None,
            OwnedReference::Malformed { reason } => {
                if self.malformed.len() < MALFORMED_SHOWN {
                    self.malformed.push((key.to_owned(), reason.to_string()));
                }
                None
            }
        };
        if let Some(url) = &written {
            self.targets.entry(url.clone()).or_default().add(reference);
        }
        let Some((array, chunk)) = self.array_of(key) else {
            self.other.add(reference);
            return;
        };
        let tally = self.arrays.get_mut(array).expect("array_of names a tallied array");
        if kerchunk::zarr::is_metadata_key(key) || node_path(key).is_some() {
            self.other.add(reference);
            return;
        }
        match &tally.grid {
            Ok(grid) if grid.position(chunk, true).is_some() => tally.present += 1,
            _ => tally.stray_keys += 1,
        }
        tally.chunks.add(reference);
        if let Some(url) = written {
            tally.targets.entry(url).or_default().add(reference);
        }
    }

    /// The array whose folder holds `key`, and the rest of the key; arrays
    /// have no children, so the shortest match is the only one.
    fn array_of<'k>(&self, key: &'k str) -> Option<(&'k str, &'k str)> {
        if self.arrays.contains_key("") {
            return Some(("", key));
        }
        key.match_indices('/')
            .map(|(at, _)| (&key[..at], &key[at + 1..]))
            .find(|(array, _)| self.arrays.contains_key(*array))
    }
}

/// The path of the Zarr v3 node whose `zarr.json` is at `key` (`""` at the root).
fn node_path(key: &str) -> Option<&str> {
    if key == "zarr.json" { Some("") } else { key.strip_suffix("/zarr.json") }
}

impl ArrayTally {
    fn new(grid: Result<ChunkGrid, NoGrid>) -> Self {
        Self { grid, chunks: Kinds::default(), stray_keys: 0, present: 0, targets: HashMap::new() }
    }
}

/// The chunk grid of `array`: as the source knows it, or else from its
/// `.zarray` at `key` read through the store (it may be in a target); a
/// malformed one is reported, not fatal.
async fn read_grid(
    store: &AsyncReferenceStore,
    array: &str,
    key: &str,
) -> Result<Result<ChunkGrid, NoGrid>, StorageError> {
    if let Some(grid) = store.source().chunk_grid(array) {
        return Ok(grid.map_err(NoGrid::Grid));
    }
    let key = StoreKey::new(key)?;
    let Some(document) = store.get(&key).await? else { return Ok(Err(NoGrid::Missing)) };
    Ok(ChunkGrid::from_zarray_document(&document).map_err(NoGrid::Grid))
}
