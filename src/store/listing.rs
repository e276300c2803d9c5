//! Listing: directories are synthesised from the `/`-separated keys.

use zarrs_storage::{StoreKey, StoreKeys, StoreKeysPrefixes, StorePrefix};

use super::Core;

impl Core {
    /// Every key under `prefix`, sorted. Keys that are not valid store keys are skipped.
    pub(crate) fn list_prefix(&self, prefix: &StorePrefix) -> StoreKeys {
        self.references().keys_with_prefix(prefix.as_str()).filter_map(|k| StoreKey::new(k).ok()).collect()
    }

    /// The keys directly under `prefix` and its child prefixes, sorted.
    pub(crate) fn list_dir(&self, prefix: &StorePrefix) -> StoreKeysPrefixes {
        let refs = self.references();
        let mut keys = Vec::new();
        let mut prefixes = Vec::new();
        let mut cursor = prefix.as_str().to_owned();
        while let Some(key) = refs.first_key_from(&cursor).filter(|k| k.starts_with(prefix.as_str())) {
            let rest = &key[prefix.as_str().len()..];
            if let Some((child, _)) = rest.split_once('/') {
                // Jump past every key under this child: '0' sorts right after '/'.
                cursor = format!("{}{child}0", prefix.as_str());
                if let Ok(p) = StorePrefix::new(format!("{}{child}/", prefix.as_str())) {
                    prefixes.push(p);
                }
            } else {
                cursor = format!("{key}\0");
                if let Ok(k) = StoreKey::new(key) {
                    keys.push(k);
                }
            }
        }
        StoreKeysPrefixes::new(keys, prefixes)
    }
}
