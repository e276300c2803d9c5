//! The zarrs side of a codec that only decodes: one wrapper, so that each
//! codec's file holds its configuration and its decoding, nothing else.
//!
//! Every codec here is bytes to bytes: zarrs builds a Zarr V2 array's
//! pipeline from its `filters` (in order) then its `compressor`, and decodes
//! in the reverse order, as numcodecs does. A filter such as TIFF's
//! predictor therefore runs on the decompressed bytes, before zarrs' bytes
//! codec reads them in the array's byte order.

use std::any::Any;
use std::borrow::Cow;
use std::fmt;
use std::sync::Arc;

use serde_json::{Map, Value};
use zarrs::array::ArrayBytesRaw;
use zarrs::array::codec::api::{
    BytesRepresentation, BytesToBytesCodecTraits, CodecError, CodecMetadataOptions, CodecOptions, CodecTraits,
    PartialDecoderCapability, PartialEncoderCapability, RecommendedConcurrency,
};
use zarrs::metadata::Configuration;
use zarrs::plugin::{ExtensionName, ZarrVersion};

use crate::error::DecodeError;

/// A codec's decoding, given the chunk's decoded size.
pub(crate) trait Decode: fmt::Debug + Send + Sync + 'static {
    /// The numcodecs id (Zarr V2); Zarr V3 names it `numcodecs.<id>`.
    const ID: &'static str;

    /// Whether the encoded bytes are as many as the decoded (a filter such
    /// as a predictor), so that a codec before it knows the size to stop at.
    const SAME_SIZE: bool = false;

    /// Whether the decoded chunk is of variable length (text): decoded
    /// whatever size zarrs gives, the codec bounding its output itself.
    const VARIABLE: bool = false;

    /// The configuration, as the metadata writes it (without `id`): none unless a codec has one.
    fn configuration(&self) -> Map<String, Value> {
        Map::new()
    }

    /// Decode `encoded` into at most `size` bytes: a stream that would give
    /// more is an error after at most `size` bytes of memory.
    fn decode(&self, encoded: &[u8], size: usize) -> Result<Vec<u8>, DecodeError>;
}

/// A [`Decode`] as a zarrs bytes-to-bytes codec: encoding is refused.
#[derive(Debug)]
pub(crate) struct DecodeOnly<D>(pub(crate) D);

impl<D: Decode> ExtensionName for DecodeOnly<D> {
    fn name(&self, version: ZarrVersion) -> Option<Cow<'static, str>> {
        Some(match version {
            ZarrVersion::V2 => Cow::Borrowed(D::ID),
            ZarrVersion::V3 => Cow::Owned(format!("numcodecs.{}", D::ID)),
        })
    }
}

impl<D: Decode> CodecTraits for DecodeOnly<D> {
    fn as_any(&self) -> &dyn Any {
        self
    }

    fn configuration(&self, _version: ZarrVersion, _options: &CodecMetadataOptions) -> Option<Configuration> {
        Some(Configuration::from(self.0.configuration()))
    }

    fn partial_decoder_capability(&self) -> PartialDecoderCapability {
        PartialDecoderCapability { partial_read: false, partial_decode: false }
    }

    fn partial_encoder_capability(&self) -> PartialEncoderCapability {
        PartialEncoderCapability { partial_encode: false }
    }
}

#[async_trait::async_trait]
impl<D: Decode> BytesToBytesCodecTraits for DecodeOnly<D> {
    fn into_dyn(self: Arc<Self>) -> Arc<dyn BytesToBytesCodecTraits> {
        self
    }

    fn recommended_concurrency(&self, _decoded: &BytesRepresentation) -> Result<RecommendedConcurrency, CodecError> {
        Ok(RecommendedConcurrency::new_maximum(1))
    }

    fn encoded_representation(&self, decoded: &BytesRepresentation) -> BytesRepresentation {
        if D::SAME_SIZE { *decoded } else { BytesRepresentation::UnboundedSize }
    }

    fn encode<'a>(
        &self,
        _decoded: ArrayBytesRaw<'a>,
        _options: &CodecOptions,
    ) -> Result<ArrayBytesRaw<'a>, CodecError> {
        Err(CodecError::Other(format!("{}: this codec only decodes", D::ID)))
    }

    fn decode<'a>(
        &self,
        encoded: ArrayBytesRaw<'a>,
        decoded: &BytesRepresentation,
        _options: &CodecOptions,
    ) -> Result<ArrayBytesRaw<'a>, CodecError> {
        let size = match *decoded {
            BytesRepresentation::FixedSize(size) | BytesRepresentation::BoundedSize(size) => size,
            BytesRepresentation::UnboundedSize if D::VARIABLE => u64::MAX,
            BytesRepresentation::UnboundedSize => {
                return Err(CodecError::Other(format!("{}: a chunk of no bounded size cannot be decoded", D::ID)));
            }
        };
        // A size beyond memory cannot be decoded into anyway; buffers grow
        // only as far as the stream really decodes.
        let size = usize::try_from(size).unwrap_or(usize::MAX);
        self.0.decode(&encoded, size).map(Cow::Owned).map_err(|error| CodecError::Other(format!("{}: {error}", D::ID)))
    }
}
