//! Many reference sets combined into one: the references of files scanned by
//! `kerchunk_scan`, or sets that exist, whoever made them (kerchunk's
//! `SingleHdf5ToZarr`, `VirtualiZarr`'s `to_kerchunk`, ours). Sets in, a set
//! out; this crate reads no file (arrays that must be compared by their stored
//! bytes are read through a [`RangeReader`] the caller gives).
//!
//! Along one dimension, the files' references are concatenated,
//! as kerchunk's `MultiZarrToZarr` does in its common case (`concat_dims`
//! one dimension, every other array identical across files).
//!
//! The combined coordinate's values come from where [`CoordinateSource`]
//! says. From the data (the default), each input must hold its coordinate
//! along the dimension inline (a scan with `kerchunk_scan`'s
//! `ScanOptions::with_inlined_variables` does): its values order the files and
//! become the combined coordinate.
//! From a file's name or a global attribute, each file gives one value: the
//! files are ordered by it, and where the arrays lack the dimension it is a
//! new first axis of every array that is not itself a coordinate (the
//! coordinates, such as `lat`, must then be the same in every file).
//!
//! Coordinates are compared as what they mean, not as numbers: when the
//! files' `units` (or `calendar`) differ, they must all be CF time units,
//! and then every file's times are decoded, the files ordered by date, and
//! the times written again as float64 in the units of the first file (as
//! kerchunk's `coo_map={"time": "cf:time"}` and xarray's `open_mfdataset`
//! give them). Units that differ otherwise are an error naming the file and
//! both units: concatenating the numbers would give wrong values.
//!
//! Arrays without the dimension are taken from the first file, after a check
//! that every file has the same metadata and the same values: those held
//! inline, and, with a [`RangeReader`], the stored bytes of range references.
//!
//! Every array keeps one file's attributes, so those that change what a stored
//! value decodes to ([`decoding_attributes`]: packing, fill values, valid
//! ranges, `_Unsigned`, units and calendars) must be the same in every file,
//! or combining is an error naming the file, the array, the attribute and both
//! values: concatenated under the first file's `scale_factor`, another file's
//! values would decode silently wrong. Arrays of CF times along the dimension
//! (the coordinate's `bounds`, which take its units, and arrays with time units
//! of their own) are decoded with each file's units and written again in one,
//! as the coordinate is, where any file's differ.
//!
//! [`combine`] joins many files' references along one dimension, as
//! kerchunk's `MultiZarrToZarr(concat_dims=[dim])` with every other array in
//! `identical_dims`: the chunk keys and ranges of concatenated arrays are
//! kerchunk's. It differs on purpose where kerchunk loses or invents data:
//! two files that start at the same coordinate value are an error (kerchunk
//! merges them and one file's chunks overwrite the other's); an array
//! without the dimension is taken from the first file (kerchunk gives it the
//! dimension, with chunks missing between files, unless it is listed in
//! `identical_dims`); the coordinate keeps its stored dtype (kerchunk
//! converts `>f8` to `<f8`); shapes are checked, not only chunks. Times in
//! units of each file's own are decoded and written again in the first
//! file's units, as float64 (kerchunk's `cf:time` writes int64); units that
//! differ otherwise are an error, never numbers concatenated as if they
//! were in one unit.
//!
//! | Combining | |
//! |---|---|
//! | along one dimension, others identical | yes |
//! | CF times in units of each file's own (`cf:`) | yes |
//! | the coordinate from file names (regex, dates) or a global attribute, a new dimension ([`combine_with`]) | yes |
//! | several dimensions, the outer ones from names, attributes or the data (one value a file) ([`CombineOptions::then_along`]) | yes |
//! | files of uneven length along the dimension (not a multiple of the chunk length, or chunked differently): the set written as Zarr v3 on rectilinear grids ([`kerchunk_v3`]) | yes, along one dimension |
//! | files of one variable each, merged ([`merge`]) | yes |
//! | a file's chunks at a time ([`combine_streamed`]: each file's chunks set aside, the rest held as what differs from the first file's, [`FileRests`]), along one dimension or several | yes |
//! | `var`, callables, `vattr:` | no |
//!

use std::borrow::Cow;
use std::collections::BTreeMap;

use kerchunk::{Reference, ReferenceSet, ReferenceSetBuilder};
use serde_json::Value;

mod coordinate;
mod encoding;
mod error;
mod held;
mod layout;
mod merge;
mod options;
mod outer;
mod placement;
mod source;
mod stack;
mod streamed;
mod times;
mod uneven;

use coordinate::{Combined, from_files, ordered};
pub use encoding::decoding_attributes;
use encoding::{differing_encoding, encoding_reason};
pub use error::CombineError;
pub(crate) use held::FileReferences;
pub use held::FileRests;
use held::Keyed;
pub use layout::{ChunkSplit, SetLayout};
pub use options::{CombineOptions, RangeReader};
use placement::{Holder, Placement, Renumber, Unplaced};
pub use source::{CombineOptionError, CoordinateSource};
use stack::stack;
pub use streamed::{SetAside, StreamedCombine, combine_streamed, combined_rest, split_combined_chunks};
use times::{array_times, holds_times};
use uneven::ChunkRun;

/// One input: the references of one file, and the name errors give it.
pub(crate) struct Input {
    pub(crate) name: String,
    pub(crate) references: FileReferences,
}

/// Combine `inputs` along `options.dimension`, the coordinate's values from
/// `options.coordinate`: the arrays that have the dimension are concatenated along it
/// (chunk keys renumbered), in the order of the files' coordinate values;
/// where no array has it (one value per file), every array that is not a
/// coordinate gets it as a new first axis. The others, and every group's
/// metadata, come from the first file.
pub(crate) fn combine_inputs(inputs: Vec<Input>, options: &CombineOptions) -> Result<ReferenceSet, CombineError> {
    let (set, uneven) = combine_placing(inputs, options, None)?;
    written_as_v3(set, &uneven)
}

/// The combined `set` as it is written: as Zarr v2, or, where an array is `uneven`, the whole
/// set as Zarr v3 with those arrays on rectilinear grids ([`kerchunk_v3::set_v3`]).
fn written_as_v3(
    set: ReferenceSet,
    uneven: &BTreeMap<String, kerchunk_v3::Uneven>,
) -> Result<ReferenceSet, CombineError> {
    if uneven.is_empty() {
        return Ok(set);
    }
    kerchunk_v3::set_v3(&set, uneven).map_err(|error| combine_error("the combined set", &error.path, error.reason))
}

/// Combine the references of many files into one set along `dimension`, as
/// kerchunk's `MultiZarrToZarr(concat_dims=[dimension])` does when every
/// other array is the same in each file (its `identical_dims`):
///
/// - files are ordered by their first coordinate value, and the coordinate
///   becomes one inline array of every file's values, in that order;
/// - when the files' coordinates differ in `units` or `calendar`, each must
///   be a CF time (`<unit> since <date>`) in one calendar: the files are
///   ordered by date, and the times written again as float64 in the units
///   of the first (as kerchunk's `coo_map={dim: "cf:time"}` and xarray's
///   `open_mfdataset` give them; the coordinate's fill value is dropped);
/// - each array with the dimension is concatenated along it: its chunk keys
///   renumbered, its references kept (URLs as each file's scan wrote them);
///   an array of CF times (the coordinate's `bounds`, or with time units of
///   its own) in units some file does not share is written again, inline, in
///   the coordinate's (or its first file's);
/// - every other array, and the groups' metadata, come from the first file,
///   once each other file is checked to have the same metadata and inline
///   values for it (values behind range references are read and compared
///   only with [`CombineOptions::with_range_reader`], as the command line
///   does).
///
/// Each input is `(name, references)`, the name used in errors; each must
/// hold its coordinate inline (scan it with
/// `kerchunk_scan`'s `ScanOptions::with_inlined_variables`).
///
/// # Errors
/// [`CombineError::Combine`] naming the file and the array: a coordinate
/// missing or not inline, two files starting at the same coordinate value,
/// coordinates whose units differ and are not CF times in one calendar
/// (naming both units), a time that is not a date, an array without the
/// dimension whose metadata or inline values differ from the first file's,
/// an array whose dtype, chunks, fill value, codecs or shape (beyond the
/// dimension) differ from the first file's, an array whose attributes that
/// change what its values decode to ([`decoding_attributes`]) differ from the
/// first file's (naming the attribute and both values), or files of uneven length
/// whose chunks no one stored length describes. Where the files' chunks along the
/// dimension make no regular grid, the set is Zarr v3 ([`kerchunk_v3::set_v3`]).
pub fn combine(inputs: Vec<(String, ReferenceSet)>, dimension: &str) -> Result<ReferenceSet, CombineError> {
    combine_with(inputs, &CombineOptions::new(dimension))
}

/// [`combine`] as `options` say: the coordinate's values from
/// [`CombineOptions::coordinate`], and times in the units of
/// [`CombineOptions::with_time_units`] if given:
///
/// - [`CoordinateSource::Auto`]: what [`combine`] does;
/// - [`CoordinateSource::Data`]: the files' coordinates as written (files
///   whose units differ are an error); [`CoordinateSource::Cf`]: as CF
///   times, decoded and written again in the first file's units;
/// - [`CoordinateSource::Name`] or [`CoordinateSource::Attribute`]: one
///   value per file, from its name (the last segment of the name given with
///   its references) or a global attribute, a number or a date. The files
///   are ordered by it, and the coordinate written as `<i8` (whole numbers),
///   `<f8`, or `<f8` CF times (`days since` the first date, or hours,
///   minutes or seconds where days do not count every date whole; standard
///   calendar). Where arrays have the dimension, each file must be one long
///   along it; where none has it, every array that is not a coordinate (an
///   array named in some array's `_ARRAY_DIMENSIONS` or `grid_mapping`, in
///   its group) gets it as a new first axis with chunks of 1, as kerchunk's
///   `coo_map` with a regex or `attr:` gives it, and the coordinates must be
///   the same in every file (so COGs of one grid become a time series);
/// - with [`CombineOptions::with_time_units`], times (from the files'
///   coordinates, unless `Data`, or from dates) are written in those units;
///   files in another calendar than the one asked for are an error.
///
/// ```
/// # use kerchunk::{ReferenceSet, ReferenceSetBuilder};
/// use kerchunk_combine::{CombineOptions, CoordinateSource, combine_with};
///
/// // Each file holds t(x); the member number is only in the file's name.
/// let file = |value: f32| {
///     let mut builder = ReferenceSetBuilder::new();
///     builder.insert_inline(".zgroup", br#"{"zarr_format":2}"#);
///     builder.insert_inline("t/.zarray", br#"{"shape":[1],"chunks":[1],"dtype":"<f4","fill_value":null,"compressor":null,"filters":null,"order":"C","zarr_format":2}"#);
///     builder.insert_inline("t/.zattrs", br#"{"_ARRAY_DIMENSIONS":["x"]}"#);
///     builder.insert_inline("t/0", &value.to_le_bytes());
///     builder.build()
/// };
/// let source: CoordinateSource = r"name:_m(\d+)\.nc$".parse()?;
/// let inputs = vec![("run_m7.nc".to_owned(), file(7.0)), ("run_m2.nc".to_owned(), file(2.0))];
/// let combined = combine_with(inputs, &CombineOptions::new("member").with_coordinate(source))?;
/// assert_eq!(combined.get("member/0").unwrap(), kerchunk::Reference::Inline(&[2i64.to_le_bytes(), 7i64.to_le_bytes()].concat()));
/// assert_eq!(combined.get("t/1.0").unwrap(), kerchunk::Reference::Inline(&7f32.to_le_bytes()));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
///
/// # Errors
/// What [`combine`] gives, and [`CombineError::Combine`] naming the file: a
/// name that does not match, text that is not a number or not a date in the
/// format, a missing attribute, two files with one value, numbers and dates
/// mixed, or a file more than one long along the dimension.
pub fn combine_with(
    inputs: Vec<(String, ReferenceSet)>,
    options: &CombineOptions,
) -> Result<ReferenceSet, CombineError> {
    let inputs = inputs.into_iter().map(|(name, references)| Input { name, references: references.into() }).collect();
    combine_inputs(inputs, options)
}

/// Merge the references of files that each hold some of the arrays (one
/// file per variable, say) into one set: the union of their arrays, as
/// xarray's `merge` gives it. An array that several files hold (a shared
/// coordinate such as `lat`) is taken from the first that has it, once every
/// other is checked to hold the same metadata and values: inline ones, and
/// with a `reader` ([`RangeReader`]) the stored bytes of range references;
/// the groups' metadata, the root's attributes included, from the first file
/// that has them.
///
/// # Errors
/// [`CombineError::Combine`] naming the file and the array that differs.
pub fn merge(inputs: Vec<(String, ReferenceSet)>, reader: Option<&RangeReader>) -> Result<ReferenceSet, CombineError> {
    let inputs: Vec<Input> =
        inputs.into_iter().map(|(name, references)| Input { name, references: references.into() }).collect();
    merge::merge(&inputs, reader)
}

/// [`combine`], each concatenated or stacked array's files and their renumbering
/// also pushed to `placements` (along several dimensions, those renumbered along every one).
fn combine_placing(
    inputs: Vec<Input>,
    options: &CombineOptions,
    mut placements: Option<&mut Vec<Placement>>,
) -> Result<(ReferenceSet, BTreeMap<String, kerchunk_v3::Uneven>), CombineError> {
    if let Some(((dimension, source), inner)) = options.outer.split_last() {
        return outer::combine_outer(inputs, options, inner, (dimension, source), placements);
    }
    let dimension = options.dimension.as_str();
    let one_per_file = matches!(options.coordinate, CoordinateSource::Name { .. } | CoordinateSource::Attribute(_));
    let (inputs, combined) = if one_per_file { from_files(inputs, options)? } else { ordered(inputs, options)? };
    let Some(first) = inputs.first() else { return Ok((ReferenceSetBuilder::new().build(), BTreeMap::new())) };
    let mut builder = ReferenceSetBuilder::new();
    let mut uneven = BTreeMap::new();
    let arrays = array_paths(&first.references);
    let concatenated: Vec<(String, usize)> = arrays
        .iter()
        .filter(|path| path.as_str() != dimension)
        .filter_map(|path| axis(&first.references, path, dimension).map(|axis| (path.clone(), axis)))
        .collect();
    // With no array along the dimension, the arrays that are not coordinates gain it.
    let stacked: Vec<String> = if concatenated.is_empty() {
        let coordinates = coordinate_paths(&first.references);
        let kept = |path: &String| coordinates.contains(path) || options.identical.contains(path);
        arrays.iter().filter(|path| path.as_str() != dimension && !kept(path)).cloned().collect()
    } else {
        Vec::new()
    };
    let gains_the_dimension =
        |path: &str| concatenated.iter().any(|(p, _)| p == path) || stacked.iter().any(|p| p == path);
    // The others are taken from the first file: they must be the same in every file.
    for path in arrays.iter().filter(|path| path.as_str() != dimension && !gains_the_dimension(path)) {
        let why = format!("and it has no dimension {dimension} to be concatenated along");
        check_identical(&inputs.iter().collect::<Vec<_>>(), path, &why, options.range_reader.as_ref())?;
    }
    for (key, reference) in first.references.iter() {
        let under = |path: &str| key.strip_prefix(path).is_some_and(|r| r.starts_with('/'));
        let owner = concatenated.iter().any(|(path, _)| under(path)) || stacked.iter().any(|path| under(path));
        if !owner && !under(dimension) {
            builder.insert_reference(&key, reference);
        }
    }
    // The coordinate: every file's values, in one inline chunk.
    let Combined { zarray: meta, zattrs, values } = combined;
    builder.insert_inline(&format!("{dimension}/.zarray"), meta.to_string().as_bytes());
    if let Some(attrs) = &zattrs {
        builder.insert_inline(&format!("{dimension}/.zattrs"), attrs.to_string().as_bytes());
    }
    builder.insert_inline(&chunk_key(dimension, 1, 0), &values);

    for (path, axis) in &concatenated {
        // Times (a `time_bnds`) in units some file does not share with the result are written
        // again; others are concatenated, their units compared as dates, not as text. Either
        // way they are held whole: their chunks were not set aside.
        if let Some(times) = array_times(&first.references, path, dimension) {
            let ours: Vec<_> = inputs.iter().map(|input| array_times(&input.references, path, dimension)).collect();
            let (target, text) = if times.inherited {
                coordinate_units(zattrs.as_ref()).ok_or_else(|| {
                    combine_error(&first.name, dimension, "its units are not CF time units to write bounds in".into())
                })?
            } else {
                let attrs = attributes(&first.references, path).unwrap_or_default();
                let text = |name: &str| attrs.get(name).and_then(Value::as_str).map(str::to_owned);
                (times.units, (text("units").unwrap_or_default(), text("calendar").unwrap_or("standard".into())))
            };
            if times::needs_rewriting(&inputs, path, &ours, &target)? {
                let text = (text.0.as_str(), text.1.as_str());
                let reader = options.range_reader.as_ref();
                times::rewrite(&mut builder, &inputs, path, (*axis, dimension), &ours, (&target, text), reader)?;
            } else {
                let placement = concatenate(&mut builder, &inputs, path, *axis, dimension, one_per_file)?;
                uneven.extend(placement.uneven.map(|grid| (path.clone(), grid)));
            }
            continue;
        }
        let placement = concatenate(&mut builder, &inputs, path, *axis, dimension, one_per_file)?;
        uneven.extend(placement.uneven.clone().map(|grid| (path.clone(), grid)));
        if let Some(placements) = placements.as_deref_mut() {
            placements.push(placement);
        }
    }
    for path in &stacked {
        let placement = stack(&mut builder, &inputs, path, dimension)?;
        if let Some(placements) = placements.as_deref_mut() {
            placements.push(placement);
        }
    }
    Ok((builder.build(), uneven))
}

/// The arrays of `set` whose values combining with `options` reads, rather than only
/// renumbering their chunks or comparing their stored bytes: the coordinate of each dimension
/// whose values come from the data, and the arrays of CF times along each dimension (a
/// coordinate's `bounds`, an array with time units), which are written again when units differ.
/// Combining reads them held inline in one chunk (coordinates) or stored raw or with zlib (times);
/// a caller with sets from elsewhere (chunked, compressed, big-endian, held as ranges) decodes
/// them first and holds them so.
#[must_use]
pub fn decoded_arrays(set: &ReferenceSet, options: &CombineOptions) -> Vec<String> {
    let dimensions = std::iter::once((&options.dimension, &options.coordinate))
        .chain(options.outer.iter().map(|(dimension, source)| (dimension, source)));
    let arrays = array_paths(set);
    let mut decoded = Vec::new();
    for (dimension, source) in dimensions {
        let from_data = matches!(source, CoordinateSource::Auto | CoordinateSource::Data | CoordinateSource::Cf);
        if from_data && arrays.contains(dimension) {
            decoded.push(dimension.clone());
        }
        decoded.extend(
            arrays
                .iter()
                .filter(|path| axis(set, path, dimension).is_some() && holds_times(set, path, dimension))
                .cloned(),
        );
    }
    decoded.sort();
    decoded.dedup();
    decoded
}

/// The units and calendar the combined coordinate's `.zattrs` give, parsed, and as text (the
/// calendar `standard` where none is given): what its bounds are written in.
fn coordinate_units(zattrs: Option<&Value>) -> Option<(zarrs_cf::TimeUnits, (String, String))> {
    let units = zattrs?.get("units")?.as_str()?;
    let calendar = zattrs?.get("calendar").and_then(Value::as_str);
    let parsed = zarrs_cf::TimeUnits::parse(units, calendar).ok()??;
    Some((parsed, (units.to_owned(), calendar.unwrap_or("standard").to_owned())))
}

/// The paths of the arrays of `set` that describe the others rather than
/// hold data: those of the dimensions the arrays are laid along (their
/// `_ARRAY_DIMENSIONS`, in their own group) and the CF grid mappings they
/// name (`grid_mapping`, a TIFF's `spatial_ref`). A new dimension from the
/// files' names leaves them as they are, checked the same in every file.
fn coordinate_paths(set: &(impl Keyed + ?Sized)) -> Vec<String> {
    let mut paths = Vec::new();
    for path in array_paths(set) {
        let Some(attrs) = attributes(set, &path) else { continue };
        // A name is of an array in the same group (`overview_1/band_data` names `overview_1/x`)
        // or, as NetCDF-4 scopes dimensions, in a group above it.
        let mut groups = vec![String::new()];
        let mut at = 0;
        while let Some(slash) = path[at..].find('/') {
            at += slash + 1;
            groups.push(path[..at].to_owned());
        }
        let dimensions = attrs["_ARRAY_DIMENSIONS"].as_array().into_iter().flatten().filter_map(Value::as_str);
        // CF's grid mapping (`spatial_ref`, `crs`): `name`, or `name: x y name2: ...`.
        let mapping = attrs["grid_mapping"].as_str().unwrap_or_default();
        let mappings = if mapping.contains(':') {
            mapping.split_whitespace().filter_map(|word| word.strip_suffix(':')).collect::<Vec<_>>()
        } else {
            mapping.split_whitespace().collect()
        };
        let names: Vec<&str> = dimensions.chain(mappings).collect();
        paths.extend(groups.iter().flat_map(|group| names.iter().map(move |name| format!("{group}{name}"))));
    }
    paths.sort();
    paths.dedup();
    paths
}

/// Concatenate the array at `path` of every input along its axis `axis`
/// (the dimension's): check each file's metadata against the first's, and
/// renumber its chunk keys along the axis. Returns where each file's chunks went.
fn concatenate(
    builder: &mut ReferenceSetBuilder,
    inputs: &[Input],
    path: &str,
    axis: usize,
    dimension: &str,
    one_per_file: bool,
) -> Result<Placement, CombineError> {
    let error = combine_error;
    let first = &inputs[0];
    let mut meta = usable_zarray(zarray(&first.references, path), &first.name, path, axis, dimension)?;
    let ndim = meta["shape"].as_array().map_or(0, Vec::len);
    // One chunk along every axis before this one (the others are checked the same in every file).
    let contiguous = (0..axis).all(|a| match (meta["shape"][a].as_u64(), meta["chunks"][a].as_u64()) {
        (Some(length), Some(chunk)) => length <= chunk,
        _ => false,
    });
    let holders = Vec::with_capacity(inputs.len());
    let mut placement = Placement { path: path.to_owned(), ndim, holders, contiguous, uneven: None };
    let (mut offset, mut chunks_before) = (0u64, 0u64);
    let mut runs: Vec<ChunkRun> = Vec::with_capacity(inputs.len());
    let against = AgainstFirst {
        first,
        path,
        axis,
        dimension,
        one_per_file,
        meta: &meta,
        attrs: attributes(&first.references, path),
        // Times are compared as dates by the caller, and may be written in other units.
        skip: if holds_times(&first.references, path, dimension) { &["units", "calendar"] } else { &[] },
    };
    let prefix = format!("{path}/");
    for input in inputs {
        let (theirs, chunk, length) = against.checked(input)?;
        let renumber = Renumber::Shift { axis, by: chunks_before };
        for (key, reference) in input.references.with_prefix(&prefix) {
            let Some(name) = key.strip_prefix(&prefix).filter(|n| !n.starts_with(".z")) else { continue };
            let renamed = renumber.name(name, ndim).map_err(|why| match why {
                Unplaced::NotAChunk => not_a_chunk(&input.name, path, &key, ndim),
                Unplaced::Overflow => error(&input.name, path, format!("chunk {name} lies past 2^64 chunks")),
            })?;
            builder.insert_reference(&format!("{prefix}{renamed}"), reference);
        }
        placement.holders.push((Holder::File(input.name.clone()), renumber));
        // A set that is uneven already (appended to) carries its own chunks along the axis.
        let run = match kerchunk_v3::edges_of(&theirs) {
            Some(grid) => ChunkRun::rectilinear(input.name.clone(), length, &grid),
            None => ChunkRun::regular(input.name.clone(), length, chunk),
        };
        chunks_before += run.chunks.len() as u64;
        runs.push(run);
        offset = offset
            .checked_add(length)
            .ok_or_else(|| error(&input.name, path, "the combined length exceeds 2^64".into()))?;
    }
    meta["shape"][axis] = Value::from(offset);
    // A set appended to carried its own chunks along the axis; the result's are `uneven`.
    if let Some(object) = meta.as_object_mut() {
        object.remove(kerchunk_v3::EDGES);
    }
    placement.uneven = uneven::along(&runs, axis, dimension).map_err(|(file, reason)| error(&file, path, reason))?;
    builder.insert_inline(&format!("{path}/.zarray"), meta.to_string().as_bytes());
    // Its other metadata (`.zattrs`), as the first file has it.
    for (key, reference) in first.references.with_prefix(&format!("{path}/.z")) {
        if key.strip_prefix(path).and_then(|rest| rest.strip_prefix("/.z")).is_some_and(|rest| rest != "array") {
            builder.insert_reference(&key, reference);
        }
    }
    Ok(placement)
}

/// `meta`, the `.zarray` of the file `name`'s array at `path`, if it is JSON with a shape and
/// chunks that reach the axis `axis`, where its `_ARRAY_DIMENSIONS` name `dimension`:
/// references may come from anywhere.
fn usable_zarray(
    meta: Option<Value>,
    name: &str,
    path: &str,
    axis: usize,
    dimension: &str,
) -> Result<Value, CombineError> {
    let reaches = |field: &str, meta: &Value| meta[field].as_array().is_some_and(|v| v.len() > axis);
    match meta {
        Some(meta) if reaches("shape", &meta) && reaches("chunks", &meta) => Ok(meta),
        Some(meta) => Err(combine_error(
            name,
            path,
            format!(
                "its shape {} or chunks {} have no axis {axis}, where {dimension} is",
                meta["shape"], meta["chunks"]
            ),
        )),
        None => Err(combine_error(name, path, "no .zarray that is inline JSON".into())),
    }
}

/// What each file's metadata of an array [`concatenate`]d is checked against: the first file's.
struct AgainstFirst<'a> {
    first: &'a Input,
    path: &'a str,
    axis: usize,
    dimension: &'a str,
    /// Whether each file gives one value along the dimension (its coordinate from its name).
    one_per_file: bool,
    /// The first file's `.zarray` and `.zattrs`, parsed.
    meta: &'a Value,
    attrs: Option<Value>,
    /// The attributes not compared.
    skip: &'static [&'static str],
}

impl<'a> AgainstFirst<'a> {
    /// The `.zarray` of `input`'s array, checked against the first file's (its encoding, its
    /// fields beside the dimension's chunk length, its shape beside the dimension), with its own
    /// chunk length along the dimension (files may be chunked differently along it: one chunk
    /// each, say) and its length along it. An archive's files hold the same metadata byte for
    /// byte: where `input`'s text is the first's, the first's, parsed once, is taken as it is.
    fn checked(&self, input: &Input) -> Result<(Cow<'a, Value>, u64, u64), CombineError> {
        let (first, path, axis, meta) = (self.first, self.path, self.axis, self.meta);
        let error = |reason: String| combine_error(&input.name, path, reason);
        let as_first = |name: &str| {
            let key = format!("{path}/{name}");
            match (first.references.reference(&key), input.references.reference(&key)) {
                (Some(Reference::Inline(ours)), Some(Reference::Inline(theirs))) => ours == theirs,
                _ => false,
            }
        };
        let chunk_of = |meta: &Value| meta["chunks"][axis].as_u64().filter(|&c| c > 0).unwrap_or(1);
        let (theirs, chunk) = if as_first(".zarray") {
            (Cow::Borrowed(meta), chunk_of(meta))
        } else {
            let mut theirs = usable_zarray(zarray(&input.references, path), &input.name, path, axis, self.dimension)?;
            let chunk = chunk_of(&theirs);
            theirs["chunks"][axis] = meta["chunks"][axis].clone();
            (Cow::Owned(theirs), chunk)
        };
        if !as_first(".zattrs") {
            let ours_attrs = attributes(&input.references, path);
            if let Some(differing) = differing_encoding(ours_attrs.as_ref(), self.attrs.as_ref(), self.skip) {
                return Err(error(encoding_reason(differing, &first.name)));
            }
        }
        if let Some(field) = differing_field(&theirs, meta) {
            return Err(error(format!("its {field} {} differs from {}'s {}", theirs[field], first.name, meta[field])));
        }
        let length = theirs["shape"][axis].as_u64().unwrap_or(0);
        if self.one_per_file && length != 1 {
            let dimension = self.dimension;
            return Err(error(format!(
                "it holds {length} values along {dimension}, where its coordinate gives the file one"
            )));
        }
        let mut other = theirs["shape"].clone();
        other[axis] = meta["shape"][axis].clone();
        if other != meta["shape"] {
            let (theirs, ours) = (&theirs["shape"], &meta["shape"]);
            return Err(error(format!("its shape {theirs} differs from {}'s {ours} beyond the dimension", first.name)));
        }
        Ok((theirs, chunk, length))
    }
}

/// An array without the dimension, which the combined set takes from the
/// first file: every other file must have the same metadata, the same chunk
/// keys and the same values: inline ones compared, and range references read
/// through `reader` (without one, an inline chunk against a range is taken to
/// differ, and two ranges are not compared).
/// `why` ends each error's reason: why the array must be the same.
pub(crate) fn check_identical(
    inputs: &[&Input],
    path: &str,
    why: &str,
    reader: Option<&RangeReader>,
) -> Result<(), CombineError> {
    let first = inputs[0];
    let theirs = zarray(&first.references, path);
    let prefix = format!("{path}/");
    // Sorted by key: a file held as its differences from another lists its keys in no order.
    let chunks = |set: &FileReferences| -> Vec<(String, Chunk)> {
        let mut chunks: Vec<(String, Chunk)> = set
            .iter()
            .filter(|(key, _)| key.strip_prefix(&prefix).is_some_and(|name| !name.starts_with(".z")))
            .map(|(key, reference)| (key.to_string(), Chunk::of(reference)))
            .collect();
        chunks.sort_unstable_by(|a, b| a.0.cmp(&b.0));
        chunks
    };
    let first_chunks = chunks(&first.references);
    for input in &inputs[1..] {
        let error = |reason: String| combine_error(&input.name, path, format!("{reason}, {why}"));
        let Some(ours) = zarray(&input.references, path) else {
            return Err(error(format!("it is missing, where {} has it", first.name)));
        };
        let differing = match &theirs {
            Some(theirs) if ours["shape"] != theirs["shape"] => Some("shape"),
            Some(theirs) => differing_field(&ours, theirs),
            None => Some("shape"),
        };
        if let Some(field) = differing {
            let theirs = theirs.as_ref().map_or_else(|| "none".to_owned(), |m| m[field].to_string());
            return Err(error(format!("its {field} {} differs from {}'s {theirs}", ours[field], first.name)));
        }
        let (ours_attrs, first_attrs) = (attributes(&input.references, path), attributes(&first.references, path));
        if let Some(differing) = differing_encoding(ours_attrs.as_ref(), first_attrs.as_ref(), &[]) {
            return Err(combine_error(&input.name, path, encoding_reason(differing, &first.name)));
        }
        let our_chunks = chunks(&input.references);
        let keys = |chunks: &[(String, Chunk)]| chunks.iter().map(|(k, _)| k.clone()).collect::<Vec<_>>();
        if keys(&our_chunks) != keys(&first_chunks) {
            return Err(error(format!("its chunks differ from {}'s", first.name)));
        }
        for ((key, ours), (_, theirs)) in our_chunks.iter().zip(&first_chunks) {
            let same = match (ours, theirs) {
                (Chunk::Inline(a), Chunk::Inline(b)) => Some(a == b),
                _ => match reader {
                    // Both read where they are: the same stored bytes are the same values.
                    Some(reader) => {
                        let read = |input: &Input, chunk: &Chunk| {
                            chunk.stored_bytes(reader, input).map_err(|e| {
                                combine_error(&input.name, path, format!("cannot read {key} to compare it: {e}"))
                            })
                        };
                        match (read(input, ours)?, read(first, theirs)?) {
                            (Some(a), Some(b)) => Some(a == b),
                            _ => None,
                        }
                    }
                    // Without a reader, only an inline chunk against a range is known to differ.
                    None => matches!((ours, theirs), (Chunk::Inline(_), _) | (_, Chunk::Inline(_))).then_some(false),
                },
            };
            if same == Some(false) {
                return Err(error(format!("its values differ from {}'s (chunk {key})", first.name)));
            }
        }
    }
    Ok(())
}

/// A chunk of an array that must be the same in every file, as its file references it.
enum Chunk {
    Inline(Vec<u8>),
    Range {
        url: Option<String>,
        offset: u64,
        length: u64,
    },
    /// A whole file, or a malformed reference: not read to be compared.
    Other,
}

impl Chunk {
    fn of(reference: Reference<'_>) -> Self {
        match reference {
            Reference::Inline(bytes) => Self::Inline(bytes.to_vec()),
            Reference::Range { url, offset, length } => Self::Range { url: url.map(str::to_owned), offset, length },
            _ => Self::Other,
        }
    }

    /// Its stored bytes: inline, or read through `reader` from the file of `input` it names
    /// (`None` where the reader cannot read it, and for `Other`).
    fn stored_bytes(&self, reader: &RangeReader, input: &Input) -> Result<Option<Vec<u8>>, String> {
        match self {
            Self::Inline(bytes) => Ok(Some(bytes.clone())),
            Self::Range { url, offset, length } => reader(&input.name, url.as_deref(), *offset, *length),
            Self::Other => Ok(None),
        }
    }
}

/// The indices of the chunk key `name` (below its array's path) of an array of `ndim`
/// dimensions, written with `.` between them (`0` for a 0-d array); `None` for anything else.
fn chunk_indices(name: &str, ndim: usize) -> Option<Vec<u64>> {
    let indices: Vec<u64> = name.split('.').map(str::parse).collect::<Result<_, _>>().ok()?;
    (indices.len() == ndim.max(1)).then_some(indices)
}

/// A key below an array that is neither its metadata nor one of its chunks (a `/` between
/// indices, or indices that do not fit its dimensions): an error, never a chunk left out.
fn not_a_chunk(file: &str, path: &str, key: &str, ndim: usize) -> CombineError {
    combine_error(
        file,
        path,
        format!("{key:?} is not a chunk key of an array of {ndim} dimensions (indices with '.' between them)"),
    )
}

/// The fields of two `.zarray`s that must agree for their arrays to be
/// combined (the shape aside), and the first of them that does not.
fn differing_field(ours: &Value, theirs: &Value) -> Option<&'static str> {
    // The filters then the compressor are one chain: a zlib last among the filters and no
    // compressor decode as zlib the compressor (as a v3 set's v2 form writes it, `set_v2`).
    let chain = |meta: &Value| -> Vec<Value> {
        let filters = meta["filters"].as_array().cloned().unwrap_or_default();
        filters.into_iter().chain(Some(meta["compressor"].clone()).filter(|c| !c.is_null())).collect()
    };
    ["dtype", "chunks", "fill_value", "compressor", "filters", "order"].into_iter().find(|&field| match field {
        "compressor" | "filters" => ours[field] != theirs[field] && chain(ours) != chain(theirs),
        _ => ours[field] != theirs[field],
    })
}

/// Whether `key`'s last name starts `.z` (`.zarray`, `.zattrs`, `.zgroup`): metadata, as
/// combining tells it from chunks.
fn is_metadata(key: &str) -> bool {
    key.rsplit('/').next().is_some_and(|name| name.starts_with(".z"))
}

/// The paths of the arrays of a set (every key ending in `/.zarray`, or `.zarray` at the
/// root), sorted.
fn array_paths(set: &(impl Keyed + ?Sized)) -> Vec<String> {
    let mut paths: Vec<String> =
        set.untabled_keys().filter_map(|key| key.strip_suffix("/.zarray").map(str::to_owned)).collect();
    paths.sort_unstable();
    paths
}

/// The parsed `.zarray` of the array at `path`, if it is inline JSON.
fn zarray(set: &(impl Keyed + ?Sized), path: &str) -> Option<Value> {
    match set.reference(&format!("{path}/.zarray"))? {
        Reference::Inline(text) => serde_json::from_slice(text).ok(),
        _ => None,
    }
}

/// The parsed `.zattrs` of the array at `path`, if it is inline JSON.
fn attributes(set: &(impl Keyed + ?Sized), path: &str) -> Option<Value> {
    let Reference::Inline(text) = set.reference(&format!("{path}/.zattrs"))? else { return None };
    serde_json::from_slice(text).ok()
}

/// The axis of `dimension` in the array at `path`, from its `_ARRAY_DIMENSIONS`.
fn axis(set: &(impl Keyed + ?Sized), path: &str, dimension: &str) -> Option<usize> {
    let Reference::Inline(text) = set.reference(&format!("{path}/.zattrs"))? else { return None };
    member(text, "_ARRAY_DIMENSIONS")?.as_array()?.iter().position(|d| d == dimension)
}

/// The number of dimensions of the array at `path`, from its `.zarray`'s `shape`.
fn ndim(set: &(impl Keyed + ?Sized), path: &str) -> Option<usize> {
    let Reference::Inline(text) = set.reference(&format!("{path}/.zarray"))? else { return None };
    member(text, "shape")?.as_array().map(Vec::len)
}

/// The member `name` of the JSON object `text`, as [`zarray`] and [`attributes`] read it (the
/// last of that name), without building the others: metadata asked for one field, of every
/// array of every file, often several times.
fn member(text: &[u8], name: &str) -> Option<Value> {
    let members: std::collections::BTreeMap<std::borrow::Cow<'_, str>, &serde_json::value::RawValue> =
        serde_json::from_slice(text).ok()?;
    serde_json::from_str(members.get(name)?.get()).ok()
}

/// The key of the chunk at `index` along the first of `ndim` dimensions.
fn chunk_key(path: &str, ndim: usize, index: u64) -> String {
    let mut key = format!("{path}/{index}");
    for _ in 1..ndim {
        key.push_str(".0");
    }
    key
}

/// The size of one value of a numeric numpy dtype such as `>f8`.
fn item_size(dtype: &str) -> Option<usize> {
    dtype.get(2..)?.parse().ok()
}

fn combine_error(file: &str, array: &str, reason: String) -> CombineError {
    CombineError::Combine { file: file.to_owned(), array: array.to_owned(), reason }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Combined with the coordinate from the data, as `combine` was before its sources.
    fn combine(inputs: Vec<Input>, dimension: &str) -> Result<ReferenceSet, CombineError> {
        super::combine_inputs(inputs, &CombineOptions::new(dimension))
    }

    /// A file with `time` = [start] and an array `v` whose metadata is `zarray` and `dims`.
    fn input(name: &str, start: f64, zarray: Option<&str>, dims: &str) -> Input {
        with_units(name, start, zarray, dims, None)
    }

    /// The same, with `units` on `time`.
    fn with_units(name: &str, start: f64, zarray: Option<&str>, dims: &str, units: Option<&str>) -> Input {
        let mut builder = ReferenceSetBuilder::new();
        builder.insert_inline(
            "time/.zarray",
            br#"{"shape":[1],"chunks":[1],"dtype":"<f8","fill_value":null,"compressor":null,"filters":null,"order":"C","zarr_format":2}"#,
        );
        let units = units.map_or_else(String::new, |units| format!(r#","units":"{units}""#));
        builder.insert_inline("time/.zattrs", format!(r#"{{"_ARRAY_DIMENSIONS":["time"]{units}}}"#).as_bytes());
        builder.insert_inline("time/0", &start.to_le_bytes());
        match zarray {
            Some(text) => builder.insert_inline("v/.zarray", text.as_bytes()),
            None => builder.insert_range("v/.zarray", Some("elsewhere.json"), 0, 10),
        }
        builder.insert_inline("v/.zattrs", format!(r#"{{"_ARRAY_DIMENSIONS":{dims}}}"#).as_bytes());
        builder.insert_range("v/0", Some(name), 0, 8);
        Input { name: name.to_owned(), references: builder.build().into() }
    }

    /// Metadata that does not fit what the attributes say is an error naming
    /// the file and the array, never a panic.
    #[test]
    fn inconsistent_metadata_is_an_error() {
        let good = r#"{"shape":[1],"chunks":[1],"dtype":"<f8","fill_value":null,"compressor":null,"filters":null,"order":"C","zarr_format":2}"#;
        let combined = combine(
            vec![input("b", 1.0, Some(good), r#"["time"]"#), input("a", 0.0, Some(good), r#"["time"]"#)],
            "time",
        );
        let combined = combined.unwrap();
        assert_eq!(combined.get("v/1"), Some(Reference::Range { url: Some("b"), offset: 0, length: 8 }));
        for (zarray, dims, needle) in [
            (Some(good), r#"["x", "y", "time"]"#, "have no axis 2"),
            (Some(r#"{"shape":5,"chunks":[1]}"#), r#"["time"]"#, "have no axis 0"),
            (None, r#"["time"]"#, "no .zarray that is inline JSON"),
        ] {
            let err = combine(vec![input("a", 0.0, zarray, dims), input("b", 1.0, zarray, dims)], "time").unwrap_err();
            assert!(err.to_string().contains("cannot combine a: \"v\"") && err.to_string().contains(needle), "{err}");
        }
        let err = combine(
            vec![input("a", 0.0, Some(good), r#"["time"]"#), input("b", 0.0, Some(good), r#"["time"]"#)],
            "time",
        );
        assert!(err.unwrap_err().to_string().contains("starts at the same value"));
    }

    /// A key below an array that is no chunk of it (a `/` between indices) is
    /// an error naming it, never a chunk left out of the combined set.
    #[test]
    fn keys_that_are_not_chunks_are_an_error() {
        let good = r#"{"shape":[1],"chunks":[1],"dtype":"<f8","fill_value":null,"compressor":null,"filters":null,"order":"C","zarr_format":2}"#;
        let mut odd = input("b", 1.0, Some(good), r#"["time"]"#);
        let mut builder = ReferenceSetBuilder::new();
        for (key, reference) in odd.references.iter() {
            builder.insert_reference(&key, reference);
        }
        builder.insert_range("v/0/0", Some("b"), 8, 8);
        odd.references = builder.build().into();
        let err = combine(vec![input("a", 0.0, Some(good), r#"["time"]"#), odd], "time").unwrap_err().to_string();
        assert!(err.contains("cannot combine b: \"v\"") && err.contains("\"v/0/0\" is not a chunk key"), "{err}");
    }

    /// Arrays named identical are taken once where the files gain a new
    /// dimension, after a check that every file has the same; the others gain it.
    #[test]
    fn identical_arrays_are_not_given_the_new_dimension() {
        let zarray = r#"{"shape":[2],"chunks":[2],"dtype":"<f4","fill_value":null,"compressor":null,"filters":null,"order":"C","zarr_format":2}"#;
        let file = |name: &str, mask: [f32; 2]| {
            let mut builder = ReferenceSetBuilder::new();
            for array in ["v", "mask"] {
                builder.insert_inline(&format!("{array}/.zarray"), zarray.as_bytes());
                builder.insert_inline(&format!("{array}/.zattrs"), br#"{"_ARRAY_DIMENSIONS":["x"]}"#);
            }
            builder.insert_range("v/0", Some(name), 0, 8);
            builder.insert_inline("mask/0", &[mask[0].to_le_bytes(), mask[1].to_le_bytes()].concat());
            Input { name: name.to_owned(), references: builder.build().into() }
        };
        let source: CoordinateSource = r"name:_m(\d+)".parse().unwrap();
        let options = CombineOptions::new("member").with_coordinate(source).with_identical(["mask"]);
        let combined =
            super::combine_inputs(vec![file("run_m2", [1.0, 0.0]), file("run_m1", [1.0, 0.0])], &options).unwrap();
        assert_eq!(combined.get("v/1.0"), Some(Reference::Range { url: Some("run_m2"), offset: 0, length: 8 }));
        assert!(combined.get("mask/0").is_some() && combined.get("mask/0.0").is_none(), "mask taken once");
        let err =
            super::combine_inputs(vec![file("run_m2", [1.0, 0.0]), file("run_m1", [0.0, 0.0])], &options).unwrap_err();
        assert!(err.to_string().contains(r#"cannot combine run_m2: "mask": its values differ"#), "{err}");
        let stacked = super::combine_inputs(
            vec![file("run_m2", [1.0, 0.0]), file("run_m1", [0.0, 0.0])],
            &CombineOptions { identical: Vec::new(), ..options },
        )
        .unwrap();
        assert!(stacked.get("mask/1.0").is_some(), "without it, mask gains the dimension");
    }

    /// Whole numbers from names stay exact past 2^53 (as `f64` these two
    /// would be one number), and order as integers.
    #[test]
    fn whole_numbers_from_names_stay_exact() {
        let zarray = r#"{"shape":[1],"chunks":[1],"dtype":"<f4","fill_value":null,"compressor":null,"filters":null,"order":"C","zarr_format":2}"#;
        let file = |name: &str| {
            let mut builder = ReferenceSetBuilder::new();
            builder.insert_inline("v/.zarray", zarray.as_bytes());
            builder.insert_inline("v/.zattrs", br#"{"_ARRAY_DIMENSIONS":["x"]}"#);
            builder.insert_range("v/0", Some(name), 0, 4);
            Input { name: name.to_owned(), references: builder.build().into() }
        };
        let options = CombineOptions::new("member").with_coordinate(r"name:_m(\d+)".parse().unwrap());
        let combined =
            super::combine_inputs(vec![file("run_m9007199254740993"), file("run_m9007199254740992")], &options);
        let expected = [9_007_199_254_740_992_i64.to_le_bytes(), 9_007_199_254_740_993_i64.to_le_bytes()].concat();
        assert_eq!(combined.unwrap().get("member/0"), Some(Reference::Inline(&expected)));
    }

    /// Units that differ and are not both CF times are an error naming the
    /// file and both units, never numbers concatenated under the first's.
    #[test]
    fn units_that_cannot_be_reconciled_are_an_error() {
        let good = r#"{"shape":[1],"chunks":[1],"dtype":"<f8","fill_value":null,"compressor":null,"filters":null,"order":"C","zarr_format":2}"#;
        let file = |name, start, units| with_units(name, start, Some(good), r#"["time"]"#, units);
        for (a, b, needle) in [
            (
                Some("m"),
                Some("km"),
                r#"cannot combine a: "time": its units "m" differ from b's units "km", and are not CF time units"#,
            ),
            (
                Some("days since 2000-01-01"),
                None,
                r#"cannot combine b: "time": its no units differ from a's units "days since 2000-01-01""#,
            ),
            (Some("days since 2000-01-01"), Some("months since 2000-01-01"), "is not of fixed length"),
        ] {
            let err = combine(vec![file("a", 0.0, a), file("b", 1.0, b)], "time").unwrap_err().to_string();
            assert!(err.contains(needle), "{err}");
        }
        // The same units, whatever they are, concatenate as written.
        let combined = combine(
            vec![file("b", 1.0, Some("months since 2000-01-01")), file("a", 0.0, Some("months since 2000-01-01"))],
            "time",
        )
        .unwrap();
        assert_eq!(
            combined.get("time/0"),
            Some(Reference::Inline(&[0.0f64.to_le_bytes(), 1.0f64.to_le_bytes()].concat()))
        );
        // Times in two units (30 h is day 1.25): written again in the first file's, as float64.
        let combined = combine(
            vec![file("b", 30.0, Some("hours since 2000-01-01")), file("a", 1.0, Some("days since 2000-01-01"))],
            "time",
        )
        .unwrap();
        assert_eq!(
            combined.get("time/0"),
            Some(Reference::Inline(&[1.0f64.to_le_bytes(), 1.25f64.to_le_bytes()].concat()))
        );
        assert_eq!(combined.get("v/0"), Some(Reference::Range { url: Some("a"), offset: 0, length: 8 }));
        // A time that is not a date (NaN) is an error, not a value.
        let err = combine(
            vec![file("a", 0.0, Some("days since 2000-01-01")), file("b", f64::NAN, Some("hours since 2000-01-01"))],
            "time",
        )
        .unwrap_err();
        assert!(err.to_string().contains("its value NaN is not a date"), "{err}");
    }

    /// An array without the dimension is taken from the first file only if
    /// every file has the same: metadata and inline values that differ are
    /// an error naming the file and the array, never the first file's values
    /// silently.
    #[test]
    fn arrays_without_the_dimension_must_be_the_same_in_every_file() {
        let good = r#"{"shape":[2],"chunks":[2],"dtype":"<f4","fill_value":null,"compressor":null,"filters":null,"order":"C","zarr_format":2}"#;
        let file = |name: &str, start: f64, lat: [f32; 2], zarray: &str| {
            let mut input = input(name, start, Some(good), r#"["time"]"#);
            let mut builder = ReferenceSetBuilder::new();
            for (key, reference) in input.references.iter() {
                builder.insert_reference(&key, reference);
            }
            builder.insert_inline("lat/.zarray", zarray.as_bytes());
            builder.insert_inline("lat/.zattrs", br#"{"_ARRAY_DIMENSIONS":["lat"]}"#);
            builder.insert_inline("lat/0", &[lat[0].to_le_bytes(), lat[1].to_le_bytes()].concat());
            input.references = builder.build().into();
            input
        };
        let same = combine(vec![file("a", 0.0, [1.0, 2.0], good), file("b", 1.0, [1.0, 2.0], good)], "time");
        assert!(same.unwrap().get("lat/0").is_some());
        let err =
            combine(vec![file("a", 0.0, [1.0, 2.0], good), file("b", 1.0, [1.0, 2.5], good)], "time").unwrap_err();
        assert!(err.to_string().contains(r#"cannot combine b: "lat": its values differ from a's"#), "{err}");
        let wider = good.replace("[2]", "[3]");
        let err =
            combine(vec![file("a", 0.0, [1.0, 2.0], good), file("b", 1.0, [1.0, 2.0], &wider)], "time").unwrap_err();
        assert!(err.to_string().contains("its shape [3] differs from a's [2]"), "{err}");
    }
}
