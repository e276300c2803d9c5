//! Conformal projections: Lambert conformal conic (template 3.30) and
//! Mercator (3.10) on a sphere or an ellipsoid, and polar stereographic
//! (3.20) on a sphere. Snyder, §7 and §14-15 (the ellipsoid's latitude by
//! his iteration 7-9).

use std::f64::consts::{FRAC_PI_2, FRAC_PI_4, PI, TAU};

use crate::error::GridError;
use crate::section::{
    Coordinate, Earth, each_point, layout, longitude, metres, points, radians, refuse_scanning, within_360,
};
use crate::section::{signed, unsigned};

/// A longitude difference brought within ±π.
fn within_pi(mut angle: f64) -> f64 {
    if angle > PI {
        angle -= TAU;
    }
    if angle < -PI {
        angle += TAU;
    }
    angle
}

/// Template 3.30: Lambert conformal conic, one or two standard parallels.
pub(super) fn lambert(grid: &[u8], coordinate: Coordinate, limit: usize) -> Result<Vec<f64>, GridError> {
    let size = points(unsigned(grid, 31, 34)?, unsigned(grid, 35, 38)?, limit)?;
    let first = (radians(signed(grid, 39, 42)?), radians(longitude(grid, 43, 46)?));
    let (lad, lov) = (radians(signed(grid, 48, 51)?), radians(longitude(grid, 52, 55)?));
    let (dx, dy) = (metres(grid, 56, 59)?, metres(grid, 60, 63)?);
    refuse_scanning(unsigned(grid, 65, 65)?)?;
    let parallels = (radians(signed(grid, 66, 69)?), radians(signed(grid, 70, 73)?));
    // eccodes 2.50 steps north and east from the first point whatever the j
    // scanning bit (0x40) says; kerchunk's coordinates are eccodes', so these
    // are too (tests/codecs/grib's lambert_two_parallels scans south).
    let cone = match Earth::read(grid)? {
        Earth::Sphere { radius } => Cone::sphere(radius, parallels, lad)?,
        Earth::Ellipsoid { major, minor } => {
            Cone::ellipsoid(major, Earth::eccentricity(major, minor)?, parallels, lad)?
        }
    };
    let (x0, y0) = cone.forward(first.0, within_pi(first.1 - lov));
    each_point(size, coordinate, |i, j| {
        #[expect(clippy::cast_precision_loss, reason = "point indices are far below 2^53")]
        let (x, y) = (x0 + i as f64 * dx, y0 + j as f64 * dy);
        let (latitude, longitude) = cone.inverse(x, y, lov)?;
        Ok((latitude.to_degrees(), longitude))
    })
}

/// A Lambert cone: its constant `n`, its scale `a·F`, `ρ0` at the latitude
/// of the grid lengths (negative on a sphere where `n` is), and the
/// ellipsoid's eccentricity (0 on a sphere).
struct Cone {
    n: f64,
    scale: f64,
    rho0: f64,
    e: f64,
}

impl Cone {
    fn checked(self) -> Result<Self, GridError> {
        if self.n.is_finite() && self.n != 0.0 && self.scale.is_finite() && self.rho0.is_finite() {
            Ok(self)
        } else {
            Err(layout("standard parallels that make no cone"))
        }
    }

    /// Snyder 15-1 to 15-3 with eccodes' `n` for a single parallel.
    fn sphere(radius: f64, (latin1, latin2): (f64, f64), lad: f64) -> Result<Self, GridError> {
        let n = if (latin1 - latin2).abs() < 1e-9 {
            latin1.sin()
        } else {
            (latin1.cos() / latin2.cos()).ln()
                / ((FRAC_PI_4 + latin2 / 2.0).tan() / (FRAC_PI_4 + latin1 / 2.0).tan()).ln()
        };
        let f = latin1.cos() * (FRAC_PI_4 + latin1 / 2.0).tan().powf(n) / n;
        let rho0 = radius * f * (FRAC_PI_4 + lad / 2.0).tan().powf(-n);
        Self { n, scale: radius * f, rho0: if n < 0.0 { -rho0 } else { rho0 }, e: 0.0 }.checked()
    }

    /// Snyder 15-8 to 15-10 and 14-15 (`m`) and 15-9 (`t`).
    fn ellipsoid(major: f64, e: f64, (latin1, latin2): (f64, f64), lad: f64) -> Result<Self, GridError> {
        let m = |phi: f64| phi.cos() / (1.0 - (e * phi.sin()).powi(2)).sqrt();
        let (m1, m2) = (m(latin1), m(latin2));
        let (t1, t2) = (small_t(e, latin1), small_t(e, latin2));
        let n = if (latin1 - latin2).abs() > 1e-10 { (m1 / m2).ln() / (t1 / t2).ln() } else { latin1.sin() };
        let f = m1 / (n * t1.powf(n));
        Self { n, scale: major * f, rho0: major * f * small_t(e, lad).powf(n), e }.checked()
    }

    /// `ρ` of a latitude.
    fn rho(&self, phi: f64) -> f64 {
        if self.e == 0.0 {
            self.scale * (FRAC_PI_4 + phi / 2.0).tan().powf(-self.n)
        } else {
            self.scale * small_t(self.e, phi).powf(self.n)
        }
    }

    /// The projected point of a latitude and a longitude east of the central meridian.
    fn forward(&self, phi: f64, difference: f64) -> (f64, f64) {
        let rho = if self.e != 0.0 && (phi.abs() - FRAC_PI_2).abs() <= 1e-10 { 0.0 } else { self.rho(phi) };
        let angle = self.n * difference;
        (rho * angle.sin(), self.rho0 - rho * angle.cos())
    }

    /// The latitude (radians) and longitude (degrees, in [0, 360)) of a
    /// projected point, `lov` the central meridian.
    fn inverse(&self, x: f64, y: f64, lov: f64) -> Result<(f64, f64), GridError> {
        let (x, tmp) = if self.n < 0.0 { (-x, y - self.rho0) } else { (x, self.rho0 - y) };
        let mut rho = x.hypot(tmp);
        if self.n < 0.0 {
            rho = -rho;
        }
        let difference = if rho == 0.0 { 0.0 } else { x.atan2(tmp) / self.n };
        let latitude = if self.e == 0.0 {
            2.0 * (self.scale / rho).powf(1.0 / self.n).atan() - FRAC_PI_2
        } else if rho != 0.0 || self.n > 0.0 {
            latitude_of_t(self.e, (rho / self.scale).powf(1.0 / self.n))?
        } else {
            -FRAC_PI_2
        };
        // eccodes' sums: in degrees on a sphere, within ±π on an ellipsoid.
        let longitude = if self.e == 0.0 {
            lov.to_degrees() + difference.to_degrees()
        } else {
            within_pi(difference + lov).to_degrees()
        };
        Ok((latitude, longitude.rem_euclid(360.0)))
    }
}

/// Template 3.10: Mercator, true at latitude `LaD`, as eccodes' iterator
/// computes it: `x` and `y` from the first point, `Di` and `Dj` a step,
/// north and east whatever the j scanning bit says (as for Lambert), the
/// grid's orientation taken as its central meridian, longitudes wrapped
/// into [0, 360]. A row keeps one latitude and a column one longitude.
struct Mercator {
    /// The semi-major axis times the scale along `LaD` (Snyder 7-8's m1).
    scale: f64,
    e: f64,
    orientation: f64,
    /// The first point's `x` and `y`, and the steps.
    origin: (f64, f64),
    steps: (f64, f64),
}

impl Mercator {
    /// The projection, and the grid's columns and rows (at most `limit` points).
    fn read(grid: &[u8], limit: usize) -> Result<(Self, (usize, usize)), GridError> {
        let size = points(unsigned(grid, 31, 34)?, unsigned(grid, 35, 38)?, limit)?;
        let first = (radians(signed(grid, 39, 42)?), radians(signed(grid, 43, 46)?));
        let lad = radians(signed(grid, 48, 51)?);
        refuse_scanning(unsigned(grid, 60, 60)?)?;
        let orientation = radians(longitude(grid, 61, 64)?);
        let steps = (metres(grid, 65, 68)?, metres(grid, 69, 72)?);
        let (major, e) = match Earth::read(grid)? {
            Earth::Sphere { radius } => (radius, 0.0),
            Earth::Ellipsoid { major, minor } => (major, Earth::eccentricity(major, minor)?),
        };
        if (first.0.abs() - FRAC_PI_2).abs() <= 1e-10 {
            return Err(layout("a Mercator grid whose first point is at a pole"));
        }
        let scale = major * lad.cos() / (1.0 - e * e * lad.sin() * lad.sin()).sqrt();
        if !scale.is_normal() {
            return Err(layout(format!("a Mercator grid true at latitude {}", lad.to_degrees())));
        }
        let origin = (scale * within_pi(first.1 - orientation), -scale * small_t(e, first.0).ln());
        Ok((Self { scale, e, orientation, origin, steps }, size))
    }

    /// The latitude of row `j`, in degrees.
    fn latitude(&self, j: usize) -> Result<f64, GridError> {
        #[expect(clippy::cast_precision_loss, reason = "point indices are far below 2^53")]
        let y = self.origin.1 + j as f64 * self.steps.1;
        Ok(latitude_of_t(self.e, (-y / self.scale).exp())?.to_degrees())
    }

    /// The longitude of column `i`, in degrees.
    fn longitude(&self, i: usize) -> f64 {
        #[expect(clippy::cast_precision_loss, reason = "point indices are far below 2^53")]
        let x = self.origin.0 + i as f64 * self.steps.0;
        within_360(within_pi(self.orientation + x / self.scale).to_degrees())
    }
}

/// Template 3.10's points ([`Mercator`]).
pub(super) fn mercator(grid: &[u8], coordinate: Coordinate, limit: usize) -> Result<Vec<f64>, GridError> {
    let (projection, size) = Mercator::read(grid, limit)?;
    each_point(size, coordinate, |i, j| Ok((projection.latitude(j)?, projection.longitude(i))))
}

/// Template 3.10's rows' latitudes and columns' longitudes ([`Mercator`]).
pub(super) fn mercator_axes(grid: &[u8], limit: usize) -> Result<(Vec<f64>, Vec<f64>), GridError> {
    let (projection, (columns, rows)) = Mercator::read(grid, limit)?;
    let latitudes = (0..rows).map(|j| projection.latitude(j)).collect::<Result<_, _>>()?;
    Ok((latitudes, (0..columns).map(|i| projection.longitude(i)).collect()))
}

/// Snyder's `t` (15-9): `tan(π/4 − φ/2) / ((1 − e sin φ)/(1 + e sin φ))^(e/2)`.
fn small_t(e: f64, phi: f64) -> f64 {
    let con = e * phi.sin();
    (0.5 * (FRAC_PI_2 - phi)).tan() / ((1.0 - con) / (1.0 + con)).powf(0.5 * e)
}

/// The latitude whose `t` is `t`, by Snyder's iteration (7-9).
fn latitude_of_t(e: f64, t: f64) -> Result<f64, GridError> {
    let mut phi = FRAC_PI_2 - 2.0 * t.atan();
    for _ in 0..=15 {
        let con = e * phi.sin();
        let next = FRAC_PI_2 - 2.0 * (t * ((1.0 - con) / (1.0 + con)).powf(0.5 * e)).atan();
        let change = next - phi;
        phi = next;
        if change.abs() <= 1e-10 {
            return Ok(phi);
        }
    }
    Err(layout("a latitude that does not converge on the ellipsoid"))
}

/// Template 3.20: polar stereographic, true at latitude `LaD`, on a sphere
/// (eccodes computes no ellipsoid). The pole is the one `LaD`'s sign names.
pub(super) fn polar_stereographic(grid: &[u8], coordinate: Coordinate, limit: usize) -> Result<Vec<f64>, GridError> {
    let size = points(unsigned(grid, 31, 34)?, unsigned(grid, 35, 38)?, limit)?;
    let (first_latitude, first_longitude) = (radians(signed(grid, 39, 42)?), radians(longitude(grid, 43, 46)?));
    let (lad, lov) = (radians(signed(grid, 48, 51)?), radians(longitude(grid, 52, 55)?));
    let (dx, dy) = (metres(grid, 56, 59)?, metres(grid, 60, 63)?);
    refuse_scanning(unsigned(grid, 65, 65)?)?;
    let Earth::Sphere { radius } = Earth::read(grid)? else {
        return Err(layout(
            "polar stereographic on an ellipsoid is not decoded (eccodes computes it on a sphere only)",
        ));
    };
    let sign = if lad < 0.0 { -1.0 } else { 1.0 };
    let at_pole = ((lad.abs()) - FRAC_PI_2).abs() <= 1e-10;
    // ρ = k·t: 2R at the pole, else scaled so that the grid is true at LaD (Snyder 21-33, 21-34).
    let k = if at_pole { 2.0 * radius } else { radius * (sign * lad).cos() / (0.5 * (FRAC_PI_2 - sign * lad)).tan() };
    let rho = (0.5 * (FRAC_PI_2 - sign * first_latitude)).tan() * k;
    let angle = sign * (first_longitude - lov);
    let (x0, y0) = (sign * rho * angle.sin(), -sign * rho * angle.cos());
    each_point(size, coordinate, |i, j| {
        #[expect(clippy::cast_precision_loss, reason = "point indices are far below 2^53")]
        let (x, y) = (sign * (x0 + i as f64 * dx), sign * (y0 + j as f64 * dy));
        let rho = x.hypot(y);
        let latitude = sign * (FRAC_PI_2 - 2.0 * (rho / k).atan());
        let longitude = if rho == 0.0 { sign * lov } else { sign * x.atan2(-y) + lov };
        Ok((latitude.to_degrees(), within_360(longitude.to_degrees())))
    })
}
