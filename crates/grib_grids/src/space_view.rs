//! Template 3.90: space view, the disk a geostationary satellite's camera
//! sees (Meteosat, GOES, Himawari), as eccodes' iterator computes it
//! (CGMS' LRIT/HRIT Global Specification, 4.4.3.2): on a sphere only, as
//! eccodes (which finds no radius for an ellipsoid), the satellite over the
//! equator, the camera's distance given (`Nr`). A point of the grid that
//! sees past the Earth has no latitude or longitude: NaN here, where eccodes
//! gives 0 and 0, a place on the equator.

use crate::error::GridError;
use crate::section::{Coordinate, Earth, layout, points, signed, unsigned, within_360};

/// The points of a space view grid, rows in eccodes' order (its iterator
/// steps the rows from the last).
pub(super) fn space_view(grid: &[u8], coordinate: Coordinate, limit: usize) -> Result<Vec<f64>, GridError> {
    let (nx, ny) = points(unsigned(grid, 31, 34)?, unsigned(grid, 35, 38)?, limit)?;
    let Earth::Sphere { radius } = Earth::read(grid)? else {
        return Err(layout("a space view grid on an ellipsoid is not decoded (eccodes computes it on a sphere only)"));
    };
    let sub_satellite = (signed(grid, 39, 42)?, signed(grid, 43, 46)?);
    if sub_satellite.0 != 0 {
        return Err(layout("a space view from a satellite off the equator is not decoded (nor by eccodes)"));
    }
    #[expect(clippy::cast_precision_loss, reason = "micro-degrees, below 2^32")]
    let longitude = sub_satellite.1 as f64 / 1e6;
    #[expect(clippy::cast_precision_loss, reason = "grid lengths, below 2^32")]
    let (dx, dy) = (unsigned(grid, 48, 51)? as f64, unsigned(grid, 52, 55)? as f64);
    // The sub-satellite point in grid lengths (coded in thousandths), the camera's distance in
    // Earth radii (coded in millionths; all ones is missing: an orthographic view, not decoded).
    #[expect(clippy::cast_precision_loss, reason = "below 2^32")]
    let (xp, yp) = (unsigned(grid, 56, 59)? as f64 / 1000.0, unsigned(grid, 60, 63)? as f64 / 1000.0);
    let scanning = unsigned(grid, 64, 64)?;
    let nr = unsigned(grid, 69, 72)?;
    if nr == 0xFFFF_FFFF {
        return Err(layout("an orthographic space view (Nr missing) is not decoded (nor by eccodes)"));
    }
    #[expect(clippy::cast_precision_loss, reason = "below 2^32")]
    let nr = nr as f64 / 1e6;
    #[expect(clippy::cast_precision_loss, reason = "grid lengths, below 2^32")]
    let (x0, y0) = (unsigned(grid, 73, 76)? as f64, unsigned(grid, 77, 80)? as f64);
    if nr <= 1.0 || dx == 0.0 || dy == 0.0 {
        return Err(layout(format!("a space view from {nr} Earth radii, {dx} by {dy} grid lengths across")));
    }
    if scanning & 0x20 != 0 || scanning & 0x10 != 0 {
        return Err(layout(format!(
            "scanning mode {scanning:#04x} (j consecutive or rows alternating) is not decoded"
        )));
    }
    // Lengths in kilometres and each step in eccodes' order: near the disk's edge the square
    // root below takes a small difference of large numbers, which another scale rounds otherwise.
    let angular_size = 2.0 * (1.0 / nr).asin();
    let (rx, ry) = (angular_size / dx, angular_size / dy);
    let radius = radius * 0.001;
    #[expect(clippy::cast_precision_loss, reason = "grid sides below 2^32")]
    let (last_x, last_y) = ((nx as f64) - 1.0, (ny as f64) - 1.0);
    let xp = if scanning & 0x80 == 0 { xp - x0 } else { last_x - (xp - x0) };
    let yp = if scanning & 0x40 != 0 { yp - y0 } else { last_y - (yp - y0) };
    let height = nr * radius;
    let factor = height * height - radius * radius;
    let columns: Vec<(f64, f64)> = (0..nx)
        .map(|ix| {
            #[expect(clippy::cast_precision_loss, reason = "grid sides below 2^32")]
            let sin = ((ix as f64 - xp) * rx).sin();
            (sin, (1.0 - sin * sin).sqrt())
        })
        .collect();
    let mut values = Vec::with_capacity(nx * ny);
    for iy in (0..ny).rev() {
        #[expect(clippy::cast_precision_loss, reason = "grid sides below 2^32")]
        let sin_y = ((iy as f64 - yp) * ry).sin();
        let cos_y = (1.0 - sin_y * sin_y).sqrt();
        for &(sin_x, cos_x) in &columns {
            let seen = height * cos_x * cos_y;
            let sd = seen * seen - factor;
            let value = if sd <= 0.0 {
                f64::NAN
            } else {
                let sn = seen - sd.sqrt();
                let s1 = height - sn * cos_x * cos_y;
                let s2 = sn * sin_x * cos_y;
                let s3 = sn * sin_y;
                match coordinate {
                    Coordinate::Latitude => (s3 / (s1 * s1 + s2 * s2).sqrt()).atan().to_degrees(),
                    Coordinate::Longitude => within_360((s2 / s1).atan().to_degrees() + longitude),
                }
            };
            values.push(value);
        }
    }
    Ok(values)
}
