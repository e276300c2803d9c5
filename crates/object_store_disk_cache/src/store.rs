//! [`CachedStore`]: an [`ObjectStore`] decorator that reads byte ranges
//! through a [`DiskCache`].

use std::fmt;
use std::ops::Range;
use std::sync::Arc;

use async_trait::async_trait;
use bytes::{Bytes, BytesMut};
use futures::stream::BoxStream;
use futures::{StreamExt, TryStreamExt};
use object_store::path::Path;
use object_store::{
    CopyOptions, GetOptions, GetRange, GetResult, GetResultPayload, ListResult, MultipartUpload, ObjectMeta,
    ObjectStore, PutMultipartOptions, PutOptions, PutPayload, PutResult, RenameOptions, Result,
};

use crate::cache::{Counters, DiskCache};
use crate::entry::{Described, Unusable};
use crate::layout::Piece;

/// Fetches of one `get_ranges` in flight at once (as `object_store`'s own
/// `get_ranges` fetches its merged ranges).
const FETCHES_IN_FLIGHT: usize = 10;

/// Cached ranges of one `get_ranges` read from disk at once.
const READS_IN_FLIGHT: usize = 32;

/// An object store whose reads go through a [`DiskCache`].
///
/// Gets of whole objects and of ranges (bounded, from an offset, or a
/// suffix) are answered from the cache where it holds the bytes, and what it
/// lacks is fetched from the inner store, with `If-Match` on the version
/// checked (or `If-Unmodified-Since`, for a store without ETags), and
/// cached. Other gets (`If-None-Match`, `If-Modified-Since`, a version id),
/// listings and writes go to the inner store as they are; a write or a
/// delete through this store makes the object's version be checked again.
///
/// A metadata request (`head`) is answered from the version checked in this
/// process, once it was: by default each object costs one `HEAD` per
/// process, and a warm read no other request.
pub struct CachedStore {
    inner: Arc<dyn ObjectStore>,
    cache: Arc<DiskCache>,
    /// The URL of the inner store's root, ending in `/`: an object's URL is it and the path.
    root: String,
}

impl CachedStore {
    /// `inner`, whose root is at `root_url` (such as `s3://bucket/` or
    /// `https://host/`: it names the objects in the cache), read through `cache`.
    pub fn new(inner: Arc<dyn ObjectStore>, cache: Arc<DiskCache>, root_url: &str) -> Self {
        let mut root = root_url.to_owned();
        if !root.ends_with('/') {
            root.push('/');
        }
        Self { inner, cache, root }
    }

    fn url(&self, location: &Path) -> String {
        format!("{}{location}", self.root)
    }

    /// The version of the object, checked with one `HEAD` per process.
    async fn checked(&self, location: &Path, url: &str) -> Result<Described> {
        let cell = self.cache.checked_cell(url);
        let described = cell
            .get_or_try_init(|| async {
                Counters::add(&self.cache.stats.metadata_requests, 1);
                let meta = self.inner.get_opts(location, GetOptions::new().with_head(true)).await?.meta;
                let what = described(url, &meta);
                let cache = Arc::clone(&self.cache);
                let kept = what.clone();
                blocking(move || cache.remove_other_versions(&kept)).await;
                Ok::<_, object_store::Error>(what)
            })
            .await?;
        Ok(described.clone())
    }

    /// The version a get is to be answered from: the one checked in this
    /// process; else, for a get that names an ETag, that ETag's version as
    /// the cache records it (no request); else the one a `HEAD` finds.
    async fn version_for(&self, location: &Path, url: &str, options: &GetOptions) -> Result<Described> {
        if let Some(checked) = self.cache.checked(url) {
            return Ok(checked);
        }
        if let Some(etag) = options.if_match.as_ref().filter(|_| !self.cache.revalidates_pinned()) {
            let (cache, url_owned, etag) = (Arc::clone(&self.cache), url.to_owned(), etag.clone());
            if let Some(Some(known)) = blocking(move || cache.pinned_version(&url_owned, &etag)).await {
                // The version a read named is the one this process reads from now on.
                let _ = self.cache.checked_cell(url).set(known.clone());
                return Ok(self.cache.checked(url).unwrap_or(known));
            }
        }
        self.checked(location, url).await
    }

    /// The bytes of `wanted` of `what`: from the cache, and what it lacks from the store.
    async fn read(&self, location: &Path, what: &Described, wanted: Range<u64>) -> Result<Bytes> {
        // A cached file found damaged or gone is dropped, and the pieces worked out again.
        for fresh in [false, true, true, true] {
            let (cache, version, range) = (Arc::clone(&self.cache), what.clone(), wanted.clone());
            let planned = blocking(move || {
                let mut plan = cache.plan(&version, &range, fresh);
                // A gap: another process may have cached it since this one listed the folder.
                if !fresh && plan.iter().any(|p| matches!(p, Piece::Missing(_))) {
                    plan = cache.plan(&version, &range, true);
                }
                let read: Vec<Option<Result<Bytes, Unusable>>> = plan
                    .iter()
                    .map(|piece| match piece {
                        Piece::Cached { from, take } => Some(cache.read(&version, from, take)),
                        Piece::Missing(_) => None,
                    })
                    .collect();
                (plan, read)
            })
            .await;
            let Some((plan, read)) = planned else { break };
            if read.iter().flatten().any(|r| matches!(r, Err(Unusable::Damaged(_) | Unusable::Missing))) {
                continue;
            }
            return self.assemble(location, what, &wanted, plan, read).await;
        }
        // The cache could not be read: the store answers, and its answer is cached.
        self.fetch(location, what, wanted).await
    }

    /// `wanted` put together from the cached pieces read and the missing ones fetched (concurrently).
    async fn assemble(
        &self,
        location: &Path,
        what: &Described,
        wanted: &Range<u64>,
        plan: Vec<Piece>,
        read: Vec<Option<Result<Bytes, Unusable>>>,
    ) -> Result<Bytes> {
        let parts = plan.into_iter().zip(read).map(|(piece, read)| async move {
            match (piece, read) {
                (_, Some(Ok(bytes))) => Ok::<_, object_store::Error>((bytes, true)),
                (Piece::Missing(range) | Piece::Cached { take: range, .. }, _) => {
                    Ok((self.fetch(location, what, range).await?, false))
                }
            }
        });
        let parts: Vec<(Bytes, bool)> = futures::future::try_join_all(parts).await?;
        let served: u64 = parts.iter().filter(|(_, cached)| *cached).map(|(b, _)| b.len() as u64).sum();
        Counters::add(&self.cache.stats.served_bytes, served);
        if parts.iter().all(|(_, cached)| *cached) {
            Counters::add(&self.cache.stats.served_reads, 1);
        }
        if let [(bytes, _)] = parts.as_slice() {
            return Ok(bytes.clone());
        }
        let mut out = BytesMut::with_capacity(usize::try_from(wanted.end - wanted.start).unwrap_or(0));
        for (bytes, _) in parts {
            out.extend_from_slice(&bytes);
        }
        Ok(out.freeze())
    }

    /// `range` of `what` from the inner store, checked to be of that version
    /// and exactly as long as asked, then cached.
    async fn fetch(&self, location: &Path, what: &Described, range: Range<u64>) -> Result<Bytes> {
        let options = GetOptions {
            range: Some(GetRange::Bounded(range.clone())),
            if_match: what.etag.clone(),
            if_unmodified_since: what.etag.is_none().then_some(what.last_modified),
            ..GetOptions::default()
        };
        let got = self.inner.get_opts(location, options).await?;
        let now = described(&what.url, &got.meta);
        if now != *what {
            return Err(changed(location, what, &now));
        }
        let bytes = got.bytes().await?;
        Counters::add(&self.cache.stats.fetched_ranges, 1);
        Counters::add(&self.cache.stats.fetched_bytes, bytes.len() as u64);
        if bytes.len() as u64 != range.end - range.start {
            return Err(object_store::Error::Generic {
                store: "DiskCache",
                source: format!(
                    "{}: asked for bytes {}..{}, the store returned {}",
                    what.url,
                    range.start,
                    range.end,
                    bytes.len()
                )
                .into(),
            });
        }
        let (cache, version, kept) = (Arc::clone(&self.cache), what.clone(), bytes.clone());
        blocking(move || cache.write(&version, &range, &kept)).await;
        Ok(bytes)
    }
}

/// `sorted` with ranges less than `gap` apart merged into one.
fn merge(sorted: Vec<Range<u64>>, gap: u64) -> Vec<Range<u64>> {
    let mut merged: Vec<Range<u64>> = Vec::with_capacity(sorted.len());
    for range in sorted {
        match merged.last_mut() {
            Some(last) if range.start <= last.end.saturating_add(gap) => last.end = last.end.max(range.end),
            _ => merged.push(range),
        }
    }
    merged
}

/// Whether a get can be answered from the cache: not one that asks for
/// what changed since (`If-None-Match`, `If-Modified-Since`) or for a version id.
fn cacheable(options: &GetOptions) -> bool {
    options.if_none_match.is_none() && options.if_modified_since.is_none() && options.version.is_none()
}

fn described(url: &str, meta: &ObjectMeta) -> Described {
    Described { url: url.to_owned(), etag: meta.e_tag.clone(), last_modified: meta.last_modified, size: meta.size }
}

fn meta(location: &Path, what: &Described) -> ObjectMeta {
    ObjectMeta {
        location: location.clone(),
        last_modified: what.last_modified,
        size: what.size,
        e_tag: what.etag.clone(),
        version: None,
    }
}

/// The object is no longer the version checked: refused, as a store refuses a failed `If-Match`.
fn changed(location: &Path, was: &Described, now: &Described) -> object_store::Error {
    let version = |d: &Described| match &d.etag {
        Some(etag) => format!("ETag {etag}"),
        None => format!("{} bytes, modified {}", d.size, d.last_modified.to_rfc3339()),
    };
    object_store::Error::Precondition {
        path: location.to_string(),
        source: format!("{} changed while it was read: was {}, now {}", was.url, version(was), version(now)).into(),
    }
}

/// The range a get asks for, in the object's offsets, its end cut at the
/// object's as `object_store`'s stores cut it; `None` if it does not start
/// inside the object, or is empty (the store answers it, with its own error).
fn wanted(range: Option<&GetRange>, size: u64) -> Option<Range<u64>> {
    let wanted = match range {
        None => 0..size,
        Some(GetRange::Bounded(range)) => range.start..range.end.min(size),
        Some(GetRange::Offset(offset)) => *offset..size,
        Some(GetRange::Suffix(n)) => size.saturating_sub(*n)..size,
    };
    (wanted.start < wanted.end && wanted.end <= size).then_some(wanted)
}

/// Run blocking file work on tokio's blocking pool when a runtime is
/// present, in place otherwise; `None` if the task could not run.
async fn blocking<T: Send + 'static>(work: impl FnOnce() -> T + Send + 'static) -> Option<T> {
    match tokio::runtime::Handle::try_current() {
        Ok(handle) => handle.spawn_blocking(work).await.ok(),
        Err(_) => Some(work()),
    }
}

// Named by its root and its folder only: the inner store's own output may
// show credentials (object_store's HTTP store shows a URL's password).
impl fmt::Display for CachedStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "DiskCache({} through {})", self.root, self.cache.dir().display())
    }
}

impl fmt::Debug for CachedStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CachedStore").field("root", &self.root).field("cache", &self.cache).finish_non_exhaustive()
    }
}

#[async_trait]
impl ObjectStore for CachedStore {
    async fn get_opts(&self, location: &Path, options: GetOptions) -> Result<GetResult> {
        if !cacheable(&options) {
            return self.inner.get_opts(location, options).await;
        }
        let url = self.url(location);
        let what = self.version_for(location, &url, &options).await?;
        // A get that asks for another version than the one checked is the store's to refuse.
        let other_version = options.if_match.as_ref().is_some_and(|etag| what.etag.as_ref() != Some(etag))
            || options.if_unmodified_since.is_some_and(|since| what.last_modified > since);
        if other_version {
            return self.inner.get_opts(location, options).await;
        }
        let meta = meta(location, &what);
        if options.head {
            return Ok(result(meta, 0..0, Bytes::new()));
        }
        let Some(wanted) = wanted(options.range.as_ref(), what.size) else {
            return self.inner.get_opts(location, options).await;
        };
        let bytes = self.read(location, &what, wanted.clone()).await?;
        Ok(result(meta, wanted, bytes))
    }

    /// The bytes of each of `ranges`: what the cache lacks of all of them is
    /// merged (pieces closer than [`DiskCache::with_merge_gap`]), fetched
    /// and cached first, so that the cache then holds the bytes between
    /// the ranges too, and a later read merged another way finds them.
    async fn get_ranges(&self, location: &Path, ranges: &[Range<u64>]) -> Result<Vec<Bytes>> {
        let url = self.url(location);
        let what = self.version_for(location, &url, &GetOptions::default()).await?;
        if ranges.iter().any(|range| range.start >= range.end || range.end > what.size) {
            return self.inner.get_ranges(location, ranges).await;
        }
        let (cache, version, wanted) = (Arc::clone(&self.cache), what.clone(), ranges.to_vec());
        let missing = blocking(move || {
            let gaps = |fresh: bool| -> Vec<Range<u64>> {
                wanted
                    .iter()
                    .flat_map(|range| cache.plan(&version, range, fresh))
                    .filter_map(|piece| match piece {
                        Piece::Missing(range) => Some(range),
                        Piece::Cached { .. } => None,
                    })
                    .collect()
            };
            // A gap: another process may have cached it since this one listed the folder.
            let mut missing = gaps(false);
            if !missing.is_empty() {
                missing = gaps(true);
            }
            missing.sort_by_key(|range| range.start);
            merge(missing, cache.merge_gap())
        })
        .await
        .unwrap_or_default();
        let fetches: Vec<_> = missing.into_iter().map(|range| self.fetch(location, &what, range)).collect();
        let _: Vec<Bytes> = futures::stream::iter(fetches).buffer_unordered(FETCHES_IN_FLIGHT).try_collect().await?;
        let reads: Vec<_> = ranges.iter().cloned().map(|range| self.read(location, &what, range)).collect();
        futures::stream::iter(reads).buffered(READS_IN_FLIGHT).try_collect().await
    }

    async fn put_opts(&self, location: &Path, payload: PutPayload, opts: PutOptions) -> Result<PutResult> {
        let put = self.inner.put_opts(location, payload, opts).await;
        self.cache.forget(&self.url(location));
        put
    }

    async fn put_multipart_opts(&self, location: &Path, opts: PutMultipartOptions) -> Result<Box<dyn MultipartUpload>> {
        self.cache.forget(&self.url(location));
        self.inner.put_multipart_opts(location, opts).await
    }

    fn delete_stream(&self, locations: BoxStream<'static, Result<Path>>) -> BoxStream<'static, Result<Path>> {
        let (cache, root) = (Arc::clone(&self.cache), self.root.clone());
        self.inner
            .delete_stream(locations)
            .inspect(move |deleted| {
                if let Ok(path) = deleted {
                    cache.forget(&format!("{root}{path}"));
                }
            })
            .boxed()
    }

    fn list(&self, prefix: Option<&Path>) -> BoxStream<'static, Result<ObjectMeta>> {
        self.inner.list(prefix)
    }

    fn list_with_offset(&self, prefix: Option<&Path>, offset: &Path) -> BoxStream<'static, Result<ObjectMeta>> {
        self.inner.list_with_offset(prefix, offset)
    }

    async fn list_with_delimiter(&self, prefix: Option<&Path>) -> Result<ListResult> {
        self.inner.list_with_delimiter(prefix).await
    }

    async fn copy_opts(&self, from: &Path, to: &Path, options: CopyOptions) -> Result<()> {
        let copied = self.inner.copy_opts(from, to, options).await;
        self.cache.forget(&self.url(to));
        copied
    }

    async fn rename_opts(&self, from: &Path, to: &Path, options: RenameOptions) -> Result<()> {
        let renamed = self.inner.rename_opts(from, to, options).await;
        self.cache.forget(&self.url(from));
        self.cache.forget(&self.url(to));
        renamed
    }
}

/// A get's answer: `bytes`, the range `range` of the object `meta` describes.
fn result(meta: ObjectMeta, range: Range<u64>, bytes: Bytes) -> GetResult {
    GetResult {
        payload: GetResultPayload::Stream(futures::stream::once(async move { Ok(bytes) }).boxed()),
        meta,
        range,
        attributes: object_store::Attributes::default(),
        extensions: object_store::Extensions::default(),
    }
}
