//! Encoding one record file of fsspec's parquet layout: columns `path`,
//! `offset`, `size` and `raw`, always `record_size` rows (padded as fsspec pads).

use std::collections::HashMap;
use std::sync::Arc;

use arrow_array::builder::BinaryBuilder;
use arrow_array::{ArrayRef, Int64Array, RecordBatch, StringArray};
use bytes::Bytes;
use parquet::arrow::ArrowWriter;
use parquet::basic::{Compression, ZstdLevel};
use parquet::file::metadata::KeyValue;
use parquet::file::properties::{EnabledStatistics, WriterProperties};
use parquet::schema::types::ColumnPath;

use super::{ParquetWriteOptions, PathEncoding, RecordEncoding};
use crate::error::{RecordError, WriteError};
use crate::model::Reference;

/// The column types as pandas should see them. Readers that go through pandas
/// (fsspec with fastparquet) otherwise read the integers as nullable `Int64`,
/// whose values fsspec then passes on as floats. `path` is plain strings even
/// when its pages are dictionary-encoded: as a categorical, its nulls would
/// come back as NaN, which fsspec takes for a URL (so missing chunks fail).
const PANDAS_METADATA: &str = concat!(
    r#"{"index_columns": [], "column_indexes": [], "columns": ["#,
    r#"{"name": "path", "field_name": "path", "pandas_type": "unicode", "numpy_type": "object", "metadata": null}, "#,
    r#"{"name": "offset", "field_name": "offset", "pandas_type": "int64", "numpy_type": "int64", "metadata": null}, "#,
    r#"{"name": "size", "field_name": "size", "pandas_type": "int64", "numpy_type": "int64", "metadata": null}, "#,
    r#"{"name": "raw", "field_name": "raw", "pandas_type": "bytes", "numpy_type": "object", "metadata": null}], "#,
    r#""creator": {"library": "zarrs_kerchunk", "version": ""#,
    env!("CARGO_PKG_VERSION"),
    r#""}, "pandas_version": "2.0.0"}"#
);

/// The rows of one record file of fsspec's parquet layout, gathered one at
/// a time, then encoded: columns `path`, `offset`, `size` and `raw`,
/// always the record size's number of rows (padded as fsspec pads).
///
/// ```
/// use kerchunk::{ParquetWriteOptions, Reference};
/// use kerchunk::parquet::{Record, RecordEncoder};
/// let mut encoder = RecordEncoder::new(&ParquetWriteOptions::default().with_record_size(4));
/// encoder.push(|| "x/0".into(), Some(Reference::Range { url: Some("s3://b/f.nc"), offset: 8, length: 16 }))?;
/// encoder.push(|| "x/1".into(), None)?;
/// let file = encoder.finish()?.expect("one row is present");
/// assert_eq!(Record::decode(file)?.len(), 4);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[cfg_attr(docsrs, doc(cfg(feature = "parquet")))]
pub struct RecordEncoder {
    options: RecordEncoding,
    /// Distinct paths of this record and their ids.
    distinct: HashMap<String, i32>,
    paths: Vec<String>,
    path_ids: Vec<Option<i32>>,
    offsets: Vec<i64>,
    sizes: Vec<i64>,
    raw: BinaryBuilder,
    /// Rows that are not missing.
    present: usize,
}

impl std::fmt::Debug for RecordEncoder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RecordEncoder")
            .field("rows", &self.path_ids.len())
            .field("present", &self.present)
            .finish_non_exhaustive()
    }
}

impl RecordEncoder {
    /// An empty record, encoded as `options` say.
    #[must_use]
    pub fn new(options: &ParquetWriteOptions) -> Self {
        Self::with_encoding(options.encoding)
    }

    fn with_encoding(options: RecordEncoding) -> Self {
        Self {
            options,
            distinct: HashMap::new(),
            paths: Vec::new(),
            path_ids: Vec::new(),
            offsets: Vec::new(),
            sizes: Vec::new(),
            raw: BinaryBuilder::new(),
            present: 0,
        }
    }

    /// Append the next row (`None`: a missing chunk); `key` names it in errors.
    ///
    /// # Errors
    /// [`WriteError::Unrepresentable`] for a reference the layout cannot hold:
    /// a `null` URL (parquet has no default target), an offset or length past
    /// `i64::MAX`, or a [`Reference::Malformed`].
    pub fn push(&mut self, key: impl FnOnce() -> String, entry: Option<Reference<'_>>) -> Result<(), WriteError> {
        let unrepresentable = |reason: String| WriteError::Unrepresentable { key: key(), reason };
        let (path, offset, size, raw): (Option<&str>, u64, u64, Option<&[u8]>) = match entry {
            None => (None, 0, 0, None),
            Some(Reference::Inline(bytes)) => (None, 0, 0, Some(bytes)),
            Some(Reference::Whole { url: Some(url) }) => (Some(url), 0, 0, None),
            // `(path, 0, 0)` means the whole file in parquet; an empty range is an empty value.
            Some(Reference::Range { url: Some(_), offset: 0, length: 0 }) => (None, 0, 0, Some(&[][..])),
            Some(Reference::Range { url: Some(url), offset, length }) => (Some(url), offset, length, None),
            Some(Reference::Malformed { reason }) => {
                return Err(unrepresentable(format!("a malformed reference cannot be written: {reason}")));
            }
            Some(Reference::Whole { url: None } | Reference::Range { url: None, .. }) => {
                return Err(unrepresentable(
                    "a null URL (the default target) cannot be written to parquet, which has none".into(),
                ));
            }
        };
        let (Ok(offset), Ok(size)) = (i64::try_from(offset), i64::try_from(size)) else {
            return Err(unrepresentable(format!("offset {offset} or size {size} does not fit parquet's int64")));
        };
        let id = match path {
            None => None,
            Some(path) if let Some(id) = self.distinct.get(path) => Some(*id),
            Some(path) => {
                let Ok(id) = i32::try_from(self.paths.len()) else {
                    return Err(unrepresentable("too many distinct paths in one record".into()));
                };
                self.distinct.insert(path.to_owned(), id);
                self.paths.push(path.to_owned());
                Some(id)
            }
        };
        self.present += usize::from(entry.is_some());
        self.path_ids.push(id);
        self.offsets.push(offset);
        self.sizes.push(size);
        self.raw.append_option(raw);
        Ok(())
    }

    /// Drop the rows so far, as [`finish`](Self::finish) would, without encoding them (a
    /// record found unchanged, say).
    pub fn clear(&mut self) {
        *self = Self::with_encoding(self.options);
    }

    /// The parquet file of the rows so far, padded to the record size, or
    /// `None` if every row is missing (fsspec writes no file then). The encoder is then empty.
    ///
    /// # Errors
    /// [`RecordError`] if the parquet writer fails.
    pub fn finish(&mut self) -> Result<Option<Bytes>, RecordError> {
        if self.present == 0 {
            *self = Self::with_encoding(self.options);
            return Ok(None);
        }
        let padding =
            usize::try_from(self.options.record_size).unwrap_or(usize::MAX).saturating_sub(self.path_ids.len());
        self.path_ids.extend(std::iter::repeat_n(None, padding));
        self.offsets.extend(std::iter::repeat_n(0, padding));
        self.sizes.extend(std::iter::repeat_n(0, padding));
        for _ in 0..padding {
            self.raw.append_null();
        }
        let path_ids = std::mem::take(&mut self.path_ids);
        let non_null = path_ids.iter().flatten().count();
        #[expect(clippy::cast_precision_loss, reason = "a ratio of counts")]
        let dictionary = match self.options.path_encoding {
            PathEncoding::Plain => false,
            PathEncoding::Dictionary => true,
            PathEncoding::AboveRepetition(threshold) => non_null as f64 / self.paths.len().max(1) as f64 > threshold,
        };
        let paths = std::mem::take(&mut self.paths);
        let path: StringArray =
            path_ids.iter().map(|id| id.and_then(|i| usize::try_from(i).ok()).map(|i| &*paths[i])).collect();
        let path: ArrayRef = Arc::new(path);
        let batch = RecordBatch::try_from_iter([
            ("path", path),
            ("offset", Arc::new(Int64Array::from(std::mem::take(&mut self.offsets))) as ArrayRef),
            ("size", Arc::new(Int64Array::from(std::mem::take(&mut self.sizes))) as ArrayRef),
            ("raw", Arc::new(self.raw.finish()) as ArrayRef),
        ])
        .map_err(RecordError::Decode)?;
        self.distinct.clear();
        self.present = 0;
        let compression = match self.options.zstd_level {
            None => Compression::UNCOMPRESSED,
            Some(level) => Compression::ZSTD(ZstdLevel::try_new(level).map_err(RecordError::Encode)?),
        };
        let properties = WriterProperties::builder()
            .set_key_value_metadata(Some(vec![KeyValue::new("pandas".to_owned(), PANDAS_METADATA.to_owned())]))
            .set_compression(compression)
            .set_statistics_enabled(EnabledStatistics::None)
            .set_dictionary_enabled(false)
            .set_column_dictionary_enabled(ColumnPath::from("path"), dictionary)
            .build();
        let mut bytes = Vec::new();
        let mut writer =
            ArrowWriter::try_new(&mut bytes, batch.schema(), Some(properties)).map_err(RecordError::Encode)?;
        writer.write(&batch).map_err(RecordError::Encode)?;
        writer.close().map_err(RecordError::Encode)?;
        Ok(Some(Bytes::from(bytes)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse::parquet::{Record, Row};

    #[test]
    fn rows_read_back_as_written() {
        for encoding in [PathEncoding::Plain, PathEncoding::Dictionary, PathEncoding::AboveRepetition(1.0)] {
            let options = RecordEncoding { record_size: 8, path_encoding: encoding, zstd_level: Some(3) };
            let mut encoder = RecordEncoder::with_encoding(options);
            let key = || "k".to_owned();
            encoder.push(key, Some(Reference::Range { url: Some("a.nc"), offset: 10, length: 4 })).unwrap();
            encoder.push(key, None).unwrap();
            encoder.push(key, Some(Reference::Inline(b"raw"))).unwrap();
            encoder.push(key, Some(Reference::Whole { url: Some("b.nc") })).unwrap();
            encoder.push(key, Some(Reference::Range { url: Some("a.nc"), offset: 0, length: 0 })).unwrap();
            encoder.push(key, Some(Reference::Inline(b""))).unwrap();
            let err = encoder.push(key, Some(Reference::Whole { url: None })).unwrap_err();
            assert!(matches!(err, WriteError::Unrepresentable { .. }), "{err}");
            let record = Record::decode(encoder.finish().unwrap().unwrap()).unwrap();
            let (a, b): (Arc<str>, Arc<str>) = (Arc::from("a.nc"), Arc::from("b.nc"));
            assert_eq!(record.len(), 8, "padded to the record size");
            assert_eq!(record.row(0), Row::Range { path: &a, offset: 10, size: 4 });
            assert_eq!(record.row(1), Row::Missing);
            assert_eq!(record.row(2), Row::Inline(b"raw"));
            assert_eq!(record.row(3), Row::Whole(&b));
            assert_eq!(record.row(4), Row::Inline(b""), "an empty range is an empty value");
            assert_eq!(record.row(5), Row::Inline(b""));
            assert_eq!(record.row(7), Row::Missing);
            encoder.push(key, None).unwrap();
            assert_eq!(encoder.finish().unwrap(), None, "a record of missing rows has no file");
        }
    }
}
