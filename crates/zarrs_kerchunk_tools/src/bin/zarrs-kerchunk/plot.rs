//! `plot`: a slice of an array as a PNG. Two dimensions longer than 1 make a
//! map: a colour image with a colour bar in the variable's units, axes
//! labelled from the coordinate variables and oriented by their values
//! (north up and east right, whatever the storage order), missing values
//! transparent. One dimension makes a line against its coordinate (a time
//! series against dates). Values are decoded through the CF conventions
//! unless `--raw` asks for them as stored.

use std::path::Path;

use plotters::coord::Shift;
use plotters::coord::ranged1d::KeyPointHint;
use plotters::coord::types::RangedCoordf64;
use plotters::prelude::*;
use plotters::style::colors::colormaps::ViridisRGB;
use serde_json::Value;
use zarrs_cf::Variable;
use zarrs_kerchunk::ReferenceStore;

use crate::array::{Element, NamedArray, value_of};
use crate::cf::{self, Picking};
use crate::outcome::{Outcome, Result};
use crate::ticks;

const SIZE: (u32, u32) = (900, 600);

/// A rectangle of pixels: top left and bottom right corners.
type PixelBox = ((i32, i32), (i32, i32));
const FONT: &str = "sans-serif";

/// One plotted dimension: its label, and per index its coordinate value (to
/// orient the axis and place round ticks) and its text (for dates, which are
/// ticked on cells), when there is a coordinate variable.
struct Axis {
    label: String,
    values: Option<Vec<f64>>,
    ticks: Option<Vec<String>>,
    dates: bool,
}

impl Axis {
    /// Whether the coordinate runs down as the index runs up (latitudes stored north first).
    fn descends(&self) -> bool {
        let valid = || self.values.iter().flatten().copied().filter(|v| !v.is_nan());
        matches!((valid().next(), valid().next_back()), (Some(first), Some(last)) if first > last)
    }

    fn reverse(&mut self) {
        self.values.iter_mut().for_each(|v| v.reverse());
        self.ticks.iter_mut().for_each(|t| t.reverse());
    }

    /// At most `most` ticks between cell positions `from` and `to`: round
    /// values of the coordinate where they fall, else whole cells on a round
    /// step labelled with their dates, values or indices.
    fn marks(&self, from: f64, to: f64, most: usize) -> Vec<ticks::Mark> {
        let round = self.values.as_deref().filter(|_| !self.dates).and_then(|v| ticks::along(v, from, to, most));
        let in_view = |(at, _): &ticks::Mark| (from..=to).contains(at);
        round.map_or_else(
            || {
                ticks::cells(from, to, most, |i| match &self.ticks {
                    Some(ticks) => ticks.get(i).cloned().unwrap_or_default(),
                    None => i.to_string(),
                })
            },
            |marks| marks.into_iter().filter(in_view).collect(),
        )
    }
}

/// A linear axis ticked where the marks are (plotters' own `WithKeyPoints`
/// leaves its axes without a formatter).
struct Ticked {
    linear: RangedCoordf64,
    positions: Vec<f64>,
}

impl Ticked {
    fn new(range: std::ops::Range<f64>, marks: &[ticks::Mark]) -> Self {
        Self { linear: range.into(), positions: ticks::positions(marks) }
    }
}

impl Ranged for Ticked {
    type FormatOption = plotters::coord::ranged1d::DefaultFormatting;
    type ValueType = f64;

    fn map(&self, value: &f64, limit: (i32, i32)) -> i32 {
        self.linear.map(value, limit)
    }

    fn key_points<Hint: KeyPointHint>(&self, _: Hint) -> Vec<f64> {
        self.positions.clone()
    }

    fn range(&self) -> std::ops::Range<f64> {
        self.linear.range()
    }
}

/// What is drawn: values row by row (row 0 at the bottom), and what they mean.
struct Grid {
    values: Vec<f64>,
    width: usize,
    /// The stored fill value, for values shown as stored (decoded ones are NaN where missing).
    fill: Option<f64>,
    units: String,
    title: String,
}

impl Grid {
    #[expect(clippy::float_cmp, reason = "the fill value is one exact value, as Zarr compares it")]
    fn is_missing(&self, value: f64) -> bool {
        value.is_nan() || self.fill.is_some_and(|fill| value == fill)
    }

    fn height(&self) -> usize {
        self.values.len() / self.width.max(1)
    }

    /// Mirror the rows (top to bottom).
    fn flip_rows(&mut self) {
        let rows: Vec<&[f64]> = self.values.chunks(self.width).rev().collect();
        self.values = rows.concat();
    }

    /// Mirror each row (left to right).
    fn flip_columns(&mut self) {
        self.values.chunks_mut(self.width).for_each(<[f64]>::reverse);
    }
}

pub(crate) fn run(store: &ReferenceStore, path: &str, slice: Option<&str>, picking: &Picking, output: &Path) -> Result {
    let array = NamedArray::open(store, path)?;
    let name = array.path.trim_start_matches('/').to_owned();
    let shape = array.shape().to_vec();
    // By default the first index of every dimension but the last two, unless selections pick.
    let default: Vec<&str> = (0..shape.len().saturating_sub(2)).map(|_| "0").collect();
    let slice = slice.or_else(|| picking.has_selections().then_some("")).unwrap_or(&default.join(",")).to_owned();
    let (variable, ranges) = cf::pick(store, path, &shape, &slice, picking)?;
    let plotted: Vec<usize> = (0..shape.len()).filter(|&d| ranges[d].end - ranges[d].start > 1).collect();
    if plotted.is_empty() || plotted.len() > 2 {
        return Err(format!(
            "the slice leaves {} dimensions longer than 1; plot draws 1 (a line) or 2 (a map), for example {:?}",
            plotted.len(),
            (0..shape.len()).map(|d| if d + 2 < shape.len() { "0" } else { ":" }).collect::<Vec<_>>().join(",")
        )
        .into());
    }
    let decoded = variable.as_ref().filter(|_| !picking.raw());
    let (values, fill) = match decoded {
        Some(variable) if variable.time_units().is_some() => {
            return Err(
                format!("/{name}: its values are dates; plot draws numbers (plot a variable against it)").into()
            );
        }
        Some(variable) if variable.decoded_type().is_some() => (variable.read(&ranges)?.into_iter().collect(), None),
        _ => stored_values(&array, &ranges)?,
    };
    let attributes = read_attributes(store, &name)?;
    let units = attributes["units"].as_str().unwrap_or("").to_owned();
    let title = title(&name, &attributes, variable.as_ref(), &ranges, &plotted);
    let axis = |d: usize| match &variable {
        Some(variable) => axis(variable, d, &ranges[d]),
        None => Ok(Axis { label: "index".into(), values: None, ticks: None, dates: false }),
    };
    let columns = &ranges[plotted[plotted.len() - 1]];
    let width = usize::try_from(columns.end - columns.start)?;
    let mut grid = Grid { values, width, fill, units, title };
    if let [along] = plotted[..] {
        let x_axis = axis(along)?;
        draw_line(&grid, &x_axis, output)?;
        println!("wrote {} ({}x{} pixels, a line of {} values)", output.display(), SIZE.0, SIZE.1, grid.values.len());
        return Ok(Outcome::Done);
    }
    let (mut y_axis, mut x_axis) = (axis(plotted[0])?, axis(plotted[1])?);
    // Rows are drawn from the bottom: values that run down are mirrored, so north is up and east right.
    if y_axis.descends() {
        grid.flip_rows();
        y_axis.reverse();
    }
    if x_axis.descends() {
        grid.flip_columns();
        x_axis.reverse();
    }
    draw_map(&grid, &x_axis, &y_axis, output)?;
    println!("wrote {} ({}x{} pixels, {}x{} cells)", output.display(), SIZE.0, SIZE.1, grid.width, grid.height());
    Ok(Outcome::Done)
}

/// The values as stored, as floats, and the stored fill value (which is missing).
fn stored_values(array: &NamedArray, ranges: &[std::ops::Range<u64>]) -> Result<(Vec<f64>, Option<f64>)> {
    let name = &array.path;
    let descr = array.descr().unwrap_or("?");
    let (element, bytes) =
        array.read(ranges)?.ok_or_else(|| format!("{name}: elements of variable length cannot be plotted"))?;
    if matches!(element, Element::Other(_)) {
        return Err(format!("{name}: plot draws numbers; {descr} is not a number type").into());
    }
    let values = bytes.chunks(element.size()).map(|v| value_of(element, v)).collect();
    let fill = match &array.zarray["fill_value"] {
        Value::Number(n) => n.as_f64(),
        Value::String(s) if s == "NaN" => Some(f64::NAN),
        _ => None,
    };
    // A float32 array holds its fill value rounded to float32 (1e20 is 100000002004087734272).
    #[expect(clippy::cast_possible_truncation, reason = "rounded as the array stores it")]
    let fill = fill.map(|fill| if matches!(element, Element::Float(4)) { f64::from(fill as f32) } else { fill });
    Ok((values, fill))
}

fn read_attributes(store: &ReferenceStore, name: &str) -> Result<Value> {
    if let Some(attributes) = crate::array::read_json(store, &crate::array::metadata_key(name, ".zattrs"))? {
        return Ok(attributes);
    }
    // Zarr v3: the attributes are in the node's one document.
    let node = crate::array::read_json(store, &crate::array::metadata_key(name, "zarr.json"))?;
    Ok(node.map_or(Value::Null, |node| node["attributes"].clone()))
}

/// `air at time=2013-01-01T00:00:00`: the name (or long name) and the fixed coordinates.
fn title(
    name: &str,
    attributes: &Value,
    variable: Option<&Variable<ReferenceStore>>,
    ranges: &[std::ops::Range<u64>],
    plotted: &[usize],
) -> String {
    let mut fixed: Vec<String> = (0..ranges.len())
        .filter(|d| !plotted.contains(d))
        .map(|d| {
            let Some(variable) = variable else { return format!("{}", ranges[d].start) };
            let label =
                cf::coordinate_labels(variable, d, &ranges[d]).ok().flatten().and_then(|l| l.into_iter().next());
            format!("{}={}", variable.dims()[d], label.unwrap_or_else(|| ranges[d].start.to_string()))
        })
        .collect();
    fixed.extend(variable.map(cf::scalar_coordinates).unwrap_or_default());
    let shown = attributes["long_name"].as_str().unwrap_or(name);
    if fixed.is_empty() { shown.to_owned() } else { format!("{shown} at {}", fixed.join(", ")) }
}

/// The axis of dimension `dim`, from its coordinate variable when it has one.
fn axis(variable: &Variable<ReferenceStore>, dim: usize, range: &std::ops::Range<u64>) -> Result<Axis> {
    let name = variable.dims()[dim].clone();
    let Some(coordinate) = variable.coordinate(dim) else {
        return Ok(Axis { label: format!("{name} (index)"), values: None, ticks: None, dates: false });
    };
    let values: Vec<f64> = coordinate.read(std::slice::from_ref(range))?.into_iter().collect();
    let ticks = cf::texts(&coordinate, values.iter().copied());
    // Dates at midnight are shown as days, other times to the minute.
    let midnight = ticks.iter().all(|t| t.ends_with("T00:00:00") || t == "NaT");
    let short = |t: String| match t.strip_suffix(":00") {
        Some(minutes) if coordinate.time_units().is_some() => minutes.replacen('T', " ", 1),
        _ => t,
    };
    let ticks = if midnight {
        ticks.into_iter().map(|t| t.trim_end_matches("T00:00:00").to_owned()).collect()
    } else {
        ticks.into_iter().map(short).collect()
    };
    let units = coordinate.units().filter(|_| coordinate.time_units().is_none());
    let label = units.map_or_else(|| name.clone(), |units| format!("{name} ({units})"));
    let dates = coordinate.time_units().is_some();
    Ok(Axis { label, values: Some(values), ticks: Some(ticks), dates })
}

/// Register the embedded font; the range of the values, widened when they are all equal.
#[expect(clippy::float_cmp, reason = "one value everywhere needs a range around it")]
fn prepare(grid: &Grid) -> Result<(f64, f64)> {
    plotters::style::register_font(FONT, FontStyle::Normal, dejavu::sans::regular())
        .map_err(|_| "the embedded font cannot be read")?;
    let valid = grid.values.iter().copied().filter(|v| !grid.is_missing(*v));
    let (low, high) = valid.fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), v| (lo.min(v), hi.max(v)));
    Ok(if low > high {
        (0.0, 1.0)
    } else if low == high {
        (low - 0.5, high + 0.5)
    } else {
        (low, high)
    })
}

fn save(buffer: &[u8], transparent: &[PixelBox], output: &Path) -> Result<()> {
    let mut rgba = image::RgbaImage::from_fn(SIZE.0, SIZE.1, |x, y| {
        let at = ((y * SIZE.0 + x) * 3) as usize;
        image::Rgba([buffer[at], buffer[at + 1], buffer[at + 2], 255])
    });
    // Missing values are drawn as nothing at all: their cells become transparent.
    for &((left, top), (right, bottom)) in transparent {
        for y in top.max(0)..bottom.min(i32::try_from(SIZE.1)?) {
            for x in left.max(0)..right.min(i32::try_from(SIZE.0)?) {
                rgba.put_pixel(u32::try_from(x)?, u32::try_from(y)?, image::Rgba([0, 0, 0, 0]));
            }
        }
    }
    rgba.save(output).map_err(|e| format!("cannot write {}: {e}", output.display()))?;
    Ok(())
}

fn draw_map(grid: &Grid, x_axis: &Axis, y_axis: &Axis, output: &Path) -> Result<()> {
    let (low, high) = prepare(grid)?;
    let (width, height) = (grid.width, grid.height());
    let mut buffer = vec![0u8; (SIZE.0 * SIZE.1 * 3) as usize];
    let mut transparent: Vec<PixelBox> = Vec::new();
    {
        let root = BitMapBackend::with_buffer(&mut buffer, SIZE).into_drawing_area();
        root.fill(&WHITE)?;
        let (main, bar) = root.split_horizontally(SIZE.0 - 150);
        #[expect(clippy::cast_precision_loss, reason = "grid sizes are far below 2^52")]
        let (w, h) = (width as f64, height as f64);
        let (x_marks, y_marks) = (x_axis.marks(-0.5, w - 0.5, 8), y_axis.marks(-0.5, h - 0.5, 8));
        let mut chart = ChartBuilder::on(&main)
            .caption(&grid.title, (FONT, 20))
            .margin(12)
            .x_label_area_size(45)
            .y_label_area_size(80)
            // Cells are centred on whole numbers, where their labels go.
            .build_cartesian_2d(Ticked::new(-0.5..w - 0.5, &x_marks), Ticked::new(-0.5..h - 0.5, &y_marks))?;
        chart
            .configure_mesh()
            .disable_mesh()
            .x_desc(x_axis.label.as_str())
            .y_desc(y_axis.label.as_str())
            .label_style((FONT, 14))
            .axis_desc_style((FONT, 16))
            .x_label_formatter(&|x| ticks::label_at(&x_marks, *x))
            .y_label_formatter(&|y| ticks::label_at(&y_marks, *y))
            .draw()?;
        let cells = grid.values.iter().enumerate().filter(|(_, v)| !grid.is_missing(**v)).map(|(i, v)| {
            #[expect(clippy::cast_precision_loss, reason = "grid sizes are far below 2^52")]
            let (x, y) = ((i % width) as f64, (i / width) as f64);
            Rectangle::new(
                [(x - 0.5, y - 0.5), (x + 0.5, y + 0.5)],
                ViridisRGB.get_color_normalized(*v, low, high).filled(),
            )
        });
        chart.draw_series(cells)?;
        for (i, _) in grid.values.iter().enumerate().filter(|(_, v)| grid.is_missing(**v)) {
            #[expect(clippy::cast_precision_loss, reason = "grid sizes are far below 2^52")]
            let (x, y) = ((i % width) as f64, (i / width) as f64);
            transparent.push((chart.backend_coord(&(x - 0.5, y + 0.5)), chart.backend_coord(&(x + 0.5, y - 0.5))));
        }
        draw_colour_bar(&bar, &grid.units, low, high)?;
        root.present()?;
    }
    save(&buffer, &transparent, output)
}

/// The colour bar: the scale of the values, in their units, ticked on round values.
fn draw_colour_bar(bar: &DrawingArea<BitMapBackend<'_>, Shift>, units: &str, low: f64, high: f64) -> Result<()> {
    let marks = ticks::scale(low, high, 10);
    let mut scale = ChartBuilder::on(bar)
        .margin_top(45)
        .margin_bottom(57)
        .margin_right(10)
        .y_label_area_size(95)
        .caption(units, (FONT, 16))
        .build_cartesian_2d(0f64..1f64, Ticked::new(low..high, &marks))?;
    scale
        .configure_mesh()
        .disable_mesh()
        .disable_x_axis()
        .label_style((FONT, 14))
        .y_label_formatter(&|v| ticks::label_at(&marks, *v))
        .draw()?;
    let steps = 256;
    scale.draw_series((0..steps).map(|s| {
        let (a, b) = (
            low + (high - low) * f64::from(s) / f64::from(steps),
            low + (high - low) * f64::from(s + 1) / f64::from(steps),
        );
        Rectangle::new([(0.0, a), (1.0, b)], ViridisRGB.get_color_normalized(a, low, high).filled())
    }))?;
    Ok(())
}

/// A line of the values against the axis (a time series against its dates);
/// missing values break the line.
fn draw_line(grid: &Grid, x_axis: &Axis, output: &Path) -> Result<()> {
    let (low, high) = prepare(grid)?;
    let margin = (high - low) * 0.05;
    let mut buffer = vec![0u8; (SIZE.0 * SIZE.1 * 3) as usize];
    {
        let root = BitMapBackend::with_buffer(&mut buffer, SIZE).into_drawing_area();
        root.fill(&WHITE)?;
        #[expect(clippy::cast_precision_loss, reason = "lengths are far below 2^52")]
        let n = grid.values.len() as f64;
        let x_marks = x_axis.marks(0.0, (n - 1.0).max(1.0), 7);
        let y_marks = ticks::scale(low - margin, high + margin, 10);
        let mut chart = ChartBuilder::on(&root)
            .caption(&grid.title, (FONT, 20))
            .margin(20)
            // Room for half a date label at the right end.
            .margin_right(70)
            .x_label_area_size(45)
            .y_label_area_size(95)
            .build_cartesian_2d(
                Ticked::new(0.0..(n - 1.0).max(1.0), &x_marks),
                Ticked::new((low - margin)..(high + margin), &y_marks),
            )?;
        let y_desc = if grid.units.is_empty() { "value".to_owned() } else { grid.units.clone() };
        chart
            .configure_mesh()
            .x_desc(x_axis.label.as_str())
            .y_desc(y_desc)
            .label_style((FONT, 14))
            .axis_desc_style((FONT, 16))
            .x_label_formatter(&|x| ticks::label_at(&x_marks, *x))
            .y_label_formatter(&|v| ticks::label_at(&y_marks, *v))
            .draw()?;
        #[expect(clippy::cast_precision_loss, reason = "lengths are far below 2^52")]
        let points: Vec<(f64, f64)> = grid.values.iter().enumerate().map(|(i, &v)| (i as f64, v)).collect();
        for run in points.split(|(_, v)| grid.is_missing(*v)).filter(|run| !run.is_empty()) {
            chart.draw_series(LineSeries::new(run.iter().copied(), BLUE.stroke_width(2)))?;
        }
        root.present()?;
    }
    save(&buffer, &[], output)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grids_flip_rows_and_columns() {
        let mut grid = Grid {
            values: vec![1.0, 2.0, 3.0, 4.0, 5.0, 6.0],
            width: 3,
            fill: None,
            units: String::new(),
            title: String::new(),
        };
        grid.flip_rows();
        assert_eq!(grid.values, [4.0, 5.0, 6.0, 1.0, 2.0, 3.0]);
        grid.flip_columns();
        assert_eq!(grid.values, [6.0, 5.0, 4.0, 3.0, 2.0, 1.0]);
        let mut axis = Axis {
            label: String::new(),
            values: Some(vec![75.0, f64::NAN, 15.0]),
            ticks: Some(vec!["75".into(), "?".into(), "15".into()]),
            dates: false,
        };
        assert!(axis.descends());
        axis.reverse();
        assert!(!axis.descends());
        // A coordinate with a missing value is ticked on its cells.
        let marks = axis.marks(-0.5, 2.5, 8);
        assert_eq!(marks, [(0.0, "15".into()), (1.0, "?".into()), (2.0, "75".into())]);
    }
}
