//! A grid definition section (3) read: cfgrib's grid keys for the
//! attributes (the coordinates are `grib_grids`').

use serde_json::{Map, Value, json};

/// The (rows, columns) of the grid and cfgrib's grid keys for its type.
pub(crate) fn attributes(
    grid_type: &str,
    grid: &[u8],
    attributes: &mut Map<String, Value>,
) -> Result<(u64, u64), String> {
    let raw = |from: usize, to: usize| -> Result<i64, String> {
        let bytes = grid
            .get(from - 1..to)
            .ok_or_else(|| format!("the grid section is {} octets, short of octet {to}", grid.len()))?;
        Ok(bytes.iter().fold(0i64, |n, &b| (n << 8) | i64::from(b)))
    };
    let signed = |from: usize, to: usize| -> Result<i64, String> {
        let value = raw(from, to)?;
        let sign = 1i64 << (8 * (to + 1 - from) - 1);
        Ok(if value & sign == 0 { value } else { -(value & (sign - 1)) })
    };
    #[expect(clippy::cast_precision_loss, reason = "angles in micro-degrees, below 2^32")]
    let degrees = |v: i64| v as f64 / 1e6;
    #[expect(clippy::cast_precision_loss, reason = "lengths in millimetres, below 2^32")]
    let millimetres = |v: i64| v as f64 / 1000.0;
    let (nx, ny) = (raw(31, 34)?, raw(35, 38)?);
    let mut put = |key: &str, value: Value| {
        attributes.insert(format!("GRIB_{key}"), value);
    };
    let scanning = |octet: usize| -> Result<[i64; 3], String> {
        let mode = raw(octet, octet)?;
        Ok([(mode >> 7) & 1, (mode >> 5) & 1, (mode >> 6) & 1])
    };
    match grid_type {
        "regular_ll" | "rotated_ll" => {
            let [i_negative, j_consecutive, j_positive] = scanning(72)?;
            let flags = raw(55, 55)?;
            put("uvRelativeToGrid", json!((flags >> 3) & 1));
            put("Nx", json!(nx));
            put("iDirectionIncrementInDegrees", json!(degrees(raw(64, 67)?)));
            put("iScansNegatively", json!(i_negative));
            put("longitudeOfFirstGridPointInDegrees", json!(degrees(signed(51, 54)?)));
            put("longitudeOfLastGridPointInDegrees", json!(degrees(signed(60, 63)?)));
            put("Ny", json!(ny));
            put("jDirectionIncrementInDegrees", json!(degrees(raw(68, 71)?)));
            put("jPointsAreConsecutive", json!(j_consecutive));
            put("jScansPositively", json!(j_positive));
            put("latitudeOfFirstGridPointInDegrees", json!(degrees(signed(47, 50)?)));
            put("latitudeOfLastGridPointInDegrees", json!(degrees(signed(56, 59)?)));
            if grid_type == "rotated_ll" {
                put("angleOfRotationInDegrees", json!(degrees(signed(81, 84)?)));
                put("latitudeOfSouthernPoleInDegrees", json!(degrees(signed(73, 76)?)));
                put("longitudeOfSouthernPoleInDegrees", json!(degrees(raw(77, 80)?)));
            }
        }
        "regular_gg" => {
            let [i_negative, j_consecutive, j_positive] = scanning(72)?;
            put("uvRelativeToGrid", json!((raw(55, 55)? >> 3) & 1));
            put("N", json!(raw(68, 71)?));
            put("Ni", json!(nx));
            put("Nj", json!(ny));
            put("iDirectionIncrementInDegrees", json!(degrees(raw(64, 67)?)));
            put("iScansNegatively", json!(i_negative));
            put("jScansPositively", json!(j_positive));
            put("jPointsAreConsecutive", json!(j_consecutive));
            put("longitudeOfFirstGridPointInDegrees", json!(degrees(signed(51, 54)?)));
            put("longitudeOfLastGridPointInDegrees", json!(degrees(signed(60, 63)?)));
            put("latitudeOfFirstGridPointInDegrees", json!(degrees(signed(47, 50)?)));
            put("latitudeOfLastGridPointInDegrees", json!(degrees(signed(56, 59)?)));
        }
        // A reduced grid is its points, one dimension, and so is HEALPix's; cfgrib's grid keys for
        // each kind (none for HEALPix, whose resolution flags follow the earth's figure).
        "reduced_gg" | "reduced_ll" | "healpix" => {
            let flags = if grid_type == "healpix" { raw(31, 31)? } else { raw(55, 55)? };
            put("uvRelativeToGrid", json!((flags >> 3) & 1));
            if grid_type == "reduced_gg" {
                put("N", json!(raw(68, 71)?));
                put("pl", json!(grib_grids::points_per_row(grid).map_err(|e| e.to_string())?));
            } else if grid_type == "reduced_ll" {
                let [_, j_consecutive, j_positive] = scanning(72)?;
                put("Ny", json!(ny));
                put("jDirectionIncrementInDegrees", json!(degrees(raw(68, 71)?)));
                put("jPointsAreConsecutive", json!(j_consecutive));
                put("jScansPositively", json!(j_positive));
                put("latitudeOfFirstGridPointInDegrees", json!(degrees(signed(47, 50)?)));
                put("latitudeOfLastGridPointInDegrees", json!(degrees(signed(56, 59)?)));
            }
            return Ok((1, u64::try_from(raw(7, 10)?).unwrap_or(0)));
        }
        "lambert" => {
            let [i_negative, j_consecutive, j_positive] = scanning(65)?;
            put("uvRelativeToGrid", json!((raw(47, 47)? >> 3) & 1));
            put("DxInMetres", json!(millimetres(raw(56, 59)?)));
            put("DyInMetres", json!(millimetres(raw(60, 63)?)));
            put("LaDInDegrees", json!(degrees(signed(48, 51)?)));
            put("Latin1InDegrees", json!(degrees(signed(66, 69)?)));
            put("Latin2InDegrees", json!(degrees(signed(70, 73)?)));
            put("LoVInDegrees", json!(degrees(raw(52, 55)?)));
            put("Nx", json!(nx));
            put("Ny", json!(ny));
            put("iScansNegatively", json!(i_negative));
            put("jPointsAreConsecutive", json!(j_consecutive));
            put("jScansPositively", json!(j_positive));
            put("latitudeOfFirstGridPointInDegrees", json!(degrees(signed(39, 42)?)));
            put("latitudeOfSouthernPoleInDegrees", json!(degrees(signed(74, 77)?)));
            put("longitudeOfFirstGridPointInDegrees", json!(degrees(raw(43, 46)?)));
            put("longitudeOfSouthernPoleInDegrees", json!(degrees(raw(78, 81)?)));
        }
        // cfgrib has no grid keys for these; uvRelativeToGrid is a data attribute, where eccodes
        // has the key: Mercator's and space view's (octet 47), not polar stereographic's or 3.140's.
        "mercator" | "space_view" => put("uvRelativeToGrid", json!((raw(47, 47)? >> 3) & 1)),
        _ => {}
    }
    Ok((u64::try_from(ny).unwrap_or(0), u64::try_from(nx).unwrap_or(0)))
}
