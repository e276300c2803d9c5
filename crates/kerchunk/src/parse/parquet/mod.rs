//! fsspec's parquet reference layout (`LazyReferenceMapper`): parsing only, no I/O.

mod check;
mod layout;
mod record;

pub use layout::{ParquetLayout, RecordId};
pub use record::{Record, Row};
