//! The references of a scanned GRIB2 file, in the hierarchy kerchunk's
//! `scan_grib` + `grib_tree` make: a group per variable, per step type and
//! per type of level (`t2m/instant/heightAboveGround/`), each holding the
//! variable, with one chunk per message, and its coordinates.
//!
//! Where kerchunk is wrong, the file's meaning wins (the crate docs list each):
//! ensemble members are a `number` dimension, not merged into one chunk;
//! levels are eccodes' `level:float` (1.5 m, not 2); `step` counts the unit
//! its `units` names; 0-d coordinates are at `name/0`, never `name/`; and
//! the data's fill value is NaN, so a combination no message holds reads as
//! missing, not as uninitialised memory.

use std::collections::{BTreeMap, BTreeSet};

use kerchunk::{ReferenceSet, ReferenceSetBuilder};
use serde_json::{Map, Value, json};

use crate::grib::describe::{Description, projected, unstructured};
use crate::grib::locate::GribMessage;
use crate::options::Skipped;
use crate::zarr::json::{attributes_json, chunk_key, f64_bytes, i64_bytes, inline_array, zarray};

/// A regular grid's latitudes (of its rows) and longitudes (of its columns).
pub(crate) type Axes = (Vec<f64>, Vec<f64>);

/// One message's description and where its bytes are.
pub(crate) struct Scanned {
    /// The URL of the file the message is in.
    pub(crate) url: std::sync::Arc<str>,
    pub(crate) message: GribMessage,
    pub(crate) description: Description,
    /// The latitudes and longitudes of a regular grid's rows and columns.
    /// Shared by the messages of one grid: a file's messages are read once each.
    pub(crate) axes: Option<std::sync::Arc<Axes>>,
}

/// A level's value as a key that sorts and compares (levels are finite).
fn level_key(level: f64) -> u64 {
    let bits = level.to_bits();
    if level.is_sign_negative() { !bits } else { bits | (1 << 63) }
}

fn level_value(key: u64) -> f64 {
    f64::from_bits(if key & (1 << 63) != 0 { key & !(1 << 63) } else { !key })
}

/// The unit the steps are counted in: the messages' own (the finest, where
/// they differ), named as CF names it: the largest of days, hours, minutes
/// and seconds it is a whole number of (GRIB's 3-hour unit counts hours, its
/// quarter-hour minutes).
fn step_unit(unit_seconds: i64) -> (i64, &'static str) {
    [(86_400, "days"), (3600, "hours"), (60, "minutes")]
        .into_iter()
        .find(|(seconds, _)| unit_seconds > 0 && unit_seconds % seconds == 0)
        .unwrap_or((1, "seconds"))
}

/// cfgrib's attributes of its coordinates.
fn coordinate_attributes(name: &str) -> Map<String, Value> {
    let value = match name {
        "number" => json!({"units": "1", "standard_name": "realization", "long_name": "ensemble member numerical id"}),
        "time" => {
            json!({"units": "seconds since 1970-01-01T00:00:00", "calendar": "proleptic_gregorian", "standard_name": "forecast_reference_time", "long_name": "initial time of forecast"})
        }
        "valid_time" => {
            json!({"units": "seconds since 1970-01-01T00:00:00", "calendar": "proleptic_gregorian", "standard_name": "time", "long_name": "time"})
        }
        "latitude" => json!({"units": "degrees_north", "standard_name": "latitude", "long_name": "latitude"}),
        "longitude" => json!({"units": "degrees_east", "standard_name": "longitude", "long_name": "longitude"}),
        "isobaricInhPa" => {
            json!({"units": "hPa", "positive": "down", "stored_direction": "decreasing", "standard_name": "air_pressure", "long_name": "pressure"})
        }
        "isobaricInPa" => {
            json!({"units": "Pa", "positive": "down", "stored_direction": "decreasing", "standard_name": "air_pressure", "long_name": "pressure"})
        }
        "hybrid" => {
            json!({"units": "1", "positive": "down", "long_name": "hybrid level", "standard_name": "atmosphere_hybrid_sigma_pressure_coordinate"})
        }
        "heightAboveGround" => {
            json!({"units": "m", "positive": "up", "long_name": "height above the surface", "standard_name": "height"})
        }
        "depthBelowLand" | "depthBelowLandLayer" => {
            json!({"units": "m", "positive": "down", "long_name": "soil depth", "standard_name": "depth"})
        }
        "potentialVorticity" => json!({"units": "K m2 kg-1 s-1", "long_name": "potential vorticity"}),
        "theta" => json!({"units": "K", "positive": "up", "long_name": "potential temperature"}),
        "isothermal" => json!({"units": "K", "long_name": "temperature"}),
        "meanSea" | "surface" | "entireAtmosphere" => json!({}),
        other => json!({"long_name": format!("original GRIB coordinate for key: level({other})"), "units": "1"}),
    };
    match value {
        Value::Object(map) => map,
        _ => Map::new(),
    }
}

/// The messages of one leaf group (a variable, a step type, a type of level) on one grid.
type Leaf<'a> = Vec<&'a Scanned>;

/// The references of `scanned` (messages, in order, of one file or several).
pub(crate) fn build(scanned: &[Scanned], skipped: &mut Vec<Skipped>) -> ReferenceSet {
    let mut builder = ReferenceSetBuilder::new();
    builder.insert_inline(".zgroup", br#"{"zarr_format":2}"#);
    if let Some(first) = scanned.first() {
        builder.insert_inline(
            ".zattrs",
            &serde_json::to_vec(&Value::Object(first.description.global.clone())).unwrap_or_default(),
        );
    }
    let mut leaves: BTreeMap<(String, String, String), Leaf<'_>> = BTreeMap::new();
    for s in scanned {
        let d = &s.description;
        leaves.entry((d.variable.clone(), d.step_type.clone(), d.type_of_level.clone())).or_default().push(s);
    }
    let mut variables = BTreeSet::new();
    let mut step_groups = BTreeSet::new();
    for ((variable, step_type, level_type), leaf) in &leaves {
        let path = format!("{variable}/{step_type}/{level_type}");
        if variables.insert(variable.clone()) {
            builder.insert_inline(&format!("{variable}/.zgroup"), br#"{"zarr_format":2}"#);
            let name = leaf[0].description.attributes.get("long_name").cloned().unwrap_or(Value::Null);
            builder.insert_inline(
                &format!("{variable}/.zattrs"),
                &serde_json::to_vec(&json!({"name": name})).unwrap_or_default(),
            );
        }
        if step_groups.insert((variable.clone(), step_type.clone())) {
            builder.insert_inline(&format!("{variable}/{step_type}/.zgroup"), br#"{"zarr_format":2}"#);
            builder.insert_inline(
                &format!("{variable}/{step_type}/.zattrs"),
                &serde_json::to_vec(&json!({"stepType": step_type})).unwrap_or_default(),
            );
        }
        leaf_group(&mut builder, (&path, variable, level_type), leaf, skipped);
    }
    builder.build()
}

/// The values a leaf group's messages take along each of its dimensions, sorted.
struct Dimensions {
    numbers: BTreeSet<i64>,
    times: BTreeSet<i64>,
    steps: BTreeSet<i64>,
    levels: BTreeSet<u64>,
    /// The finest unit any message counts its step in, in seconds.
    step_unit: i64,
}

impl Dimensions {
    fn of(messages: &[&Scanned]) -> Self {
        let each =
            |f: &dyn Fn(&Description) -> Option<i64>| messages.iter().filter_map(|s| f(&s.description)).collect();
        Self {
            numbers: each(&|d| d.number),
            times: each(&|d| Some(d.time)),
            steps: each(&|d| Some(d.step_seconds)),
            levels: messages.iter().map(|s| level_key(s.description.level)).collect(),
            step_unit: messages.iter().map(|s| s.description.step_unit_seconds).min().unwrap_or(3600),
        }
    }

    /// The header dimensions (those before the grid's two) and their lengths:
    /// number and the level where they take more than one value, time and step always.
    fn header<'a>(&self, level_type: &'a str) -> Vec<(&'a str, u64)> {
        let mut header = Vec::new();
        if self.numbers.len() > 1 {
            header.push(("number", self.numbers.len() as u64));
        }
        header.push(("time", self.times.len() as u64));
        header.push(("step", self.steps.len() as u64));
        if self.levels.len() > 1 {
            header.push((level_type, self.levels.len() as u64));
        }
        header
    }

    /// Where `d` sits along the header dimensions.
    fn indices(&self, d: &Description) -> Vec<u64> {
        let at = |set: &BTreeSet<i64>, value: i64| set.iter().position(|v| *v == value).unwrap_or(0) as u64;
        let mut indices = Vec::with_capacity(4);
        if self.numbers.len() > 1 {
            indices.push(at(&self.numbers, d.number.unwrap_or(0)));
        }
        indices.extend([at(&self.times, d.time), at(&self.steps, d.step_seconds)]);
        if self.levels.len() > 1 {
            indices.push(self.levels.iter().position(|v| *v == level_key(d.level)).unwrap_or(0) as u64);
        }
        indices
    }
}

/// One leaf group: the variable over (number, time, step, level), one chunk
/// a message, and its coordinates.
fn leaf_group(
    builder: &mut ReferenceSetBuilder,
    (path, variable, level_type): (&str, &str, &str),
    leaf: &[&Scanned],
    skipped: &mut Vec<Skipped>,
) {
    let first = leaf[0];
    // Every message of a group must be on the first one's grid; others are left out, named.
    let on_grid: Vec<&Scanned> = leaf
        .iter()
        .copied()
        .filter(|s| {
            let d = &s.description;
            let same = d.shape == first.description.shape
                && d.grid_type == first.description.grid_type
                && d.grid == first.description.grid
                && s.axes == first.axes;
            if !same {
                skipped.push(Skipped {
                    path: format!("{path}/{variable}"),
                    reason: format!(
                        "the message at byte {} is on another grid than the group's first",
                        s.message.offset
                    ),
                });
            }
            same
        })
        .collect();
    let dimensions = Dimensions::of(&on_grid);
    data_array(builder, (path, variable, level_type), &on_grid, &dimensions, skipped);
    let mut coordinates = header_coordinates(builder, path, level_type, &dimensions);
    grid_coordinates(builder, path, first);
    coordinates.extend(["latitude".to_owned(), "longitude".to_owned()]);
    coordinates.sort();
    builder.insert_inline(&format!("{path}/.zgroup"), br#"{"zarr_format":2}"#);
    builder.insert_inline(
        &format!("{path}/.zattrs"),
        &serde_json::to_vec(&json!({"typeOfLevel": level_type, "coordinates": coordinates.join(" ")}))
            .unwrap_or_default(),
    );
}

/// The data variable: a chunk per message, NaN where no message is.
fn data_array(
    builder: &mut ReferenceSetBuilder,
    (path, variable, level_type): (&str, &str, &str),
    messages: &[&Scanned],
    dimensions: &Dimensions,
    skipped: &mut Vec<Skipped>,
) {
    let first = &messages[0].description;
    let header = dimensions.header(level_type);
    let (ny, nx) = first.shape;
    let mut names: Vec<&str> = header.iter().map(|(name, _)| *name).collect();
    let mut shape: Vec<u64> = header.iter().map(|(_, length)| *length).collect();
    let mut chunks = vec![1; header.len()];
    // A reduced grid's points are one dimension, as cfgrib has them.
    let grid: &[u64] = if unstructured(first.grid_type) { &[nx] } else { &[ny, nx] };
    names.extend(match (unstructured(first.grid_type), projected(first.grid_type)) {
        (true, _) => &["values"][..],
        (false, true) => &["y", "x"][..],
        (false, false) => &["latitude", "longitude"][..],
    });
    shape.extend(grid);
    chunks.extend(grid);
    let data = format!("{path}/{variable}");
    let filters = json!([{"id": "grib", "var": variable, "dtype": "float64"}]);
    builder.insert_inline(
        &format!("{data}/.zarray"),
        &zarray(&shape, &chunks, "<f8", &json!("NaN"), (&Value::Null, &filters)),
    );
    builder.insert_inline(&format!("{data}/.zattrs"), &attributes_json(first.attributes.clone(), &names));
    let mut seen = BTreeSet::new();
    for s in messages {
        let mut indices = dimensions.indices(&s.description);
        indices.extend(if unstructured(first.grid_type) { &[0][..] } else { &[0, 0][..] });
        if !seen.insert(indices.clone()) {
            skipped.push(Skipped {
                path: data.clone(),
                reason: format!(
                    "the message at byte {} repeats an earlier one's coordinates; the first is kept",
                    s.message.offset
                ),
            });
            continue;
        }
        builder.insert_range(&chunk_key(&data, &indices), Some(&s.url), s.message.offset, s.message.length);
    }
}

/// The coordinates of the header dimensions, inline: number (ensembles),
/// time, step, `valid_time` and the level. Returns their names.
fn header_coordinates(builder: &mut ReferenceSetBuilder, path: &str, level_type: &str, d: &Dimensions) -> Vec<String> {
    let mut names = vec!["time".to_owned(), "step".to_owned(), "valid_time".to_owned(), level_type.to_owned()];
    let (times, steps) = (d.times.len() as u64, d.steps.len() as u64);
    let dimension =
        |count: usize, name: &'static str| if count > 1 { (vec![name], vec![count as u64]) } else { (vec![], vec![]) };
    if !d.numbers.is_empty() {
        let (dims, shape) = dimension(d.numbers.len(), "number");
        let values = i64_bytes(d.numbers.iter().copied());
        inline_array(
            builder,
            &format!("{path}/number"),
            ("<i8", &shape, &values),
            coordinate_attributes("number"),
            &dims,
        );
        names.push("number".into());
    }
    let values = i64_bytes(d.times.iter().copied());
    inline_array(
        builder,
        &format!("{path}/time"),
        ("<i8", &[times], &values),
        coordinate_attributes("time"),
        &["time"],
    );
    let (unit, unit_name) = step_unit(d.step_unit);
    let mut attributes = Map::new();
    attributes.insert("units".into(), json!(unit_name));
    attributes.insert("standard_name".into(), json!("forecast_period"));
    attributes.insert("long_name".into(), json!("time since forecast_reference_time"));
    let values = i64_bytes(d.steps.iter().map(|s| s / unit));
    inline_array(builder, &format!("{path}/step"), ("<i8", &[steps], &values), attributes, &["step"]);
    // Steps and times are bounded where messages are described; saturating, not wrapping, beyond.
    let valid = i64_bytes(d.times.iter().flat_map(|t| d.steps.iter().map(move |s| t.saturating_add(*s))));
    let attributes = coordinate_attributes("valid_time");
    inline_array(
        builder,
        &format!("{path}/valid_time"),
        ("<i8", &[times, steps], &valid),
        attributes,
        &["time", "step"],
    );
    let (dims, shape) = dimension(d.levels.len(), "level");
    let dims: Vec<&str> = dims.iter().map(|_| level_type).collect();
    let values = f64_bytes(d.levels.iter().map(|k| level_value(*k)));
    inline_array(
        builder,
        &format!("{path}/{level_type}"),
        ("<f8", &shape, &values),
        coordinate_attributes(level_type),
        &dims,
    );
    names
}

/// Latitude and longitude: a regular grid's rows and columns inline, a
/// projected or reduced grid's points referenced through the codec from the first message.
fn grid_coordinates(builder: &mut ReferenceSetBuilder, path: &str, first: &Scanned) {
    let (ny, nx) = first.description.shape;
    if let Some(axes) = &first.axes {
        let (latitudes, longitudes) = &**axes;
        let values = f64_bytes(latitudes.iter().copied());
        inline_array(
            builder,
            &format!("{path}/latitude"),
            ("<f8", &[ny], &values),
            coordinate_attributes("latitude"),
            &["latitude"],
        );
        let values = f64_bytes(longitudes.iter().copied());
        inline_array(
            builder,
            &format!("{path}/longitude"),
            ("<f8", &[nx], &values),
            coordinate_attributes("longitude"),
            &["longitude"],
        );
        return;
    }
    // A reduced grid's points are one dimension (`values`), a projected grid's two.
    let (shape, dimensions, chunk): (&[u64], &[&str], &str) = if unstructured(first.description.grid_type) {
        (&[nx], &["values"], "0")
    } else {
        (&[ny, nx], &["y", "x"], "0.0")
    };
    for name in ["latitude", "longitude"] {
        let coordinate = format!("{path}/{name}");
        let filters = json!([{"id": "grib", "var": name, "dtype": "float64"}]);
        builder.insert_inline(
            &format!("{coordinate}/.zarray"),
            &zarray(shape, shape, "<f8", &Value::Null, (&Value::Null, &filters)),
        );
        builder
            .insert_inline(&format!("{coordinate}/.zattrs"), &attributes_json(coordinate_attributes(name), dimensions));
        builder.insert_range(
            &format!("{coordinate}/{chunk}"),
            Some(&first.url),
            first.message.offset,
            first.message.length,
        );
    }
}
