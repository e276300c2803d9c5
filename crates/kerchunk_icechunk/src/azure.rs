//! Repositories in Azure Blob Storage containers (`icechunk+az://container/prefix`),
//! configured with `object_store`'s keys for Azure, as the rest of the project takes them
//! (`--option azure_storage_account_name=...`).

use std::collections::HashMap;
use std::sync::Arc;

use icechunk::Storage;
use icechunk::storage::AzureCredentials;
use zarrs_kerchunk::object_store::azure::AzureConfigKey;

/// The storage of the repository at `url` (`az://container/prefix`, or `azure://`), with
/// `options`: `object_store`'s Azure keys (`azure_storage_account_name`,
/// `azure_storage_account_key`, `azure_storage_sas_key`, `azure_storage_token`,
/// `azure_storage_endpoint`, `azure_storage_use_emulator`, `azure_skip_signature`,
/// `azure_allow_http`, ...). The account name is required (or `AZURE_STORAGE_ACCOUNT_NAME`),
/// unless the emulator is used (its account, `devstoreaccount1`); without keys, the
/// environment's credentials.
///
/// # Errors
/// The reason, naming a key `object_store` does not take for Azure, a URL without a
/// container, or icechunk's refusal.
pub(crate) async fn storage(
    url: &str,
    options: &[(String, String)],
) -> Result<Arc<dyn Storage + Send + Sync>, Box<dyn std::error::Error + Send + Sync>> {
    let rest = url
        .strip_prefix("az://")
        .or_else(|| url.strip_prefix("azure://"))
        .ok_or_else(|| format!("{url} is not an az:// URL"))?;
    let (container, prefix) = rest.split_once('/').unwrap_or((rest, ""));
    if container.is_empty() {
        return Err(format!("{url} names no container").into());
    }
    let (mut account, mut emulator) = (None, false);
    let mut config = HashMap::with_capacity(options.len());
    for (key, value) in options {
        // icechunk drops the keys it cannot parse, silently: they are named here instead.
        match key.parse::<AzureConfigKey>() {
            Ok(AzureConfigKey::AccountName) => account = Some(value.clone()),
            Ok(parsed) => {
                emulator |= parsed == AzureConfigKey::UseEmulator
                    && matches!(value.to_ascii_lowercase().as_str(), "true" | "1" | "yes");
                config.insert(parsed.as_ref().to_owned(), value.clone());
            }
            Err(_) => return Err(format!("the option {key} is not one an Azure repository takes").into()),
        }
    }
    // icechunk names the account itself, over the environment's: read it here as object_store would.
    let account = match account.or_else(|| std::env::var("AZURE_STORAGE_ACCOUNT_NAME").ok()) {
        Some(account) => account,
        None if emulator => "devstoreaccount1".to_owned(),
        None => return Err("an Azure repository needs azure_storage_account_name".into()),
    };
    let prefix = prefix.trim_end_matches('/');
    let prefix = (!prefix.is_empty()).then(|| prefix.to_owned());
    // The keys given come after the environment's, and take precedence.
    let storage = icechunk::storage::new_azure_blob_storage(
        account,
        container.to_owned(),
        prefix,
        Some(AzureCredentials::FromEnv),
        Some(config),
    )
    .await?;
    Ok(storage)
}
