//! Repositories in S3 buckets (`icechunk+s3://bucket/prefix`), configured
//! with `object_store`'s keys for S3, as the rest of the project takes them
//! (`--option aws_region=...`).

use std::sync::Arc;

use icechunk::Storage;
use icechunk::storage::{S3Credentials, S3Options, S3StaticCredentials};

/// The storage of the repository at `url` (`s3://bucket/prefix`), with
/// `options`: `aws_region`, `aws_endpoint`, `aws_allow_http`,
/// `aws_virtual_hosted_style_request`, `aws_access_key_id`,
/// `aws_secret_access_key`, `aws_session_token`, `aws_skip_signature`
/// (each also without `aws_`). Without keys, the environment's credentials.
///
/// # Errors
/// The reason, naming a key not taken, a URL without a bucket, or icechunk's refusal.
pub(crate) async fn storage(
    url: &str,
    options: &[(String, String)],
) -> Result<Arc<dyn Storage + Send + Sync>, Box<dyn std::error::Error + Send + Sync>> {
    let rest = url.strip_prefix("s3://").ok_or_else(|| format!("{url} is not an s3:// URL"))?;
    let (bucket, prefix) = rest.split_once('/').unwrap_or((rest, ""));
    if bucket.is_empty() {
        return Err(format!("{url} names no bucket").into());
    }
    let mut config = S3Options::default();
    let (mut key_id, mut secret, mut token, mut anonymous, mut virtual_hosted) = (None, None, None, false, None);
    for (key, value) in options {
        let truth = || matches!(value.to_ascii_lowercase().as_str(), "true" | "1" | "yes");
        match key.to_ascii_lowercase().trim_start_matches("aws_") {
            "region" | "default_region" => config = config.with_region(value),
            "endpoint" | "endpoint_url" => config = config.with_endpoint_url(value),
            "allow_http" => config.allow_http = truth(),
            "virtual_hosted_style_request" => virtual_hosted = Some(truth()),
            "access_key_id" => key_id = Some(value.clone()),
            "secret_access_key" => secret = Some(value.clone()),
            "session_token" | "token" => token = Some(value.clone()),
            "skip_signature" => anonymous = truth(),
            _ => return Err(format!("the option {key} is not one an S3 repository takes").into()),
        }
    }
    // object_store's default: paths, not virtual hosts, unless asked (what an endpoint such as
    // moto's or MinIO's needs).
    config.force_path_style = !virtual_hosted.unwrap_or(false);
    let credentials = match (key_id, secret) {
        (Some(access_key_id), Some(secret_access_key)) => S3Credentials::Static(S3StaticCredentials {
            access_key_id,
            secret_access_key,
            session_token: token,
            expires_after: None,
        }),
        (None, None) if anonymous => S3Credentials::Anonymous,
        (None, None) => S3Credentials::FromEnv,
        _ => return Err("aws_access_key_id and aws_secret_access_key go together".into()),
    };
    let prefix = prefix.trim_end_matches('/');
    let prefix = (!prefix.is_empty()).then(|| prefix.to_owned());
    let storage = icechunk::storage::new_s3_object_store_storage(
        config,
        bucket.to_owned(),
        prefix,
        Some(credentials),
        Vec::new(),
        Vec::new(),
    )
    .await?;
    Ok(storage)
}
