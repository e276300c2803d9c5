//! The one trait a source of references answers, and its answer for a
//! [`ReferenceSet`] held in memory.
//!
//! The stores and the writers hold a `dyn ReferenceSource` and never ask
//! what kind it is. A source that must read before it can answer (a parquet
//! root loads record files) hands back a future; the sync store runs it on
//! its runtime, the async store awaits it. A new kind of source (an icechunk
//! manifest, a database) needs only an implementation of this trait.

use futures::future::BoxFuture;
use futures::stream::{self, BoxStream};

use super::{OwnedReference, ReferenceSet};
use crate::error::SourceError;
use crate::zarr::metadata::is_metadata_key;
use crate::zarr::{ChunkGrid, GridError};

/// A reference that is known once the source has read something.
pub type PendingReference = BoxFuture<'static, Result<Option<OwnedReference>, SourceError>>;

/// Keys that are known once the source has read something.
pub type PendingKeys = BoxFuture<'static, Result<Vec<String>, SourceError>>;

/// The answer to [`ReferenceSource::lookup`].
pub enum Lookup {
    /// Known now: the reference, or `None` if the key has none.
    Ready(Option<OwnedReference>),
    /// Known after a read.
    Pending(PendingReference),
}

impl std::fmt::Debug for Lookup {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Ready(reference) => f.debug_tuple("Ready").field(reference).finish(),
            Self::Pending(_) => f.write_str("Pending(..)"),
        }
    }
}

/// The answer to [`ReferenceSource::list_prefix`] and [`ReferenceSource::list_dir`]:
/// what is known now, and what is known after a read.
#[derive(Default)]
#[non_exhaustive]
pub struct Listing {
    /// Keys, in any order, possibly repeated.
    pub keys: Vec<String>,
    /// Folders (each ending in `/`), in any order, possibly repeated.
    pub prefixes: Vec<String>,
    /// More keys, known after a read.
    pub pending: Option<PendingKeys>,
}

impl Listing {
    /// A listing known now.
    #[must_use]
    pub fn ready(keys: Vec<String>, prefixes: Vec<String>) -> Self {
        Self { keys, prefixes, pending: None }
    }
}

impl std::fmt::Debug for Listing {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Listing")
            .field("keys", &self.keys)
            .field("prefixes", &self.prefixes)
            .field("pending", &self.pending.is_some())
            .finish()
    }
}

/// Which references [`ReferenceSource::walk`] visits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Walk {
    /// The metadata keys only (`.zgroup`, `.zarray`, `.zattrs`, `.zmetadata`).
    Metadata,
    /// Every key: the metadata keys first, then the rest.
    All,
}

/// A source of references: what each key of a virtual Zarr store points to.
pub trait ReferenceSource: std::fmt::Debug + Send + Sync {
    /// What `key` holds.
    ///
    /// # Errors
    /// [`SourceError`] if the source cannot tell, and cannot start the read that would.
    fn lookup(&self, key: &str) -> Result<Lookup, SourceError>;

    /// Every key that starts with `prefix` (`""` or ending in `/`).
    ///
    /// # Errors
    /// [`SourceError`] if the source cannot tell, and cannot start the reads that would.
    fn list_prefix(&self, prefix: &str) -> Result<Listing, SourceError>;

    /// The keys directly under the folder `prefix` (`""` or ending in `/`),
    /// and its child folders.
    ///
    /// # Errors
    /// [`SourceError`] if the source cannot tell, and cannot start the reads that would.
    fn list_dir(&self, prefix: &str) -> Result<Listing, SourceError>;

    /// Every reference, for writers, one at a time: however large the
    /// source, it holds only what it reads for the reference at hand.
    fn walk(&self, walk: Walk) -> BoxStream<'_, Result<(String, OwnedReference), SourceError>>;

    /// The references, if they are a [`ReferenceSet`] in memory.
    fn in_memory(&self) -> Option<&ReferenceSet> {
        None
    }

    /// The chunk grid of the array at `array` (`a/b`, or `""` for an array
    /// at the root), as its `.zarray` says, if the source holds that document
    /// inline and can answer without a read; `None` otherwise (the `.zarray`
    /// may then be in a target, for a store to read). What read-ahead, region
    /// prefetches and statistics lay chunk keys on; a [`ReferenceSet`]
    /// answers from its chunk tables, with no parse.
    fn chunk_grid(&self, array: &str) -> Option<Result<ChunkGrid, GridError>> {
        inline_chunk_grid(self, array)
    }

    /// Whether every key but metadata is a chunk of an array, named as
    /// `.zmetadata` would place it (indices joined by `.`). A parquet root
    /// holds nothing else; a JSON set may. Writers of fsspec's parquet layout
    /// skip their check of every key when this is `true`.
    fn holds_only_dotted_chunk_keys(&self) -> bool {
        false
    }
}

/// The grid of `array` from its `.zarray`, if `source` holds it inline.
fn inline_chunk_grid<S: ReferenceSource + ?Sized>(source: &S, array: &str) -> Option<Result<ChunkGrid, GridError>> {
    let key = if array.is_empty() { ".zarray".to_owned() } else { format!("{array}/.zarray") };
    match source.lookup(&key) {
        Ok(Lookup::Ready(Some(OwnedReference::Inline(document)))) => Some(ChunkGrid::from_zarray_document(&document)),
        _ => None,
    }
}

impl ReferenceSource for ReferenceSet {
    fn lookup(&self, key: &str) -> Result<Lookup, SourceError> {
        Ok(Lookup::Ready(self.get_owned(key)))
    }

    fn list_prefix(&self, prefix: &str) -> Result<Listing, SourceError> {
        Ok(Listing::ready(self.keys_with_prefix(prefix), Vec::new()))
    }

    fn list_dir(&self, prefix: &str) -> Result<Listing, SourceError> {
        let (keys, prefixes) = self.list_dir(prefix);
        Ok(Listing::ready(keys, prefixes))
    }

    fn walk(&self, walk: Walk) -> BoxStream<'_, Result<(String, OwnedReference), SourceError>> {
        let metadata = self.iter_owned().filter(|(key, _)| is_metadata_key(key));
        let rest = self.iter_owned().filter(|(key, _)| !is_metadata_key(key));
        let keys = match walk {
            Walk::Metadata => metadata.chain(rest.take(0)),
            Walk::All => metadata.chain(rest.take(usize::MAX)),
        };
        Box::pin(stream::iter(keys.map(|(key, reference)| Ok((key.into_owned(), reference)))))
    }

    fn in_memory(&self) -> Option<&ReferenceSet> {
        Some(self)
    }

    fn chunk_grid(&self, array: &str) -> Option<Result<ChunkGrid, GridError>> {
        match self.table_grid(array) {
            Some(grid) => Some(Ok(grid.clone())),
            None => inline_chunk_grid(self, array),
        }
    }
}
