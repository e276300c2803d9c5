//! Decode whole GRIB2 messages with the `grib` codec, as a zarrs array's chunk is decoded, and
//! print one line per file: `<file> zarrs_kerchunk_codecs <median ms> <min ms>`, on one core.
//!
//! ```text
//! cargo run --release -p zarrs_kerchunk_codecs --example grib_decode -- RUNS FILES...
//! ```
//! `benches/codecs/run.sh` runs it beside eccodes (kerchunk's codec and cfgrib) on the same files.

use std::borrow::Cow;
use std::time::Instant;

use zarrs::array::codec::api::{BytesRepresentation, Codec, CodecOptions};
use zarrs::metadata::v2::MetadataV2;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let runs: usize = args.next().ok_or("usage: grib_decode RUNS FILES...")?.parse()?;
    let _codecs = zarrs_kerchunk_codecs::register_codecs();
    let metadata: MetadataV2 = serde_json::from_str(r#"{"id": "grib", "var": "t", "dtype": "float64"}"#)?;
    let Codec::BytesToBytes(codec) = Codec::from_metadata(&metadata)? else { return Err("not bytes to bytes".into()) };
    for path in args {
        let message = std::fs::read(&path)?;
        let size = BytesRepresentation::BoundedSize(1 << 30);
        let decode =
            || codec.decode(Cow::Borrowed(&message[..]), &size, &CodecOptions::default()).map(|decoded| decoded.len());
        let values = decode()? / 8; // the warm-up
        let mut times: Vec<f64> = (0..runs)
            .map(|_| {
                let start = Instant::now();
                decode().map(|_| start.elapsed().as_secs_f64() * 1000.0)
            })
            .collect::<Result<_, _>>()?;
        times.sort_by(f64::total_cmp);
        println!("{path} zarrs_kerchunk_codecs {:.2} {:.2} ({values} values)", times[times.len() / 2], times[0]);
    }
    Ok(())
}
