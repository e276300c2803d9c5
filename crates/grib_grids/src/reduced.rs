//! Reduced grids, of a number of points per row (`pl`), as eccodes'
//! iterators lay them out: Gaussian ones (template 3.40: ECMWF's N and
//! octahedral O grids), global ones, row `j` on the `j`-th Gaussian latitude
//! from the north, its `pl[j]` points at `i · 360 / pl[j]` degrees east, and
//! sub-areas, each row's points those of the global row within the area's
//! longitudes, counted as MIR and eccodes count them (a sub-area counted by
//! PRODGEN's older rule, which eccodes tries second, is refused, named); and
//! latitude/longitude ones (template 3.0).

use crate::error::GridError;
use crate::gaussian::{MOST_N, gaussian_latitudes};
use crate::section::{Coordinate, layout, signed, unsigned, within_360};

/// A reduced grid's points per row (`pl`): the list after the 72 octets of
/// template 3.40, of octet 11's bytes an entry, where octet 12 says it is
/// one (1: the numbers of points of each row).
///
/// # Errors
///
/// [`GridError::Layout`] for a section cut short, or a list of another kind.
pub fn points_per_row(grid: &[u8]) -> Result<Vec<usize>, GridError> {
    let (width, interpretation) = (unsigned(grid, 11, 11)?, unsigned(grid, 12, 12)?);
    let rows = usize::try_from(unsigned(grid, 35, 38)?).unwrap_or(usize::MAX);
    if width == 0 || width > 4 || interpretation != 1 {
        return Err(layout(format!(
            "a reduced grid whose list of points per row is {width} octets an entry, interpretation {interpretation}"
        )));
    }
    let width = usize::try_from(width).unwrap_or(4);
    let end = rows.checked_mul(width).and_then(|n| n.checked_add(72));
    if end.is_none_or(|end| grid.len() < end) {
        return Err(layout(format!("a list of {rows} points per row past the section's {} octets", grid.len())));
    }
    (0..rows).map(|j| Ok(usize::try_from(unsigned(grid, 73 + j * width, 72 + (j + 1) * width)?).unwrap_or(0))).collect()
}

/// The `coordinate` of every point of a global reduced Gaussian grid, in
/// storage order, for at most `limit` points.
pub(crate) fn reduced_gaussian(grid: &[u8], coordinate: Coordinate, limit: usize) -> Result<Vec<f64>, GridError> {
    let pl = points_per_row(grid)?;
    let n = usize::try_from(unsigned(grid, 68, 71)?).unwrap_or(usize::MAX);
    if n == 0 || n > MOST_N {
        return Err(layout(format!("a Gaussian number {n} (from 1 to {MOST_N} are computed)")));
    }
    if pl.contains(&0) {
        return Err(layout("a reduced grid with a row of no points"));
    }
    let scanning = unsigned(grid, 72, 72)?;
    if scanning != 0 {
        return Err(layout(format!("a reduced Gaussian grid of scanning mode {scanning:#04x} is not decoded")));
    }
    #[expect(clippy::cast_precision_loss, reason = "micro-degrees, below 2^32")]
    let degrees = |v: i64| v as f64 / 1e6;
    let (lat1, mut lon1) = (degrees(signed(grid, 47, 50)?), degrees(signed(grid, 51, 54)?));
    let (lat2, mut lon2) = (degrees(signed(grid, 56, 59)?), degrees(signed(grid, 60, 63)?));
    while lon1 < 0.0 {
        lon1 += 360.0;
    }
    while lon2 < 0.0 {
        lon2 += 360.0;
    }
    let latitudes = gaussian_latitudes(n)?;
    // eccodes' test of a global grid (`is_gaussian_global`), to a micro-degree.
    let most = pl.iter().copied().max().unwrap_or(1);
    #[expect(clippy::cast_precision_loss, reason = "points per row, far below 2^52")]
    let delta = 360.0 / most as f64;
    let row_step = (latitudes[0] - latitudes[1]).abs();
    let global = (lat1 - latitudes[0]).abs() < row_step
        && (lat2 + latitudes[0]).abs() < row_step
        && lon1 == 0.0
        && (lon2 - (360.0 - delta)).abs() - delta <= 1e-6
        && pl.len() == latitudes.len();
    if !global {
        let points = usize::try_from(unsigned(grid, 7, 10)?).unwrap_or(usize::MAX);
        if points > limit {
            return Err(GridError::TooLarge { limit });
        }
        let area = Area { first: signed(grid, 51, 54)?, last: signed(grid, 60, 63)? };
        return sub_area(&pl, &latitudes, lat1, &area, points, coordinate);
    }
    let total = pl.iter().try_fold(0usize, |sum, &p| sum.checked_add(p)).unwrap_or(usize::MAX);
    if total > limit {
        return Err(GridError::TooLarge { limit });
    }
    let mut values = Vec::with_capacity(total);
    for (j, &count) in pl.iter().enumerate() {
        for i in 0..count {
            values.push(match coordinate {
                Coordinate::Latitude => latitudes[j],
                #[expect(clippy::cast_precision_loss, reason = "points per row, far below 2^52")]
                Coordinate::Longitude => (i as f64 * 360.0) / count as f64,
            });
        }
    }
    Ok(values)
}

/// The longitudes of a sub-area's first and last points, in micro-degrees.
struct Area {
    first: i64,
    last: i64,
}

/// A turn in micro-degrees.
const TURN: i128 = 360_000_000;

impl Area {
    /// The points of a row of `count` points round the globe within the
    /// area's longitudes, as MIR counts them in exact fractions: from the
    /// first at or east of the area's first longitude to the last at or west
    /// of its last (east of the first, a turn added), at most `count`; and
    /// the first one's index round the row.
    fn row(&self, count: usize) -> (usize, i128) {
        let turn = |micro: i64| {
            let mut micro = i128::from(micro);
            while micro < 0 {
                micro += TURN;
            }
            micro
        };
        let (west, mut east) = (turn(self.first), turn(self.last));
        while east < west {
            east += TURN;
        }
        let count = i128::try_from(count).unwrap_or(i128::MAX);
        // The indices of the first point at or east of `west` and the last at or west of `east`.
        let first = (west * count + TURN - 1).div_euclid(TURN);
        let last = (east * count).div_euclid(TURN);
        if first > last {
            return (0, first);
        }
        (usize::try_from((last - first + 1).min(count)).unwrap_or(0), first)
    }
}

/// The row of `latitudes` (north to south) a sub-area's first latitude is
/// taken to be, by eccodes' bisection: the first row it meets within a
/// thousandth of a degree, else the row just north of `latitude`.
fn first_row(latitudes: &[f64], latitude: f64) -> usize {
    let (mut north, mut south) = (0, latitudes.len().saturating_sub(1));
    while south - north > 1 {
        let middle = usize::midpoint(north, south);
        if (latitude - latitudes[middle]).abs() < 1e-3 {
            return middle;
        }
        if latitude < latitudes[middle] {
            north = middle;
        } else {
            south = middle;
        }
    }
    north
}

/// The `coordinate` of every point of a reduced Gaussian sub-area whose
/// rows are of `pl` points round the globe, from the row of `latitudes`
/// nearest `first_latitude`, as eccodes' iterator lays them out (longitudes
/// wrapped into [0, 360]); refused unless its rows hold the message's
/// `points`.
fn sub_area(
    pl: &[usize],
    latitudes: &[f64],
    first_latitude: f64,
    area: &Area,
    points: usize,
    coordinate: Coordinate,
) -> Result<Vec<f64>, GridError> {
    let first = first_row(latitudes, first_latitude);
    if first + pl.len() > latitudes.len() {
        return Err(layout(format!(
            "a reduced Gaussian sub-area of {} rows from row {first}, past the grid's {} rows",
            pl.len(),
            latitudes.len()
        )));
    }
    let counted = pl.iter().map(|&count| area.row(count).0).sum::<usize>();
    if counted != points {
        return Err(layout(format!(
            "a reduced Gaussian sub-area whose rows hold {counted} points within its longitudes, not the \
             message's {points} (an area counted by PRODGEN's older rule is not decoded)"
        )));
    }
    let mut values = Vec::with_capacity(points);
    for (j, &count) in pl.iter().enumerate() {
        let (inside, index) = area.row(count);
        #[expect(clippy::cast_precision_loss, reason = "point indices and counts, far below 2^52")]
        let (start, step) = ((index * 360) as f64 / count as f64, 360.0 / count as f64);
        for i in 0..inside {
            #[expect(clippy::cast_precision_loss, reason = "point indices, far below 2^52")]
            let longitude = within_360(start + i as f64 * step);
            values.push(if coordinate == Coordinate::Latitude { latitudes[first + j] } else { longitude });
        }
    }
    Ok(values)
}

/// The `coordinate` of every point of a reduced latitude/longitude grid
/// (template 3.0 with points per row), in storage order, for at most `limit`
/// points, as eccodes' iterator lays them out: rows a latitude step apart
/// from the first, each row's points evenly over the grid's longitudes (all
/// round the globe when the first and last are within two of the widest
/// row's steps of it), rows of no points left out.
pub(crate) fn reduced_latitude_longitude(
    grid: &[u8],
    coordinate: Coordinate,
    limit: usize,
) -> Result<Vec<f64>, GridError> {
    let pl = points_per_row(grid)?;
    let total = pl.iter().try_fold(0usize, |sum, &p| sum.checked_add(p)).unwrap_or(usize::MAX);
    if total > limit {
        return Err(GridError::TooLarge { limit });
    }
    let widest = pl.iter().copied().max().unwrap_or(0);
    if widest == 0 {
        return Err(layout("a reduced grid of no points"));
    }
    let step = unsigned(grid, 68, 71)?;
    if step == 0xFFFF_FFFF {
        return Err(layout("a reduced latitude/longitude grid without a latitude step"));
    }
    #[expect(clippy::cast_precision_loss, reason = "micro-degrees, below 2^32")]
    let degrees = |v: i64| v as f64 / 1e6;
    let (mut latitude, first) = (degrees(signed(grid, 47, 50)?), degrees(signed(grid, 51, 54)?));
    let (last_latitude, last) = (degrees(signed(grid, 56, 59)?), degrees(signed(grid, 60, 63)?));
    #[expect(clippy::cast_precision_loss, reason = "points per row, far below 2^52")]
    let narrowest_step = 360.0 / widest as f64;
    let (span, local) = if 360.0 - (last - first).abs() < 2.0 * narrowest_step {
        (360.0, 0)
    } else if last < first {
        (last + 360.0 - first, 1)
    } else {
        (last - first, 1)
    };
    let mut step = degrees(i64::try_from(step).unwrap_or(0));
    if latitude > last_latitude {
        step = -step;
    }
    let mut values = Vec::with_capacity(total);
    for &count in &pl {
        #[expect(clippy::cast_precision_loss, reason = "points per row, far below 2^52")]
        let increment = span / count.saturating_sub(local).max(1) as f64;
        let mut longitude = first;
        for _ in 0..count {
            values.push(if coordinate == Coordinate::Latitude { latitude } else { longitude });
            longitude += increment;
        }
        latitude += step;
    }
    Ok(values)
}

#[cfg(test)]
mod tests {
    use super::{Area, first_row, sub_area};
    use crate::{Coordinate, GridError};

    /// A row's points within an area: from the first at or east of its first longitude to the last
    /// at or west of its last, across longitude 0 with a turn added.
    #[test]
    fn rows_are_cut_to_the_area() {
        // 20 points a row, 18 degrees apart: 18 ... 90 within 10 ... 100; 306 ... 378 within 300 ... 30.5.
        assert_eq!(Area { first: 10_000_000, last: 100_000_000 }.row(20), (5, 1));
        assert_eq!(Area { first: 300_000_000, last: 30_500_000 }.row(20), (5, 17));
        // Both ends on points; an area narrower than a step holds none.
        assert_eq!(Area { first: 18_000_000, last: 36_000_000 }.row(20), (2, 1));
        assert_eq!(Area { first: 19_000_000, last: 35_000_000 }.row(20).0, 0);
        // A negative first longitude is a turn on; never more points than the row has.
        assert_eq!(Area { first: -90_000_000, last: 260_000_000 }.row(20), (20, 15));
        assert_eq!(Area { first: -90_000_000, last: 270_000_000 }.row(20), (1, 15));
    }

    /// The first row is the one within a thousandth of a degree that the bisection meets.
    #[test]
    fn the_first_row_is_eccodes() {
        let latitudes = [80.0, 60.0, 40.0, 20.0, 0.0, -20.0];
        assert_eq!(first_row(&latitudes, 40.0004), 2);
        assert_eq!(first_row(&latitudes, 39.9996), 2);
        assert_eq!(first_row(&latitudes, 30.0), 2);
    }

    /// An area whose rows do not hold the message's points is refused, saying how many they hold.
    #[test]
    fn an_area_of_another_count_is_refused() {
        let area = Area { first: 10_000_000, last: 100_000_000 };
        let error = sub_area(&[20, 20], &[45.0, 15.0, -15.0, -45.0], 15.0, &area, 11, Coordinate::Latitude);
        let Err(GridError::Layout(reason)) = error else { panic!("{error:?}") };
        assert!(reason.contains("rows hold 10 points within its longitudes, not the message's 11"), "{reason}");
        let latitudes = sub_area(&[20, 20], &[45.0, 15.0, -15.0, -45.0], 15.0, &area, 10, Coordinate::Latitude);
        assert_eq!(latitudes.unwrap(), [[15.0; 5], [-15.0; 5]].concat());
    }
}
