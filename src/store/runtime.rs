//! The tokio runtime on which the sync API runs its reads: the caller's, or
//! one shared by the whole process, started on first use.

use std::future::Future;
use std::sync::OnceLock;

use tokio::runtime::{Handle, Runtime};

use crate::error::ReadError;

/// Where the sync API runs futures.
#[derive(Clone, Debug, Default)]
pub(crate) struct IoRuntime {
    /// The caller's runtime; `None`: the shared one.
    handle: Option<Handle>,
}

/// The runtime every sync store shares unless given another: two worker
/// threads, which wait on the network and hardly compute.
static SHARED: OnceLock<Result<Runtime, (std::io::ErrorKind, String)>> = OnceLock::new();

impl IoRuntime {
    /// Run on the runtime of `handle`, which must be driven by threads of its
    /// own (a multi-thread runtime, or a current-thread one blocked on elsewhere).
    pub(crate) fn with_handle(handle: Handle) -> Self {
        Self { handle: Some(handle) }
    }

    fn handle(&self) -> Result<Handle, ReadError> {
        if let Some(handle) = &self.handle {
            return Ok(handle.clone());
        }
        let shared = SHARED.get_or_init(|| {
            tokio::runtime::Builder::new_multi_thread()
                .worker_threads(2)
                .thread_name("zarrs-kerchunk-io")
                .enable_all()
                .build()
                .map_err(|e| (e.kind(), e.to_string()))
        });
        match shared {
            Ok(runtime) => Ok(runtime.handle().clone()),
            Err((kind, message)) => Err(ReadError::Runtime(std::io::Error::new(*kind, message.clone()))),
        }
    }

    /// Run `future` to completion on the runtime and wait for it.
    ///
    /// The future is spawned and waited for with a plain executor, so this
    /// works from any thread, threads of another tokio runtime included
    /// (where `Runtime::block_on` would panic).
    pub(crate) fn block_on<F>(&self, future: F) -> Result<F::Output, ReadError>
    where
        F: Future + Send + 'static,
        F::Output: Send + 'static,
    {
        let task = self.handle()?.spawn(future);
        futures::executor::block_on(task).map_err(ReadError::Task)
    }

    /// Run `future`, which borrows from the caller, to completion on this
    /// thread, inside the runtime's context (so that its I/O is driven by the
    /// runtime's threads).
    pub(crate) fn block_on_here<F: Future>(&self, future: F) -> Result<F::Output, ReadError> {
        let handle = self.handle()?;
        let _context = handle.enter();
        Ok(futures::executor::block_on(future))
    }
}
