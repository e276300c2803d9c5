#![doc = include_str!("../README.md")]

mod builder;
mod error;
mod fetch;
mod grid;
mod metadata;
mod model;
mod parquet;
mod parse;
mod resolve;
mod store;
mod write;

pub use builder::ReferenceStoreBuilder;
pub use error::{ReferenceError, WriteError};
pub use model::{OwnedReference, Reference, ReferenceSet, ReferenceSetBuilder, UrlId};
pub use parse::ParseOptions;
pub use store::{AsyncReferenceStore, Progress, RecordCacheOptions, ReferenceStore};
pub use write::{JsonVersion, JsonWriteOptions, ParquetWriteOptions, PathEncoding};

pub use object_store;
