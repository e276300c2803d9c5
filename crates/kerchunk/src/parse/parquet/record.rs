//! Decoding one record file (`refs.<n>.parq`) into a compact table of rows.
//!
//! Columns are `path` (string, possibly dictionary-encoded, `large_string`,
//! or entirely null with the parquet NULL type), `offset` and `size`
//! (integers) and `raw` (binary). Older writers left out `raw` (every row a
//! reference) or kept only `raw` (every row inline); both are accepted. All
//! columns are normalised with arrow's cast kernel, so each writer's type
//! choice decodes the same way.

use std::collections::HashMap;
use std::sync::Arc;

use arrow_array::{Array, ArrayRef, Float64Array, Int64Array, LargeBinaryArray, LargeStringArray, RecordBatch};
use arrow_cast::CastOptions;
use arrow_schema::DataType;
use bytes::Bytes;
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;

use crate::error::RecordError;

/// What one row says about its chunk key.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Row<'a> {
    /// No reference: the key is missing (read as the fill value).
    Missing,
    /// The value itself (`raw`, even when empty).
    Inline(&'a [u8]),
    /// A whole file (`offset == size == 0`).
    Whole(&'a Arc<str>),
    /// `size` bytes of a file from `offset`.
    Range {
        /// The file.
        path: &'a Arc<str>,
        /// The first byte.
        offset: u64,
        /// The number of bytes.
        size: u64,
    },
    /// A row that cannot be read (a path with a negative, fractional, null or
    /// overflowing offset or size): what is wrong with it. Its key exists and
    /// every read of it is an error; the file's other rows read as usual.
    Malformed(&'a str),
}

const NO_PATH: u32 = u32::MAX;

/// A decoded record file.
#[derive(Debug, Default)]
pub struct Record {
    /// The distinct paths of this record.
    paths: Vec<Arc<str>>,
    /// Per row: index into `paths`, or `NO_PATH`.
    path_ids: Vec<u32>,
    offsets: Vec<u64>,
    sizes: Vec<u64>,
    /// Per row: the `raw` value's range in `raw`, if not null.
    raw_spans: Vec<Option<(u32, u32)>>,
    raw: Bytes,
    /// The rows that cannot be read, in row order, with why.
    malformed: Vec<(usize, Box<str>)>,
}

impl Record {
    /// An empty record: the file does not exist, so every key in it is missing.
    #[must_use]
    pub fn absent() -> Self {
        Self::default()
    }

    /// Decode a record file.
    ///
    /// # Errors
    /// [`RecordError`] saying what is wrong with the file.
    pub fn decode(file: Bytes) -> Result<Self, RecordError> {
        // The parquet crate's decoders can panic on corrupt files (seen in
        // its dictionary decoder). A record file is untrusted input, so a
        // panic there is this file's error, not the caller's crash. (With
        // `panic = "abort"` it still aborts: nothing can be caught then.)
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| Self::decode_unguarded(file)))
            .unwrap_or_else(|panic| Err(RecordError::Panicked(panic_message(&*panic))))
    }

    fn decode_unguarded(file: Bytes) -> Result<Self, RecordError> {
        super::check::stated_layout(&file)?;
        let reader = ParquetRecordBatchReaderBuilder::try_new(file)
            .and_then(ParquetRecordBatchReaderBuilder::build)
            .map_err(RecordError::Parquet)?;
        let layout = |reason: String| RecordError::Layout(reason);
        let mut record = Self::default();
        let mut path_ids: HashMap<Arc<str>, u32> = HashMap::new();
        let mut raw = Vec::new();
        for batch in reader {
            let batch = batch.map_err(RecordError::Decode)?;
            let columns = Columns::of(&batch)?;
            for i in 0..batch.num_rows() {
                let path = columns.path.as_ref().filter(|p| p.is_valid(i)).map(|p| p.value(i));
                let id = match path {
                    None => NO_PATH,
                    // Paths come in long runs: compare with the last one before hashing.
                    Some(path)
                        if record
                            .path_ids
                            .last()
                            .is_some_and(|&last| record.paths.get(last as usize).is_some_and(|p| **p == *path)) =>
                    {
                        *record.path_ids.last().expect("checked")
                    }
                    Some(path) if let Some(id) = path_ids.get(path) => *id,
                    Some(path) => {
                        let id =
                            u32::try_from(record.paths.len()).map_err(|_| layout("too many distinct paths".into()))?;
                        let path: Arc<str> = Arc::from(path);
                        record.paths.push(Arc::clone(&path));
                        path_ids.insert(path, id);
                        id
                    }
                };
                let row = record.path_ids.len();
                record.path_ids.push(id);
                let has_path = path.is_some();
                let numbers = row_number(columns.offset.as_ref(), i, has_path, "offset")
                    .and_then(|offset| Ok((offset, row_number(columns.size.as_ref(), i, has_path, "size")?)))
                    .and_then(|(offset, size)| match offset.checked_add(size) {
                        Some(_) => Ok((offset, size)),
                        None if has_path => Err(format!("offset {offset} + size {size} overflows")),
                        None => Ok((0, 0)),
                    });
                let (offset, size) = numbers.unwrap_or_else(|reason| {
                    record.malformed.push((row, format!("row {row}: {reason}").into()));
                    (0, 0)
                });
                record.offsets.push(offset);
                record.sizes.push(size);
                record.raw_spans.push(match columns.raw.as_ref().filter(|r| r.is_valid(i)) {
                    None => None,
                    Some(r) => {
                        let value = r.value(i);
                        let too_large = |_| layout("inline data over 4 GiB".into());
                        let start = u32::try_from(raw.len()).map_err(too_large)?;
                        let len = u32::try_from(value.len()).map_err(too_large)?;
                        raw.extend_from_slice(value);
                        Some((start, len))
                    }
                });
            }
        }
        record.raw = Bytes::from(raw);
        Ok(record)
    }

    /// The number of rows in the file (a last file may be shorter than the record size).
    #[must_use]
    pub fn len(&self) -> usize {
        self.path_ids.len()
    }

    /// Whether the file has no rows (an absent record file reads so).
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.path_ids.is_empty()
    }

    /// Row `i`; rows past the end of the file are missing.
    pub fn row(&self, i: usize) -> Row<'_> {
        if i >= self.len() {
            return Row::Missing;
        }
        if !self.malformed.is_empty()
            && let Ok(at) = self.malformed.binary_search_by_key(&i, |(row, _)| *row)
        {
            return Row::Malformed(&self.malformed[at].1);
        }
        if let Some((start, len)) = self.raw_spans[i] {
            return Row::Inline(&self.raw[start as usize..(start + len) as usize]);
        }
        let Some(path) = self.paths.get(self.path_ids[i] as usize) else { return Row::Missing };
        match (self.offsets[i], self.sizes[i]) {
            (0, 0) => Row::Whole(path),
            (offset, size) => Row::Range { path, offset, size },
        }
    }

    /// Row `i`'s inline value as shared bytes (no copy), if it is inline.
    pub fn inline_bytes(&self, i: usize) -> Option<Bytes> {
        let (start, len) = (*self.raw_spans.get(i)?)?;
        Some(self.raw.slice(start as usize..(start + len) as usize))
    }

    /// Roughly how many bytes this record holds in memory (for the cache bound).
    pub fn memory_size(&self) -> usize {
        self.paths.iter().map(|p| p.len() + 16).sum::<usize>()
            + self.len() * 40
            + self.raw.len()
            + self.malformed.iter().map(|(_, reason)| reason.len() + 24).sum::<usize>()
    }
}

/// Row `i` of an `offset` or `size` column, or what is wrong with it. A
/// reference with a path needs both: a null one is malformed, never 0 (which
/// would serve another chunk's bytes), and so is one that was no integer in
/// the file. Kept small for the per-row loop; the reasons are built out of line.
#[inline]
fn row_number(column: Option<&Integers>, i: usize, has_path: bool, name: &'static str) -> Result<u64, String> {
    match column {
        Some(c) if c.values.is_valid(i) => {
            u64::try_from(c.values.value(i)).map_err(|_| negative(name, c.values.value(i)))
        }
        Some(c) if has_path => Err(not_a_number(c, i, name)),
        _ => Ok(0),
    }
}

#[cold]
fn negative(name: &str, value: i64) -> String {
    format!("negative {name} {value}")
}

/// Why row `i` of `column`, which has a path, has no number.
#[cold]
fn not_a_number(column: &Integers, i: usize, name: &str) -> String {
    let original = &column.original;
    let shown =
        arrow_cast::display::ArrayFormatter::try_new(original.as_ref(), &arrow_cast::display::FormatOptions::default())
            .map_or_else(|_| "a value".to_owned(), |f| f.value(i).to_string());
    // NaN is pandas' null.
    if original.is_null(i) || (original.data_type().is_floating() && shown == "NaN") {
        return format!("a path with a null {name}");
    }
    format!("{name} {shown} is not a non-negative integer")
}

/// The columns of one batch, normalised.
struct Columns {
    path: Option<LargeStringArray>,
    offset: Option<Integers>,
    size: Option<Integers>,
    raw: Option<LargeBinaryArray>,
}

/// An `offset` or `size` column: its values as integers, null where the
/// file's value is null or is no integer (a fraction, text); and the file's
/// values, to say which.
struct Integers {
    values: Int64Array,
    original: ArrayRef,
}

impl Columns {
    fn of(batch: &RecordBatch) -> Result<Self, RecordError> {
        let schema = batch.schema();
        let column = |name: &str| schema.index_of(name).ok().map(|i| batch.column(i));
        if ["path", "raw"].iter().all(|name| column(name).is_none()) {
            let found: Vec<&String> = schema.fields().iter().map(|f| f.name()).collect();
            return Err(RecordError::Layout(format!(
                "unexpected schema: no \"path\" or \"raw\" column (found {found:?})"
            )));
        }
        let path = match column("path") {
            // A float column is pandas' all-NaN object column: no paths at all.
            Some(c) if c.data_type().is_floating() => {
                let floats = cast::<Float64Array>(c, &DataType::Float64, "path")?;
                if let Some(row) = floats.iter().position(|v| v.is_some_and(|v| !v.is_nan())) {
                    return Err(RecordError::Layout(format!("column \"path\", row {row}: a number, not a path")));
                }
                None
            }
            Some(c) => Some(cast::<LargeStringArray>(c, &DataType::LargeUtf8, "path")?),
            None => None,
        };
        let integers = |name: &'static str| {
            column(name).map(|c| Ok(Integers { values: integers(c, name)?, original: Arc::clone(c) })).transpose()
        };
        let raw = column("raw").map(|c| cast::<LargeBinaryArray>(c, &DataType::LargeBinary, "raw")).transpose()?;
        Ok(Self { path, offset: integers("offset")?, size: integers("size")?, raw })
    }
}

/// An `offset` or `size` column as integers, value by value: one that does
/// not convert exactly (text that is not a number, a fraction, an overflow)
/// becomes null, which [`row_number`] reports for its row, never 0. Floats
/// become integers only where integral; NaN, pandas' missing value, is null.
fn integers(column: &ArrayRef, name: &'static str) -> Result<Int64Array, RecordError> {
    if column.data_type().is_floating() {
        let floats = cast::<Float64Array>(column, &DataType::Float64, name)?;
        #[expect(clippy::cast_possible_truncation, reason = "integral and within i64, checked")]
        let exact = |v: f64| (v.fract() == 0.0 && v.abs() < 9.2e18).then_some(v as i64);
        return Ok(floats.iter().map(|v| v.and_then(exact)).collect());
    }
    let failed = |source| RecordError::Cast { column: name, data_type: column.data_type().to_string(), source };
    // `safe`: a value that does not convert becomes null, for its row to report.
    let cast = arrow_cast::cast_with_options(column, &DataType::Int64, &CastOptions::default()).map_err(failed)?;
    cast.as_any()
        .downcast_ref::<Int64Array>()
        .cloned()
        .ok_or_else(|| RecordError::Layout(format!("column \"{name}\" could not be normalised")))
}

/// `column` as `T`, converted exactly: a value that does not convert is an
/// error of the whole column.
fn cast<T: Array + Clone + 'static>(column: &ArrayRef, to: &DataType, name: &'static str) -> Result<T, RecordError> {
    let failed = |source| RecordError::Cast { column: name, data_type: column.data_type().to_string(), source };
    let exact = CastOptions { safe: false, ..CastOptions::default() };
    let cast = arrow_cast::cast_with_options(column, to, &exact).map_err(failed)?;
    cast.as_any()
        .downcast_ref::<T>()
        .cloned()
        .ok_or_else(|| RecordError::Layout(format!("column \"{name}\" could not be normalised")))
}

/// The message of a caught panic, if it carried one.
fn panic_message(panic: &(dyn std::any::Any + Send)) -> String {
    panic
        .downcast_ref::<&str>()
        .map(|s| (*s).to_owned())
        .or_else(|| panic.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "a panic without a message".to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(path: &str) -> Record {
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/data/parquet_fastparquet/refs.parq/");
        Record::decode(Bytes::from(std::fs::read(format!("{dir}{path}")).unwrap())).unwrap()
    }

    /// Every row of `field/refs.<n>.parq` matches the JSON references of the same case.
    fn check_against_json(field: &str, files: usize, record_size: usize, chunk_keys: impl Fn(usize) -> String) {
        let refs: serde_json::Value = serde_json::from_slice(
            &std::fs::read(concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/data/parquet_fastparquet/refs.json"))
                .unwrap(),
        )
        .unwrap();
        for n in 0..files {
            let path = format!("{field}/refs.{n}.parq");
            if !std::path::Path::new(concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/../../tests/data/parquet_fastparquet/refs.parq/"
            ))
            .join(&path)
            .exists()
            {
                continue;
            }
            let rec = record(&path);
            for row in 0..record_size {
                let key = chunk_keys(n * record_size + row);
                let expected = &refs["refs"][&key];
                match (rec.row(row), expected) {
                    (Row::Missing, serde_json::Value::Null) => {}
                    (Row::Inline(bytes), serde_json::Value::String(text)) => {
                        let want = match text.strip_prefix("base64:") {
                            Some(b) => base64::Engine::decode(&base64::engine::general_purpose::STANDARD, b).unwrap(),
                            None => text.as_bytes().to_vec(),
                        };
                        assert_eq!(bytes, &want[..], "{key}");
                    }
                    (Row::Range { path, offset, size }, serde_json::Value::Array(want)) => {
                        assert_eq!(
                            (&**path, offset, size),
                            (want[0].as_str().unwrap(), want[1].as_u64().unwrap(), want[2].as_u64().unwrap()),
                            "{key}"
                        );
                    }
                    (row, want) => panic!("{key}: {row:?} vs {want}"),
                }
            }
        }
    }

    #[test]
    fn fastparquet_record_files_match_the_json_references() {
        // record_size 10; holes is 1-D (30 chunks), field is 6 x 10 chunks.
        check_against_json("holes", 3, 10, |c| format!("holes/{c}"));
        check_against_json("field", 6, 10, |c| format!("field/{}.{}", c / 10, c % 10));
        assert_eq!(record("holes/refs.0.parq").row(10), Row::Missing, "past the end of the file");
    }

    fn encode(columns: Vec<(&str, ArrayRef)>) -> Bytes {
        let batch = RecordBatch::try_from_iter(columns).unwrap();
        let mut bytes = Vec::new();
        let mut writer = parquet::arrow::ArrowWriter::try_new(&mut bytes, batch.schema(), None).unwrap();
        writer.write(&batch).unwrap();
        writer.close().unwrap();
        Bytes::from(bytes)
    }

    #[test]
    fn row_meanings() {
        use arrow_array::{BinaryArray, Float64Array, StringArray};
        let file = encode(vec![
            (
                "path",
                Arc::new(StringArray::from(vec![Some("a.nc"), Some("a.nc"), None, None, Some("b.nc")])) as ArrayRef,
            ),
            ("offset", Arc::new(Int64Array::from(vec![0, 8, 0, 0, 3]))),
            ("size", Arc::new(Int64Array::from(vec![0, 4, 0, 0, 2]))),
            ("raw", Arc::new(BinaryArray::from(vec![None, None, Some(&b""[..]), None, Some(&b"xy"[..])]))),
        ]);
        let record = Record::decode(file).unwrap();
        let a: Arc<str> = Arc::from("a.nc");
        assert_eq!(record.row(0), Row::Whole(&a), "(path, 0, 0) is the whole file");
        assert_eq!(record.row(1), Row::Range { path: &a, offset: 8, size: 4 });
        assert_eq!(record.row(2), Row::Inline(b""), "an empty raw is a value");
        assert_eq!(record.row(3), Row::Missing);
        assert_eq!(record.row(4), Row::Inline(b"xy"), "raw wins over path");
        assert_eq!(record.row(5), Row::Missing);

        // pandas writes an object column of NaN as doubles: no paths at all.
        let file = encode(vec![
            ("path", Arc::new(Float64Array::from(vec![f64::NAN, f64::NAN])) as ArrayRef),
            ("offset", Arc::new(Int64Array::from(vec![0, 0]))),
            ("size", Arc::new(Int64Array::from(vec![0, 0]))),
            ("raw", Arc::new(BinaryArray::from(vec![None, Some(&b"v"[..])]))),
        ]);
        let record = Record::decode(file).unwrap();
        assert_eq!((record.row(0), record.row(1)), (Row::Missing, Row::Inline(b"v")));

        let negative = encode(vec![
            ("path", Arc::new(StringArray::from(vec!["a.nc"])) as ArrayRef),
            ("offset", Arc::new(Int64Array::from(vec![-1]))),
            ("size", Arc::new(Int64Array::from(vec![1]))),
        ]);
        // A malformed row fails its own key, not the file.
        assert_eq!(Record::decode(negative).unwrap().row(0), Row::Malformed("row 0: negative offset -1"));
        let wrong = encode(vec![("key", Arc::new(Int64Array::from(vec![1])) as ArrayRef)]);
        assert!(Record::decode(wrong).unwrap_err().to_string().contains("unexpected schema"));
    }

    /// Offsets and sizes that do not convert exactly make their rows malformed, never offset 0.
    #[test]
    fn inexact_numbers_are_malformed_rows() {
        use arrow_array::{Float64Array, StringArray};
        let with = |offset: ArrayRef| {
            let file = encode(vec![
                ("path", Arc::new(StringArray::from(vec![Some("a.nc"), None])) as ArrayRef),
                ("offset", offset),
                ("size", Arc::new(Int64Array::from(vec![Some(4), None]))),
            ]);
            let record = Record::decode(file).unwrap();
            assert_eq!(record.row(1), Row::Missing, "the row without a path");
            match record.row(0) {
                Row::Range { path, offset: 8, size: 4 } if **path == *"a.nc" => Ok(()),
                Row::Malformed(reason) => Err(reason.to_owned()),
                other => panic!("{other:?}"),
            }
        };
        assert_eq!(with(Arc::new(Float64Array::from(vec![8.0, f64::NAN]))), Ok(()), "integral floats, NaN missing");
        assert_eq!(with(Arc::new(StringArray::from(vec!["8", "0"]))), Ok(()), "integers as text");
        for (offset, needle) in [
            (Arc::new(Float64Array::from(vec![8.5, 0.0])) as ArrayRef, "offset 8.5 is not a non-negative integer"),
            (Arc::new(Float64Array::from(vec![f64::INFINITY, 0.0])), "offset inf is not"),
            (Arc::new(Float64Array::from(vec![1e19, 0.0])), "is not a non-negative integer"),
            (Arc::new(StringArray::from(vec!["eight", "0"])), "offset eight is not"),
            (Arc::new(Int64Array::from(vec![None, Some(0)])), "a path with a null offset"),
            (Arc::new(Float64Array::from(vec![f64::NAN, 0.0])), "a path with a null offset"),
            (Arc::new(arrow_array::UInt64Array::from(vec![u64::MAX, 0])), "18446744073709551615 is not"),
        ] {
            let reason = with(offset).unwrap_err();
            assert!(reason.starts_with("row 0: ") && reason.contains(needle), "{needle}: {reason}");
        }
        let numeric_paths = encode(vec![("path", Arc::new(Float64Array::from(vec![f64::NAN, 1.0])) as ArrayRef)]);
        assert!(Record::decode(numeric_paths).unwrap_err().to_string().contains("not a path"));
    }

    #[test]
    fn corrupt_files_are_errors() {
        let bytes = std::fs::read(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../tests/data/parquet_fastparquet/refs.parq/field/refs.0.parq"
        ))
        .unwrap();
        for broken in [&bytes[..bytes.len() / 2], &b"PAR1 not really"[..], &[]] {
            assert!(Record::decode(Bytes::copy_from_slice(broken)).is_err());
        }
    }

    /// One byte changed in pyarrow's record file made the parquet crate panic
    /// (60.1.0; found by flipping every byte, see tests/corrupt/README.md).
    /// Where the file's own sizes and counts disagree, the check before
    /// decoding says so instead.
    #[test]
    fn inconsistent_sizes_and_counts_are_found_before_decoding() {
        let good = std::fs::read(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../tests/data/parquet_writers/refs.pyarrow100.parq/field/refs.0.parq"
        ))
        .unwrap();
        assert_eq!(Record::decode(Bytes::from(good.clone())).unwrap().len(), 100);
        for (at, value, needle) in [
            // In the footer: the `path` column chunk's size, negative (a panic in `byte_range`).
            (649, 0xff, "-128 bytes from offset 4"),
            // In the footer: the `offset` column's pages are read from a dictionary-encoded
            // data page, with no dictionary before it ("Decoder for dict should have been set").
            (717, 0x01, "no dictionary page comes before it"),
            // The `path` column's dictionary page, of 0 values but 11 bytes (a division by zero).
            (12, 0x00, "a dictionary page of 0 BYTE_ARRAY values holds 11 bytes"),
        ] {
            let mut bytes = good.clone();
            bytes[at] = value;
            match Record::decode(Bytes::from(bytes)) {
                Err(RecordError::Layout(reason)) => assert!(reason.contains(needle), "byte {at}: {reason}"),
                other => panic!("byte {at}: {other:?}"),
            }
        }
    }
}
