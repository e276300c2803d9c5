//! How files are combined: the dimension, where its values come from, and
//! the units its times are written in.

use zarrs_cf::TimeUnits;

use super::source::{CombineOptionError, CoordinateSource};

/// How [`combine_with`](crate::combine_with) combines files: along
/// `dimension`, its values from a [`CoordinateSource`], times written in
/// the units given or chosen.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct CombineOptions {
    /// The dimension the files are combined along.
    pub dimension: String,
    /// Where its values come from (default: the files' own coordinate arrays).
    pub coordinate: CoordinateSource,
    /// The units and calendar times are written in, as given
    /// ([`with_time_units`](Self::with_time_units)).
    pub(crate) time_units: Option<(String, Option<String>)>,
}

impl CombineOptions {
    /// Along `dimension`, its values from the files' own coordinate arrays,
    /// times (when the files' units differ) in the first file's units.
    #[must_use]
    pub fn new(dimension: impl Into<String>) -> Self {
        Self { dimension: dimension.into(), coordinate: CoordinateSource::Auto, time_units: None }
    }

    /// The coordinate's values from `source`.
    #[must_use]
    pub fn with_coordinate(mut self, source: CoordinateSource) -> Self {
        self.coordinate = source;
        self
    }

    /// Times written in `units` (`hours since 2020-01-01`) and `calendar`
    /// (default: the files' calendar, or `standard` for dates from names
    /// and attributes), rather than in the first file's units or the units
    /// chosen for dates: the coordinate is decoded as CF times even where
    /// every file has the same units.
    ///
    /// # Errors
    /// [`CombineOptionError`] if `units` are not CF time units or the
    /// calendar is not a CF calendar.
    pub fn with_time_units(mut self, units: &str, calendar: Option<&str>) -> Result<Self, CombineOptionError> {
        let error = |reason: String| CombineOptionError { text: units.to_owned(), reason };
        TimeUnits::parse(units, calendar)
            .map_err(|e| error(e.to_string()))?
            .ok_or_else(|| error("not CF time units (<unit> since <date>)".into()))?;
        self.time_units = Some((units.to_owned(), calendar.map(str::to_owned)));
        Ok(self)
    }

    /// The units given, in `calendar` unless one was given: parsed, and as
    /// text with the calendar's name.
    pub(crate) fn time_units_in(&self, calendar: &str) -> Option<(TimeUnits, String, String)> {
        let (units, given) = self.time_units.as_ref()?;
        let calendar = given.as_deref().unwrap_or(calendar);
        let parsed = TimeUnits::parse(units, Some(calendar)).ok()??;
        Some((parsed, units.clone(), parsed.calendar().name().to_owned()))
    }
}
