//! Listing: directories are synthesised from the `/`-separated keys.

use zarrs_storage::{StorageError, StoreKey, StoreKeys, StoreKeysPrefixes, StorePrefix};

use super::Core;

impl Core {
    /// Every key under `prefix`, sorted. Keys that are not valid store keys are skipped.
    pub(crate) fn list_prefix(&self, prefix: &StorePrefix) -> StoreKeys {
        self.references().keys_with_prefix(prefix.as_str()).filter_map(|k| StoreKey::new(k).ok()).collect()
    }

    /// The keys directly under `prefix` and its child prefixes, sorted.
    pub(crate) fn list_dir(&self, prefix: &StorePrefix) -> Result<StoreKeysPrefixes, StorageError> {
        let refs = self.references();
        let mut keys = Vec::new();
        let mut prefixes = Vec::new();
        let mut cursor = prefix.as_str().to_owned();
        loop {
            let Some(key) = refs.first_key_from(&cursor).filter(|k| k.starts_with(prefix.as_str())) else { break };
            let rest = &key[prefix.as_str().len()..];
            match rest.split_once('/') {
                Some((child, _)) => {
                    let child_prefix = format!("{}{child}/", prefix.as_str());
                    // Jump past every key under this child: '0' sorts right after '/'.
                    cursor = format!("{}{child}0", prefix.as_str());
                    if let Ok(p) = StorePrefix::new(child_prefix) {
                        prefixes.push(p);
                    }
                }
                None => {
                    cursor = format!("{key}\0");
                    if let Ok(k) = StoreKey::new(key) {
                        keys.push(k);
                    }
                }
            }
        }
        Ok(StoreKeysPrefixes::new(keys, prefixes))
    }
}
