//! What a record file states about itself, checked before the parquet crate
//! decodes it: the crate trusts these numbers and panics where they
//! disagree (a negative column offset, a page that needs a dictionary the
//! column does not have, a value count past the validity bitmap; found by
//! flipping bytes of real record files, see `tests/corrupt/README.md`).
//! Each check is one the file's own numbers must pass in any reader; none
//! looks at a value.

use bytes::Bytes;
use parquet::basic::Encoding;
use parquet::column::page::Page;
use parquet::file::metadata::{ColumnChunkMetaData, ParquetMetaData};
use parquet::file::reader::{FileReader, SerializedFileReader};

use crate::error::RecordError;

/// The length of what follows the last column chunk at least: the footer's
/// length (4 bytes) and the magic `PAR1`.
const TRAILER: u64 = 8;

/// Check the sizes and counts `file` states: column chunks inside the file,
/// counts that agree from the footer down to the pages, and dictionary
/// pages where data pages need one.
///
/// # Errors
/// [`RecordError::Layout`] saying which number is wrong, and where.
pub(super) fn stated_layout(file: &Bytes) -> Result<(), RecordError> {
    let reader = SerializedFileReader::new(file.clone()).map_err(RecordError::Parquet)?;
    let metadata = reader.metadata();
    chunks_inside(metadata, file.len() as u64)?;
    for group in 0..metadata.num_row_groups() {
        let rows = metadata.row_group(group).num_rows();
        let row_group = reader.get_row_group(group).map_err(RecordError::Parquet)?;
        for column in 0..metadata.row_group(group).num_columns() {
            let chunk = metadata.row_group(group).column(column);
            let at = || format!("row group {group}, column {:?}", chunk.column_path().string());
            // A flat column (the layout's are) has one value, null or not, per row.
            let flat = chunk.column_descr().max_rep_level() == 0;
            if flat && chunk.num_values() != rows {
                return Err(layout(&format!("{}: {} values for {rows} rows", at(), chunk.num_values())));
            }
            let pages = row_group.get_column_page_reader(column).map_err(RecordError::Parquet)?;
            pages_agree(pages, chunk).map_err(|reason| layout(&format!("{}: {reason}", at())))?;
        }
    }
    Ok(())
}

/// Every column chunk lies inside the file, before its footer, and every row count is non-negative.
fn chunks_inside(metadata: &ParquetMetaData, file_len: u64) -> Result<(), RecordError> {
    let end = file_len.saturating_sub(TRAILER);
    for (group, row_group) in metadata.row_groups().iter().enumerate() {
        if row_group.num_rows() < 0 {
            return Err(layout(&format!("row group {group}: {} rows", row_group.num_rows())));
        }
        for chunk in row_group.columns() {
            let start = chunk.dictionary_page_offset().unwrap_or(chunk.data_page_offset());
            let inside = u64::try_from(start)
                .ok()
                .zip(u64::try_from(chunk.compressed_size()).ok())
                .and_then(|(start, len)| start.checked_add(len))
                .is_some_and(|chunk_end| chunk_end <= end)
                && chunk.data_page_offset() >= start
                && chunk.num_values() >= 0;
            if !inside {
                return Err(layout(&format!(
                    "row group {group}, column {:?}: {} bytes from offset {} ({} values) do not lie inside the \
                     file's {file_len} bytes",
                    chunk.column_path().string(),
                    chunk.compressed_size(),
                    start,
                    chunk.num_values(),
                )));
            }
        }
    }
    Ok(())
}

/// The pages of one column chunk: at most one dictionary page, first; data
/// pages that use it only after it; and as many values in the data pages as
/// the chunk states.
fn pages_agree(pages: Box<dyn parquet::column::page::PageReader>, chunk: &ColumnChunkMetaData) -> Result<(), String> {
    let (mut values, mut dictionary, mut data_pages) = (0u64, false, 0u64);
    for page in pages {
        let page = page.map_err(|e| e.to_string())?;
        match page {
            Page::DictionaryPage { .. } if dictionary || data_pages > 0 => {
                return Err("a dictionary page after the first page".into());
            }
            Page::DictionaryPage { num_values, ref buf, .. } => {
                plain_values_fit(chunk.column_type(), num_values, buf.len())?;
                dictionary = true;
            }
            Page::DataPage { num_values, encoding, .. } | Page::DataPageV2 { num_values, encoding, .. } => {
                if matches!(encoding, Encoding::RLE_DICTIONARY | Encoding::PLAIN_DICTIONARY) && !dictionary {
                    return Err(format!(
                        "data page {data_pages} is dictionary-encoded, but no dictionary page comes before it"
                    ));
                }
                data_pages += 1;
                values += u64::from(num_values);
            }
        }
    }
    let stated = u64::try_from(chunk.num_values()).unwrap_or(0);
    if values != stated {
        return Err(format!("the data pages hold {values} values, the column chunk states {stated}"));
    }
    Ok(())
}

/// A dictionary page (always PLAIN) of `values` values of `physical` type
/// takes exactly `bytes` bytes for a fixed width, or at least 4 a value (the
/// length prefix) for byte arrays; none for no values.
fn plain_values_fit(physical: parquet::basic::Type, values: u32, bytes: usize) -> Result<(), String> {
    use parquet::basic::Type;
    let values = values as usize;
    let fits = match physical {
        Type::INT32 | Type::FLOAT => values.checked_mul(4) == Some(bytes),
        Type::INT64 | Type::DOUBLE => values.checked_mul(8) == Some(bytes),
        Type::INT96 => values.checked_mul(12) == Some(bytes),
        Type::BYTE_ARRAY => values.checked_mul(4).is_some_and(|least| least <= bytes) && (values > 0 || bytes == 0),
        Type::BOOLEAN | Type::FIXED_LEN_BYTE_ARRAY => values > 0 || bytes == 0,
    };
    if fits { Ok(()) } else { Err(format!("a dictionary page of {values} {physical} values holds {bytes} bytes")) }
}

fn layout(reason: &str) -> RecordError {
    RecordError::Layout(format!("inconsistent record file: {reason}"))
}
