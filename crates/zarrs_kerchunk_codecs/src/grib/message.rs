//! A GRIB2 message's sections (WMO Manual on Codes, FM 92 GRIB edition 2),
//! read with every length checked: the first field of the message, as
//! eccodes' `codes_new_from_message` sees it.

use crate::error::DecodeError;

/// The sections of one field, as slices of the message (each from its own
/// first octet, so that octet `n` of the standard is `section[n - 1]`).
#[derive(Debug)]
pub(crate) struct Field<'a> {
    pub(crate) grid: &'a [u8],
    pub(crate) representation: &'a [u8],
    pub(crate) bitmap: Option<&'a [u8]>,
    pub(crate) data: &'a [u8],
}

fn invalid(reason: impl Into<String>) -> DecodeError {
    DecodeError::Layout(format!("not a GRIB2 message: {}", reason.into()))
}

/// Octets `from..=to` of `section` (numbered from 1, as the standard numbers them).
pub(crate) fn octets(section: &[u8], from: usize, to: usize) -> Result<&[u8], DecodeError> {
    section.get(from - 1..to).ok_or_else(|| {
        invalid(format!(
            "section {} is {} octets long, short of octet {to}",
            section.get(4).copied().unwrap_or(0),
            section.len()
        ))
    })
}

/// An unsigned big-endian integer of octets `from..=to`.
pub(crate) fn unsigned(section: &[u8], from: usize, to: usize) -> Result<u64, DecodeError> {
    Ok(octets(section, from, to)?.iter().fold(0u64, |n, &b| (n << 8) | u64::from(b)))
}

/// A GRIB2 signed integer of octets `from..=to`: sign and magnitude, the sign the first bit.
pub(crate) fn signed(section: &[u8], from: usize, to: usize) -> Result<i64, DecodeError> {
    let bits = u32::try_from(8 * (to + 1 - from)).unwrap_or(64);
    let raw = unsigned(section, from, to)?;
    let sign = 1u64 << (bits - 1);
    let magnitude = i64::try_from(raw & (sign - 1)).unwrap_or(i64::MAX);
    Ok(if raw & sign == 0 { magnitude } else { -magnitude })
}

/// The first field of the message `bytes`: sections 3 to 7, where the
/// last of each number before section 7 is the one that applies.
pub(crate) fn first_field(bytes: &[u8]) -> Result<Field<'_>, DecodeError> {
    if bytes.len() < 16 || &bytes[..4] != b"GRIB" {
        return Err(invalid("it does not start with \"GRIB\" and a 16-octet indicator"));
    }
    match bytes[7] {
        2 => {}
        1 => return Err(DecodeError::Layout("GRIB edition 1 is not decoded".into())),
        edition => return Err(invalid(format!("edition {edition}"))),
    }
    let total = usize::try_from(unsigned(bytes, 9, 16)?).unwrap_or(usize::MAX);
    if total > bytes.len() {
        return Err(invalid(format!("its indicator says {total} octets, and {} are there", bytes.len())));
    }
    let message = &bytes[..total];
    let (mut grid, mut representation, mut bitmap) = (None, None, None);
    let mut at = 16;
    while at + 4 <= message.len() && &message[at..at + 4] != b"7777" {
        let length = usize::try_from(unsigned(&message[at..], 1, 4)?).unwrap_or(usize::MAX);
        let section = message.get(at..at.saturating_add(length)).filter(|s| s.len() >= 5).ok_or_else(|| {
            invalid(format!("a section at octet {} of {length} octets runs past the message", at + 1))
        })?;
        match section[4] {
            1 | 2 | 4 => {}
            3 => grid = Some(section),
            5 => representation = Some(section),
            6 => bitmap = Some(section),
            7 => {
                let missing = |name: &str| invalid(format!("no {name} section before the data"));
                return Ok(Field {
                    grid: grid.ok_or_else(|| missing("grid definition (3)"))?,
                    representation: representation.ok_or_else(|| missing("data representation (5)"))?,
                    bitmap,
                    data: section,
                });
            }
            number => return Err(invalid(format!("a section numbered {number} at octet {}", at + 1))),
        }
        at += length;
    }
    Err(invalid("no data section (7)"))
}

impl Field<'_> {
    /// The number of points of the grid (section 3, octets 7-10).
    pub(crate) fn points(&self) -> Result<usize, DecodeError> {
        usize::try_from(unsigned(self.grid, 7, 10)?).map_err(|_| invalid("too many points"))
    }

    /// The bitmap's bits, if the field has one; an error for a predefined
    /// or a previous bitmap, which a message's first field cannot use.
    pub(crate) fn bitmap_bits(&self) -> Result<Option<&[u8]>, DecodeError> {
        let Some(section) = self.bitmap else { return Ok(None) };
        match unsigned(section, 6, 6)? {
            255 => Ok(None),
            0 => Ok(Some(&section[6..])),
            other => Err(DecodeError::Layout(format!(
                "bitmap indicator {other} (a predefined or earlier bitmap) is not decoded"
            ))),
        }
    }
}
