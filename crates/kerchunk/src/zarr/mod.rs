//! What this crate knows of Zarr version 2 metadata, with no I/O: chunk grids
//! and chunk keys, JSON as Python writes it, and the rewrites that let zarrs
//! open kerchunk's metadata. The lowest layer: it imports nothing of the crate.

mod fixed_scale_offset;
pub mod grid;
mod hdf_strings;
pub mod lenient;
pub mod metadata;

pub use grid::{ChunkGrid, GridError};
pub use metadata::is_metadata_key;
