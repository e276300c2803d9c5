//! Template 3.1: rotated latitude/longitude. The grid's own latitudes and
//! longitudes are laid out as eccodes lays out a regular grid (stepped by
//! repeated addition from the first point, the last set to the last point
//! as coded), then each point is moved from the rotated sphere, whose south
//! pole is at the coded point, to the geographic one, and rounded as
//! eccodes rounds it ([`to_micro_degrees`]).

use crate::error::GridError;
use crate::section::{Coordinate, degrees, each_point, layout, longitude, points, refuse_scanning};
use crate::section::{signed, unsigned};

pub(super) fn latitude_longitude(grid: &[u8], coordinate: Coordinate, limit: usize) -> Result<Vec<f64>, GridError> {
    let (ni, nj) = points(unsigned(grid, 31, 34)?, unsigned(grid, 35, 38)?, limit)?;
    let (basic, subdivisions) = (unsigned(grid, 39, 42)?, unsigned(grid, 43, 46)?);
    if !matches!(basic, 0 | 0xFFFF_FFFF) || !matches!(subdivisions, 0 | 0xFFFF_FFFF) {
        return Err(layout(format!("angles in units of {basic}/{subdivisions} degrees are not decoded")));
    }
    let (lat1, lon1) = (degrees(signed(grid, 47, 50)?), degrees(longitude(grid, 51, 54)?));
    let (lat2, lon2) = (degrees(signed(grid, 56, 59)?), degrees(longitude(grid, 60, 63)?));
    let dj = degrees(longitude(grid, 68, 71)?);
    let scanning = unsigned(grid, 72, 72)?;
    refuse_scanning(scanning)?;
    let j_positive = scanning & 0x40 != 0;
    let (pole_latitude, pole_longitude) = (degrees(signed(grid, 73, 76)?), degrees(longitude(grid, 77, 80)?));
    let angle = f32::from_bits(u32::try_from(unsigned(grid, 81, 84)?).unwrap_or(0));
    if angle != 0.0 {
        return Err(layout(format!("a rotated grid turned by {angle} degrees is not decoded")));
    }
    // eccodes' regular grid: the longitudes' step from the first and last, going round the globe if need be.
    #[expect(clippy::cast_precision_loss, reason = "point counts are far below 2^53")]
    let di = if ni > 1 { (if lon2 > lon1 { lon2 - lon1 } else { lon2 + 360.0 - lon1 }) / (ni - 1) as f64 } else { 0.0 };
    #[expect(clippy::cast_precision_loss, reason = "point counts are far below 2^53")]
    let start = if ni >= 2 && lon1 + (ni - 2) as f64 * di > 360.0 { lon1 - 360.0 } else { lon1 };
    let mut longitudes: Vec<f64> = std::iter::successors(Some(start), |lon| Some(lon + di)).take(ni).collect();
    if let Some(last) = longitudes.last_mut() {
        *last = if lon2 > 0.0 { lon2.rem_euclid(360.0) } else { lon2 };
    }
    let step = if j_positive { -dj } else { dj };
    let mut latitudes: Vec<f64> = std::iter::successors(Some(lat1), |lat| Some(lat - step)).take(nj).collect();
    if let Some(last) = latitudes.last_mut() {
        *last = lat2;
    }
    let unrotate = Unrotation::new(pole_latitude, pole_longitude);
    each_point((ni, nj), coordinate, |i, j| Ok(unrotate.point(latitudes[j], longitudes[i])))
}

/// The rotation that takes a rotated grid's points to geographic ones: the
/// rotated sphere's point (0, 0) is at (90 + pole latitude, pole longitude).
struct Unrotation {
    sin_tilt: f64,
    cos_tilt: f64,
    sin_turn: f64,
    cos_turn: f64,
}

impl Unrotation {
    fn new(pole_latitude: f64, pole_longitude: f64) -> Self {
        let (sin_tilt, cos_tilt) = (90.0 + pole_latitude).to_radians().sin_cos();
        let (sin_turn, cos_turn) = pole_longitude.to_radians().sin_cos();
        Self { sin_tilt, cos_tilt, sin_turn, cos_turn }
    }

    /// The geographic latitude and longitude (in (-180, 180]) of a rotated point, in degrees.
    fn point(&self, latitude: f64, longitude: f64) -> (f64, f64) {
        let (sin_lat, cos_lat) = latitude.to_radians().sin_cos();
        let (sin_lon, cos_lon) = longitude.to_radians().sin_cos();
        let (x, y, z) = (cos_lat * cos_lon, cos_lat * sin_lon, sin_lat);
        // A turn about the y axis by the pole's tilt, then about the z axis by its longitude.
        let (x, z) = (x * self.cos_tilt - z * self.sin_tilt, x * self.sin_tilt + z * self.cos_tilt);
        let (x, y) = (x * self.cos_turn - y * self.sin_turn, x * self.sin_turn + y * self.cos_turn);
        (to_micro_degrees(z.clamp(-1.0, 1.0).asin().to_degrees()), to_micro_degrees(y.atan2(x).to_degrees()))
    }
}

/// eccodes rounds an unrotated coordinate to micro-degrees through C's
/// `roundf`, in single precision: beyond 16.7 degrees the result is a
/// multiple of 2, 4 or 8 micro-degrees. kerchunk's coordinates are
/// eccodes', so these are rounded the same way.
fn to_micro_degrees(value: f64) -> f64 {
    #[expect(clippy::cast_possible_truncation, reason = "single precision, as roundf takes it")]
    let single = (value * 1e6) as f32;
    f64::from(single.round()) / 1e6
}
