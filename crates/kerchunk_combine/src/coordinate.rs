//! The coordinate files are combined along: each file's values, ordered,
//! and, where the files' time units differ, decoded to dates and written
//! again in the first file's units; or one value per file, from its name or
//! an attribute.

use kerchunk::Reference;
use serde_json::{Value, json};
use zarrs_cf::{DateTime, TimeUnits};

use super::options::CombineOptions;
use super::source::{CoordinateSource, FileValue, file_value};
use super::{Input, attributes, chunk_key, combine_error, differing_encoding, encoding_reason, item_size, zarray};
use crate::error::CombineError;

/// The combined coordinate array: its metadata and its values, in one chunk.
pub(super) struct Combined {
    pub(super) zarray: Value,
    pub(super) zattrs: Option<Value>,
    pub(super) values: Vec<u8>,
}

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
enum Coordinates {
    /// Every file's values as written: they share units, calendar and dtype.
    AsWritten(Vec<Coordinate>),
    /// CF times decoded, in the units given (text and calendar name) or else
    /// the first file's.
    Times { values: Vec<f64>, units: Option<(String, String)> },
}

/// The inputs in the order of their coordinates, with the combined
/// coordinate, from the files' own coordinate arrays as `options` (`Auto`,
/// `Data` or `Cf`, and the time units) say; an error if one has no
/// coordinate inline, two start at the same value, or their dtypes or units
/// differ in a way that cannot be reconciled.
pub(super) fn ordered(inputs: Vec<Input>, options: &CombineOptions) -> Result<(Vec<Input>, Combined), CombineError> {
    let dimension = options.dimension.as_str();
    let error = |name: &str, reason: String| combine_error(name, dimension, reason);
    let mut coordinates = Vec::with_capacity(inputs.len());
    for input in &inputs {
        let (meta, bytes) = inline_coordinate(input, dimension).map_err(|reason| error(&input.name, reason))?;
        let dtype = meta["dtype"].as_str().unwrap_or_default().to_owned();
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
    // What else decodes its values (packing, fill values) must be the same in every file: the
    // combined coordinate keeps the first file's.
    for input in &inputs[1..] {
        let (ours, first) = (attributes(&input.references, dimension), attributes(&inputs[0].references, dimension));
        if let Some(differing) = differing_encoding(ours.as_ref(), first.as_ref(), &["units", "calendar"]) {
            return Err(error(&input.name, encoding_reason(differing, &inputs[0].name)));
        }
    }
    let differing = coordinates
        .windows(2)
        .position(|pair| (&pair[0].units, &pair[0].calendar) != (&pair[1].units, &pair[1].calendar));
    let as_times = options.time_units.is_some() && !matches!(options.coordinate, CoordinateSource::Data);
    let (inputs, coordinates) = match (&options.coordinate, differing) {
        (CoordinateSource::Cf, _) | (CoordinateSource::Auto, Some(_)) => times(inputs, coordinates, options)?,
        _ if as_times => times(inputs, coordinates, options)?,
        (CoordinateSource::Data, Some(i)) => {
            return Err(error(
                &inputs[i + 1].name,
                format!(
                    "its {} differ from {}'s {}: its values cannot be concatenated as written (use cf)",
                    coordinates[i + 1].describe_units(),
                    inputs[i].name,
                    coordinates[i].describe_units()
                ),
            ));
        }
        _ => as_written(inputs, coordinates, dimension)?,
    };
    let first = &inputs[0];
    let mut meta = zarray(&first.references, dimension)
        .ok_or_else(|| error(&first.name, "no coordinate array for the dimension".into()))?;
    let (values, total) = match &coordinates {
        Coordinates::AsWritten(coordinates) => {
            let values: Vec<u8> = coordinates.iter().flat_map(|c| c.bytes.iter().copied()).collect();
            (values, coordinates.iter().map(|c| c.numbers.len() as u64).sum::<u64>())
        }
        Coordinates::Times { values: times, .. } => {
            // Written again in one unit: float64, and no fill value, which
            // would mean another time in the new units.
            meta["dtype"] = Value::from("<f8");
            meta["fill_value"] = Value::Null;
            meta["compressor"] = Value::Null;
            meta["filters"] = Value::Null;
            (times.iter().flat_map(|t| t.to_le_bytes()).collect(), times.len() as u64)
        }
    };
    meta["shape"] = Value::from(vec![total]);
    meta["chunks"] = Value::from(vec![total]);
    let mut zattrs = attributes(&first.references, dimension);
    if let (Coordinates::Times { units, .. }, Some(attrs)) = (&coordinates, zattrs.as_mut())
        && let Some(attrs) = attrs.as_object_mut()
    {
        if let Some((units, calendar)) = units {
            attrs.insert("units".into(), Value::from(units.as_str()));
            attrs.insert("calendar".into(), Value::from(calendar.as_str()));
        }
        // Every value written is a date: none is the fill value of other units.
        attrs.remove("_FillValue");
        attrs.remove("missing_value");
    }
    Ok((inputs, Combined { zarray: meta, zattrs, values }))
}

/// The metadata and values of `input`'s coordinate along `dimension`, which
/// must be held inline in one chunk.
pub(super) fn inline_coordinate(input: &Input, dimension: &str) -> Result<(Value, Vec<u8>), String> {
    let meta = zarray(&input.references, dimension).ok_or("no coordinate array for the dimension")?;
    match input.references.get(&chunk_key(dimension, 1, 0)) {
        Some(Reference::Inline(bytes)) if meta["chunks"] == meta["shape"] => Ok((meta, bytes.to_vec())),
        _ => Err("the coordinate is not held inline in one chunk".into()),
    }
}

/// The inputs in the order of the values `source` (a file's name or an
/// attribute) gives each, with the combined coordinate: numbers as `<i8`
/// when all are integers, `<f8` otherwise; dates as `<f8` CF times in the
/// coarsest of days, hours, minutes and seconds that counts every one whole,
/// since the first date's midnight, standard calendar. An error names the
/// file whose value is missing, repeats another's, or is of another kind.
pub(super) fn from_files(inputs: Vec<Input>, options: &CombineOptions) -> Result<(Vec<Input>, Combined), CombineError> {
    let (dimension, source) = (options.dimension.as_str(), &options.coordinate);
    let error = |name: &str, reason: String| combine_error(name, dimension, reason);
    let mut with_values = Vec::with_capacity(inputs.len());
    for input in inputs {
        let value = file_value(source, &input.name, &input.references)
            .map_err(|reason| error(&input.name, format!("{reason} ({dimension} from {source})")))?;
        with_values.push((input, value));
    }
    let Some((first_input, first_value)) = with_values.first() else {
        return Ok((Vec::new(), Combined { zarray: Value::Null, zattrs: None, values: Vec::new() }));
    };
    let is_date = matches!(first_value, FileValue::Date(_));
    if let Some((input, value)) = with_values.iter().find(|(_, value)| matches!(value, FileValue::Date(_)) != is_date) {
        return Err(error(
            &input.name,
            format!("its value {value} is not of the kind of {}'s {first_value}", first_input.name),
        ));
    }
    with_values.sort_by(|a, b| a.1.order(&b.1));
    for pair in with_values.windows(2) {
        if pair[0].1.order(&pair[1].1).is_eq() {
            return Err(error(&pair[1].0.name, format!("its value {} is also {}'s", pair[1].1, pair[0].0.name)));
        }
    }
    let (inputs, values): (Vec<Input>, Vec<FileValue>) = with_values.into_iter().unzip();
    // The first file's attributes of an array of the dimension's name, if it has one.
    let mut zattrs = attributes(&inputs[0].references, dimension).filter(Value::is_object).unwrap_or_else(|| json!({}));
    zattrs["_ARRAY_DIMENSIONS"] = json!([dimension]);
    let (dtype, bytes) = if is_date {
        let dates: Vec<DateTime> =
            values.iter().filter_map(|v| if let FileValue::Date(d) = v { Some(*d) } else { None }).collect();
        let (units, calendar, numbers) = if let Some((given, text, calendar)) = options.time_units_in("standard") {
            let numbers = dates
                .iter()
                .zip(&inputs)
                .map(|(&date, input)| {
                    given.value(date).ok_or_else(|| {
                        error(&input.name, format!("its date {date} is not a date in {text} ({calendar} calendar)"))
                    })
                })
                .collect::<Result<Vec<f64>, _>>()?;
            (text, calendar, numbers)
        } else {
            let (units, numbers) = date_values(&dates)
                .ok_or_else(|| error(&inputs[0].name, "its dates cannot be counted in one unit".into()))?;
            (units, "standard".to_owned(), numbers)
        };
        zattrs["units"] = Value::from(units);
        zattrs["calendar"] = Value::from(calendar);
        ("<f8", numbers.iter().flat_map(|n| n.to_le_bytes()).collect::<Vec<u8>>())
    } else {
        let integers: Option<Vec<i64>> =
            values.iter().map(|v| if let FileValue::Integer(n) = v { Some(*n) } else { None }).collect();
        match integers {
            Some(integers) => ("<i8", integers.iter().flat_map(|n| n.to_le_bytes()).collect()),
            None => ("<f8", values.iter().flat_map(|v| v.as_f64().to_le_bytes()).collect()),
        }
    };
    let zarray = json!({
        "shape": [inputs.len()], "chunks": [inputs.len()], "dtype": dtype, "fill_value": null,
        "compressor": null, "filters": null, "order": "C", "zarr_format": 2,
    });
    Ok((inputs, Combined { zarray, zattrs: Some(zattrs), values: bytes }))
}

/// `dates` (ordered) counted in the coarsest unit that counts each whole,
/// since the first one's midnight: the units text and the values.
fn date_values(dates: &[DateTime]) -> Option<(String, Vec<f64>)> {
    let first = dates.first()?;
    let epoch = format!("{:04}-{:02}-{:02} 00:00:00", first.year, first.month, first.day);
    for unit in ["days", "hours", "minutes", "seconds"] {
        let units = TimeUnits::parse(&format!("{unit} since {epoch}"), Some("standard")).ok()??;
        let values: Option<Vec<f64>> = dates.iter().map(|&date| units.value(date)).collect();
        if let Some(values) = values.filter(|values| values.iter().all(|v| v.fract() == 0.0)) {
            return Some((format!("{unit} since {epoch}"), values));
        }
    }
    None
}

/// Files whose coordinates share their units: ordered by their first
/// values, which are concatenated as written.
fn as_written(
    inputs: Vec<Input>,
    coordinates: Vec<Coordinate>,
    dimension: &str,
) -> Result<(Vec<Input>, Coordinates), CombineError> {
    let error = |name: &str, reason: String| combine_error(name, dimension, reason);
    let mut pairs: Vec<(Input, Coordinate)> = inputs.into_iter().zip(coordinates).collect();
    pairs.sort_by(|a, b| a.1.numbers[0].total_cmp(&b.1.numbers[0]));
    let (inputs, coordinates): (Vec<Input>, Vec<Coordinate>) = pairs.into_iter().unzip();
    for ((pair, input), previous) in coordinates.windows(2).zip(inputs.iter().skip(1)).zip(&inputs) {
        if pair[0].numbers[0].total_cmp(&pair[1].numbers[0]).is_eq() {
            return Err(error(
                &input.name,
                format!("starts at the same value as another file ({})", pair[0].numbers[0]),
            ));
        }
        // Files concatenate in order only if each starts after the one before ends.
        let last = pair[0].numbers[pair[0].numbers.len() - 1];
        if pair[1].numbers[0].total_cmp(&last).is_le() {
            return Err(error(
                &input.name,
                format!(
                    "its values from {} fall within {}'s, which run to {last}: files whose ranges overlap cannot be concatenated",
                    pair[1].numbers[0], previous.name
                ),
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
    options: &CombineOptions,
) -> Result<(Vec<Input>, Coordinates), CombineError> {
    let dimension = options.dimension.as_str();
    let error = |name: &str, reason: String| combine_error(name, dimension, reason);
    refuse_packed_times(&inputs, dimension)?;
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
        // Files concatenate in order only if each starts after the one before ends.
        let last = pair[0].3[pair[0].3.len() - 1];
        if pair[1].3[0] <= last {
            return Err(error(
                &later.0.name,
                format!(
                    "its times from {} fall within {}'s, which run to {last}: files whose ranges overlap cannot be concatenated",
                    pair[1].3[0], pair[0].0.name
                ),
            ));
        }
    }
    let files_calendar = decoded[0].2.calendar();
    let (target, given) = match options.time_units_in(files_calendar.name()) {
        Some((units, text, calendar)) if units.calendar() == files_calendar => (units, Some((text, calendar))),
        Some((_, text, calendar)) => {
            return Err(error(
                &decoded[0].0.name,
                format!("its calendar {files_calendar} differs from {calendar}, asked for with the units {text:?}"),
            ));
        }
        None => (decoded[0].2, None),
    };
    let mut values = Vec::new();
    for (input, _, _, dates) in &decoded {
        for &date in dates {
            values.push(target.value(date).ok_or_else(|| {
                error(
                    &input.name,
                    format!("its time {date} is not a date of the {} calendar written", target.calendar()),
                )
            })?);
        }
    }
    let inputs = decoded.into_iter().map(|(input, ..)| input).collect();
    Ok((inputs, Coordinates::Times { values, units: given }))
}

/// An error if the coordinate along `dimension` is packed: its times would be read as their
/// stored numbers (the packing is the same in every file, which `ordered` checked).
fn refuse_packed_times(inputs: &[Input], dimension: &str) -> Result<(), CombineError> {
    if let Some(attrs) = inputs.first().and_then(|input| attributes(&input.references, dimension))
        && let Some(name) = ["scale_factor", "add_offset"].into_iter().find(|name| attrs.get(name).is_some())
    {
        return Err(combine_error(
            &inputs[0].name,
            dimension,
            format!("its times are packed ({name} {}): they cannot be written again in other units", attrs[name]),
        ));
    }
    Ok(())
}

/// The values of `bytes` as numbers, for ordering files and decoding times;
/// `None` unless the dtype is a numeric one of 1 to 8 bytes, and `bytes`
/// whole values of it.
pub(super) fn numbers(dtype: &str, bytes: &[u8]) -> Option<Vec<f64>> {
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
