//! The tokio runtime on which the sync API runs its reads: the caller's, or
//! one shared by the whole process, started on first use.

use std::future::Future;
use std::sync::OnceLock;

use tokio::runtime::{Handle, Runtime, RuntimeFlavor};

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
        wait(task).map_err(ReadError::Task)
    }

    /// Start `future` on the runtime, without waiting for it (nothing is
    /// started if the shared runtime cannot be).
    pub(crate) fn spawn<F: Future<Output = ()> + Send + 'static>(&self, future: F) {
        if let Ok(handle) = self.handle() {
            drop(handle.spawn(future));
        }
    }

    /// Run `future`, which borrows from the caller, to completion on this
    /// thread, inside the runtime's context (so that its I/O is driven by the
    /// runtime's threads).
    pub(crate) fn block_on_here<F: Future>(&self, future: F) -> Result<F::Output, ReadError> {
        let handle = self.handle()?;
        Ok(wait(async move {
            let _context = handle.enter();
            future.await
        }))
    }
}

/// Block this thread until `future` is done.
///
/// Two things make blocking safe when this thread belongs to a tokio runtime
/// (a sync call from async code):
/// - the future runs `unconstrained`: tokio's cooperative budget belongs to
///   the task this thread was running, which cannot yield while we block, so
///   once spent every tokio resource would answer "not yet" and wake itself
///   for ever (seen as a test spinning at 100% CPU);
/// - on a multi-thread runtime's thread, `block_in_place` first hands the
///   thread's queued tasks to another thread, so that a task spawned from
///   here, or one queued here, is not stranded behind us.
fn wait<F: Future>(future: F) -> F::Output {
    let run = || futures::executor::block_on(tokio::task::unconstrained(future));
    match Handle::try_current() {
        Ok(caller) if caller.runtime_flavor() == RuntimeFlavor::MultiThread => tokio::task::block_in_place(run),
        _ => run(),
    }
}

#[cfg(test)]
mod tests {
    use std::sync::mpsc;
    use std::time::Duration;

    use super::*;

    /// Run `body` on a thread of its own and fail, rather than hang, if it
    /// takes more than a minute.
    fn finishes(body: impl FnOnce() + Send + 'static) {
        let (done, finished) = mpsc::channel();
        std::thread::spawn(move || {
            body();
            done.send(()).unwrap();
        });
        assert!(finished.recv_timeout(Duration::from_mins(1)).is_ok(), "blocked or spinning for a minute");
    }

    /// Far more budgeted tokio operations than one task's budget (128).
    async fn spend_budget() -> u32 {
        let mut spent = 0;
        for _ in 0..10_000 {
            tokio::task::consume_budget().await;
            spent += 1;
        }
        spent
    }

    fn caller(multi_thread: bool) -> Runtime {
        let mut builder = if multi_thread {
            tokio::runtime::Builder::new_multi_thread()
        } else {
            tokio::runtime::Builder::new_current_thread()
        };
        builder.worker_threads(2).enable_all().build().unwrap()
    }

    #[test]
    fn sync_calls_from_async_code_do_not_spin_on_the_callers_budget() {
        for multi_thread in [false, true] {
            finishes(move || {
                let spent = caller(multi_thread).block_on(async {
                    let shared = IoRuntime::default();
                    let here = shared.block_on_here(spend_budget()).unwrap();
                    let spawned = shared.block_on(spend_budget()).unwrap();
                    here + spawned
                });
                assert_eq!(spent, 20_000);
            });
        }
    }

    #[test]
    fn the_callers_own_runtime_can_run_sync_calls_made_on_its_workers() {
        finishes(|| {
            let runtime = caller(true);
            let io = IoRuntime::with_handle(runtime.handle().clone());
            // On a worker, so that a spawn lands in that worker's own queue.
            let on_a_worker = runtime.spawn(async move { io.block_on(async { 7 }).unwrap() });
            assert_eq!(runtime.block_on(on_a_worker).unwrap(), 7);
        });
    }
}
