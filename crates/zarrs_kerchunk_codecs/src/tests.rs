//! Every decoder on streams made by an encoder of its format: what they
//! hold decodes; one byte more than the chunk is an error, not a larger
//! buffer; a stream cut short is an error or a short chunk, never a panic.

use std::io::Write;

use crate::decode_only::Decode;
use crate::deflate::Deflate;
use crate::error::DecodeError;
use crate::lzma::{Lzma, LzmaConfiguration};
use crate::lzw::Lzw;
use crate::zstd::{PureZstd, Zstd};

/// Bytes that compress well, as a bomb does.
fn field(len: usize) -> Vec<u8> {
    (0..len).map(|i| u8::try_from(i / 1000 % 7).unwrap()).collect()
}

fn lzw(data: &[u8]) -> Vec<u8> {
    weezl::encode::Encoder::with_tiff_size_switch(weezl::BitOrder::Msb, 8).encode(data).unwrap()
}

/// A zip archive's DEFLATE member from its local file header on, as kerchunk references it.
fn zip_member(data: &[u8]) -> Vec<u8> {
    let mut encoder = flate2::write::DeflateEncoder::new(Vec::new(), flate2::Compression::best());
    encoder.write_all(data).unwrap();
    let stream = encoder.finish().unwrap();
    let (name, extra) = (b"a/0.0", b"\xca\xfe\x00\x00");
    let mut member = b"PK\x03\x04\x14\x00\x00\x00\x08\x00".to_vec();
    member.extend([0u8; 8]); // time, date, CRC-32: not read
    member.extend(u32::try_from(stream.len()).unwrap().to_le_bytes());
    member.extend(u32::try_from(data.len()).unwrap().to_le_bytes());
    member.extend(u16::try_from(name.len()).unwrap().to_le_bytes());
    member.extend(u16::try_from(extra.len()).unwrap().to_le_bytes());
    member.extend(name);
    member.extend(extra);
    member.extend(stream);
    member
}

fn xz(data: &[u8]) -> Vec<u8> {
    let mut writer = lzma_rust2::XzWriter::new(Vec::new(), lzma_rust2::XzOptions::default()).unwrap();
    writer.write_all(data).unwrap();
    writer.finish().unwrap()
}

fn lzma_codec() -> Lzma {
    Lzma::new(serde_json::from_str::<LzmaConfiguration>("{}").unwrap()).unwrap()
}

/// `decode` on `encoded` (of `data`): whole at its size, refused one byte
/// short, and every prefix of the stream an error or short, never a panic.
fn check<D: Decode>(codec: &D, data: &[u8], encoded: &[u8]) {
    let name = D::ID;
    let decode = |encoded: &[u8], size| codec.decode(encoded, size);
    assert_eq!(decode(encoded, data.len()).unwrap(), data, "{name}");
    let short = decode(encoded, data.len() - 1);
    assert!(matches!(short, Err(DecodeError::TooLong { size }) if size == data.len() - 1), "{name}: {short:?}");
    for cut in [0, 1, encoded.len() / 2, encoded.len() - 1] {
        if let Ok(decoded) = decode(&encoded[..cut], data.len()) {
            assert!(decoded.len() < data.len() || decoded == data, "{name}: cut at {cut}");
        }
    }
}

#[test]
fn decoders_stop_at_the_chunk_size() {
    let data = field(1 << 20);
    check(&Lzw, &data, &lzw(&data));
    check(&Deflate, &data, &zip_member(&data));
    check(&Zstd, &data, &zstd::encode_all(&data[..], 19).unwrap());
    check(&PureZstd, &data, &zstd::encode_all(&data[..], 19).unwrap());
    check(&lzma_codec(), &data, &xz(&data));
}

/// A zip member that is stored, or whose header is cut, is refused naming why.
#[test]
fn deflate_reads_a_zip_members_header() {
    let mut stored = zip_member(b"values");
    stored[8] = 0;
    assert!(Deflate.decode(&stored, 6).unwrap_err().to_string().contains("compression method 0"));
    assert!(Deflate.decode(&zip_member(b"values")[..33], 6).unwrap_err().to_string().contains("run past"));
    assert!(Deflate.decode(b"raw deflate", 6).unwrap_err().to_string().contains("signature"));
}

/// Two zstd frames one after the other decode as one chunk, as zstd's tool reads them.
#[test]
fn zstd_frames_follow_one_another() {
    let data = field(5000);
    let mut encoded = zstd::encode_all(&data[..2000], 3).unwrap();
    encoded.extend(zstd::encode_all(&data[2000..], 3).unwrap());
    assert_eq!(Zstd.decode(&encoded, 5000).unwrap(), data);
    assert!(matches!(Zstd.decode(&encoded, 4999), Err(DecodeError::TooLong { size: 4999 })));
    assert_eq!(PureZstd.decode(&encoded, 5000).unwrap(), data);
    assert!(matches!(PureZstd.decode(&encoded, 4999), Err(DecodeError::TooLong { size: 4999 })));
}

/// Every zstd tile GDAL wrote in `tests/codecs/tiff` decodes to the same bytes through ruzstd,
/// through the decoder of this build, and through the C library itself (the `zstd` crate, a
/// dev-dependency, so in every build: without `zstd-c` this build's decoder is ruzstd): the
/// pure-Rust build reads what the command line and the Python package read.
#[test]
fn ruzstd_decodes_gdals_tiles_as_this_build_does() {
    let folder = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/codecs/tiff");
    let (mut tiles, mut grid_tiles) = (0, 0);
    for case in ["zstd_i16", "zstd_f32_pred3"] {
        let file = std::fs::read(folder.join(format!("{case}.tif"))).unwrap();
        let refs: serde_json::Value =
            serde_json::from_slice(&std::fs::read(folder.join(format!("{case}.kerchunk.json"))).unwrap()).unwrap();
        let zarray: serde_json::Value = serde_json::from_str(refs[".zarray"].as_str().unwrap()).unwrap();
        let item: usize = zarray["dtype"].as_str().unwrap()[2..].parse().unwrap();
        let size = zarray["chunks"]
            .as_array()
            .unwrap()
            .iter()
            .map(|n| usize::try_from(n.as_u64().unwrap()).unwrap())
            .product::<usize>()
            * item;
        let axis = |field: &str| -> Vec<u64> {
            zarray[field].as_array().unwrap().iter().map(|n| n.as_u64().unwrap()).collect()
        };
        grid_tiles += axis("shape").iter().zip(axis("chunks")).map(|(s, c)| s.div_ceil(c)).product::<u64>();
        for (key, value) in refs.as_object().unwrap() {
            let Some(range) = value.as_array().filter(|_| key.starts_with(|c: char| c.is_ascii_digit())) else {
                continue;
            };
            let (offset, length) = (
                usize::try_from(range[1].as_u64().unwrap()).unwrap(),
                usize::try_from(range[2].as_u64().unwrap()).unwrap(),
            );
            let tile = &file[offset..offset + length];
            let c_library = zstd::bulk::decompress(tile, size).unwrap();
            assert_eq!(c_library.len(), size, "{case} {key}");
            assert_eq!(PureZstd.decode(tile, size).unwrap(), c_library, "{case} {key}: ruzstd");
            assert_eq!(Zstd.decode(tile, size).unwrap(), c_library, "{case} {key}: this build's decoder");
            tiles += 1;
        }
    }
    // Every tile of each grid, each checked.
    assert_eq!(tiles, grid_tiles);
}

/// The raw LZMA streams numcodecs' format 3 writes need their filters, which are refused.
#[test]
fn raw_lzma_is_refused_when_opened() {
    let raw = serde_json::from_str::<LzmaConfiguration>(r#"{"format": 3, "filters": [{"id": 33}]}"#).unwrap();
    assert!(Lzma::new(raw).unwrap_err().contains("format 3"));
}
