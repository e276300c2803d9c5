//! GeoTIFF's georeferencing: the GeoKeys (as attributes, named as tifffile
//! names them, which kerchunk copies), the affine transform from pixels to
//! the model's coordinates, and the CRS as an EPSG code and its WKT.

use serde_json::{Map, Value, json};

use crate::tiff::ifd::{Ifd, tag};

/// GeoKey ids and the names tifffile gives them (the GeoTIFF 1.0 names, but
/// `GeogAngularUnitsSizeGeoKey`), which kerchunk writes as attributes.
const GEO_KEY_NAMES: [(u64, &str); 48] = [
    (1024, "GTModelTypeGeoKey"),
    (1025, "GTRasterTypeGeoKey"),
    (1026, "GTCitationGeoKey"),
    (2048, "GeographicTypeGeoKey"),
    (2049, "GeogCitationGeoKey"),
    (2050, "GeogGeodeticDatumGeoKey"),
    (2051, "GeogPrimeMeridianGeoKey"),
    (2052, "GeogLinearUnitsGeoKey"),
    (2053, "GeogLinearUnitSizeGeoKey"),
    (2054, "GeogAngularUnitsGeoKey"),
    (2055, "GeogAngularUnitsSizeGeoKey"),
    (2056, "GeogEllipsoidGeoKey"),
    (2057, "GeogSemiMajorAxisGeoKey"),
    (2058, "GeogSemiMinorAxisGeoKey"),
    (2059, "GeogInvFlatteningGeoKey"),
    (2060, "GeogAzimuthUnitsGeoKey"),
    (2061, "GeogPrimeMeridianLongGeoKey"),
    (2062, "GeogTOWGS84GeoKey"),
    (3059, "ProjLinearUnitsInterpCorrectGeoKey"),
    (3072, "ProjectedCSTypeGeoKey"),
    (3073, "PCSCitationGeoKey"),
    (3074, "ProjectionGeoKey"),
    (3075, "ProjCoordTransGeoKey"),
    (3076, "ProjLinearUnitsGeoKey"),
    (3077, "ProjLinearUnitSizeGeoKey"),
    (3078, "ProjStdParallel1GeoKey"),
    (3079, "ProjStdParallel2GeoKey"),
    (3080, "ProjNatOriginLongGeoKey"),
    (3081, "ProjNatOriginLatGeoKey"),
    (3082, "ProjFalseEastingGeoKey"),
    (3083, "ProjFalseNorthingGeoKey"),
    (3084, "ProjFalseOriginLongGeoKey"),
    (3085, "ProjFalseOriginLatGeoKey"),
    (3086, "ProjFalseOriginEastingGeoKey"),
    (3087, "ProjFalseOriginNorthingGeoKey"),
    (3088, "ProjCenterLongGeoKey"),
    (3089, "ProjCenterLatGeoKey"),
    (3090, "ProjCenterEastingGeoKey"),
    (3091, "ProjCenterNorthingGeoKey"),
    (3092, "ProjScaleAtNatOriginGeoKey"),
    (3093, "ProjScaleAtCenterGeoKey"),
    (3094, "ProjAzimuthAngleGeoKey"),
    (3095, "ProjStraightVertPoleLongGeoKey"),
    (3096, "ProjRectifiedGridAngleGeoKey"),
    (4096, "VerticalCSTypeGeoKey"),
    (4097, "VerticalCitationGeoKey"),
    (4098, "VerticalDatumGeoKey"),
    (4099, "VerticalUnitsGeoKey"),
];

/// GeoTIFF's code for "user-defined": no EPSG code.
const USER_DEFINED: i64 = 32767;

/// The georeferencing of the full-resolution image.
#[derive(Debug, Default)]
pub(crate) struct Georeference {
    /// The GeoKeys and model tags as tifffile's `geotiff_tags` gives them.
    pub(crate) attributes: Map<String, Value>,
    /// GDAL's geotransform `[x0, dx, rx, y0, ry, dy]`: the model
    /// coordinates of the outer corner of pixel (0, 0), and a pixel's steps.
    pub(crate) transform: Option<[f64; 6]>,
    /// The CRS's EPSG code, where the GeoKeys give one.
    pub(crate) epsg: Option<i64>,
    /// Whether the CRS is geographic (degrees), not projected.
    pub(crate) geographic: bool,
    /// Whether pixel values are areas (`GTRasterTypeGeoKey` 1, the default), not points.
    pub(crate) area: bool,
}

impl Georeference {
    /// The georeferencing of `ifd`, from its GeoKeys and its model tags; an
    /// IFD with neither has none (`None`).
    pub(crate) fn read(ifd: &Ifd) -> Option<Self> {
        let keys = ifd.unsigned(tag::GEO_KEY_DIRECTORY);
        let scale = ifd.floats(tag::MODEL_PIXEL_SCALE);
        let tiepoint = ifd.floats(tag::MODEL_TIEPOINT);
        let matrix = ifd.floats(tag::MODEL_TRANSFORMATION);
        if keys.is_none() && scale.is_none() && tiepoint.is_none() && matrix.is_none() {
            return None;
        }
        let mut geo = Self { area: true, ..Self::default() };
        if let Some(keys) = keys {
            geo.read_keys(ifd, keys);
        }
        let number = |v: f64| json!(v);
        if let Some(scale) = &scale {
            geo.attributes.insert("ModelPixelScale".into(), scale.iter().copied().map(number).collect());
        }
        if let Some(tiepoint) = &tiepoint {
            let points: Vec<Value> =
                tiepoint.chunks(6).map(|p| p.iter().copied().map(number).collect::<Value>()).collect();
            let value = if points.len() == 1 { points[0].clone() } else { Value::Array(points) };
            geo.attributes.insert("ModelTiepoint".into(), value);
        }
        if let Some(matrix) = matrix.as_ref().filter(|m| m.len() == 16) {
            let rows: Vec<Value> = matrix.chunks(4).map(|r| r.iter().copied().map(number).collect()).collect();
            geo.attributes.insert("ModelTransformation".into(), Value::Array(rows));
        }
        geo.transform = transform(scale.as_deref(), tiepoint.as_deref(), matrix.as_deref(), geo.area);
        Some(geo)
    }

    fn read_keys(&mut self, ifd: &Ifd, keys: &[u64]) {
        if keys.len() < 4 || keys[0] != 1 {
            return;
        }
        for (name, value) in [("KeyDirectoryVersion", keys[0]), ("KeyRevision", keys[1]), ("KeyRevisionMinor", keys[2])]
        {
            self.attributes.insert(name.into(), json!(value));
        }
        let declared = usize::try_from(keys[3]).unwrap_or(usize::MAX);
        for key in keys[4..].chunks_exact(4).take(declared) {
            let (id, location, count, offset) = (key[0], key[1], key[2], key[3]);
            let (Ok(count), Ok(offset)) = (usize::try_from(count), usize::try_from(offset)) else { continue };
            let value = match u16::try_from(location).unwrap_or(0) {
                0 => json!(offset),
                tag::GEO_ASCII_PARAMS => {
                    let Some(text) = ifd.text(tag::GEO_ASCII_PARAMS) else { continue };
                    let Some(part) = text.get(offset..offset.saturating_add(count).min(text.len())) else { continue };
                    json!(if count > 1 { part.strip_suffix('|').unwrap_or(part) } else { part })
                }
                tag::GEO_DOUBLE_PARAMS => {
                    let Some(doubles) = ifd.floats(tag::GEO_DOUBLE_PARAMS) else { continue };
                    let Some(part) = doubles.get(offset..offset.saturating_add(count)) else { continue };
                    if count == 1 { json!(part[0]) } else { json!(part) }
                }
                _ => continue,
            };
            if let Some(number) = value.as_i64() {
                match id {
                    1024 => self.geographic = number == 2,
                    1025 => self.area = number != 2,
                    2048 if self.epsg.is_none() => self.epsg = Some(number).filter(|&c| c != USER_DEFINED),
                    3072 => self.epsg = Some(number).filter(|&c| c != USER_DEFINED),
                    _ => {}
                }
            }
            let name =
                GEO_KEY_NAMES.iter().find(|(k, _)| *k == id).map_or_else(|| id.to_string(), |(_, n)| (*n).into());
            self.attributes.insert(name, value);
        }
        // A projected CRS's code wins over its geographic base, whichever came first.
        if !self.geographic
            && let Some(code) = self.attributes.get("ProjectedCSTypeGeoKey").and_then(Value::as_i64)
        {
            self.epsg = Some(code).filter(|&c| c != USER_DEFINED);
        }
    }

    /// The CRS as OGC WKT 1, from the EPSG table of `crs-definitions`
    /// (no PROJ); `None` for a code the table lacks.
    pub(crate) fn wkt(&self) -> Option<&'static str> {
        let code = u16::try_from(self.epsg?).ok()?;
        crs_definitions::from_code(code).map(|def| def.wkt)
    }
}

/// GDAL's geotransform from the model tags: a pixel scale and one tiepoint,
/// or a transformation matrix. For pixels that are points
/// (`GTRasterTypeGeoKey` 2) the tiepoint names the pixel's centre, so the
/// corner is half a pixel before it, as GDAL reads it.
fn transform(scale: Option<&[f64]>, tiepoint: Option<&[f64]>, matrix: Option<&[f64]>, area: bool) -> Option<[f64; 6]> {
    let shift = if area { 0.0 } else { 0.5 };
    if let Some(m) = matrix.filter(|m| m.len() == 16) {
        // X = m0 col + m1 row + m3, Y = m4 col + m5 row + m7.
        return Some([m[3] - (m[0] + m[1]) * shift, m[0], m[1], m[7] - (m[4] + m[5]) * shift, m[4], m[5]]);
    }
    let (scale, tie) = (scale.filter(|s| s.len() >= 2)?, tiepoint.filter(|t| t.len() >= 6)?);
    let (i, j, x, y) = (tie[0] + shift, tie[1] + shift, tie[3], tie[4]);
    Some([x - i * scale[0], scale[0], 0.0, y + j * scale[1], 0.0, -scale[1]])
}
