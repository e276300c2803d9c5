//! Writing references to a place named by a path or a URL, in the format its
//! name asks for: a parquet root for a name ending in `.parq`, `.parquet` or
//! `/`, JSON otherwise (streamed to a local file; one PUT to an object store).

use std::sync::Arc;

use kerchunk::{JsonWriteOptions, ParquetWriteOptions, ReferenceSource, WriteError};
use zarrs_kerchunk::object_store::path::Path;
use zarrs_kerchunk::object_store::registry::ObjectStoreRegistry;
use zarrs_kerchunk::object_store::{self, ObjectStore, ObjectStoreExt};
use zarrs_kerchunk::{ParquetUpdate, StoreRegistry, update_parquet, write_json, write_parquet};

/// Why references could not be written, or a place could not be reached.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum OutputError {
    /// The place is not a usable path or URL.
    #[error("{place}: {reason}")]
    Place {
        /// The path or URL as given.
        place: String,
        /// What is wrong with it.
        reason: String,
    },
    /// No object store serves the URL, or the store failed.
    #[error("{place}: {source}")]
    Store {
        /// The path or URL.
        place: String,
        /// `object_store`'s error.
        #[source]
        source: Box<object_store::Error>,
    },
    /// A local file or folder could not be made or written.
    #[error("cannot write {place}: {source}")]
    Io {
        /// The path.
        place: String,
        /// The operating system's error.
        #[source]
        source: std::io::Error,
    },
    /// Writing the references failed.
    #[error("cannot write {place}: {source}")]
    Write {
        /// The path or URL.
        place: String,
        /// The writer's error.
        #[source]
        source: Box<WriteError>,
    },
}

/// Whether `output` names a parquet root (`.parq`, `.parquet`, or a trailing `/`).
#[must_use]
pub fn is_parquet_root(output: &str) -> bool {
    [".parq", ".parquet", "/"].iter().any(|suffix| output.ends_with(suffix))
}

/// Write `source` to `output`, a local path or a URL: a parquet root if
/// [`is_parquet_root`], else JSON. A URL's store comes from `registry`.
/// Returns the number of references written.
///
/// # Errors
/// [`OutputError`] if the place cannot be reached or the references cannot be written.
pub fn write_references(
    source: &dyn ReferenceSource,
    output: &str,
    registry: &StoreRegistry,
    json: &JsonWriteOptions,
    parquet: &ParquetWriteOptions,
) -> Result<u64, OutputError> {
    let failed = |source| OutputError::Write { place: output.to_owned(), source: Box::new(source) };
    if is_parquet_root(output) {
        let (store, path) = place(output, registry, true)?;
        return write_parquet(source, store.as_ref(), &path, parquet).map_err(failed);
    }
    if output.contains("://") {
        // One PUT of the whole document.
        let (store, path) = place(output, registry, true)?;
        let mut bytes = Vec::new();
        let written = write_json(source, &mut bytes, json).map_err(failed)?;
        let io = |source| OutputError::Io { place: output.to_owned(), source };
        let put = tokio::runtime::Builder::new_current_thread().enable_all().build().map_err(io)?;
        put.block_on(store.put(&path, bytes.into()))
            .map_err(|source| OutputError::Store { place: output.to_owned(), source: Box::new(source) })?;
        return Ok(written);
    }
    // Streamed to the file as it is written.
    let io = |source| OutputError::Io { place: output.to_owned(), source };
    if let Some(parent) = std::path::Path::new(output).parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::create_dir_all(parent).map_err(io)?;
    }
    let file = std::fs::File::create(output).map_err(io)?;
    write_json(source, std::io::BufWriter::new(file), json).map_err(failed)
}

/// Write `source` to `output`, which holds `previous` now (an append written back to the set
/// it extends), as [`write_references`] would; but a parquet root that already has a
/// `.zmetadata` is updated in place ([`update_parquet`]): only its record files that change
/// are written, at the root's own record size. Returns the number of references written, and
/// for a parquet root the record files written, kept and removed.
///
/// # Errors
/// As [`write_references`].
pub fn rewrite_references(
    source: &dyn ReferenceSource,
    previous: &dyn ReferenceSource,
    output: &str,
    registry: &StoreRegistry,
    json: &JsonWriteOptions,
    parquet: &ParquetWriteOptions,
) -> Result<(u64, Option<ParquetUpdate>), OutputError> {
    if !is_parquet_root(output) {
        return Ok((write_references(source, output, registry, json, parquet)?, None));
    }
    let (store, path) = place(output, registry, true)?;
    let update = update_parquet(source, previous, store.as_ref(), &path, parquet)
        .map_err(|source| OutputError::Write { place: output.to_owned(), source: Box::new(source) })?;
    Ok((update.references, Some(update)))
}

/// The object store and path of a local path or URL. A URL's store is made
/// by `registry` (the options given and the cloud environment's own
/// variables, never the rest of the environment); a local path's folder is
/// created if `create` says so.
///
/// # Errors
/// [`OutputError`] if the place is not a path or URL a store serves.
pub fn place(place: &str, registry: &StoreRegistry, create: bool) -> Result<(Arc<dyn ObjectStore>, Path), OutputError> {
    Places::default().place(place, registry, create)
}

/// [`place`] for many places: local files of one folder share one store (ten thousand files
/// of a folder held ten thousand stores, each with its own copy of the folder's path).
#[derive(Debug, Default)]
pub struct Places {
    folders: std::collections::HashMap<std::path::PathBuf, Arc<dyn ObjectStore>>,
}

impl Places {
    /// As [`place`], with the store of a folder met before.
    ///
    /// # Errors
    /// [`OutputError`] if the place is not a path or URL a store serves.
    pub fn place(
        &mut self,
        place: &str,
        registry: &StoreRegistry,
        create: bool,
    ) -> Result<(Arc<dyn ObjectStore>, Path), OutputError> {
        let invalid = |reason: String| OutputError::Place { place: place.to_owned(), reason };
        let io = |source| OutputError::Io { place: place.to_owned(), source };
        let trimmed = place.trim_end_matches('/');
        if trimmed.contains("://") {
            let url = url::Url::parse(trimmed).map_err(|e| invalid(e.to_string()))?;
            return registry
                .resolve(&url)
                .map_err(|source| OutputError::Store { place: place.to_owned(), source: Box::new(source) });
        }
        let path = std::path::absolute(trimmed).map_err(io)?;
        let parent = path.parent().ok_or_else(|| invalid("the path has no parent folder".into()))?;
        if create {
            std::fs::create_dir_all(parent).map_err(io)?;
        }
        let name =
            path.file_name().ok_or_else(|| invalid("the path has no name".into()))?.to_string_lossy().into_owned();
        let store = if let Some(store) = self.folders.get(parent) {
            Arc::clone(store)
        } else {
            let local = object_store::local::LocalFileSystem::new_with_prefix(parent)
                .map_err(|source| OutputError::Store { place: place.to_owned(), source: Box::new(source) })?;
            let store: Arc<dyn ObjectStore> = Arc::new(local);
            self.folders.insert(parent.to_owned(), Arc::clone(&store));
            store
        };
        Ok((store, name.into()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Files of one folder share its store, each named by its file name in it; a file of
    /// another folder has a store of its own; each reads its own file.
    #[test]
    fn files_of_one_folder_share_a_store() {
        let folder = tempfile::tempdir().unwrap();
        std::fs::create_dir(folder.path().join("b")).unwrap();
        for (name, text) in [("a1.txt", "one"), ("a2.txt", "two"), ("b/b1.txt", "three")] {
            std::fs::write(folder.path().join(name), text).unwrap();
        }
        let (registry, mut places) = (StoreRegistry::new(), Places::default());
        let mut place =
            |name: &str| places.place(&folder.path().join(name).to_string_lossy(), &registry, false).unwrap();
        let (a1, a2, b1) = (place("a1.txt"), place("a2.txt"), place("b/b1.txt"));
        assert!(Arc::ptr_eq(&a1.0, &a2.0), "one store for a folder");
        assert!(!Arc::ptr_eq(&a1.0, &b1.0), "another for another folder");
        let read = |(store, path): &(Arc<dyn ObjectStore>, Path)| {
            let runtime = tokio::runtime::Builder::new_current_thread().build().unwrap();
            runtime.block_on(async { store.get(path).await.unwrap().bytes().await.unwrap() })
        };
        assert_eq!([read(&a1), read(&a2), read(&b1)], [&b"one"[..], b"two", b"three"].map(bytes::Bytes::from_static));
    }
}
