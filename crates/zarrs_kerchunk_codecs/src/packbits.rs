//! `imagecodecs_packbits`: TIFF's `PackBits` (compression 32773), Apple's
//! run-length encoding. No crate decodes it alone; it is a dozen lines.

use crate::decode_only::Decode;
use crate::error::DecodeError;

/// `PackBits`: a header byte `n` then `n + 1` literal bytes (`n` in 0..=127),
/// or one byte repeated `1 - n` times (`n` in -127..=-1); -128 is skipped.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct PackBits;

impl Decode for PackBits {
    const ID: &'static str = "imagecodecs_packbits";

    fn decode(&self, encoded: &[u8], size: usize) -> Result<Vec<u8>, DecodeError> {
        // At most 128 bytes out per 2 bytes in.
        let mut decoded = Vec::with_capacity(size.min(encoded.len().saturating_mul(64)));
        let mut at = 0;
        while at < encoded.len() {
            let header = i8::from_le_bytes([encoded[at]]);
            at += 1;
            let (run, literal) = match header {
                0..=127 => (usize::from(header.unsigned_abs()) + 1, true),
                -127..=-1 => (usize::from(header.unsigned_abs()) + 1, false),
                -128 => continue,
            };
            if decoded.len() + run > size {
                return Err(DecodeError::TooLong { size });
            }
            if literal {
                // imagecodecs copies what is there of a literal cut short.
                let end = (at + run).min(encoded.len());
                decoded.extend_from_slice(&encoded[at..end]);
                at = end;
            } else {
                let Some(&byte) = encoded.get(at) else { break };
                decoded.resize(decoded.len() + run, byte);
                at += 1;
            }
        }
        Ok(decoded)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The example of TIFF 6.0, section 9 (Apple's technical note TN1023).
    #[test]
    fn the_specification_example() {
        let encoded = [0xFE, 0xAA, 0x02, 0x80, 0x00, 0x2A, 0xFD, 0xAA, 0x03, 0x80, 0x00, 0x2A, 0x22, 0xF7, 0xAA];
        let expected = [
            0xAA, 0xAA, 0xAA, 0x80, 0x00, 0x2A, 0xAA, 0xAA, 0xAA, 0xAA, 0x80, 0x00, 0x2A, 0x22, 0xAA, 0xAA, 0xAA, 0xAA,
            0xAA, 0xAA, 0xAA, 0xAA, 0xAA, 0xAA,
        ];
        assert_eq!(PackBits.decode(&encoded, 24).unwrap(), expected);
        assert!(matches!(PackBits.decode(&encoded, 23), Err(DecodeError::TooLong { size: 23 })));
        assert_eq!(PackBits.decode(&[0x80, 0x00, 0x07], 1).unwrap(), [7]);
    }
}
