//! Listing. A JSON set lists from its sorted keys, synthesising folders from
//! the `/`-separated keys; a parquet root lists metadata keys from
//! `.zmetadata` and chunk keys from record files, which the adapters load first.

use zarrs_storage::{StorageError, StoreKey, StoreKeys, StoreKeysPrefixes, StorePrefix};

use super::{Core, Index, RecordFetch};

/// A listing in progress: what is known, and the records to load for the rest.
#[derive(Debug, Default)]
pub(crate) struct Listing {
    pub(crate) keys: Vec<String>,
    pub(crate) prefixes: Vec<String>,
    /// Records whose existing chunk keys belong in the listing ([`Core::add_record_keys`]).
    pub(crate) pending: Vec<RecordFetch>,
}

impl Listing {
    /// The keys, sorted, without duplicates; names that are not valid store keys are skipped.
    pub(crate) fn into_keys(self) -> StoreKeys {
        sorted(self.keys).into_iter().filter_map(|k| StoreKey::new(k).ok()).collect()
    }

    /// The keys and folders, sorted, without duplicates.
    pub(crate) fn into_keys_prefixes(self) -> StoreKeysPrefixes {
        let prefixes = sorted(self.prefixes).into_iter().filter_map(|p| StorePrefix::new(p).ok()).collect();
        StoreKeysPrefixes::new(sorted(self.keys).into_iter().filter_map(|k| StoreKey::new(k).ok()).collect(), prefixes)
    }
}

fn sorted(mut names: Vec<String>) -> Vec<String> {
    names.sort_unstable();
    names.dedup();
    names
}

impl Core {
    /// Every key under `prefix`.
    pub(crate) fn list_prefix(&self, prefix: &StorePrefix) -> Result<Listing, StorageError> {
        match &self.index {
            Index::Json(refs) => Ok(Listing { keys: refs.keys_with_prefix(prefix.as_str()), ..Listing::default() }),
            Index::Parquet(index) => self.list_prefix_parquet(index, prefix),
        }
    }

    /// The keys directly under `prefix` and its child prefixes.
    pub(crate) fn list_dir(&self, prefix: &StorePrefix) -> Result<Listing, StorageError> {
        match &self.index {
            Index::Json(refs) => {
                let (keys, prefixes) = refs.list_dir(prefix.as_str());
                Ok(Listing { keys, prefixes, ..Listing::default() })
            }
            Index::Parquet(index) => self.list_dir_parquet(index, prefix),
        }
    }
}
