//! Sources of references that read before they answer. A JSON
//! [`ReferenceSet`](kerchunk::ReferenceSet) answers from memory (its
//! [`ReferenceSource`](kerchunk::ReferenceSource) lives with the model); a
//! parquet reference root loads its record files on demand, through the
//! resolver and the fetch layer.

#[cfg(feature = "parquet")]
pub(crate) mod parquet;
