//! The zarrs stores over any [`ReferenceSource`](crate::ReferenceSource).
//!
//! All the logic is in [`core::Core`]: a request for a key becomes a
//! [`core::Plan`] (the answer, or the reads to make and how to finish them).
//! The sync [`ReferenceStore`] and the async [`AsyncReferenceStore`] only
//! carry out the reads their own way, and flatten errors into
//! [`StorageError`](zarrs_storage::StorageError)s that name the key, the URL
//! and the cause.

mod asynchronous;
mod core;
mod listing;
mod read_ahead;
mod region;
mod runtime;
mod sync;
mod target;

pub use asynchronous::AsyncReferenceStore;
pub(crate) use core::Core;
pub(crate) use runtime::IoRuntime;
pub use sync::ReferenceStore;
pub use target::Target;
