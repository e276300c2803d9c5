//! A CF conventions view of [`zarrs`] arrays: the values a NetCDF variable
//! means, as xarray's `decode_cf` gives them, from Rust.
//!
//! A [`Variable`] is a zarrs array with its attributes read the CF way:
//!
//! | convention | attributes | what the view does |
//! |---|---|---|
//! | packing (CF 8.1) | `scale_factor`, `add_offset` | unpacks to float64, as xarray does |
//! | missing data (CF 2.5.1) | `_FillValue` (Zarr V2: the `fill_value`), `missing_value` | NaN, compared in the decoded type as xarray compares |
//! | valid range | `valid_range`, `valid_min`, `valid_max` | NaN outside it (an option, [`CfOptions`], on by default; xarray does not apply it) |
//! | unsigned bytes (NetCDF-3) | `_Unsigned` | the stored integers read with the other signedness |
//! | time (CF 4.4) | `units = "<unit> since <date>"`, `calendar` | dates ([`DateTime`]) in every CF calendar ([`Calendar`]) |
//! | dimensions and coordinates | `_ARRAY_DIMENSIONS`, Zarr V3 dimension names | [`Variable::dims`], [`Variable::coordinate`], and [`Variable::select`] by value |
//! | auxiliary coordinates (CF 5) | `coordinates` | [`Variable::auxiliary_coordinates`] (a scalar height, 2-D latitudes) |
//! | attributes | all | [`Variable::attributes`] as stored; [`Variable::decoded_attributes`] without what decoding consumed, as xarray's `attrs` |
//!
//! The decoded type ([`Variable::decoded_type`]) is the one xarray picks:
//! packed values become float64; masked small integers and float32 stay
//! float32; masked wider integers float64. [`Variable::read`] returns
//! `f64`, which holds each exactly.
//!
//! ```
//! use std::sync::Arc;
//! use zarrs_cf::{Selection, Variable};
//! # let location = concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/data/cf_air/refs.json");
//! let store = Arc::new(zarrs_kerchunk::ReferenceStore::open(location)?); // kerchunk's air.nc
//! let air = Variable::open(store, "/air")?;                        // int16 packed with scale_factor 0.01
//! assert_eq!(air.dims(), ["time", "lat", "lon"]);
//! let ranges = air.select(&["lat=50".parse::<Selection>()?, "time=2014-10-01".parse()?])?;
//! let kelvin: ndarray::ArrayD<f64> = air.read(&ranges)?;            // 287.9, 286.9, ... (NaN where missing)
//! assert_eq!(kelvin.shape(), [4, 1, 21]);
//! assert!((kelvin[[0, 0, 4]] - 287.9).abs() < 1e-9);
//! let dates = air.coordinate(0).expect("a time coordinate").read_times(&ranges[..1])?;
//! assert_eq!(dates[0].map(|d| d.to_string()), Some("2014-10-01T00:00:00".to_owned()));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! Why not a zarrs codec: the unpacking could be an array-to-array codec,
//! but the one zarrs has (`numcodecs.fixedscaleoffset`) divides where CF
//! multiplies, which gives other bits than xarray (`25820 / 100` is not
//! `25820 * 0.01`), and masking must compare the stored values before any
//! codec changes them. When the multiplying `scale_offset` codec of
//! zarr-extensions lands in zarrs, unpacking can move there; masking and
//! dates stay here.
//!
//! Calendars are computed here (no AGPL code, no C): `standard`/`gregorian`
//! (Julian before 1582-10-15), `proleptic_gregorian`, `julian`,
//! `noleap`/`365_day`, `all_leap`/`366_day` and `360_day`, with units from
//! nanoseconds to days (`months` and `years` are not of fixed length, and
//! are refused as cftime refuses them).

//! | feature | default | what it adds |
//! |---|---|---|
//! | `arrays` | yes | [`Variable`], [`Selection`], [`CfError`], [`Stored`], [`Decoded`]: the view of zarrs arrays. Without it the crate is the calendars and [`TimeUnits`] alone, with neither zarrs nor ndarray |

#![cfg_attr(docsrs, feature(doc_cfg))]

mod calendar;
#[cfg(feature = "arrays")]
mod error;
#[cfg(feature = "arrays")]
mod packing;
#[cfg(feature = "arrays")]
mod select;
mod time;
#[cfg(feature = "arrays")]
mod variable;

pub use calendar::{Calendar, MAX_YEAR};
#[cfg(feature = "arrays")]
pub use error::CfError;
#[cfg(feature = "arrays")]
pub use packing::{Decoded, Stored};
#[cfg(feature = "arrays")]
pub use select::Selection;
pub use time::{DateTime, TimeUnits, TimeUnitsError, period};
#[cfg(feature = "arrays")]
pub use variable::{CfOptions, Variable};
