//! GRIB edition 1 (WMO FM 92 GRIB edition 1): a message's grid-point values
//! in simple packing, the one packing of GRIB1 that the archives kerchunk
//! users meet (ERA-Interim, older NCEP and ECMWF products) use for fields
//! on a grid, decoded to eccodes' values bit for bit.
//!
//! A GRIB1 message has one field: section 0 (8 octets), the product
//! definition (1), an optional grid description (2) and bitmap (3), and the
//! binary data (4). Complex (second-order) packing, spherical harmonics,
//! predefined bitmaps and ECMWF's convention for messages over 8 MiB are
//! errors naming them.

use crate::error::DecodeError;
use crate::grib::bits::Bits;
use crate::grib::message::{signed, unsigned};
use crate::grib::unpack::codes_power;

fn layout(reason: impl Into<String>) -> DecodeError {
    DecodeError::Layout(reason.into())
}

fn invalid(reason: impl Into<String>) -> DecodeError {
    DecodeError::Layout(format!("not a GRIB1 message: {}", reason.into()))
}

/// The section of a GRIB1 message starting at `at`: its length is its first three octets.
fn section<'a>(message: &'a [u8], at: usize, name: &str) -> Result<&'a [u8], DecodeError> {
    let length = message
        .get(at..at + 3)
        .map(|octets| octets.iter().fold(0usize, |n, &b| (n << 8) | usize::from(b)))
        .ok_or_else(|| invalid(format!("the message ends before its {name} section")))?;
    message
        .get(at..at.saturating_add(length))
        .filter(|section| section.len() >= 4)
        .ok_or_else(|| invalid(format!("its {name} section of {length} octets runs past the message")))
}

/// IBM System/360 single precision (GRIB1's reference value): a sign, a
/// 7-bit exponent of 16 biased by 64 and a 24-bit fraction. Exact in f64.
fn ibm_float(bits: u64) -> f64 {
    let sign = if bits & 0x8000_0000 == 0 { 1.0 } else { -1.0 };
    let exponent = i32::try_from((bits >> 24) & 0x7F).unwrap_or(0) - 64;
    #[expect(clippy::cast_precision_loss, reason = "24 bits")]
    let fraction = (bits & 0x00FF_FFFF) as f64;
    sign * fraction * 2f64.powi(4 * exponent - 24)
}

/// The number of points of the field: the grid's rows times columns from
/// its description, or the bitmap's bits or the packed values where the
/// message has no description.
fn grid_points(grid: Option<&[u8]>) -> Result<Option<usize>, DecodeError> {
    let Some(grid) = grid else { return Ok(None) };
    // Octet 6: the data representation type (code table 6); these have Ni (Nx) and Nj (Ny) at octets 7-10.
    match unsigned(grid, 6, 6)? {
        0 | 1 | 3 | 4 | 5 | 10 | 13 | 14 | 20 | 24 | 30 | 34 => {}
        other => return Err(layout(format!("GRIB1 grid representation type {other} is not decoded"))),
    }
    let (ni, nj) = (unsigned(grid, 7, 8)?, unsigned(grid, 9, 10)?);
    if ni == 0xFFFF || nj == 0xFFFF {
        return Err(layout("a quasi-regular (reduced) GRIB1 grid is not decoded"));
    }
    usize::try_from(ni * nj).map(Some).map_err(|_| invalid("too many points"))
}

/// The values of the GRIB1 message `bytes` (NaN where its bitmap marks a
/// point missing), each given to `emit`, refusing more than `limit`; returns how many.
pub(crate) fn values(bytes: &[u8], limit: usize, emit: &mut impl FnMut(f64)) -> Result<usize, DecodeError> {
    if bytes.len() < 8 || &bytes[..4] != b"GRIB" {
        return Err(invalid("it does not start with \"GRIB\" and an 8-octet indicator"));
    }
    let total = usize::try_from(unsigned(bytes, 5, 7)?).unwrap_or(usize::MAX);
    if total & 0x80_0000 != 0 {
        return Err(layout("a GRIB1 message over 8 MiB (ECMWF's large-message convention) is not decoded"));
    }
    let message = bytes
        .get(..total)
        .ok_or_else(|| invalid(format!("its indicator says {total} octets, and {} are there", bytes.len())))?;
    let product = section(message, 8, "product definition")?;
    let flags = unsigned(product, 8, 8)?;
    let decimal = codes_power(-signed(product, 27, 28)?, 10.0);
    let mut at = 8 + product.len();
    let grid = if flags & 0x80 != 0 {
        let grid = section(message, at, "grid description")?;
        at += grid.len();
        Some(grid)
    } else {
        None
    };
    let bitmap = if flags & 0x40 != 0 {
        let bitmap = section(message, at, "bitmap")?;
        at += bitmap.len();
        if unsigned(bitmap, 5, 6)? != 0 {
            return Err(layout("a predefined GRIB1 bitmap is not decoded"));
        }
        let unused = usize::try_from(unsigned(bitmap, 4, 4)?).unwrap_or(usize::MAX);
        let bits = (bitmap.len() - 6).saturating_mul(8).checked_sub(unused).ok_or_else(|| invalid("a bitmap"))?;
        Some((&bitmap[6..], bits))
    } else {
        None
    };
    let data = section(message, at, "binary data")?;
    let data_flags = unsigned(data, 4, 4)?;
    if data_flags & 0x80 != 0 {
        return Err(layout("GRIB1 spherical harmonics are not decoded"));
    }
    if data_flags & 0x50 != 0 {
        return Err(layout("GRIB1 complex (second-order) packing is not decoded"));
    }
    let unused = usize::try_from(data_flags & 0x0F).unwrap_or(0);
    let binary = codes_power(signed(data, 5, 6)?, 2.0);
    let reference = ibm_float(unsigned(data, 7, 10)?);
    let width = u32::try_from(unsigned(data, 11, 11)?).unwrap_or(u32::MAX);
    let packed = data.get(11..).unwrap_or_default();
    let points = match (grid_points(grid)?, bitmap) {
        (Some(points), _) => points,
        (None, Some((_, bits))) => bits,
        (None, None) if width == 0 => return Err(layout("a constant GRIB1 field with neither grid nor bitmap")),
        (None, None) => (packed.len() * 8).saturating_sub(unused) / usize::try_from(width).unwrap_or(1),
    };
    if points > limit {
        return Err(DecodeError::TooLong { size: limit });
    }
    let present = |i: usize| bitmap.is_none_or(|(bits, _)| bits.get(i / 8).is_some_and(|b| b & (0x80 >> (i % 8)) != 0));
    if let Some((bits, count)) = bitmap
        && (count < points || bits.len() * 8 < points)
    {
        return Err(layout(format!("a GRIB1 bitmap of {count} bits for {points} points")));
    }
    let coded = (0..points).filter(|&i| present(i)).count();
    if width > 32 {
        return Err(layout(format!("{width} bits per value (at most 32 are decoded)")));
    }
    if width > 0 && (packed.len() as u128) * 8 < coded as u128 * u128::from(width) {
        return Err(layout(format!("section 4 holds fewer than the {coded} values of {width} bits")));
    }
    let mut reader = Bits::new(packed);
    for i in 0..points {
        if !present(i) {
            emit(f64::NAN);
        } else if width == 0 {
            // A constant field: the reference value, unscaled, as eccodes gives it.
            emit(reference);
        } else {
            // Checked above: every read is inside the section.
            let x = f64::from(reader.read(width).unwrap_or(0));
            emit((x * binary + reference) * decimal);
        }
    }
    Ok(points)
}

#[cfg(test)]
mod tests {
    use super::ibm_float;

    /// Examples of IBM's format: 1.0 is 0x41100000, -118.625 is 0xC276A000.
    #[test]
    #[expect(clippy::float_cmp, reason = "the values are exact")]
    fn ibm_floats() {
        assert_eq!(ibm_float(0x4110_0000), 1.0);
        assert_eq!(ibm_float(0xC276_A000), -118.625);
        assert_eq!(ibm_float(0), 0.0);
    }
}
