//! Selections by coordinate value, as xarray's `sel` makes them: `lat=50`
//! (exact), `lat~50.3` (nearest), `lat=30:50` (every value in the range,
//! ends included), and dates written in part for time coordinates
//! (`time=2013-01-01` is every time of that day).

use std::fmt;
use std::ops::Range;
use std::str::FromStr;

use zarrs_storage::ReadableStorageTraits;

use crate::error::CfError;
use crate::packing::{Decoded, Stored};
use crate::time::{DateTime, TimeUnits, period};
use crate::variable::Variable;

/// One selection on one dimension, parsed from `dim=value`, `dim~value` or `dim=start:end`.
///
/// ```
/// use zarrs_cf::Selection;
/// let selection: Selection = "time=2013-01-01".parse()?;
/// assert_eq!(selection.dim(), "time");
/// assert!("lat".parse::<Selection>().is_err());
/// # Ok::<(), zarrs_cf::CfError>(())
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct Selection {
    dim: String,
    how: How,
    text: String,
}

#[derive(Clone, Debug, PartialEq)]
enum How {
    Exact(String),
    Nearest(String),
    Between(Option<String>, Option<String>),
}

impl Selection {
    /// The dimension it selects on.
    #[must_use]
    pub fn dim(&self) -> &str {
        &self.dim
    }
}

impl FromStr for Selection {
    type Err = CfError;

    fn from_str(text: &str) -> Result<Self, CfError> {
        let error = |reason: &str| CfError::Select { selection: text.to_owned(), reason: reason.to_owned() };
        let at = text.find(['=', '~']).ok_or_else(|| error("write dim=value, dim~value (nearest) or dim=start:end"))?;
        let (dim, value) = (text[..at].trim(), text[at + 1..].trim());
        if dim.is_empty() || value.is_empty() {
            return Err(error("a dimension name and a value are both needed"));
        }
        let how = if text[at..].starts_with('~') {
            How::Nearest(value.to_owned())
        } else if let Some((start, end)) = split_range(value) {
            let bound = |s: &str| (!s.trim().is_empty()).then(|| s.trim().to_owned());
            How::Between(bound(start), bound(end))
        } else {
            How::Exact(value.to_owned())
        };
        Ok(Self { dim: dim.to_owned(), how, text: text.to_owned() })
    }
}

/// `start:end`, where a date's own colons (`2013-01-01T06:00`) are not the separator.
fn split_range(value: &str) -> Option<(&str, &str)> {
    value
        .match_indices(':')
        .map(|(i, _)| i)
        .find(|&i| !is_time_colon(&value[..i], &value[i + 1..]))
        .map(|i| (&value[..i], &value[i + 1..]))
}

/// Whether a colon is inside a time of day: a date and time came before it
/// and two digits (minutes or seconds, not a year) follow it.
fn is_time_colon(before: &str, after: &str) -> bool {
    let digits = after.bytes().take_while(u8::is_ascii_digit).count();
    before.contains(['T', ' ']) && digits == 2 && !after[2..].starts_with('-')
}

impl fmt::Display for Selection {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

/// A coordinate's values, as numbers or dates.
enum Values {
    /// The numbers, and whether they are single precision.
    Numbers(Vec<f64>, bool),
    /// The dates, their time units and the numbers they were decoded from.
    Dates(Vec<Option<DateTime>>, TimeUnits, Vec<f64>),
}

/// The index range of `coordinate` that `selection` picks.
pub(crate) fn resolve<S: ?Sized + ReadableStorageTraits + 'static>(
    selection: &Selection,
    coordinate: &Variable<S>,
) -> Result<Range<u64>, CfError> {
    let error = |reason: String| CfError::Select { selection: selection.text.clone(), reason };
    let whole: Vec<Range<u64>> = std::iter::once(0..coordinate.shape()[0]).collect();
    let numbers: Vec<f64> = coordinate.read(&whole)?.into_iter().collect();
    let values = if let Some(units) = coordinate.time_units() {
        Values::Dates(numbers.iter().map(|&v| units.date(v)).collect(), *units, numbers)
    } else {
        let single =
            matches!(coordinate.decoded_type(), Some(Decoded::Float32 | Decoded::Stored(Stored::Float(2 | 4))));
        Values::Numbers(numbers, single)
    };
    // Each label as the interval of positions it covers: a number is a point, a date a period.
    let interval = |label: &str| -> Result<(Key, Key), CfError> {
        match &values {
            Values::Numbers(_, single) => {
                let value: f64 = label.parse().map_err(|_| error(format!("{label:?} is not a number")))?;
                #[expect(clippy::cast_possible_truncation, reason = "compared as the coordinate stores it")]
                let value = if *single { f64::from(value as f32) } else { value };
                Ok((Key::Number(value), Key::Number(value)))
            }
            Values::Dates(_, units, _) => {
                let calendar = units.calendar();
                let (start, end) = period(label, calendar)
                    .ok_or_else(|| error(format!("{label:?} is not a date of the {calendar} calendar")))?;
                Ok((Key::Date(start), Key::DateBefore(end)))
            }
        }
    };
    let keys: Vec<Option<Key>> = match &values {
        Values::Numbers(numbers, _) => numbers.iter().map(|&v| (!v.is_nan()).then_some(Key::Number(v))).collect(),
        Values::Dates(dates, ..) => dates.iter().map(|d| d.map(Key::Date)).collect(),
    };
    // Nearest by number: a date becomes the number it would be stored as.
    let as_number = |key: &Key| match (key, &values) {
        (Key::Number(n), _) => Some(*n),
        (Key::Date(date), Values::Dates(_, units, _)) => units.value(*date),
        _ => None,
    };
    let stored = match &values {
        Values::Numbers(numbers, _) | Values::Dates(_, _, numbers) => numbers,
    };
    let picked: Vec<usize> = match &selection.how {
        How::Exact(label) => {
            let (low, high) = interval(label)?;
            let picked = inside(&keys, &low, &high);
            if picked.is_empty() {
                let nearest = as_number(&low).and_then(|n| nearest(stored, n)).map_or_else(String::new, |i| {
                    format!(
                        "; the nearest is {} (index {i}): select it with {}~{label}",
                        shown(&values, i),
                        selection.dim
                    )
                });
                return Err(error(format!("no {} is {label}{nearest}", selection.dim)));
            }
            picked
        }
        How::Nearest(label) => {
            let (low, _) = interval(label)?;
            as_number(&low).and_then(|n| nearest(stored, n)).into_iter().collect()
        }
        How::Between(start, end) => {
            let first = start.as_deref().map(interval).transpose()?;
            let last = end.as_deref().map(interval).transpose()?;
            // Either order (a coordinate may run down, latitudes from north to south):
            // whole intervals are swapped, so that a date's period keeps its end.
            let (first, last) = match (first, last) {
                (Some(a), Some(b)) if b.1.is_before(&a.0) => (Some(b), Some(a)),
                other => other,
            };
            let low = first.map_or(Key::Lowest, |(low, _)| low);
            let high = last.map_or(Key::Highest, |(_, high)| high);
            inside(&keys, &low, &high)
        }
    };
    let (Some(&first), Some(&last)) = (picked.first(), picked.last()) else {
        return Err(error(format!("no {} lies in it", selection.dim)));
    };
    if last - first + 1 != picked.len() {
        return Err(error(format!("the values it picks are not contiguous in {}", coordinate.path())));
    }
    Ok(first as u64..last as u64 + 1)
}

/// A position on a coordinate, or a bound of one.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Key {
    Number(f64),
    Date(DateTime),
    /// Just before this date (the end of a period).
    DateBefore(DateTime),
    Lowest,
    Highest,
}

impl Key {
    /// Whether `self` lies strictly before `other`.
    fn is_before(&self, other: &Self) -> bool {
        match (self, other) {
            (Self::Lowest, Self::Lowest) | (Self::Highest, Self::Highest) => false,
            (Self::Lowest, _) | (_, Self::Highest) => true,
            (Self::Number(a), Self::Number(b)) => a < b,
            (Self::Date(a), Self::Date(b) | Self::DateBefore(b)) | (Self::DateBefore(a), Self::DateBefore(b)) => a < b,
            (Self::DateBefore(a), Self::Date(b)) => a <= b,
            // Nothing is before the lowest or after the highest; a number and a
            // date are never compared (one coordinate has one kind).
            _ => false,
        }
    }
}

/// The indices whose key lies in `[low, high]`.
fn inside(keys: &[Option<Key>], low: &Key, high: &Key) -> Vec<usize> {
    keys.iter()
        .enumerate()
        .filter_map(|(i, k)| k.as_ref().filter(|k| !k.is_before(low) && !high.is_before(k)).map(|_| i))
        .collect()
}

/// The index of the value nearest `target` (the first of equals; missing values never).
fn nearest(values: &[f64], target: f64) -> Option<usize> {
    values
        .iter()
        .enumerate()
        .filter(|(_, v)| !v.is_nan())
        .min_by(|a, b| (a.1 - target).abs().total_cmp(&(b.1 - target).abs()))
        .map(|(i, _)| i)
}

fn shown(values: &Values, index: usize) -> String {
    match values {
        Values::Numbers(numbers, _) => numbers[index].to_string(),
        Values::Dates(dates, ..) => dates[index].map_or_else(|| "missing".into(), |d| d.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parsing() {
        let s: Selection = "lat=50".parse().unwrap();
        assert_eq!((s.dim(), &s.how), ("lat", &How::Exact("50".into())));
        let s: Selection = "lon~260.4".parse().unwrap();
        assert_eq!(s.how, How::Nearest("260.4".into()));
        let s: Selection = "lat=30:50".parse().unwrap();
        assert_eq!(s.how, How::Between(Some("30".into()), Some("50".into())));
        let s: Selection = "time=:2013-01-02".parse().unwrap();
        assert_eq!(s.how, How::Between(None, Some("2013-01-02".into())));
        let s: Selection = "time=2013-01-01T06:00".parse().unwrap();
        assert_eq!(s.how, How::Exact("2013-01-01T06:00".into()));
        let s: Selection = "time=2013-01-01T06:00:2013-01-02T12:00".parse().unwrap();
        assert_eq!(s.how, How::Between(Some("2013-01-01T06:00".into()), Some("2013-01-02T12:00".into())));
        for bad in ["lat", "=5", "lat=", "lat~"] {
            assert!(bad.parse::<Selection>().is_err(), "{bad}");
        }
    }

    #[test]
    fn keys_order() {
        let day = |d| Key::Date(DateTime::date(2013, 1, d));
        let end = Key::DateBefore(DateTime::date(2013, 1, 2));
        assert!(day(1).is_before(&end) && !day(2).is_before(&end) && end.is_before(&day(2)));
        let keys = vec![Some(day(1)), Some(Key::Date(DateTime::date(2013, 1, 1).at(18, 0, 0, 0))), Some(day(2))];
        assert_eq!(inside(&keys, &day(1), &end), [0, 1]);
        let numbers: Vec<Option<Key>> = [75.0, 72.5, 70.0].iter().map(|&v| Some(Key::Number(v))).collect();
        assert_eq!(inside(&numbers, &Key::Number(70.0), &Key::Number(72.5)), [1, 2]);
        assert_eq!(nearest(&[75.0, 72.5, f64::NAN, 70.0], 73.0), Some(1));
        assert_eq!(nearest(&[f64::NAN, 1.0], 0.0), Some(1));
        assert_eq!(inside(&numbers, &Key::Lowest, &Key::Highest), [0, 1, 2]);
    }
}
