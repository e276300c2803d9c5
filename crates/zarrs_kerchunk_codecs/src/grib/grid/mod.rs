//! The latitudes and longitudes of a projected grid's points (section 3),
//! which kerchunk references through the codec (`var: latitude` and
//! `longitude`) for the grids cfgrib gives 2-D coordinates, as eccodes'
//! geo-iterator gives them:
//!
//! | template | projection | earth | module |
//! |---|---|---|---|
//! | 3.30 | Lambert conformal (HRRR, NAM) | sphere or ellipsoid | [`conformal`] |
//! | 3.20 | polar stereographic (NCEP's Alaska, NDFD) | sphere (eccodes has no ellipsoid) | [`conformal`] |
//! | 3.140 | Lambert azimuthal equal area (EFAS) | sphere or ellipsoid | [`equal_area`] |
//! | 3.1 | rotated latitude/longitude (COSMO, ICON-D2) | any | [`rotated`] |
//!
//! The formulas are Snyder's (USGS Professional Paper 1395) and PROJ's
//! authalic latitude series, with eccodes' conventions: where the grid
//! starts, which way it steps, how longitudes are wrapped, and how a rotated
//! grid's are rounded. Agreement is within 1e-13 degrees on the test grids
//! (`tests/codecs/grib`), not bit for bit: two libms' transcendental
//! functions differ in their last bits. Albers, rotated Gaussian and the
//! others are an error naming the template.

mod conformal;
mod equal_area;
mod rotated;

use crate::error::DecodeError;
use crate::grib::message::{Field, unsigned};

/// Which of a point's coordinates.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Coordinate {
    Latitude,
    Longitude,
}

fn layout(reason: impl Into<String>) -> DecodeError {
    DecodeError::Layout(reason.into())
}

/// Micro-degrees (GRIB2's unit for angles when the basic angle is 0) in degrees.
fn degrees(micro_degrees: i64) -> f64 {
    #[expect(clippy::cast_precision_loss, reason = "angles are below 2^32 micro-degrees")]
    let value = micro_degrees as f64;
    value / 1e6
}

/// Micro-degrees in radians.
fn radians(micro_degrees: i64) -> f64 {
    degrees(micro_degrees).to_radians()
}

/// An unsigned angle in micro-degrees (a longitude) at `from..=to`.
fn longitude(grid: &[u8], from: usize, to: usize) -> Result<i64, DecodeError> {
    Ok(i64::try_from(unsigned(grid, from, to)?).unwrap_or(0))
}

/// A length in millimetres (the unit of grid lengths) at `from..=to`, in metres.
fn metres(grid: &[u8], from: usize, to: usize) -> Result<f64, DecodeError> {
    #[expect(clippy::cast_precision_loss, reason = "millimetres, below 2^32")]
    let value = unsigned(grid, from, to)? as f64;
    Ok(value / 1000.0)
}

/// The figure of the earth (code table 3.2, octets 15-30).
#[derive(Clone, Copy, Debug)]
enum Earth {
    Sphere { radius: f64 },
    Ellipsoid { major: f64, minor: f64 },
}

impl Earth {
    fn read(grid: &[u8]) -> Result<Self, DecodeError> {
        let scaled = |scale: usize, value: usize| -> Result<f64, DecodeError> {
            let factor = i32::try_from(unsigned(grid, scale, scale)?).unwrap_or(0);
            #[expect(clippy::cast_precision_loss, reason = "a length far below 2^53")]
            let value = unsigned(grid, value, value + 3)? as f64;
            Ok(value / 10f64.powi(factor))
        };
        let ellipsoid = |major: f64, minor: f64| Self::Ellipsoid { major, minor };
        Ok(match unsigned(grid, 15, 15)? {
            0 => Self::Sphere { radius: 6_367_470.0 },
            1 => Self::Sphere { radius: scaled(16, 17)? },
            2 => ellipsoid(6_378_160.0, 6_356_775.0),
            3 => ellipsoid(scaled(21, 22)? * 1000.0, scaled(26, 27)? * 1000.0),
            4 | 5 => ellipsoid(6_378_137.0, 6_356_752.314),
            6 => Self::Sphere { radius: 6_371_229.0 },
            7 => ellipsoid(scaled(21, 22)?, scaled(26, 27)?),
            8 => Self::Sphere { radius: 6_371_200.0 },
            9 => ellipsoid(6_377_563.396, 6_356_256.909),
            shape => return Err(layout(format!("the shape of the earth {shape} is not decoded"))),
        })
    }

    /// The eccentricity of an ellipsoid, and its semi-major axis.
    fn eccentricity(major: f64, minor: f64) -> Result<f64, DecodeError> {
        let ratio = minor / major;
        let e = (1.0 - ratio * ratio).sqrt();
        if major.is_normal() && e.is_finite() && (0.0..1.0).contains(&e) {
            Ok(e)
        } else {
            Err(layout(format!("an earth of axes {major} and {minor} m")))
        }
    }
}

/// A grid of `nx` by `ny` points, refused past `limit` points, and past
/// `limit` along either side: a grid of no rows would otherwise let its
/// columns (a rotated grid's longitudes) be laid out by the billion.
fn points(nx: u64, ny: u64, limit: usize) -> Result<(usize, usize), DecodeError> {
    let (nx, ny) = (usize::try_from(nx).unwrap_or(usize::MAX), usize::try_from(ny).unwrap_or(usize::MAX));
    if nx > limit || ny > limit || nx.checked_mul(ny).is_none_or(|points| points > limit) {
        return Err(DecodeError::TooLong { size: limit });
    }
    Ok((nx, ny))
}

/// The scanning modes whose points these iterators do not order as eccodes does.
fn refuse_scanning(scanning: u64) -> Result<(), DecodeError> {
    if scanning & 0x80 != 0 || scanning & 0x20 != 0 || scanning & 0x10 != 0 {
        return Err(layout(format!(
            "scanning mode {scanning:#04x} (i negative, j consecutive or rows alternating) is not decoded"
        )));
    }
    Ok(())
}

/// `point(i, j)` for every point, `i` fastest: the `coordinate` of each.
fn each_point(
    (nx, ny): (usize, usize),
    coordinate: Coordinate,
    mut point: impl FnMut(usize, usize) -> Result<(f64, f64), DecodeError>,
) -> Result<Vec<f64>, DecodeError> {
    let mut values = Vec::with_capacity(nx * ny);
    for j in 0..ny {
        for i in 0..nx {
            let (latitude, longitude) = point(i, j)?;
            values.push(if coordinate == Coordinate::Latitude { latitude } else { longitude });
        }
    }
    Ok(values)
}

/// The `coordinate` of every point of the field's grid, in storage order.
pub(crate) fn coordinates(field: &Field<'_>, coordinate: Coordinate, limit: usize) -> Result<Vec<f64>, DecodeError> {
    let grid = field.grid;
    match unsigned(grid, 13, 14)? {
        1 => rotated::latitude_longitude(grid, coordinate, limit),
        20 => conformal::polar_stereographic(grid, coordinate, limit),
        30 => conformal::lambert(grid, coordinate, limit),
        140 => equal_area::lambert_azimuthal(grid, coordinate, limit),
        template => Err(layout(format!("the coordinates of grid template 3.{template} are not decoded yet"))),
    }
}

#[cfg(test)]
mod tests {
    /// A side longer than the chunk is refused even where the other side is 0 (no points).
    #[test]
    fn each_side_is_held_to_the_chunk() {
        assert!(super::points(u64::from(u32::MAX), 0, 100).is_err());
        assert!(super::points(0, u64::from(u32::MAX), 100).is_err());
        assert_eq!(super::points(10, 10, 100).unwrap(), (10, 10));
    }
}
