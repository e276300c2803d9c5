//! Where a GRIB file's messages are: found from their own lengths in
//! cfgrib's sample files (`tests/codecs/grib/real`; the truth is eccodes'
//! offsets and lengths, `messages.json`), past padding between messages and
//! bytes after the last (where kerchunk's `scan_grib` never returns), and
//! from NOAA and ECMWF inventories.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use kerchunk_scan::{GribMessage, ScanError, ScanOptions, grib_messages, parse_ecmwf_index, parse_noaa_idx};
use object_store::ObjectStore;
use object_store::local::LocalFileSystem;
use object_store::path::Path as StorePath;

fn folder() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/codecs/grib/real")
}

fn locate(folder: &Path, file: &str) -> Result<Vec<GribMessage>, ScanError> {
    let store: Arc<dyn ObjectStore> = Arc::new(LocalFileSystem::new_with_prefix(folder).unwrap());
    let runtime = tokio::runtime::Runtime::new().unwrap();
    runtime.block_on(grib_messages(&store, &StorePath::from(file), file, &ScanOptions::default()))
}

/// eccodes' `[offset, length, edition]` of every message of every sample file.
fn truth() -> serde_json::Map<String, serde_json::Value> {
    serde_json::from_slice(&std::fs::read(folder().join("messages.json")).unwrap()).unwrap()
}

#[test]
fn messages_are_where_eccodes_finds_them() {
    let truth = truth();
    // eccodes' truth covers every sample file of the folder, each of them checked below.
    let mut samples: Vec<String> = std::fs::read_dir(folder())
        .unwrap()
        .map(|entry| entry.unwrap().file_name().into_string().unwrap())
        .filter(|name| std::path::Path::new(name).extension().is_some_and(|e| e.eq_ignore_ascii_case("grib")))
        .collect();
    samples.sort();
    assert_eq!(truth.keys().cloned().collect::<Vec<_>>(), samples);
    for (file, messages) in &truth {
        let found = locate(&folder(), file).unwrap_or_else(|e| panic!("{file}: {e}"));
        let expected: Vec<GribMessage> = messages
            .as_array()
            .unwrap()
            .iter()
            .map(|m| GribMessage {
                offset: m[0].as_u64().unwrap(),
                length: m[1].as_u64().unwrap(),
                edition: u8::try_from(m[2].as_u64().unwrap()).unwrap(),
            })
            .collect();
        assert_eq!(found, expected, "{file}");
    }
}

#[test]
fn junk_around_messages_is_skipped_and_bad_lengths_are_errors() {
    let dir = tempfile::tempdir().unwrap();
    let message = std::fs::read(folder().join("regular_ll_msl.grib")).unwrap();
    // A WMO header before, `GRIB` of no edition and padding between, and bytes after the last.
    let mut file = b"SDUS54 KWBC 010000\r\r\n".to_vec();
    file.extend(&message);
    file.extend(b"GRIB\0\0\0\x07 padding");
    file.extend(&message);
    file.extend(b"7777GRI");
    std::fs::write(dir.path().join("junk.grib"), &file).unwrap();
    let found = locate(dir.path(), "junk.grib").unwrap();
    let length = message.len() as u64;
    assert_eq!(
        found.iter().map(|m| (m.offset, m.length)).collect::<Vec<_>>(),
        [(21, length), (21 + length + 16, length)]
    );
    // A length past the end of the file names the message's offset.
    let mut cut = message.clone();
    cut.truncate(message.len() - 10);
    std::fs::write(dir.path().join("cut.grib"), &cut).unwrap();
    let error = locate(dir.path(), "cut.grib").unwrap_err().to_string();
    assert!(error.contains("message at byte 0 says it is 114212 bytes long"), "{error}");
    // No message at all.
    std::fs::write(dir.path().join("none.grib"), b"not a grib file").unwrap();
    assert!(locate(dir.path(), "none.grib").unwrap_err().to_string().contains("no GRIB message"));
}

#[test]
fn inventories_give_the_messages_ranges() {
    // A NOAA inventory of cams-egg4-monthly.grib (GRIB1, padded between messages) and an ECMWF
    // index of step_60m.grib, as wgrib2 and ECMWF's open data write them.
    let truth = truth();
    let cams = truth["cams-egg4-monthly.grib"].as_array().unwrap();
    let size = std::fs::metadata(folder().join("cams-egg4-monthly.grib")).unwrap().len();
    let idx = cams
        .iter()
        .enumerate()
        .map(|(i, m)| format!("{}:{}:d=2003010100:TMP:2 m above ground:anl:", i + 1, m[0]))
        .collect::<Vec<_>>()
        .join("\n");
    let entries = parse_noaa_idx(&idx, "cams.idx", size).unwrap();
    assert_eq!(entries.len(), cams.len(), "one entry per line of the inventory");
    let offsets: Vec<u64> = cams.iter().map(|m| m[0].as_u64().unwrap()).collect();
    for (i, (entry, message)) in entries.iter().zip(cams).enumerate() {
        // A message's range runs to the next one's start (eccodes' offset), or to the file's
        // end: its padding included, so never shorter than eccodes' length.
        let end = offsets.get(i + 1).copied().unwrap_or(size);
        assert_eq!((entry.offset, entry.length), (offsets[i], end - offsets[i]), "entry {i}");
        assert!(entry.length >= message[1].as_u64().unwrap());
        assert_eq!(entry.description, "d=2003010100:TMP:2 m above ground:anl:");
    }
    // Fields of one message share its range.
    let fields = parse_noaa_idx("1:0:d=1:UGRD:10 m:\n1.2:0:d=1:VGRD:10 m:\n2:100:d=1:TMP:\n", "u.idx", 150).unwrap();
    assert_eq!(fields.iter().map(|e| (e.offset, e.length)).collect::<Vec<_>>(), [(0, 100), (0, 100), (100, 50)]);
    assert!(parse_noaa_idx("1:50:a\n2:10:b\n", "back.idx", 100).unwrap_err().to_string().contains("line 2"));

    let steps = truth["step_60m.grib"].as_array().unwrap();
    let size = std::fs::metadata(folder().join("step_60m.grib")).unwrap().len();
    let index = steps
        .iter()
        .map(|m| format!("{{\"param\": \"2t\", \"_offset\": {}, \"_length\": {}}}", m[0], m[1]))
        .collect::<Vec<_>>()
        .join("\n");
    let entries = parse_ecmwf_index(&index, "step_60m.index", size).unwrap();
    let ranges: Vec<(u64, u64)> = entries.iter().map(|e| (e.offset, e.length)).collect();
    let expected: Vec<(u64, u64)> = steps.iter().map(|m| (m[0].as_u64().unwrap(), m[1].as_u64().unwrap())).collect();
    assert_eq!(ranges, expected);
    assert!(parse_ecmwf_index("{\"_offset\": 1}\n", "x.index", 10).unwrap_err().to_string().contains("line 1"));
}

/// `scan` knows a GRIB file by its first bytes and scans it: cfgrib's 73 messages of 2 m
/// temperature a minute apart become one array of 73 steps, counted in minutes.
#[test]
fn scan_scans_a_grib_file() {
    let store: Arc<dyn ObjectStore> = Arc::new(LocalFileSystem::new_with_prefix(folder()).unwrap());
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let file = "step_60m.grib";
    let scanned = runtime.block_on(kerchunk_scan::scan(&store, &StorePath::from(file), file, &ScanOptions::default()));
    let references = scanned.unwrap().references;
    let Some(kerchunk::Reference::Inline(zarray)) = references.get("t2m/instant/heightAboveGround/t2m/.zarray") else {
        panic!("no t2m array")
    };
    let zarray: serde_json::Value = serde_json::from_slice(zarray).unwrap();
    assert_eq!(zarray["shape"], serde_json::json!([1, 73, 3, 3]));
    let Some(kerchunk::Reference::Inline(units)) = references.get("t2m/instant/heightAboveGround/step/.zattrs") else {
        panic!("no step")
    };
    assert!(String::from_utf8_lossy(units).contains("\"units\":\"minutes\""));
}

/// Bytes that are no message are searched only as far as the header limit: past it, an error
/// naming where the search began, not the whole file held in memory.
#[test]
fn a_long_stretch_without_messages_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let mut file = std::fs::read(folder().join("cams-egg4-monthly.grib")).unwrap();
    let end = file.len();
    file.extend(vec![0u8; 300_000]);
    std::fs::write(dir.path().join("long.grib"), &file).unwrap();
    let store: Arc<dyn ObjectStore> = Arc::new(LocalFileSystem::new_with_prefix(dir.path()).unwrap());
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let options = ScanOptions::default().with_max_header_bytes(100_000);
    let found = runtime.block_on(grib_messages(&store, &StorePath::from("long.grib"), "long.grib", &options));
    let Err(error) = found else { panic!("300 000 bytes without a message pass a limit of 100 000") };
    assert!(
        error.to_string().contains(&format!("no GRIB message in the 100000 bytes from byte {}", end - 114)),
        "{error}"
    );
    // Within the default limit the same bytes are skipped.
    assert_eq!(locate(dir.path(), "long.grib").unwrap().len(), 4);
}
