//! Parsers, with no I/O: kerchunk JSON documents into a
//! [`ReferenceSet`](crate::ReferenceSet), and fsspec's parquet layout (its
//! `.zmetadata` and its record files) into the layout and rows the parquet
//! source reads.

pub(crate) mod json;
#[cfg(feature = "parquet")]
pub(crate) mod parquet;

pub use json::{Limits, MalformedReferences, ParseOptions};
