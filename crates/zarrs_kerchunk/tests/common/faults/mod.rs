//! Fault injection as `ObjectStore` decorators, in the manner of
//! `object_store`'s `ThrottledStore` and icechunk's faulty storage: a
//! [`Faulty`] store delegates everything to the store it wraps, except that
//! each `get` goes through a [`Fault`], one kind per file.

// Each test binary uses some of the faults.
#![allow(unused_imports)]

mod changing;
mod counted;
mod ignores_range;
mod latency;
mod reset;
mod server_errors;
mod short_body;
mod stall;

use std::fmt;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use async_trait::async_trait;
use bytes::Bytes;
pub(crate) use changing::Changing;
pub(crate) use counted::Counted;
use futures::stream::BoxStream;
pub(crate) use ignores_range::IgnoresRange;
pub(crate) use latency::Latency;
use object_store::path::Path;
use object_store::{
    CopyOptions, GetOptions, GetResult, GetResultPayload, ListResult, MultipartUpload, ObjectMeta, ObjectStore,
    PutMultipartOptions, PutOptions, PutPayload, PutResult, Result,
};
pub(crate) use reset::Reset;
pub(crate) use server_errors::ServerErrors;
pub(crate) use short_body::ShortBody;
pub(crate) use stall::Stall;

/// What happens to a `get` of the wrapped store.
#[async_trait]
pub(crate) trait Fault: fmt::Debug + Send + Sync + 'static {
    /// Answer the `n`th get (counting from 0) of `location`, usually by
    /// asking `inner` and spoiling the answer.
    async fn get(
        &self,
        n: u64,
        inner: &Arc<dyn ObjectStore>,
        location: &Path,
        options: GetOptions,
    ) -> Result<GetResult>;

    /// Whether this fault leaves reads hanging, so that only a deadline ends
    /// them: tests then set a short one (and a long one otherwise, so that a
    /// loaded machine does not turn slowness into errors).
    fn stalls(&self) -> bool {
        false
    }
}

/// The read deadline a test should use with `fault`.
pub(crate) fn deadline_for(fault: &impl Fault) -> std::time::Duration {
    std::time::Duration::from_secs(if fault.stalls() { 1 } else { 30 })
}

/// A store whose gets go through `fault`.
#[derive(Debug)]
pub(crate) struct Faulty<F> {
    inner: Arc<dyn ObjectStore>,
    fault: F,
    gets: AtomicU64,
}

impl<F: Fault> Faulty<F> {
    pub(crate) fn new(inner: Arc<dyn ObjectStore>, fault: F) -> Self {
        Self { inner, fault, gets: AtomicU64::new(0) }
    }
}

impl<F> fmt::Display for Faulty<F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Faulty({})", self.inner)
    }
}

#[async_trait]
impl<F: Fault> ObjectStore for Faulty<F> {
    async fn put_opts(&self, location: &Path, payload: PutPayload, opts: PutOptions) -> Result<PutResult> {
        self.inner.put_opts(location, payload, opts).await
    }

    async fn put_multipart_opts(&self, location: &Path, opts: PutMultipartOptions) -> Result<Box<dyn MultipartUpload>> {
        self.inner.put_multipart_opts(location, opts).await
    }

    async fn get_opts(&self, location: &Path, options: GetOptions) -> Result<GetResult> {
        let n = self.gets.fetch_add(1, Ordering::Relaxed);
        self.fault.get(n, &self.inner, location, options).await
    }

    fn delete_stream(&self, locations: BoxStream<'static, Result<Path>>) -> BoxStream<'static, Result<Path>> {
        self.inner.delete_stream(locations)
    }

    fn list(&self, prefix: Option<&Path>) -> BoxStream<'static, Result<ObjectMeta>> {
        self.inner.list(prefix)
    }

    async fn list_with_delimiter(&self, prefix: Option<&Path>) -> Result<ListResult> {
        self.inner.list_with_delimiter(prefix).await
    }

    async fn copy_opts(&self, from: &Path, to: &Path, options: CopyOptions) -> Result<()> {
        self.inner.copy_opts(from, to, options).await
    }
}

/// `result` with its body read, then replaced by what `spoil` makes of it
/// (parts that may fail, or never come).
pub(crate) async fn spoil_body(
    result: GetResult,
    spoil: impl FnOnce(Bytes) -> BoxStream<'static, Result<Bytes>>,
) -> Result<GetResult> {
    let GetResult { payload, meta, range, attributes, extensions } = result;
    let read = GetResult {
        payload,
        meta: meta.clone(),
        range: range.clone(),
        attributes: attributes.clone(),
        extensions: object_store::Extensions::default(),
    };
    let bytes = read.bytes().await?;
    Ok(GetResult { payload: GetResultPayload::Stream(spoil(bytes)), meta, range, attributes, extensions })
}

/// A transport-level failure, as a client would report it.
pub(crate) fn transport_error(what: &str) -> object_store::Error {
    object_store::Error::Generic { store: "Faulty", source: what.to_owned().into() }
}
