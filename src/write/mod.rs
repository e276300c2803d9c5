//! Writing reference sets: kerchunk JSON (version 0 or 1) and fsspec's parquet
//! layout. The encoders here turn references into bytes and know nothing of
//! where they go; the stores drive them ([`AsyncReferenceStore::write_json`],
//! [`AsyncReferenceStore::write_parquet`]) so that any set they open, JSON or
//! parquet, can be written either way, one record at a time.
//!
//! [`AsyncReferenceStore::write_json`]: crate::AsyncReferenceStore::write_json
//! [`AsyncReferenceStore::write_parquet`]: crate::AsyncReferenceStore::write_parquet

pub(crate) mod json;
pub(crate) mod parquet;

/// One reference to write, borrowed from the source set.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Entry<'a> {
    Inline(&'a [u8]),
    /// A whole file (`None`: the default target).
    Whole(Option<&'a str>),
    Range {
        url: Option<&'a str>,
        offset: u64,
        length: u64,
    },
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
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct JsonWriteOptions {
    pub(crate) version: JsonVersion,
    pub(crate) zstd_level: Option<i32>,
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
}

/// Whether the `path` column of a parquet record is dictionary-encoded.
///
/// The encoding is parquet's (dictionary pages); pandas reads the column as
/// plain strings, not as a categorical, because fsspec reads the nulls of a
/// categorical as NaN and then fails on missing chunks.
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

/// How to write a parquet reference root.
///
/// ```
/// use zarrs_kerchunk::{ParquetWriteOptions, PathEncoding};
/// let options = ParquetWriteOptions::default().with_record_size(10_000).with_path_encoding(PathEncoding::Plain);
/// # let _ = options;
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ParquetWriteOptions {
    pub(crate) record_size: u64,
    pub(crate) path_encoding: PathEncoding,
    pub(crate) zstd_level: Option<i32>,
}

impl Default for ParquetWriteOptions {
    /// kerchunk's `refs_to_dataframe` defaults: 100 000 rows per record file, dictionary paths
    /// above a repetition of 10, zstd compression.
    fn default() -> Self {
        Self { record_size: 100_000, path_encoding: PathEncoding::AboveRepetition(10.0), zstd_level: Some(3) }
    }
}

impl ParquetWriteOptions {
    /// Rows per record file (at least 1).
    #[must_use]
    pub fn with_record_size(mut self, record_size: u64) -> Self {
        self.record_size = record_size.max(1);
        self
    }

    /// How the `path` column is encoded.
    #[must_use]
    pub fn with_path_encoding(mut self, encoding: PathEncoding) -> Self {
        self.path_encoding = encoding;
        self
    }

    /// zstd compression at `level`, or none.
    #[must_use]
    pub fn with_zstd(mut self, level: Option<i32>) -> Self {
        self.zstd_level = level;
        self
    }
}
