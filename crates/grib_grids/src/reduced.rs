//! Reduced grids, of a number of points per row (`pl`), as eccodes'
//! iterators lay them out: Gaussian ones (template 3.40: ECMWF's N and
//! octahedral O grids), global ones, row `j` on the `j`-th Gaussian latitude
//! from the north, its `pl[j]` points at `i · 360 / pl[j]` degrees east
//! (sub-areas, which eccodes lays out by two algorithms in turn, are refused,
//! named); and latitude/longitude ones (template 3.0).

use crate::error::GridError;
use crate::gaussian::{MOST_N, gaussian_latitudes};
use crate::section::{Coordinate, layout, signed, unsigned};

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
    let total = pl.iter().try_fold(0usize, |sum, &p| sum.checked_add(p)).unwrap_or(usize::MAX);
    if total > limit {
        return Err(GridError::TooLarge { limit });
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
        return Err(layout("a reduced Gaussian sub-area is not decoded (only global grids)"));
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
