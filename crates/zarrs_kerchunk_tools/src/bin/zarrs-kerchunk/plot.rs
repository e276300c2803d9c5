//! `plot`: a 2-D slice of an array as a colour image with a colour bar, axes
//! labelled from the coordinate arrays its `_ARRAY_DIMENSIONS` name, and the
//! fill value (and NaN) transparent.

use std::ops::Range;
use std::path::Path;

use plotters::prelude::*;
use plotters::style::colors::colormaps::ViridisRGB;
use serde_json::Value;
use zarrs_kerchunk::ReferenceStore;

use crate::array::{Element, NamedArray, read_json, value_of};
use crate::cat::parse_slice;
use crate::outcome::{Outcome, Result};

const SIZE: (u32, u32) = (900, 600);
const FONT: &str = "sans-serif";

/// One plotted dimension: its name, units and the coordinate of each index, if known.
struct Axis {
    label: String,
    coordinates: Option<Vec<f64>>,
}

pub(crate) fn run(store: &ReferenceStore, path: &str, slice: Option<&str>, output: &Path) -> Result {
    let array = NamedArray::open(store, path)?;
    let name = array.path.trim_start_matches('/').to_owned();
    let attributes = read_json(store, &format!("{name}/.zattrs"))?.unwrap_or(Value::Null);
    let shape = array.shape().to_vec();
    // By default the first index of every dimension but the last two.
    let default: Vec<&str> = (0..shape.len().saturating_sub(2)).map(|_| "0").collect();
    let ranges = parse_slice(slice.unwrap_or(&default.join(",")), &shape)?;
    let plotted: Vec<usize> = (0..shape.len()).filter(|&d| ranges[d].end - ranges[d].start > 1).collect();
    let [rows, columns] = plotted[..] else {
        return Err(format!(
            "the slice leaves {} dimensions longer than 1; plot draws 2 (for example {:?})",
            plotted.len(),
            (0..shape.len()).map(|d| if d + 2 < shape.len() { "0" } else { ":" }).collect::<Vec<_>>().join(",")
        )
        .into());
    };
    let descr = array.descr().unwrap_or("?");
    let (element, bytes) =
        array.read(&ranges)?.ok_or_else(|| format!("/{name}: elements of variable length cannot be plotted"))?;
    if matches!(element, Element::Other(_)) {
        return Err(format!("/{name}: plot draws numbers; {descr} is not a number type").into());
    }
    let values: Vec<f64> = bytes.chunks(element.size()).map(|v| value_of(element, v)).collect();
    let zarray = &array.zarray;
    let fill = match &zarray["fill_value"] {
        Value::Number(n) => n.as_f64(),
        Value::String(s) if s == "NaN" => Some(f64::NAN),
        _ => None,
    };
    // A float32 array holds its fill value rounded to float32 (1e20 is 100000002004087734272).
    #[expect(clippy::cast_possible_truncation, reason = "rounded as the array stores it")]
    let fill = fill.map(|fill| if matches!(element, Element::Float(4)) { f64::from(fill as f32) } else { fill });
    let dims: Vec<String> = attributes["_ARRAY_DIMENSIONS"]
        .as_array()
        .map(|names| names.iter().filter_map(Value::as_str).map(ToOwned::to_owned).collect())
        .unwrap_or_default();
    let axis = |d: usize| axis(store, &name, dims.get(d).map(String::as_str), &ranges[d]);
    let (y_axis, x_axis) = (axis(rows)?, axis(columns)?);
    let title =
        format!("{name}[{}]", ranges.iter().map(|r| format!("{}:{}", r.start, r.end)).collect::<Vec<_>>().join(", "));
    let units = attributes["units"].as_str().unwrap_or("").to_owned();
    let grid = Grid { values, width: usize::try_from(ranges[columns].end - ranges[columns].start)?, fill };
    draw(&grid, &title, &units, &x_axis, &y_axis, output)?;
    println!(
        "wrote {} ({}x{} pixels, {}x{} cells)",
        output.display(),
        SIZE.0,
        SIZE.1,
        grid.width,
        grid.values.len() / grid.width
    );
    Ok(Outcome::Done)
}

/// The values to draw, row by row (row 0 at the bottom).
struct Grid {
    values: Vec<f64>,
    width: usize,
    fill: Option<f64>,
}

impl Grid {
    #[expect(clippy::float_cmp, reason = "the fill value is one exact value, as Zarr compares it")]
    fn is_fill(&self, value: f64) -> bool {
        value.is_nan() || self.fill.is_some_and(|fill| value == fill)
    }
}

/// The axis of dimension `dim`: labelled with the 1-D coordinate array of
/// that name beside the array or at the root, when there is one.
fn axis(store: &ReferenceStore, array: &str, dim: Option<&str>, range: &Range<u64>) -> Result<Axis> {
    let Some(dim) = dim else { return Ok(Axis { label: "index".into(), coordinates: None }) };
    let parent = array.rsplit_once('/').map_or("", |(parent, _)| parent);
    let candidates = [if parent.is_empty() { dim.to_owned() } else { format!("{parent}/{dim}") }, dim.to_owned()];
    for candidate in candidates {
        let Some(zarray) = read_json(store, &format!("{candidate}/.zarray"))? else { continue };
        if zarray["shape"].as_array().map(Vec::len) != Some(1) {
            continue;
        }
        let units = read_json(store, &format!("{candidate}/.zattrs"))?
            .and_then(|attributes| attributes["units"].as_str().map(ToOwned::to_owned));
        let coordinate = NamedArray::with_metadata(store, &candidate, zarray)?;
        let Some((element, bytes)) = coordinate.read(std::slice::from_ref(range))? else { continue };
        if matches!(element, Element::Other(_)) {
            continue;
        }
        let label = units.map_or_else(|| dim.to_owned(), |units| format!("{dim} ({units})"));
        let coordinates = bytes.chunks(element.size()).map(|v| value_of(element, v)).collect();
        return Ok(Axis { label, coordinates: Some(coordinates) });
    }
    Ok(Axis { label: format!("{dim} (index)"), coordinates: None })
}

#[expect(clippy::float_cmp, reason = "one value everywhere needs a range around it")]
fn draw(grid: &Grid, title: &str, units: &str, x_axis: &Axis, y_axis: &Axis, output: &Path) -> Result<()> {
    plotters::style::register_font(FONT, FontStyle::Normal, dejavu::sans::regular())
        .map_err(|_| "the embedded font cannot be read")?;
    let valid = grid.values.iter().copied().filter(|v| !grid.is_fill(*v));
    let (low, high) = valid.fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), v| (lo.min(v), hi.max(v)));
    let (low, high) = if low > high {
        (0.0, 1.0)
    } else if low == high {
        (low - 0.5, high + 0.5)
    } else {
        (low, high)
    };
    let (width, height) = (grid.width, grid.values.len() / grid.width);
    let mut buffer = vec![0u8; (SIZE.0 * SIZE.1 * 3) as usize];
    let mut transparent: Vec<((i32, i32), (i32, i32))> = Vec::new();
    {
        let root = BitMapBackend::with_buffer(&mut buffer, SIZE).into_drawing_area();
        root.fill(&WHITE)?;
        let (main, bar) = root.split_horizontally(SIZE.0 - 130);
        let tick = |coordinates: &Option<Vec<f64>>, position: f64| {
            #[expect(clippy::cast_possible_truncation, clippy::cast_sign_loss, reason = "a cell index on screen")]
            let index = position.floor().max(0.0) as usize;
            match coordinates {
                Some(values) => values.get(index).map_or_else(String::new, |v| format!("{v}")),
                None => format!("{index}"),
            }
        };
        #[expect(clippy::cast_precision_loss, reason = "grid sizes are far below 2^52")]
        let (w, h) = (width as f64, height as f64);
        let mut chart = ChartBuilder::on(&main)
            .caption(title, (FONT, 22))
            .margin(12)
            .x_label_area_size(45)
            .y_label_area_size(70)
            .build_cartesian_2d(0f64..w, 0f64..h)?;
        chart
            .configure_mesh()
            .disable_mesh()
            .x_desc(x_axis.label.as_str())
            .y_desc(y_axis.label.as_str())
            .label_style((FONT, 14))
            .axis_desc_style((FONT, 16))
            .x_label_formatter(&|x| tick(&x_axis.coordinates, *x))
            .y_label_formatter(&|y| tick(&y_axis.coordinates, *y))
            .draw()?;
        let cells = grid.values.iter().enumerate().filter(|(_, v)| !grid.is_fill(**v)).map(|(i, v)| {
            #[expect(clippy::cast_precision_loss, reason = "grid sizes are far below 2^52")]
            let (x, y) = ((i % width) as f64, (i / width) as f64);
            Rectangle::new([(x, y), (x + 1.0, y + 1.0)], ViridisRGB.get_color_normalized(*v, low, high).filled())
        });
        chart.draw_series(cells)?;
        for (i, _) in grid.values.iter().enumerate().filter(|(_, v)| grid.is_fill(**v)) {
            #[expect(clippy::cast_precision_loss, reason = "grid sizes are far below 2^52")]
            let (x, y) = ((i % width) as f64, (i / width) as f64);
            transparent.push((chart.backend_coord(&(x, y + 1.0)), chart.backend_coord(&(x + 1.0, y))));
        }

        let mut scale = ChartBuilder::on(&bar)
            .margin_top(45)
            .margin_bottom(57)
            .margin_right(10)
            .y_label_area_size(75)
            .caption(units, (FONT, 16))
            .build_cartesian_2d(0f64..1f64, low..high)?;
        scale.configure_mesh().disable_mesh().disable_x_axis().label_style((FONT, 14)).draw()?;
        let steps = 256;
        scale.draw_series((0..steps).map(|s| {
            let (a, b) = (
                low + (high - low) * f64::from(s) / f64::from(steps),
                low + (high - low) * f64::from(s + 1) / f64::from(steps),
            );
            Rectangle::new([(0.0, a), (1.0, b)], ViridisRGB.get_color_normalized(a, low, high).filled())
        }))?;
        root.present()?;
    }
    let mut rgba = image::RgbaImage::from_fn(SIZE.0, SIZE.1, |x, y| {
        let at = ((y * SIZE.0 + x) * 3) as usize;
        image::Rgba([buffer[at], buffer[at + 1], buffer[at + 2], 255])
    });
    // Fill values are drawn as nothing at all: the cells become transparent.
    for ((left, top), (right, bottom)) in transparent {
        for y in top.max(0)..bottom.min(i32::try_from(SIZE.1)?) {
            for x in left.max(0)..right.min(i32::try_from(SIZE.0)?) {
                rgba.put_pixel(u32::try_from(x)?, u32::try_from(y)?, image::Rgba([0, 0, 0, 0]));
            }
        }
    }
    rgba.save(output).map_err(|e| format!("cannot write {}: {e}", output.display()))?;
    Ok(())
}
