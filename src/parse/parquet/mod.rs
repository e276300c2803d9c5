//! fsspec's parquet reference layout (`LazyReferenceMapper`): parsing only, no I/O.

mod layout;
mod record;

pub(crate) use layout::{ParquetLayout, RecordId};
pub(crate) use record::{Record, Row};
