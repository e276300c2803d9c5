//! `fletcher32`: HDF5's checksum filter (numcodecs' `Fletcher32`), checked and stripped.
//!
//! zarrs 0.23's own codec of this name computes the checksum wrong for data of an odd number of
//! bytes: it tests the pairs left (none, after its loop) for oddness rather than the length, so
//! the last byte is never summed, and every such chunk fails its check. HDF5 sums it, as the high
//! byte of a last pair (`H5_checksum_fletcher32`), and so does numcodecs. Chunks of odd length
//! are what a filter after a compressor checks (deflate then fletcher32), and the raw chunks of
//! one-byte types with an odd count.

use crate::decode_only::Decode;
use crate::error::DecodeError;

/// numcodecs' `fletcher32`: the data, then HDF5's Fletcher-32 of it, 4 bytes little-endian.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Fletcher32;

impl Decode for Fletcher32 {
    const ID: &'static str = "fletcher32";

    /// The data is the encoded bytes less the checksum, whatever size zarrs expects.
    const VARIABLE: bool = true;

    fn decode(&self, encoded: &[u8], size: usize) -> Result<Vec<u8>, DecodeError> {
        let Some((data, stored)) = encoded.split_last_chunk::<4>() else {
            return Err(DecodeError::Layout(format!("{} bytes, fewer than the 4 of the checksum", encoded.len())));
        };
        let (stored, computed) = (u32::from_le_bytes(*stored), checksum(data));
        if stored != computed {
            return Err(DecodeError::Layout(format!(
                "the checksum of the chunk's {} bytes is {computed:#010x}, not the {stored:#010x} stored with them",
                data.len()
            )));
        }
        if data.len() > size {
            return Err(DecodeError::TooLong { size });
        }
        Ok(data.to_vec())
    }
}

/// HDF5's Fletcher-32 (`H5_checksum_fletcher32`): big-endian 16-bit words, an odd last byte as
/// the high byte of a word, the sums folded to 16 bits at least every 360 words.
pub(crate) fn checksum(data: &[u8]) -> u32 {
    let (mut sum1, mut sum2) = (0u32, 0u32);
    let fold = |sum: u32| (sum & 0xffff) + (sum >> 16);
    let mut words = data.chunks_exact(2);
    for block in words.by_ref().collect::<Vec<_>>().chunks(360) {
        for word in block {
            sum1 += u32::from(u16::from_be_bytes([word[0], word[1]]));
            sum2 += sum1;
        }
        (sum1, sum2) = (fold(sum1), fold(sum2));
    }
    if let [last] = words.remainder() {
        sum1 += u32::from(*last) << 8;
        sum2 += sum1;
        (sum1, sum2) = (fold(sum1), fold(sum2));
    }
    (fold(sum2) << 16) | fold(sum1)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A chunk of bes's `SDS_def_fle.h5` (deflate then fletcher32: 27 bytes of zlib, odd, then the
    /// checksum libhdf5 wrote), whose decoded values h5py reads as 0, 1, 2 ...
    const ODD: &str = "785e636060606004622620664663b3208983d8ac400c000280001f735987eb";

    fn bytes(hex: &str) -> Vec<u8> {
        (0..hex.len()).step_by(2).map(|i| u8::from_str_radix(&hex[i..i + 2], 16).unwrap()).collect()
    }

    #[test]
    fn odd_lengths_check_as_libhdf5_wrote_them() {
        let chunk = bytes(ODD);
        let data = Fletcher32.decode(&chunk, usize::MAX).unwrap();
        assert_eq!(data, chunk[..27]);
        // One bit off anywhere is refused.
        for i in 0..chunk.len() {
            let mut bad = chunk.clone();
            bad[i] ^= 1;
            assert!(matches!(Fletcher32.decode(&bad, usize::MAX), Err(DecodeError::Layout(_))), "byte {i}");
        }
    }

    /// Even lengths, over several blocks of 360 words: the same as zarrs' codec, which is right
    /// for them (a checksum libhdf5 wrote, on even data, is in tests/scan/hdf5's fletcher32 case).
    #[test]
    fn even_lengths_fold_every_360_words() {
        let data: Vec<u8> = (0..2000u32).map(|i| u8::try_from(i * 7919 % 251).unwrap()).collect();
        let (mut sum1, mut sum2) = (0u64, 0u64);
        for word in data.chunks_exact(2) {
            sum1 = (sum1 + u64::from(u16::from_be_bytes([word[0], word[1]]))) % 65535;
            sum2 = (sum2 + sum1) % 65535;
        }
        // Fletcher-32 is sums modulo 65535, which HDF5's folding computes (65535 may stand for 0).
        let got = checksum(&data);
        assert_eq!((u64::from(got & 0xffff) % 65535, u64::from(got >> 16) % 65535), (sum1, sum2));
    }
}
