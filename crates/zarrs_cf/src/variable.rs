//! A variable: a zarrs array with its CF attributes decoded, its dimension
//! names and its coordinate variables.

use std::ops::Range;
use std::sync::Arc;

use ndarray::ArrayD;
use serde_json::{Map, Value};
use zarrs::array::{Array, ArrayBytes};
use zarrs::metadata::ArrayMetadata;
use zarrs_storage::ReadableStorageTraits;

use crate::error::CfError;
use crate::packing::{Decoded, Packing, Stored};
use crate::select::{self, Selection};
use crate::time::{DateTime, TimeUnits};

/// How a variable is decoded.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct CfOptions {
    /// Mask values outside `valid_range` (or `valid_min`/`valid_max`), as CF
    /// and netCDF4-python do. On by default; xarray does not mask them.
    pub mask_valid_range: bool,
}

impl Default for CfOptions {
    fn default() -> Self {
        Self { mask_valid_range: true }
    }
}

impl CfOptions {
    /// Whether to mask values outside the valid range.
    #[must_use]
    pub fn with_mask_valid_range(mut self, mask: bool) -> Self {
        self.mask_valid_range = mask;
        self
    }
}

/// An array with the CF conventions applied: values unpacked and masked,
/// times as dates, dimensions named and coordinates found.
///
/// ```
/// use std::sync::Arc;
/// use zarrs_cf::Variable;
/// # let location = concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/data/nc4_fill_missing/refs.json");
/// let store = Arc::new(zarrs_kerchunk::ReferenceStore::open(location)?);
/// let packed = Variable::open(store, "/packed")?;   // int16 with scale_factor, add_offset and a fill value
/// assert_eq!(packed.decoded_type().map(|t| t.name()), Some("float64"));
/// let kelvin = packed.read(&[0..2, 0..3])?;
/// assert!(kelvin.iter().all(|k| k.is_nan() || (200.0..400.0).contains(k)));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct Variable<TStorage: ?Sized> {
    storage: Arc<TStorage>,
    path: String,
    array: Array<TStorage>,
    dims: Vec<String>,
    packing: Option<Packing>,
    time: Option<TimeUnits>,
    /// Why `units` of the form `<unit> since <date>` could not be decoded, if so.
    time_problem: Option<String>,
    options: CfOptions,
}

impl<TStorage: ?Sized + ReadableStorageTraits + 'static> Variable<TStorage> {
    /// The variable at `path` (a zarrs node path such as `/air`), decoded with the default [`CfOptions`].
    ///
    /// Time units that cannot be decoded (`months since ...`, a calendar CF
    /// does not define) leave the values numbers, as xarray leaves them;
    /// [`time_problem`](Self::time_problem) says why.
    ///
    /// # Errors
    /// [`CfError::Open`] if the array cannot be opened.
    pub fn open(storage: Arc<TStorage>, path: &str) -> Result<Self, CfError> {
        Self::open_with(storage, path, CfOptions::default())
    }

    /// The variable at `path`, decoded with `options`.
    ///
    /// # Errors
    /// As [`open`](Self::open).
    pub fn open_with(storage: Arc<TStorage>, path: &str, options: CfOptions) -> Result<Self, CfError> {
        Self::open_inner(storage, path, options, true)
    }

    /// [`open_with`](Self::open_with); with `bounds_units`, a variable without
    /// `units` that is the `bounds` of the coordinate of one of its dimensions
    /// takes that coordinate's time units and calendar, as xarray's `decode_cf`
    /// gives them to it (CF 7.1: bounds share their coordinate's units).
    fn open_inner(storage: Arc<TStorage>, path: &str, options: CfOptions, bounds_units: bool) -> Result<Self, CfError> {
        let path = format!("/{}", path.trim_start_matches('/'));
        let array = Array::open(Arc::clone(&storage), &path)
            .map_err(|source| CfError::Open { path: path.clone(), source: Box::new(source) })?;
        let attributes = array.attributes().clone();
        let dims = dimension_names(&array, &attributes);
        let (type_name, fill_value) = data_type_and_fill(&array);
        let stored = Stored::from_name(&type_name);
        let packing =
            stored.map(|stored| Packing::new(stored, &attributes, fill_value.as_ref(), options.mask_valid_range));
        let mut units = attributes.get("units").and_then(Value::as_str).map(str::to_owned);
        let mut calendar = attributes.get("calendar").and_then(Value::as_str).map(str::to_owned);
        if units.is_none() && bounds_units && packing.is_some() {
            let parent = path.rsplit_once('/').map_or("", |(parent, _)| parent);
            let name = &path[parent.len() + 1..];
            let bounded = dims.iter().filter(|dim| dim.as_str() != name).find_map(|dim| {
                let candidates = [format!("{parent}/{dim}"), format!("/{dim}")];
                candidates
                    .iter()
                    .find_map(|path| Self::open_inner(Arc::clone(&storage), path, options, false).ok())
                    .filter(|coordinate| coordinate.attributes().get("bounds").and_then(Value::as_str) == Some(name))
            });
            if let Some(coordinate) = bounded.filter(|coordinate| coordinate.time.is_some()) {
                let text = |name: &str| coordinate.attributes().get(name).and_then(Value::as_str).map(str::to_owned);
                units = text("units");
                calendar = calendar.or_else(|| text("calendar"));
            }
        }
        let (time, time_problem) = match (units.as_deref(), &packing) {
            (Some(units), Some(_)) => match TimeUnits::parse(units, calendar.as_deref()) {
                Ok(time) => (time, None),
                Err(reason) => (None, Some(reason.to_string())),
            },
            _ => (None, None),
        };
        Ok(Self { storage, path, array, dims, packing, time, time_problem, options })
    }

    /// The variable's path, with a leading `/`.
    #[must_use]
    pub fn path(&self) -> &str {
        &self.path
    }

    /// The last part of the path.
    #[must_use]
    pub fn name(&self) -> &str {
        self.path.rsplit('/').next().unwrap_or(&self.path)
    }

    /// The zarrs array, for reading the stored values as they are.
    #[must_use]
    pub fn array(&self) -> &Array<TStorage> {
        &self.array
    }

    /// The shape.
    #[must_use]
    pub fn shape(&self) -> &[u64] {
        self.array.shape()
    }

    /// The dimension names: `_ARRAY_DIMENSIONS` (Zarr V2), the array's
    /// dimension names (V3), or `dim_0`, `dim_1`, ... where there are none.
    #[must_use]
    pub fn dims(&self) -> &[String] {
        &self.dims
    }

    /// The attributes, as stored.
    #[must_use]
    pub fn attributes(&self) -> &Map<String, Value> {
        self.array.attributes()
    }

    /// The attributes as xarray shows them after decoding: without those
    /// the decoding consumed (`scale_factor`, `add_offset`, `_FillValue`,
    /// `missing_value`, `_Unsigned`, `_ARRAY_DIMENSIONS`, `coordinates`, and
    /// a time's `units` and `calendar`), which xarray keeps in `encoding`.
    #[must_use]
    pub fn decoded_attributes(&self) -> Map<String, Value> {
        const CONSUMED: [&str; 7] = [
            "scale_factor",
            "add_offset",
            "_FillValue",
            "missing_value",
            "_Unsigned",
            "_ARRAY_DIMENSIONS",
            "coordinates",
        ];
        let time = self.time.is_some();
        self.attributes()
            .iter()
            .filter(|(name, _)| {
                let consumed = CONSUMED.contains(&name.as_str());
                let time_encoding = time && matches!(name.as_str(), "units" | "calendar");
                !consumed && !time_encoding
            })
            .map(|(name, value)| (name.clone(), value.clone()))
            .collect()
    }

    /// The `units` attribute.
    #[must_use]
    pub fn units(&self) -> Option<&str> {
        self.attributes().get("units").and_then(Value::as_str)
    }

    /// The type the decoded values have, as xarray's `decode_cf` would give
    /// them; `None` if the values are not numbers.
    #[must_use]
    pub fn decoded_type(&self) -> Option<Decoded> {
        self.packing.as_ref().map(|p| p.decoded)
    }

    /// The stored type, if the values are numbers.
    #[must_use]
    pub fn stored_type(&self) -> Option<Stored> {
        self.packing.as_ref().map(|p| p.stored)
    }

    /// The time units and calendar, if the values are CF times.
    #[must_use]
    pub fn time_units(&self) -> Option<&TimeUnits> {
        self.time.as_ref()
    }

    /// Why `units` that read as times (`<unit> since <date>`) could not be
    /// decoded, if so: the values are then numbers.
    #[must_use]
    pub fn time_problem(&self) -> Option<&str> {
        self.time_problem.as_deref()
    }

    /// The values of `ranges` (one per dimension) decoded: unpacked, with
    /// missing values as NaN, in `f64` (which holds every decoded type
    /// exactly, but for 64-bit integers beyond 2^53). Times are numbers
    /// here; [`read_times`](Self::read_times) gives dates.
    ///
    /// # Errors
    /// [`CfError`] if the values are not numbers, or the read fails.
    pub fn read(&self, ranges: &[Range<u64>]) -> Result<ArrayD<f64>, CfError> {
        self.read_into(ranges, |value| value)
    }

    /// The values of `ranges` decoded, as [`read`](Self::read), in `f32`:
    /// for a variable whose decoded type `f32` holds exactly (float32, or
    /// integers of at most 16 bits, as stored or masked), without the memory
    /// of `f64`.
    ///
    /// # Errors
    /// [`CfError::Type`] if the decoded type is wider, or as [`read`](Self::read).
    pub fn read_f32(&self, ranges: &[Range<u64>]) -> Result<ArrayD<f32>, CfError> {
        let fits = match self.decoded_type() {
            Some(Decoded::Float32) => true,
            Some(Decoded::Stored(stored)) => {
                matches!(stored, Stored::Bool | Stored::Float(2 | 4) | Stored::Int(1 | 2) | Stored::Uint(1 | 2))
            }
            _ => false,
        };
        if !fits {
            let decoded = self.decoded_type().map_or("not numbers", Decoded::name);
            return Err(CfError::Type { path: self.path.clone(), decoded: decoded.to_owned(), asked: "float32" });
        }
        #[expect(
            clippy::cast_possible_truncation,
            reason = "a value the decoded type holds, which float32 holds exactly"
        )]
        self.read_into(ranges, |value| value as f32)
    }

    /// The decoded values of `ranges`, each converted by `convert`.
    fn read_into<T>(&self, ranges: &[Range<u64>], convert: impl Fn(f64) -> T) -> Result<ArrayD<T>, CfError> {
        let packing = self
            .packing
            .as_ref()
            .ok_or_else(|| CfError::NotNumbers { path: self.path.clone(), dtype: data_type_and_fill(&self.array).0 })?;
        let bytes = self
            .array
            .retrieve_array_subset::<ArrayBytes>(&ranges)
            .map_err(|source| CfError::Read { path: self.path.clone(), source: Box::new(source) })?;
        let bytes = bytes
            .into_fixed()
            .map_err(|_| CfError::NotNumbers { path: self.path.clone(), dtype: "variable length".into() })?;
        let size = packing.stored.size();
        let values: Vec<T> = if packing.is_identity() {
            bytes.chunks_exact(size).map(|b| convert(packing.stored.value(b))).collect()
        } else {
            bytes.chunks_exact(size).map(|b| convert(packing.decode(packing.stored.value(b)))).collect()
        };
        let shape: Vec<usize> = ranges.iter().map(|r| usize::try_from(r.end - r.start).unwrap_or(usize::MAX)).collect();
        ArrayD::from_shape_vec(shape, values)
            .map_err(|e| CfError::Shape { path: self.path.clone(), reason: e.to_string() })
    }

    /// The values of `ranges` as dates (`None` where missing), for a variable with CF time units.
    ///
    /// # Errors
    /// [`CfError::Attribute`] naming the problem if the time units cannot be
    /// decoded, [`CfError::NotTime`] if there are none, or as [`read`](Self::read).
    pub fn read_times(&self, ranges: &[Range<u64>]) -> Result<ArrayD<Option<DateTime>>, CfError> {
        let units = self.time.as_ref().ok_or_else(|| match &self.time_problem {
            Some(reason) => {
                CfError::Attribute { path: self.path.clone(), name: "units".into(), reason: reason.clone() }
            }
            None => CfError::NotTime { path: self.path.clone() },
        })?;
        Ok(self.read(ranges)?.mapv(|value| units.date(value)))
    }

    /// The coordinate variable of dimension `dim` (an index into [`dims`](Self::dims)):
    /// the 1-D array named as the dimension, beside the variable or at the
    /// root, whose only dimension is that one. `None` if there is none.
    #[must_use]
    pub fn coordinate(&self, dim: usize) -> Option<Self> {
        let name = self.dims.get(dim)?;
        self.sibling(name).filter(|coordinate| coordinate.dims == [name.clone()] && coordinate.packing.is_some())
    }

    /// The names in the `coordinates` attribute (CF 5: auxiliary coordinates
    /// such as a scalar height, or 2-D latitudes of a curvilinear grid).
    #[must_use]
    pub fn coordinate_names(&self) -> Vec<&str> {
        self.attributes()
            .get("coordinates")
            .and_then(Value::as_str)
            .map_or_else(Vec::new, |names| names.split_whitespace().collect())
    }

    /// The variables the `coordinates` attribute names that exist, beside
    /// the variable or at the root, in the order named.
    #[must_use]
    pub fn auxiliary_coordinates(&self) -> Vec<Self> {
        self.coordinate_names().into_iter().filter_map(|name| self.sibling(name)).collect()
    }

    /// The variable `name` beside this one, or else at the root.
    fn sibling(&self, name: &str) -> Option<Self> {
        let parent = self.path.rsplit_once('/').map_or("", |(parent, _)| parent);
        let candidates = [format!("{parent}/{name}"), format!("/{name}")];
        candidates.iter().find_map(|path| Self::open_with(Arc::clone(&self.storage), path, self.options).ok())
    }

    /// The index ranges, one per dimension, that `selections` pick: whole
    /// dimensions where no selection names them. See [`Selection`] for
    /// exact, nearest and range selections by coordinate value or date.
    ///
    /// # Errors
    /// [`CfError::Select`] naming the selection: an unknown dimension, no
    /// coordinate variable for it, or no value that matches.
    pub fn select(&self, selections: &[Selection]) -> Result<Vec<Range<u64>>, CfError> {
        let mut ranges: Vec<Range<u64>> = self.shape().iter().map(|&n| 0..n).collect();
        for selection in selections {
            let dim = self.dims.iter().position(|d| d == selection.dim()).ok_or_else(|| CfError::Select {
                selection: selection.to_string(),
                reason: format!("{} has dimensions {:?}", self.path, self.dims),
            })?;
            let coordinate = self.coordinate(dim).ok_or_else(|| CfError::Select {
                selection: selection.to_string(),
                reason: format!("dimension {:?} has no coordinate variable", selection.dim()),
            })?;
            ranges[dim] = select::resolve(selection, &coordinate)?;
        }
        Ok(ranges)
    }
}

impl<TStorage: ?Sized> std::fmt::Debug for Variable<TStorage> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Variable").field("path", &self.path).field("dims", &self.dims).finish_non_exhaustive()
    }
}

/// The array's data type as its metadata names it (`<i2`, `int16`, or a
/// structured type's JSON), and its Zarr V2 `fill_value`, which xarray reads
/// as `_FillValue` (Zarr V3 keeps `_FillValue` an attribute).
fn data_type_and_fill<TStorage: ?Sized>(array: &Array<TStorage>) -> (String, Option<Value>) {
    match array.metadata() {
        ArrayMetadata::V2(meta) => (meta.dtype.to_string(), serde_json::to_value(&meta.fill_value).ok()),
        ArrayMetadata::V3(meta) => (meta.data_type.name().to_owned(), None),
    }
}

/// `_ARRAY_DIMENSIONS`, the V3 dimension names, or `dim_<n>`.
fn dimension_names<TStorage: ?Sized>(array: &Array<TStorage>, attributes: &Map<String, Value>) -> Vec<String> {
    let rank = array.shape().len();
    let from_attribute = attributes
        .get("_ARRAY_DIMENSIONS")
        .and_then(Value::as_array)
        .map(|names| names.iter().map(|n| n.as_str().map(ToOwned::to_owned)).collect::<Option<Vec<_>>>());
    let from_array = array
        .dimension_names()
        .as_ref()
        .map(|names| names.iter().map(|n| n.as_ref().map(ToString::to_string)).collect());
    match from_attribute.flatten().or(from_array.flatten()) {
        Some(names) if names.len() == rank => names,
        _ => (0..rank).map(|d| format!("dim_{d}")).collect(),
    }
}
