//! The one tokio runtime every store of the process reads on (the one
//! pyo3-async-runtimes polls Python's awaitables with), and the check that it
//! is not used from a forked child, where its threads do not exist.

use std::sync::OnceLock;

use pyo3::exceptions::PyRuntimeError;
use pyo3::prelude::*;

/// The process that started the runtime.
static STARTED_IN: OnceLock<u32> = OnceLock::new();

/// The shared runtime's handle; the runtime starts on first use.
pub(crate) fn handle() -> tokio::runtime::Handle {
    STARTED_IN.get_or_init(std::process::id);
    pyo3_async_runtimes::tokio::get_runtime().handle().clone()
}

/// Refuse to work in a child forked after the runtime started: its worker
/// threads were not copied by `fork`, and every read would wait forever.
///
/// # Errors
/// `RuntimeError` in such a child.
pub(crate) fn check_process() -> PyResult<()> {
    match STARTED_IN.get() {
        Some(&parent) if parent != std::process::id() => Err(PyRuntimeError::new_err(format!(
            "zarrs_kerchunk's I/O runtime was started in process {parent}, before this process forked from it; \
             a forked child cannot use it: start worker processes with the 'spawn' or 'forkserver' method \
             (multiprocessing.set_start_method), as Dask does"
        ))),
        _ => Ok(()),
    }
}

/// Decode zlib chunks with the codec that inflates each in one call into a
/// buffer of its size (libdeflate), and TIFF's and numcodecs' other codecs,
/// as the command line does; once per process.
pub(crate) fn register_codecs() {
    static REGISTERED: OnceLock<()> = OnceLock::new();
    REGISTERED.get_or_init(|| {
        drop(zarrs_zlib_sized::register_zlib_codec());
        drop(zarrs_kerchunk_codecs::register_codecs());
    });
}
