//! How files are combined: the dimension, where its values come from, and
//! the units its times are written in.

use std::sync::Arc;

use zarrs_cf::TimeUnits;

use super::source::{CombineOptionError, CoordinateSource};

/// Reads the bytes a range reference of a combined file points at:
/// `(the file's name as given to combining, the reference's URL, offset, length)`, `Ok(None)`
/// where it cannot tell. Combining uses it to compare arrays that must be the same in every
/// file when they are held by range references (by their stored bytes).
pub type RangeReader = Arc<dyn Fn(&str, Option<&str>, u64, u64) -> Result<Option<Vec<u8>>, String> + Send + Sync>;

/// How [`combine_with`](crate::combine_with) combines files: along
/// `dimension`, its values from a [`CoordinateSource`], times written in
/// the units given or chosen.
#[derive(Clone)]
#[non_exhaustive]
pub struct CombineOptions {
    /// The dimension the files are combined along.
    pub dimension: String,
    /// Where its values come from (default: the files' own coordinate arrays).
    pub coordinate: CoordinateSource,
    /// The units and calendar times are written in, as given
    /// ([`with_time_units`](Self::with_time_units)).
    pub(crate) time_units: Option<(String, Option<String>)>,
    /// Dimensions outside `dimension`, innermost first, each with the
    /// source of its one value per file ([`then_along`](Self::then_along)).
    pub(crate) outer: Vec<(String, CoordinateSource)>,
    /// How to read range references, to compare arrays that must be the same in every file.
    pub(crate) range_reader: Option<RangeReader>,
    /// Arrays the same in every file, taken once rather than given a new dimension.
    pub(crate) identical: Vec<String>,
}

impl std::fmt::Debug for CombineOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CombineOptions")
            .field("dimension", &self.dimension)
            .field("coordinate", &self.coordinate)
            .field("time_units", &self.time_units)
            .field("outer", &self.outer)
            .field("range_reader", &self.range_reader.as_ref().map(|_| "a reader"))
            .field("identical", &self.identical)
            .finish()
    }
}

impl CombineOptions {
    /// Along `dimension`, its values from the files' own coordinate arrays,
    /// times (when the files' units differ) in the first file's units.
    #[must_use]
    pub fn new(dimension: impl Into<String>) -> Self {
        Self {
            dimension: dimension.into(),
            coordinate: CoordinateSource::Auto,
            time_units: None,
            outer: Vec::new(),
            range_reader: None,
            identical: Vec::new(),
        }
    }

    /// Arrays (by path) that are the same in every file, as kerchunk's `identical_dims`: where
    /// the files gain a new dimension, these are taken once from the first file, after a check
    /// that every file holds the same, instead of gaining it (a static `mask(lat, lon)` beside
    /// the data). Arrays that are coordinates, or that lack a dimension the files are
    /// concatenated along, are taken once and checked already.
    #[must_use]
    pub fn with_identical<I: IntoIterator<Item = S>, S: Into<String>>(mut self, arrays: I) -> Self {
        self.identical.extend(arrays.into_iter().map(Into::into));
        self
    }

    /// Compare the arrays that must be the same in every file by their stored bytes where they
    /// are held by range references, read through `reader` (without one, only inline values are
    /// compared). The same stored bytes are the same values; different ones are taken as
    /// different values, though two codecs could store the same values differently.
    #[must_use]
    pub fn with_range_reader(mut self, reader: RangeReader) -> Self {
        self.range_reader = Some(reader);
        self
    }

    /// Combine along a further dimension, outside the others (time × member:
    /// `CombineOptions::new("time").then_along("member", source)`): the
    /// files are grouped by the value `source` gives each, every group is
    /// combined along the inner dimensions, and the groups along this one,
    /// a new first axis where the arrays lack it. From a file's name or an
    /// attribute, each file gives one value; from the data
    /// ([`CoordinateSource::Auto`], `Data` or `Cf`), each file's coordinate
    /// along the dimension must hold one value, inline (a file with another
    /// number is an error naming it, when combining), and the groups are
    /// ordered by those values as files are along the innermost dimension
    /// (CF times in other units decoded).
    ///
    /// # Errors
    /// [`CombineOptionError`] if the files are combined along `dimension`
    /// already.
    pub fn then_along(
        mut self,
        dimension: impl Into<String>,
        source: CoordinateSource,
    ) -> Result<Self, CombineOptionError> {
        let dimension = dimension.into();
        if dimension == self.dimension || self.outer.iter().any(|(d, _)| *d == dimension) {
            return Err(CombineOptionError {
                text: dimension,
                reason: "the files are combined along it already".into(),
            });
        }
        self.outer.push((dimension, source));
        Ok(self)
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

    /// The units and calendar given with [`with_time_units`](Self::with_time_units).
    #[must_use]
    pub fn time_units(&self) -> Option<(&str, Option<&str>)> {
        self.time_units.as_ref().map(|(units, calendar)| (units.as_str(), calendar.as_deref()))
    }

    /// The dimensions outside [`dimension`](Self::dimension), innermost first, each with its source.
    pub fn outer(&self) -> impl Iterator<Item = (&str, &CoordinateSource)> {
        self.outer.iter().map(|(dimension, source)| (dimension.as_str(), source))
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
