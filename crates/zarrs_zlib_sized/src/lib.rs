//! A zlib codec for zarrs that inflates each chunk in one call, into a buffer
//! of the chunk's decoded size.
//!
//! Most chunks that kerchunk references in NetCDF4 and HDF5 files are zlib
//! streams (HDF5's deflate filter). zarrs' own zlib codec does not use the
//! decoded size it is given: it reads the stream into an empty buffer that
//! grows as it fills, so every chunk is inflated in many small calls and
//! copied as its buffer grows. [`SizedZlibCodec`] inflates into a buffer of
//! the decoded size in one call, which on the benchmark corpus takes about a
//! tenth less time (`refbench inflate-limit` in the `zarrs_kerchunk` repository). It also stops
//! at that size: a stream that would inflate past its chunk is an error
//! after at most one chunk's worth of memory, where a reader that grows its
//! buffer would inflate the whole stream first (a zlib stream can inflate
//! to about a thousand times its length).
//!
//! It inflates with [libdeflate](https://github.com/ebiggers/libdeflate),
//! the C library GDAL inflates with, when the feature `libdeflate` is on, and with zlib-rs (pure Rust) otherwise; on the benchmark
//! corpus libdeflate takes about a quarter less time per chunk. [`Inflater`]
//! and [`register_zlib_codec_with`] choose either.
//!
//! zarrs picks codecs by name from a registry of the whole process, so the
//! codec takes effect through [`register_zlib_codec`], for every zarrs array
//! opened after it (until [`ZlibCodecRegistration::unregister`]), whatever
//! its store. Encoding and chunks of no fixed size are left to zarrs' codec.
//!
//! ```
//! use std::sync::Arc;
//! use zarrs::array::codec::{ZlibCodec, ZlibCompressionLevel};
//! use zarrs::array::{Array, ArrayBuilder, data_type};
//! use zarrs::storage::store::MemoryStore;
//!
//! let store = Arc::new(MemoryStore::new());
//! let array = ArrayBuilder::new(vec![8, 8], vec![4, 4], data_type::float32(), 0f32)
//!     .bytes_to_bytes_codecs(vec![Arc::new(ZlibCodec::new(ZlibCompressionLevel::try_from(5u32).expect("0 to 9")))])
//!     .build(store.clone(), "/air")?;
//! array.store_metadata()?;
//! array.store_array_subset(&[0..8, 0..8], &(0..64).map(|i| i as f32).collect::<Vec<_>>())?;
//!
//! // Arrays opened from here on decode zlib chunks with the sized codec.
//! let zlib = zarrs_zlib_sized::register_zlib_codec();
//! let air = Array::open(store, "/air")?;
//! let values: ndarray::ArrayD<f32> = air.retrieve_array_subset(&[0..2, 0..3])?;
//! assert_eq!(values.into_raw_vec_and_offset().0, [0.0, 1.0, 2.0, 8.0, 9.0, 10.0]);
//! zlib.unregister();
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # Features
//!
//! | feature | default | what it adds |
//! |---|---|---|
//! | `libdeflate` | no | [`Inflater::Libdeflate`], the default inflater when built (C, compiled from the bundled source of `libdeflate-sys`) |
//!
//! # Compatibility
//!
//! | `zarrs_zlib_sized` | `zarrs` |
//! |---|---|
//! | 0.1 | 0.23 |

#![cfg_attr(docsrs, feature(doc_cfg))]

use std::any::Any;
use std::borrow::Cow;
use std::sync::Arc;

use flate2::{Decompress, FlushDecompress, Status};
use zarrs::array::ArrayBytesRaw;
use zarrs::array::codec::api::{
    BytesRepresentation, BytesToBytesCodecTraits, Codec, CodecError, CodecMetadataOptions, CodecOptions,
    CodecRuntimePluginV2, CodecRuntimePluginV3, CodecRuntimeRegistryHandleV2, CodecRuntimeRegistryHandleV3,
    CodecTraits, PartialDecoderCapability, PartialEncoderCapability, RecommendedConcurrency, register_codec_v2,
    register_codec_v3, unregister_codec_v2, unregister_codec_v3,
};
use zarrs::array::codec::{ZlibCodec, ZlibCodecConfiguration};
use zarrs::metadata::Configuration;
use zarrs::plugin::{ExtensionAliases, ExtensionName, PluginCreateError, ZarrVersion, ZarrVersion2, ZarrVersion3};

/// A zlib codec (`zlib` in Zarr version 2, `numcodecs.zlib` in version 3)
/// that inflates a chunk of fixed size in one call into a buffer of that size.
///
/// It decodes the same bytes as zarrs' `ZlibCodec`, to which it leaves
/// encoding and chunks of no fixed size. See [the module](self).
#[derive(Clone, Debug)]
pub struct SizedZlibCodec {
    zarrs: ZlibCodec,
    inflater: Inflater,
}

impl SizedZlibCodec {
    /// The codec for a configuration (its compression level, used only to
    /// encode), inflating with the default [`Inflater`].
    ///
    /// # Errors
    /// Returns an error if zarrs' zlib codec does not support the configuration.
    pub fn new_with_configuration(configuration: &ZlibCodecConfiguration) -> Result<Self, PluginCreateError> {
        Ok(Self { zarrs: ZlibCodec::new_with_configuration(configuration)?, inflater: Inflater::default() })
    }

    /// The same codec, inflating with `inflater`.
    #[must_use]
    pub fn with_inflater(self, inflater: Inflater) -> Self {
        Self { inflater, ..self }
    }

    /// The inflater the codec decodes with.
    #[must_use]
    pub fn inflater(&self) -> Inflater {
        self.inflater
    }
}

/// The inflater a [`SizedZlibCodec`] decodes with. Both decode the same
/// bytes, and both stop a stream at its chunk's size.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Inflater {
    /// zlib-rs, through flate2: pure Rust. The default without the feature `libdeflate`.
    ZlibRs,
    /// libdeflate, a C library (the inflater GDAL uses), through the
    /// `libdeflater` crate; feature `libdeflate`, which makes it the
    /// default. It inflates a whole stream in one call, about a quarter
    /// faster than zlib-rs on the benchmark corpus' chunks.
    #[cfg(feature = "libdeflate")]
    #[cfg_attr(docsrs, doc(cfg(feature = "libdeflate")))]
    Libdeflate,
}

impl Default for Inflater {
    /// The fastest inflater built in: libdeflate with the feature `libdeflate`, zlib-rs otherwise.
    fn default() -> Self {
        #[cfg(feature = "libdeflate")]
        return Self::Libdeflate;
        #[cfg(not(feature = "libdeflate"))]
        return Self::ZlibRs;
    }
}

impl Inflater {
    /// Every inflater built in.
    pub const ALL: &[Self] = &[
        Self::ZlibRs,
        #[cfg(feature = "libdeflate")]
        Self::Libdeflate,
    ];

    /// Inflates the zlib stream `encoded` into at most `size` bytes, as
    /// [`inflate_sized`] does, with this inflater.
    ///
    /// # Errors
    /// Returns [`InflateError`] if the stream is corrupt, cut short, or
    /// inflates to more than `size` bytes; the same error whichever inflater.
    pub fn inflate(self, encoded: &[u8], size: usize) -> Result<Vec<u8>, InflateError> {
        let capacity = first_capacity(encoded, size);
        match self {
            Self::ZlibRs => inflate_growing_from(encoded, size, capacity),
            #[cfg(feature = "libdeflate")]
            Self::Libdeflate => inflate_with_libdeflate(encoded, size, capacity),
        }
    }
}

impl ExtensionName for SizedZlibCodec {
    fn name(&self, version: ZarrVersion) -> Option<Cow<'static, str>> {
        self.zarrs.name(version)
    }
}

impl CodecTraits for SizedZlibCodec {
    fn as_any(&self) -> &dyn Any {
        self
    }

    fn configuration(&self, version: ZarrVersion, options: &CodecMetadataOptions) -> Option<Configuration> {
        self.zarrs.configuration(version, options)
    }

    fn partial_decoder_capability(&self) -> PartialDecoderCapability {
        self.zarrs.partial_decoder_capability()
    }

    fn partial_encoder_capability(&self) -> PartialEncoderCapability {
        self.zarrs.partial_encoder_capability()
    }
}

#[async_trait::async_trait]
impl BytesToBytesCodecTraits for SizedZlibCodec {
    fn into_dyn(self: Arc<Self>) -> Arc<dyn BytesToBytesCodecTraits> {
        self
    }

    fn recommended_concurrency(
        &self,
        decoded_representation: &BytesRepresentation,
    ) -> Result<RecommendedConcurrency, CodecError> {
        self.zarrs.recommended_concurrency(decoded_representation)
    }

    fn encoded_representation(&self, decoded_representation: &BytesRepresentation) -> BytesRepresentation {
        self.zarrs.encoded_representation(decoded_representation)
    }

    fn encode<'a>(
        &self,
        decoded_value: ArrayBytesRaw<'a>,
        options: &CodecOptions,
    ) -> Result<ArrayBytesRaw<'a>, CodecError> {
        self.zarrs.encode(decoded_value, options)
    }

    fn decode<'a>(
        &self,
        encoded_value: ArrayBytesRaw<'a>,
        decoded_representation: &BytesRepresentation,
        options: &CodecOptions,
    ) -> Result<ArrayBytesRaw<'a>, CodecError> {
        let BytesRepresentation::FixedSize(size) = *decoded_representation else {
            return self.zarrs.decode(encoded_value, decoded_representation, options);
        };
        // A size that does not fit in memory cannot be decoded into anyway; the
        // buffer only grows as far as the stream really inflates.
        let size = usize::try_from(size).unwrap_or(usize::MAX);
        self.inflater
            .inflate(&encoded_value, size)
            .map(Cow::Owned)
            .map_err(|error| CodecError::Other(error.to_string()))
    }
}

/// How far one byte of a zlib stream can inflate: deflate's densest code
/// spends 2 bits on a 258-byte match, 1032 to 1. The first buffer is no
/// larger than the stream could fill, so a chunk size from hostile metadata
/// does not allocate what its bytes cannot produce.
const MAX_INFLATION: usize = 1032;

/// Why a zlib stream did not inflate to a chunk.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum InflateError {
    /// The stream is not valid zlib (header, block or checksum); the
    /// inflater's own error is the source.
    #[error("zlib: {0}")]
    Corrupt(#[source] Box<dyn std::error::Error + Send + Sync>),
    /// The stream inflates to more bytes than the chunk holds.
    #[error("zlib: the stream inflates to more than the chunk's {size} bytes")]
    TooLong {
        /// The chunk's decoded size.
        size: usize,
    },
    /// The stream ends before its end marker and checksum.
    #[error("zlib: the stream is cut short after {decoded} bytes of output (the chunk holds {size})")]
    Truncated {
        /// The bytes inflated before the input ran out.
        decoded: usize,
        /// The chunk's decoded size.
        size: usize,
    },
}

/// Inflates the zlib stream `encoded` into at most `size` bytes, with the
/// default [`Inflater`].
///
/// A stream that ends before `size` bytes returns what it holds (zarrs then
/// reports the chunk's wrong size, as for its own codec); bytes after the
/// stream's end are ignored, as zarrs' codec does.
///
/// # Errors
/// Returns [`InflateError`] if the stream is corrupt, cut short, or inflates
/// to more than `size` bytes.
pub fn inflate_sized(encoded: &[u8], size: usize) -> Result<Vec<u8>, InflateError> {
    Inflater::default().inflate(encoded, size)
}

/// The first buffer for a chunk of `size` bytes: no larger than `encoded` could fill.
fn first_capacity(encoded: &[u8], size: usize) -> usize {
    size.min(encoded.len().saturating_mul(MAX_INFLATION).saturating_add(64))
}

/// [`inflate_sized`] with libdeflate, which inflates a whole stream in one
/// call into a buffer it may not outgrow, of `capacity` bytes. Where it
/// cannot decide (a buffer smaller than the chunk is full, or a bad stream),
/// zlib-rs does: it grows its buffer only as the stream really fills it, and
/// says how a bad stream is bad (cut short, a bad block or checksum), so that
/// both inflaters give the same bytes and the same errors.
#[cfg(feature = "libdeflate")]
fn inflate_with_libdeflate(encoded: &[u8], size: usize, capacity: usize) -> Result<Vec<u8>, InflateError> {
    use libdeflater::DecompressionError;
    // Bounded by the chunk's size and by what the stream can fill (`first_capacity`).
    let mut decoded = vec![0u8; capacity];
    match libdeflater::Decompressor::new().zlib_decompress(encoded, &mut decoded) {
        Ok(written) => {
            decoded.truncate(written);
            Ok(decoded)
        }
        Err(DecompressionError::InsufficientSpace) if capacity == size => Err(InflateError::TooLong { size }),
        Err(error) => match (inflate_growing_from(encoded, size, capacity), error) {
            (Err(error), _) => Err(error),
            (Ok(decoded), DecompressionError::InsufficientSpace) => Ok(decoded),
            (Ok(_), error @ DecompressionError::BadData) => Err(InflateError::Corrupt(Box::new(error))),
        },
    }
}

/// [`inflate_sized`] into a first buffer of `capacity` bytes.
fn inflate_growing_from(encoded: &[u8], size: usize, capacity: usize) -> Result<Vec<u8>, InflateError> {
    let mut inflate = Decompress::new(true);
    let mut decoded = Vec::with_capacity(capacity);
    let consumed = |inflate: &Decompress| usize::try_from(inflate.total_in()).unwrap_or(usize::MAX);
    while decoded.len() < size {
        if decoded.len() == decoded.capacity() {
            // The first buffer was bounded by the stream's length, yet the stream goes on: grow as it fills.
            decoded.reserve_exact(decoded.len().max(64).min(size - decoded.len()));
        }
        let input = encoded.get(consumed(&inflate)..).unwrap_or_default();
        let filled = decoded.len();
        match inflate.decompress_vec(input, &mut decoded, FlushDecompress::Finish).map_err(corrupt)? {
            Status::StreamEnd if decoded.len() <= size => return Ok(decoded),
            Status::StreamEnd => return Err(InflateError::TooLong { size }),
            // With room left to write, the stream stopped because its input ran out.
            _ if decoded.len() < decoded.capacity() || decoded.len() == filled => {
                return Err(InflateError::Truncated { decoded: decoded.len(), size });
            }
            _ => {}
        }
    }
    if decoded.len() > size {
        return Err(InflateError::TooLong { size });
    }
    // The chunk is full; the stream must end here, with no more output: its
    // last block's end and its checksum may still be unread.
    let input = encoded.get(consumed(&inflate)..).unwrap_or_default();
    let mut probe = [0u8; 1];
    let before = inflate.total_out();
    match inflate.decompress(input, &mut probe, FlushDecompress::Finish).map_err(corrupt)? {
        _ if inflate.total_out() > before => Err(InflateError::TooLong { size }),
        Status::StreamEnd => Ok(decoded),
        _ => Err(InflateError::Truncated { decoded: decoded.len(), size }),
    }
}

fn corrupt(error: flate2::DecompressError) -> InflateError {
    InflateError::Corrupt(Box::new(error))
}

/// The registration of [`SizedZlibCodec`] in zarrs' codec registries, made by
/// [`register_zlib_codec`].
#[must_use = "keep the registration to unregister it later, or drop it to keep the codec registered"]
pub struct ZlibCodecRegistration {
    v2: CodecRuntimeRegistryHandleV2,
    v3: CodecRuntimeRegistryHandleV3,
}

impl std::fmt::Debug for ZlibCodecRegistration {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ZlibCodecRegistration").finish_non_exhaustive()
    }
}

impl ZlibCodecRegistration {
    /// Removes the codec from zarrs' registries: arrays opened afterwards use
    /// zarrs' own zlib codec. Arrays already open keep the codec they have.
    pub fn unregister(self) {
        unregister_codec_v2(&self.v2);
        unregister_codec_v3(&self.v3);
    }
}

/// Registers [`SizedZlibCodec`] with zarrs for the names its own zlib codec
/// answers to (`zlib` in Zarr version 2, `numcodecs.zlib` in version 3), for
/// every array opened afterwards in this process, until
/// [`ZlibCodecRegistration::unregister`]. It inflates with the default
/// [`Inflater`].
///
/// Dropping the registration keeps the codec registered. zarrs checks codecs
/// registered at run time before its own, so the latest registration wins.
pub fn register_zlib_codec() -> ZlibCodecRegistration {
    register_zlib_codec_with(Inflater::default())
}

/// [`register_zlib_codec`], inflating with `inflater`.
pub fn register_zlib_codec_with(inflater: Inflater) -> ZlibCodecRegistration {
    let codec = move |configuration: ZlibCodecConfiguration| -> Result<Codec, PluginCreateError> {
        let codec = SizedZlibCodec::new_with_configuration(&configuration)?.with_inflater(inflater);
        Ok(Codec::BytesToBytes(Arc::new(codec)))
    };
    let v2 = register_codec_v2(CodecRuntimePluginV2::new(
        <ZlibCodec as ExtensionAliases<ZarrVersion2>>::matches_name,
        move |metadata| codec(metadata.to_typed_configuration()?),
    ));
    let v3 = register_codec_v3(CodecRuntimePluginV3::new(
        <ZlibCodec as ExtensionAliases<ZarrVersion3>>::matches_name,
        move |metadata| codec(metadata.to_typed_configuration()?),
    ));
    ZlibCodecRegistration { v2, v3 }
}

#[cfg(test)]
mod tests {
    use std::io::{Read, Write};

    use super::{InflateError, Inflater};

    fn zlib(data: &[u8]) -> Vec<u8> {
        zlib_at(data, 1)
    }

    fn zlib_at(data: &[u8], level: u32) -> Vec<u8> {
        let mut encoder = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::new(level));
        encoder.write_all(data).unwrap();
        encoder.finish().unwrap()
    }

    /// What zarrs' codec decodes: the stream read to its end into a growing buffer.
    fn streamed(encoded: &[u8]) -> std::io::Result<Vec<u8>> {
        let mut decoded = Vec::new();
        flate2::read::ZlibDecoder::new(encoded).read_to_end(&mut decoded)?;
        Ok(decoded)
    }

    fn field(len: usize) -> Vec<u8> {
        (0..len).map(|i| u8::try_from((i * 7 + i / 300) % 251).unwrap()).collect()
    }

    /// `inflater`, with a first buffer of `capacity` bytes.
    fn with_capacity(inflater: Inflater, capacity: usize) -> impl Fn(&[u8], usize) -> Result<Vec<u8>, InflateError> {
        move |encoded, size| match inflater {
            Inflater::ZlibRs => super::inflate_growing_from(encoded, size, capacity),
            #[cfg(feature = "libdeflate")]
            Inflater::Libdeflate => super::inflate_with_libdeflate(encoded, size, capacity),
        }
    }

    #[test]
    fn the_default_is_the_fastest_built_in() {
        let expected = if cfg!(feature = "libdeflate") { Inflater::ALL[1] } else { Inflater::ZlibRs };
        assert_eq!(Inflater::default(), expected);
    }

    #[test]
    fn a_stream_of_the_chunk_size_decodes_to_its_bytes() {
        for &inflater in Inflater::ALL {
            for len in [0, 1, 257, 258, 259, 4096, 262_144] {
                let data = field(len);
                assert_eq!(inflater.inflate(&zlib(&data), len).unwrap(), data, "{inflater:?}, {len} bytes");
            }
        }
    }

    #[test]
    fn a_chunk_of_zeros_at_deflates_densest_decodes() {
        // Runs of 258-byte matches: the stream is about a thousandth of the chunk.
        let data = vec![0u8; 4 << 20];
        let encoded = zlib_at(&data, 9);
        assert!(encoded.len() * 900 < data.len(), "{} bytes", encoded.len());
        for &inflater in Inflater::ALL {
            assert_eq!(inflater.inflate(&encoded, data.len()).unwrap(), data, "{inflater:?}");
        }
    }

    #[test]
    fn bytes_after_the_stream_are_ignored_as_zarrs_does() {
        let data = field(10_000);
        let mut encoded = zlib(&data);
        encoded.extend_from_slice(b"trailing bytes");
        assert_eq!(streamed(&encoded).unwrap(), data);
        for &inflater in Inflater::ALL {
            assert_eq!(inflater.inflate(&encoded, data.len()).unwrap(), data, "{inflater:?}");
        }
    }

    #[test]
    fn a_stream_longer_than_the_chunk_is_an_error_not_a_longer_chunk() {
        let encoded = zlib(&field(10_000));
        // A zlib bomb stops at the chunk's size.
        let bomb = zlib(&vec![0u8; 64 << 20]);
        for &inflater in Inflater::ALL {
            for size in [0, 1, 9_999] {
                let error = inflater.inflate(&encoded, size).unwrap_err();
                assert!(
                    matches!(error, InflateError::TooLong { size: s } if s == size),
                    "{inflater:?}, {size}: {error}"
                );
            }
            assert!(matches!(inflater.inflate(&bomb, 1 << 20), Err(InflateError::TooLong { .. })), "{inflater:?}");
        }
    }

    #[test]
    fn a_stream_shorter_than_the_chunk_returns_what_it_holds() {
        // zarrs reports the chunk's wrong size, as for its own codec.
        let data = field(1000);
        for &inflater in Inflater::ALL {
            assert_eq!(inflater.inflate(&zlib(&data), 4096).unwrap(), data, "{inflater:?}");
        }
    }

    #[test]
    fn a_stream_cut_short_anywhere_is_an_error() {
        let data = field(5000);
        let encoded = zlib(&data);
        for &inflater in Inflater::ALL {
            for cut in 0..encoded.len() {
                let result = inflater.inflate(&encoded[..cut], data.len());
                assert!(
                    result.is_err(),
                    "{inflater:?}: cut at {cut} of {}: {:?}",
                    encoded.len(),
                    result.map(|d| d.len())
                );
            }
        }
        // Cut in the checksum, after every byte of the chunk was written.
        for &inflater in Inflater::ALL {
            let error = inflater.inflate(&encoded[..encoded.len() - 2], data.len()).unwrap_err();
            assert!(matches!(error, InflateError::Truncated { decoded: 5000, size: 5000 }), "{inflater:?}: {error}");
        }
    }

    #[test]
    fn a_buffer_too_small_for_the_stream_grows_to_the_chunk_size() {
        let data = field(100_000);
        let short = field(100);
        for &inflater in Inflater::ALL {
            for capacity in [0, 1, 63, 64, 65, 50_000] {
                let inflate = with_capacity(inflater, capacity);
                assert_eq!(inflate(&zlib(&data), data.len()).unwrap(), data, "{inflater:?}, {capacity}");
                let error = inflate(&zlib(&data), 99_999).unwrap_err();
                assert!(matches!(error, InflateError::TooLong { .. }), "{inflater:?}, {capacity}: {error}");
            }
            // The last step grows by less than the first 64 bytes.
            assert_eq!(with_capacity(inflater, 50)(&zlib(&short), 100).unwrap(), short, "{inflater:?}");
        }
    }

    #[test]
    fn a_huge_chunk_size_allocates_only_what_the_stream_can_fill() {
        let data = field(100);
        for &inflater in Inflater::ALL {
            assert_eq!(inflater.inflate(&zlib(&data), usize::MAX).unwrap(), data, "{inflater:?}");
            let error = inflater.inflate(b"\x78\x01", usize::MAX).unwrap_err();
            assert!(matches!(error, InflateError::Truncated { decoded: 0, .. }), "{inflater:?}: {error}");
        }
    }

    #[test]
    fn a_corrupt_stream_is_an_error() {
        let mut encoded = zlib(&field(3000));
        let last = encoded.len() - 1;
        encoded[last] ^= 0xff; // the checksum
        for &inflater in Inflater::ALL {
            let error = inflater.inflate(b"not zlib at all", 100).unwrap_err();
            assert!(matches!(error, InflateError::Corrupt(_)), "{inflater:?}: {error}");
            assert!(std::error::Error::source(&error).is_some(), "{inflater:?}: the inflater's error is kept");
            assert!(matches!(inflater.inflate(&encoded, 3000), Err(InflateError::Corrupt(_))), "{inflater:?}");
        }
    }

    /// Mutated streams decode as the streaming reader decodes them, or fail where it fails or
    /// where they would pass the chunk's size; every inflater built in agrees.
    #[test]
    fn it_agrees_with_the_streaming_reader_on_mutated_streams() {
        let mut state = 42u64;
        let mut next = move || {
            state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
            let mut z = state;
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            usize::try_from((z ^ (z >> 31)) % (1 << 20)).unwrap()
        };
        let sources = [field(3000), vec![7u8; 3000], field(40)];
        for round in 0..3000 {
            let data = &sources[round % sources.len()];
            let mut encoded = zlib(data);
            for _ in 0..=next() % 3 {
                let at = next() % encoded.len();
                encoded[at] = u8::try_from(next() % 256).unwrap();
            }
            let size = [data.len(), data.len() / 2, data.len() * 2][next() % 3];
            // The inflaters fail on the same streams with the same error, except that a stream
            // both corrupt and too long may be found to be either first.
            let errors: Vec<String> = Inflater::ALL
                .iter()
                .map(|i| i.inflate(&encoded, size).err().map(|e| e.to_string()).unwrap_or_default())
                .collect();
            let too_long = |e: &String| e.contains("inflates to more than");
            assert!(
                errors.iter().all(|e| *e == errors[0]
                    || (!e.is_empty() && !errors[0].is_empty() && (too_long(e) || too_long(&errors[0])))),
                "round {round}: the inflaters disagree: {errors:?}"
            );
            for &inflater in Inflater::ALL {
                match (streamed(&encoded), inflater.inflate(&encoded, size)) {
                    (Ok(expected), Ok(decoded)) => assert_eq!(decoded, expected, "{inflater:?}, round {round}"),
                    (Ok(expected), Err(InflateError::TooLong { .. })) => {
                        assert!(expected.len() > size, "{inflater:?}, round {round}");
                    }
                    (Ok(expected), Err(error)) => {
                        panic!("{inflater:?}, round {round}: {error}, streamed {} bytes", expected.len())
                    }
                    (Err(_), Ok(decoded)) => {
                        panic!("{inflater:?}, round {round}: decoded {} bytes the reader refuses", decoded.len())
                    }
                    (Err(_), Err(_)) => {}
                }
            }
        }
    }
}
