//! Decoders that read from a stream, held to the chunk's size.

use std::io::Read;

use crate::error::DecodeError;

/// Everything `reader` gives, or [`DecodeError::TooLong`] as soon as it gives
/// more than `size` bytes; a failed read is [`DecodeError::Corrupt`].
pub(crate) fn read_bounded(reader: impl Read, size: usize, first_capacity: usize) -> Result<Vec<u8>, DecodeError> {
    let mut decoded = Vec::with_capacity(first_capacity.min(size));
    let limit = u64::try_from(size).unwrap_or(u64::MAX).saturating_add(1);
    reader.take(limit).read_to_end(&mut decoded).map_err(DecodeError::corrupt)?;
    if decoded.len() > size {
        return Err(DecodeError::TooLong { size });
    }
    Ok(decoded)
}
