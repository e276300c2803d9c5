//! fsspec's parquet reference layout.

pub(crate) mod layout;
pub(crate) mod record;
