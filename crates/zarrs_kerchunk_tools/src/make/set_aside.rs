//! Where each scanned file's combined chunks wait while a combine orders and checks the files:
//! in memory up to a budget, then as JSON in a temporary folder, removed when done.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, PoisonError};

use kerchunk::{BoxError, JsonWriteOptions, ParseOptions, ReferenceSet};
use kerchunk_scan::SetAside;

use super::MakeError;

/// The default memory [`SetAsideFiles`] holds references in before it writes them to disk:
/// 64 MiB, about three million references.
pub const SET_ASIDE_MEMORY: usize = 64 << 20;

/// Scanned files' chunks set aside for [`kerchunk_scan::combine_streamed`]
/// ([`kerchunk_scan::split_combined_chunks`]), each file's a [`ReferenceSet`]: held in
/// memory while they fit a budget ([`ReferenceSet::memory_size`]), the rest written as
/// kerchunk JSON to a temporary folder (deleted with this) and read back when asked.
#[derive(Debug)]
pub struct SetAsideFiles {
    folder: tempfile::TempDir,
    budget: usize,
    kept: Mutex<Kept>,
}

#[derive(Debug, Default)]
struct Kept {
    /// Bytes of the sets held in memory.
    held: usize,
    sets: HashMap<String, Place>,
}

#[derive(Debug)]
enum Place {
    Memory(Arc<ReferenceSet>),
    Disk(PathBuf),
}

impl SetAsideFiles {
    /// An empty set-aside, which holds up to `budget` bytes of references in memory (see
    /// [`SET_ASIDE_MEMORY`]), the rest in a new temporary folder.
    ///
    /// # Errors
    /// [`MakeError::SetAside`] if the temporary folder cannot be made.
    pub fn new(budget: usize) -> Result<Self, MakeError> {
        let folder = tempfile::Builder::new()
            .prefix("zarrs-kerchunk-combine-")
            .tempdir()
            .map_err(|source| MakeError::SetAside { file: "a temporary folder".into(), source: source.into() })?;
        Ok(Self { folder, budget, kept: Mutex::new(Kept::default()) })
    }

    /// Keep `set`, the references of the file `name`, to be read back by that name.
    ///
    /// # Errors
    /// [`MakeError::SetAside`] naming the file if its references cannot be written.
    pub fn keep(&self, name: &str, set: ReferenceSet) -> Result<(), MakeError> {
        let mut kept = self.kept.lock().unwrap_or_else(PoisonError::into_inner);
        let size = set.memory_size();
        let place = if kept.held.saturating_add(size) <= self.budget {
            kept.held += size;
            Place::Memory(Arc::new(set))
        } else {
            let path = self.folder.path().join(format!("{}.json", kept.sets.len()));
            let failed = |source: BoxError| MakeError::SetAside { file: name.to_owned(), source };
            let file = std::fs::File::create(&path).map_err(|e| failed(e.into()))?;
            set.write_json(std::io::BufWriter::new(file), &JsonWriteOptions::default())
                .map_err(|e| failed(e.into()))?;
            Place::Disk(path)
        };
        kept.sets.insert(name.to_owned(), place);
        Ok(())
    }
}

impl SetAside for SetAsideFiles {
    fn references(&self, name: &str) -> Result<Arc<ReferenceSet>, BoxError> {
        let path = match self.kept.lock().unwrap_or_else(PoisonError::into_inner).sets.get(name) {
            Some(Place::Memory(set)) => return Ok(Arc::clone(set)),
            Some(Place::Disk(path)) => path.clone(),
            None => return Err(format!("no references were set aside for {name}").into()),
        };
        let file = std::fs::File::open(&path)?;
        let location = path.to_string_lossy();
        Ok(Arc::new(ReferenceSet::from_json_reader(
            std::io::BufReader::new(file),
            &ParseOptions::default(),
            &location,
        )?))
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

    /// Sets past the budget are written to the folder and read back the same (bytes that are
    /// not text included); a name never kept is an error naming it.
    #[test]
    fn sets_past_the_budget_wait_on_disk_and_come_back_the_same() {
        let aside = SetAsideFiles::new(set(0).memory_size()).unwrap();
        aside.keep("a.nc", set(10)).unwrap();
        aside.keep("b.nc", set(20)).unwrap();
        let on_disk = std::fs::read_dir(aside.folder.path()).unwrap().count();
        assert_eq!(on_disk, 1, "the first within the budget, the second on disk");
        for (name, offset) in [("a.nc", 10), ("b.nc", 20)] {
            assert_eq!(entries(&aside.references(name).unwrap()), entries(&set(offset)), "{name}");
        }
        let error = aside.references("c.nc").unwrap_err().to_string();
        assert!(error.contains("c.nc"), "{error}");
    }
}
