//! The latitudes and longitudes of a GRIB2 grid's points, from its grid
//! definition section (section 3), as eccodes' geo-iterator gives them. The
//! codecs (`zarrs_kerchunk_codecs`) decode the 2-D coordinates kerchunk
//! references through the `grib` codec (`var: latitude`, `longitude`) for
//! the grids cfgrib gives 2-D coordinates ([`coordinates`]); the scanner
//! (`kerchunk_scan`) writes the 1-D coordinates of grids whose rows share a
//! latitude and columns a longitude ([`axes`]).
//!
//! | template | projection | earth | module |
//! |---|---|---|---|
//! | 3.0, 3.40 | regular latitude/longitude and Gaussian (GRIB1's types 0 and 4 too) | any | `regular`, `gaussian` |
//! | 3.40, 3.0 with points per row | reduced Gaussian, global (ECMWF's N and O grids) and sub-areas (as MIR counts their points), and reduced latitude/longitude | any | `reduced` |
//! | 3.1 | rotated latitude/longitude (COSMO, ICON-D2) | any | `rotated` |
//! | 3.10 | Mercator (NOAA's AQM, Hawaii and Puerto Rico products) | sphere or ellipsoid | `conformal` |
//! | 3.20 | polar stereographic (NCEP's Alaska, NDFD) | sphere (eccodes has no ellipsoid) | `conformal` |
//! | 3.30 | Lambert conformal (HRRR, NAM) | sphere or ellipsoid | `conformal` |
//! | 3.140 | Lambert azimuthal equal area (EFAS) | sphere or ellipsoid | `equal_area` |
//! | 3.90 | space view (Meteosat, GOES, Himawari); NaN past the Earth's disk, where eccodes gives 0 | sphere (eccodes has no ellipsoid) | `space_view` |
//! | 3.150 | HEALPix, ring and nested order (ECMWF's H grids), the first rhomboid at 45 degrees east | sphere (eccodes has no ellipsoid) | `healpix` |
//!
//! The formulas are Snyder's (USGS Professional Paper 1395) and PROJ's
//! authalic latitude series, with eccodes' conventions: where the grid
//! starts, which way it steps, how longitudes are wrapped, and how a rotated
//! grid's are rounded. Agreement is within 1e-13 degrees on the test grids
//! (`tests/codecs/grib`), not bit for bit: two libms' transcendental
//! functions differ in their last bits. Other templates are an error naming
//! the template.
//!
//! ```
//! // A section 3 cut short is an error, never a panic.
//! let error = grib_grids::coordinates(&[0; 20], grib_grids::Coordinate::Latitude, 1 << 20).unwrap_err();
//! assert!(matches!(error, grib_grids::GridError::Layout(_)));
//! ```

mod conformal;
mod equal_area;
mod error;
mod gaussian;
mod healpix;
mod reduced;
mod regular;
mod rotated;
mod section;
mod space_view;

pub use error::GridError;
pub use gaussian::{gaussian_latitudes, gaussian_rows};
pub use reduced::points_per_row;
pub use regular::{Regular, Rows};
pub use section::Coordinate;
use section::{layout, unsigned};

/// The `coordinate` of every point of the grid section 3 `grid` defines,
/// in storage order (rows of columns), for at most `limit` points.
///
/// # Errors
///
/// [`GridError::TooLarge`] past `limit` points; [`GridError::Layout`] for a
/// section cut short, or a template, an earth or a scanning mode these
/// iterators do not compute (named).
pub fn coordinates(grid: &[u8], coordinate: Coordinate, limit: usize) -> Result<Vec<f64>, GridError> {
    match unsigned(grid, 13, 14)? {
        // Ni missing: a number of points per row, a reduced grid.
        40 if unsigned(grid, 31, 34)? == 0xFFFF_FFFF => reduced::reduced_gaussian(grid, coordinate, limit),
        0 if unsigned(grid, 31, 34)? == 0xFFFF_FFFF => reduced::reduced_latitude_longitude(grid, coordinate, limit),
        template @ (0 | 40) => {
            let regular = Regular::read(grid, template)?;
            let size = section::points(regular.columns as u64, regular.rows as u64, limit)?;
            let (latitudes, longitudes) = regular.axes()?;
            section::each_point(size, coordinate, |i, j| Ok((latitudes[j], longitudes[i])))
        }
        1 => rotated::latitude_longitude(grid, coordinate, limit),
        10 => conformal::mercator(grid, coordinate, limit),
        20 => conformal::polar_stereographic(grid, coordinate, limit),
        30 => conformal::lambert(grid, coordinate, limit),
        140 => equal_area::lambert_azimuthal(grid, coordinate, limit),
        90 => space_view::space_view(grid, coordinate, limit),
        150 => healpix::healpix(grid, coordinate, limit),
        template => Err(layout(format!("the coordinates of grid template 3.{template} are not decoded yet"))),
    }
}

/// The latitudes of the rows and the longitudes of the columns of a grid
/// whose rows each keep one latitude and columns one longitude: regular
/// latitude/longitude (3.0), regular Gaussian (3.40) and Mercator (3.10), as
/// eccodes' iterator gives them (kerchunk's 1-D coordinates are its first
/// column and first row), where its rows times columns are `points` (the
/// message's number of points; eccodes' iterator refuses another grid too).
///
/// # Errors
///
/// [`GridError::Layout`] for a section cut short, a template whose rows and
/// columns are not one coordinate each (named), rows and columns that are
/// not `points`, or what [`Regular::axes`] refuses; [`GridError::TooLarge`]
/// past `points`.
pub fn axes(grid: &[u8], points: usize) -> Result<(Vec<f64>, Vec<f64>), GridError> {
    let (latitudes, longitudes) = match unsigned(grid, 13, 14)? {
        template @ (0 | 40) => {
            let regular = Regular::read(grid, template)?;
            if regular.columns.checked_mul(regular.rows) != Some(points) {
                return Err(layout(format!(
                    "{} by {} points, not the message's {points}",
                    regular.columns, regular.rows
                )));
            }
            regular.axes()?
        }
        10 => conformal::mercator_axes(grid, points)?,
        template => {
            return Err(layout(format!(
                "grid template 3.{template} has no rows of one latitude and columns of one longitude"
            )));
        }
    };
    if latitudes.len() * longitudes.len() != points {
        return Err(layout(format!("{} by {} points, not the message's {points}", longitudes.len(), latitudes.len())));
    }
    Ok((latitudes, longitudes))
}
