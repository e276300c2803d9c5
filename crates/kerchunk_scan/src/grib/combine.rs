//! Several GRIB files' references made one, as kerchunk's `grib_tree`
//! makes one tree of many files' messages: each message's chunk is read
//! back with the coordinates its tree gives it (member, time, step, level),
//! and the messages of every file are built into one tree. A forecast run's
//! hours become one `step` axis, several runs one `time` axis, an
//! ensemble's files one `number` axis, with no `--concat` to name: the
//! messages say where they go.

use std::collections::BTreeMap;
use std::sync::Arc;

use kerchunk::{Reference, ReferenceSet};
use serde_json::{Map, Value};

use crate::grib::describe::Description;
use crate::grib::locate::GribMessage;
use crate::grib::tree::{Axes, Scanned};

fn inline(refs: &ReferenceSet, key: &str) -> Result<Vec<u8>, String> {
    match refs.get(key) {
        Some(Reference::Inline(bytes)) => Ok(bytes.to_vec()),
        _ => Err(format!("{key} is not held in the references")),
    }
}

fn json_object(refs: &ReferenceSet, key: &str) -> Result<Map<String, Value>, String> {
    match serde_json::from_slice(&inline(refs, key)?) {
        Ok(Value::Object(map)) => Ok(map),
        _ => Err(format!("{key} is not a JSON object")),
    }
}

fn i64s(bytes: &[u8]) -> Vec<i64> {
    bytes.chunks_exact(8).map(|b| i64::from_le_bytes(b.try_into().unwrap_or_default())).collect()
}

fn f64s(bytes: &[u8]) -> Vec<f64> {
    bytes.chunks_exact(8).map(|b| f64::from_le_bytes(b.try_into().unwrap_or_default())).collect()
}

/// The values of a leaf group's coordinate `name`: one per index along its dimension, or its
/// one value where it is 0-d.
struct Coordinate<T> {
    values: Vec<T>,
    dimension: Option<usize>,
}

impl<T: Copy> Coordinate<T> {
    fn at(&self, indices: &[u64]) -> Option<T> {
        match self.dimension {
            Some(d) => self.values.get(usize::try_from(*indices.get(d)?).ok()?).copied(),
            None => self.values.first().copied(),
        }
    }
}

/// The `GRIB_*` attributes that say where a grid's points are (cfgrib's grid keys, the grid's
/// type and its number of points).
const GRID_KEYS: [&str; 23] = [
    "gridType",
    "numberOfPoints",
    "Nx",
    "Ny",
    "iDirectionIncrementInDegrees",
    "jDirectionIncrementInDegrees",
    "iScansNegatively",
    "jScansPositively",
    "jPointsAreConsecutive",
    "latitudeOfFirstGridPointInDegrees",
    "longitudeOfFirstGridPointInDegrees",
    "latitudeOfLastGridPointInDegrees",
    "longitudeOfLastGridPointInDegrees",
    "latitudeOfSouthernPoleInDegrees",
    "longitudeOfSouthernPoleInDegrees",
    "angleOfRotationInDegrees",
    "DxInMetres",
    "DyInMetres",
    "LaDInDegrees",
    "LoVInDegrees",
    "Latin1InDegrees",
    "Latin2InDegrees",
    "gridDefinitionDescription",
];

/// One leaf group (`t2m/instant/heightAboveGround`) of a tree this crate wrote, read back.
struct Leaf<'a> {
    refs: &'a ReferenceSet,
    path: String,
    dimensions: Vec<String>,
}

impl Leaf<'_> {
    fn coordinate<T>(&self, name: &str, read: fn(&[u8]) -> Vec<T>) -> Result<Option<Coordinate<T>>, String> {
        let key = format!("{}/{name}/.zarray", self.path);
        if self.refs.get(&key).is_none() {
            return Ok(None);
        }
        let dimension = self.dimensions.iter().position(|d| d == name);
        // A 1-D coordinate's one chunk and a 0-d one's are both `name/0`.
        let values = read(&inline(self.refs, &format!("{}/{name}/0", self.path))?);
        Ok(Some(Coordinate { values, dimension }))
    }
}

/// Seconds in the unit a step coordinate's `units` names.
fn step_unit(units: Option<&str>) -> Result<i64, String> {
    Ok(match units {
        Some("seconds") => 1,
        Some("minutes") => 60,
        Some("hours") => 3600,
        Some("days") => 86_400,
        other => return Err(format!("a step in units {other:?}")),
    })
}

/// The messages of one GRIB tree (`refs`, named `name`), each with the
/// coordinates its chunk sits at.
fn messages_of(name: &str, refs: &ReferenceSet) -> Result<Vec<Scanned>, String> {
    let global = json_object(refs, ".zattrs")?;
    if !global.contains_key("GRIB_edition") {
        return Err("not a GRIB file's references (no GRIB_edition in the root attributes)".into());
    }
    let mut messages = Vec::new();
    for key in refs.keys_with_prefix("") {
        let parts: Vec<&str> = key.split('/').collect();
        if parts.len() != 5 || parts[4] != ".zarray" || parts[0] != parts[3] {
            continue;
        }
        let (variable, step_type, level_type) = (parts[0], parts[1], parts[2]);
        let path = format!("{variable}/{step_type}/{level_type}");
        let zarray = json_object(refs, &key)?;
        let mut attributes = json_object(refs, &format!("{path}/{variable}/.zattrs"))?;
        let dimensions: Vec<String> = attributes
            .remove("_ARRAY_DIMENSIONS")
            .and_then(|d| serde_json::from_value(d).ok())
            .ok_or_else(|| format!("{path}/{variable} has no _ARRAY_DIMENSIONS"))?;
        let shape: Vec<u64> =
            zarray.get("shape").and_then(|s| serde_json::from_value(s.clone()).ok()).unwrap_or_default();
        let (Some(&nx), Some(&ny)) = (shape.last(), shape.iter().rev().nth(1)) else {
            return Err(format!("{path}/{variable} is not a grid"));
        };
        let leaf = Leaf { refs, path: path.clone(), dimensions };
        let (times, steps) = (leaf.coordinate("time", i64s)?, leaf.coordinate("step", i64s)?);
        let (Some(times), Some(steps)) = (times, steps) else { return Err(format!("{path} has no time or step")) };
        let step_attributes = json_object(refs, &format!("{path}/step/.zattrs"))?;
        let unit = step_unit(step_attributes.get("units").and_then(Value::as_str))?;
        let levels = leaf.coordinate(level_type, f64s)?;
        let numbers = leaf.coordinate("number", i64s)?;
        let grid_type = attributes.get("GRIB_gridType").and_then(Value::as_str).unwrap_or("unknown");
        let grid_type: &'static str = match grid_type {
            "regular_ll" => "regular_ll",
            "rotated_ll" => "rotated_ll",
            "mercator" => "mercator",
            "regular_gg" => "regular_gg",
            "space_view" => "space_view",
            "lambert" => "lambert",
            "polar_stereographic" => "polar_stereographic",
            "lambert_azimuthal_equal_area" => "lambert_azimuthal_equal_area",
            other => return Err(format!("{path}/{variable}: a grid of type {other}")),
        };
        let axes = match refs.get(&format!("{path}/latitude/0")) {
            Some(Reference::Inline(latitudes)) => {
                let longitudes = inline(refs, &format!("{path}/longitude/0"))?;
                Some(Arc::new((f64s(latitudes), f64s(&longitudes)) as Axes))
            }
            _ => None,
        };
        // A grid is told apart by its grid keys alone (an analysis and a forecast, whose
        // `GRIB_dataType` differ, are on one grid).
        let grid = serde_json::to_vec(
            &attributes
                .iter()
                .filter(|(k, _)| k.strip_prefix("GRIB_").is_some_and(|key| GRID_KEYS.contains(&key)))
                .collect::<BTreeMap<_, _>>(),
        )
        .unwrap_or_default();
        for chunk in refs.keys_with_prefix(&format!("{path}/{variable}/")) {
            let Some(Reference::Range { url, offset, length }) = refs.get(&chunk) else { continue };
            let Some(indices) = chunk
                .rsplit('/')
                .next()
                .and_then(|c| c.split('.').map(|i| i.parse().ok()).collect::<Option<Vec<u64>>>())
            else {
                continue;
            };
            let missing = || format!("{chunk}: its coordinates are not in the references");
            let description = Description {
                variable: variable.to_owned(),
                type_of_level: level_type.to_owned(),
                level: levels.as_ref().and_then(|l| l.at(&indices)).unwrap_or(0.0),
                step_type: step_type.to_owned(),
                time: times.at(&indices).ok_or_else(missing)?,
                step_seconds: steps.at(&indices).ok_or_else(missing)?.saturating_mul(unit),
                step_unit_seconds: unit,
                number: numbers.as_ref().and_then(|n| n.at(&indices)),
                grid_type,
                shape: (ny, nx),
                grid: grid.clone(),
                attributes: attributes.clone(),
                global: global.clone(),
            };
            let url: Arc<str> = url.unwrap_or(name).into();
            messages.push(Scanned {
                url,
                message: GribMessage { offset, length, edition: 2 },
                description,
                axes: axes.clone(),
            });
        }
    }
    Ok(messages)
}

/// The messages of every input, in order; an input that is no GRIB tree of
/// this crate's is an error naming it.
pub(crate) fn messages(inputs: &[(String, ReferenceSet)]) -> Result<Vec<Scanned>, (String, String)> {
    let mut all = Vec::new();
    for (name, refs) in inputs {
        all.extend(messages_of(name, refs).map_err(|reason| (name.clone(), reason))?);
    }
    Ok(all)
}
