//! CF time coordinates: `units = "<unit> since <date>"` and a calendar turn
//! numbers into dates (CF section 4.4), as cftime and xarray read them.

use std::fmt;

use crate::calendar::Calendar;

const NANOS_PER_SECOND: i128 = 1_000_000_000;
const NANOS_PER_DAY: i128 = 86_400 * NANOS_PER_SECOND;

/// A date and time of day in some calendar (no time zone: CF times are UTC).
/// Ordered as time runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[non_exhaustive]
pub struct DateTime {
    /// The astronomical year (year 0 is 1 BC).
    pub year: i64,
    /// 1 to 12.
    pub month: u32,
    /// 1 to 31.
    pub day: u32,
    /// 0 to 23.
    pub hour: u32,
    /// 0 to 59.
    pub minute: u32,
    /// 0 to 59.
    pub second: u32,
    /// 0 to 999 999 999.
    pub nanosecond: u32,
}

impl DateTime {
    /// Midnight of a date.
    #[must_use]
    pub fn date(year: i64, month: u32, day: u32) -> Self {
        Self { year, month, day, hour: 0, minute: 0, second: 0, nanosecond: 0 }
    }

    /// The date with this time of day.
    #[must_use]
    pub fn at(self, hour: u32, minute: u32, second: u32, nanosecond: u32) -> Self {
        Self { hour, minute, second, nanosecond, ..self }
    }

    /// Nanoseconds since midnight.
    fn nanos_of_day(self) -> i128 {
        ((i128::from(self.hour) * 60 + i128::from(self.minute)) * 60 + i128::from(self.second)) * NANOS_PER_SECOND
            + i128::from(self.nanosecond)
    }

    /// The instant `nanos` nanoseconds after day number `day` began, in `calendar`.
    fn from_nanos(calendar: Calendar, nanos: i128) -> Option<Self> {
        let day = i64::try_from(nanos.div_euclid(NANOS_PER_DAY)).ok()?;
        let of_day = nanos.rem_euclid(NANOS_PER_DAY);
        let (year, month, day) = calendar.date(day);
        let seconds = u32::try_from(of_day / NANOS_PER_SECOND).ok()?;
        let nanosecond = u32::try_from(of_day % NANOS_PER_SECOND).ok()?;
        Some(Self::date(year, month, day).at(seconds / 3600, seconds / 60 % 60, seconds % 60, nanosecond))
    }

    /// Nanoseconds from the start of day number 0 of `calendar`, or `None` if the date is not in it.
    fn to_nanos(self, calendar: Calendar) -> Option<i128> {
        let day = calendar.day_number(self.year, self.month, self.day)?;
        Some(i128::from(day) * NANOS_PER_DAY + self.nanos_of_day())
    }
}

/// ISO 8601: `2013-01-01T06:00:00`, with the fraction of a second when there is one.
impl fmt::Display for DateTime {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{:04}-{:02}-{:02}T{:02}:{:02}:{:02}",
            self.year, self.month, self.day, self.hour, self.minute, self.second
        )?;
        if self.nanosecond > 0 {
            let fraction = format!("{:09}", self.nanosecond);
            write!(f, ".{}", fraction.trim_end_matches('0'))?;
        }
        Ok(())
    }
}

/// How the numbers of a time variable map to dates: `<unit> since <epoch>` in a calendar.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TimeUnits {
    /// Nanoseconds per unit.
    unit: i128,
    /// The epoch, in nanoseconds from day 0 of the calendar (UTC).
    epoch: i128,
    calendar: Calendar,
}

impl TimeUnits {
    /// The time units of a variable with these `units` and `calendar`
    /// attributes: `Ok(None)` if `units` is not of the form `<unit> since
    /// <date>`, an error if it is but cannot be decoded (a unit of variable
    /// length such as `months`, an unknown calendar, a date not in the calendar).
    ///
    /// # Errors
    /// [`TimeUnitsError`], naming what cannot be decoded.
    pub fn parse(units: &str, calendar: Option<&str>) -> Result<Option<Self>, TimeUnitsError> {
        let lower = units.trim().to_ascii_lowercase();
        let Some((unit, since)) = lower.split_once(" since ") else { return Ok(None) };
        let unit = match unit.trim() {
            "days" | "day" | "d" => 86_400 * NANOS_PER_SECOND,
            "hours" | "hour" | "hrs" | "hr" | "h" => 3_600 * NANOS_PER_SECOND,
            "minutes" | "minute" | "mins" | "min" => 60 * NANOS_PER_SECOND,
            "seconds" | "second" | "secs" | "sec" | "s" => NANOS_PER_SECOND,
            "milliseconds" | "millisecond" | "msecs" | "msec" | "ms" => 1_000_000,
            "microseconds" | "microsecond" | "usecs" | "usec" | "us" => 1_000,
            "nanoseconds" | "nanosecond" | "nsecs" | "nsec" | "ns" => 1,
            other => {
                return Err(TimeUnitsError::VariableLength { unit: other.to_owned(), units: units.to_owned() });
            }
        };
        let calendar = match calendar {
            None => Calendar::Standard,
            Some(name) => Calendar::from_name(name).ok_or_else(|| TimeUnitsError::UnknownCalendar(name.to_owned()))?,
        };
        let (epoch, offset_minutes) =
            parse_epoch(since.trim()).ok_or_else(|| TimeUnitsError::NoEpoch(units.to_owned()))?;
        let epoch = epoch
            .to_nanos(calendar)
            .ok_or_else(|| TimeUnitsError::EpochNotInCalendar { units: units.to_owned(), calendar })?;
        let epoch = epoch - i128::from(offset_minutes) * 60 * NANOS_PER_SECOND;
        Ok(Some(Self { unit, epoch, calendar }))
    }

    /// The calendar the dates are in.
    #[must_use]
    pub fn calendar(&self) -> Calendar {
        self.calendar
    }

    /// The date `value` units after the epoch; `None` for a value that is not
    /// finite or lies more than 10^13 days away.
    #[must_use]
    pub fn date(&self, value: f64) -> Option<DateTime> {
        if !value.is_finite() || value.abs() > 1e16 {
            return None;
        }
        // Whole numbers exactly; fractions to the nearest nanosecond.
        #[expect(clippy::cast_possible_truncation, reason = "bounded above, and whole")]
        let offset = if value.fract() == 0.0 {
            (value as i128).checked_mul(self.unit)?
        } else {
            #[expect(clippy::cast_precision_loss, reason = "a unit is at most a day of nanoseconds")]
            let nanos = (value * self.unit as f64).round();
            if nanos.abs() > 1e30 {
                return None;
            }
            nanos as i128
        };
        let nanos = self.epoch.checked_add(offset)?;
        if nanos.abs() / NANOS_PER_DAY > 10_000_000_000_000 {
            return None;
        }
        DateTime::from_nanos(self.calendar, nanos)
    }

    /// The value, in these units, of `date` (for comparing dates with stored
    /// values, and for writing dates in other units); `None` if the date is
    /// not in the calendar. Whole units are exact; a fraction of a unit is
    /// the nearest `f64`.
    #[must_use]
    pub fn value(&self, date: DateTime) -> Option<f64> {
        let nanos = date.to_nanos(self.calendar)? - self.epoch;
        // Whole units and the rest apart: `nanos as f64` alone rounds beyond
        // 2^53 ns (104 days), and the quotient would be off by an ulp.
        let (whole, rest) = (nanos.div_euclid(self.unit), nanos.rem_euclid(self.unit));
        #[expect(
            clippy::cast_precision_loss,
            reason = "whole units round only beyond 2^53 of them; the rest is a fraction"
        )]
        Some(whole as f64 + rest as f64 / self.unit as f64)
    }
}

/// Time units that name a time but cannot be decoded.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum TimeUnitsError {
    /// A unit of variable length (`months`, `years`), which cftime refuses too.
    #[error("time unit {unit:?} in {units:?} is not of fixed length")]
    VariableLength {
        /// The unit, lower case.
        unit: String,
        /// The units, as written.
        units: String,
    },
    /// A calendar that is not one of CF's.
    #[error("calendar {0:?} is not a CF calendar")]
    UnknownCalendar(String),
    /// No date after `since`.
    #[error("{0:?}: no date after since")]
    NoEpoch(String),
    /// An epoch that is not a date of the calendar (February 30th in the standard calendar).
    #[error("the epoch of {units:?} is not a date of the {calendar} calendar")]
    EpochNotInCalendar {
        /// The units, as written.
        units: String,
        /// The calendar.
        calendar: Calendar,
    },
}

/// `YYYY-MM-DD[( |T)hh:mm[:ss[.f]]][ ](Z|UTC|±hh[:mm])`, as udunits writes
/// epochs (months and days may have one digit); the offset in minutes east of UTC.
fn parse_epoch(text: &str) -> Option<(DateTime, i64)> {
    let (date, rest) = text.split_once(['T', 't', ' ']).map_or((text, ""), |(d, r)| (d, r.trim()));
    let (year, month, day) = parse_date(date)?;
    let start = DateTime::date(year, month, day);
    if rest.is_empty() {
        return Some((start, 0));
    }
    // The time, then an optional zone: "Z", "UTC", or a signed offset.
    let zone_at = rest.find(|c: char| c == 'z' || c == 'u' || c == '+' || (c == '-' && !rest.starts_with('-')));
    let (time, zone) = zone_at.map_or((rest, ""), |at| (rest[..at].trim(), rest[at..].trim()));
    let at = if time.is_empty() { start } else { parse_time(start, time)? };
    Some((at, parse_zone(zone)?))
}

/// `YYYY-MM-DD` (one-digit months and days allowed, a leading `-` for years before 1 BC).
fn parse_date(date: &str) -> Option<(i64, u32, u32)> {
    let (sign, body) = date.strip_prefix('-').map_or((1, date), |body| (-1, body));
    let mut parts = body.split('-');
    let year: i64 = parts.next()?.parse().ok()?;
    let month = parts.next().map_or(Some(1), |m| m.parse().ok())?;
    let day = parts.next().map_or(Some(1), |d| d.parse().ok())?;
    parts.next().is_none().then_some((sign * year, month, day))
}

fn parse_time(date: DateTime, time: &str) -> Option<DateTime> {
    let mut parts = time.split(':');
    let hour: u32 = parts.next()?.trim().parse().ok()?;
    let minute: u32 = parts.next().map_or(Some(0), |m| m.trim().parse().ok())?;
    let seconds: f64 = parts.next().map_or(Some(0.0), |s| s.trim().parse().ok())?;
    if parts.next().is_some() || hour > 23 || minute > 59 || !(0.0..60.0).contains(&seconds) {
        return None;
    }
    #[expect(clippy::cast_possible_truncation, clippy::cast_sign_loss, reason = "in 0..60")]
    let (second, nanosecond) = (seconds.trunc() as u32, (seconds.fract() * 1e9).round() as u32);
    Some(date.at(hour, minute, second, nanosecond.min(999_999_999)))
}

fn parse_zone(zone: &str) -> Option<i64> {
    match zone {
        "" | "z" | "utc" => Some(0),
        _ => {
            let (sign, body) = match zone.as_bytes().first()? {
                b'+' => (1, &zone[1..]),
                b'-' => (-1, &zone[1..]),
                _ => return None,
            };
            let (hours, minutes) = match body.split_once(':') {
                Some((h, m)) => (h.parse::<i64>().ok()?, m.parse::<i64>().ok()?),
                None if body.len() == 4 => (body[..2].parse().ok()?, body[2..].parse().ok()?),
                None => (body.parse().ok()?, 0),
            };
            Some(sign * (hours * 60 + minutes))
        }
    }
}

/// The instants a date written in part names, as pandas reads a partial
/// date: `2013` is that year, `2013-01-01` that day, `2013-01-01T06` that
/// hour. Returns the first instant and the first one after; `None` if the text is not a date.
#[must_use]
pub fn period(text: &str, calendar: Calendar) -> Option<(DateTime, DateTime)> {
    let text = text.trim();
    let (date, time) = text.split_once(['T', ' ']).map_or((text, None), |(d, t)| (d, Some(t.trim())));
    let fields = date.trim_start_matches('-').split('-').count();
    let (year, month, day) = parse_date(date)?;
    let start = DateTime::date(year, month, day);
    start.to_nanos(calendar)?;
    let next = |start: DateTime, step_days: i64| -> Option<DateTime> {
        let day = calendar.day_number(start.year, start.month, start.day)?;
        let (y, m, d) = calendar.date(day + step_days);
        Some(DateTime::date(y, m, d))
    };
    let Some(time) = time else {
        let end = match fields {
            1 => DateTime::date(year + 1, 1, 1),
            2 if month == 12 => DateTime::date(year + 1, 1, 1),
            2 => DateTime::date(year, month + 1, 1),
            _ => next(start, 1)?,
        };
        return Some((start, end));
    };
    let at = parse_time(start, time)?;
    let step = match time.split(':').count() {
        1 => 3_600 * NANOS_PER_SECOND,
        2 => 60 * NANOS_PER_SECOND,
        _ => 1,
    };
    let end = DateTime::from_nanos(calendar, at.to_nanos(calendar)? + step)?;
    Some((at, end))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn date(units: &str, calendar: Option<&str>, value: f64) -> String {
        TimeUnits::parse(units, calendar).unwrap().unwrap().date(value).unwrap().to_string()
    }

    /// Each checked by hand (and against cftime's `num2date`).
    #[test]
    fn units_and_calendars() {
        assert_eq!(date("hours since 1800-01-01", Some("standard"), 1_858_344.0), "2012-01-01T00:00:00");
        assert_eq!(date("hours since 1800-1-1 00:00:0.0", None, 1_858_350.0), "2012-01-01T06:00:00");
        assert_eq!(date("days since 1970-01-01", Some("proleptic_gregorian"), 0.5), "1970-01-01T12:00:00");
        assert_eq!(date("seconds since 2000-01-01T00:00:00Z", None, -1.0), "1999-12-31T23:59:59");
        assert_eq!(date("days since 2000-01-01 00:00:00 +06:00", None, 0.0), "1999-12-31T18:00:00");
        assert_eq!(date("days since 2000-01-01", Some("noleap"), 59.0), "2000-03-01T00:00:00");
        assert_eq!(date("days since 2000-01-01", Some("all_leap"), 365.0), "2000-12-31T00:00:00");
        assert_eq!(date("days since 2001-01-01", Some("all_leap"), 59.0), "2001-02-29T00:00:00");
        assert_eq!(date("days since 2000-01-01", Some("360_day"), 59.0), "2000-02-30T00:00:00");
        assert_eq!(date("days since 2000-01-01", Some("julian"), 59.0), "2000-02-29T00:00:00");
        assert_eq!(date("days since 1900-01-01", Some("julian"), 59.0), "1900-02-29T00:00:00");
        assert_eq!(date("days since 1900-01-01", Some("gregorian"), 59.0), "1900-03-01T00:00:00");
        // Across the standard calendar's switch, and the same days proleptically.
        assert_eq!(date("days since 1582-10-04", Some("standard"), 1.0), "1582-10-15T00:00:00");
        assert_eq!(date("days since 1582-10-04", Some("proleptic_gregorian"), 1.0), "1582-10-05T00:00:00");
        assert_eq!(date("milliseconds since 1970-01-01", None, 1_500.0), "1970-01-01T00:00:01.5");
        assert_eq!(date("days since 1-1-1", Some("noleap"), 365.0), "0002-01-01T00:00:00");
    }

    #[test]
    fn what_is_not_a_time() {
        assert_eq!(TimeUnits::parse("K", None), Ok(None));
        assert_eq!(TimeUnits::parse("days", None), Ok(None));
        assert_eq!(
            TimeUnits::parse("months since 2000-01-01", None),
            Err(TimeUnitsError::VariableLength { unit: "months".into(), units: "months since 2000-01-01".into() })
        );
        assert_eq!(
            TimeUnits::parse("days since 2000-01-01", Some("martian")),
            Err(TimeUnitsError::UnknownCalendar("martian".into()))
        );
        assert!(
            TimeUnits::parse("days since 2000-01-01", Some("martian")).unwrap_err().to_string().contains("martian")
        );
        assert!(TimeUnits::parse("days since 2001-02-29", Some("all_leap")).is_ok());
        assert!(TimeUnits::parse("days since 2001-02-29", None).is_err());
        assert!(TimeUnits::parse("days since yesterday", None).is_err());
        assert!(TimeUnits::parse("days since 9223372036854775807-01-01", None).is_err());
        assert!(TimeUnits::parse("ns since -9223372036854775807-1-1 23:59:59.999999999 -99:99", None).is_err());
        let units = TimeUnits::parse("days since 2000-01-01", None).unwrap().unwrap();
        assert_eq!(units.date(f64::NAN), None);
        assert_eq!(units.date(1e300), None);
        assert_eq!(units.value(DateTime::date(2000, 1, 3)), Some(2.0));
    }

    #[test]
    fn partial_dates_are_periods() {
        let s = Calendar::Standard;
        let day = |y, m, d| DateTime::date(y, m, d);
        assert_eq!(period("2013", s), Some((day(2013, 1, 1), day(2014, 1, 1))));
        assert_eq!(period("2013-12", s), Some((day(2013, 12, 1), day(2014, 1, 1))));
        assert_eq!(period("2013-02-28", s), Some((day(2013, 2, 28), day(2013, 3, 1))));
        assert_eq!(period("2013-02-30", Calendar::Day360), Some((day(2013, 2, 30), day(2013, 3, 1))));
        assert_eq!(period("2013-01-01T06", s), Some((day(2013, 1, 1).at(6, 0, 0, 0), day(2013, 1, 1).at(7, 0, 0, 0))));
        assert_eq!(period("2013-02-30", s), None);
        assert_eq!(period("soon", s), None);
    }
}
