//! Keeping the cache under its size: the least recently used ranges removed
//! first, by their files' modification times (a read of a range sets its
//! file's time), and the files of writers that died removed.
//!
//! No lock is held: several processes may sweep at once, and each removes
//! what it finds oldest. A reader whose file is removed under it keeps the
//! bytes it opened (or finds no file, and fetches the range again).

use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use crate::layout::Layout;

/// A file in the temporary folder older than this belongs to a writer that died.
const ABANDONED: Duration = Duration::from_mins(10);

/// What a sweep found and did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Swept {
    /// Bytes of cached ranges left.
    pub(crate) bytes: u64,
    /// Files removed to make room.
    pub(crate) evicted: u64,
}

/// Remove the least recently used ranges until the cache holds at most
/// nine tenths of `limit` bytes, if it holds more than `limit`; and the
/// files of writers that died.
pub(crate) fn sweep(layout: &Layout, limit: u64) -> Swept {
    remove_abandoned(layout.temporary());
    let mut files = Vec::new();
    for object in children(layout.objects()) {
        for version in children(&object) {
            for file in children(&version) {
                if let Ok(meta) = file.metadata()
                    && meta.is_file()
                {
                    files.push((meta.modified().unwrap_or(SystemTime::UNIX_EPOCH), meta.len(), file));
                }
            }
        }
    }
    let mut bytes: u64 = files.iter().map(|(_, len, _)| len).sum();
    let mut evicted = 0;
    if bytes > limit {
        let target = limit / 10 * 9;
        files.sort_by_key(|(modified, _, _)| *modified);
        for (_, len, file) in files {
            if bytes <= target {
                break;
            }
            if std::fs::remove_file(&file).is_ok() {
                bytes -= len;
                evicted += 1;
                remove_if_empty(&file);
            }
        }
    }
    Swept { bytes, evicted }
}

/// Remove the emptied folders above a removed file (a folder not empty stays).
fn remove_if_empty(file: &Path) {
    let version = file.parent();
    if let Some(version) = version
        && std::fs::remove_dir(version).is_ok()
        && let Some(object) = version.parent()
    {
        let _ = std::fs::remove_dir(object);
    }
}

fn remove_abandoned(temporary: &Path) {
    let now = SystemTime::now();
    for file in children(temporary) {
        let old = file
            .metadata()
            .and_then(|meta| meta.modified())
            .is_ok_and(|modified| now.duration_since(modified).unwrap_or_default() > ABANDONED);
        if old {
            let _ = std::fs::remove_file(file);
        }
    }
}

fn children(folder: &Path) -> impl Iterator<Item = PathBuf> {
    std::fs::read_dir(folder).into_iter().flatten().filter_map(|entry| Some(entry.ok()?.path()))
}
