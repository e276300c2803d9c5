//! Regular grids: latitude/longitude (GRIB2 template 3.0, GRIB1 grid type
//! 0) and Gaussian (3.40, GRIB1 type 4), whose rows each keep one latitude
//! and columns one longitude, laid out as eccodes' iterators lay them out.

use crate::error::GridError;
use crate::gaussian::gaussian_rows;
use crate::section::{layout, signed, unsigned};

/// How a regular grid's rows are spaced.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Rows {
    /// A step in degrees (`None`: none coded; the rows are spread evenly
    /// between the first and the last).
    Step(Option<f64>),
    /// On the Gaussian latitudes of this Gaussian number (N).
    Gaussian(usize),
}

/// A regular grid in degrees, whatever edition coded it.
#[derive(Clone, Debug, PartialEq)]
pub struct Regular {
    /// Points along a parallel (Ni).
    pub columns: usize,
    /// Points along a meridian (Nj).
    pub rows: usize,
    /// The first point's latitude and longitude.
    pub first: (f64, f64),
    /// The last point's latitude and longitude.
    pub last: (f64, f64),
    /// The coded column step (eccodes recomputes it from the corners).
    pub column_step: f64,
    /// How the rows are spaced.
    pub row_spacing: Rows,
    /// The scanning mode (flags: i negative 0x80, j positive 0x40, j consecutive 0x20, alternating 0x10).
    pub scanning: u8,
}

impl Regular {
    /// A GRIB2 grid of template 3.0 or 3.40 from its section 3.
    pub(crate) fn read(grid: &[u8], template: u64) -> Result<Self, GridError> {
        let side = |from, to| -> Result<usize, GridError> {
            let value = unsigned(grid, from, to)?;
            if value == 0xFFFF_FFFF {
                return Err(layout("a grid of a varying number of points per row (reduced) is not computed"));
            }
            Ok(usize::try_from(value).unwrap_or(usize::MAX))
        };
        let (basic, subdivisions) = (unsigned(grid, 39, 42)?, unsigned(grid, 43, 46)?);
        if !matches!(basic, 0 | 0xFFFF_FFFF) || !matches!(subdivisions, 0 | 0xFFFF_FFFF) {
            return Err(layout(format!("angles in units of {basic}/{subdivisions} degrees are not computed")));
        }
        #[expect(clippy::cast_precision_loss, reason = "micro-degrees, below 2^32")]
        let degrees = |v: i64| v as f64 / 1e6;
        let coded = unsigned(grid, 68, 71)?;
        let row_spacing = if template == 40 {
            Rows::Gaussian(usize::try_from(coded).unwrap_or(usize::MAX))
        } else {
            Rows::Step((coded != 0xFFFF_FFFF).then(|| degrees(i64::try_from(coded).unwrap_or(0))))
        };
        Ok(Self {
            columns: side(31, 34)?,
            rows: side(35, 38)?,
            first: (degrees(signed(grid, 47, 50)?), degrees(signed(grid, 51, 54)?)),
            last: (degrees(signed(grid, 56, 59)?), degrees(signed(grid, 60, 63)?)),
            column_step: degrees(i64::try_from(unsigned(grid, 64, 67)?).unwrap_or(0)),
            row_spacing,
            scanning: u8::try_from(unsigned(grid, 72, 72)?).unwrap_or(0),
        })
    }

    /// The latitudes of the rows and the longitudes of the columns, as
    /// eccodes' geo-iterator computes them: longitudes stepped one at a time,
    /// the last set to the grid's last; latitudes likewise (or Gaussian).
    ///
    /// # Errors
    ///
    /// [`GridError::Layout`] for a grid of no rows or columns, over 2^24
    /// either way, whose rows and columns are not one axis each (columns
    /// first, alternating rows), or whose Gaussian latitudes are not computed.
    pub fn axes(&self) -> Result<(Vec<f64>, Vec<f64>), GridError> {
        let (ni, nj, mode) = (self.columns, self.rows, self.scanning);
        if ni == 0 || nj == 0 || ni > 1 << 24 || nj > 1 << 24 {
            return Err(layout(format!("a grid of {ni} by {nj} points")));
        }
        let (i_negative, j_positive) = (mode & 0x80 != 0, mode & 0x40 != 0);
        if mode & 0x20 != 0 || mode & 0x10 != 0 {
            return Err(layout(format!(
                "scanning mode {mode:#04x} (j consecutive or rows alternating) is not computed"
            )));
        }
        let ((mut lat1, mut lon1), (lat2, mut lon2)) = (self.first, self.last);
        #[expect(clippy::cast_precision_loss, reason = "grid sides below 2^24")]
        let (columns, rows) = (ni as f64, nj as f64);
        let mut idir = self.column_step;
        if ni > 1 {
            idir = match (i_negative, lon1 > lon2, lon2 > lon1) {
                (true, true, _) => (lon1 - lon2) / (columns - 1.0),
                (true, false, _) => (lon1 + 360.0 - lon2) / (columns - 1.0),
                (false, _, true) => (lon2 - lon1) / (columns - 1.0),
                (false, _, false) => (lon2 + 360.0 - lon1) / (columns - 1.0),
            };
        }
        if i_negative {
            idir = -idir;
        } else if lon1 + (columns - 2.0) * idir > 360.0 {
            lon1 -= 360.0;
        }
        let mut longitudes = Vec::with_capacity(ni);
        for _ in 0..ni {
            longitudes.push(lon1);
            lon1 += idir;
        }
        if lon2 > 0.0 {
            while lon2 > 360.0 {
                lon2 -= 360.0;
            }
        }
        longitudes[ni - 1] = lon2;
        let mut jdir = match self.row_spacing {
            Rows::Gaussian(n) => return Ok((gaussian_rows(n, lat1, nj, j_positive)?, longitudes)),
            Rows::Step(Some(step)) => step,
            // No increment coded: eccodes spreads the rows evenly between the first and the last.
            Rows::Step(None) if nj > 1 => (lat1 - lat2).abs() / (rows - 1.0),
            Rows::Step(None) => return Err(layout("one row and no row step")),
        };
        if j_positive {
            jdir = -jdir;
        }
        let mut latitudes = Vec::with_capacity(nj);
        for _ in 0..nj {
            latitudes.push(lat1);
            lat1 -= jdir;
        }
        latitudes[nj - 1] = lat2;
        Ok((latitudes, longitudes))
    }
}
