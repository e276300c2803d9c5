//! GRIB2 messages in every packing eccodes writes (`tests/codecs/grib`, made
//! by its `make.py` from eccodes' samples), referenced by kerchunk's
//! `scan_grib`: each field reads, through the store and the `grib` codec,
//! the values eccodes decodes, bit for bit, with NaN exactly where the
//! bitmap says a point is missing.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use zarrs::array::Array;
use zarrs_kerchunk::ReferenceStoreBuilder;

fn folder() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/codecs/grib")
}

/// A `.npy` file of little-endian float64: its shape and values.
fn npy(path: &Path) -> (Vec<u64>, Vec<f64>) {
    let bytes = std::fs::read(path).unwrap();
    let header_len = usize::from(u16::from_le_bytes([bytes[8], bytes[9]]));
    let header = std::str::from_utf8(&bytes[10..10 + header_len]).unwrap();
    assert!(header.contains("'<f8'"), "{header}");
    let shape = header.split("'shape': (").nth(1).unwrap().split(')').next().unwrap();
    let shape = shape.split(',').map(str::trim).filter(|s| !s.is_empty()).map(|s| s.parse().unwrap()).collect();
    let values = bytes[10 + header_len..].chunks_exact(8).map(|b| f64::from_le_bytes(b.try_into().unwrap())).collect();
    (shape, values)
}

/// A case's message file: `.grib1` for GRIB edition 1.
fn message_file(name: &str, keys: &serde_json::Value) -> PathBuf {
    let extension = if keys.get("edition") == Some(&1.into()) { "grib1" } else { "grib2" };
    folder().join(format!("{name}.{extension}"))
}

/// What the template each case was written with (`cases.json`, as eccodes read the message back).
fn cases() -> serde_json::Map<String, serde_json::Value> {
    let text = std::fs::read(folder().join("cases.json")).unwrap();
    serde_json::from_slice::<serde_json::Value>(&text).unwrap().as_object().unwrap().clone()
}

#[test]
fn every_packing_reads_what_eccodes_decodes() {
    let _codecs = zarrs_kerchunk_codecs::register_codecs();
    let mut decoded = Vec::new();
    for (name, keys) in cases() {
        // GRIB1's simple packing counted as template 1.0.
        let template = keys.get("dataRepresentationTemplateNumber").map_or(1000, |t| t.as_u64().unwrap());
        let builder = ReferenceStoreBuilder::new().with_codec_check(zarrs_kerchunk_codecs::is_decodable);
        let store = Arc::new(builder.open(folder().join(format!("{name}.kerchunk.json")).to_str().unwrap()).unwrap());
        let array = Array::open(store, "/t").unwrap_or_else(|e| panic!("{name}: {e}"));
        let read = array.retrieve_array_subset::<Vec<f64>>(&array.subset_all());
        let values = read.unwrap_or_else(|e| panic!("{name}: {e}"));
        let (shape, truth) = npy(&folder().join(format!("{name}.npy")));
        assert_eq!(array.shape(), &shape[..], "{name}");
        for (i, (ours, theirs)) in values.iter().zip(&truth).enumerate() {
            assert!(
                ours.to_bits() == theirs.to_bits() || (ours.is_nan() && theirs.is_nan()),
                "{name}: point {i}: {ours} where eccodes gives {theirs}"
            );
        }
        if keys["bitmapPresent"] == 1 {
            assert!(truth.iter().any(|v| v.is_nan()), "{name}: the bitmap marks points missing");
        }
        decoded.push(template);
    }
    for template in [0, 2, 3, 4, 40, 41, 42, 1000] {
        assert!(decoded.contains(&template), "no case of template {template} (1000: GRIB1): {decoded:?}");
    }
}

/// Real files from cfgrib's test suite (`tests/codecs/grib/real`, GRIB1 and GRIB2, a bitmap,
/// alternate row scanning, a Gaussian grid, 73 messages of one file), each message referenced by
/// kerchunk: eccodes' values bit for bit, NaN exactly where missing.
#[test]
fn real_files_read_what_eccodes_decodes() {
    let _codecs = zarrs_kerchunk_codecs::register_codecs();
    let real = folder().join("real");
    let cases: serde_json::Map<String, serde_json::Value> =
        serde_json::from_slice(&std::fs::read(real.join("cases.json")).unwrap()).unwrap();
    assert!(cases.len() >= 80, "{} messages", cases.len());
    for (case, variable) in &cases {
        let builder = ReferenceStoreBuilder::new().with_codec_check(zarrs_kerchunk_codecs::is_decodable);
        let store = Arc::new(builder.open(real.join(format!("{case}.kerchunk.json")).to_str().unwrap()).unwrap());
        let array = Array::open(store, &format!("/{}", variable.as_str().unwrap())).unwrap();
        let values =
            array.retrieve_array_subset::<Vec<f64>>(&array.subset_all()).unwrap_or_else(|e| panic!("{case}: {e}"));
        let (shape, truth) = npy(&real.join(format!("{case}.npy")));
        assert_eq!(array.shape(), &shape[..], "{case}");
        for (i, (ours, theirs)) in values.iter().zip(&truth).enumerate() {
            assert!(
                ours.to_bits() == theirs.to_bits() || (ours.is_nan() && theirs.is_nan()),
                "{case}: point {i}: {ours} where eccodes gives {theirs}"
            );
        }
    }
}

/// Damaged messages (cut anywhere, or an octet changed) are errors or
/// values, never a panic, and never more than the chunk.
#[test]
fn damaged_messages_are_errors_not_panics() {
    use std::borrow::Cow;

    use zarrs::array::codec::api::{BytesRepresentation, Codec, CodecOptions};
    use zarrs::metadata::v2::MetadataV2;

    let _codecs = zarrs_kerchunk_codecs::register_codecs();
    let metadata: MetadataV2 = serde_json::from_str(r#"{"id": "grib", "var": "t", "dtype": "float64"}"#).unwrap();
    let Codec::BytesToBytes(codec) = Codec::from_metadata(&metadata).unwrap() else { panic!("bytes to bytes") };
    let size: usize = 496 * 8;
    let decode = |bytes: &[u8]| {
        codec.decode(Cow::Owned(bytes.to_vec()), &BytesRepresentation::FixedSize(size as u64), &CodecOptions::default())
    };
    let mut tried = 0;
    for (name, keys) in cases() {
        let message = std::fs::read(message_file(&name, &keys)).unwrap();
        for cut in 0..message.len() {
            if let Ok(decoded) = decode(&message[..cut]) {
                assert!(decoded.len() <= size, "{name} cut at {cut}");
            }
            tried += 1;
        }
        for at in (0..message.len()).step_by(3) {
            for byte in [0x00, 0xFF, message[at] ^ 0x55] {
                let mut damaged = message.clone();
                damaged[at] = byte;
                if let Ok(decoded) = decode(&damaged) {
                    assert!(decoded.len() <= size, "{name} with octet {at} = {byte}");
                }
                tried += 1;
            }
        }
        // A chunk smaller than the field is refused before anything is decoded.
        let small = codec.decode(Cow::Owned(message), &BytesRepresentation::FixedSize(8), &CodecOptions::default());
        assert!(small.unwrap_err().to_string().contains("more than the chunk's 8 bytes"), "{name}");
    }
    assert!(tried > 10_000, "{tried}");
}

/// A case's references, its coordinates read through the codec: kerchunk
/// references a projected grid's there already, and holds a Mercator or
/// Gaussian grid's as 1-D rows and columns, which are referenced here as the 2-D arrays the
/// codec decodes from the message (`t`'s chunk), to compare with eccodes'.
fn through_the_codec(name: &str) -> kerchunk::ReferenceSet {
    let text = std::fs::read(folder().join(format!("{name}.kerchunk.json"))).unwrap();
    let mut set: serde_json::Value = serde_json::from_slice(&text).unwrap();
    let refs = set["refs"].as_object_mut().unwrap();
    let zarray: serde_json::Value = serde_json::from_str(refs["latitude/.zarray"].as_str().unwrap()).unwrap();
    if zarray["shape"].as_array().unwrap().len() == 1 {
        let field: serde_json::Value = serde_json::from_str(refs["t/.zarray"].as_str().unwrap()).unwrap();
        for coordinate in ["latitude", "longitude"] {
            let mut array = field.clone();
            array["filters"] = serde_json::json!([{"id": "grib", "var": coordinate, "dtype": "float64"}]);
            refs.insert(format!("{coordinate}/.zarray"), array.to_string().into());
            refs.remove(&format!("{coordinate}/0"));
            let chunk = refs["t/0.0"].clone();
            refs.insert(format!("{coordinate}/0.0"), chunk);
        }
    }
    let text = serde_json::to_vec(&set).unwrap();
    kerchunk::ReferenceSet::from_json(&text[..], &kerchunk::ParseOptions::default()).unwrap()
}

/// A projected grid's latitude and longitude, which kerchunk references to
/// the message through the codec, read as eccodes' geo-iterator gives them:
/// within 1e-9 degrees (the transcendental functions of two libms), for
/// every projection of cfgrib's 2-D coordinates that eccodes computes, and
/// Mercator's and Gaussian grids' (which kerchunk holds as rows and columns).
#[test]
fn projected_coordinates_read_what_eccodes_gives() {
    let _codecs = zarrs_kerchunk_codecs::register_codecs();
    let (mut checked, mut grids) = (0, 0);
    let mut types = std::collections::BTreeSet::new();
    for (name, keys) in cases() {
        let Some(grid_type) = keys.get("gridType").and_then(|g| g.as_str()) else { continue };
        types.insert(grid_type.to_owned());
        grids += 1;
        let store = Arc::new(
            ReferenceStoreBuilder::new()
                .with_codec_check(zarrs_kerchunk_codecs::is_decodable)
                .build(through_the_codec(&name), folder().join("refs.json").to_str().unwrap())
                .unwrap(),
        );
        for coordinate in ["latitude", "longitude"] {
            let array = Array::open(store.clone(), &format!("/{coordinate}")).unwrap();
            let ours =
                array.retrieve_array_subset::<Vec<f64>>(&array.subset_all()).unwrap_or_else(|e| panic!("{name}: {e}"));
            let (shape, theirs) = npy(&folder().join(format!("{name}.{coordinate}.npy")));
            assert_eq!(array.shape(), &shape[..], "{name}");
            assert_eq!(ours.len(), theirs.len(), "{name} {coordinate}");
            // Past a space view's disk eccodes gives 0 and 0; ours are NaN there, and only there.
            let past_the_disk = |a: f64, b: f64| grid_type == "space_view" && a.is_nan() && b == 0.0;
            let past = ours.iter().zip(&theirs).filter(|(a, b)| past_the_disk(**a, **b)).count();
            assert_eq!(past > 0, grid_type == "space_view", "{name} {coordinate}: {past} points past the disk");
            // NaN anywhere else is the worst difference (`f64::max` would drop it, and NaN < 1e-9 is false).
            let worst = ours
                .iter()
                .zip(&theirs)
                .filter(|(a, b)| !past_the_disk(**a, **b))
                .map(|(a, b)| (a - b).abs())
                .fold(0.0, |worst: f64, d| if d.is_nan() || worst.is_nan() { f64::NAN } else { worst.max(d) });
            assert!(worst < 1e-9, "{name} {coordinate}: {worst} degrees from eccodes");
            eprintln!("{name} {coordinate}: at most {worst:e} degrees from eccodes");
            checked += 1;
        }
    }
    let every = [
        "lambert",
        "lambert_azimuthal_equal_area",
        "mercator",
        "polar_stereographic",
        "regular_gg",
        "rotated_ll",
        "space_view",
    ];
    assert_eq!(types.iter().map(String::as_str).collect::<Vec<_>>(), every);
    assert_eq!(checked, 2 * grids);
}
