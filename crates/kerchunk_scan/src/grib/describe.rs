//! What one GRIB2 message is, as cfgrib (and so kerchunk) names it: the
//! variable, its level, its times and its grid, and the `GRIB_*`
//! attributes, from the message's keys and eccodes' tables.

use std::collections::HashMap;

use serde_json::{Map, Value, json};

use crate::grib::grid;
use crate::grib::keys::MessageKeys;
use crate::grib::tables::{self, Keys, MISSING};

/// One message, described.
#[derive(Debug)]
pub(crate) struct Description {
    /// The variable's name: `cfVarName`, or `shortName` where that is `unknown`.
    pub(crate) variable: String,
    /// The type of level (`surface`, `isobaricInhPa`, ...), the level coordinate's name.
    pub(crate) type_of_level: String,
    /// The level's value, as eccodes' `level:float` (cfgrib's).
    pub(crate) level: f64,
    /// `instant`, `accum`, `avg`, ...
    pub(crate) step_type: String,
    /// The reference time, in seconds since 1970.
    pub(crate) time: i64,
    /// The end of the forecast step, in seconds.
    pub(crate) step_seconds: i64,
    /// The seconds in the finest unit the message counts its step in: its
    /// forecast time's, or its statistical range's.
    pub(crate) step_unit_seconds: i64,
    /// The ensemble member, for ensemble products.
    pub(crate) number: Option<i64>,
    /// The grid's type, as eccodes names it (`regular_ll`, `lambert`, ...).
    pub(crate) grid_type: &'static str,
    /// The grid's shape (rows, columns).
    pub(crate) shape: (u64, u64),
    /// What tells the message's grid from another of the same type and shape: its grid
    /// definition section (or, for messages read back from references, their grid keys).
    pub(crate) grid: Vec<u8>,
    /// The data variable's attributes (`GRIB_*`, `long_name`, `units`, `standard_name`).
    pub(crate) attributes: Map<String, Value>,
    /// The file's attributes (`GRIB_edition`, `GRIB_centre`, ...), from this message.
    pub(crate) global: Map<String, Value>,
}

/// The grids whose points are one dimension (`values`), as cfgrib has them: reduced grids, whose
/// rows differ in length, and HEALPix's pixels.
pub(crate) fn unstructured(grid_type: &str) -> bool {
    matches!(grid_type, "reduced_gg" | "reduced_ll" | "healpix")
}

/// The grids whose coordinates are 2-D (`y`, `x`), as cfgrib's `GRID_TYPES_2D_NON_DIMENSION_COORDS`,
/// and space view, whose rows and columns are not one latitude and longitude each (kerchunk
/// gives it one column's and one row's as if they were).
pub(crate) fn projected(grid_type: &str) -> bool {
    matches!(
        grid_type,
        "rotated_ll" | "lambert" | "lambert_azimuthal_equal_area" | "polar_stereographic" | "space_view"
    )
}

/// A concept's files, local first, for the chain eccodes evaluates: the
/// centre's local concepts and the WMO's, then ECMWF's and the WMO's, then
/// the legacy ones.
fn chain(edition: u8, concept: &str, centre: &str, suffix: &str) -> Vec<Vec<String>> {
    let file = |dir: &str, suffix: &str| format!("grib{edition}/{dir}{concept}{suffix}.def");
    let local = |name: &str| format!("localConcepts/{name}/");
    vec![
        vec![file(&local(centre), suffix), file("", suffix)],
        vec![file(&local("ecmf"), suffix), file("", suffix)],
        vec![file(&local("ecmf"), ".legacy"), file("", ".legacy")],
    ]
}

fn concept(edition: u8, concept: &str, centre: &str, suffix: &str, keys: &impl Keys) -> Option<&'static str> {
    chain(edition, concept, centre, suffix).iter().find_map(|files| tables::evaluate(files, keys))
}

/// A code's abbreviation and description in `table`.
pub(crate) fn code(table: &str, value: i64) -> Option<(&'static str, &'static str)> {
    let table = tables::code_table(table)?;
    table.get(&u32::try_from(value).ok()?).copied()
}

/// A code's title, as eccodes reads a code table's line: the text up to its
/// last opening parenthesis (what follows is its units).
pub(crate) fn title(description: &str) -> &str {
    description.rfind('(').map_or(description, |at| &description[..at]).trim_end()
}

/// eccodes' `level` as a float (its `g2level`): the first fixed surface's
/// scaled value, pressure in whole hectopascals unless below one.
fn level(keys: &MessageKeys) -> f64 {
    let (kind, scale, value) = (
        keys.get("typeOfFirstFixedSurface").unwrap_or(MISSING),
        keys.get("scaleFactorOfFirstFixedSurface").unwrap_or(MISSING),
        keys.get("scaledValueOfFirstFixedSurface").unwrap_or(MISSING),
    );
    if value == MISSING {
        return 0.0;
    }
    #[expect(clippy::cast_precision_loss, reason = "a level's scaled value is at most 32 bits")]
    let mut v = value as f64;
    if scale != MISSING {
        // eccodes scales by repeated multiplication or division, one power of ten at a time.
        let mut scale = if kind == 109 { scale - 9 } else { scale };
        while scale < 0 && v != 0.0 {
            v *= 10.0;
            scale += 1;
        }
        while scale > 0 && v != 0.0 {
            v /= 10.0;
            scale -= 1;
        }
        if kind == 100 {
            let hectopascals = (v / 100.0).trunc();
            if scale != 0 || hectopascals != 0.0 {
                v = hectopascals;
            }
        }
    } else if kind == 100 {
        v = (v / 100.0).trunc();
    }
    v
}

/// Seconds in one unit of code table 4.4, for the units a step can be counted in without a calendar.
fn unit_seconds(unit: i64) -> Option<i64> {
    Some(match unit {
        0 => 60,
        1 => 3600,
        2 => 86_400,
        10 => 3 * 3600,
        11 => 6 * 3600,
        12 => 12 * 3600,
        13 => 1,
        _ => return None,
    })
}

/// The time range a statistical product's step ends with, as eccodes' `endStep`
/// takes it: the one range, or of two the one whose time increment is of
/// type 2 (successive forecasts); its unit and length. `None` for a product
/// at a point in time.
fn statistical_range(keys: &MessageKeys) -> Result<Option<(i64, i64)>, String> {
    let (Some(units), Some(lengths)) = (keys.values("indicatorOfUnitForTimeRange"), keys.values("lengthOfTimeRange"))
    else {
        return Ok(None);
    };
    let increments = keys.values("typeOfTimeIncrement").unwrap_or_default();
    let at = match units.len() {
        1 => 0,
        2 => increments
            .iter()
            .position(|&t| t == 2)
            .ok_or("two time ranges, neither of successive forecasts (type of time increment 2)")?,
        n => return Err(format!("{n} time ranges (eccodes reads one or two)")),
    };
    Ok(Some((units[at], lengths.get(at).copied().unwrap_or(0))))
}

/// The end of the step in seconds: the forecast time, plus the length of
/// the statistical product's time range.
fn end_step(keys: &MessageKeys) -> Result<i64, String> {
    let unit = keys.get("indicatorOfUnitOfTimeRange").unwrap_or(1);
    let seconds = unit_seconds(unit).ok_or_else(|| {
        format!("a forecast time in units {unit} of code table 4.4 (months, years...) is not scanned")
    })?;
    // All ones is a missing forecast time (eccodes' `forecastTime` is then missing too): no step.
    let forecast = keys.get("forecastTime").unwrap_or(0);
    if forecast == MISSING {
        return Err("its forecast time is missing (all ones)".into());
    }
    let mut step = forecast.saturating_mul(seconds);
    if let Some((unit, length)) = statistical_range(keys)? {
        let seconds = unit_seconds(unit)
            .ok_or_else(|| format!("a time range in units {unit} of code table 4.4 is not scanned"))?;
        step = step.saturating_add(length.saturating_mul(seconds));
    }
    Ok(step)
}

/// The finest of the units the forecast time and the step's time range are counted in, in seconds.
fn step_unit(keys: &MessageKeys) -> i64 {
    let forecast = unit_seconds(keys.get("indicatorOfUnitOfTimeRange").unwrap_or(1)).unwrap_or(3600);
    let range = statistical_range(keys).ok().flatten().and_then(|(unit, _)| unit_seconds(unit));
    range.map_or(forecast, |range| range.min(forecast))
}

/// Seconds since 1970 of a proleptic Gregorian date and time.
pub(crate) fn epoch_seconds(year: i64, month: i64, day: i64, hour: i64, minute: i64) -> Result<i64, String> {
    let date = chrono::NaiveDate::from_ymd_opt(
        i32::try_from(year).unwrap_or(0),
        u32::try_from(month).unwrap_or(0),
        u32::try_from(day).unwrap_or(0),
    )
    .ok_or_else(|| format!("the reference date {year}-{month}-{day} is not a date"))?;
    let days = date.signed_duration_since(chrono::NaiveDate::default()).num_days();
    Ok(days * 86_400 + hour * 3600 + minute * 60)
}

fn grid_type(template: i64) -> Result<&'static str, String> {
    Ok(match template {
        0 => "regular_ll",
        1 => "rotated_ll",
        10 => "mercator",
        20 => "polar_stereographic",
        30 => "lambert",
        40 => "regular_gg",
        90 => "space_view",
        140 => "lambert_azimuthal_equal_area",
        150 => "healpix",
        // Nothing to match: eccodes' geo-iterator computes no Albers coordinates, so neither
        // cfgrib nor kerchunk has them.
        // eccodes' iterator gives a rotated Gaussian grid's own, rotated coordinates as its
        // latitudes and longitudes (it unrotates only rotated latitude/longitude grids): matching
        // them would write coordinates that are not geographic.
        41 => {
            return Err("grid definition template 3.41 (rotated Gaussian) is not scanned: eccodes' \
                 geo-iterator gives its rotated coordinates as latitudes and longitudes, which are not \
                 the points' own"
                .into());
        }
        31 => {
            return Err("grid definition template 3.31 (Albers equal area) is not scanned: eccodes' \
                 geo-iterator computes no coordinates for it, so there are none of its to match"
                .into());
        }
        // eccodes' iterator for an unstructured grid allocates its coordinates and fills none: they
        // are in the model's grid file, which the message names by its UUID only.
        101 => {
            return Err("grid definition template 3.101 (unstructured, ICON's) is not scanned: its \
                 points' coordinates are in the grid file the message names by UUID, not in the message"
                .into());
        }
        other => return Err(format!("grid definition template 3.{other} is not scanned yet")),
    })
}

/// What eccodes' tables call a message's parameter and level.
#[derive(Clone)]
pub(crate) struct Names {
    pub(crate) param_id: &'static str,
    pub(crate) short_name: &'static str,
    pub(crate) name: &'static str,
    pub(crate) units: &'static str,
    pub(crate) cf_name: &'static str,
    pub(crate) cf_var_name: String,
    pub(crate) type_of_level: &'static str,
    /// The variable: `cfVarName`, else `shortName`, else `var{discipline}_{category}_{number}`
    /// (GRIB1: `var{table2Version}_{indicatorOfParameter}`).
    pub(crate) variable: String,
}

/// The names of the messages seen so far, by the values of every key a
/// concept reads (and the centre, which picks the files): a file's messages
/// name a few parameters many times over.
#[derive(Default)]
pub(crate) struct NameCache(HashMap<Vec<Option<Vec<i64>>>, Names>);

impl NameCache {
    /// The names of the edition-`edition` message whose keys are `keys`, from centre `centre`.
    pub(crate) fn names(&mut self, keys: &impl Keys, centre: &str, edition: u8) -> Names {
        let mut identity: Vec<Option<Vec<i64>>> = tables::condition_keys().iter().map(|key| keys.list(key)).collect();
        let get = |key: &str| keys.long(key).unwrap_or(MISSING);
        identity.push(Some(vec![i64::from(edition), get("centre"), get("subCentre"), get("tablesVersion")]));
        identity.push(keys.text("stepType").map(|s| s.bytes().map(i64::from).collect()));
        self.0.entry(identity).or_insert_with(|| names(keys, centre, edition)).clone()
    }
}

fn names(keys: &impl Keys, centre: &str, edition: u8) -> Names {
    let get = |key: &str| keys.long(key);
    // eccodes' MTG2 switch: ECMWF's GRIB2 products (centre or sub-centre 98)
    // up to tables version 33 use the pre-MTG2 concepts; every other centre the current ones.
    let ecmwf = get("centre") == Some(98) || get("subCentre") == Some(98);
    let suffix = if edition == 2 && ecmwf && get("tablesVersion").unwrap_or(0) <= 33 { ".lte33" } else { "" };
    let param_id = concept(edition, "paramId", centre, suffix, keys).unwrap_or("0");
    let short_name = concept(edition, "shortName", centre, suffix, keys).unwrap_or("unknown");
    let name = concept(edition, "name", centre, suffix, keys).unwrap_or("unknown");
    let units = concept(edition, "units", centre, suffix, keys).unwrap_or("unknown");
    let cf_name = concept(edition, "cfName", centre, "", keys).unwrap_or("unknown");
    // GRIB2's cfVarName has no ECMWF fallback (eccodes comments it out); GRIB1's has.
    let cf_var_name = if edition == 2 {
        tables::evaluate(
            &[format!("grib2/localConcepts/{centre}/cfVarName.def"), "grib2/cfVarName.def".to_owned()],
            keys,
        )
    } else {
        concept(edition, "cfVarName", centre, "", keys)
    };
    let cf_var_name = cf_var_name.map_or_else(
        || {
            if short_name == "~" || short_name.starts_with(|c: char| c.is_ascii_digit()) {
                format!("p{param_id}")
            } else {
                short_name.to_owned()
            }
        },
        str::to_owned,
    );
    let type_of_level = if edition == 2 {
        tables::evaluate(
            &[
                format!("grib2/localConcepts/{centre}/typeOfLevelConcept.def"),
                "grib2/typeOfLevelConcept.def".to_owned(),
            ],
            keys,
        )
    } else {
        concept(edition, "typeOfLevel", centre, "", keys)
    }
    .unwrap_or("unknown");
    let variable = if short_name == "unknown" {
        // No table names it (a centre's local parameter without a local
        // table here): named by the numbers that say what it is.
        let get = |key: &str| keys.long(key).unwrap_or(MISSING);
        if edition == 2 {
            format!("var{}_{}_{}", get("discipline"), get("parameterCategory"), get("parameterNumber"))
        } else {
            format!("var{}_{}", get("table2Version"), get("indicatorOfParameter"))
        }
    } else if matches!(cf_var_name.as_str(), "undef" | "unknown") {
        short_name.to_owned()
    } else {
        cf_var_name.clone()
    };

    Names { param_id, short_name, name, units, cf_name, cf_var_name, type_of_level, variable }
}

/// Describes the message whose keys are `keys`.
///
/// # Errors
/// A grid, a product or a time unit not scanned yet, or a reference date
/// that is no date.
pub(crate) fn describe(keys: &MessageKeys, cache: &mut NameCache) -> Result<Description, String> {
    let centre_code = keys.get("centre").unwrap_or(MISSING);
    let (centre, centre_description) = code("common/c-11.table", centre_code).unwrap_or(("unknown", "unknown"));
    // As eccodes reads C-11: "US National Weather Service - NCEP (WMC)" is titled without "(WMC)".
    let centre_description = title(centre_description);
    let sub_centre = keys.get("subCentre").unwrap_or(0);
    let tables_version = keys.get("tablesVersion").unwrap_or(0);
    let Names { param_id, short_name, name, units, cf_name, cf_var_name, type_of_level, variable } =
        cache.names(keys, centre, 2);
    let grid_type = grid_type(keys.get("gridDefinitionTemplateNumber").unwrap_or(MISSING))?;
    // A Gaussian grid of a varying number of points per row (Ni missing) is reduced.
    let reduced = keys.grid.get(30..34) == Some(&[0xFF; 4][..]);
    let grid_type = match grid_type {
        "regular_gg" if reduced => "reduced_gg",
        "regular_ll" if reduced => "reduced_ll",
        other => other,
    };
    let data_type = match keys.get("marsType") {
        Some(mars_type) => code("mars/type.table", mars_type).map(|(abbreviation, _)| abbreviation),
        None => code(
            &format!("grib2/tables/{tables_version}/1.4.table"),
            keys.get("typeOfProcessedData").unwrap_or(MISSING),
        )
        .map(|(abbreviation, _)| abbreviation),
    };
    // A template the message's tables do not list reads as its number, as eccodes' code tables do.
    let template = keys.get("gridDefinitionTemplateNumber").unwrap_or(MISSING);
    let grid_description = code(&format!("grib2/tables/{tables_version}/3.1.table"), template)
        .map_or_else(|| template.to_string(), |(_, description)| title(description).to_owned());

    let mut attributes = Map::new();
    let mut put = |key: &str, value: Value| {
        attributes.insert(format!("GRIB_{key}"), value);
    };
    put("paramId", json!(param_id.parse::<i64>().unwrap_or(0)));
    if let Some(data_type) = data_type {
        put("dataType", json!(data_type));
    }
    put("numberOfPoints", json!(keys.get("numberOfDataPoints")));
    put("typeOfLevel", json!(type_of_level));
    put("stepUnits", json!(1));
    put("stepType", json!(keys.step_type));
    put("gridType", json!(grid_type));
    let number = keys.get("perturbationNumber");
    put("shortName", json!(short_name));
    put("units", json!(units));
    put("name", json!(name));
    put("cfName", json!(cf_name));
    put("cfVarName", json!(cf_var_name));
    put("missingValue", json!(f64::from(f32::MAX)));
    if let Some(total) = keys.get("numberOfForecastsInEnsemble") {
        put("totalNumber", json!(total));
    }
    put("NV", json!(keys.get("NV").unwrap_or(0)));
    put("gridDefinitionDescription", json!(grid_description));
    let shape = grid::attributes(grid_type, &keys.grid, &mut attributes)?;
    attributes.insert("long_name".into(), json!(name));
    attributes.insert("units".into(), json!(units));
    attributes.insert("standard_name".into(), json!(cf_name));

    let mut global = Map::new();
    global.insert("GRIB_edition".into(), json!(2));
    global.insert("GRIB_centre".into(), json!(centre));
    global.insert("GRIB_centreDescription".into(), json!(centre_description));
    global.insert("GRIB_subCentre".into(), json!(sub_centre));
    global.insert("institution".into(), json!(centre_description));

    let get = |key: &str| keys.long(key).unwrap_or(0);
    Ok(Description {
        variable,
        type_of_level: type_of_level.to_owned(),
        level: level(keys),
        step_type: keys.step_type.to_owned(),
        time: epoch_seconds(get("year"), get("month"), get("day"), get("hour"), get("minute"))?,
        step_seconds: end_step(keys)?,
        step_unit_seconds: step_unit(keys),
        number,
        grid_type,
        shape,
        grid: keys.grid.clone(),
        attributes,
        global,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::grib::keys::Unread;

    /// The grids not scanned name their template, and why where it is known.
    #[test]
    fn grids_not_scanned_are_named() {
        assert_eq!(grid_type(90), Ok("space_view"));
        assert!(
            grid_type(31)
                .unwrap_err()
                .starts_with("grid definition template 3.31 (Albers equal area) is not scanned: eccodes'")
        );
        assert!(
            grid_type(41).unwrap_err().starts_with("grid definition template 3.41 (rotated Gaussian) is not scanned")
        );
        assert!(
            grid_type(101).unwrap_err().starts_with("grid definition template 3.101 (unstructured, ICON's) is not")
        );
        assert_eq!(grid_type(150), Ok("healpix"));
        assert_eq!(grid_type(50).unwrap_err(), "grid definition template 3.50 is not scanned yet");
    }

    /// Every parameter of NCEP's local table and every 20th of the WMO's and ECMWF's, written
    /// by eccodes from its paramId (`tests/scan/grib/make.py`): the names eccodes reads back.
    #[test]
    fn names_are_eccodes() {
        let folder = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/scan/grib");
        let file = std::fs::read(folder.join("names.grib2")).unwrap();
        let truth: Vec<Value> = serde_json::from_slice(&std::fs::read(folder.join("names.json")).unwrap()).unwrap();
        let (mut at, mut wrong, mut not_scanned) = (0, Vec::new(), 0);
        for expected in &truth {
            let length = usize::try_from(u64::from_be_bytes(file[at + 8..at + 16].try_into().unwrap())).unwrap();
            let read = MessageKeys::read(&file[at..at + length]);
            at += length;
            // Templates not read yet (4.48 aerosols, 4.131, ...) are an error, not a wrong name.
            let Ok(keys) = read else {
                assert!(
                    matches!(read.unwrap_err(), Unread::NotScanned(reason) if reason.contains("is not scanned yet"))
                );
                not_scanned += 1;
                continue;
            };
            let centre = code("common/c-11.table", keys.get("centre").unwrap()).unwrap().0;
            let n = names(&keys, centre, 2);
            let ours = json!({
                "paramId": n.param_id.parse::<i64>().unwrap(), "shortName": n.short_name, "name": n.name,
                "units": n.units, "cfName": n.cf_name, "cfVarName": n.cf_var_name, "typeOfLevel": n.type_of_level,
                "stepType": keys.step_type,
            });
            for (key, value) in ours.as_object().unwrap() {
                if &expected[key] != value {
                    wrong.push(format!(
                        "paramId {}: {key}: {value} where eccodes has {}",
                        expected["set_paramId"], expected[key]
                    ));
                }
            }
        }
        assert_eq!(at, file.len());
        assert!(truth.len() - not_scanned > 550, "{not_scanned} of {} not scanned", truth.len());
        assert!(wrong.is_empty(), "{} of {} messages differ:\n{}", wrong.len(), truth.len(), wrong.join("\n"));
        eprintln!(
            "{} messages named as eccodes names them; {not_scanned} of templates not scanned",
            truth.len() - not_scanned
        );
    }
}
