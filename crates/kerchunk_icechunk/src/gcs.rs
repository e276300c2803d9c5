//! Repositories in Google Cloud Storage buckets (`icechunk+gs://bucket/prefix`), configured
//! with `object_store`'s keys for GCS, as the rest of the project takes them
//! (`--option google_service_account=...`).

use std::collections::HashMap;
use std::sync::Arc;

use icechunk::Storage;
use icechunk::config::GcsCredentials;
use zarrs_kerchunk::object_store::gcp::GoogleConfigKey;

/// The storage of the repository at `url` (`gs://bucket/prefix`, or `gcs://`), with
/// `options`: `object_store`'s GCS keys (`google_service_account`,
/// `google_service_account_key`, `google_application_credentials`, `google_bearer_token`,
/// `google_base_url`, `google_skip_signature`, and its client keys such as
/// `google_allow_http`). Without credentials among them, the environment's.
///
/// # Errors
/// The reason, naming a key `object_store` does not take for GCS, a URL without a bucket,
/// or icechunk's refusal.
pub(crate) fn storage(
    url: &str,
    options: &[(String, String)],
) -> Result<Arc<dyn Storage + Send + Sync>, Box<dyn std::error::Error + Send + Sync>> {
    let rest = url
        .strip_prefix("gs://")
        .or_else(|| url.strip_prefix("gcs://"))
        .ok_or_else(|| format!("{url} is not a gs:// URL"))?;
    let (bucket, prefix) = rest.split_once('/').unwrap_or((rest, ""));
    if bucket.is_empty() {
        return Err(format!("{url} names no bucket").into());
    }
    let mut config = HashMap::with_capacity(options.len());
    for (key, value) in options {
        // icechunk drops the keys it cannot parse, silently: they are named here instead.
        match key.parse::<GoogleConfigKey>() {
            Ok(GoogleConfigKey::Bucket) => {
                return Err(
                    format!("the option {key} is not one a GCS repository takes: its URL names the bucket").into()
                );
            }
            Ok(parsed) => config.insert(parsed.as_ref().to_owned(), value.clone()),
            Err(_) => return Err(format!("the option {key} is not one a GCS repository takes").into()),
        };
    }
    let prefix = prefix.trim_end_matches('/');
    let prefix = (!prefix.is_empty()).then(|| prefix.to_owned());
    // The environment's credentials first; the keys given are applied over them.
    let storage = icechunk::storage::new_gcs_storage(
        bucket.to_owned(),
        prefix,
        Some(GcsCredentials::FromEnv),
        Some(config),
        Vec::new(),
        Vec::new(),
    )?;
    Ok(storage)
}
