//! numcodecs' filters that zarrs lacks (`tests/codecs/numcodecs/cases.json`,
//! made by its `make.py` with numcodecs 0.16.6): each chunk numcodecs
//! encoded decodes to the bytes numcodecs' own decode gives.

use std::borrow::Cow;
use std::path::Path;

use base64::Engine;
use zarrs::array::codec::api::{BytesRepresentation, Codec, CodecOptions};
use zarrs::metadata::v2::MetadataV2;

#[test]
fn every_case_decodes_as_numcodecs_decodes_it() {
    let _codecs = zarrs_kerchunk_codecs::register_codecs();
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/codecs/numcodecs/cases.json");
    let cases: Vec<serde_json::Value> = serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap();
    let base64 =
        |value: &serde_json::Value| base64::engine::general_purpose::STANDARD.decode(value.as_str().unwrap()).unwrap();
    let mut ids = std::collections::BTreeSet::new();
    for case in &cases {
        let configuration = &case["configuration"];
        let metadata: MetadataV2 = serde_json::from_value(configuration.clone()).unwrap();
        let Codec::BytesToBytes(codec) = Codec::from_metadata(&metadata).unwrap() else { panic!("{configuration}") };
        let (encoded, expected) = (base64(&case["encoded"]), base64(&case["decoded"]));
        let size = BytesRepresentation::FixedSize(expected.len() as u64);
        let decoded = codec.decode(Cow::Owned(encoded.clone()), &size, &CodecOptions::default()).unwrap();
        assert_eq!(decoded.as_ref(), &expected[..], "{configuration}");
        // One byte short of the chunk is refused, not decoded into a larger buffer.
        if configuration["id"] != "bitround" {
            let small = BytesRepresentation::FixedSize(expected.len() as u64 - 1);
            let err = codec.decode(Cow::Owned(encoded), &small, &CodecOptions::default()).unwrap_err().to_string();
            let id = configuration["id"].as_str().unwrap();
            let expected = format!("{id}: the stream decodes to more than the chunk's {} bytes", expected.len() - 1);
            assert_eq!(err, expected, "{configuration}");
        }
        ids.insert(configuration["id"].as_str().unwrap().to_owned());
    }
    assert_eq!(ids.into_iter().collect::<Vec<_>>(), ["astype", "bitround", "delta", "fixedscaleoffset", "quantize"]);
}
