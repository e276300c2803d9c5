//! GRIB edition 1 messages described, as cfgrib (and so kerchunk) names
//! them: the product definition section (1), ECMWF's local part of it, and
//! a regular latitude/longitude grid (section 2), from eccodes' GRIB1 tables.
//!
//! Read: time range indicators 0, 1, 10 (a point in time) and 2 to 5 (a
//! range, its end the step); regular latitude/longitude grids. Another
//! indicator (ECMWF's monthly means, 113...) or grid (Gaussian, rotated,
//! Lambert) is left out, named: where its step or its points are is not
//! read yet.

use std::collections::HashMap;

use serde_json::{Map, Value, json};

use crate::grib::describe::{Description, NameCache, code, epoch_seconds, title};
use crate::grib::keys::Unread;
use crate::grib::tables::{self, Keys, MISSING};
use grib_grids::{Regular, Rows};

/// A GRIB1 message's keys, as eccodes names them.
#[derive(Debug, Default)]
pub(crate) struct Keys1 {
    longs: HashMap<&'static str, i64>,
    step_type: String,
    grid: Option<Regular>,
    grid_type: i64,
    grid_section: Vec<u8>,
}

impl Keys for Keys1 {
    fn long(&self, key: &str) -> Option<i64> {
        self.longs.get(key).copied()
    }
    fn list(&self, key: &str) -> Option<Vec<i64>> {
        self.long(key).map(|v| vec![v])
    }
    fn text(&self, key: &str) -> Option<&str> {
        (key == "stepType").then_some(self.step_type.as_str())
    }
}

/// An unsigned big-endian integer of octets `from..=to` of `section`.
fn unsigned(section: &[u8], from: usize, to: usize) -> Result<i64, String> {
    let bytes = section
        .get(from - 1..to)
        .ok_or_else(|| format!("a section of {} octets, short of octet {to}", section.len()))?;
    Ok(bytes.iter().fold(0i64, |n, &b| (n << 8) | i64::from(b)))
}

/// A GRIB1 signed integer (sign and magnitude).
fn signed(section: &[u8], from: usize, to: usize) -> Result<i64, String> {
    let raw = unsigned(section, from, to)?;
    let sign = 1i64 << (8 * (to + 1 - from) - 1);
    Ok(if raw & sign == 0 { raw } else { -(raw & (sign - 1)) })
}

/// Level types whose octets 11 and 12 are a layer's top and bottom, not one 2-octet level.
const LAYERS: [i64; 12] = [101, 104, 106, 108, 110, 112, 114, 116, 120, 121, 128, 141];

/// Where the sections before the data end in `bytes`, the start of a GRIB1
/// message: the indicator (8 octets), the product definition and, if its
/// flag says so, the grid definition. `Err(need)` where `bytes` stops first:
/// the length of the start that says more (the next section's length).
pub(crate) fn header_end(bytes: &[u8]) -> Result<usize, usize> {
    let length =
        |at: usize| bytes.get(at..at + 3).map(|b| usize::from(b[0]) << 16 | usize::from(b[1]) << 8 | usize::from(b[2]));
    let product = length(8).ok_or(8 + 3_usize)?;
    let flags = *bytes.get(8 + 7).ok_or(8 + 8_usize)?;
    // Three octets of length: the sum cannot overflow.
    let end = 8 + product;
    if flags & 0x80 == 0 {
        return Ok(end);
    }
    Ok(end + length(end).ok_or(end + 3)?)
}

impl Keys1 {
    /// The keys of the GRIB1 message whose header (at least its first
    /// [`header_end`] bytes) is `message`.
    ///
    /// # Errors
    /// [`Unread::Malformed`] for a section past the message,
    /// [`Unread::NotScanned`] for a predefined grid (no grid definition section).
    pub(crate) fn read(message: &[u8]) -> Result<Self, Unread> {
        if message.len() < 8 + 28 || &message[..4] != b"GRIB" || message[7] != 1 {
            return Err("not a GRIB1 message".into());
        }
        let product_length = usize::try_from(unsigned(message, 9, 11)?).unwrap_or(0);
        let product = message
            .get(8..8 + product_length)
            .filter(|p| p.len() >= 28)
            .ok_or("a product definition section past the message")?;
        let mut keys = Self::default();
        let mut set = |key: &'static str, value: i64| {
            keys.longs.insert(key, value);
        };
        for (key, from, to) in [
            ("table2Version", 4, 4),
            ("centre", 5, 5),
            ("generatingProcessIdentifier", 6, 6),
            ("indicatorOfParameter", 9, 9),
            ("indicatorOfTypeOfLevel", 10, 10),
            ("yearOfCentury", 13, 13),
            ("month", 14, 14),
            ("day", 15, 15),
            ("hour", 16, 16),
            ("minute", 17, 17),
            ("unitOfTimeRange", 18, 18),
            ("P1", 19, 19),
            ("P2", 20, 20),
            ("timeRangeIndicator", 21, 21),
            ("centuryOfReferenceTimeOfData", 25, 25),
            ("subCentre", 26, 26),
        ] {
            set(key, unsigned(product, from, to)?);
        }
        let level_type = unsigned(product, 10, 10)?;
        if LAYERS.contains(&level_type) {
            let (top, bottom) = (unsigned(product, 11, 11)?, unsigned(product, 12, 12)?);
            set("topLevel", top);
            set("bottomLevel", bottom);
            set("level", top);
        } else {
            set("level", unsigned(product, 11, 12)?);
        }
        // ECMWF's local definition (octet 41 on): the MARS labelling and, for definition 1, the member.
        if unsigned(product, 5, 5)? == 98 && product.len() >= 45 {
            set("localDefinitionNumber", unsigned(product, 41, 41)?);
            set("marsClass", unsigned(product, 42, 42)?);
            set("marsType", unsigned(product, 43, 43)?);
            set("marsStream", unsigned(product, 44, 45)?);
            if unsigned(product, 41, 41)? == 1 && product.len() >= 51 {
                set("perturbationNumber", unsigned(product, 50, 50)?);
                set("numberOfForecastsInEnsemble", unsigned(product, 51, 51)?);
            }
        }
        if unsigned(product, 8, 8)? & 0x80 != 0 {
            let at = 8 + product_length;
            let length = usize::try_from(unsigned(message.get(at..).unwrap_or_default(), 1, 3)?).unwrap_or(0);
            let grid = message
                .get(at..at + length)
                .filter(|g| g.len() >= 6)
                .ok_or("a grid definition section past the message")?;
            keys.read_grid(grid)?;
        } else {
            return Err(Unread::NotScanned("a predefined grid (no grid definition section) is not scanned".into()));
        }
        Ok(keys)
    }

    fn read_grid(&mut self, grid: &[u8]) -> Result<(), String> {
        self.longs.insert("NV", unsigned(grid, 4, 4)?);
        self.grid_type = unsigned(grid, 6, 6)?;
        self.grid_section = grid.to_vec();
        // Regular latitude/longitude (0) and Gaussian (4) grids; the others are left out, named.
        if self.grid_type != 0 && self.grid_type != 4 {
            return Ok(());
        }
        // Millidegrees; an increment of all ones is missing.
        #[expect(clippy::cast_precision_loss, reason = "millidegrees, below 2^24")]
        let degrees = |v: i64| v as f64 / 1000.0;
        let column_step = unsigned(grid, 24, 25)?;
        let row_step = unsigned(grid, 26, 27)?;
        self.grid = Some(Regular {
            columns: usize::try_from(unsigned(grid, 7, 8)?).unwrap_or(0),
            rows: usize::try_from(unsigned(grid, 9, 10)?).unwrap_or(0),
            first: (degrees(signed(grid, 11, 13)?), degrees(signed(grid, 14, 16)?)),
            last: (degrees(signed(grid, 18, 20)?), degrees(signed(grid, 21, 23)?)),
            column_step: if column_step == 0xFFFF { 0.0 } else { degrees(column_step) },
            // A Gaussian grid codes N, the rows between a pole and the equator, where the row step goes.
            row_spacing: if self.grid_type == 4 {
                Rows::Gaussian(usize::try_from(row_step).unwrap_or(0))
            } else {
                Rows::Step((row_step != 0xFFFF).then(|| degrees(row_step)))
            },
            scanning: u8::try_from(unsigned(grid, 28, 28)?).unwrap_or(0),
        });
        self.longs.insert("resolutionAndComponentFlags", unsigned(grid, 17, 17)?);
        Ok(())
    }

    fn get(&self, key: &str) -> i64 {
        self.long(key).unwrap_or(MISSING)
    }
}

/// Seconds in one unit of GRIB1's code table 4, for the units a step can be counted in without a calendar.
fn unit_seconds(unit: i64) -> Option<i64> {
    Some(match unit {
        0 => 60,
        1 => 3600,
        2 => 86_400,
        10 => 3 * 3600,
        11 => 6 * 3600,
        12 => 12 * 3600,
        13 => 900,
        14 => 1800,
        254 => 1,
        _ => return None,
    })
}

/// The end of the step, in units of `unitOfTimeRange`, by the time range indicator.
fn end_step(keys: &Keys1) -> Result<i64, String> {
    let (p1, p2) = (keys.get("P1"), keys.get("P2"));
    Ok(match keys.get("timeRangeIndicator") {
        0 | 1 => p1,
        10 => p1 * 256 + p2,
        2..=5 => p2,
        other => return Err(format!("GRIB1 time range indicator {other} is not scanned yet")),
    })
}

/// Describes the GRIB1 message whose keys are `keys`, its step type evaluated first.
///
/// # Errors
/// A grid, a time range or a time unit not scanned yet, or a reference
/// date that is no date.
pub(crate) fn describe(mut keys: Keys1, cache: &mut NameCache) -> Result<(Description, Regular), String> {
    let centre_code = keys.get("centre");
    let (centre, centre_description) = code("common/c-11.table", centre_code).unwrap_or(("unknown", "unknown"));
    let centre_description = title(centre_description);
    let step_type = tables::evaluate(
        &[format!("grib1/localConcepts/{centre}/stepType.def"), "grib1/stepType.def".to_owned()],
        &keys,
    )
    .map_or_else(|| keys.get("timeRangeIndicator").to_string(), str::to_owned);
    keys.step_type = step_type;
    let grid = keys.grid.take().ok_or_else(|| {
        format!("GRIB1 grid type {} (only regular latitude/longitude and Gaussian) is not scanned yet", keys.grid_type)
    })?;
    let grid_type = if keys.grid_type == 4 { "regular_gg" } else { "regular_ll" };
    let names = cache.names(&keys, centre, 1);
    let unit = unit_seconds(keys.get("unitOfTimeRange")).ok_or_else(|| {
        format!("a GRIB1 time unit {} (months, years...) is not scanned", keys.get("unitOfTimeRange"))
    })?;
    let year = (keys.get("centuryOfReferenceTimeOfData") - 1) * 100 + keys.get("yearOfCentury");
    let time = epoch_seconds(year, keys.get("month"), keys.get("day"), keys.get("hour"), keys.get("minute"))?;

    let mut attributes = Map::new();
    let mut put = |key: &str, value: Value| {
        attributes.insert(format!("GRIB_{key}"), value);
    };
    put("paramId", json!(names.param_id.parse::<i64>().unwrap_or(0)));
    if let Some((data_type, _)) = keys.long("marsType").and_then(|t| code("mars/type.table", t)) {
        put("dataType", json!(data_type));
    }
    put("numberOfPoints", json!(grid.columns * grid.rows));
    put("typeOfLevel", json!(names.type_of_level));
    put("stepUnits", json!(1));
    put("stepType", json!(keys.step_type));
    put("gridType", json!(grid_type));
    put("uvRelativeToGrid", json!((keys.get("resolutionAndComponentFlags") >> 3) & 1));
    put("shortName", json!(names.short_name));
    put("units", json!(names.units));
    put("name", json!(names.name));
    put("cfName", json!(names.cf_name));
    put("cfVarName", json!(names.cf_var_name));
    put("missingValue", json!(f64::from(f32::MAX)));
    if let Some(total) = keys.long("numberOfForecastsInEnsemble") {
        put("totalNumber", json!(total));
    }
    put("NV", json!(keys.get("NV")));
    if let Some((_, description)) = code("grib1/6.table", keys.grid_type) {
        put("gridDefinitionDescription", json!(title(description)));
    }
    let mode = grid.scanning;
    // cfgrib's grid keys: a Gaussian grid's N, Ni and Nj where a regular one has Nx, Ny and its row step.
    match grid.row_spacing {
        Rows::Gaussian(n) => {
            put("N", json!(n));
            put("Ni", json!(grid.columns));
            put("Nj", json!(grid.rows));
        }
        Rows::Step(step) => {
            put("Nx", json!(grid.columns));
            put("Ny", json!(grid.rows));
            put("jDirectionIncrementInDegrees", json!(step.unwrap_or(0.0)));
        }
    }
    put("iDirectionIncrementInDegrees", json!(grid.column_step));
    put("iScansNegatively", json!((mode >> 7) & 1));
    put("longitudeOfFirstGridPointInDegrees", json!(grid.first.1));
    put("longitudeOfLastGridPointInDegrees", json!(grid.last.1));
    put("jPointsAreConsecutive", json!((mode >> 5) & 1));
    put("jScansPositively", json!((mode >> 6) & 1));
    put("latitudeOfFirstGridPointInDegrees", json!(grid.first.0));
    put("latitudeOfLastGridPointInDegrees", json!(grid.last.0));
    attributes.insert("long_name".into(), json!(names.name));
    attributes.insert("units".into(), json!(names.units));
    attributes.insert("standard_name".into(), json!(names.cf_name));

    let mut global = Map::new();
    global.insert("GRIB_edition".into(), json!(1));
    global.insert("GRIB_centre".into(), json!(centre));
    global.insert("GRIB_centreDescription".into(), json!(centre_description));
    global.insert("GRIB_subCentre".into(), json!(keys.get("subCentre")));
    global.insert("institution".into(), json!(centre_description));

    #[expect(clippy::cast_precision_loss, reason = "a GRIB1 level is 16 bits")]
    let level = keys.get("level") as f64;
    let description = Description {
        variable: names.variable,
        type_of_level: names.type_of_level.to_owned(),
        level,
        step_type: keys.step_type.clone(),
        time,
        step_seconds: end_step(&keys)?.saturating_mul(unit),
        step_unit_seconds: unit,
        number: keys.long("perturbationNumber"),
        grid_type,
        shape: (grid.rows as u64, grid.columns as u64),
        grid: keys.grid_section.clone(),
        attributes,
        global,
    };
    Ok((description, grid))
}
