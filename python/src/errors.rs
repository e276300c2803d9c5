//! Rust errors as the Python exceptions of `zarrs_kerchunk.errors`.
//!
//! Opening and the tools raise the `OSError` family where Python users look
//! for it (`FileNotFoundError` for a missing document, `PermissionError` for
//! the access policy, `OSError` for an unreachable location) and `ValueError`
//! for malformed references. A store's read of a key raises
//! `ReferenceReadError`, a `RuntimeError`: zarr reads `FileNotFoundError`
//! from a store as "missing, use the fill value", so a reference whose target
//! cannot be read must never look like one.

use pyo3::exceptions::PyRuntimeError;
use pyo3::prelude::*;
use zarrs_kerchunk::kerchunk::error_chain;
use zarrs_kerchunk::object_store;
use zarrs_kerchunk::{OpenError, ReadError, ResolveError};
use zarrs_kerchunk_tools::icechunk::{ExportError, IcechunkError, ImportError};

/// Which exception of `zarrs_kerchunk.errors` an error becomes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kind {
    /// `ReferencesNotFoundError` (`FileNotFoundError`): a document, a file to scan.
    NotFound,
    /// `AccessDeniedError` (`PermissionError`): the access policy refused a location.
    Denied,
    /// `InvalidReferencesError` (`ValueError`): malformed references or options.
    Invalid,
    /// `TargetUnreachableError` (`OSError`): a location that could not be read.
    Unreachable,
    /// `ReferenceReadError` (`RuntimeError`): a store's read of a key.
    Read,
}

impl Kind {
    fn class(self) -> &'static str {
        match self {
            Self::NotFound => "ReferencesNotFoundError",
            Self::Denied => "AccessDeniedError",
            Self::Invalid => "InvalidReferencesError",
            Self::Unreachable => "TargetUnreachableError",
            Self::Read => "ReferenceReadError",
        }
    }
}

/// An error on its way to Python: the exception's kind and its whole message.
#[derive(Debug)]
pub(crate) struct Error {
    pub(crate) kind: Kind,
    pub(crate) message: String,
}

impl Error {
    pub(crate) fn new(kind: Kind, message: impl Into<String>) -> Self {
        Self { kind, message: message.into() }
    }
}

impl From<Error> for PyErr {
    fn from(error: Error) -> Self {
        Python::attach(|py| {
            let raised = py
                .import("zarrs_kerchunk.errors")
                .and_then(|module| module.getattr(error.kind.class()))
                .and_then(|class| class.call1((error.message.clone(),)));
            match raised {
                Ok(exception) => PyErr::from_value(exception),
                // The package is broken (the module is missing): still say what went wrong.
                Err(_) => PyRuntimeError::new_err(error.message),
            }
        })
    }
}

/// A failed store read of a key, whose message names the key, the URL and the cause.
pub(crate) fn read_error(error: &zarrs_storage::StorageError) -> Error {
    Error::new(Kind::Read, error.to_string())
}

/// A failed opening of the references at `location`, as the exception a Python user expects.
pub(crate) fn open_error(location: &str, error: &OpenError) -> Error {
    let kind = match error {
        OpenError::NotFound { .. } => Kind::NotFound,
        OpenError::Read { source, .. } => read_kind(source),
        OpenError::Resolve { source, .. } => resolve_kind(source),
        _ => Kind::Invalid,
    };
    let message = error_chain(error);
    // Some parse errors name the line but not the document (a structure error, a limit).
    if message.contains(location) {
        Error::new(kind, message)
    } else {
        Error::new(kind, format!("cannot open references {location}: {message}"))
    }
}

/// The kind of a failed read of a location that is not a store key.
pub(crate) fn read_kind(error: &ReadError) -> Kind {
    match error {
        ReadError::Io { source, .. } => io_kind(source),
        ReadError::ObjectStore(error) => object_store_kind(error),
        ReadError::TooLarge { .. } => Kind::Invalid,
        ReadError::Resolve(error) => resolve_kind(error),
        _ => Kind::Unreachable,
    }
}

/// The kind of a failed read of an object store.
pub(crate) fn object_store_kind(error: &object_store::Error) -> Kind {
    match error {
        object_store::Error::NotFound { .. } => Kind::NotFound,
        object_store::Error::PermissionDenied { .. } | object_store::Error::Unauthenticated { .. } => Kind::Denied,
        _ => Kind::Unreachable,
    }
}

fn resolve_kind(error: &ResolveError) -> Kind {
    match error {
        ResolveError::LocalFromRemote | ResolveError::NotAllowed { .. } | ResolveError::Ambiguous { .. } => {
            Kind::Denied
        }
        _ => Kind::Invalid,
    }
}

fn io_kind(error: &std::io::Error) -> Kind {
    match error.kind() {
        std::io::ErrorKind::NotFound => Kind::NotFound,
        std::io::ErrorKind::PermissionDenied => Kind::Denied,
        _ => Kind::Unreachable,
    }
}

/// A disk cache whose folder cannot be used: the folder named, and why.
pub(crate) fn cache_error(error: &zarrs_kerchunk::CacheError) -> Error {
    let kind = match error {
        zarrs_kerchunk::CacheError::Folder { source, .. } => io_kind(source),
        _ => Kind::Invalid,
    };
    Error::new(kind, error.to_string())
}

/// A failed local read of `what`.
pub(crate) fn io_error(what: &str, error: &std::io::Error) -> PyErr {
    Error::new(io_kind(error), format!("cannot read {what}: {error}")).into()
}

/// A repository that is not there is not found; a key, node or target it cannot hold is invalid;
/// the repository's other failures are unreachable.
pub(crate) fn icechunk_error(error: &IcechunkError) -> Error {
    let kind = match error {
        IcechunkError::Import(ImportError::NotFound { .. }) => Kind::NotFound,
        IcechunkError::Import(ImportError::Repository(_))
        | IcechunkError::Export(ExportError::Repository(_))
        | IcechunkError::Runtime { .. } => Kind::Unreachable,
        _ => Kind::Invalid,
    };
    Error::new(kind, error_chain(error))
}
