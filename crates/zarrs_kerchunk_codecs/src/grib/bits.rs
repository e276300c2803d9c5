//! Unsigned integers of any width up to 32 bits, most significant bit first,
//! as GRIB2 packs them.

/// A reader of bits from a byte slice, most significant first: a 64-bit
/// buffer refilled a byte at a time, so that a value costs a shift and a mask.
pub(crate) struct Bits<'a> {
    bytes: &'a [u8],
    /// The next byte to load into the buffer.
    next: usize,
    /// Loaded bits, the unread ones in the low `count` bits.
    buffer: u64,
    count: u32,
}

impl<'a> Bits<'a> {
    pub(crate) fn new(bytes: &'a [u8]) -> Self {
        Self { bytes, next: 0, buffer: 0, count: 0 }
    }

    /// The next `width` bits (0 to 32) as an integer; `None` past the end.
    #[inline]
    pub(crate) fn read(&mut self, width: u32) -> Option<u32> {
        if width == 0 {
            return Some(0);
        }
        if width > 32 {
            return None;
        }
        if self.count < width {
            // Four bytes at once where there are four: `count` is below 32,
            // so the buffer then holds at most 63 bits.
            if let Some(word) = self.bytes.get(self.next..self.next + 4) {
                let word: [u8; 4] = word.try_into().unwrap_or_default();
                self.buffer = (self.buffer << 32) | u64::from(u32::from_be_bytes(word));
                self.next += 4;
                self.count += 32;
            }
        }
        while self.count < width {
            let byte = *self.bytes.get(self.next)?;
            self.next += 1;
            // Bits shifted out at the top were read already.
            self.buffer = (self.buffer << 8) | u64::from(byte);
            self.count += 8;
        }
        self.count -= width;
        #[expect(clippy::cast_possible_truncation, reason = "masked to `width` <= 32 bits")]
        Some(((self.buffer >> self.count) & ((1u64 << width) - 1)) as u32)
    }

    /// Skip to the next byte boundary (GRIB2 pads each list of complex packing's groups).
    pub(crate) fn align(&mut self) {
        self.count -= self.count % 8;
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
