//! The calendars of the CF conventions (section 4.4.1), as day numbers.
//!
//! A date becomes a count of days from a fixed day of its calendar and back,
//! so that "days since" arithmetic is one addition. The Gregorian and Julian
//! calendars share their origin (1970-01-01 Gregorian is day 0), which is how
//! the `standard` calendar switches from one to the other on 1582-10-15.
//! Years are astronomical (year 0 is 1 BC), as cftime counts them in every
//! calendar that has a year zero.

use std::fmt;

/// A CF calendar, named by a time variable's `calendar` attribute.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Calendar {
    /// `standard` or `gregorian` (the default): Julian before 1582-10-15, Gregorian from then.
    Standard,
    /// `proleptic_gregorian`: Gregorian rules for every year.
    ProlepticGregorian,
    /// `julian`: a leap year every 4 years.
    Julian,
    /// `noleap` or `365_day`: no leap years.
    NoLeap,
    /// `all_leap` or `366_day`: every year a leap year.
    AllLeap,
    /// `360_day`: twelve months of 30 days.
    Day360,
}

/// Days before each month in a year of 365 and of 366 days.
const BEFORE_MONTH: [[i64; 13]; 2] = [
    [0, 31, 59, 90, 120, 151, 181, 212, 243, 273, 304, 334, 365],
    [0, 31, 60, 91, 121, 152, 182, 213, 244, 274, 305, 335, 366],
];

/// The day number of 1582-10-15, the first Gregorian day of the standard calendar.
const GREGORIAN_START: i64 = -141_427;

/// Between the Julian and the Gregorian day counts of [`gregorian_days`]'s origin.
const JULIAN_OFFSET: i64 = 719_470;

/// The largest year (either side of year 0) a date may have: far beyond any
/// data, and far from where day numbers would overflow.
pub const MAX_YEAR: i64 = 1_000_000_000;

impl Calendar {
    /// The calendar an attribute names (any case), or `None` for a name CF does not define.
    #[must_use]
    pub fn from_name(name: &str) -> Option<Self> {
        Some(match name.trim().to_ascii_lowercase().as_str() {
            "standard" | "gregorian" => Self::Standard,
            "proleptic_gregorian" => Self::ProlepticGregorian,
            "julian" => Self::Julian,
            "noleap" | "365_day" => Self::NoLeap,
            "all_leap" | "366_day" => Self::AllLeap,
            "360_day" => Self::Day360,
            _ => return None,
        })
    }

    /// The calendar's CF name.
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            Self::Standard => "standard",
            Self::ProlepticGregorian => "proleptic_gregorian",
            Self::Julian => "julian",
            Self::NoLeap => "noleap",
            Self::AllLeap => "all_leap",
            Self::Day360 => "360_day",
        }
    }

    /// The number of days in `month` (1 to 12) of `year`.
    #[must_use]
    pub fn month_length(self, year: i64, month: u32) -> u32 {
        let leap = match self {
            Self::Standard if year < 1582 => year.rem_euclid(4) == 0,
            Self::Standard | Self::ProlepticGregorian => {
                year.rem_euclid(4) == 0 && (year.rem_euclid(100) != 0 || year.rem_euclid(400) == 0)
            }
            Self::Julian => year.rem_euclid(4) == 0,
            Self::NoLeap => false,
            Self::AllLeap => true,
            Self::Day360 => return 30,
        };
        let table = &BEFORE_MONTH[usize::from(leap)];
        let month = month.clamp(1, 12) as usize;
        u32::try_from(table[month] - table[month - 1]).unwrap_or(0)
    }

    /// The day number of a date, or `None` if the calendar has no such date
    /// (a 29 February in `noleap`, 1582-10-10 in `standard`).
    #[must_use]
    pub fn day_number(self, year: i64, month: u32, day: u32) -> Option<i64> {
        let valid = (-MAX_YEAR..=MAX_YEAR).contains(&year) && (1..=12).contains(&month) && day > 0;
        if !valid || day > self.month_length(year, month) {
            return None;
        }
        let (m, d) = (i64::from(month), i64::from(day));
        Some(match self {
            Self::ProlepticGregorian => gregorian_days(year, m, d),
            Self::Julian => julian_days(year, m, d),
            Self::Standard => {
                if (year, month, day) >= (1582, 10, 15) {
                    gregorian_days(year, m, d)
                } else if (year, month, day) < (1582, 10, 5) {
                    julian_days(year, m, d)
                } else {
                    return None;
                }
            }
            Self::NoLeap => year.checked_mul(365)? + BEFORE_MONTH[0][(month - 1) as usize] + d - 1,
            Self::AllLeap => year.checked_mul(366)? + BEFORE_MONTH[1][(month - 1) as usize] + d - 1,
            Self::Day360 => year.checked_mul(360)? + (m - 1) * 30 + d - 1,
        })
    }

    /// The date (year, month, day) of a day number (at most about
    /// [`MAX_YEAR`] years from year 0; further ones wrap).
    #[must_use]
    pub fn date(self, days: i64) -> (i64, u32, u32) {
        match self {
            Self::ProlepticGregorian => gregorian_date(days),
            Self::Standard if days >= GREGORIAN_START => gregorian_date(days),
            Self::Standard | Self::Julian => julian_date(days),
            Self::NoLeap => fixed_year_date(days, 365, &BEFORE_MONTH[0]),
            Self::AllLeap => fixed_year_date(days, 366, &BEFORE_MONTH[1]),
            Self::Day360 => {
                let (year, day_of_year) = (days.div_euclid(360), days.rem_euclid(360));
                #[expect(clippy::cast_possible_truncation, clippy::cast_sign_loss, reason = "in 0..360")]
                (year, (day_of_year / 30 + 1) as u32, (day_of_year % 30 + 1) as u32)
            }
        }
    }
}

impl fmt::Display for Calendar {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Days of a date in years that begin in March (so a leap day ends its year),
/// from the start of its era; and the month and day back from such a count.
fn march_day_of_year(month: i64, day: i64) -> i64 {
    (153 * ((month + 9) % 12) + 2) / 5 + day - 1
}

#[expect(clippy::cast_possible_truncation, clippy::cast_sign_loss, reason = "a day of a year, in 0..366")]
fn month_and_day(day_of_year: i64) -> (u32, u32, bool) {
    let m = (5 * day_of_year + 2) / 153;
    let day = (day_of_year - (153 * m + 2) / 5 + 1) as u32;
    let month = if m < 10 { m + 3 } else { m - 9 } as u32;
    (month, day, month <= 2)
}

/// Days from 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's `days_from_civil`).
fn gregorian_days(year: i64, month: i64, day: i64) -> i64 {
    let year = if month <= 2 { year - 1 } else { year };
    let era = year.div_euclid(400);
    let year_of_era = year - era * 400;
    let day_of_era = year_of_era * 365 + year_of_era / 4 - year_of_era / 100 + march_day_of_year(month, day);
    era * 146_097 + day_of_era - 719_468
}

fn gregorian_date(days: i64) -> (i64, u32, u32) {
    let days = days + 719_468;
    let era = days.div_euclid(146_097);
    let day_of_era = days - era * 146_097;
    let year_of_era = (day_of_era - day_of_era / 1460 + day_of_era / 36_524 - day_of_era / 146_096) / 365;
    let day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
    let (month, day, next_year) = month_and_day(day_of_year);
    (year_of_era + era * 400 + i64::from(next_year), month, day)
}

/// Days of a Julian date, on the Gregorian count's origin: eras of 4 years.
fn julian_days(year: i64, month: i64, day: i64) -> i64 {
    let year = if month <= 2 { year - 1 } else { year };
    let era = year.div_euclid(4);
    era * 1461 + (year - era * 4) * 365 + march_day_of_year(month, day) - JULIAN_OFFSET
}

fn julian_date(days: i64) -> (i64, u32, u32) {
    let days = days + JULIAN_OFFSET;
    let era = days.div_euclid(1461);
    let day_of_era = days - era * 1461;
    // The leap day ends the era's fourth March-based year.
    let year_of_era = (day_of_era / 365).min(3);
    let (month, day, next_year) = month_and_day(day_of_era - year_of_era * 365);
    (era * 4 + year_of_era + i64::from(next_year), month, day)
}

fn fixed_year_date(days: i64, year_length: i64, before_month: &[i64; 13]) -> (i64, u32, u32) {
    let (year, day_of_year) = (days.div_euclid(year_length), days.rem_euclid(year_length));
    let month = before_month.iter().rposition(|&before| before <= day_of_year).unwrap_or(0);
    #[expect(clippy::cast_possible_truncation, clippy::cast_sign_loss, reason = "a month and a day of a month")]
    (year, month as u32 + 1, (day_of_year - before_month[month] + 1) as u32)
}

#[cfg(test)]
mod tests {
    use super::*;

    const ALL: [Calendar; 6] = [
        Calendar::Standard,
        Calendar::ProlepticGregorian,
        Calendar::Julian,
        Calendar::NoLeap,
        Calendar::AllLeap,
        Calendar::Day360,
    ];

    /// Every day of 3000 years, in every calendar, goes to its number and back,
    /// and consecutive dates have consecutive numbers.
    #[test]
    fn dates_and_day_numbers_agree() {
        for calendar in ALL {
            let mut previous: Option<i64> = None;
            for year in -1000..2000 {
                for month in 1..=12 {
                    for day in 1..=calendar.month_length(year, month) {
                        let Some(n) = calendar.day_number(year, month, day) else {
                            assert_eq!((calendar, year, month), (Calendar::Standard, 1582, 10), "{day}");
                            continue;
                        };
                        assert_eq!(calendar.date(n), (year, month, day), "{calendar} {n}");
                        if let Some(p) = previous {
                            assert_eq!(n, p + 1, "{calendar} {year}-{month}-{day}");
                        }
                        previous = Some(n);
                    }
                }
            }
        }
    }

    /// Checked by hand against published tables and cftime's documentation.
    #[test]
    fn known_dates() {
        let g = Calendar::ProlepticGregorian;
        assert_eq!(g.day_number(1970, 1, 1), Some(0));
        assert_eq!(g.day_number(2000, 3, 1), Some(11_017));
        assert_eq!(g.day_number(1800, 1, 1), Some(-62_091));
        // The standard calendar's switch: the day after 1582-10-04 (Julian) is 1582-10-15.
        let s = Calendar::Standard;
        assert_eq!(s.day_number(1582, 10, 4).map(|n| n + 1), s.day_number(1582, 10, 15));
        assert_eq!(s.day_number(1582, 10, 10), None);
        assert_eq!(s.month_length(1500, 2), 29); // Julian rules before the switch
        assert_eq!(g.month_length(1500, 2), 28);
        assert_eq!(g.month_length(2000, 2), 29);
        assert_eq!(g.month_length(1900, 2), 28);
        // Julian 1970-01-01 is Gregorian 1970-01-14.
        assert_eq!(Calendar::Julian.day_number(1970, 1, 1), Some(13));
        assert_eq!(Calendar::NoLeap.day_number(2000, 2, 29), None);
        assert_eq!(Calendar::AllLeap.month_length(2001, 2), 29);
        assert_eq!(Calendar::Day360.date(359), (0, 12, 30));
        assert_eq!(Calendar::Day360.month_length(2001, 2), 30);
        for (name, calendar) in [("GREGORIAN", s), ("365_day", Calendar::NoLeap), ("366_day", Calendar::AllLeap)] {
            assert_eq!(Calendar::from_name(name), Some(calendar));
        }
        assert_eq!(Calendar::from_name("none"), None);
    }

    /// Years so large that day numbers would overflow are not dates.
    #[test]
    fn huge_years_are_not_dates() {
        for calendar in ALL {
            assert_eq!(calendar.day_number(i64::MAX, 1, 1), None);
            assert_eq!(calendar.day_number(i64::MIN, 12, 31), None);
            assert!(calendar.day_number(MAX_YEAR, 1, 1).is_some());
        }
    }
}
