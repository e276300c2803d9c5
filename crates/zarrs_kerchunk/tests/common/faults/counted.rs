//! No fault: every get answered as it is, and counted, data gets apart from
//! metadata requests, so that a test can say what reached the server.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use async_trait::async_trait;
use object_store::path::Path;
use object_store::{GetOptions, GetResult, ObjectStore, Result};

use super::Fault;

/// The requests that passed, shared with the test.
#[derive(Debug, Default)]
pub(crate) struct Counted {
    gets: AtomicU64,
    heads: AtomicU64,
}

impl Counted {
    /// Data gets so far.
    pub(crate) fn gets(&self) -> u64 {
        self.gets.load(Ordering::SeqCst)
    }

    /// Metadata requests (`HEAD`) so far.
    pub(crate) fn heads(&self) -> u64 {
        self.heads.load(Ordering::SeqCst)
    }
}

#[async_trait]
impl Fault for Arc<Counted> {
    async fn get(
        &self,
        _: u64,
        inner: &Arc<dyn ObjectStore>,
        location: &Path,
        options: GetOptions,
    ) -> Result<GetResult> {
        let counter = if options.head { &self.heads } else { &self.gets };
        counter.fetch_add(1, Ordering::SeqCst);
        inner.get_opts(location, options).await
    }
}
