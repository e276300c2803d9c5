//! The coordinate files are combined along: each file's values, ordered,
//! and, where the files' time units differ, decoded to dates and written
//! again in the first file's units.

use kerchunk::Reference;
use zarrs_cf::{DateTime, TimeUnits};

use super::{Input, attributes, chunk_key, combine_error, item_size, zarray};
use crate::error::ScanError;

/// A file's coordinate along the dimension, as written.
pub(super) struct Coordinate {
    dtype: String,
    pub(super) bytes: Vec<u8>,
    /// The values, as numbers.
    pub(super) numbers: Vec<f64>,
    /// Its `units` and `calendar` attributes.
    units: Option<String>,
    calendar: Option<String>,
}

impl Coordinate {
    /// `units` and `calendar`, for messages.
    fn describe_units(&self) -> String {
        let units = self.units.as_deref().map_or_else(|| "no units".to_owned(), |u| format!("units {u:?}"));
        match &self.calendar {
            Some(calendar) => format!("{units} (calendar {calendar:?})"),
            None => units,
        }
    }
}

/// The combined coordinate's values.
pub(super) enum Coordinates {
    /// Every file's values as written: they share units, calendar and dtype.
    AsWritten(Vec<Coordinate>),
    /// CF times from files in different units, in the units of the first file.
    Times(Vec<f64>),
}

/// The inputs in the order of their coordinates, with the combined
/// coordinate; an error if one has no coordinate inline, two start at the
/// same value, or their dtypes or units differ in a way that cannot be
/// reconciled.
pub(super) fn ordered(inputs: Vec<Input>, dimension: &str) -> Result<(Vec<Input>, Coordinates), ScanError> {
    let error = |name: &str, reason: String| combine_error(name, dimension, reason);
    let mut coordinates = Vec::with_capacity(inputs.len());
    for input in &inputs {
        let meta = zarray(&input.references, dimension)
            .ok_or_else(|| error(&input.name, "no coordinate array for the dimension".into()))?;
        let dtype = meta["dtype"].as_str().unwrap_or_default().to_owned();
        let bytes = match input.references.get(&chunk_key(dimension, 1, 0)) {
            Some(Reference::Inline(bytes)) if meta["chunks"] == meta["shape"] => bytes.to_vec(),
            _ => return Err(error(&input.name, "the coordinate is not held inline in one chunk".into())),
        };
        let numbers = numbers(&dtype, &bytes)
            .filter(|numbers| !numbers.is_empty())
            .ok_or_else(|| error(&input.name, format!("no values of a numeric dtype ({dtype})")))?;
        let attribute = |name: &str| attributes(&input.references, dimension)?[name].as_str().map(str::to_owned);
        coordinates.push(Coordinate {
            dtype,
            bytes,
            numbers,
            units: attribute("units"),
            calendar: attribute("calendar"),
        });
    }
    let same_units =
        coordinates.windows(2).all(|pair| (&pair[0].units, &pair[0].calendar) == (&pair[1].units, &pair[1].calendar));
    if same_units { as_written(inputs, coordinates, dimension) } else { times(inputs, coordinates, dimension) }
}

/// Files whose coordinates share their units: ordered by their first
/// values, which are concatenated as written.
fn as_written(
    inputs: Vec<Input>,
    coordinates: Vec<Coordinate>,
    dimension: &str,
) -> Result<(Vec<Input>, Coordinates), ScanError> {
    let error = |name: &str, reason: String| combine_error(name, dimension, reason);
    let mut pairs: Vec<(Input, Coordinate)> = inputs.into_iter().zip(coordinates).collect();
    pairs.sort_by(|a, b| a.1.numbers[0].total_cmp(&b.1.numbers[0]));
    let (inputs, coordinates): (Vec<Input>, Vec<Coordinate>) = pairs.into_iter().unzip();
    for (pair, input) in coordinates.windows(2).zip(inputs.iter().skip(1)) {
        if pair[0].numbers[0].total_cmp(&pair[1].numbers[0]).is_eq() {
            return Err(error(
                &input.name,
                format!("starts at the same value as another file ({})", pair[0].numbers[0]),
            ));
        }
        if pair[1].dtype != pair[0].dtype {
            return Err(error(&input.name, format!("dtype {} differs from {}", pair[1].dtype, pair[0].dtype)));
        }
    }
    Ok((inputs, Coordinates::AsWritten(coordinates)))
}

/// Files whose coordinates differ in units: each must be a CF time in one
/// calendar. Decoded to dates, ordered by their first dates, and written
/// again in the units of the first file.
fn times(
    inputs: Vec<Input>,
    coordinates: Vec<Coordinate>,
    dimension: &str,
) -> Result<(Vec<Input>, Coordinates), ScanError> {
    let error = |name: &str, reason: String| combine_error(name, dimension, reason);
    // Another file's units, for messages: the first file's, or the second's for the first.
    let other: Vec<String> = (0..coordinates.len())
        .map(|i| {
            let j = usize::from(i == 0);
            format!("{}'s {}", inputs[j].name, coordinates[j].describe_units())
        })
        .collect();
    // Every file's units, and its values as dates.
    let mut decoded: Vec<(Input, Coordinate, TimeUnits, Vec<DateTime>)> = Vec::with_capacity(inputs.len());
    for ((input, coordinate), other) in inputs.into_iter().zip(coordinates).zip(other) {
        let ours = coordinate.describe_units();
        let units = match coordinate
            .units
            .as_deref()
            .map(|units| TimeUnits::parse(units, coordinate.calendar.as_deref()))
        {
            Some(Ok(Some(units))) => units,
            Some(Err(reason)) => {
                return Err(error(
                    &input.name,
                    format!(
                        "its {ours} differ from {other} and cannot be decoded ({reason}): its values cannot be combined with theirs"
                    ),
                ));
            }
            Some(Ok(None)) | None => {
                return Err(error(
                    &input.name,
                    format!(
                        "its {ours} differ from {other}, and are not CF time units: its values cannot be combined with theirs"
                    ),
                ));
            }
        };
        if let Some((first, _, their_units, _)) = decoded.first()
            && their_units.calendar() != units.calendar()
        {
            return Err(error(
                &input.name,
                format!("its calendar {} differs from {}'s {}", units.calendar(), first.name, their_units.calendar()),
            ));
        }
        let dates = coordinate
            .numbers
            .iter()
            .map(|&value| {
                units.date(value).ok_or_else(|| {
                    error(&input.name, format!("its value {value} is not a date in {}", coordinate.describe_units()))
                })
            })
            .collect::<Result<Vec<_>, _>>()?;
        decoded.push((input, coordinate, units, dates));
    }
    decoded.sort_by(|a, b| a.3[0].cmp(&b.3[0]));
    for (pair, later) in decoded.windows(2).zip(decoded.iter().skip(1)) {
        if pair[0].3[0] == pair[1].3[0] {
            return Err(error(
                &later.0.name,
                format!("starts at the same time as {} ({})", pair[0].0.name, pair[0].3[0]),
            ));
        }
    }
    let target = decoded[0].2;
    let mut values = Vec::new();
    for (input, _, _, dates) in &decoded {
        for &date in dates {
            values.push(target.value(date).ok_or_else(|| {
                error(
                    &input.name,
                    format!("its time {date} is not a date of the first file's {} calendar", target.calendar()),
                )
            })?);
        }
    }
    let inputs = decoded.into_iter().map(|(input, ..)| input).collect();
    Ok((inputs, Coordinates::Times(values)))
}

/// The values of `bytes` as numbers, for ordering files and decoding times;
/// `None` unless the dtype is a numeric one of 1 to 8 bytes, and `bytes`
/// whole values of it.
fn numbers(dtype: &str, bytes: &[u8]) -> Option<Vec<f64>> {
    let size = item_size(dtype).filter(|size| [1, 2, 4, 8].contains(size) && bytes.len().is_multiple_of(*size))?;
    let kind = *dtype.as_bytes().get(1)?;
    let big = dtype.starts_with('>');
    let shift = 64 - 8 * u32::try_from(size).ok()?;
    bytes
        .chunks_exact(size)
        .map(|value| {
            let mut word = [0u8; 8];
            word[..size].copy_from_slice(value);
            if big {
                word[..size].reverse();
            }
            let unsigned = u64::from_le_bytes(word);
            #[expect(
                clippy::cast_precision_loss,
                clippy::cast_possible_wrap,
                reason = "integers beyond 2^53 are not coordinates"
            )]
            Some(match (kind, size) {
                (b'f', 8) => f64::from_bits(unsigned),
                (b'f', 4) => f64::from(f32::from_bits(u32::try_from(unsigned).ok()?)),
                (b'u', _) => unsigned as f64,
                (b'i', _) => ((unsigned << shift) as i64 >> shift) as f64,
                _ => return None,
            })
        })
        .collect()
}
