#![doc = include_str!("../README.md")]

mod builder;
mod error;
mod fetch;
mod metadata;
mod model;
mod parquet;
mod parse;
mod resolve;
mod store;

pub use builder::ReferenceStoreBuilder;
pub use error::ReferenceError;
pub use model::{Reference, ReferenceSet, ReferenceSetBuilder, UrlId};
pub use parse::ParseOptions;
pub use store::{AsyncReferenceStore, RecordCacheOptions, ReferenceStore};

pub use object_store;
