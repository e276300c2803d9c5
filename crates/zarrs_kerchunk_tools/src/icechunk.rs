//! Kerchunk references in icechunk repositories: written into one
//! ([`write_icechunk`]), and read back from one ([`open_icechunk`]), through
//! [`kerchunk_icechunk`].

pub use kerchunk_icechunk::{ExportError, ExportOptions, Exported, IcechunkLocation, ImportError, MANIFEST_SPLIT};
use zarrs_kerchunk::{ReferenceStore, ReferenceStoreBuilder};

/// Why references could not be written into a repository, or read from one.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum IcechunkError {
    /// Writing the references into the repository failed.
    #[error(transparent)]
    Export(#[from] ExportError),
    /// Reading the repository as references failed.
    #[error(transparent)]
    Import(#[from] ImportError),
    /// No runtime could run the work, or the store over the references failed to open.
    #[error("icechunk repository {location}: {reason}")]
    Runtime {
        /// The repository.
        location: String,
        /// Why.
        reason: String,
    },
}

/// Write the references `references` reads into the icechunk repository at
/// `location` (created if absent), on the location's branch, as `options`
/// say (their branch is replaced by the location's): see
/// [`kerchunk_icechunk`] for what changes on the way.
///
/// # Errors
/// [`IcechunkError::Export`] naming the key, array, target or repository
/// step that failed; [`IcechunkError::Runtime`] if the store's runtime cannot run it.
pub fn write_icechunk(
    references: &zarrs_kerchunk::ReferenceStore,
    location: &IcechunkLocation,
    options: ExportOptions,
) -> Result<Exported, IcechunkError> {
    let options = options.with_branch(location.branch.clone());
    let (store, location) = (references.to_async(), location.clone());
    let place = location.storage.clone();
    let exported = references.block_on(async move {
        let repository = location.open_or_create().await?;
        kerchunk_icechunk::export(&store, &repository, &location.storage, &options).await
    });
    let exported = exported.map_err(|e| IcechunkError::Runtime { location: place, reason: e.to_string() })?;
    Ok(exported?)
}

/// A store over the references of the repository at `location` (its
/// branch, tag or snapshot), opened with `builder`'s options: Zarr v3
/// metadata as v2, virtual chunks as range references, stored chunks as
/// inline values or ranges of the repository's own files. Every tool that
/// takes references works on it.
///
/// # Errors
/// [`IcechunkError::Import`] if the repository cannot be read or a node
/// cannot be written as Zarr v2; [`IcechunkError::Runtime`] if no runtime
/// can run the read (this must not be called from inside an async runtime).
pub fn open_icechunk(
    builder: &ReferenceStoreBuilder,
    location: &IcechunkLocation,
) -> Result<ReferenceStore, IcechunkError> {
    let runtime_error = |reason: String| IcechunkError::Runtime { location: location.storage.clone(), reason };
    let runtime =
        tokio::runtime::Builder::new_current_thread().enable_all().build().map_err(|e| runtime_error(e.to_string()))?;
    let (set, storage) = runtime.block_on(async {
        let repository = location.open().await?;
        let version = kerchunk_icechunk::version_of(&repository, &location.branch, &location.storage).await?;
        let storage = location.storage_url()?;
        let set = kerchunk_icechunk::import(&repository, &version, &location.storage, &storage).await?;
        Ok::<_, IcechunkError>((set, storage))
    })?;
    builder.build(set, &storage).map_err(|e| runtime_error(e.to_string()))
}
