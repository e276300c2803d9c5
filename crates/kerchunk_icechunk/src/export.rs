//! References written into an icechunk repository: metadata as Zarr v3,
//! range references as virtual chunks, inline values as chunks of the
//! repository's own, in one commit.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use bytes::Bytes;
use futures::StreamExt;
use icechunk::config::{CachingConfig, ManifestConfig};
use icechunk::format::manifest::{Checksum, SecondsSinceEpoch, VirtualChunkLocation, VirtualChunkRef};
use icechunk::format::{ChunkIndices, Path};
use icechunk::storage::ETag;
use icechunk::{ObjectStoreConfig, Repository, RepositoryConfig};
use kerchunk::{Lookup, OwnedReference, Walk};
use serde_json::Value;
use zarrs_kerchunk::{AsyncReferenceStore, Pin, Target};

use crate::chunks::{self, ChunkLayout};
use crate::commits::Commits;
use crate::containers;
use crate::error::{ExportError, RepositoryError};
use crate::nodes::{Nodes, node_key};
use crate::splits;

/// Virtual references handed to icechunk at once, per array.
const BATCH: usize = 10_000;

/// The most chunks in one manifest, by default: see [`ExportOptions::with_manifest_split`].
pub const MANIFEST_SPLIT: u32 = 100_000;

/// How references are committed.
#[derive(Clone, Debug)]
pub struct ExportOptions {
    branch: String,
    message: String,
    manifest_split: u32,
    commit_every: Option<u64>,
}

impl Default for ExportOptions {
    /// Branch `main`, the message "references from `zarrs_kerchunk`",
    /// manifests split every [`MANIFEST_SPLIT`] chunks.
    fn default() -> Self {
        Self {
            branch: "main".into(),
            message: "references from zarrs_kerchunk".into(),
            manifest_split: MANIFEST_SPLIT,
            commit_every: None,
        }
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

    /// Split the manifest of an array of more than `chunks` chunks into
    /// manifests of at most `chunks` (at least 1), along its outer axes
    /// ([`MANIFEST_SPLIT`] by default). icechunk builds each manifest whole
    /// in memory as it commits, so this bounds what a commit adds to the
    /// references the session holds; readers fetch only the manifests of
    /// the chunks they read. A repository whose configuration sets
    /// `manifest.splitting` is split as it says, and this is not saved in
    /// the configuration.
    #[must_use]
    pub fn with_manifest_split(mut self, chunks: u32) -> Self {
        self.manifest_split = chunks;
        self
    }

    /// Commit in parts of `chunks` chunks (at least 1; a part ends at the
    /// first batch that reaches it, virtual references being handed to
    /// icechunk 10 000 of an array at a time), so that the session holds one
    /// part at a time, not every reference (icechunk holds a few hundred
    /// bytes a reference until the commit). The parts are committed
    /// on a working branch of their own (the branch's name,
    /// `-zarrs-kerchunk-export-`, the process and the time), the last with
    /// the message and the others with the message and `(part N)`; then the
    /// branch is moved to the last, if it has not moved since the export
    /// started, and the working branch deleted. The branch's history shows
    /// every part; a failed export leaves the branch as it was. By default
    /// (`None`), everything is one commit.
    #[must_use]
    pub fn with_commit_every(mut self, chunks: Option<u64>) -> Self {
        self.commit_every = chunks;
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
    // A Zarr v3 set (files of uneven length combined, on rectilinear grids): its `zarr.json`
    // documents, wherever the walk gives them, then its chunks.
    if let Ok(Lookup::Ready(Some(_))) = references.source().lookup("zarr.json") {
        let is_node = |key: &str| key == "zarr.json" || key.ends_with("/zarr.json");
        let mut documents: BTreeMap<String, Bytes> = BTreeMap::new();
        let mut walk = references.source().walk(Walk::All);
        while let Some(item) = walk.next().await {
            let (key, reference) = item.map_err(ExportError::Source)?;
            if !is_node(&key) {
                continue;
            }
            let OwnedReference::Inline(bytes) = reference else {
                return Err(reference_error(&key, "metadata held in a target file is not exported"));
            };
            documents.insert(key, bytes);
        }
        let nodes = Nodes::of_v3(&documents)?;
        let chunks = references.source().walk(Walk::All).filter(|item| {
            std::future::ready(!matches!(item, Ok((key, _)) if key == "zarr.json" || key.ends_with("/zarr.json")))
        });
        return write_export(repository, references, location, options, nodes, None, &mut Box::pin(chunks)).await;
    }
    let mut walk = references.source().walk(Walk::All);
    // The metadata comes first, and the session waits for it: how icechunk
    // splits an array's manifest depends on its shape, and a session keeps
    // the configuration it started with.
    let mut metadata: BTreeMap<String, Bytes> = BTreeMap::new();
    let mut first_chunk = None;
    while let Some(item) = walk.next().await {
        let (key, reference) = item.map_err(ExportError::Source)?;
        if !kerchunk::zarr::is_metadata_key(&key) {
            first_chunk = Some((key, reference));
            break;
        }
        let OwnedReference::Inline(bytes) = reference else {
            return Err(reference_error(&key, "metadata held in a target file is not exported"));
        };
        metadata.insert(key, bytes);
    }
    let nodes = Nodes::of(&metadata)?;
    write_export(repository, references, location, options, nodes, first_chunk, &mut walk).await
}

/// The export's writes: `nodes`, then `first_chunk` and the chunks `walk` has left, in commits
/// as `options` say, the containers saved; what it wrote.
async fn write_export(
    repository: &Repository,
    references: &AsyncReferenceStore,
    location: &str,
    options: &ExportOptions,
    nodes: Nodes,
    first_chunk: Option<(String, OwnedReference)>,
    walk: &mut (impl futures::Stream<Item = Result<(String, OwnedReference), kerchunk::SourceError>> + Unpin),
) -> Result<Exported, ExportError> {
    let writing = writing_handle(repository, &nodes, options.manifest_split)
        .await
        .map_err(RepositoryError::at(location, "opening it to write"))?;
    let commits = Commits::start(&writing, location, &options.branch, &options.message, options.commit_every).await?;
    let mut writer = Writer::new(commits, references, location);
    if let Err(e) = writer.write(nodes, first_chunk, walk).await {
        writer.commits.abandon().await;
        return Err(e);
    }
    let Writer { commits, groups, arrays, virtual_chunks, inline_chunks, prefixes, .. } = writer;
    let names: Vec<String> = prefixes.keys().cloned().collect();
    if !prefixes.is_empty()
        && let Err(e) = save_containers(repository, location, prefixes).await
    {
        commits.abandon().await;
        return Err(e);
    }
    let snapshot = commits.finish().await?;
    Ok(Exported {
        snapshot: snapshot.to_string(),
        groups,
        arrays: arrays.len(),
        virtual_chunks,
        inline_chunks,
        containers: names,
    })
}

/// Add the containers of `prefixes` to the configuration of `repository`, and save it.
async fn save_containers(
    repository: &Repository,
    location: &str,
    prefixes: BTreeMap<String, ObjectStoreConfig>,
) -> Result<(), ExportError> {
    let containers =
        containers::containers(prefixes).map_err(RepositoryError::at(location, "its virtual chunk containers"))?;
    let mut all = repository.config().virtual_chunk_containers.clone().unwrap_or_default();
    for container in containers {
        all.insert(container.url_prefix().to_owned(), container);
    }
    // Reopened from the repository as given: how the export splits manifests and caches them is
    // not saved with its containers.
    let config = RepositoryConfig { virtual_chunk_containers: Some(all), ..RepositoryConfig::default() };
    let reopened =
        repository.reopen(Some(config), None).await.map_err(RepositoryError::at(location, "its configuration"))?;
    reopened.save_config().await.map_err(RepositoryError::at(location, "saving its configuration"))?;
    Ok(())
}

/// The repository opened again, to write with: manifests split at `most`
/// chunks unless its configuration says how to split them, and at most
/// `most` chunk references of manifests cached (icechunk keeps every
/// manifest a commit writes in its cache, 15 million references by default,
/// which would hold every part of an export committed in parts). Neither is
/// saved in its configuration.
async fn writing_handle(
    repository: &Repository,
    nodes: &Nodes,
    most: u32,
) -> Result<Repository, icechunk::repository::RepositoryError> {
    let configured = repository.config().manifest.as_ref().is_some_and(|manifest| manifest.splitting.is_some());
    let grids = nodes.arrays.iter().map(|(path, _, layout)| (path.as_str(), layout.grid()));
    let splitting = if configured { None } else { splits::splitting(grids, most) };
    let config = RepositoryConfig {
        manifest: Some(ManifestConfig { splitting, ..ManifestConfig::default() }),
        caching: Some(CachingConfig { num_chunk_refs: Some(u64::from(most.max(1))), ..CachingConfig::default() }),
        ..RepositoryConfig::default()
    };
    Repository::open(Arc::clone(repository.storage())).config(config).execute().await
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
    commits: Commits<'a>,
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
    fn new(commits: Commits<'a>, references: &'a AsyncReferenceStore, location: &'a str) -> Self {
        Self {
            commits,
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

    /// The nodes, then `first_chunk` and the chunks `walk` has left; the
    /// metadata must all come before the chunks.
    async fn write(
        &mut self,
        nodes: Nodes,
        first_chunk: Option<(String, OwnedReference)>,
        walk: &mut (impl futures::Stream<Item = Result<(String, OwnedReference), kerchunk::SourceError>> + Unpin),
    ) -> Result<(), ExportError> {
        self.nodes(nodes).await?;
        if let Some((key, reference)) = first_chunk {
            self.chunk(&key, reference).await?;
        }
        while let Some(item) = walk.next().await {
            let (key, reference) = item.map_err(ExportError::Source)?;
            if kerchunk::zarr::is_metadata_key(&key) {
                return Err(reference_error(&key, "metadata after the chunks of the references"));
            }
            self.chunk(&key, reference).await?;
        }
        self.flush_all().await
    }

    /// Every group, then every array, as `zarr.json`.
    async fn nodes(&mut self, nodes: Nodes) -> Result<(), ExportError> {
        for (path, document) in nodes.groups {
            self.set(&node_key(&path), document).await?;
            self.groups += 1;
        }
        for (path, document, layout) in nodes.arrays {
            self.set(&node_key(&path), document).await?;
            self.arrays.insert(path, layout);
        }
        Ok(())
    }

    async fn set(&self, key: &str, document: Value) -> Result<(), ExportError> {
        let bytes = Bytes::from(document.to_string());
        self.commits.store().set(key, bytes).await.map_err(self.repository_error(format!("writing {key}")))
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
        self.commits
            .store()
            .set(&chunk_key, bytes)
            .await
            .map_err(self.repository_error(format!("writing the chunk of {key}")))?;
        self.inline_chunks += 1;
        self.commits.written(1).await
    }

    async fn flush(&mut self, array: &str) -> Result<(), ExportError> {
        let Some(batch) = self.pending.remove(array) else { return Ok(()) };
        let count = batch.len() as u64;
        let path = node_path(array).map_err(|reason| reference_error(array, reason))?;
        // Containers are checked by readers, which authorise them; they are written below.
        let written = self
            .commits
            .store()
            .set_virtual_refs(&path, false, batch)
            .await
            .map_err(self.repository_error(format!("writing the chunks of {array:?}")))?;
        if let icechunk::store::SetVirtualRefsResult::FailedRefs(failed) = written {
            return Err(reference_error(array, format!("icechunk refused {} of its chunk references", failed.len())));
        }
        self.virtual_chunks += count;
        self.commits.written(count).await
    }

    async fn flush_all(&mut self) -> Result<(), ExportError> {
        let arrays: Vec<String> = self.pending.keys().cloned().collect();
        for array in arrays {
            self.flush(&array).await?;
        }
        Ok(())
    }
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
