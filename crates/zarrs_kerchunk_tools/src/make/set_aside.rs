//! Where each scanned file's combined chunks wait while a combine orders and checks the files:
//! in memory up to a budget, then as JSON in one temporary file, removed when done.

use std::collections::HashMap;
use std::fs::File;
use std::io::{Read as _, Seek as _, SeekFrom, Write as _};
use std::sync::{Arc, Mutex, PoisonError};

use kerchunk::{BoxError, JsonWriteOptions, ParseOptions, ReferenceSet};
use kerchunk_combine::SetAside;

use super::MakeError;

/// The default memory [`SetAsideFiles`] holds references in before it writes them to disk:
/// 64 MiB, about three million references.
pub const SET_ASIDE_MEMORY: usize = 64 << 20;

/// Scanned files' chunks set aside for [`kerchunk_combine::combine_streamed`]
/// ([`kerchunk_combine::split_combined_chunks`]), each file's a [`ReferenceSet`]: held in
/// memory while they fit a budget ([`ReferenceSet::memory_size`]), the rest written as
/// kerchunk JSON, one after another, to a temporary file (under `TMPDIR`, deleted with this,
/// or by the system if the process dies) and read back when asked.
///
/// One file, not one a scanned file: making ten thousand small files took most of the time
/// of a combine that set everything aside (the file system's inode allocation).
#[derive(Debug)]
pub struct SetAsideFiles {
    budget: usize,
    kept: Mutex<Kept>,
}

#[derive(Debug)]
struct Kept {
    /// Bytes of the sets held in memory.
    held: usize,
    sets: HashMap<String, Place>,
    /// Where the sets past the budget are written, and its length.
    disk: File,
    written: u64,
}

#[derive(Debug)]
enum Place {
    Memory(Arc<ReferenceSet>),
    /// A range of `Kept::disk`: its start, and its length.
    Disk(u64, usize),
}

impl SetAsideFiles {
    /// An empty set-aside, which holds up to `budget` bytes of references in memory (see
    /// [`SET_ASIDE_MEMORY`]), the rest in a new temporary file.
    ///
    /// # Errors
    /// [`MakeError::SetAside`] if the temporary file cannot be made.
    pub fn new(budget: usize) -> Result<Self, MakeError> {
        let disk = tempfile::tempfile()
            .map_err(|source| MakeError::SetAside { file: "a temporary file".into(), source: source.into() })?;
        let kept = Kept { held: 0, sets: HashMap::new(), disk, written: 0 };
        Ok(Self { budget, kept: Mutex::new(kept) })
    }

    /// Keep `set`, the references of the file `name`, to be read back by that name.
    ///
    /// # Errors
    /// [`MakeError::SetAside`] naming the file if its references cannot be written.
    pub fn keep(&self, name: &str, set: ReferenceSet) -> Result<(), MakeError> {
        let failed = |source: BoxError| MakeError::SetAside { file: name.to_owned(), source };
        let size = set.memory_size();
        let mut kept = self.kept.lock().unwrap_or_else(PoisonError::into_inner);
        if kept.held.saturating_add(size) <= self.budget {
            kept.held += size;
            kept.sets.insert(name.to_owned(), Place::Memory(Arc::new(set)));
            return Ok(());
        }
        drop(kept);
        // Written out of the lock, so that scans ending together encode at once.
        let mut json = Vec::new();
        set.write_json(&mut json, &JsonWriteOptions::default()).map_err(|e| failed(e.into()))?;
        let mut kept = self.kept.lock().unwrap_or_else(PoisonError::into_inner);
        let start = kept.written;
        kept.disk
            .seek(SeekFrom::Start(start))
            .and_then(|_| kept.disk.write_all(&json))
            .map_err(|e| failed(e.into()))?;
        kept.written += json.len() as u64;
        kept.sets.insert(name.to_owned(), Place::Disk(start, json.len()));
        Ok(())
    }
}

impl SetAside for SetAsideFiles {
    fn references(&self, name: &str) -> Result<Arc<ReferenceSet>, BoxError> {
        let mut kept = self.kept.lock().unwrap_or_else(PoisonError::into_inner);
        let (start, length) = match kept.sets.get(name) {
            Some(Place::Memory(set)) => return Ok(Arc::clone(set)),
            Some(Place::Disk(start, length)) => (*start, *length),
            None => return Err(format!("no references were set aside for {name}").into()),
        };
        let mut json = vec![0; length];
        kept.disk.seek(SeekFrom::Start(start))?;
        kept.disk.read_exact(&mut json)?;
        drop(kept);
        let location = format!("the references of {name} set aside");
        Ok(Arc::new(ReferenceSet::from_json(&json, &ParseOptions::default()).map_err(|e| format!("{location}: {e}"))?))
    }
}

#[cfg(test)]
mod tests {
    use kerchunk::{ReferenceSetBuilder, ReferenceSource as _};

    use super::*;

    fn set(offset: u64) -> ReferenceSet {
        let mut builder = ReferenceSetBuilder::new();
        builder.insert_inline(".zgroup", br#"{"zarr_format":2}"#);
        builder.insert_inline("v/.zarray", br#"{"shape":[2],"chunks":[1],"dtype":"<u1","compressor":null,"fill_value":null,"filters":null,"order":"C","zarr_format":2}"#);
        builder.insert_range("v/0", Some("f.nc"), offset, 7);
        builder.insert_inline("v/1", &[0, 159, 146, 150]);
        builder.build()
    }

    fn entries(set: &ReferenceSet) -> Vec<(String, kerchunk::OwnedReference)> {
        let runtime = tokio::runtime::Builder::new_current_thread().build().unwrap();
        let walked = runtime.block_on(futures::StreamExt::collect::<Vec<_>>(set.walk(kerchunk::Walk::All)));
        walked.into_iter().map(Result::unwrap).collect()
    }

    /// Sets past the budget are written, one after another, to the file and read back the same
    /// (bytes that are not text included), in any order; a name never kept is an error naming it.
    #[test]
    fn sets_past_the_budget_wait_on_disk_and_come_back_the_same() {
        let aside = SetAsideFiles::new(set(0).memory_size()).unwrap();
        for (name, offset) in [("a.nc", 10), ("b.nc", 20), ("c.nc", 30)] {
            aside.keep(name, set(offset)).unwrap();
        }
        let kept = aside.kept.lock().unwrap();
        let on_disk = kept.sets.values().filter(|place| matches!(place, Place::Disk(..))).count();
        assert_eq!((on_disk, kept.written > 0), (2, true), "the first within the budget, the others on disk");
        drop(kept);
        for (name, offset) in [("c.nc", 30), ("a.nc", 10), ("b.nc", 20), ("c.nc", 30)] {
            assert_eq!(entries(&aside.references(name).unwrap()), entries(&set(offset)), "{name}");
        }
        let error = aside.references("d.nc").unwrap_err().to_string();
        assert!(error.contains("d.nc"), "{error}");
    }
}
