//! Reads from object stores, under the resolver's [`ReadPolicy`]: each read
//! of an object finishes within the deadline, and every response must come
//! from the version of the object that the first response came from, and
//! from the pinned version if the object has a [`Pin`].
//!
//! Nothing a store returns is trusted: a range must come back with exactly
//! its length, and a response with another ETag than the pinned one is an
//! error, whatever bytes it holds.

use std::future::Future;
use std::ops::Range;
use std::sync::Arc;

use bytes::Bytes;
use futures::StreamExt;
use object_store::path::Path;
use object_store::{GetOptions, GetRange, GetResult, ObjectStore, ObjectStoreExt};

use super::Request;
use crate::error::ReadError;
use crate::resolve::{Pin, ReadPolicy};

/// Ranges closer than this are fetched as one request, as `object_store`'s
/// own `get_ranges` does.
const COALESCE_GAP: u64 = object_store::OBJECT_STORE_COALESCE_DEFAULT;

/// One object, and the rules its reads obey.
pub(crate) struct Object<'a> {
    pub(crate) store: &'a Arc<dyn ObjectStore>,
    pub(crate) path: &'a Path,
    pub(crate) policy: &'a ReadPolicy,
    pub(crate) pin: Option<&'a Pin>,
}

impl Object<'_> {
    /// The bytes of each request, in order.
    pub(crate) async fn read(&self, requests: &[Request]) -> Result<Vec<Bytes>, ReadError> {
        self.within_deadline(async {
            let bounded: Vec<Range<u64>> = requests
                .iter()
                .filter_map(|r| match r {
                    Request::Part(GetRange::Bounded(range)) if !range.is_empty() => Some(range.clone()),
                    _ => None,
                })
                .collect();
            // Neighbours are merged and fetched in parallel; each merged
            // range is checked for length before it is sliced. The object's
            // size each answer states is kept for `Request::Fits`.
            let size = std::sync::atomic::AtomicU64::new(u64::MAX);
            let mut fetched = if self.policy.through_cache && !bounded.is_empty() {
                self.get_through_cache(&bounded, &size).await?.into_iter()
            } else {
                let fetch = |range: Range<u64>| self.get_exact(range, &size);
                object_store::coalesce_ranges(&bounded, fetch, COALESCE_GAP).await?.into_iter()
            };
            let mut out = Vec::with_capacity(requests.len());
            for request in requests {
                let bytes = match request {
                    Request::Fits(end) => {
                        let known = size.load(std::sync::atomic::Ordering::Relaxed);
                        let size = if known == u64::MAX { self.size().await? } else { known };
                        if *end > size {
                            return Err(ReadError::PastEnd { range: 0..*end, file_len: Some(size) });
                        }
                        Bytes::new()
                    }
                    Request::Part(GetRange::Bounded(range)) if range.is_empty() => Bytes::new(),
                    Request::Part(GetRange::Bounded(range)) => {
                        let bytes = fetched.next().ok_or(ReadError::MissingRanges)?;
                        check_length(range, &bytes)?;
                        bytes
                    }
                    // The whole object, or an open-ended range of it (from an offset, or a suffix).
                    Request::Whole | Request::Part(_) => self.get(request.get_range(), false).await?.bytes().await?,
                };
                out.push(bytes);
            }
            Ok(out)
        })
        .await
    }

    /// The whole object, or `None` if it does not exist; an object of more
    /// than `limit` bytes is an error, found from its size and again while
    /// its body streams in (a server may not say, or lie).
    pub(crate) async fn read_if_exists(&self, limit: u64) -> Result<Option<Bytes>, ReadError> {
        self.within_deadline(async {
            let got = match self.get(None, false).await {
                Ok(got) => got,
                Err(ReadError::ObjectStore(e)) if matches!(*e, object_store::Error::NotFound { .. }) => {
                    return Ok(None);
                }
                Err(e) => return Err(e),
            };
            if got.meta.size > limit {
                return Err(ReadError::TooLarge { limit });
            }
            let mut body = got.into_stream();
            let mut bytes = Vec::new();
            while let Some(part) = body.next().await {
                let part = part?;
                // Grown with the data; a failed allocation is an error, not an abort.
                bytes
                    .try_reserve(part.len())
                    .map_err(|_| ReadError::OutOfMemory { bytes: bytes.len() + part.len() })?;
                bytes.extend_from_slice(&part);
                if bytes.len() as u64 > limit {
                    return Err(ReadError::TooLarge { limit });
                }
            }
            Ok(Some(Bytes::from(bytes)))
        })
        .await
    }

    /// The object's size, from the version pinned for it.
    pub(crate) async fn size(&self) -> Result<u64, ReadError> {
        self.within_deadline(async {
            let meta = self.store.head(self.path).await?;
            self.check_version(&self.key(), &meta)?;
            Ok(meta.size)
        })
        .await
    }

    /// What the object is now (one `HEAD`), unchecked.
    pub(crate) async fn observe(&self) -> Result<Pin, ReadError> {
        self.within_deadline(async {
            let meta = self.store.head(self.path).await?;
            Ok(Pin::new(meta.size, meta.e_tag, Some(meta.last_modified)))
        })
        .await
    }

    /// The bytes of each of `ranges`, from a store that reads through a disk
    /// cache: the ranges as they are (the cache merges what it lacks, and a
    /// warm cache then answers whichever ranges are asked), after one check
    /// of the version it reads (from the cache's memory, or one `HEAD` per process).
    async fn get_through_cache(
        &self,
        ranges: &[Range<u64>],
        size: &std::sync::atomic::AtomicU64,
    ) -> Result<Vec<Bytes>, ReadError> {
        let meta = self.get(None, true).await?.meta;
        size.store(meta.size, std::sync::atomic::Ordering::Relaxed);
        let fetched = self.store.get_ranges(self.path, ranges).await?;
        for (range, bytes) in ranges.iter().zip(&fetched) {
            check_length(range, bytes)?;
        }
        Ok(fetched)
    }

    /// Exactly the bytes of `range`; the object's size, as the answer states it, goes to `size`.
    async fn get_exact(&self, range: Range<u64>, size: &std::sync::atomic::AtomicU64) -> Result<Bytes, ReadError> {
        let got = self.get(Some(GetRange::Bounded(range.clone())), false).await?;
        size.store(got.meta.size, std::sync::atomic::Ordering::Relaxed);
        let bytes = got.bytes().await?;
        check_length(&range, &bytes)?;
        Ok(bytes)
    }

    /// A get of the pinned version of the object: asked for with `If-Match`
    /// (or `If-Unmodified-Since`, for a pin without an ETag), so that a
    /// store that honours it refuses a changed object, and checked on arrival
    /// (for stores that do not). `head`: the object's metadata only.
    async fn get(&self, range: Option<GetRange>, head: bool) -> Result<GetResult, ReadError> {
        let key = self.key();
        let first_seen = self.policy.pinned(&key);
        let if_match = self.pin.and_then(|pin| pin.etag.clone()).or_else(|| first_seen.clone());
        let if_unmodified_since = self.pin.filter(|pin| pin.etag.is_none()).and_then(|pin| pin.last_modified);
        let options = GetOptions { range, if_match, if_unmodified_since, head, ..GetOptions::default() };
        match self.store.get_opts(self.path, options).await {
            Ok(got) => {
                self.check_version(&key, &got.meta)?;
                Ok(got)
            }
            Err(object_store::Error::Precondition { .. }) => Err(match self.pin {
                Some(pin) => ReadError::Stale {
                    pinned: pin.to_string(),
                    found: "another version (the store refused to serve the pinned one)".into(),
                },
                None => ReadError::Changed { was: first_seen.unwrap_or_default(), now: None },
            }),
            Err(e) => Err(e.into()),
        }
    }

    /// Check a response's metadata against the pin, if any, and the version first seen.
    fn check_version(&self, key: &str, meta: &object_store::ObjectMeta) -> Result<(), ReadError> {
        if let Some(pin) = self.pin {
            pin.check(&Pin::new(meta.size, meta.e_tag.clone(), Some(meta.last_modified)))?;
        }
        let seen = meta.e_tag.as_deref();
        self.policy.check(key, seen).map_err(|(was, now)| ReadError::Changed { was, now: Some(now) })
    }

    /// The object, told apart from a same-named one in another store.
    fn key(&self) -> String {
        format!("{:p}/{}", Arc::as_ptr(self.store).cast::<()>(), self.path)
    }

    async fn within_deadline<T>(&self, read: impl Future<Output = Result<T, ReadError>>) -> Result<T, ReadError> {
        // Outside a tokio runtime there is no timer; the caller's executor then bounds the read.
        if tokio::runtime::Handle::try_current().is_err() {
            return read.await;
        }
        let deadline = self.policy.deadline;
        tokio::time::timeout(deadline, read).await.map_err(|_| ReadError::Deadline { after: deadline })?
    }
}

fn check_length(range: &Range<u64>, bytes: &Bytes) -> Result<(), ReadError> {
    if bytes.len() as u64 == range.end - range.start {
        Ok(())
    } else {
        Err(ReadError::WrongLength { range: range.clone(), got: bytes.len() as u64 })
    }
}
