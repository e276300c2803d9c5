//! A grid definition section (3) read: cfgrib's grid keys for the
//! attributes, and a regular grid's latitudes and longitudes as eccodes'
//! geo-iterator gives them.

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
        // has the key: Mercator's (octet 47), not polar stereographic's or 3.140's.
        "mercator" => put("uvRelativeToGrid", json!((raw(47, 47)? >> 3) & 1)),
        _ => {}
    }
    Ok((u64::try_from(ny).unwrap_or(0), u64::try_from(nx).unwrap_or(0)))
}

/// A regular latitude/longitude grid, in degrees, whatever edition coded it.
#[derive(Debug)]
pub(crate) struct LatLonGrid {
    pub(crate) columns: usize,
    pub(crate) rows: usize,
    pub(crate) first: (f64, f64),
    pub(crate) last: (f64, f64),
    /// The coded column step (eccodes recomputes it from the corners).
    pub(crate) column_step: f64,
    /// The coded row step; `None` where none is coded.
    pub(crate) row_step: Option<f64>,
    /// The scanning mode (octet flags: i negative 0x80, j positive 0x40, j consecutive 0x20, alternating 0x10).
    pub(crate) scanning: i64,
}

/// The latitudes of a GRIB2 regular grid's rows and the longitudes of its
/// columns ([`LatLonGrid::axes`]), where its rows times columns are
/// `points` (eccodes' geo-iterator refuses another grid too), so a grid can
/// only be as large as its message says.
pub(crate) fn regular_axes(grid: &[u8], points: Option<i64>) -> Option<(Vec<f64>, Vec<f64>)> {
    let raw =
        |from: usize, to: usize| grid.get(from - 1..to).map(|b| b.iter().fold(0i64, |n, &x| (n << 8) | i64::from(x)));
    let signed = |from: usize, to: usize| {
        let value = raw(from, to)?;
        let sign = 1i64 << (8 * (to + 1 - from) - 1);
        Some(if value & sign == 0 { value } else { -(value & (sign - 1)) })
    };
    #[expect(clippy::cast_precision_loss, reason = "micro-degrees, below 2^32")]
    let degrees = |v: i64| v as f64 / 1e6;
    let (columns, rows) = (usize::try_from(raw(31, 34)?).ok()?, usize::try_from(raw(35, 38)?).ok()?);
    if columns.checked_mul(rows).and_then(|n| i64::try_from(n).ok()) != points {
        return None;
    }
    let coded_row_step = raw(68, 71)?;
    LatLonGrid {
        columns,
        rows,
        first: (degrees(signed(47, 50)?), degrees(signed(51, 54)?)),
        last: (degrees(signed(56, 59)?), degrees(signed(60, 63)?)),
        column_step: degrees(raw(64, 67)?),
        row_step: (coded_row_step != (1 << 32) - 1).then(|| degrees(coded_row_step)),
        scanning: raw(72, 72)?,
    }
    .axes()
}

impl LatLonGrid {
    /// The latitudes of the rows and the longitudes of the columns, as
    /// eccodes' geo-iterator computes them: steps added one at a time, the
    /// last row and column set to the grid's last point; `None` for a grid
    /// of no rows or columns, over 2^24 either way, or whose rows and columns
    /// are not one axis each (columns first, alternating rows).
    pub(crate) fn axes(&self) -> Option<(Vec<f64>, Vec<f64>)> {
        let (ni, nj, mode) = (self.columns, self.rows, self.scanning);
        if ni == 0 || nj == 0 || ni > 1 << 24 || nj > 1 << 24 {
            return None;
        }
        let (i_negative, j_positive) = (mode & 0x80 != 0, mode & 0x40 != 0);
        if mode & 0x20 != 0 || mode & 0x10 != 0 {
            return None;
        }
        let ((mut lat1, mut lon1), (lat2, mut lon2)) = (self.first, self.last);
        #[expect(clippy::cast_precision_loss, reason = "grid sides below 2^24")]
        let (columns, rows) = (ni as f64, nj as f64);
        let mut idir = self.column_step;
        if ni > 1 {
            idir = match (i_negative, lon1 > lon2, lon2 > lon1) {
                (true, true, _) => (lon1 - lon2) / (columns - 1.0),
                (true, false, _) => (lon1 + 360.0 - lon2) / (columns - 1.0),
                (false, _, true) => (lon2 - lon1) / (columns - 1.0),
                (false, _, false) => (lon2 + 360.0 - lon1) / (columns - 1.0),
            };
        }
        if i_negative {
            idir = -idir;
        } else if lon1 + (columns - 2.0) * idir > 360.0 {
            lon1 -= 360.0;
        }
        let mut longitudes = Vec::with_capacity(ni);
        for _ in 0..ni {
            longitudes.push(lon1);
            lon1 += idir;
        }
        if lon2 > 0.0 {
            while lon2 > 360.0 {
                lon2 -= 360.0;
            }
        }
        longitudes[ni - 1] = lon2;
        let mut jdir = match self.row_step {
            Some(step) => step,
            // No increment coded: eccodes spreads the rows evenly between the first and the last.
            None if nj > 1 => (lat1 - lat2).abs() / (rows - 1.0),
            None => return None,
        };
        if j_positive {
            jdir = -jdir;
        }
        let mut latitudes = Vec::with_capacity(nj);
        for _ in 0..nj {
            latitudes.push(lat1);
            lat1 -= jdir;
        }
        latitudes[nj - 1] = lat2;
        Some((latitudes, longitudes))
    }
}
