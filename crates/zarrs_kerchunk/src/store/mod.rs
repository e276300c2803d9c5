//! The zarrs stores over any [`ReferenceSource`](kerchunk::ReferenceSource).
//!
//! All the logic is in [`core::Core`]: a request for a key becomes a
//! [`core::Plan`] (the answer, or the reads to make and how to finish them),
//! and [`read`] sequences one read (prefetched values, chunks read ahead,
//! the source's reference, the plan, the fetch) in one call. The sync
//! [`ReferenceStore`] and the async [`AsyncReferenceStore`] only say how to
//! wait for each read ([`read::Io`]), and flatten errors into
//! [`StorageError`](zarrs_storage::StorageError)s that name the key, the URL
//! and the cause.

mod asynchronous;
mod core;
mod listing;
mod read;
mod read_ahead;
mod region;
mod runtime;
mod sync;
mod target;

pub use asynchronous::AsyncReferenceStore;
pub use core::MetadataView;
pub(crate) use core::{Core, MetadataPolicy};
pub(crate) use runtime::IoRuntime;
pub use sync::ReferenceStore;
pub use target::Target;
