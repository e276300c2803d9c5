//! Writing reference sets: kerchunk JSON (version 0 or 1) and fsspec's
//! parquet layout, from any [`ReferenceSource`], sync or async.
//!
//! Sources are walked one reference at a time and outputs written a record
//! at a time, so memory stays bounded by a few records beyond what the source
//! itself holds. The async functions do their blocking work (writing to a
//! [`Write`](std::io::Write), compressing, encoding parquet) on tokio's
//! blocking pool, never on the executor.

mod json;
#[cfg(feature = "parquet")]
mod parquet;
mod to_json;
#[cfg(feature = "parquet")]
mod to_parquet;

use std::sync::Arc;

pub use to_json::{write_json, write_json_async};
#[cfg(feature = "parquet")]
pub use to_parquet::{write_parquet, write_parquet_async};

/// Called with the number of references written so far, after each record
/// or batch, so that long conversions can show progress.
#[derive(Clone)]
pub struct Progress(Arc<dyn Fn(u64) + Send + Sync>);

impl Progress {
    /// Report progress to `report`.
    pub fn new(report: impl Fn(u64) + Send + Sync + 'static) -> Self {
        Self(Arc::new(report))
    }

    fn report(progress: Option<&Self>, written: u64) {
        if let Some(progress) = progress {
            (progress.0)(written);
        }
    }
}

impl std::fmt::Debug for Progress {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Progress(..)")
    }
}

/// Which kerchunk JSON layout to write.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum JsonVersion {
    /// A flat object of keys.
    V0,
    /// `{"version": 1, "refs": {...}}`, with templates and `gen` already expanded.
    #[default]
    V1,
}

/// How to write kerchunk JSON.
///
/// ```
/// use zarrs_kerchunk::{JsonVersion, JsonWriteOptions};
/// let options = JsonWriteOptions::default().with_version(JsonVersion::V0).with_zstd(3);
/// # let _ = options;
/// ```
#[derive(Clone, Debug, Default)]
pub struct JsonWriteOptions {
    version: JsonVersion,
    zstd_level: Option<i32>,
    progress: Option<Progress>,
}

impl JsonWriteOptions {
    /// Version 0 or version 1 (the default).
    #[must_use]
    pub fn with_version(mut self, version: JsonVersion) -> Self {
        self.version = version;
        self
    }

    /// Compress the document as one zstd frame at `level` (readers recognise it by its magic bytes).
    #[must_use]
    pub fn with_zstd(mut self, level: i32) -> Self {
        self.zstd_level = Some(level);
        self
    }

    /// Report progress while writing.
    #[must_use]
    pub fn with_progress(mut self, progress: Progress) -> Self {
        self.progress = Some(progress);
        self
    }
}

/// Whether the `path` column of a parquet record is dictionary-encoded.
///
/// The encoding is parquet's (dictionary pages); pandas reads the column as
/// plain strings, not as a categorical, because fsspec reads the nulls of a
/// categorical as NaN and then fails on missing chunks.
#[cfg(feature = "parquet")]
#[derive(Clone, Copy, Debug, PartialEq)]
#[non_exhaustive]
pub enum PathEncoding {
    /// Plain strings.
    Plain,
    /// Always dictionary pages.
    Dictionary,
    /// A dictionary when the non-null paths of a record outnumber its distinct
    /// paths by more than this factor, as kerchunk's `categorical_threshold` (default 10).
    AboveRepetition(f64),
}

/// How each record file is encoded.
#[cfg(feature = "parquet")]
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct RecordEncoding {
    pub(crate) record_size: u64,
    pub(crate) path_encoding: PathEncoding,
    pub(crate) zstd_level: Option<i32>,
}

/// How to write a parquet reference root.
///
/// ```
/// use zarrs_kerchunk::{ParquetWriteOptions, PathEncoding};
/// let options = ParquetWriteOptions::default().with_record_size(10_000).with_path_encoding(PathEncoding::Plain);
/// # let _ = options;
/// ```
#[cfg(feature = "parquet")]
#[derive(Clone, Debug)]
pub struct ParquetWriteOptions {
    encoding: RecordEncoding,
    progress: Option<Progress>,
}

#[cfg(feature = "parquet")]
impl Default for ParquetWriteOptions {
    /// kerchunk's `refs_to_dataframe` defaults: 100 000 rows per record file, dictionary paths
    /// above a repetition of 10, zstd compression.
    fn default() -> Self {
        let encoding = RecordEncoding {
            record_size: 100_000,
            path_encoding: PathEncoding::AboveRepetition(10.0),
            zstd_level: Some(3),
        };
        Self { encoding, progress: None }
    }
}

#[cfg(feature = "parquet")]
impl ParquetWriteOptions {
    /// Rows per record file (at least 1).
    #[must_use]
    pub fn with_record_size(mut self, record_size: u64) -> Self {
        self.encoding.record_size = record_size.max(1);
        self
    }

    /// How the `path` column is encoded.
    #[must_use]
    pub fn with_path_encoding(mut self, encoding: PathEncoding) -> Self {
        self.encoding.path_encoding = encoding;
        self
    }

    /// zstd compression at `level`, or none.
    #[must_use]
    pub fn with_zstd(mut self, level: Option<i32>) -> Self {
        self.encoding.zstd_level = level;
        self
    }

    /// Report progress while writing.
    #[must_use]
    pub fn with_progress(mut self, progress: Progress) -> Self {
        self.progress = Some(progress);
        self
    }
}
