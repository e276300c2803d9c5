//! Finished listings: what a source lists, sorted and without repeats, as zarrs' key types.

use zarrs_storage::{StoreKey, StoreKeys, StoreKeysPrefixes, StorePrefix};

/// The keys, sorted, without duplicates; names that are not valid store keys are skipped.
pub(crate) fn into_keys(keys: Vec<String>) -> StoreKeys {
    sorted(keys).into_iter().filter_map(|k| StoreKey::new(k).ok()).collect()
}

/// The keys and folders, sorted, without duplicates.
pub(crate) fn into_keys_prefixes(keys: Vec<String>, prefixes: Vec<String>) -> StoreKeysPrefixes {
    let prefixes = sorted(prefixes).into_iter().filter_map(|p| StorePrefix::new(p).ok()).collect();
    StoreKeysPrefixes::new(into_keys(keys), prefixes)
}

fn sorted(mut names: Vec<String>) -> Vec<String> {
    names.sort_unstable();
    names.dedup();
    names
}
