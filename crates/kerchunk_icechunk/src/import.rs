//! A repository's snapshot read back as kerchunk references: its metadata
//! as Zarr v2 documents, virtual chunks as range references, chunks stored
//! in its manifests as inline values, and chunks stored in its own storage as
//! range references into it (`chunks/<id>`).

use futures::StreamExt;
use icechunk::Repository;
use icechunk::format::Path;
use icechunk::format::manifest::ChunkPayload;
use icechunk::repository::VersionInfo;
use kerchunk::{ReferenceSet, ReferenceSetBuilder};

use crate::error::{ImportError, RepositoryError};

/// The version `name` names in `repository`: a branch, else a tag, else a snapshot id.
///
/// # Errors
/// [`ImportError::Repository`] where it names none of them.
pub async fn version_of(repository: &Repository, name: &str, location: &str) -> Result<VersionInfo, ImportError> {
    if repository.lookup_branch(name).await.is_ok() {
        return Ok(VersionInfo::BranchTipRef(name.to_owned()));
    }
    if repository.lookup_tag(name).await.is_ok() {
        return Ok(VersionInfo::TagRef(name.to_owned()));
    }
    match icechunk::format::SnapshotId::try_from(name) {
        Ok(id) => Ok(VersionInfo::SnapshotId(id)),
        Err(e) => Err(RepositoryError::at(location, format!("finding {name:?}"))(format!(
            "no branch, tag or snapshot of that name ({e})"
        ))
        .into()),
    }
}

/// The references of `repository`'s snapshot `version`. `storage_url` is the
/// repository's own storage as a URL (`file:///data/repo`), which references
/// to the chunks it stores (not inline, not virtual) point into.
///
/// # Errors
/// [`ImportError`] naming the repository's step, or the node whose metadata
/// Zarr v2 cannot express.
pub async fn import(
    repository: &Repository,
    version: &VersionInfo,
    location: &str,
    storage_url: &str,
) -> Result<ReferenceSet, ImportError> {
    let session = repository
        .readonly_session(version)
        .await
        .map_err(RepositoryError::at(location, &format!("opening {version:?}")))?;
    let mut references = ReferenceSetBuilder::new();
    let nodes = session.list_nodes(&Path::root()).await.map_err(RepositoryError::at(location, "listing its nodes"))?;
    let mut zero_dimensional = std::collections::HashSet::new();
    for node in nodes {
        let node = node.map_err(RepositoryError::at(location, "listing its nodes"))?;
        let path = node.path.to_string().trim_start_matches('/').to_owned();
        let v2 = kerchunk_v3::node_v2(&path, &node.user_data)?;
        // Chunks uneven along an axis (a rectilinear grid) have no Zarr v2 form a reader reads.
        if kerchunk_v3::edges_of(&v2.document).is_some() {
            let reason = "its chunks are uneven (a rectilinear grid), which Zarr v2 references cannot hold; \
                          importing it as Zarr v3 references is not done yet";
            return Err(kerchunk_v3::MetadataError::new(path, reason).into());
        }
        let folder = |name: &str| if path.is_empty() { name.to_owned() } else { format!("{path}/{name}") };
        let name = if v2.is_array { ".zarray" } else { ".zgroup" };
        if v2.is_array && v2.document["shape"].as_array().is_some_and(Vec::is_empty) {
            zero_dimensional.insert(path.clone());
        }
        references.insert_inline(&folder(name), v2.document.to_string().as_bytes());
        if !v2.attributes.is_empty() {
            references
                .insert_inline(&folder(".zattrs"), serde_json::Value::Object(v2.attributes).to_string().as_bytes());
        }
    }
    let chunks = session.all_chunks().await.map_err(RepositoryError::at(location, "listing its chunks"))?;
    let mut chunks = std::pin::pin!(chunks);
    let storage = storage_url.trim_end_matches('/');
    while let Some(chunk) = chunks.next().await {
        let (path, info) = chunk.map_err(RepositoryError::at(location, "listing its chunks"))?;
        let path = path.to_string().trim_start_matches('/').to_owned();
        let indices: Vec<String> = info.coord.0.iter().map(u32::to_string).collect();
        let part =
            if indices.is_empty() && zero_dimensional.contains(&path) { "0".to_owned() } else { indices.join(".") };
        let key = if path.is_empty() { part } else { format!("{path}/{part}") };
        match info.payload {
            ChunkPayload::Inline(bytes) => references.insert_inline(&key, &bytes),
            ChunkPayload::Virtual(virtual_ref) => {
                references.insert_range(&key, Some(virtual_ref.location.url()), virtual_ref.offset, virtual_ref.length);
            }
            ChunkPayload::Ref(stored) => {
                let url = format!("{storage}/chunks/{}", stored.id);
                references.insert_range(&key, Some(&url), stored.offset, stored.length);
            }
            // A kind of chunk a later icechunk adds: named, never left out.
            other => references.insert_malformed(&key, &format!("an icechunk chunk of a kind not read: {other:?}")),
        }
    }
    Ok(references.build())
}
