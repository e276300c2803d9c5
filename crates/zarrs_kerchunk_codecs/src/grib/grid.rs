//! The latitudes and longitudes of a projected grid's points (section 3),
//! which kerchunk references through the codec (`var: latitude` and
//! `longitude`) as eccodes' geo-iterator gives them: Lambert conformal
//! (template 3.30) on a spherical earth, the projection of HRRR and NAM.
//! The formulas are Snyder's (USGS Professional Paper 1395, §15), in the
//! order eccodes evaluates them; agreement is within 1e-9 degrees, not
//! bit for bit (`libm`'s transcendental functions differ in their last bits).

use crate::error::DecodeError;
use crate::grib::message::{Field, signed, unsigned};

/// Which of a point's coordinates.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Coordinate {
    Latitude,
    Longitude,
}

fn layout(reason: impl Into<String>) -> DecodeError {
    DecodeError::Layout(reason.into())
}

/// Micro-degrees (GRIB2's unit for angles when the basic angle is 0) in radians.
fn radians(micro_degrees: i64) -> f64 {
    #[expect(clippy::cast_precision_loss, reason = "angles are below 2^32 micro-degrees")]
    (micro_degrees as f64 / 1e6).to_radians()
}

/// The radius of a spherical earth (code table 3.2), or an error for an ellipsoid.
fn earth_radius(grid: &[u8]) -> Result<f64, DecodeError> {
    Ok(match unsigned(grid, 15, 15)? {
        0 => 6_367_470.0,
        6 => 6_371_229.0,
        8 => 6_371_200.0,
        1 => {
            let scale = i32::try_from(unsigned(grid, 16, 16)?).unwrap_or(0);
            #[expect(clippy::cast_precision_loss, reason = "a radius in metres, far below 2^53")]
            let value = unsigned(grid, 17, 20)? as f64;
            value / 10f64.powi(scale)
        }
        shape => return Err(layout(format!("the shape of the earth {shape} (an ellipsoid) is not decoded yet"))),
    })
}

/// The `coordinate` of every point of the field's grid, in storage order.
pub(crate) fn coordinates(field: &Field<'_>, coordinate: Coordinate, limit: usize) -> Result<Vec<f64>, DecodeError> {
    let grid = field.grid;
    match unsigned(grid, 13, 14)? {
        30 => lambert(grid, coordinate, limit),
        template => Err(layout(format!("the coordinates of grid template 3.{template} are not decoded yet"))),
    }
}

/// Template 3.30: Lambert conformal conic, one or two standard parallels.
fn lambert(grid: &[u8], coordinate: Coordinate, limit: usize) -> Result<Vec<f64>, DecodeError> {
    let nx = usize::try_from(unsigned(grid, 31, 34)?).unwrap_or(usize::MAX);
    let ny = usize::try_from(unsigned(grid, 35, 38)?).unwrap_or(usize::MAX);
    if nx.checked_mul(ny).is_none_or(|points| points > limit) {
        return Err(DecodeError::TooLong { size: limit });
    }
    let radius = earth_radius(grid)?;
    let first_latitude = radians(signed(grid, 39, 42)?);
    let first_longitude = radians(i64::try_from(unsigned(grid, 43, 46)?).unwrap_or(0));
    let lad = radians(signed(grid, 48, 51)?);
    let lov = radians(i64::try_from(unsigned(grid, 52, 55)?).unwrap_or(0));
    #[expect(clippy::cast_precision_loss, reason = "millimetres, below 2^32")]
    let (dx, dy) = (unsigned(grid, 56, 59)? as f64 / 1000.0, unsigned(grid, 60, 63)? as f64 / 1000.0);
    let scanning = unsigned(grid, 65, 65)?;
    let (latin1, latin2) = (radians(signed(grid, 66, 69)?), radians(signed(grid, 70, 73)?));
    if scanning & 0x80 != 0 || scanning & 0x20 != 0 {
        return Err(layout(format!("scanning mode {scanning:#04x} (i negative or j consecutive) is not decoded")));
    }
    // eccodes 2.50 steps north from the first point whether or not the j
    // scanning bit (0x40) is set; kerchunk's coordinates are eccodes', so
    // these are too (tests/codecs/grib's lambert_two_parallels scans south).
    let quarter = std::f64::consts::FRAC_PI_4;
    let n = if (latin1 - latin2).abs() < 1e-9 {
        latin1.sin()
    } else {
        (latin1.cos() / latin2.cos()).ln() / ((quarter + latin2 / 2.0).tan() / (quarter + latin1 / 2.0).tan()).ln()
    };
    if !n.is_finite() || n == 0.0 {
        return Err(layout("standard parallels that make no cone"));
    }
    let f = latin1.cos() * (quarter + latin1 / 2.0).tan().powf(n) / n;
    let rho = radius * f * (quarter + first_latitude / 2.0).tan().powf(-n);
    let mut rho0 = radius * f * (quarter + lad / 2.0).tan().powf(-n);
    if n < 0.0 {
        rho0 = -rho0;
    }
    let mut difference = first_longitude - lov;
    if difference > std::f64::consts::PI {
        difference -= std::f64::consts::TAU;
    }
    if difference < -std::f64::consts::PI {
        difference += std::f64::consts::TAU;
    }
    let angle = n * difference;
    let (x0, y0) = (rho * angle.sin(), rho0 - rho * angle.cos());
    let mut values = Vec::with_capacity(nx * ny);
    for j in 0..ny {
        #[expect(clippy::cast_precision_loss, reason = "point indices are far below 2^53")]
        let y = y0 + j as f64 * dy;
        for i in 0..nx {
            #[expect(clippy::cast_precision_loss, reason = "point indices are far below 2^53")]
            let x = x0 + i as f64 * dx;
            let (x, tmp) = if n < 0.0 { (-x, y - rho0) } else { (x, rho0 - y) };
            let mut rho = (x * x + tmp * tmp).sqrt();
            if n < 0.0 {
                rho = -rho;
            }
            values.push(match coordinate {
                Coordinate::Latitude => {
                    (2.0 * (radius * f / rho).powf(1.0 / n).atan() - std::f64::consts::FRAC_PI_2).to_degrees()
                }
                Coordinate::Longitude => {
                    let longitude = lov.to_degrees() + (x.atan2(tmp) / n).to_degrees();
                    longitude.rem_euclid(360.0)
                }
            });
        }
    }
    Ok(values)
}
