//! The targets of a store's references, as a store resolves them, for tools
//! that report on targets without reading their bytes (stats, audits, pins).

use std::future::Future;
use std::sync::Arc;

use super::core::Resolved;
use super::{AsyncReferenceStore, ReferenceStore};
use crate::error::{ReadError, ResolveError};
use crate::fetch;
use crate::resolve::Pin;

/// A target file of the references, resolved as the store's reads resolve
/// it: templates, relative URLs, rewrites, the access policy and pins applied.
#[derive(Clone, Debug)]
pub struct Target(Resolved);

impl Target {
    /// The target as a URL (`file://` for a local file), as reports and pins name it.
    #[must_use]
    pub fn url(&self) -> &str {
        self.0.url()
    }

    /// The pin that reads of this target are checked against, if any
    /// ([`ReferenceStoreBuilder::with_pins`](crate::ReferenceStoreBuilder::with_pins)).
    #[must_use]
    pub fn pin(&self) -> Option<&Pin> {
        self.0.source.pin()
    }

    /// What the target is now (its size, and the ETag and last-modified
    /// time a store gives), with one metadata request and no check against any pin.
    ///
    /// # Errors
    /// [`ReadError`] if the target cannot be reached or does not exist.
    pub async fn observe(&self) -> Result<Pin, ReadError> {
        fetch::observe(&self.0.source).await
    }
}

impl AsyncReferenceStore {
    /// The target that a reference with URL `written` (as written in the
    /// references, after templates; `None` for a `null` URL) reads.
    ///
    /// # Errors
    /// [`ResolveError`] if reads of that URL would fail to resolve: the
    /// access policy refuses it, no store serves it, or it is `null` and no
    /// default target is set.
    pub fn target(&self, written: Option<&str>) -> Result<Target, Arc<ResolveError>> {
        self.core().resolve(written.map(Arc::from).as_ref()).map(Target)
    }
}

impl ReferenceStore {
    /// See [`AsyncReferenceStore::target`].
    ///
    /// # Errors
    /// As [`AsyncReferenceStore::target`].
    pub fn target(&self, written: Option<&str>) -> Result<Target, Arc<ResolveError>> {
        self.core().resolve(written.map(Arc::from).as_ref()).map(Target)
    }

    /// Run `future` on the runtime that drives this store's remote reads
    /// ([`ReferenceStoreBuilder::with_runtime`](crate::ReferenceStoreBuilder::with_runtime),
    /// or the process's shared one) and wait for it: how sync tools run async
    /// work over the store ([`to_async`](Self::to_async)). Works from any
    /// thread, threads of another tokio runtime included.
    ///
    /// # Errors
    /// [`ReadError::Runtime`] if the shared runtime cannot start, and
    /// [`ReadError::Task`] if the future panics.
    pub fn block_on<F>(&self, future: F) -> Result<F::Output, ReadError>
    where
        F: Future + Send + 'static,
        F::Output: Send + 'static,
    {
        self.runtime().block_on(future)
    }
}
