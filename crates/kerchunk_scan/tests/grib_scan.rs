//! GRIB2 files scanned into references, checked against eccodes (what each
//! message is), kerchunk's `scan_grib` + `grib_tree` (the hierarchy and the
//! byte ranges) and eccodes' values read back through the store. The files
//! and their truth are made by `tests/scan/grib/make.py`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use kerchunk::{JsonWriteOptions, Reference, ReferenceSet};
use kerchunk_scan::{ScanOptions, scan_grib};
use object_store::ObjectStore;
use object_store::local::LocalFileSystem;
use object_store::path::Path as StorePath;
use serde_json::Value;
use zarrs::array::Array;
use zarrs_kerchunk::{ReferenceStore, ReferenceStoreBuilder};

const CASES: [&str; 3] = ["hrrr_like", "gefs_like", "ecmwf_like"];

fn folder() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/scan/grib")
}

fn json(path: &Path) -> Value {
    serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap()
}

fn scan(case: &str) -> ReferenceSet {
    let store: Arc<dyn ObjectStore> = Arc::new(LocalFileSystem::new_with_prefix(folder()).unwrap());
    let file = format!("{case}.grib2");
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let scanned = runtime.block_on(scan_grib(&store, &StorePath::from(file.as_str()), &file, &ScanOptions::default()));
    let scanned = scanned.unwrap_or_else(|e| panic!("{case}: {e}"));
    assert!(scanned.skipped.is_empty(), "{case}: {:?}", scanned.skipped);
    scanned.references
}

fn inline(refs: &ReferenceSet, key: &str) -> Vec<u8> {
    match refs.get(key) {
        Some(Reference::Inline(bytes)) => bytes.to_vec(),
        other => panic!("{key}: {other:?}"),
    }
}

fn text(refs: &ReferenceSet, key: &str) -> Value {
    serde_json::from_slice(&inline(refs, key)).unwrap_or_else(|e| panic!("{key}: {e}"))
}

fn i64s(bytes: &[u8]) -> Vec<i64> {
    bytes.chunks_exact(8).map(|b| i64::from_le_bytes(b.try_into().unwrap())).collect()
}

fn f64s(bytes: &[u8]) -> Vec<f64> {
    bytes.chunks_exact(8).map(|b| f64::from_le_bytes(b.try_into().unwrap())).collect()
}

/// Every data reference of a set: (offset, length) -> key.
/// The scan's references written to `dir` beside a copy of the scanned `file` of `folder`, opened
/// as a store that checks every codec has a decoder.
fn stored(scanned: &kerchunk_scan::Scan, folder: &Path, file: &str, dir: &Path) -> Arc<ReferenceStore> {
    let path = dir.join(format!("{file}.json"));
    scanned.references.write_json(std::fs::File::create(&path).unwrap(), &JsonWriteOptions::default()).unwrap();
    std::fs::copy(folder.join(file), dir.join(file)).unwrap();
    let builder = ReferenceStoreBuilder::new().with_codec_check(zarrs_kerchunk_codecs::is_decodable);
    Arc::new(builder.open(path.to_str().unwrap()).unwrap())
}

/// A `.npy` file of little-endian float64.
fn npy_f64(path: &Path) -> Vec<f64> {
    let bytes = std::fs::read(path).unwrap();
    f64s(&bytes[usize::from(u16::from_le_bytes([bytes[8], bytes[9]])) + 10..])
}

/// The float64 values kerchunk holds inline (base64) under `key` of its references `theirs`.
fn inline_floats(theirs: &Value, key: &str) -> Vec<f64> {
    let text = theirs["refs"][key].as_str().unwrap();
    f64s(
        &base64::Engine::decode(&base64::engine::general_purpose::STANDARD, text.strip_prefix("base64:").unwrap())
            .unwrap(),
    )
}

fn data_ranges(refs: &ReferenceSet) -> BTreeMap<(u64, u64), String> {
    let mut ranges = BTreeMap::new();
    for (key, reference) in refs.iter() {
        let parts: Vec<&str> = key.split('/').collect();
        // `var/stepType/level/var/chunk`: the data variable, not a coordinate.
        if parts.len() == 5
            && parts[0] == parts[3]
            && let Reference::Range { offset, length, .. } = reference
        {
            ranges.insert((offset, length), key.to_string());
        }
    }
    ranges
}

/// Each message is one chunk, where eccodes' names put it, at the indices
/// its time, step, level and member take in the coordinates, which hold
/// eccodes' values.
#[test]
fn each_message_is_a_chunk_where_eccodes_names_put_it() {
    for case in CASES {
        let refs = scan(case);
        let messages = json(&folder().join(format!("{case}.messages.json")));
        let ranges = data_ranges(&refs);
        assert_eq!(ranges.len(), messages.as_array().unwrap().len(), "{case}: one chunk a message");
        for m in messages.as_array().unwrap() {
            let range = (m["offset"].as_u64().unwrap(), m["length"].as_u64().unwrap());
            let key = ranges.get(&range).unwrap_or_else(|| panic!("{case}: no chunk for {range:?}"));
            let (variable, step_type, level_type) =
                (m["cfVarName"].as_str().unwrap(), m["stepType"].as_str().unwrap(), m["typeOfLevel"].as_str().unwrap());
            let group = format!("{variable}/{step_type}/{level_type}");
            assert!(key.starts_with(&format!("{group}/{variable}/")), "{case}: {key} is not under {group}");
            let zattrs = text(&refs, &format!("{group}/{variable}/.zattrs"));
            for (ours, theirs) in [
                ("GRIB_shortName", "shortName"),
                ("GRIB_paramId", "paramId"),
                ("GRIB_name", "name"),
                ("GRIB_units", "units"),
                ("GRIB_cfName", "cfName"),
                ("GRIB_dataType", "dataType"),
                ("GRIB_gridDefinitionDescription", "gridDefinitionDescription"),
            ] {
                assert_eq!(zattrs[ours], m[theirs], "{case}: {group}: {ours}");
            }
            let dims: Vec<String> = serde_json::from_value(zattrs["_ARRAY_DIMENSIONS"].clone()).unwrap();
            let indices: Vec<usize> = key.rsplit('/').next().unwrap().split('.').map(|i| i.parse().unwrap()).collect();
            let at = |name: &str| dims.iter().position(|d| d == name).map(|i| indices[i]);
            let time = i64s(&inline(&refs, &format!("{group}/time/0")))[at("time").unwrap()];
            assert_eq!(time, m["time"].as_i64().unwrap(), "{case}: {key}: time");
            let step_attrs = text(&refs, &format!("{group}/step/.zattrs"));
            let unit = match step_attrs["units"].as_str().unwrap() {
                "hours" => 3600,
                "minutes" => 60,
                _ => 1,
            };
            let step = i64s(&inline(&refs, &format!("{group}/step/0")))[at("step").unwrap()];
            assert_eq!(step * unit, m["step_seconds"].as_i64().unwrap(), "{case}: {key}: step");
            let valid = i64s(&inline(&refs, &format!("{group}/valid_time/0.0")));
            let steps = i64s(&inline(&refs, &format!("{group}/step/0"))).len();
            assert_eq!(
                valid[at("time").unwrap() * steps + at("step").unwrap()],
                time + step * unit,
                "{case}: {key}: valid_time"
            );
            let levels = f64s(&inline(&refs, &format!("{group}/{level_type}/0")));
            let level = levels[at(level_type).unwrap_or(0)];
            assert_eq!(level.to_bits(), m["level"].as_f64().unwrap().to_bits(), "{case}: {key}: level {level}");
            if let Some(number) = m.get("number") {
                let numbers = i64s(&inline(&refs, &format!("{group}/number/0")));
                assert_eq!(numbers[at("number").unwrap_or(0)], number.as_i64().unwrap(), "{case}: {key}: number");
            }
        }
    }
}

/// The same groups and byte ranges as kerchunk's `grib_tree`, but for ensemble
/// members, which kerchunk merges into one chunk (keeping one), and which we keep each.
#[test]
fn groups_and_ranges_are_kerchunks() {
    for case in CASES {
        let refs = scan(case);
        let tree = json(&folder().join(format!("{case}.grib_tree.json")));
        let theirs = tree["refs"].as_object().unwrap();
        let groups = |keys: &mut dyn Iterator<Item = String>| -> Vec<String> {
            let mut groups: Vec<String> = keys.filter(|k| k.ends_with("/.zgroup")).collect();
            groups.sort();
            groups
        };
        assert_eq!(groups(&mut refs.iter().map(|(k, _)| k.to_string())), groups(&mut theirs.keys().cloned()), "{case}");
        let ours = data_ranges(&refs);
        for (key, value) in theirs {
            let parts: Vec<&str> = key.split('/').collect();
            if parts.len() == 5 && parts[0] == parts[3] && value.is_array() {
                let range = (value[1].as_u64().unwrap(), value[2].as_u64().unwrap());
                assert!(ours.contains_key(&range), "{case}: kerchunk's {key} {range:?} is not referenced");
            }
        }
    }
}

/// Read through the store with the codec, each message's chunk holds eccodes' values.
#[test]
fn arrays_read_eccodes_values() {
    let _codecs = zarrs_kerchunk_codecs::register_codecs();
    let dir = tempfile::tempdir().unwrap();
    for case in CASES {
        let refs = scan(case);
        let path = dir.path().join(format!("{case}.json"));
        refs.write_json(std::fs::File::create(&path).unwrap(), &JsonWriteOptions::default()).unwrap();
        std::fs::copy(folder().join(format!("{case}.grib2")), dir.path().join(format!("{case}.grib2"))).unwrap();
        let builder = ReferenceStoreBuilder::new().with_codec_check(zarrs_kerchunk_codecs::is_decodable);
        let store = Arc::new(builder.open(path.to_str().unwrap()).unwrap());
        let values = std::fs::read(folder().join(format!("{case}.values.npy"))).unwrap();
        let header = usize::from(u16::from_le_bytes([values[8], values[9]])) + 10;
        let truth = f64s(&values[header..]);
        let messages = json(&folder().join(format!("{case}.messages.json")));
        let points = truth.len() / messages.as_array().unwrap().len();
        for (n, (range, key)) in data_ranges(&refs).into_iter().enumerate() {
            let index =
                messages.as_array().unwrap().iter().position(|m| m["offset"].as_u64() == Some(range.0)).unwrap();
            let (array_path, chunk) = key.rsplit_once('/').unwrap();
            let array =
                Array::open(Arc::clone(&store), &format!("/{array_path}")).unwrap_or_else(|e| panic!("{case}: {e}"));
            let indices: Vec<u64> = chunk.split('.').map(|i| i.parse().unwrap()).collect();
            let read: Vec<f64> = array.retrieve_chunk(&indices).unwrap_or_else(|e| panic!("{case}: {key}: {e}"));
            let expected = &truth[index * points..(index + 1) * points];
            assert_eq!(read.len(), expected.len(), "{case}: {key}");
            for (ours, theirs) in read.iter().zip(expected) {
                assert!(
                    ours.to_bits() == theirs.to_bits() || (ours.is_nan() && theirs.is_nan()),
                    "{case}: {key} (#{n}): {ours} != {theirs}"
                );
            }
        }
    }
}

fn scan_in(folder: &Path, file: &str, options: &ScanOptions) -> Result<kerchunk_scan::Scan, kerchunk_scan::ScanError> {
    let store: Arc<dyn ObjectStore> = Arc::new(LocalFileSystem::new_with_prefix(folder).unwrap());
    let runtime = tokio::runtime::Runtime::new().unwrap();
    runtime.block_on(scan_grib(&store, &StorePath::from(file), file, options))
}

fn sorted(refs: &ReferenceSet) -> Vec<(String, String)> {
    let mut all: Vec<(String, String)> = refs.iter().map(|(k, v)| (k.to_string(), format!("{v:?}"))).collect();
    all.sort();
    all
}

/// NOAA's `.idx` beside `hrrr_like.grib2` and ECMWF's `.index` beside `ecmwf_like.grib2` give the
/// references the messages' own lengths give, the headers read together; from NOAA's, with the
/// levels of its lines or every header read.
#[test]
fn an_inventory_gives_the_same_references() {
    for file in ["hrrr_like.grib2", "ecmwf_like.grib2"] {
        let walked = scan_in(&folder(), file, &ScanOptions::default().with_grib_inventory(false)).unwrap();
        for levels in [true, false] {
            let options = ScanOptions::default().with_grib_levels_from_inventory(levels);
            let listed = scan_in(&folder(), file, &options).unwrap();
            assert_eq!(sorted(&listed.references), sorted(&walked.references), "{file}, levels {levels}");
            assert!(listed.skipped.is_empty() && walked.skipped.is_empty());
        }
    }
}

/// With NOAA's `.idx`, one header is read per distinct variable (its name, kind of level and
/// forecast): `hrrr_like.grib2`'s 15 lines are 10 such, 2 m and 1.5 m temperature at the
/// analysis one of them, and the three pressure levels at each step two more. Every other line is
/// read where the levels are not taken from the lines, and where the inventory's numbers do not
/// give the headers' levels. Numbers in other units are scaled as the first line and its header
/// show.
#[test]
fn an_inventory_saves_a_header_read_per_level() {
    let requests = |folder: &Path, levels: bool| {
        // A first read of 16 bytes, not the whole small file, so that each header is a request.
        let options = ScanOptions::default()
            .with_grib_levels_from_inventory(levels)
            .with_block_bytes(16)
            .with_first_read_bytes(16);
        scan_in(folder, "hrrr_like.grib2", &options).unwrap().stats.requests
    };
    // The first read and the inventory's, then the headers'.
    assert_eq!(requests(&folder(), true), 2 + 10);
    assert_eq!(requests(&folder(), false), 2 + 15);
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(folder().join("hrrr_like.grib2"), dir.path().join("hrrr_like.grib2")).unwrap();
    let idx = std::fs::read_to_string(folder().join("hrrr_like.grib2.idx")).unwrap();
    let walked = scan_in(&folder(), "hrrr_like.grib2", &ScanOptions::default().with_grib_inventory(false)).unwrap();
    let cases: [(&[(&str, &str)], u64); 3] = [
        // The 2 m analysis's line says 3 m: the 1.5 m one's level cannot be taken from its line.
        (&[(":2 m above ground:anl:", ":3 m above ground:anl:")], 11),
        // Two kinds of level, each read.
        (&[(":2 m above ground:anl:", ":200 cm above ground:anl:")], 11),
        // Numbers a hundred times the levels, as both lines say.
        (&[(":2 m above", ":200 m above"), (":1.5 m above", ":150 m above")], 10),
    ];
    for (changes, reads) in cases {
        let changed = changes.iter().fold(idx.clone(), |text, (from, to)| text.replace(from, to));
        std::fs::write(dir.path().join("hrrr_like.grib2.idx"), changed).unwrap();
        assert_eq!(requests(dir.path(), true), 2 + reads, "{changes:?}");
        let listed = scan_in(dir.path(), "hrrr_like.grib2", &ScanOptions::default()).unwrap();
        assert_eq!(sorted(&listed.references), sorted(&walked.references), "{changes:?}");
    }
}

/// An inventory that lists a message where none starts, or leaves one out, is an error
/// naming the inventory and the byte.
#[test]
fn a_stale_inventory_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(folder().join("hrrr_like.grib2"), dir.path().join("hrrr_like.grib2")).unwrap();
    let idx = std::fs::read_to_string(folder().join("hrrr_like.grib2.idx")).unwrap();
    let shifted = idx.replacen(":404:", ":405:", 1);
    std::fs::write(dir.path().join("hrrr_like.grib2.idx"), shifted).unwrap();
    let error = scan_in(dir.path(), "hrrr_like.grib2", &ScanOptions::default()).unwrap_err().to_string();
    assert!(error.contains("hrrr_like.grib2.idx") && error.contains("byte 405"), "{error}");
    // Without the inventory the file scans.
    assert!(scan_in(dir.path(), "hrrr_like.grib2", &ScanOptions::default().with_grib_inventory(false)).is_ok());
    // A message left out of the inventory (its range taken by the one before) is found, not lost.
    let lines: Vec<&str> = idx.lines().collect();
    let gapped = format!("{}\n{}\n", lines[0], lines[2..].join("\n"));
    std::fs::write(dir.path().join("hrrr_like.grib2.idx"), gapped).unwrap();
    let error = scan_in(dir.path(), "hrrr_like.grib2", &ScanOptions::default()).unwrap_err().to_string();
    assert!(error.contains("lists no message at byte 404"), "{error}");
}

/// The bytes a range reference points at, in `folder`.
fn referenced(folder: &Path, reference: &Reference<'_>) -> Vec<u8> {
    let Reference::Range { url, offset, length } = reference else { panic!("{reference:?}") };
    let file = std::fs::read(folder.join(url.unwrap())).unwrap();
    let (start, end) = (usize::try_from(*offset).unwrap(), usize::try_from(offset + length).unwrap());
    file[start..end].to_vec()
}

/// A forecast run's three files (`hrrr_like.grib2` split by hour) combined: the tree of the one
/// file, each chunk the same message's bytes, and kerchunk's `grib_tree` groups and ranges.
#[test]
fn a_forecast_runs_files_make_the_tree_of_one_file() {
    let files = ["run_f00.grib2", "run_f01.grib2", "run_f02.grib2"];
    let scans: Vec<(String, ReferenceSet)> = files
        .iter()
        .map(|f| ((*f).to_owned(), scan_in(&folder(), f, &ScanOptions::default()).unwrap().references))
        .collect();
    let combined = kerchunk_scan::combine_grib(&scans).unwrap();
    assert!(combined.skipped.is_empty(), "{:?}", combined.skipped);
    let combined = combined.references;
    let one = scan("hrrr_like");
    let keys = |refs: &ReferenceSet| -> Vec<String> {
        let mut keys: Vec<String> = refs.iter().map(|(k, _)| k.to_string()).collect();
        keys.sort();
        keys
    };
    assert_eq!(keys(&combined), keys(&one));
    for (key, reference) in one.iter() {
        let theirs = combined.get(&key).unwrap();
        match reference {
            Reference::Range { .. } => {
                assert_eq!(referenced(&folder(), &theirs), referenced(&folder(), &reference), "{key}");
            }
            _ => assert_eq!(format!("{theirs:?}"), format!("{reference:?}"), "{key}"),
        }
    }
    let tree = json(&folder().join("run.grib_tree.json"));
    for (key, value) in tree["refs"].as_object().unwrap() {
        let parts: Vec<&str> = key.split('/').collect();
        if parts.len() == 5 && parts[0] == parts[3] && value.is_array() {
            let url = value[0].as_str().unwrap();
            let (offset, length) = (value[1].as_u64().unwrap(), value[2].as_u64().unwrap());
            let found = combined.iter().any(|(_, r)| {
                matches!(r, Reference::Range { url: Some(u), offset: o, length: l } if u == url && o == offset && l == length)
            });
            assert!(found, "kerchunk's {key} ({url}, {offset}, {length}) is not referenced");
        }
    }
    // An analysis and a forecast (another GRIB_dataType) on one grid combine into one group.
    let mut relabelled = kerchunk::ReferenceSetBuilder::new();
    for (key, reference) in scans[1].1.iter() {
        match reference {
            Reference::Inline(bytes) if key.ends_with("/.zattrs") => {
                let text = String::from_utf8(bytes.to_vec())
                    .unwrap()
                    .replace("\"GRIB_dataType\":\"af\"", "\"GRIB_dataType\":\"fc\"");
                relabelled.insert_inline(&key, text.as_bytes());
            }
            other => relabelled.insert_reference(&key, other),
        }
    }
    let f00 = scan_in(&folder(), "run_f00.grib2", &ScanOptions::default()).unwrap().references;
    let inputs = [("run_f00.grib2".to_owned(), f00), ("run_f01.grib2".to_owned(), relabelled.build())];
    let mixed = kerchunk_scan::combine_grib(&inputs).unwrap();
    assert!(mixed.skipped.is_empty(), "{:?}", mixed.skipped);
    // One group, as the two files make it when both are analyses (that tree checked above against
    // the one file's): the same keys, every chunk the same message; only the attributes of the
    // relabelled messages' arrays (their GRIB_dataType) may differ.
    let plain = kerchunk_scan::combine_grib(&scans[..2]).unwrap().references;
    let mixed = mixed.references;
    assert_eq!(keys(&mixed), keys(&plain));
    let mut chunks = 0;
    for (key, reference) in plain.iter().filter(|(_, reference)| matches!(reference, Reference::Range { .. })) {
        assert_eq!(mixed.get(&key), Some(reference), "{key}");
        chunks += 1;
    }
    assert!(chunks > 0);
    // The same file twice: the second copy's messages are left out, named.
    let first = || {
        ("run_f00.grib2".to_owned(), scan_in(&folder(), "run_f00.grib2", &ScanOptions::default()).unwrap().references)
    };
    let twice = kerchunk_scan::combine_grib(&[first(), first()]).unwrap();
    assert!(!twice.skipped.is_empty() && twice.skipped.iter().all(|s| s.reason.contains("repeats")));
    // A set that is no GRIB tree is an error naming it.
    let error = kerchunk_scan::combine_grib(&[("other.json".into(), ReferenceSet::default())]).unwrap_err();
    assert!(error.to_string().contains("other.json"), "{error}");
}

/// cfgrib's real GRIB files (`tests/codecs/grib/real`, GRIB2 and a GRIB1 Gaussian grid): every attribute of each data variable
/// is kerchunk's `scan_grib`'s for that message, but for the dimensions (ours have time and step).
#[test]
fn real_files_have_kerchunks_attributes() {
    let real = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/codecs/grib/real");
    let mut compared = 0;
    let files = [
        ("regular_ll_msl.grib", 1),
        ("step_60m.grib", 73),
        ("t_on_different_level_types.grib", 2),
        ("fields_with_missing_values.grib", 2),
        ("regular_gg_sfc.grib", 1),
    ];
    for (file, messages) in files {
        let ours = scan_in(&real, file, &ScanOptions::default()).unwrap().references;
        let stem = file.trim_end_matches(".grib");
        for n in 0..messages {
            let theirs = json(&real.join(format!("{stem}.{n}.kerchunk.json")));
            let refs = theirs["refs"].as_object().unwrap();
            if n == 0 {
                // The root's attributes are the first message's: the centre titled as eccodes
                // titles code table C-11 (NCEP without its "(WMC)").
                let mut root: Value = serde_json::from_str(refs[".zattrs"].as_str().unwrap()).unwrap();
                let mut ours_root = text(&ours, ".zattrs");
                root.as_object_mut().unwrap().remove("coordinates");
                ours_root.as_object_mut().unwrap().remove("coordinates");
                assert_eq!(ours_root, root, "{file}: the root's attributes");
            }
            for (key, value) in refs {
                let Some(variable) = key.strip_suffix("/.zattrs") else { continue };
                let mut expected: serde_json::Map<String, Value> =
                    serde_json::from_str(value.as_str().unwrap()).unwrap();
                if !expected.contains_key("GRIB_paramId") {
                    continue;
                }
                expected.remove("_ARRAY_DIMENSIONS");
                let group = format!(
                    "{variable}/{}/{}",
                    expected["GRIB_stepType"].as_str().unwrap(),
                    expected["GRIB_typeOfLevel"].as_str().unwrap()
                );
                let mut got = text(&ours, &format!("{group}/{variable}/.zattrs"));
                got.as_object_mut().unwrap().remove("_ARRAY_DIMENSIONS");
                assert_eq!(got, Value::Object(expected), "{file}: message {n}");
                compared += 1;
            }
        }
    }
    assert_eq!(compared, 79);
}

/// GRIB1 messages (`tests/codecs/grib/grib1_*.grib1`, from eccodes' GRIB1 sample): every
/// attribute kerchunk's, and eccodes' values read through the store. What is not scanned yet
/// (ECMWF's monthly means) is left out, named.
#[test]
fn grib1_messages_have_kerchunks_attributes_and_eccodes_values() {
    let _codecs = zarrs_kerchunk_codecs::register_codecs();
    let codecs = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/codecs/grib");
    let dir = tempfile::tempdir().unwrap();
    let mut read = 0;
    for entry in std::fs::read_dir(&codecs).unwrap() {
        let name = entry.unwrap().file_name().to_string_lossy().into_owned();
        let Some(case) = name.strip_suffix(".grib1") else { continue };
        let scanned = scan_in(&codecs, &name, &ScanOptions::default()).unwrap();
        assert!(scanned.skipped.is_empty(), "{name}: {:?}", scanned.skipped);
        let theirs = json(&codecs.join(format!("{case}.kerchunk.json")));
        let mut expected: serde_json::Map<String, Value> =
            serde_json::from_str(theirs["refs"]["t/.zattrs"].as_str().unwrap()).unwrap();
        expected.remove("_ARRAY_DIMENSIONS");
        let group = "t/instant/surface";
        let mut got = text(&scanned.references, &format!("{group}/t/.zattrs"));
        got.as_object_mut().unwrap().remove("_ARRAY_DIMENSIONS");
        assert_eq!(got, Value::Object(expected), "{name}");
        let root: Value = serde_json::from_str(theirs["refs"][".zattrs"].as_str().unwrap()).unwrap();
        let mut ours_root = text(&scanned.references, ".zattrs");
        ours_root.as_object_mut().unwrap().insert("coordinates".into(), root["coordinates"].clone());
        assert_eq!(ours_root, root, "{name}");

        let store = stored(&scanned, &codecs, &name, dir.path());
        let array = Array::open(store, &format!("/{group}/t")).unwrap();
        let values: Vec<f64> = array.retrieve_array_subset(&array.subset_all()).unwrap();
        let truth = npy_f64(&codecs.join(format!("{case}.npy")));
        assert_eq!(values.len(), truth.len(), "{name}");
        for (ours, theirs) in values.iter().zip(&truth) {
            assert!(
                ours.to_bits() == theirs.to_bits() || (ours.is_nan() && theirs.is_nan()),
                "{name}: {ours} != {theirs}"
            );
        }
        read += 1;
    }
    assert_eq!(read, 6);
    let cfgrib = codecs.join("real");
    let error = scan_in(&cfgrib, "cams-egg4-monthly.grib", &ScanOptions::default()).unwrap_err().to_string();
    assert!(error.contains("time range indicator 113"), "{error}");
}

/// Every projected grid of `tests/codecs/grib` (from eccodes' sample) has kerchunk's attributes.
/// Grids whose rows keep one latitude and columns one longitude (Mercator, `mercator_*.grib2`;
/// Gaussian, `gaussian_*.grib2`: N48 global, N640 and N1280 areas, one scanned northwards) have
/// 1-D `latitude` and `longitude` as kerchunk holds them (its first column and row of eccodes' iterator), within
/// 1e-9 degrees of them and of eccodes' every point; kerchunk's attributes; eccodes' values.
#[test]
fn grids_of_rows_and_columns_have_kerchunks_coordinates() {
    let _codecs = zarrs_kerchunk_codecs::register_codecs();
    let codecs = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/codecs/grib");
    let cases: serde_json::Map<String, Value> = json(&codecs.join("cases.json")).as_object().unwrap().clone();
    let dir = tempfile::tempdir().unwrap();
    let (mut read, mut attributes) = (0, 0);
    for (case, keys) in cases.iter().filter(|(_, keys)| keys.get("gridType").is_some()) {
        let name = format!("{case}.grib2");
        let scanned = scan_in(&codecs, &name, &ScanOptions::default()).unwrap();
        assert!(scanned.skipped.is_empty(), "{name}: {:?}", scanned.skipped);
        let theirs = json(&codecs.join(format!("{case}.kerchunk.json")));
        let group = "t/instant/surface";
        let mut expected: Value = serde_json::from_str(theirs["refs"]["t/.zattrs"].as_str().unwrap()).unwrap();
        let mut got = text(&scanned.references, &format!("{group}/t/.zattrs"));
        // kerchunk's one message is (latitude, longitude) or (y, x); the tree's adds time and step.
        let dimensions = got.as_object_mut().unwrap().remove("_ARRAY_DIMENSIONS").unwrap();
        let mut theirs_dimensions = vec![serde_json::json!("time"), serde_json::json!("step")];
        if keys["gridType"] == "space_view" {
            // kerchunk gives a space view 1-D coordinates (one column's and one row's of eccodes'
            // iterator), which a disk's are not; ours are 2-D, on (y, x).
            theirs_dimensions.extend([serde_json::json!("y"), serde_json::json!("x")]);
        } else {
            theirs_dimensions.extend(expected["_ARRAY_DIMENSIONS"].as_array().unwrap().iter().cloned());
        }
        assert_eq!(dimensions, Value::Array(theirs_dimensions), "{name}");
        expected.as_object_mut().unwrap().remove("_ARRAY_DIMENSIONS");
        assert_eq!(got, expected, "{name}");
        attributes += 1;
        if !matches!(keys["gridType"].as_str(), Some("mercator" | "regular_gg")) {
            continue;
        }
        let side = |key: &str| usize::try_from(keys[key].as_u64().unwrap()).unwrap();
        let (ny, nx) = (side("Ny"), side("Nx"));
        let every = |coordinate: &str| npy_f64(&codecs.join(format!("{case}.{coordinate}.npy")));
        let (all_latitudes, all_longitudes) = (every("latitude"), every("longitude"));
        for (coordinate, eccodes) in [
            ("latitude", (0..ny).map(|j| all_latitudes[j * nx]).collect::<Vec<_>>()),
            ("longitude", all_longitudes[..nx].to_vec()),
        ] {
            let ours = f64s(&inline(&scanned.references, &format!("{group}/{coordinate}/0")));
            let kerchunks = inline_floats(&theirs, &format!("{coordinate}/0"));
            assert_eq!((ours.len(), kerchunks.len()), (eccodes.len(), eccodes.len()), "{name} {coordinate}");
            for ((a, b), c) in ours.iter().zip(&kerchunks).zip(&eccodes) {
                assert!(
                    (a - b).abs() < 1e-9 && (a - c).abs() < 1e-9,
                    "{name} {coordinate}: {a} against kerchunk's {b}, eccodes' {c}"
                );
            }
            let attributes = text(&scanned.references, &format!("{group}/{coordinate}/.zattrs"));
            assert_eq!(attributes["_ARRAY_DIMENSIONS"], serde_json::json!([coordinate]), "{name}");
        }
        // Every point's coordinates are the rows' and columns': these grids are rectilinear.
        for j in 0..ny {
            for i in 0..nx {
                assert!((all_latitudes[j * nx + i] - all_latitudes[j * nx]).abs() < 1e-9, "{name}");
                assert!((all_longitudes[j * nx + i] - all_longitudes[i]).abs() < 1e-9, "{name}");
            }
        }
        let store = stored(&scanned, &codecs, &name, dir.path());
        let array = Array::open(store, &format!("/{group}/t")).unwrap();
        let values: Vec<f64> = array.retrieve_array_subset(&array.subset_all()).unwrap();
        let truth = npy_f64(&codecs.join(format!("{case}.npy")));
        assert_eq!(values.len(), truth.len(), "{name}");
        assert!(values.iter().zip(&truth).all(|(a, b)| a.to_bits() == b.to_bits()), "{name}: values differ");
        read += 1;
    }
    assert_eq!(read, 5, "two Mercator grids and three Gaussian");
    // cfgrib's GRIB1 Gaussian file (N48): kerchunk's rows and columns.
    let cfgrib = codecs.join("real");
    let scanned = scan_in(&cfgrib, "regular_gg_sfc.grib", &ScanOptions::default()).unwrap();
    let theirs = json(&cfgrib.join("regular_gg_sfc.0.kerchunk.json"));
    for coordinate in ["latitude", "longitude"] {
        let ours = f64s(&inline(&scanned.references, &format!("u10/instant/surface/{coordinate}/0")));
        let kerchunks = inline_floats(&theirs, &format!("{coordinate}/0"));
        assert_eq!(ours.len(), kerchunks.len(), "{coordinate}");
        assert!(ours.iter().zip(&kerchunks).all(|(a, b)| (a - b).abs() < 1e-9), "{coordinate}: {ours:?} {kerchunks:?}");
    }
    assert_eq!(attributes, cases.values().filter(|keys| keys.get("gridType").is_some()).count());
}

/// Over HTTP (nginx from `.ci/servers.sh`): a file with NOAA's `.idx` beside it, one with ECMWF's
/// `.index`, and one with neither (404s for both) give the references they give locally.
#[test]
fn over_http_the_references_are_the_local_ones() {
    let Ok(server) = std::env::var("ZK_NGINX") else {
        assert!(std::env::var_os("ZK_REQUIRE_SERVERS").is_none(), "ZK_NGINX is not set but ZK_REQUIRE_SERVERS is");
        eprintln!("ZK_NGINX not set: this test needs `eval \"$(bash .ci/servers.sh start)\"` first; not run");
        return;
    };
    let http: Arc<dyn ObjectStore> = Arc::new(
        object_store::http::HttpBuilder::new()
            .with_url(format!("{server}/scan/grib/"))
            .with_client_options(object_store::ClientOptions::new().with_allow_http(true))
            .build()
            .unwrap(),
    );
    let runtime = tokio::runtime::Runtime::new().unwrap();
    for file in ["hrrr_like.grib2", "ecmwf_like.grib2", "gefs_like.grib2"] {
        let remote = runtime.block_on(scan_grib(&http, &StorePath::from(file), file, &ScanOptions::default())).unwrap();
        let local = scan_in(&folder(), file, &ScanOptions::default()).unwrap();
        assert_eq!(sorted(&remote.references), sorted(&local.references), "{file}");
    }
}

/// The product definition templates the scanner reads (the crate docs list them).
const SCANNED_TEMPLATES: [i64; 12] = [0, 1, 2, 5, 8, 9, 11, 12, 40, 41, 42, 43];

/// A whole file with messages in templates not read yet (`names.grib2`: 4.48 aerosols, 4.105,
/// 4.128...; eccodes' reading of each template in `names.templates.json`) scans: exactly those
/// messages are left out, each named by its offset and template; with
/// `UnsupportedArrays::Fail` the first of them fails the scan.
#[test]
fn messages_in_templates_not_read_are_left_out_named() {
    let file = std::fs::read(folder().join("names.grib2")).unwrap();
    let templates: Vec<i64> = serde_json::from_value(json(&folder().join("names.templates.json"))).unwrap();
    let mut expected = BTreeMap::new();
    let mut at = 0;
    for template in &templates {
        if !SCANNED_TEMPLATES.contains(template) {
            expected.insert(at, *template);
        }
        at += usize::try_from(u64::from_be_bytes(file[at + 8..at + 16].try_into().unwrap())).unwrap();
    }
    assert_eq!(at, file.len());
    assert!(expected.len() >= 10, "names.grib2 should hold messages of templates not read");

    let scanned = scan_in(&folder(), "names.grib2", &ScanOptions::default()).unwrap();
    let left_out: BTreeMap<String, String> = scanned
        .skipped
        .iter()
        .filter(|s| s.reason.contains("product definition template"))
        .map(|s| (s.path.clone(), s.reason.clone()))
        .collect();
    let named: std::collections::BTreeSet<String> =
        expected.keys().map(|at| format!("the message at byte {at}")).collect();
    assert_eq!(left_out.keys().cloned().collect::<std::collections::BTreeSet<_>>(), named);
    for (at, template) in &expected {
        let reason = &left_out[&format!("the message at byte {at}")];
        assert!(reason.contains(&format!("template 4.{template} ")), "{at}: {reason}");
    }
    assert!(scanned.references.iter().any(|(key, _)| key.ends_with("/.zarray")));

    let strict = ScanOptions::default().with_unsupported_arrays(kerchunk_scan::UnsupportedArrays::Fail);
    let error = scan_in(&folder(), "names.grib2", &strict).unwrap_err().to_string();
    let (first, template) = expected.iter().next().unwrap();
    assert!(
        error.contains(&format!("the message at byte {first}: product definition template 4.{template} ")),
        "{error}"
    );
}

/// A GRIB1 message on a predefined grid (its grid definition section left out, as the flag of
/// octet 8 of its product definition section says) is left out, named; the message beside it scans.
#[test]
fn a_grib1_message_on_a_predefined_grid_is_left_out_named() {
    let codecs = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/codecs/grib");
    let full = std::fs::read(codecs.join("grib1_simple.grib1")).unwrap();
    // Section 1 from octet 9; section 2 (the grid) after it: drop it and clear the flag.
    let product = usize::try_from(u32::from_be_bytes([0, full[8], full[9], full[10]])).unwrap();
    let grid_at = 8 + product;
    let grid = usize::try_from(u32::from_be_bytes([0, full[grid_at], full[grid_at + 1], full[grid_at + 2]])).unwrap();
    let mut predefined = [&full[..grid_at], &full[grid_at + grid..]].concat();
    predefined[8 + 7] &= 0x7f;
    let length = u32::try_from(predefined.len()).unwrap().to_be_bytes();
    predefined[4..7].copy_from_slice(&length[1..]);
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("two.grib1"), [full.clone(), predefined].concat()).unwrap();

    let scanned = scan_in(dir.path(), "two.grib1", &ScanOptions::default()).unwrap();
    assert_eq!(scanned.skipped.len(), 1, "{:?}", scanned.skipped);
    assert_eq!(scanned.skipped[0].path, format!("the message at byte {}", full.len()));
    assert!(scanned.skipped[0].reason.contains("predefined grid"), "{}", scanned.skipped[0].reason);
    let keys: Vec<String> = scanned.references.iter().map(|(key, _)| key.into_owned()).collect();
    assert!(keys.iter().any(|key| key.starts_with("t/instant/surface/t/0")), "{keys:?}");
}

/// A GRIB2 message whose forecast time is missing (all ones; the fuzzer's find, which overflowed
/// the valid time) is left out, named; the other messages scan.
#[test]
fn a_message_without_a_forecast_time_is_left_out_named() {
    let mut file = std::fs::read(folder().join("hrrr_like.grib2")).unwrap();
    // The first message's product definition section (4): its octets 19 to 22 are the forecast time.
    let mut at = 16;
    while file[at + 4] != 4 {
        at += usize::try_from(u32::from_be_bytes(file[at..at + 4].try_into().unwrap())).unwrap();
    }
    file[at + 18..at + 22].copy_from_slice(&[0xff; 4]);
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("missing.grib2"), &file).unwrap();
    let options = ScanOptions::default().with_grib_inventory(false);
    let scanned = scan_in(dir.path(), "missing.grib2", &options).unwrap();
    assert_eq!(scanned.skipped.len(), 1, "{:?}", scanned.skipped);
    assert_eq!(scanned.skipped[0].path, "the message at byte 0");
    assert!(scanned.skipped[0].reason.contains("forecast time is missing"), "{}", scanned.skipped[0].reason);
}

/// Reduced grids (`tests/codecs/grib/reduced_*.grib2`: eccodes' N32 sample, an octahedral O32, a
/// reduced latitude/longitude grid with empty polar rows, and three sub-areas of the N32 grid, one
/// across longitude 0 and one half the globe, made by its `make.py reduced`) and
/// HEALPix grids (`healpix_*.grib2`, ring order of Nside 8 and 3, nested of 16, made by `make.py
/// healpix`): on one dimension, `values`, as cfgrib has them (kerchunk 0.2.10 fails on them), with
/// cfgrib's attributes; every point's latitude and longitude, through the codec, within 1e-9
/// degrees of eccodes' iterator; eccodes' values.
#[test]
fn reduced_and_healpix_grids_are_cfgribs() {
    let _codecs = zarrs_kerchunk_codecs::register_codecs();
    let codecs = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/codecs/grib");
    let dir = tempfile::tempdir().unwrap();
    let npy = |file: &str| npy_f64(&codecs.join(file));
    let cases = [
        "reduced_gg_n32",
        "reduced_gg_o32",
        "reduced_ll",
        "reduced_gg_n32_area",
        "reduced_gg_n32_across",
        "reduced_gg_n32_half",
        "healpix_h8_ring",
        "healpix_h3_ring",
        "healpix_h16_nested",
    ];
    for case in cases {
        let name = format!("{case}.grib2");
        let scanned = scan_in(&codecs, &name, &ScanOptions::default()).unwrap();
        assert!(scanned.skipped.is_empty(), "{name}: {:?}", scanned.skipped);
        let truth = json(&codecs.join(format!("{case}.cfgrib.json")));
        let variable = truth["variable"].as_str().unwrap();
        let group = format!("{variable}/instant/{}", truth["attrs"]["GRIB_typeOfLevel"].as_str().unwrap());
        let mut got = text(&scanned.references, &format!("{group}/{variable}/.zattrs"));
        let dimensions = got.as_object_mut().unwrap().remove("_ARRAY_DIMENSIONS").unwrap();
        assert_eq!(dimensions.as_array().unwrap().last(), Some(&serde_json::json!("values")), "{name}");
        assert_eq!(got, truth["attrs"], "{name}: cfgrib's attributes");
        let store = stored(&scanned, &codecs, &name, dir.path());
        let read = |array: &str| -> Vec<f64> {
            let array = Array::open(store.clone(), &format!("/{group}/{array}")).unwrap();
            array.retrieve_array_subset(&array.subset_all()).unwrap_or_else(|e| panic!("{name}: {e}"))
        };
        let (values, truth) = (read(variable), npy(&format!("{case}.npy")));
        assert_eq!(values.len(), truth.len(), "{name}");
        assert!(values.iter().zip(&truth).all(|(a, b)| a.to_bits() == b.to_bits()), "{name}: values differ");
        for coordinate in ["latitude", "longitude"] {
            let (ours, eccodes) = (read(coordinate), npy(&format!("{case}.{coordinate}.npy")));
            assert_eq!(ours.len(), eccodes.len(), "{name} {coordinate}");
            assert!(ours.iter().zip(&eccodes).all(|(a, b)| (a - b).abs() < 1e-9), "{name} {coordinate}");
            let attributes = text(&scanned.references, &format!("{group}/{coordinate}/.zattrs"));
            assert_eq!(attributes["_ARRAY_DIMENSIONS"], serde_json::json!(["values"]), "{name}");
        }
    }
}
