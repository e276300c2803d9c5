//! The CF view as `cat`, `plot` and `info` use it (`zarrs_cf`): which
//! elements a slice and `--sel` pick, values unpacked and masked, and
//! coordinates shown as numbers or dates.

use std::ops::Range;
use std::sync::Arc;

use clap::Args;
use zarrs_cf::{Decoded, Selection, Variable};
use zarrs_kerchunk::ReferenceStore;

use crate::cat::parse_slice;
use crate::outcome::Result;

/// The options `cat` and `plot` share to pick and decode values.
#[derive(Args)]
pub(crate) struct Picking {
    /// Select by coordinate value: `lat=50` (exact), `lat~50.3` (nearest), `lat=30:50`
    /// (a range, ends included), `time=2013-01-01` (every time that day); comma-separated or repeated.
    #[arg(long, value_name = "DIM=VALUE")]
    sel: Vec<String>,
    /// The stored values, as they are: no unpacking, masking or dates.
    #[arg(long)]
    raw: bool,
}

impl Picking {
    /// Whether values are shown as stored.
    pub(crate) fn raw(&self) -> bool {
        self.raw
    }

    /// Whether any `--sel` was given.
    pub(crate) fn has_selections(&self) -> bool {
        !self.sel.is_empty()
    }

    /// The selections, parsed.
    fn selections(&self) -> Result<Vec<Selection>> {
        let texts = self.sel.iter().flat_map(|sel| sel.split(',')).map(str::trim).filter(|s| !s.is_empty());
        Ok(texts.map(str::parse).collect::<std::result::Result<_, _>>()?)
    }

    /// The element ranges of `variable` that `slice` (NumPy-style indices)
    /// and the selections pick; a selection replaces its dimension's slice.
    pub(crate) fn ranges(&self, variable: &Variable<ReferenceStore>, slice: Option<&str>) -> Result<Vec<Range<u64>>> {
        let mut ranges = parse_slice(slice.unwrap_or(""), variable.shape())?;
        let selections = self.selections()?;
        if !selections.is_empty() {
            let selected = variable.select(&selections)?;
            for selection in &selections {
                let dim = variable.dims().iter().position(|d| d == selection.dim()).unwrap_or(0);
                ranges[dim] = selected[dim].clone();
            }
        }
        Ok(ranges)
    }
}

/// The variable at `path`, seen through the CF conventions.
pub(crate) fn open(store: &ReferenceStore, path: &str) -> Result<Variable<ReferenceStore>> {
    Ok(Variable::open(Arc::new(store.clone()), path)?)
}

/// A variable through the CF view (if it could be opened so), and the element ranges picked.
pub(crate) type Picked = (Option<Variable<ReferenceStore>>, Vec<Range<u64>>);

/// The variable at `path` through the CF view, and the element ranges that
/// `slice` and the selections pick. As stored (`--raw`, no `--sel`), a
/// variable whose CF attributes cannot be decoded is still read (`None`).
pub(crate) fn pick(
    store: &ReferenceStore,
    path: &str,
    shape: &[u64],
    slice: &str,
    picking: &Picking,
) -> Result<Picked> {
    match open(store, path) {
        Ok(variable) => {
            let ranges = picking.ranges(&variable, Some(slice))?;
            Ok((Some(variable), ranges))
        }
        Err(_) if picking.raw() && !picking.has_selections() => Ok((None, parse_slice(slice, shape)?)),
        Err(error) => Err(error),
    }
}

/// Whether the CF view shows `variable` other than as stored: unpacked,
/// masked or as dates.
pub(crate) fn decodes(variable: &Variable<ReferenceStore>) -> bool {
    variable.time_units().is_some() || matches!(variable.decoded_type(), Some(Decoded::Float32 | Decoded::Float64))
}

/// A decoded value as `NumPy` prints it: float32 in its shortest form; float64
/// with at most 8 decimals, trailing zeros dropped (`287.9`, not
/// `287.90000000000003`); very large and very small numbers in scientific
/// notation; `nan` where missing. `--npy` keeps every bit.
pub(crate) fn format_value(decoded: Option<Decoded>, value: f64) -> String {
    if value.is_nan() {
        return "nan".to_owned();
    }
    let integers = matches!(decoded, Some(Decoded::Stored(stored)) if !stored.name().starts_with("float"));
    if integers || value.is_infinite() {
        return value.to_string();
    }
    // Single precision: its own shortest form, which is never longer than it needs.
    let single = matches!(decoded, Some(Decoded::Float32 | Decoded::Stored(zarrs_cf::Stored::Float(2 | 4))));
    #[expect(clippy::cast_possible_truncation, reason = "a float32 value, held exactly in f64")]
    if single && value.abs() < 1e16 && value.abs() >= 1e-4 {
        return (value as f32).to_string();
    }
    let magnitude = value.abs();
    if magnitude >= 1e16 || (magnitude < 1e-4 && magnitude > 0.0) {
        return format!("{value:e}");
    }
    let fixed = format!("{value:.8}");
    let trimmed = fixed.trim_end_matches('0');
    trimmed.strip_suffix('.').unwrap_or(trimmed).to_owned()
}

/// The values of `ranges` of `variable` as text: see [`texts`].
pub(crate) fn labels(variable: &Variable<ReferenceStore>, ranges: &[Range<u64>]) -> Result<Vec<String>> {
    Ok(texts(variable, variable.read(ranges)?.iter().copied()))
}

/// Decoded values of `variable` as text: dates (`NaT` where missing) for CF
/// times, else numbers as `NumPy` prints them.
pub(crate) fn texts(variable: &Variable<ReferenceStore>, values: impl Iterator<Item = f64>) -> Vec<String> {
    match variable.time_units() {
        Some(units) => values.map(|v| units.date(v).map_or_else(|| "NaT".to_owned(), |d| d.to_string())).collect(),
        None => values.map(|v| format_value(variable.decoded_type(), v)).collect(),
    }
}

/// The labels of the elements `range` of the coordinate variable of `dim`,
/// or `None` without one.
pub(crate) fn coordinate_labels(
    variable: &Variable<ReferenceStore>,
    dim: usize,
    range: &Range<u64>,
) -> Result<Option<Vec<String>>> {
    variable.coordinate(dim).map(|coordinate| labels(&coordinate, std::slice::from_ref(range))).transpose()
}

/// The scalar coordinates the `coordinates` attribute names, as `height=2` (a
/// 2-D latitude of a curvilinear grid has no one value to show; a missing value is left out).
pub(crate) fn scalar_coordinates(variable: &Variable<ReferenceStore>) -> Vec<String> {
    variable
        .auxiliary_coordinates()
        .into_iter()
        .filter(|coordinate| coordinate.shape().is_empty())
        .filter_map(|coordinate| {
            let value = labels(&coordinate, &[]).ok()?.pop().filter(|label| label != "NaT")?;
            Some(format!("{}={value}", coordinate.name()))
        })
        .collect()
}

/// What `cat` and `plot` say about a variable's decoding: `float64 from int16
/// (scale_factor, add_offset, _FillValue)`.
pub(crate) fn describe(variable: &Variable<ReferenceStore>) -> String {
    let attributes = variable.attributes();
    let applied: Vec<&str> =
        ["scale_factor", "add_offset", "missing_value", "valid_range", "valid_min", "valid_max", "_Unsigned"]
            .into_iter()
            .filter(|name| attributes.contains_key(*name))
            .collect();
    let decoded = variable.decoded_type().map_or("?", Decoded::name);
    let stored = variable.stored_type().map_or("?", |s| s.name());
    if let Some(units) = variable.time_units() {
        return format!("dates ({} calendar) from {stored}", units.calendar());
    }
    if let Some(problem) = variable.time_problem() {
        return format!("{decoded}, not dates: {problem}");
    }
    if applied.is_empty() && decoded == stored {
        return decoded.to_owned();
    }
    let fill = if applied.is_empty() { "fill value masked".to_owned() } else { applied.join(", ") };
    format!("{decoded} from {stored} ({fill})")
}
