//! The virtual chunk containers a repository needs: one per target URL
//! prefix, which readers authorise one by one when they open it.

use std::collections::BTreeMap;
use std::path::PathBuf;

use icechunk::ObjectStoreConfig;
use icechunk::config::HttpConfig;
use icechunk::storage::S3Options;
use icechunk::virtual_chunks::VirtualChunkContainer;

/// The container prefix of a target URL, and the store that reads it: a
/// local file's folder (`file:///data/run/`), an HTTP(S) host
/// (`https://host/`), a bucket (`s3://bucket/`, `gs://bucket/`, `az://container/`).
///
/// # Errors
/// The reason, where the URL's scheme has no container icechunk reads.
pub(crate) fn container_of(url: &str) -> Result<(String, ObjectStoreConfig), String> {
    let parsed = url::Url::parse(url).map_err(|e| format!("{url} is not a URL: {e}"))?;
    let host = || parsed.host_str().filter(|h| !h.is_empty()).ok_or_else(|| format!("{url} names no host or bucket"));
    match parsed.scheme() {
        "file" => {
            let path = parsed.to_file_path().map_err(|()| format!("{url} is not a local path"))?;
            let folder = path.parent().map(PathBuf::from).ok_or_else(|| format!("{url} is in no folder"))?;
            let prefix = url::Url::from_directory_path(&folder)
                .map_err(|()| format!("{} is not an absolute folder", folder.display()))?;
            Ok((prefix.to_string(), ObjectStoreConfig::LocalFileSystem(folder)))
        }
        scheme @ ("http" | "https") => {
            let port = parsed.port().map(|p| format!(":{p}")).unwrap_or_default();
            Ok((format!("{scheme}://{}{port}/", host()?), ObjectStoreConfig::Http(HttpConfig::default())))
        }
        "s3" => Ok((format!("s3://{}/", host()?), ObjectStoreConfig::S3(S3Options::default()))),
        #[cfg(feature = "gcp")]
        "gs" | "gcs" => Ok((format!("gs://{}/", host()?), ObjectStoreConfig::Gcs(std::collections::HashMap::new()))),
        #[cfg(feature = "azure")]
        "az" | "azure" | "abfs" => {
            Ok((format!("az://{}/", host()?), ObjectStoreConfig::Azure(std::collections::HashMap::new())))
        }
        other => Err(format!("{url}: targets of scheme {other} have no icechunk container in this build")),
    }
}

/// The containers of the prefixes `prefixes` gathered, as icechunk's config holds them.
///
/// # Errors
/// icechunk's reason, where it refuses a prefix.
pub(crate) fn containers(prefixes: BTreeMap<String, ObjectStoreConfig>) -> Result<Vec<VirtualChunkContainer>, String> {
    prefixes.into_iter().map(|(prefix, store)| VirtualChunkContainer::new(prefix, store)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_target_has_the_container_of_its_folder_host_or_bucket() {
        let prefix = |url: &str| container_of(url).map(|(p, _)| p);
        assert_eq!(prefix("file:///data/run/a.nc").unwrap(), "file:///data/run/");
        assert_eq!(prefix("https://example.com:8080/x/y.nc").unwrap(), "https://example.com:8080/");
        assert_eq!(prefix("s3://bucket/x/y.nc").unwrap(), "s3://bucket/");
        assert!(prefix("ftp://host/x").unwrap_err().contains("scheme ftp"));
        #[cfg(feature = "gcp")]
        assert_eq!(prefix("gs://bucket/x/y.nc").unwrap(), "gs://bucket/");
        #[cfg(feature = "azure")]
        assert_eq!(prefix("az://container/x/y.nc").unwrap(), "az://container/");
    }
}
