//! HEALPix grids (template 3.150): Górski et al.'s Hierarchical Equal Area
//! isoLatitude Pixelization (Astrophysical Journal 622:759, 2005), `12 · Nside²` pixels on
//! `4 · Nside - 1` rings of latitude, in ring or nested order, as eccodes'
//! iterator lays them out: rings from the north, each ring's pixels
//! eastwards from its first at or after longitude 0, at the pixels' centres.
//!
//! The section after the earth's figure (octets 15-30) and the resolution
//! flags (31): `Nside` (32-35), the longitude of the first rhomboid's centre
//! line (36-39, micro-degrees), the grid point position (40), the ordering
//! (41: 0 ring, 1 nested) and the scanning mode (42).

use crate::error::GridError;
use crate::section::{Coordinate, Earth, layout, unsigned};

/// The rhomboid's centre line eccodes' iterator computes from (45 degrees,
/// in micro-degrees): it refuses other values, and so is this.
const FIRST_LONGITUDE: u64 = 45_000_000;

/// The grid point position eccodes writes and iterates (the pixels'
/// centres); its iterator does not read the octet, so no other is matched.
const CENTRES: u64 = 4;

/// The `coordinate` of every point of a HEALPix grid, in storage order, for
/// at most `limit` points.
pub(crate) fn healpix(grid: &[u8], coordinate: Coordinate, limit: usize) -> Result<Vec<f64>, GridError> {
    if let Earth::Ellipsoid { .. } = Earth::read(grid)? {
        return Err(layout("a HEALPix grid on an ellipsoid is not decoded (eccodes' iterator takes a sphere only)"));
    }
    let nside = unsigned(grid, 32, 35)?;
    let (first, position) = (unsigned(grid, 36, 39)?, unsigned(grid, 40, 40)?);
    let (ordering, scanning) = (unsigned(grid, 41, 41)?, unsigned(grid, 42, 42)?);
    if nside == 0 {
        return Err(layout("a HEALPix grid of Nside 0"));
    }
    let points = nside.checked_mul(nside).and_then(|n| n.checked_mul(12));
    let points = points.and_then(|n| usize::try_from(n).ok()).filter(|&n| n <= limit);
    let Some(points) = points else {
        return Err(GridError::TooLarge { limit });
    };
    if first != FIRST_LONGITUDE {
        return Err(layout(format!(
            "a HEALPix grid whose first rhomboid is centred at {} degrees east (eccodes' iterator computes 45 only)",
            super::section::degrees(i64::try_from(first).unwrap_or(i64::MAX))
        )));
    }
    if position != CENTRES || scanning != 0 {
        return Err(layout(format!(
            "a HEALPix grid of grid point position {position} and scanning mode {scanning} (eccodes' iterator \
             computes position {CENTRES}, the pixels' centres, scanned as 0 only)"
        )));
    }
    let rings = Rings { nside };
    let mut values = Vec::with_capacity(points);
    let mut push = |ring: u64, index: u64| {
        let (latitude, longitude) = rings.point(ring, index);
        values.push(if coordinate == Coordinate::Latitude { latitude } else { longitude });
    };
    match ordering {
        0 => {
            for ring in 1..4 * nside {
                for index in 0..rings.length(ring) {
                    push(ring, index);
                }
            }
        }
        1 if nside.is_power_of_two() => {
            for pixel in 0..points as u64 {
                let (ring, index) = rings.nested(pixel);
                push(ring, index);
            }
        }
        1 => return Err(layout(format!("a nested HEALPix grid of Nside {nside}, not a power of 2"))),
        other => return Err(layout(format!("a HEALPix grid of ordering {other} (0 ring and 1 nested are decoded)"))),
    }
    Ok(values)
}

/// The rings of latitude of a HEALPix grid of `nside`, numbered from 1 at
/// the north to `4 · nside - 1` at the south.
struct Rings {
    nside: u64,
}

impl Rings {
    /// The pixels of `ring`, from the nearer pole: `4 · ring` in the polar
    /// caps, `4 · nside` in the equatorial belt.
    fn length(&self, ring: u64) -> u64 {
        4 * ring.min(self.nside).min(4 * self.nside - ring)
    }

    /// The latitude and longitude of the `index`-th pixel (from 0) of `ring`.
    #[expect(clippy::cast_precision_loss, reason = "ring numbers and pixel indices, below 2^31")]
    fn point(&self, ring: u64, index: u64) -> (f64, f64) {
        let n = self.nside as f64;
        // The north's latitude mirrored, so that the rings are symmetric as eccodes' are.
        let from_north = ring.min(4 * self.nside - ring);
        let cosine = if from_north < self.nside {
            let r = from_north as f64;
            1.0 - r * r / (3.0 * n * n)
        } else {
            (4.0 * n - 2.0 * from_north as f64) / (3.0 * n)
        };
        let north = if from_north == 2 * self.nside { 0.0 } else { 90.0 - cosine.acos().to_degrees() };
        let latitude = if ring > 2 * self.nside { -north } else { north };
        // A ring's pixels are 360 / length degrees apart, the first half a step east of 0 in the
        // caps and in every other ring of the belt (those whose pixels straddle the rhomboids'
        // centre lines), at 0 in the others.
        let length = self.length(ring);
        let step = 360.0 / length as f64;
        let polar = ring < self.nside || ring > 3 * self.nside;
        let start = if polar || (ring - self.nside).is_multiple_of(2) { step / 2.0 } else { 0.0 };
        (latitude, start + index as f64 * step)
    }

    /// The ring and index in its ring of the nested `pixel`: its base pixel
    /// (face) and its place in it, the bits of the latter interleaved, as
    /// Górski et al. number them.
    fn nested(&self, pixel: u64) -> (u64, u64) {
        const FACE_ROW: [u64; 12] = [2, 2, 2, 2, 3, 3, 3, 3, 4, 4, 4, 4];
        const FACE_COLUMN: [u64; 12] = [1, 3, 5, 7, 0, 2, 4, 6, 1, 3, 5, 7];
        let nside = self.nside;
        let per_face = nside * nside;
        let face = usize::try_from(pixel / per_face).unwrap_or(0).min(11);
        let within = pixel % per_face;
        let (mut x, mut y) = (0, 0);
        for bit in 0..nside.trailing_zeros() {
            x |= ((within >> (2 * bit)) & 1) << bit;
            y |= ((within >> (2 * bit + 1)) & 1) << bit;
        }
        // Rings from the north; x + y + 1 <= 2 nside - 1 < FACE_ROW · nside.
        let ring = FACE_ROW[face] * nside - x - y - 1;
        let (length, shift) = if ring < nside {
            (ring, 0)
        } else if ring > 3 * nside {
            (4 * nside - ring, 0)
        } else {
            (nside, (ring - nside) & 1)
        };
        // The 1-based pixel along the ring, from twice its longitude in half-steps; the belt's
        // wrap round the globe.
        let signed = |n: u64| i64::try_from(n).unwrap_or(i64::MAX);
        let around = signed(4 * nside);
        let mut along = (signed(FACE_COLUMN[face] * length + x + 1 + shift) - signed(y)) / 2;
        if along > around {
            along -= around;
        }
        if along < 1 {
            along += around;
        }
        let along = u64::try_from(along - 1).unwrap_or(0);
        (ring, along)
    }
}

#[cfg(test)]
mod tests {
    use super::Rings;
    use crate::{Coordinate, GridError, coordinates};

    /// Section 3 of a HEALPix grid as eccodes writes it: a sphere (shape 6), `nside`, the first
    /// rhomboid at `first` micro-degrees, centres, `ordering`, scanning 0.
    fn section(shape: u8, nside: u32, first: u32, ordering: u8) -> Vec<u8> {
        let mut grid = vec![0, 0, 0, 42, 3, 0];
        grid.extend(nside.wrapping_mul(nside).wrapping_mul(12).to_be_bytes());
        grid.extend([0, 0, 0, 150, shape]);
        grid.extend([0xFF; 15]);
        grid.push(0x30);
        grid.extend(nside.to_be_bytes());
        grid.extend(first.to_be_bytes());
        grid.extend([4, ordering, 0]);
        grid
    }

    fn refusal(grid: &[u8]) -> String {
        match coordinates(grid, Coordinate::Latitude, 1 << 20) {
            Err(GridError::Layout(reason)) => reason,
            other => panic!("{other:?}"),
        }
    }

    /// What eccodes' iterator refuses is refused, saying why; a grid past the limit is too large.
    #[test]
    fn grids_eccodes_does_not_iterate_are_refused_named() {
        assert_eq!(coordinates(&section(6, 2, 45_000_000, 1), Coordinate::Latitude, 48).unwrap().len(), 48);
        assert!(refusal(&section(6, 2, 0, 0)).contains("centred at 0 degrees east"));
        assert!(refusal(&section(6, 3, 45_000_000, 1)).contains("Nside 3, not a power of 2"));
        assert!(refusal(&section(6, 2, 45_000_000, 2)).contains("ordering 2"));
        assert!(refusal(&section(4, 2, 45_000_000, 0)).contains("on an ellipsoid"));
        assert!(refusal(&section(6, 0, 45_000_000, 0)).contains("Nside 0"));
        let error = coordinates(&section(6, 2, 45_000_000, 0), Coordinate::Latitude, 47).unwrap_err();
        assert!(matches!(error, GridError::TooLarge { limit: 47 }), "{error:?}");
        let error = coordinates(&section(6, u32::MAX, 45_000_000, 0), Coordinate::Latitude, 1 << 20).unwrap_err();
        assert!(matches!(error, GridError::TooLarge { .. }), "{error:?}");
    }

    /// Every pixel of a nested grid lands on its own place among the rings.
    #[test]
    fn nested_pixels_are_a_permutation_of_the_rings() {
        for nside in [1, 2, 4, 16] {
            let rings = Rings { nside };
            let mut seen = std::collections::HashSet::new();
            for pixel in 0..12 * nside * nside {
                let (ring, index) = rings.nested(pixel);
                assert!((1..4 * nside).contains(&ring) && index < rings.length(ring), "{nside} {pixel}");
                assert!(seen.insert((ring, index)), "{nside} {pixel}: ({ring}, {index}) twice");
            }
        }
    }
}
