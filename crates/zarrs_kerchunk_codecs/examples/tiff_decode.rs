//! Decode every tile kerchunk references in TIFF files with this crate's codecs (the compressor,
//! then the filters in reverse, as zarrs decodes a Zarr V2 chunk), the tiles read into memory
//! first, and print one line per file: `<refs> zarrs_kerchunk_codecs <median ms> <min ms>`.
//!
//! ```text
//! cargo run --release -p zarrs_kerchunk_codecs --example tiff_decode -- RUNS REFS...
//! ```
//! `benches/codecs/tiff.sh` runs it beside imagecodecs on the same tiles. Each `REFS` is a
//! `kerchunk.tiff.tiff_to_zarr` document beside its `.tif`.

use std::borrow::Cow;
use std::time::Instant;

use zarrs::array::codec::api::{BytesRepresentation, Codec, CodecOptions};
use zarrs::metadata::v2::MetadataV2;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let runs: usize = args.next().ok_or("usage: tiff_decode RUNS REFS...")?.parse()?;
    let _codecs = zarrs_kerchunk_codecs::register_codecs();
    let _zlib = zarrs_zlib_sized::register_zlib_codec();
    for path in args {
        let document: serde_json::Value = serde_json::from_slice(&std::fs::read(&path)?)?;
        let refs = document.get("refs").unwrap_or(&document);
        let meta: serde_json::Value = match &refs[".zarray"] {
            serde_json::Value::String(text) => serde_json::from_str(text)?,
            other => other.clone(),
        };
        let file = std::fs::read(path.replace(".kerchunk.json", ".tif"))?;
        let tile_bytes: Vec<&[u8]> = refs
            .as_object()
            .ok_or("refs is not an object")?
            .values()
            .filter_map(|v| v.as_array())
            .filter_map(|v| {
                Some(&file[usize::try_from(v[1].as_u64()?).ok()?..][..usize::try_from(v[2].as_u64()?).ok()?])
            })
            .collect();
        let item: usize = meta["dtype"].as_str().ok_or("dtype")?[2..].parse()?;
        let size =
            meta["chunks"].as_array().ok_or("chunks")?.iter().filter_map(serde_json::Value::as_u64).product::<u64>()
                * item as u64;
        let mut chain = Vec::new();
        for codec in std::iter::once(&meta["compressor"]).chain(meta["filters"].as_array().into_iter().flatten().rev())
        {
            let mut codec = codec.clone();
            // tifffile writes zlib without a level, which only compressing needs (the store adds one too).
            if codec["id"] == "zlib" && codec.get("level").is_none() {
                codec["level"] = 1.into();
            }
            let metadata: MetadataV2 = serde_json::from_value(codec)?;
            let Codec::BytesToBytes(codec) = Codec::from_metadata(&metadata)? else {
                return Err("not bytes to bytes".into());
            };
            chain.push(codec);
        }
        let decoded = BytesRepresentation::FixedSize(size);
        let decode = || -> Result<(), Box<dyn std::error::Error>> {
            for tile in &tile_bytes {
                let mut bytes = Cow::Borrowed(*tile);
                for codec in &chain {
                    bytes = Cow::Owned(codec.decode(bytes, &decoded, &CodecOptions::default())?.into_owned());
                }
                assert_eq!(bytes.len() as u64, size);
            }
            Ok(())
        };
        decode()?; // the warm-up
        let mut times = Vec::with_capacity(runs);
        for _ in 0..runs {
            let start = Instant::now();
            decode()?;
            times.push(start.elapsed().as_secs_f64() * 1000.0);
        }
        times.sort_by(f64::total_cmp);
        println!(
            "{path} zarrs_kerchunk_codecs {:.2} {:.2} ({} tiles)",
            times[times.len() / 2],
            times[0],
            tile_bytes.len()
        );
    }
    Ok(())
}
