//! TIFF, GeoTIFF and COG files scanned into references: each image (the
//! full resolution and its overviews) an array whose chunks are the file's
//! tiles or strips, decoded through the codec ids tifffile writes, with the
//! coordinates and CRS rioxarray reads.
//!
//! The layout, a dataset xarray and rioxarray open as it is:
//!
//! ```text
//! .zattrs            multiscales (OME-NGFF 0.4), GeoKeys and GDAL's dataset metadata
//! band_data          (band, y, x), or (y, x, band) where a pixel's samples are stored together
//! x, y               pixel centres, from the geotransform (absent where it is rotated)
//! band               1..=N
//! spatial_ref        0-d; crs_wkt, spatial_ref, GeoTransform, proj:code
//! overview_1/...     the same, for each reduced-resolution image (tifffile's level 1...)
//! ```
//!
//! `xr.open_dataset` opens the full resolution, and `group="overview_N"` an
//! overview. `xr.open_datatree` cannot hold the overviews under it: xarray
//! wants a child's `x` and `y` to be its parent's.
//!
//! kerchunk's `tiff_to_zarr` (tifffile's `write_fsspec`) writes a single
//! image as the root array `Y, X` and a pyramid as arrays `0`, `1`... with
//! the GeoKeys as attributes but no coordinates and no CRS. The chunk
//! ranges, compressors and filters are the same; the differences are
//! listed in the crate docs.

mod codec;
mod gdal;
mod geo;
mod ifd;

use std::ops::Range;

use bytes::Bytes;
use kerchunk::{ReferenceSet, ReferenceSetBuilder};
use serde_json::{Map, Value, json};

use crate::error::ScanError;
use crate::options::{ScanOptions, Skipped, UnsupportedArrays};
use crate::read::BlockReader;
use crate::zarr::json::{attributes_json, chunk_key, f64_bytes, i64_bytes, inline_array, zarray};
use geo::Georeference;
use ifd::{Ifd, IfdError, Tiff, tag};

pub(crate) use ifd::is_tiff;

/// `NewSubfileType`'s bits: a reduced-resolution image, a transparency mask.
const REDUCED: u64 = 1;
const MASK: u64 = 4;

fn tiff_error(url: &str, reason: String) -> ScanError {
    ScanError::Tiff { url: url.to_owned(), reason }
}

/// The references of the TIFF `reader` reads (named `url`), and what was left out.
pub(crate) async fn scan(
    reader: &mut BlockReader<'_>,
    url: &str,
    options: &ScanOptions,
) -> Result<(ReferenceSet, Vec<Skipped>), ScanError> {
    let tiff = ifd::read(reader, options.max_header_bytes).await.map_err(|error| match error {
        IfdError::Malformed(reason) => tiff_error(url, reason),
        IfdError::TooLarge => ScanError::HeaderTooLarge { url: url.to_owned(), limit: options.max_header_bytes },
        IfdError::Read(error) => error,
    })?;
    let mut skipped = Vec::new();
    let (main, overviews) = pyramid(&tiff, &mut skipped);
    let first = image(reader, &tiff, main, url).await?.map_err(|reason| tiff_error(url, reason))?;
    let mut levels = vec![first];
    for (n, ifd) in overviews {
        match image(reader, &tiff, ifd, url).await? {
            Ok(image) => levels.push(image),
            Err(reason) if options.unsupported == UnsupportedArrays::Skip => {
                skipped.push(Skipped { path: format!("the IFD at byte {} (overview {n})", ifd.offset), reason });
            }
            Err(reason) => return Err(tiff_error(url, format!("the IFD at byte {}: {reason}", ifd.offset))),
        }
    }
    // Every level's `x` and `y` are held in the references: 8 bytes a column and a row, within
    // the header limit.
    let axes =
        levels.iter().fold(0u64, |sum, l| sum.saturating_add(l.width.saturating_add(l.height).saturating_mul(8)));
    if axes > options.max_header_bytes {
        return Err(tiff_error(
            url,
            format!(
                "an image of {} × {} pixels, whose x and y ({axes} bytes, with its overviews') pass the {} of ScanOptions::with_max_header_bytes",
                levels[0].width, levels[0].height, options.max_header_bytes
            ),
        ));
    }
    let chunks: u64 = levels.iter().map(|l| l.offsets.len() as u64).sum();
    if chunks > options.max_references {
        return Err(tiff_error(
            url,
            format!("{chunks} tiles, over the {} of ScanOptions::with_max_references", options.max_references),
        ));
    }
    let structural = gdal::structural(reader, tiff.wide_offsets).await?;
    let inlined = small_chunks(reader, &levels, options.inline_threshold.unwrap_or(0)).await?;
    let references = build(url, (&levels, &inlined, main, structural), &mut skipped);
    Ok((references, skipped))
}

/// A level's chunks held inline: each by its place in the level's table, with its bytes.
type Inlined = Vec<(usize, Bytes)>;

/// Each level's chunks stored in fewer than `threshold` bytes (kerchunk's
/// `inline_threshold`), read.
async fn small_chunks(
    reader: &mut BlockReader<'_>,
    levels: &[Image<'_>],
    threshold: u64,
) -> Result<Vec<Inlined>, ScanError> {
    let mut inlined = Vec::with_capacity(levels.len());
    for level in levels {
        let (places, ranges): (Vec<usize>, Vec<Range<u64>>) = level
            .offsets
            .iter()
            .zip(level.counts)
            .enumerate()
            .filter(|&(_, (&offset, &count))| offset > 0 && count > 0 && count < threshold)
            .map(|(n, (&offset, &count))| (n, offset..offset + count))
            .unzip();
        let bytes = if ranges.is_empty() { Vec::new() } else { reader.read_exact_ranges(&ranges).await? };
        inlined.push(places.into_iter().zip(bytes).collect());
    }
    Ok(inlined)
}

/// The full-resolution image (the first IFD that is neither reduced nor a
/// mask, else the first) and its overviews (the reduced ones after it,
/// numbered from 1); every other IFD is named in `skipped`.
fn pyramid<'t>(tiff: &'t Tiff, skipped: &mut Vec<Skipped>) -> (&'t Ifd, Vec<(usize, &'t Ifd)>) {
    let kind = |ifd: &Ifd| ifd.first(tag::NEW_SUBFILE_TYPE, 0);
    let main_at = tiff.ifds.iter().position(|i| kind(i) & (REDUCED | MASK) == 0).unwrap_or(0);
    let mut overviews = Vec::new();
    for (at, ifd) in tiff.ifds.iter().enumerate() {
        if at == main_at {
            continue;
        }
        let reason = if kind(ifd) & MASK != 0 {
            "a transparency mask (GDAL's internal mask): masks are not scanned"
        } else if kind(ifd) & REDUCED != 0 && at > main_at {
            overviews.push((overviews.len() + 1, ifd));
            continue;
        } else {
            "another image than the first (tifffile's series[0] is the first too)"
        };
        skipped.push(Skipped { path: format!("the IFD at byte {}", ifd.offset), reason: reason.into() });
    }
    (&tiff.ifds[main_at], overviews)
}

/// One image's chunk grid and its chunks' places in the file.
#[derive(Debug)]
struct Image<'t> {
    width: u64,
    height: u64,
    samples: u64,
    /// The samples of a pixel are stored together (`PlanarConfiguration` 1, several samples).
    interleaved: bool,
    /// Rows and columns of a chunk (a tile, or a strip the image wide).
    block: (u64, u64),
    dtype: String,
    pipeline: codec::Pipeline,
    /// The IFD's tables, as read (no copy).
    offsets: &'t [u64],
    counts: &'t [u64],
}

impl Image<'_> {
    /// The data array's shape and chunk shape, and its dimension names.
    fn layout(&self) -> ([u64; 3], [u64; 3], [&'static str; 3]) {
        let (rows, cols) = self.block;
        if self.interleaved {
            ([self.height, self.width, self.samples], [rows, cols, self.samples], ["y", "x", "band"])
        } else {
            ([self.samples, self.height, self.width], [1, rows, cols], ["band", "y", "x"])
        }
    }

    /// The chunk indices of the `n`th tile or strip of the file's table.
    fn chunk_indices(&self, n: u64) -> [u64; 3] {
        let across = self.width.div_ceil(self.block.1);
        let down = self.height.div_ceil(self.block.0);
        // `image` checked across × down × planes (with checked_mul) against the table's length.
        let (plane, within) = (n / (across * down), n % (across * down));
        let (row, col) = (within / across, within % across);
        if self.interleaved { [row, col, 0] } else { [plane, row, col] }
    }
}

/// `ifd` as an [`Image`]; `Ok(Err(reason))` where references cannot express it.
async fn image<'t>(
    reader: &mut BlockReader<'_>,
    tiff: &Tiff,
    ifd: &'t Ifd,
    url: &str,
) -> Result<Result<Image<'t>, String>, ScanError> {
    let size = reader.size();
    let (width, height) = (ifd.first(tag::IMAGE_WIDTH, 0), ifd.first(tag::IMAGE_LENGTH, 0));
    let samples = ifd.first(tag::SAMPLES_PER_PIXEL, 1);
    // SamplesPerPixel is a SHORT: more is a damaged file (and a `band` axis that long).
    if width == 0 || height == 0 || samples == 0 || samples > u64::from(u16::MAX) {
        return Ok(Err(format!("an image of {width} × {height} pixels of {samples} samples")));
    }
    let interleaved = ifd.first(tag::PLANAR_CONFIGURATION, 1) == 1 && samples > 1;
    let (block, offsets, counts) = if let Some(offsets) = ifd.unsigned(tag::TILE_OFFSETS) {
        let block = (ifd.first(tag::TILE_LENGTH, 0), ifd.first(tag::TILE_WIDTH, 0));
        (block, offsets, ifd.unsigned(tag::TILE_BYTE_COUNTS))
    } else if let Some(offsets) = ifd.unsigned(tag::STRIP_OFFSETS) {
        let rows = ifd.first(tag::ROWS_PER_STRIP, height).min(height);
        if rows > 0 && height % rows != 0 {
            return Ok(Err(format!(
                "strips of {rows} rows, which do not divide its {height} rows: the last is short, and a zarr chunk cannot be (tifffile refuses too)"
            )));
        }
        ((rows, width), offsets, ifd.unsigned(tag::STRIP_BYTE_COUNTS))
    } else {
        return Ok(Err("neither tiles nor strips".into()));
    };
    let Some(counts) = counts else { return Ok(Err("no byte counts for its tiles or strips".into())) };
    if block.0 == 0 || block.1 == 0 {
        return Ok(Err(format!("tiles of {} × {} pixels", block.1, block.0)));
    }
    let planes = if interleaved { 1 } else { samples };
    let expected = width.div_ceil(block.1).checked_mul(height.div_ceil(block.0)).and_then(|n| n.checked_mul(planes));
    if expected != Some(offsets.len() as u64) || counts.len() != offsets.len() {
        return Err(tiff_error(
            url,
            format!(
                "the IFD at byte {}: {} offsets and {} byte counts for an image of {} chunks",
                ifd.offset,
                offsets.len(),
                counts.len(),
                expected.map_or_else(|| "too many".to_owned(), |n| n.to_string())
            ),
        ));
    }
    for (n, (&offset, &count)) in offsets.iter().zip(counts).enumerate() {
        if count > 0 && offset.checked_add(count).is_none_or(|end| end > size) {
            return Err(tiff_error(
                url,
                format!(
                    "the IFD at byte {}: chunk {n} ({count} bytes at byte {offset}) runs past the end of the file ({size})",
                    ifd.offset
                ),
            ));
        }
    }
    let dtype = match codec::dtype(ifd, tiff.big_endian) {
        Ok(dtype) => dtype,
        Err(reason) => return Ok(Err(reason)),
    };
    let chunk = if interleaved { vec![block.0, block.1, samples] } else { vec![1, block.0, block.1] };
    let jfif = is_jfif(reader, ifd, offsets, counts).await?;
    let pipeline = match codec::pipeline(ifd, &dtype, &chunk, jfif) {
        Ok(pipeline) => pipeline,
        Err(reason) => return Ok(Err(reason)),
    };
    Ok(Ok(Image { width, height, samples, interleaved, block, dtype, pipeline, offsets, counts }))
}

/// Whether the first JPEG tile of an RGB image carries a JFIF marker, as
/// tifffile's `is_jfif` reads it (4 bytes at its 7th): then libjpeg, not
/// the TIFF, says its colour space. Read only where it matters.
async fn is_jfif(reader: &mut BlockReader<'_>, ifd: &Ifd, offsets: &[u64], counts: &[u64]) -> Result<bool, ScanError> {
    let jpeg = matches!(ifd.first(tag::COMPRESSION, 1), 7 | 33007 | 34892);
    let (Some(&offset), Some(&count)) = (offsets.first(), counts.first()) else { return Ok(false) };
    if !jpeg || ifd.first(tag::PHOTOMETRIC, 1) != 2 || offset == 0 || count < 11 {
        return Ok(false);
    }
    Ok(&reader.read(offset + 6..offset + 10).await?[..] == b"JFIF")
}

/// The references of the images `levels` (the full resolution first), with
/// the chunks `inlined` held inline, the georeferencing and metadata of
/// `main` and GDAL's `structural` metadata.
fn build(
    url: &str,
    (levels, inlined, main, structural): (&[Image<'_>], &[Inlined], &Ifd, Map<String, Value>),
    skipped: &mut Vec<Skipped>,
) -> ReferenceSet {
    let geo = Georeference::read(main);
    let fill = fill_value(main, &levels[0].dtype, skipped);
    let mut builder = ReferenceSetBuilder::new();
    builder.insert_inline(".zgroup", br#"{"zarr_format":2}"#);
    let mut root = Map::new();
    root.insert("multiscales".into(), multiscales(levels, geo.as_ref()));
    root.extend(structural);
    if let Some(geo) = &geo {
        root.extend(geo.attributes.clone());
    }
    let items = main.text(tag::GDAL_METADATA).map(gdal::items).unwrap_or_default();
    root.extend(gdal::dataset_attributes(&items));
    builder.insert_inline(".zattrs", &serde_json::to_vec(&Value::Object(root)).unwrap_or_default());
    for (n, (level, inlined)) in levels.iter().zip(inlined).enumerate() {
        let group = if n == 0 { String::new() } else { format!("overview_{n}/") };
        if n > 0 {
            builder.insert_inline(&format!("{group}.zgroup"), br#"{"zarr_format":2}"#);
        }
        let transform = geo.as_ref().and_then(|g| g.transform).map(|t| scaled(t, &levels[0], level));
        let mut attributes = Map::new();
        if let Some(geo) = &geo {
            attributes.insert("grid_mapping".into(), json!("spatial_ref"));
            // xarray makes the arrays of `coordinates` coordinates, as rioxarray has `spatial_ref`.
            attributes.insert("coordinates".into(), json!("spatial_ref"));
            // As GDAL names the raster type (GTRasterTypeGeoKey), and rioxarray keeps it.
            attributes.insert("AREA_OR_POINT".into(), json!(if geo.area { "Area" } else { "Point" }));
        }
        attributes.extend(gdal::band_attributes(&items, level.samples));
        data_array(&mut builder, (url, &group), (level, inlined), &fill, attributes);
        coordinates(&mut builder, &group, level, geo.as_ref(), transform);
    }
    builder.build()
}

fn data_array(
    builder: &mut ReferenceSetBuilder,
    (url, group): (&str, &str),
    (level, inlined): (&Image<'_>, &[(usize, Bytes)]),
    fill: &Value,
    attributes: Map<String, Value>,
) {
    let (shape, chunks, dimensions) = level.layout();
    let path = format!("{group}band_data");
    let filters = if level.pipeline.filters.is_empty() { Value::Null } else { json!(level.pipeline.filters) };
    builder.insert_inline(
        &format!("{path}/.zarray"),
        &zarray(&shape, &chunks, &level.dtype, fill, (&level.pipeline.compressor, &filters)),
    );
    builder.insert_inline(&format!("{path}/.zattrs"), &attributes_json(attributes, &dimensions));
    let mut inlined = inlined.iter().peekable();
    for (n, (&offset, &count)) in level.offsets.iter().zip(level.counts).enumerate() {
        // A tile never written (GDAL's SPARSE_OK) reads as the fill value, as GDAL reads it.
        if offset == 0 || count == 0 {
            continue;
        }
        let key = chunk_key(&path, &level.chunk_indices(n as u64));
        match inlined.next_if(|(at, _)| *at == n) {
            Some((_, bytes)) => builder.insert_inline(&key, bytes),
            None => builder.insert_range(&key, Some(url), offset, count),
        }
    }
}

/// `x`, `y`, `band` and `spatial_ref` of one level.
fn coordinates(
    builder: &mut ReferenceSetBuilder,
    group: &str,
    level: &Image<'_>,
    geo: Option<&Georeference>,
    transform: Option<[f64; 6]>,
) {
    let bands: Vec<i64> = (1..=i64::try_from(level.samples).unwrap_or(i64::MAX)).collect();
    inline_array(builder, &format!("{group}band"), ("<i8", &[level.samples], &i64_bytes(bands)), Map::new(), &["band"]);
    let Some(geo) = geo else { return };
    // Pixel centres, as rioxarray computes them; none where the grid is rotated.
    if let Some([x0, dx, 0.0, y0, 0.0, dy]) = transform {
        #[allow(clippy::cast_precision_loss)] // A TIFF is at most 2^32 pixels wide.
        let axis = |start: f64, step: f64, n: u64| f64_bytes((0..n).map(move |i| start + (i as f64 + 0.5) * step));
        let (x_attributes, y_attributes) = axis_attributes(geo.geographic);
        let x = axis(x0, dx, level.width);
        let y = axis(y0, dy, level.height);
        inline_array(builder, &format!("{group}x"), ("<f8", &[level.width], &x), x_attributes, &["x"]);
        inline_array(builder, &format!("{group}y"), ("<f8", &[level.height], &y), y_attributes, &["y"]);
    }
    let mut attributes = Map::new();
    if let Some(wkt) = geo.wkt() {
        attributes.insert("crs_wkt".into(), json!(wkt));
        attributes.insert("spatial_ref".into(), json!(wkt));
    } else if let Some(code) = geo.epsg {
        // rioxarray reads a CRS from its code where no WKT is given.
        attributes.insert("spatial_ref".into(), json!(format!("EPSG:{code}")));
    }
    if let Some(code) = geo.epsg {
        attributes.insert("proj:code".into(), json!(format!("EPSG:{code}")));
    }
    if let Some(t) = transform {
        let text: Vec<String> = t.iter().map(|v| format!("{v:?}")).collect();
        attributes.insert("GeoTransform".into(), json!(text.join(" ")));
    }
    inline_array(builder, &format!("{group}spatial_ref"), ("<i8", &[], &0i64.to_le_bytes()), attributes, &[]);
}

/// rioxarray's attributes of `x` and `y`.
fn axis_attributes(geographic: bool) -> (Map<String, Value>, Map<String, Value>) {
    let (x, y) = if geographic {
        (
            json!({"axis": "X", "long_name": "longitude", "standard_name": "longitude", "units": "degrees_east"}),
            json!({"axis": "Y", "long_name": "latitude", "standard_name": "latitude", "units": "degrees_north"}),
        )
    } else {
        (
            json!({"axis": "X", "long_name": "x coordinate of projection", "standard_name": "projection_x_coordinate", "units": "metre"}),
            json!({"axis": "Y", "long_name": "y coordinate of projection", "standard_name": "projection_y_coordinate", "units": "metre"}),
        )
    };
    let map = |v: Value| if let Value::Object(m) = v { m } else { Map::new() };
    (map(x), map(y))
}

/// The geotransform of `level`, an overview of `full`: the same corner,
/// pixels larger by the ratio of the sizes (as GDAL derives it).
fn scaled(t: [f64; 6], full: &Image<'_>, level: &Image<'_>) -> [f64; 6] {
    #[allow(clippy::cast_precision_loss)] // Image sizes are far below 2^52.
    let (sx, sy) = (full.width as f64 / level.width as f64, full.height as f64 / level.height as f64);
    [t[0], t[1] * sx, t[2] * sy, t[3], t[4] * sx, t[5] * sy]
}

/// OME-NGFF 0.4 `multiscales`: each level's data array, its scale and the
/// corner of its first pixel (y first), as tifffile writes them.
fn multiscales(levels: &[Image<'_>], geo: Option<&Georeference>) -> Value {
    let transform = geo.and_then(|g| g.transform);
    let datasets: Vec<Value> = levels
        .iter()
        .enumerate()
        .map(|(n, level)| {
            let path = if n == 0 { "band_data".to_owned() } else { format!("overview_{n}/band_data") };
            let t = transform.map_or([0.0, 1.0, 0.0, 0.0, 0.0, 1.0], |t| scaled(t, &levels[0], level));
            let (scale, translation) = if level.interleaved {
                (json!([t[5], t[1], 1.0]), json!([t[3], t[0], 0.0]))
            } else {
                (json!([1.0, t[5], t[1]]), json!([0.0, t[3], t[0]]))
            };
            json!({"path": path, "coordinateTransformations": [
                {"type": "scale", "scale": scale}, {"type": "translation", "translation": translation}]})
        })
        .collect();
    let (_, _, dimensions) = levels[0].layout();
    let axes: Vec<Value> = dimensions
        .iter()
        .map(|&d| if d == "band" { json!({"name": d, "type": "channel"}) } else { json!({"name": d, "type": "space"}) })
        .collect();
    json!([{"version": "0.4", "name": "", "axes": axes, "datasets": datasets}])
}

/// The fill value: the file's nodata (`GDAL_NODATA`) in the data's type, or
/// none (null) where it has none, so that no real value is masked.
fn fill_value(main: &Ifd, dtype: &str, skipped: &mut Vec<Skipped>) -> Value {
    let Some(text) = main.text(tag::GDAL_NODATA) else { return Value::Null };
    let Some(nodata) = gdal::nodata(text) else {
        skipped.push(Skipped { path: "band_data".into(), reason: format!("GDAL_NODATA {text:?} is not a number") });
        return Value::Null;
    };
    if dtype.contains('f') {
        // The value the data can hold: GDAL's text may have more digits than a float32.
        #[allow(clippy::cast_possible_truncation)]
        let nodata = if dtype.ends_with('4') { f64::from(nodata as f32) } else { nodata };
        return if nodata.is_nan() {
            json!("NaN")
        } else if nodata.is_infinite() {
            json!(if nodata > 0.0 { "Infinity" } else { "-Infinity" })
        } else {
            json!(nodata)
        };
    }
    let bits = dtype[2..].parse::<i32>().unwrap_or(1) * 8;
    let (low, high) = if dtype.contains('u') {
        (0.0, 2f64.powi(bits) - 1.0)
    } else {
        (-(2f64.powi(bits - 1)), 2f64.powi(bits - 1) - 1.0)
    };
    if nodata.fract() == 0.0 && (low..=high).contains(&nodata) {
        #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)] // Whole, in the type's range.
        return if nodata >= 0.0 { json!(nodata as u64) } else { json!(nodata as i64) };
    }
    skipped.push(Skipped {
        path: "band_data".into(),
        reason: format!("GDAL_NODATA {text:?} is no value of {dtype}, so there is no fill value"),
    });
    Value::Null
}
