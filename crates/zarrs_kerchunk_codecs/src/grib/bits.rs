//! Unsigned integers of any width up to 32 bits, most significant bit first,
//! as GRIB2 packs them.

/// A reader of bits from a byte slice, most significant first.
pub(crate) struct Bits<'a> {
    bytes: &'a [u8],
    /// The position, in bits.
    at: usize,
}

impl<'a> Bits<'a> {
    pub(crate) fn new(bytes: &'a [u8]) -> Self {
        Self { bytes, at: 0 }
    }

    /// The next `width` bits (0 to 32) as an integer; `None` past the end.
    pub(crate) fn read(&mut self, width: u32) -> Option<u32> {
        if width == 0 {
            return Some(0);
        }
        let end = self.at.checked_add(width as usize)?;
        if width > 32 || end > self.bytes.len() * 8 {
            return None;
        }
        // The (at most five) bytes that hold the bits, as one big-endian word.
        let (first, last) = (self.at / 8, (end - 1) / 8);
        let word = self.bytes[first..=last].iter().fold(0u64, |w, &b| (w << 8) | u64::from(b));
        let spare = (last + 1) * 8 - end;
        self.at = end;
        #[expect(clippy::cast_possible_truncation, reason = "masked to `width` <= 32 bits")]
        Some(((word >> spare) & ((1u64 << width) - 1)) as u32)
    }

    /// Skip to the next byte boundary (GRIB2 pads each list of complex packing's groups).
    pub(crate) fn align(&mut self) {
        self.at = self.at.div_ceil(8) * 8;
    }
}

#[cfg(test)]
mod tests {
    use super::Bits;

    #[test]
    fn widths_across_bytes() {
        let mut bits = Bits::new(&[0b1011_0011, 0b1100_0000, 0xFF, 0xFF, 0xFF, 0xFF]);
        assert_eq!(bits.read(3), Some(0b101));
        assert_eq!(bits.read(7), Some(0b100_1111));
        bits.align();
        assert_eq!(bits.read(32), Some(0xFFFF_FFFF));
        assert_eq!(bits.read(1), None);
        assert_eq!(Bits::new(&[1]).read(33), None);
    }
}
