//! One call registers every codec with zarrs; one asks whether an id decodes.

use std::sync::Arc;

use serde::de::{DeserializeOwned, IgnoredAny};
use zarrs::array::codec::api::{
    Codec, CodecRuntimePluginV2, CodecRuntimePluginV3, CodecRuntimeRegistryHandleV2, CodecRuntimeRegistryHandleV3,
    register_codec_v2, register_codec_v3, unregister_codec_v2, unregister_codec_v3,
};
use zarrs::metadata::v2::MetadataV2;
use zarrs::plugin::PluginCreateError;

use crate::crop::{Crop, CropConfiguration};
use crate::decode_only::{Decode, DecodeOnly};
use crate::deflate::Deflate;
use crate::fletcher32::Fletcher32;
use crate::grib::Grib;
use crate::hdf_strings::FillHdfStrings;
use crate::hdf5_plugins::{Bitshuffle, Lz4h5};
use crate::image::{Jpeg, Jpeg2k, Png, Webp};
use crate::jpegxl::JpegXl;
use crate::lerc::Lerc;
use crate::lzma::Lzma;
use crate::lzw::Lzw;
use crate::numeric::{BitRound, Cast, FixedScaleOffset, NumcodecsDelta};
use crate::packbits::PackBits;
use crate::predictor::{Delta, FloatPredictor};
use crate::zstd::Zstd;

/// The Zarr V2 ids of the codecs [`register_codecs`] adds (Zarr V3 names
/// them `numcodecs.<id>`).
pub const IDS: &[&str] = &[
    Lzw::ID,
    PackBits::ID,
    Zstd::ID,
    Lzma::ID,
    Delta::ID,
    FloatPredictor::ID,
    Deflate::ID,
    Grib::ID,
    NumcodecsDelta::ID,
    Cast::<false>::ID,
    Cast::<true>::ID,
    BitRound::ID,
    FixedScaleOffset::ID,
    Jpeg::ID,
    Webp::ID,
    Png::ID,
    Lerc::ID,
    Jpeg2k::ID,
    JpegXl::ID,
    FillHdfStrings::ID,
    Lz4h5::ID,
    Bitshuffle::ID,
    Fletcher32::ID,
];

/// The registration of this crate's codecs in zarrs' codec registries, made
/// by [`register_codecs`].
#[must_use = "keep the registration to unregister it later, or drop it to keep the codecs registered"]
pub struct CodecsRegistration {
    v2: Vec<CodecRuntimeRegistryHandleV2>,
    v3: Vec<CodecRuntimeRegistryHandleV3>,
}

impl std::fmt::Debug for CodecsRegistration {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CodecsRegistration").field("ids", &IDS).finish_non_exhaustive()
    }
}

impl CodecsRegistration {
    /// Removes the codecs from zarrs' registries. Arrays already open keep
    /// the codecs they have.
    pub fn unregister(self) {
        self.v2.iter().for_each(|handle| {
            unregister_codec_v2(handle);
        });
        self.v3.iter().for_each(|handle| {
            unregister_codec_v3(handle);
        });
    }

    /// Registers `make`, which builds the codec from its configuration, for
    /// `D::ID` in Zarr V2 and `numcodecs.<id>` in Zarr V3.
    fn add<D, C>(&mut self, make: fn(C) -> Result<D, String>)
    where
        D: Decode,
        C: DeserializeOwned + 'static,
    {
        let create = move |configuration: Result<C, Arc<serde_json::Error>>| -> Result<Codec, PluginCreateError> {
            let codec =
                make(configuration?).map_err(|reason| PluginCreateError::Other(format!("{}: {reason}", D::ID)))?;
            Ok(Codec::BytesToBytes(Arc::new(DecodeOnly(codec))))
        };
        let v3_name = format!("numcodecs.{}", D::ID);
        self.v2.push(register_codec_v2(CodecRuntimePluginV2::new(
            |name| name == D::ID,
            move |metadata| create(metadata.to_typed_configuration()),
        )));
        self.v3.push(register_codec_v3(CodecRuntimePluginV3::new(
            move |name| name == v3_name,
            move |metadata| create(metadata.to_typed_configuration()),
        )));
    }
}

/// Registers every codec of this crate with zarrs, for every array opened
/// afterwards in this process, until [`CodecsRegistration::unregister`].
/// Dropping the registration keeps the codecs registered; registering twice
/// is harmless (the latest registration wins).
pub fn register_codecs() -> CodecsRegistration {
    let mut registration = CodecsRegistration { v2: Vec::new(), v3: Vec::new() };
    registration.add(|_: IgnoredAny| Ok(Lzw));
    registration.add(|_: IgnoredAny| Ok(PackBits));
    registration.add(|_: IgnoredAny| Ok(Zstd));
    registration.add(Lzma::new);
    registration.add(Delta::new);
    registration.add(FloatPredictor::new);
    registration.add(|_: IgnoredAny| Ok(Deflate));
    registration.add(Grib::new);
    registration.add(NumcodecsDelta::new);
    registration.add(Cast::astype);
    registration.add(Cast::quantize);
    registration.add(|bitround: BitRound| Ok(bitround));
    registration.add(FixedScaleOffset::new);
    registration.add(Jpeg::new);
    registration.add(|webp: Webp| Ok(webp));
    registration.add(|_: IgnoredAny| Ok(Png));
    registration.add(|_: IgnoredAny| Ok(Lerc));
    registration.add(|_: IgnoredAny| Ok(Jpeg2k));
    registration.add(|_: IgnoredAny| Ok(JpegXl));
    registration.add(FillHdfStrings::new);
    registration.add(|_: IgnoredAny| Ok(Lz4h5));
    registration.add(Bitshuffle::new);
    // Over zarrs' own, which misses an odd length's last byte.
    registration.add(|_: IgnoredAny| Ok(Fletcher32));
    // Zarr v3 only: v2's grids are regular, and their chunks stored at their place.
    registration.v3.push(register_codec_v3(CodecRuntimePluginV3::new(
        |name| name == crate::crop::NAME,
        |metadata| {
            let fail = |reason: String| PluginCreateError::Other(format!("{}: {reason}", crate::crop::NAME));
            let configuration: CropConfiguration =
                metadata.to_typed_configuration().map_err(|e| fail(e.to_string()))?;
            Ok(Codec::ArrayToArray(Arc::new(Crop::new(configuration).map_err(fail)?)))
        },
    )));
    registration
}

/// Whether zarrs has a decoder for the Zarr V2 codec `id` now: one of this
/// crate's once registered, or one of zarrs' own (with the features it was
/// built with). A configuration may still be refused when an array is opened.
#[must_use]
pub fn is_decodable(id: &str) -> bool {
    let Ok(metadata) = serde_json::from_value::<MetadataV2>(serde_json::json!({ "id": id })) else {
        return false;
    };
    !matches!(Codec::from_metadata(&metadata), Err(PluginCreateError::Unsupported(_)))
}

#[cfg(test)]
mod tests {
    /// `IDS` names every codec `register_codecs` adds, in the same order.
    #[test]
    fn ids_are_what_is_registered() {
        let registration = super::register_codecs();
        assert_eq!(registration.v2.len(), super::IDS.len());
        for (handle, id) in registration.v2.iter().zip(super::IDS) {
            assert!(handle.match_name(id), "{id}");
        }
        registration.unregister();
    }
}
