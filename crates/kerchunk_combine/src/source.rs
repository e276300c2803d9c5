//! Where the values of the combined coordinate come from: the files' own
//! coordinate arrays, or one value per file from its name or a global
//! attribute (kerchunk's `coo_map` selectors `data:`, `cf:`, a regex and
//! `attr:`).

use std::fmt;
use std::str::FromStr;

use kerchunk::Reference;
use regex::Regex;
use serde_json::Value;
use zarrs_cf::{Calendar, DateTime, period};

use super::held::Keyed;

/// Where the combined coordinate's values come from. Written on the command
/// line as `auto`, `data`, `cf`, `name:REGEX`, `name:REGEX:FORMAT` or
/// `attr:NAME` ([`FromStr`]; [`Display`](fmt::Display) writes the same text).
#[derive(Clone, Debug, Default)]
#[non_exhaustive]
pub enum CoordinateSource {
    /// The files' own coordinate arrays: CF times decoded when their units
    /// differ, the values as written otherwise (the default).
    #[default]
    Auto,
    /// The files' own coordinate arrays, as written: files whose `units` or
    /// `calendar` differ are an error.
    Data,
    /// The files' own coordinate arrays, as CF times: decoded, and written
    /// again as float64 in the units of the first file in time.
    Cf,
    /// One value per file, from its name (the last segment of its URL): the
    /// first capture group of the first match of `pattern`, a number, or a
    /// date read with the strftime-style `format` (`%Y%m%d`).
    Name {
        /// Searched in the file's name; it must have a capture group.
        pattern: Regex,
        /// How the captured text is a date, if it is one.
        format: Option<String>,
    },
    /// One value per file, from a global attribute (the root `.zattrs`): a
    /// number, or text that is an ISO 8601 date (`2020-01-31`, `2020-01-31T06:00`).
    Attribute(String),
}

/// A coordinate source, or time units, that cannot be used for combining.
#[derive(Debug, thiserror::Error)]
#[error("invalid combining option {text:?}: {reason}")]
#[non_exhaustive]
pub struct CombineOptionError {
    /// The text given.
    pub text: String,
    /// Why it cannot be used.
    pub reason: String,
}

impl CombineOptionError {
    /// `text` cannot be used, for `reason`.
    #[must_use]
    pub fn new(text: impl Into<String>, reason: impl Into<String>) -> Self {
        Self { text: text.into(), reason: reason.into() }
    }
}

impl FromStr for CoordinateSource {
    type Err = CombineOptionError;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let error = |reason: &str| CombineOptionError { text: text.to_owned(), reason: reason.to_owned() };
        match text {
            "auto" => return Ok(Self::Auto),
            "data" => return Ok(Self::Data),
            "cf" => return Ok(Self::Cf),
            _ => {}
        }
        if let Some(name) = text.strip_prefix("attr:") {
            return if name.is_empty() {
                Err(error("attr: needs an attribute name"))
            } else {
                Ok(Self::Attribute(name.to_owned()))
            };
        }
        let Some(rest) = text.strip_prefix("name:") else {
            return Err(error("expected data, cf, name:REGEX, name:REGEX:FORMAT or attr:NAME"));
        };
        // A FORMAT has a `%` directive and no regex syntax before it; a regex may hold colons.
        let (pattern, format) = match rest.rsplit_once(':') {
            Some((pattern, format)) if format.contains('%') => (pattern, Some(format.to_owned())),
            _ => (rest, None),
        };
        let pattern = Regex::new(pattern).map_err(|e| error(&e.to_string()))?;
        if pattern.captures_len() < 2 {
            return Err(error("the regex needs a capture group, ( ), around the value"));
        }
        Ok(Self::Name { pattern, format })
    }
}

impl fmt::Display for CoordinateSource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Auto => write!(f, "auto"),
            Self::Data => write!(f, "data"),
            Self::Cf => write!(f, "cf"),
            Self::Name { pattern, format: None } => write!(f, "name:{pattern}"),
            Self::Name { pattern, format: Some(format) } => write!(f, "name:{pattern}:{format}"),
            Self::Attribute(name) => write!(f, "attr:{name}"),
        }
    }
}

/// One file's value of the coordinate, from its name or an attribute.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) enum FileValue {
    /// A number written as a whole number: kept exact (as `f64` it would round past 2^53).
    Integer(i64),
    /// Any other number (finite).
    Float(f64),
    /// A date and time, in the standard calendar.
    Date(DateTime),
}

impl FileValue {
    /// The order of two values: exact between whole numbers and between dates; other numbers
    /// as `f64`. A date and a number (which combining refuses to mix) order by kind.
    pub(super) fn order(&self, other: &Self) -> std::cmp::Ordering {
        match (self, other) {
            (Self::Integer(a), Self::Integer(b)) => a.cmp(b),
            (Self::Date(a), Self::Date(b)) => a.cmp(b),
            (Self::Date(_), _) => std::cmp::Ordering::Greater,
            (_, Self::Date(_)) => std::cmp::Ordering::Less,
            (a, b) => a.as_f64().total_cmp(&b.as_f64()),
        }
    }

    /// A number as `f64` (dates: NaN; only numbers are asked).
    #[expect(clippy::cast_precision_loss, reason = "a whole number beside fractional ones is written as f64")]
    pub(super) fn as_f64(&self) -> f64 {
        match self {
            Self::Integer(value) => *value as f64,
            Self::Float(value) => *value,
            Self::Date(_) => f64::NAN,
        }
    }
}

impl fmt::Display for FileValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Integer(value) => write!(f, "{value}"),
            Self::Float(value) => write!(f, "{value}"),
            Self::Date(date) => write!(f, "{date}"),
        }
    }
}

/// The value `source` (a `Name` or `Attribute` source) gives the file `name`
/// with `references`, or why it gives none.
pub(super) fn file_value(
    source: &CoordinateSource,
    name: &str,
    references: &(impl Keyed + ?Sized),
) -> Result<FileValue, String> {
    match source {
        CoordinateSource::Name { pattern, format } => {
            let file = name.rsplit(['/', '\\']).next().unwrap_or(name);
            let text = pattern
                .captures(file)
                .and_then(|captures| captures.get(1))
                .ok_or_else(|| format!("its name {file:?} does not match {pattern}"))?
                .as_str();
            match format {
                Some(format) => date_from(text, format).map(FileValue::Date),
                None => number_from(text).ok_or_else(|| {
                    format!("{text:?}, from its name, is not a number (a date needs name:REGEX:FORMAT)")
                }),
            }
        }
        CoordinateSource::Attribute(attribute) => {
            let attributes = match references.reference(".zattrs") {
                Some(Reference::Inline(text)) => serde_json::from_slice::<Value>(text).ok(),
                _ => None,
            };
            match attributes.as_ref().and_then(|a| a.get(attribute)) {
                Some(Value::Number(number)) => number
                    .as_i64()
                    .map(FileValue::Integer)
                    .or_else(|| number.as_f64().map(FileValue::Float))
                    .ok_or_else(|| format!("its attribute {attribute} = {number} is not a number this can write")),
                Some(Value::String(text)) => period(text, Calendar::Standard)
                    .map(|(start, _)| FileValue::Date(start))
                    .or_else(|| number_from(text))
                    .ok_or_else(|| format!("its attribute {attribute} = {text:?} is neither a number nor a date")),
                Some(other) => Err(format!("its attribute {attribute} = {other} is neither a number nor a date")),
                None => Err(format!("it has no global attribute {attribute}")),
            }
        }
        CoordinateSource::Auto | CoordinateSource::Data | CoordinateSource::Cf => {
            Err("its coordinate comes from its data, not from one value".into())
        }
    }
}

fn number_from(text: &str) -> Option<FileValue> {
    if let Ok(integer) = text.parse::<i64>() {
        return Some(FileValue::Integer(integer));
    }
    text.parse::<f64>().ok().filter(|v| v.is_finite()).map(FileValue::Float)
}

/// `text` read as a date with the strftime-style `format`: a date and time,
/// or a date alone (midnight).
fn date_from(text: &str, format: &str) -> Result<DateTime, String> {
    use chrono::{Datelike as _, Timelike as _};
    let parsed = chrono::NaiveDateTime::parse_from_str(text, format)
        .or_else(|_| chrono::NaiveDate::parse_from_str(text, format).map(|date| date.and_time(chrono::NaiveTime::MIN)))
        .map_err(|e| format!("{text:?}, from its name, is not a date in the format {format:?} ({e})"))?;
    Ok(DateTime::date(i64::from(parsed.year()), parsed.month(), parsed.day()).at(
        parsed.hour(),
        parsed.minute(),
        parsed.second(),
        parsed.nanosecond(),
    ))
}
