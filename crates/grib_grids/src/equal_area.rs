//! Template 3.140: Lambert azimuthal equal area (EFAS' ETRS89-LAEA grid),
//! on a sphere (Snyder §24) or an ellipsoid (PROJ's oblique aspect, with the
//! authalic latitude). Unlike the conformal grids, it steps south from the
//! first point where the j scanning bit says so, as eccodes does.

use crate::error::GridError;
use crate::section::{Coordinate, Earth, each_point, layout, longitude, metres, points, radians, refuse_scanning};
use crate::section::{signed, unsigned};

pub(super) fn lambert_azimuthal(grid: &[u8], coordinate: Coordinate, limit: usize) -> Result<Vec<f64>, GridError> {
    let size = points(unsigned(grid, 31, 34)?, unsigned(grid, 35, 38)?, limit)?;
    let (first_latitude, first_longitude) = (radians(signed(grid, 39, 42)?), radians(longitude(grid, 43, 46)?));
    let (phi1, lambda0) = (radians(signed(grid, 47, 50)?), radians(longitude(grid, 51, 54)?));
    let scanning = unsigned(grid, 64, 64)?;
    refuse_scanning(scanning)?;
    let dx = metres(grid, 56, 59)?;
    let dy = if scanning & 0x40 == 0 { -metres(grid, 60, 63)? } else { metres(grid, 60, 63)? };
    match Earth::read(grid)? {
        Earth::Sphere { radius } => {
            let (sin1, cos1) = phi1.sin_cos();
            let (sin, cos) = first_latitude.sin_cos();
            let (sin_d, cos_d) = (first_longitude - lambda0).sin_cos();
            let k = radius * (2.0 / (1.0 + sin1 * sin + cos1 * cos * cos_d)).sqrt();
            let (x0, y0) = (k * cos * sin_d, k * (cos1 * sin - sin1 * cos * cos_d));
            each_point(size, coordinate, |i, j| {
                #[expect(clippy::cast_precision_loss, reason = "point indices are far below 2^53")]
                let (x, y) = (x0 + i as f64 * dx, y0 + j as f64 * dy);
                let rho = x.hypot(y);
                let (latitude, mut longitude) = if rho > 1e-20 {
                    let (sin_c, cos_c) = (2.0 * (rho / (2.0 * radius)).asin()).sin_cos();
                    let latitude = (cos_c * sin1 + y * sin_c * cos1 / rho).asin();
                    (latitude, lambda0 + (x * sin_c).atan2(rho * cos1 * cos_c - y * sin1 * sin_c))
                } else {
                    (phi1, lambda0)
                };
                longitude = longitude.to_degrees();
                if longitude < 0.0 {
                    longitude += 360.0;
                }
                Ok((latitude.to_degrees(), longitude))
            })
        }
        Earth::Ellipsoid { major, minor } => {
            let e = Earth::eccentricity(major, minor)?;
            let authalic = Authalic::new(e, phi1);
            let (sin_b, cos_b) = authalic.beta(first_latitude.sin());
            let (sin_d, cos_d) = (first_longitude - lambda0).sin_cos();
            let b = 1.0 + authalic.sin_b1 * sin_b + authalic.cos_b1 * cos_b * cos_d;
            if b.abs() < 1e-10 {
                return Err(layout("a first point opposite the projection's centre"));
            }
            let b = (2.0 / b).sqrt();
            // In units of the semi-major axis, as PROJ computes.
            let y0 = authalic.rq / authalic.d * b * (authalic.cos_b1 * sin_b - authalic.sin_b1 * cos_b * cos_d);
            let x0 = authalic.rq * authalic.d * b * cos_b * sin_d;
            each_point(size, coordinate, |i, j| {
                #[expect(clippy::cast_precision_loss, reason = "point indices are far below 2^53")]
                let (x, y) = ((x0 + i as f64 * dx / major) / authalic.d, (y0 + j as f64 * dy / major) * authalic.d);
                let rho = x.hypot(y);
                let argument = 0.5 * rho / authalic.rq;
                if rho < 1e-10 || !(-1.0..=1.0).contains(&argument) {
                    return Err(layout(format!("a point outside the projection ({argument} for its arcsine)")));
                }
                let (sin_c, cos_c) = (2.0 * argument.asin()).sin_cos();
                let beta = (cos_c * authalic.sin_b1 + y * sin_c * authalic.cos_b1 / rho).asin();
                let lambda = (x * sin_c).atan2(rho * authalic.cos_b1 * cos_c - y * authalic.sin_b1 * sin_c);
                // eccodes leaves an ellipsoid's longitudes unwrapped.
                Ok((authalic.latitude(beta).to_degrees(), (lambda + lambda0).to_degrees()))
            })
        }
    }
}

/// The authalic sphere of an ellipsoid of eccentricity `e`, centred at latitude `phi1`.
struct Authalic {
    e: f64,
    qp: f64,
    rq: f64,
    sin_b1: f64,
    cos_b1: f64,
    d: f64,
    /// The series of the authalic latitude's inverse (PROJ's `APA`).
    series: [f64; 3],
}

impl Authalic {
    fn new(e: f64, phi1: f64) -> Self {
        let es = e * e;
        let qp = q(e, 1.0);
        let rq = (0.5 * qp).sqrt();
        let sin_b1 = q(e, phi1.sin()) / qp;
        let cos_b1 = (1.0 - sin_b1 * sin_b1).sqrt();
        let d = if cos_b1 == 0.0 { 1.0 } else { phi1.cos() / ((1.0 - es * phi1.sin().powi(2)).sqrt() * rq * cos_b1) };
        let series = [
            es / 3.0 + es * es * 31.0 / 180.0 + es.powi(3) * 517.0 / 5040.0,
            es * es * 23.0 / 360.0 + es.powi(3) * 251.0 / 3780.0,
            es.powi(3) * 761.0 / 45360.0,
        ];
        Self { e, qp, rq, sin_b1, cos_b1, d, series }
    }

    /// The sine and cosine of the authalic latitude of a latitude whose sine is `sin_phi`.
    fn beta(&self, sin_phi: f64) -> (f64, f64) {
        let sin_b = q(self.e, sin_phi) / self.qp;
        (sin_b, (1.0 - sin_b * sin_b).max(0.0).sqrt())
    }

    /// The latitude of an authalic latitude `beta`.
    fn latitude(&self, beta: f64) -> f64 {
        let [a, b, c] = self.series;
        beta + a * (2.0 * beta).sin() + b * (4.0 * beta).sin() + c * (6.0 * beta).sin()
    }
}

/// Snyder's `q` (3-12) of a latitude whose sine is `sin_phi`.
fn q(e: f64, sin_phi: f64) -> f64 {
    if e < 1e-7 {
        return 2.0 * sin_phi;
    }
    let con = e * sin_phi;
    (1.0 - e * e) * (sin_phi / (1.0 - con * con) - (0.5 / e) * ((1.0 - con) / (1.0 + con)).ln())
}
