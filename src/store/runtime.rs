//! The tokio runtime that lets the sync store read remote targets.

use std::future::Future;
use std::sync::OnceLock;

/// A multi-threaded tokio runtime, started on first use.
///
/// Futures are spawned onto it and waited for with a plain executor, so the
/// sync store works from any thread, including threads of another tokio
/// runtime (where `Runtime::block_on` would panic).
#[derive(Debug, Default)]
pub(crate) struct BlockingRuntime {
    runtime: OnceLock<Result<tokio::runtime::Runtime, String>>,
}

impl BlockingRuntime {
    /// Run `future` to completion on the runtime and wait for it.
    pub(crate) fn block_on<F>(&self, future: F) -> Result<F::Output, String>
    where
        F: Future + Send + 'static,
        F::Output: Send + 'static,
    {
        let runtime = self
            .runtime
            .get_or_init(|| {
                tokio::runtime::Builder::new_multi_thread()
                    .worker_threads(2)
                    .thread_name("zarrs-kerchunk-io")
                    .enable_all()
                    .build()
                    .map_err(|e| format!("cannot start the I/O runtime: {e}"))
            })
            .as_ref()
            .map_err(Clone::clone)?;
        futures::executor::block_on(runtime.spawn(future)).map_err(|e| format!("I/O task failed: {e}"))
    }
}

impl Drop for BlockingRuntime {
    fn drop(&mut self) {
        // Dropping a runtime from inside another runtime panics; shut down without waiting instead.
        if let Some(Ok(runtime)) = self.runtime.take() {
            runtime.shutdown_background();
        }
    }
}
