//! References written into an icechunk repository: metadata as Zarr v3,
//! range references as virtual chunks, inline values as chunks of the
//! repository's own, in one commit.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::Arc;

use bytes::Bytes;
use futures::StreamExt;
use icechunk::format::manifest::{Checksum, SecondsSinceEpoch, VirtualChunkLocation, VirtualChunkRef};
use icechunk::format::{ChunkIndices, Path};
use icechunk::storage::ETag;
use icechunk::{ObjectStoreConfig, Repository, RepositoryConfig, Store};
use kerchunk::{OwnedReference, Walk};
use serde_json::{Map, Value};
use tokio::sync::RwLock;
use zarrs_kerchunk::{AsyncReferenceStore, Pin, Target};

use crate::chunks::{self, ChunkLayout};
use crate::containers;
use crate::error::{ExportError, MetadataError, RepositoryError};
use crate::metadata;

/// Virtual references handed to icechunk at once, per array.
const BATCH: usize = 10_000;

/// How references are committed.
#[derive(Clone, Debug)]
pub struct ExportOptions {
    branch: String,
    message: String,
}

impl Default for ExportOptions {
    /// Branch `main`, the message "references from `zarrs_kerchunk`".
    fn default() -> Self {
        Self { branch: "main".into(), message: "references from zarrs_kerchunk".into() }
    }
}

impl ExportOptions {
    /// Commit on `branch` (`main` by default; it must exist).
    #[must_use]
    pub fn with_branch(mut self, branch: impl Into<String>) -> Self {
        self.branch = branch.into();
        self
    }

    /// The commit's message.
    #[must_use]
    pub fn with_message(mut self, message: impl Into<String>) -> Self {
        self.message = message.into();
        self
    }
}

/// What an export wrote.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct Exported {
    /// The snapshot committed.
    pub snapshot: String,
    /// Groups written (those the references imply included).
    pub groups: usize,
    /// Arrays written.
    pub arrays: usize,
    /// Chunks written as virtual references.
    pub virtual_chunks: u64,
    /// Chunks written into the repository (the references' inline values, and empty chunks).
    pub inline_chunks: u64,
    /// The virtual chunk containers the chunks read from, which readers authorise.
    pub containers: Vec<String>,
}

/// Write the references `references` reads into `repository` (at
/// `location`, for messages) as one commit: see the crate's docs for what
/// changes on the way. Targets are resolved as the store resolves them
/// (relative paths, templates, rewrites), whole-file references measured
/// from their pins or with one metadata request each, and pins recorded as
/// icechunk's checksums (the ETag, else the last-modified time).
///
/// # Errors
/// [`ExportError`] naming the key, the array, the target or the repository's
/// step that failed; nothing is committed then (though a failed commit finds
/// the repository's configuration already naming the new containers, which
/// are saved just before it).
pub async fn export(
    references: &AsyncReferenceStore,
    repository: &Repository,
    location: &str,
    options: &ExportOptions,
) -> Result<Exported, ExportError> {
    let session = repository
        .writable_session(&options.branch)
        .await
        .map_err(RepositoryError::at(location, &format!("a session on branch {}", options.branch)))?;
    let session = Arc::new(RwLock::new(session));
    let store = Store::from_session(Arc::clone(&session)).await;
    let mut writer = Writer::new(&store, references, location);
    let mut walk = references.source().walk(Walk::All);
    let mut metadata: BTreeMap<String, Bytes> = BTreeMap::new();
    let mut nodes_written = false;
    while let Some(item) = walk.next().await {
        let (key, reference) = item.map_err(ExportError::Source)?;
        if kerchunk::zarr::is_metadata_key(&key) {
            if nodes_written {
                return Err(reference_error(&key, "metadata after the chunks of the references"));
            }
            let OwnedReference::Inline(bytes) = reference else {
                return Err(reference_error(&key, "metadata held in a target file is not exported"));
            };
            metadata.insert(key, bytes);
            continue;
        }
        if !nodes_written {
            writer.nodes(&metadata).await?;
            nodes_written = true;
        }
        writer.chunk(&key, reference).await?;
    }
    if !nodes_written {
        writer.nodes(&metadata).await?;
    }
    writer.flush_all().await?;
    let Writer { groups, arrays, virtual_chunks, inline_chunks, prefixes, .. } = writer;
    let names: Vec<String> = prefixes.keys().cloned().collect();
    if !prefixes.is_empty() {
        let containers =
            containers::containers(prefixes).map_err(RepositoryError::at(location, "its virtual chunk containers"))?;
        let mut all = repository.config().virtual_chunk_containers.clone().unwrap_or_default();
        for container in containers {
            all.insert(container.url_prefix().to_owned(), container);
        }
        let config = RepositoryConfig { virtual_chunk_containers: Some(all), ..RepositoryConfig::default() };
        let reopened =
            repository.reopen(Some(config), None).await.map_err(RepositoryError::at(location, "its configuration"))?;
        reopened.save_config().await.map_err(RepositoryError::at(location, "saving its configuration"))?;
    }
    let snapshot = session
        .write()
        .await
        .commit(options.message.clone())
        .execute()
        .await
        .map_err(RepositoryError::at(location, "the commit"))?;
    Ok(Exported {
        snapshot: snapshot.to_string(),
        groups,
        arrays: arrays.len(),
        virtual_chunks,
        inline_chunks,
        containers: names,
    })
}

/// An empty chunk (`[url, 0, 0]`, an empty file or value) has no place in a
/// repository: icechunk refuses chunks of no bytes, virtual or stored, and
/// leaving it out would read as the fill value where every reader of the
/// references fails to decode it.
fn empty_chunk(key: &str) -> ExportError {
    reference_error(
        key,
        "an empty chunk, which icechunk does not store (virtual or not), and which left out would read as \
         the fill value instead of failing to decode",
    )
}

fn reference_error(key: &str, reason: impl Into<String>) -> ExportError {
    ExportError::Reference { key: key.to_owned(), reason: reason.into() }
}

/// A target as its chunks' references need it.
struct ResolvedTarget {
    target: Target,
    location: VirtualChunkLocation,
    checksum: Option<Checksum>,
    /// The pinned size.
    size: Option<u64>,
}

/// The writes of one export, and what they have written.
struct Writer<'a> {
    store: &'a Store,
    references: &'a AsyncReferenceStore,
    location: &'a str,
    /// Each array's path (`""` at the root) and chunk layout.
    arrays: HashMap<String, ChunkLayout>,
    groups: usize,
    /// Virtual references not yet handed to icechunk, by array.
    pending: HashMap<String, Vec<(ChunkIndices, VirtualChunkRef)>>,
    /// The container prefixes of the targets, and their stores.
    prefixes: BTreeMap<String, ObjectStoreConfig>,
    /// Each URL as written, resolved.
    targets: HashMap<Option<Arc<str>>, Arc<ResolvedTarget>>,
    /// The sizes of whole-file targets, measured.
    sizes: HashMap<String, u64>,
    virtual_chunks: u64,
    inline_chunks: u64,
}

impl<'a> Writer<'a> {
    fn new(store: &'a Store, references: &'a AsyncReferenceStore, location: &'a str) -> Self {
        Self {
            store,
            references,
            location,
            arrays: HashMap::new(),
            groups: 0,
            pending: HashMap::new(),
            prefixes: BTreeMap::new(),
            targets: HashMap::new(),
            sizes: HashMap::new(),
            virtual_chunks: 0,
            inline_chunks: 0,
        }
    }

    fn repository_error(&self, what: String) -> impl FnOnce(icechunk::store::StoreError) -> ExportError + '_ {
        move |source| ExportError::Repository(RepositoryError::at(self.location, what)(source))
    }

    /// Every group and array of the references' metadata (keys to their
    /// bytes), as `zarr.json`: groups first, outermost first, with a group
    /// for every folder above a node that has none.
    async fn nodes(&mut self, metadata: &BTreeMap<String, Bytes>) -> Result<(), ExportError> {
        let mut groups: BTreeSet<(usize, String)> = BTreeSet::new();
        let mut arrays: Vec<String> = Vec::new();
        for key in metadata.keys() {
            let (folder, name) = key.rsplit_once('/').unwrap_or(("", key.as_str()));
            match name {
                ".zgroup" => {
                    groups.insert((depth(folder), folder.to_owned()));
                }
                ".zarray" => arrays.push(folder.to_owned()),
                _ => {}
            }
        }
        // Every folder above a node is a group, written or not.
        let above: Vec<String> = groups.iter().map(|(_, p)| p.clone()).chain(arrays.iter().cloned()).collect();
        for path in above {
            let mut folder = path.as_str();
            while !folder.is_empty() {
                folder = folder.rsplit_once('/').map_or("", |(parent, _)| parent);
                groups.insert((depth(folder), folder.to_owned()));
            }
        }
        for (_, path) in &groups {
            if arrays.contains(path) {
                return Err(reference_error(&format!("{path}/.zgroup"), "a group and an array at one path"));
            }
            let attributes = attributes(metadata, path)?;
            self.set(&node_key(path), metadata::group_v3(&attributes)).await?;
            self.groups += 1;
        }
        for path in arrays {
            let zarray_key = if path.is_empty() { ".zarray".to_owned() } else { format!("{path}/.zarray") };
            let zarray = &metadata[&zarray_key];
            let v3 = metadata::array_v3(&path, zarray, attributes(metadata, &path)?)?;
            let v2 = metadata::parse_v2(zarray).map_err(|reason| MetadataError { path: path.clone(), reason })?;
            self.set(&node_key(&path), v3).await?;
            self.arrays.insert(path, ChunkLayout::of(&v2));
        }
        Ok(())
    }

    async fn set(&self, key: &str, document: Value) -> Result<(), ExportError> {
        let bytes = Bytes::from(document.to_string());
        self.store.set(key, bytes).await.map_err(self.repository_error(format!("writing {key}")))
    }

    /// One chunk's reference, written or queued.
    async fn chunk(&mut self, key: &str, reference: OwnedReference) -> Result<(), ExportError> {
        let (array, indices) = chunks::locate(&self.arrays, key).map_err(|reason| reference_error(key, reason))?;
        let array = array.to_owned();
        let (url, offset, length) = match reference {
            OwnedReference::Inline(bytes) if bytes.is_empty() => return Err(empty_chunk(key)),
            OwnedReference::Inline(bytes) => return self.inline(key, &array, &indices, bytes).await,
            OwnedReference::Range { length: 0, .. } => return Err(empty_chunk(key)),
            OwnedReference::Range { url, offset, length } => (url, offset, Some(length)),
            OwnedReference::Whole { url } => (url, 0, None),
            OwnedReference::Malformed { reason } => return Err(reference_error(key, reason.to_string())),
        };
        let target = self.target(key, url)?;
        let length = match length.or(target.size) {
            Some(length) => length,
            None => self.measure(key, &target).await?,
        };
        if length == 0 {
            return Err(empty_chunk(key));
        }
        let reference =
            VirtualChunkRef { location: target.location.clone(), offset, length, checksum: target.checksum.clone() };
        let queue = self.pending.entry(array.clone()).or_default();
        queue.push((ChunkIndices(indices), reference));
        if queue.len() >= BATCH {
            self.flush(&array).await?;
        }
        Ok(())
    }

    /// The target a reference's URL (as written) reads, resolved once per URL:
    /// resolving and parsing it for each of a million chunks would cost more than the rest.
    fn target(&mut self, key: &str, url: Option<Arc<str>>) -> Result<Arc<ResolvedTarget>, ExportError> {
        if let Some(known) = self.targets.get(&url) {
            return Ok(Arc::clone(known));
        }
        let target = self
            .references
            .target(url.as_deref())
            .map_err(|e| reference_error(key, format!("its target does not resolve: {e}")))?;
        let (prefix, store) = containers::container_of(target.url()).map_err(|reason| reference_error(key, reason))?;
        self.prefixes.entry(prefix).or_insert(store);
        let location = VirtualChunkLocation::from_url(target.url())
            .map_err(|e| reference_error(key, format!("icechunk refuses its target {}: {e}", target.url())))?;
        let resolved = Arc::new(ResolvedTarget {
            location,
            checksum: target.pin().and_then(checksum),
            size: target.pin().map(|pin| pin.size),
            target,
        });
        self.targets.insert(url, Arc::clone(&resolved));
        Ok(resolved)
    }

    /// The size of a whole-file reference's unpinned target: one metadata request per target.
    async fn measure(&mut self, key: &str, target: &ResolvedTarget) -> Result<u64, ExportError> {
        let url = target.target.url().to_owned();
        if let Some(&size) = self.sizes.get(&url) {
            return Ok(size);
        }
        let observed = target.target.observe().await.map_err(|source| ExportError::Target {
            key: key.to_owned(),
            url: url.clone(),
            source,
        })?;
        self.sizes.insert(url, observed.size);
        Ok(observed.size)
    }

    async fn inline(&mut self, key: &str, array: &str, indices: &[u32], bytes: Bytes) -> Result<(), ExportError> {
        let chunk_key = chunk_key(array, indices);
        self.store
            .set(&chunk_key, bytes)
            .await
            .map_err(self.repository_error(format!("writing the chunk of {key}")))?;
        self.inline_chunks += 1;
        Ok(())
    }

    async fn flush(&mut self, array: &str) -> Result<(), ExportError> {
        let Some(batch) = self.pending.remove(array) else { return Ok(()) };
        let count = batch.len() as u64;
        let path = node_path(array).map_err(|reason| reference_error(array, reason))?;
        // Containers are checked by readers, which authorise them; they are written below.
        let written = self
            .store
            .set_virtual_refs(&path, false, batch)
            .await
            .map_err(self.repository_error(format!("writing the chunks of {array:?}")))?;
        if let icechunk::store::SetVirtualRefsResult::FailedRefs(failed) = written {
            return Err(reference_error(array, format!("icechunk refused {} of its chunk references", failed.len())));
        }
        self.virtual_chunks += count;
        Ok(())
    }

    async fn flush_all(&mut self) -> Result<(), ExportError> {
        let arrays: Vec<String> = self.pending.keys().cloned().collect();
        for array in arrays {
            self.flush(&array).await?;
        }
        Ok(())
    }
}

/// How many folders deep `path` is (`""` 0, `a` 1, `a/b` 2).
fn depth(path: &str) -> usize {
    if path.is_empty() { 0 } else { path.matches('/').count() + 1 }
}

/// The `.zattrs` of the node at `path`, or none.
fn attributes(metadata: &BTreeMap<String, Bytes>, path: &str) -> Result<Map<String, Value>, ExportError> {
    let key = if path.is_empty() { ".zattrs".to_owned() } else { format!("{path}/.zattrs") };
    let Some(bytes) = metadata.get(&key) else { return Ok(Map::new()) };
    match serde_json::from_slice(bytes) {
        Ok(Value::Object(attributes)) => Ok(attributes),
        Ok(_) => Err(reference_error(&key, "not a JSON object")),
        Err(e) => Err(reference_error(&key, format!("not JSON: {e}"))),
    }
}

/// The `zarr.json` key of the node at `path`.
fn node_key(path: &str) -> String {
    if path.is_empty() { "zarr.json".to_owned() } else { format!("{path}/zarr.json") }
}

/// The v3 key of a chunk (`a/c/0/1`; `a/c` for a 0-d array).
fn chunk_key(array: &str, indices: &[u32]) -> String {
    let mut key = if array.is_empty() { "c".to_owned() } else { format!("{array}/c") };
    for index in indices {
        key.push('/');
        key.push_str(&index.to_string());
    }
    key
}

/// icechunk's path of the node at `path` (`/a/b`).
fn node_path(path: &str) -> Result<Path, String> {
    Path::try_from(format!("/{path}").as_str()).map_err(|e| format!("not a path icechunk takes: {e}"))
}

/// A pin as icechunk's checksum: the ETag, else the last-modified time in
/// whole seconds, rounded up (icechunk reads a chunk if its target was last
/// modified no later than that: a time rounded down would refuse every
/// file modified part of a second past it).
fn checksum(pin: &Pin) -> Option<Checksum> {
    if let Some(etag) = &pin.etag {
        return Some(Checksum::ETag(ETag(etag.clone())));
    }
    let modified = pin.last_modified?;
    let seconds = modified.timestamp() + i64::from(modified.timestamp_subsec_nanos() > 0);
    Some(Checksum::LastModified(SecondsSinceEpoch(u32::try_from(seconds).ok()?)))
}
