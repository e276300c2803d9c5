//! Reading a grid definition section (3): octets, angles, lengths, the figure
//! of the earth, the points and their order.

use crate::error::GridError;

/// Which of a point's coordinates.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Coordinate {
    /// Degrees north.
    Latitude,
    /// Degrees east.
    Longitude,
}

pub(crate) fn layout(reason: impl Into<String>) -> GridError {
    GridError::Layout(reason.into())
}

/// The octets `from..=to` of the section (numbered from 1, as WMO's tables number them).
pub(crate) fn octets(section: &[u8], from: usize, to: usize) -> Result<&[u8], GridError> {
    section
        .get(from.saturating_sub(1)..to)
        .ok_or_else(|| layout(format!("the grid section is {} octets, short of octet {to}", section.len())))
}

/// A GRIB2 unsigned integer of octets `from..=to`.
pub(crate) fn unsigned(section: &[u8], from: usize, to: usize) -> Result<u64, GridError> {
    Ok(octets(section, from, to)?.iter().fold(0u64, |n, &b| (n << 8) | u64::from(b)))
}

/// A GRIB2 signed integer of octets `from..=to`: sign and magnitude, the sign the first bit.
pub(crate) fn signed(section: &[u8], from: usize, to: usize) -> Result<i64, GridError> {
    let bits = u32::try_from(8 * (to + 1 - from)).unwrap_or(64);
    let raw = unsigned(section, from, to)?;
    let sign = 1u64 << (bits - 1);
    let magnitude = i64::try_from(raw & (sign - 1)).unwrap_or(i64::MAX);
    Ok(if raw & sign == 0 { magnitude } else { -magnitude })
}

/// Micro-degrees (GRIB2's unit for angles when the basic angle is 0) in degrees.
pub(crate) fn degrees(micro_degrees: i64) -> f64 {
    #[expect(clippy::cast_precision_loss, reason = "angles are below 2^32 micro-degrees")]
    let value = micro_degrees as f64;
    value / 1e6
}

/// Micro-degrees in radians.
pub(crate) fn radians(micro_degrees: i64) -> f64 {
    degrees(micro_degrees).to_radians()
}

/// An unsigned angle in micro-degrees (a longitude) at `from..=to`.
pub(crate) fn longitude(grid: &[u8], from: usize, to: usize) -> Result<i64, GridError> {
    Ok(i64::try_from(unsigned(grid, from, to)?).unwrap_or(0))
}

/// A length in millimetres (the unit of grid lengths) at `from..=to`, in metres.
pub(crate) fn metres(grid: &[u8], from: usize, to: usize) -> Result<f64, GridError> {
    #[expect(clippy::cast_precision_loss, reason = "millimetres, below 2^32")]
    let value = unsigned(grid, from, to)? as f64;
    Ok(value / 1000.0)
}

/// A longitude in degrees wrapped as eccodes wraps its iterators'
/// (`normalise_longitude_in_degrees`): into [0, 360], 360 kept. One turn at a
/// time, as eccodes, for any longitude a sane grid gives; a damaged grid's
/// far longitudes are brought near first, so that no loop runs for long.
pub(crate) fn within_360(mut longitude: f64) -> f64 {
    if !longitude.is_finite() {
        return f64::NAN;
    }
    if longitude.abs() > 3600.0 {
        longitude = longitude.rem_euclid(360.0);
    }
    while longitude < 0.0 {
        longitude += 360.0;
    }
    while longitude > 360.0 {
        longitude -= 360.0;
    }
    longitude
}

/// The figure of the earth (code table 3.2, octets 15-30).
#[derive(Clone, Copy, Debug)]
pub(crate) enum Earth {
    Sphere { radius: f64 },
    Ellipsoid { major: f64, minor: f64 },
}

impl Earth {
    pub(crate) fn read(grid: &[u8]) -> Result<Self, GridError> {
        let scaled = |scale: usize, value: usize| -> Result<f64, GridError> {
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
    pub(crate) fn eccentricity(major: f64, minor: f64) -> Result<f64, GridError> {
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
pub(crate) fn points(nx: u64, ny: u64, limit: usize) -> Result<(usize, usize), GridError> {
    let (nx, ny) = (usize::try_from(nx).unwrap_or(usize::MAX), usize::try_from(ny).unwrap_or(usize::MAX));
    if nx > limit || ny > limit || nx.checked_mul(ny).is_none_or(|points| points > limit) {
        return Err(GridError::TooLarge { limit });
    }
    Ok((nx, ny))
}

/// The scanning modes whose points these iterators do not order as eccodes does.
pub(crate) fn refuse_scanning(scanning: u64) -> Result<(), GridError> {
    if scanning & 0x80 != 0 || scanning & 0x20 != 0 || scanning & 0x10 != 0 {
        return Err(layout(format!(
            "scanning mode {scanning:#04x} (i negative, j consecutive or rows alternating) is not decoded"
        )));
    }
    Ok(())
}

/// `point(i, j)` for every point, `i` fastest: the `coordinate` of each.
pub(crate) fn each_point(
    (nx, ny): (usize, usize),
    coordinate: Coordinate,
    mut point: impl FnMut(usize, usize) -> Result<(f64, f64), GridError>,
) -> Result<Vec<f64>, GridError> {
    let mut values = Vec::with_capacity(nx * ny);
    for j in 0..ny {
        for i in 0..nx {
            let (latitude, longitude) = point(i, j)?;
            values.push(if coordinate == Coordinate::Latitude { latitude } else { longitude });
        }
    }
    Ok(values)
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

    /// Longitudes into [0, 360] one turn at a time, 360 kept; far ones without a long loop.
    #[test]
    #[expect(clippy::float_cmp, reason = "whole turns added to whole degrees are exact")]
    fn longitudes_wrap_as_eccodes_wraps_them() {
        assert_eq!(super::within_360(-90.0), 270.0);
        assert_eq!(super::within_360(360.0), 360.0);
        assert_eq!(super::within_360(725.0), 5.0);
        assert_eq!(super::within_360(1e300), 1e300_f64.rem_euclid(360.0));
        assert!(super::within_360(f64::INFINITY).is_nan());
    }
}
