//! TIFFs, GeoTIFFs and COGs scanned into references, checked against
//! kerchunk's `tiff_to_zarr` (the same chunk ranges, compressors and
//! filters, and the GeoKeys), rasterio (the values read back through the
//! store, the geotransform, the CRS's EPSG code, the nodata value) and
//! rioxarray (the `x` and `y` coordinates).
//!
//! The files: `tests/codecs/tiff` (every compression and predictor),
//! `tests/codecs/tiff/real` (rasterio's test files, COGs among them) and
//! `tests/scan/tiff` (COGs with overviews, BigTIFF, big-endian, points, a
//! CRS the EPSG table lacks, a mask, sparse tiles), made by the `make.py`
//! of each folder, with the truth they write.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use kerchunk::{JsonWriteOptions, Reference, ReferenceSet};
use kerchunk_scan::{ScanOptions, scan_tiff};
use object_store::ObjectStore;
use object_store::local::LocalFileSystem;
use object_store::path::Path as StorePath;
use serde_json::Value;
use zarrs::array::{Array, ArrayBytes};
use zarrs_kerchunk::ReferenceStoreBuilder;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Every folder of TIFFs, relative to the repository's root.
const FOLDERS: [&str; 3] = ["tests/codecs/tiff", "tests/codecs/tiff/real", "tests/scan/tiff"];

/// The cases of a lossy codec, which a reader may read 4 from rasterio (`make.py` of
/// `tests/codecs/tiff`): JPEG (GDAL's and tifffile's) and lossy WebP.
fn lossy(name: &str) -> bool {
    name.starts_with("jpeg_") || name == "webp_lossy"
}

fn json(path: &Path) -> Value {
    serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The TIFFs of `folder` that kerchunk referenced: their names, without `.tif`.
fn cases(folder: &str) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(root().join(folder))
        .unwrap()
        .filter_map(|e| e.unwrap().file_name().into_string().unwrap().strip_suffix(".kerchunk.json").map(str::to_owned))
        .collect();
    names.sort();
    names
}

/// The file `name.tif` of `folder` scanned, its references naming it by its absolute path.
fn scan(folder: &str, name: &str) -> kerchunk_scan::Scan {
    let dir = root().join(folder).canonicalize().unwrap();
    let store: Arc<dyn ObjectStore> = Arc::new(LocalFileSystem::new_with_prefix(&dir).unwrap());
    let file = format!("{name}.tif");
    let url = dir.join(&file).to_string_lossy().into_owned();
    let runtime = tokio::runtime::Runtime::new().unwrap();
    runtime
        .block_on(scan_tiff(&store, &StorePath::from(file.as_str()), &url, &ScanOptions::default()))
        .unwrap_or_else(|e| panic!("{folder}/{name}: {e}"))
}

fn text(refs: &ReferenceSet, key: &str) -> Value {
    match refs.get(key) {
        Some(Reference::Inline(bytes)) => serde_json::from_slice(bytes).unwrap(),
        other => panic!("{key}: {other:?}"),
    }
}

fn range(refs: &ReferenceSet, key: &str) -> Option<(u64, u64)> {
    match refs.get(key)? {
        Reference::Range { offset, length, .. } => Some((offset, length)),
        other => panic!("{key}: {other:?}"),
    }
}

/// Our data array's path for kerchunk's array `path` ("" for a single image, "0", "1"... for levels).
fn ours(path: &str) -> String {
    match path {
        "" | "0" => "band_data".into(),
        level => format!("overview_{level}/band_data"),
    }
}

/// kerchunk's 2-D arrays (one sample) are ours with a first `band` axis of 1.
fn with_band(values: &Value, two_d: bool) -> Value {
    let mut values = values.as_array().unwrap().clone();
    if two_d {
        values.insert(0, Value::from(1));
    }
    Value::Array(values)
}

/// Every chunk range, compressor, filter, dtype and shape is kerchunk's; its GeoKeys and
/// GDAL metadata are our root's attributes; the fill value is rasterio's nodata, or none.
#[test]
fn references_are_kerchunks() {
    let georef = json(&root().join("tests/scan/tiff/georef.json"));
    let mut compared = 0;
    for folder in FOLDERS {
        for name in cases(folder) {
            let theirs = json(&root().join(folder).join(format!("{name}.kerchunk.json")));
            let theirs = theirs.as_object().unwrap();
            let scanned = scan(folder, &name);
            let refs = &scanned.references;
            let arrays: Vec<&str> =
                theirs.keys().filter_map(|k| k.strip_suffix(".zarray")).map(|k| k.trim_end_matches('/')).collect();
            let what = format!("{folder}/{name}");
            for array in &arrays {
                let zarray: Value = serde_json::from_str(
                    theirs[&format!("{array}/.zarray").trim_start_matches('/').to_owned()].as_str().unwrap(),
                )
                .unwrap();
                let path = ours(array);
                let mine = text(refs, &format!("{path}/.zarray"));
                let two_d = zarray["shape"].as_array().unwrap().len() == 2;
                assert_eq!(mine["dtype"], zarray["dtype"], "{what} {array}");
                assert_eq!(mine["compressor"], zarray["compressor"], "{what} {array}");
                assert_eq!(mine["shape"], with_band(&zarray["shape"], two_d), "{what} {array}");
                assert_eq!(mine["chunks"], with_band(&zarray["chunks"], two_d), "{what} {array}");
                let mut filters = zarray["filters"].clone();
                for filter in filters.as_array_mut().into_iter().flatten() {
                    filter["shape"] = with_band(&filter["shape"], two_d);
                }
                assert_eq!(mine["filters"], filters, "{what} {array}");
                let truth = &georef[format!("{folder}/{name}.tif")];
                if !truth.is_null() {
                    let nodata = &truth["nodata"];
                    let fill = &mine["fill_value"];
                    let same = fill == nodata
                        || fill.as_f64().zip(nodata.as_f64()).is_some_and(|(a, b)| a.to_bits() == b.to_bits());
                    assert!(same, "{what}: fill {fill}, rasterio's nodata {nodata}");
                }
                // Every chunk kerchunk references, at the same range; no other.
                let prefix = if array.is_empty() { String::new() } else { format!("{array}/") };
                let mut expected = BTreeMap::new();
                for (key, value) in theirs {
                    let Some(chunk) = key.strip_prefix(&prefix).filter(|c| c.starts_with(|c: char| c.is_ascii_digit()))
                    else {
                        continue;
                    };
                    if chunk.contains('/') {
                        continue;
                    }
                    let chunk = if two_d { format!("0.{chunk}") } else { chunk.to_owned() };
                    let item = value.as_array().unwrap();
                    expected.insert(format!("{path}/{chunk}"), (item[1].as_u64().unwrap(), item[2].as_u64().unwrap()));
                }
                let got: BTreeMap<String, (u64, u64)> = refs
                    .keys_with_prefix(&format!("{path}/"))
                    .into_iter()
                    .filter(|k| !k.contains("/."))
                    .map(|k| {
                        let r = range(refs, &k).unwrap();
                        (k, r)
                    })
                    .collect();
                assert_eq!(got, expected, "{what} {array}");
            }
            // kerchunk's attributes (GeoKeys, model tags, GDAL's dataset items) are our root's.
            let their_attrs: Value = serde_json::from_str(theirs[".zattrs"].as_str().unwrap()).unwrap();
            let mine = text(refs, ".zattrs");
            let data = text(refs, "band_data/.zattrs");
            for (key, value) in their_attrs.as_object().unwrap() {
                if ["_ARRAY_DIMENSIONS", "multiscales"].contains(&key.as_str()) {
                    continue;
                }
                // A band's item (GDAL's `sample`) is the data array's, one value per band where
                // they differ, of which kerchunk keeps the last.
                let per_band = match data.get(key) {
                    Some(Value::Array(values)) => values.iter().rev().find(|v| !v.is_null()),
                    other => other,
                };
                // GDAL escapes its metadata twice (`&amp;amp;`); kerchunk unescapes once, we twice.
                let value = match value.as_str() {
                    Some(text) => Value::from(text.replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&")),
                    None => value.clone(),
                };
                let value = &value;
                assert!(mine.get(key) == Some(value) || per_band == Some(value), "{what}: attribute {key}: {value}");
            }
            compared += 1;
        }
    }
    assert!(compared >= 50, "{compared}");
}

/// With an inline threshold, each tile kerchunk's `tiff_to_zarr` references in fewer bytes is
/// held inline: the file's bytes at kerchunk's range. The others stay ranges.
#[test]
fn tiles_under_the_inline_threshold_are_held_inline() {
    let (folder, name) = ("tests/scan/tiff", "cog_utm");
    let theirs = json(&root().join(folder).join(format!("{name}.kerchunk.json")));
    let file = std::fs::read(root().join(folder).join(format!("{name}.tif"))).unwrap();
    let dir = root().join(folder).canonicalize().unwrap();
    let store: Arc<dyn ObjectStore> = Arc::new(LocalFileSystem::new_with_prefix(&dir).unwrap());
    let options = ScanOptions::default().with_inline_threshold(3340);
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let scanned =
        runtime.block_on(scan_tiff(&store, &StorePath::from(format!("{name}.tif").as_str()), name, &options)).unwrap();
    let (mut inline, mut ranges) = (0, 0);
    for (key, value) in theirs.as_object().unwrap() {
        let Some((level, chunk)) = key.split_once('/').filter(|(_, c)| !c.starts_with('.')) else { continue };
        let item = value.as_array().unwrap();
        let (offset, length) = (item[1].as_u64().unwrap(), item[2].as_u64().unwrap());
        let key = format!("{}/{chunk}", ours(level));
        match scanned.references.get(&key) {
            Some(Reference::Inline(bytes)) if length < 3340 => {
                let at = usize::try_from(offset).unwrap();
                assert_eq!(bytes, &file[at..at + usize::try_from(length).unwrap()], "{key}");
                inline += 1;
            }
            Some(Reference::Range { offset: o, length: l, .. }) if length >= 3340 => {
                assert_eq!((o, l), (offset, length), "{key}");
                ranges += 1;
            }
            other => panic!("{key} ({length} bytes): {other:?}"),
        }
    }
    assert!(inline > 0 && ranges > 0, "{inline} inline, {ranges} ranges: the threshold divides nothing");
}

/// A `.npy` file's shape and little-endian data.
fn npy(path: &Path) -> (Vec<usize>, Vec<u8>) {
    let bytes = std::fs::read(path).unwrap();
    let header_len = usize::from(u16::from_le_bytes([bytes[8], bytes[9]]));
    let header = std::str::from_utf8(&bytes[10..10 + header_len]).unwrap();
    let shape = header.split("'shape': (").nth(1).unwrap().split(')').next().unwrap();
    let shape = shape.split(',').map(str::trim).filter(|s| !s.is_empty()).map(|s| s.parse().unwrap()).collect();
    (shape, bytes[10 + header_len..].to_vec())
}

/// Our values (`band, y, x`, or `y, x, band`) as rasterio's `(band, y, x)`, every `rows`th row
/// and every `columns`th column, as the truth beside them keeps them.
fn band_first(bytes: &[u8], shape: &[u64], interleaved: bool, (rows, columns): (usize, usize)) -> Vec<u8> {
    let shape: Vec<usize> = shape.iter().map(|&n| usize::try_from(n).unwrap()).collect();
    let (bands, height, width) =
        if interleaved { (shape[2], shape[0], shape[1]) } else { (shape[0], shape[1], shape[2]) };
    let item = bytes.len() / (bands * height * width);
    let mut out = Vec::new();
    for band in 0..bands {
        for row in (0..height).step_by(rows) {
            for col in (0..width).step_by(columns) {
                let at =
                    if interleaved { (row * width + col) * bands + band } else { (band * height + row) * width + col };
                out.extend_from_slice(&bytes[at * item..(at + 1) * item]);
            }
        }
    }
    out
}

/// Every level of every file reads, through the store and the codecs, rasterio's values.
#[test]
fn arrays_read_rasterios_values() {
    const { assert!(cfg!(target_endian = "little"), "the ground truth is little-endian") };
    let _codecs = zarrs_kerchunk_codecs::register_codecs();
    let dir = tempfile::tempdir().unwrap();
    let mut read = 0;
    for folder in FOLDERS {
        let listed = root().join(folder).join("cases.json");
        let levels = if listed.exists() { Some(json(&listed)) } else { None };
        for name in cases(folder) {
            let scanned = scan(folder, &name);
            let path = dir.path().join(format!("{name}.json"));
            scanned.references.write_json(std::fs::File::create(&path).unwrap(), &JsonWriteOptions::default()).unwrap();
            let builder = ReferenceStoreBuilder::new().with_codec_check(zarrs_kerchunk_codecs::is_decodable);
            let store = Arc::new(builder.open(path.to_str().unwrap()).unwrap());
            // `tests/codecs/tiff/real` keeps every row and every 7th column; `tests/scan/tiff`, every
            // 7th of both; the others, every value.
            let sampled = if folder.ends_with("real") { (1, 7) } else { (7, 7) };
            let entries: Vec<(String, u64, (usize, usize))> = match &levels {
                Some(levels) => levels[&name]
                    .as_array()
                    .unwrap()
                    .iter()
                    .enumerate()
                    .map(|(n, e)| (format!("{name}.{n}.npy"), e["tolerance"].as_u64().unwrap(), sampled))
                    .collect(),
                None => vec![(format!("{name}.npy"), if lossy(&name) { 4 } else { 0 }, (1, 1))],
            };
            for (level, (truth_file, tolerance, stride)) in entries.iter().enumerate() {
                let array_path =
                    if level == 0 { "/band_data".to_owned() } else { format!("/overview_{level}/band_data") };
                let array =
                    Array::open(store.clone(), &array_path).unwrap_or_else(|e| panic!("{name} {array_path}: {e}"));
                let interleaved = array.attributes()["_ARRAY_DIMENSIONS"][0] == "y";
                let bytes = array
                    .retrieve_array_subset::<ArrayBytes>(&array.subset_all())
                    .unwrap_or_else(|e| panic!("{name}: {e}"));
                let bytes = bytes.into_fixed().unwrap().into_owned();
                let ours = band_first(&bytes, array.shape(), interleaved, *stride);
                let (_, truth) = npy(&root().join(folder).join(truth_file));
                assert_eq!(ours.len(), truth.len(), "{folder}/{truth_file}");
                if *tolerance == 0 {
                    assert!(ours == truth, "{folder}/{truth_file}: differs from rasterio's values");
                } else {
                    let worst = ours.iter().zip(&truth).map(|(a, b)| a.abs_diff(*b)).max().unwrap_or(0);
                    assert!(u64::from(worst) <= *tolerance, "{folder}/{truth_file}: {worst} from rasterio");
                }
                read += 1;
            }
        }
    }
    assert!(read >= 60, "{read}");
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * a.abs().max(b.abs()).max(1.0)
}

/// Each level's geotransform is rasterio's, its `x` and `y` rioxarray's, its CRS rasterio's EPSG
/// code (with WKT where the EPSG table has it, and none where the file's CRS has no code).
#[test]
fn georeferencing_is_rasterios_and_rioxarrays() {
    let georef = json(&root().join("tests/scan/tiff/georef.json"));
    let mut checked = 0;
    for (file, truth) in georef.as_object().unwrap() {
        let (folder, name) = file.rsplit_once('/').unwrap();
        let name = name.strip_suffix(".tif").unwrap();
        let scanned = scan(folder, name);
        let refs = &scanned.references;
        for (n, level) in truth["levels"].as_array().unwrap().iter().enumerate() {
            let group = if n == 0 { String::new() } else { format!("overview_{n}/") };
            let spatial = text(refs, &format!("{group}spatial_ref/.zattrs"));
            let transform: Vec<f64> =
                spatial["GeoTransform"].as_str().unwrap().split(' ').map(|v| v.parse().unwrap()).collect();
            let expected: Vec<f64> = serde_json::from_value(level["transform"].clone()).unwrap();
            assert!(
                transform.iter().zip(&expected).all(|(a, b)| close(*a, *b)),
                "{file} {n}: {transform:?} {expected:?}"
            );
            for axis in ["x", "y"] {
                let key = format!("{group}{axis}/0");
                if level[axis].is_null() {
                    assert!(refs.get(&key).is_none(), "{file}: {axis} on a rotated grid");
                    continue;
                }
                let Some(Reference::Inline(bytes)) = refs.get(&key) else { panic!("{file}: no {key}") };
                let values: Vec<f64> =
                    bytes.chunks_exact(8).map(|b| f64::from_le_bytes(b.try_into().unwrap())).collect();
                let sample = &level[axis];
                assert_eq!(values.len() as u64, sample["length"].as_u64().unwrap(), "{file} {axis}");
                let every: Vec<f64> = serde_json::from_value(sample["every7"].clone()).unwrap();
                for (ours, theirs) in values
                    .iter()
                    .step_by(7)
                    .zip(&every)
                    .chain([(values.last().unwrap(), &sample["last"].as_f64().unwrap())])
                {
                    assert!(close(*ours, *theirs), "{file} {n} {axis}: {ours} != {theirs}");
                }
            }
            let code = spatial.get("proj:code").and_then(Value::as_str);
            match truth["epsg"].as_i64() {
                Some(epsg) => {
                    assert_eq!(code, Some(format!("EPSG:{epsg}").as_str()), "{file}");
                    let wkt = spatial["crs_wkt"].as_str().unwrap_or_else(|| panic!("{file}: no crs_wkt"));
                    assert!(wkt.ends_with(&format!("AUTHORITY[\"EPSG\",\"{epsg}\"]]")), "{file}: {wkt}");
                }
                None => assert!(code.is_none() && spatial.get("crs_wkt").is_none(), "{file}: {spatial}"),
            }
            let data = text(refs, &format!("{group}band_data/.zattrs"));
            assert_eq!(data["grid_mapping"], "spatial_ref", "{file}");
            let band = text(refs, &format!("{group}band/.zarray"));
            assert_eq!(band["shape"][0], truth["bands"], "{file}");
            // GDAL's metadata as rasterio reads it: the dataset's items on the root, the raster
            // type on the data, the bands' descriptions, scales and offsets on the data.
            let root_attrs = text(refs, ".zattrs");
            for (tag, value) in truth["tags"].as_object().unwrap() {
                let ours = if tag == "AREA_OR_POINT" { data.get(tag) } else { root_attrs.get(tag) };
                assert_eq!(ours, Some(value), "{file}: {tag}");
            }
            let descriptions: Vec<Value> = truth["descriptions"].as_array().unwrap().clone();
            if descriptions.iter().any(|d| !d.is_null()) {
                assert_eq!(data["DESCRIPTION"], Value::Array(descriptions), "{file}");
            }
            let scales = truth["scales"].as_array().unwrap();
            let offsets = truth["offsets"].as_array().unwrap();
            if scales.iter().any(|s| s.as_f64() != Some(1.0)) {
                assert_eq!(data.get("scale_factor"), Some(&scales[0]), "{file}");
                assert_eq!(data.get("add_offset"), Some(&offsets[0]), "{file}");
            } else {
                assert!(data.get("scale_factor").is_none(), "{file}");
            }
        }
        checked += 1;
    }
    assert!(checked >= 40, "{checked}");
}

/// A little-endian classic TIFF: the header, then one IFD per item of `ifds` (each its
/// entries `(tag, type, values)` as 32-bit LONGs or 16-bit SHORTs), each IFD linking to
/// `links[i]` where given and not `FOLLOWING`, else to the following one; then `tail` bytes.
const FOLLOWING: u32 = u32::MAX;

fn tiff(ifds: &[Vec<(u16, u16, Vec<u32>)>], links: Option<&[u32]>, tail: usize) -> Vec<u8> {
    let mut out = b"II*\0".to_vec();
    out.extend_from_slice(&8u32.to_le_bytes());
    let mut at = 8u32;
    let mut starts = Vec::new();
    for entries in ifds {
        starts.push(at);
        at += 2 + 12 * u32::try_from(entries.len()).unwrap() + 4;
        for (_, kind, values) in entries {
            let width = if *kind == 3 { 2 } else { 4 };
            let bytes = width * u32::try_from(values.len()).unwrap();
            if bytes > 4 {
                at += bytes;
            }
        }
    }
    for (n, entries) in ifds.iter().enumerate() {
        let mut values_at = starts[n] + 2 + 12 * u32::try_from(entries.len()).unwrap() + 4;
        let mut ifd = u16::try_from(entries.len()).unwrap().to_le_bytes().to_vec();
        let mut spill = Vec::new();
        for (tag, kind, values) in entries {
            let raw: Vec<u8> = if *kind == 3 {
                values.iter().flat_map(|&v| u16::try_from(v).unwrap().to_le_bytes()).collect()
            } else {
                values.iter().flat_map(|&v| v.to_le_bytes()).collect()
            };
            ifd.extend_from_slice(&tag.to_le_bytes());
            ifd.extend_from_slice(&kind.to_le_bytes());
            ifd.extend_from_slice(&u32::try_from(values.len()).unwrap().to_le_bytes());
            if raw.len() <= 4 {
                let mut inline = raw.clone();
                inline.resize(4, 0);
                ifd.extend_from_slice(&inline);
            } else {
                ifd.extend_from_slice(&values_at.to_le_bytes());
                values_at += u32::try_from(raw.len()).unwrap();
                spill.extend_from_slice(&raw);
            }
        }
        let following = if n + 1 < ifds.len() { starts[n + 1] } else { 0 };
        let next = links.map_or(following, |l| if l[n] == FOLLOWING { following } else { l[n] });
        ifd.extend_from_slice(&next.to_le_bytes());
        out.extend_from_slice(&ifd);
        out.extend_from_slice(&spill);
    }
    out.resize(out.len() + tail, 7);
    out
}

/// A 64 × 64 uint8 image in four 32 × 32 uncompressed tiles at `data`.
fn tiled(data: u32, extra: &[(u16, u16, Vec<u32>)]) -> Vec<(u16, u16, Vec<u32>)> {
    let mut entries = vec![
        (256, 4, vec![64]),
        (257, 4, vec![64]),
        (258, 3, vec![8]),
        (259, 3, vec![1]),
        (277, 3, vec![1]),
        (322, 4, vec![32]),
        (323, 4, vec![32]),
        (324, 4, (0..4).map(|t| data + t * 1024).collect()),
        (325, 4, vec![1024; 4]),
    ];
    for (tag, kind, values) in extra {
        entries.retain(|(t, _, _)| t != tag);
        entries.push((*tag, *kind, values.clone()));
    }
    entries.sort_by_key(|(t, _, _)| *t);
    entries
}

fn scan_bytes(bytes: &[u8], options: &ScanOptions) -> Result<kerchunk_scan::Scan, kerchunk_scan::ScanError> {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("x.tif"), bytes).unwrap();
    let store: Arc<dyn ObjectStore> = Arc::new(LocalFileSystem::new_with_prefix(dir.path()).unwrap());
    let runtime = tokio::runtime::Runtime::new().unwrap();
    runtime.block_on(kerchunk_scan::scan(&store, &StorePath::from("x.tif"), "x.tif", options))
}

fn error(bytes: &[u8]) -> String {
    scan_bytes(bytes, &ScanOptions::default()).map(|s| s.references.len()).unwrap_err().to_string()
}

/// Damaged files fail with an error naming the file and what is wrong: an IFD loop, tiles past
/// the end, a table that disagrees with the image's size, a billion tiles declared, directories
/// past the header limit, a truncated header.
#[test]
fn damaged_tiffs_are_errors_naming_the_fault() {
    // The well-formed file first: four tiles after its IFD.
    let good = tiff(&[tiled(1000, &[])], None, 5000);
    let scanned = scan_bytes(&good, &ScanOptions::default()).unwrap();
    assert_eq!(range(&scanned.references, "band_data/0.1.1"), Some((1000 + 3 * 1024, 1024)));
    assert!(scanned.skipped.is_empty());

    // The second IFD (an overview) links back to the first.
    let looped = tiff(&[tiled(1000, &[]), tiled(1000, &[(254, 4, vec![1])])], Some(&[FOLLOWING, 8]), 5000);
    assert!(error(&looped).contains("loops back to the IFD at byte 8"), "{}", error(&looped));

    let past = tiff(&[tiled(1000, &[])], None, 2000);
    let message = error(&past);
    assert!(message.starts_with("x.tif") && message.contains("runs past the end of the file"), "{message}");

    let short = tiff(&[tiled(1000, &[(324, 4, vec![1000, 2024, 3048])])], None, 5000);
    assert!(error(&short).contains("3 offsets and 4 byte counts for an image of 4 chunks"), "{}", error(&short));

    // 2^32 - 1 pixels square in tiles of 16: 2^56 tiles declared, four given.
    let huge = tiff(
        &[tiled(1000, &[(256, 4, vec![u32::MAX]), (257, 4, vec![u32::MAX]), (322, 4, vec![16]), (323, 4, vec![16])])],
        None,
        5000,
    );
    assert!(error(&huge).contains("for an image of"), "{}", error(&huge));

    // One strip of 2^32 - 1 columns: its x would be 32 GiB, held in the references.
    let wide = tiff(
        &[tiled(
            1000,
            &[
                (256, 4, vec![u32::MAX]),
                (257, 4, vec![1]),
                (322, 4, vec![u32::MAX]),
                (323, 4, vec![16]),
                (324, 4, vec![1000]),
                (325, 4, vec![16]),
            ],
        )],
        None,
        5000,
    );
    assert!(error(&wide).contains("whose x and y (34359738368 bytes, with its overviews') pass"), "{}", error(&wide));
    // 2^31 samples a pixel: a `band` axis as long.
    let samples = tiff(&[tiled(1000, &[(277, 4, vec![1 << 31]), (284, 3, vec![1])])], None, 5000);
    assert!(error(&samples).contains("pixels of 2147483648 samples"), "{}", error(&samples));

    let limited = scan_bytes(&good, &ScanOptions::default().with_max_header_bytes(64)).unwrap_err();
    assert!(matches!(limited, kerchunk_scan::ScanError::HeaderTooLarge { .. }), "{limited}");

    // Cut within the magic number, within the header, within the first IFD.
    for (cut, reason) in [
        (3, r#"x.tif is neither NetCDF-3, HDF5 (NetCDF-4), GRIB nor TIFF: it starts with "II*""#),
        (7, "x.tif: 7 bytes is too short for a TIFF header"),
        (20, "x.tif: an IFD of 9 entries at byte 8 runs past the end of the file (20)"),
    ] {
        assert_eq!(error(&good[..cut]), reason, "cut at {cut}");
    }
    let no_ifd = [&b"II*\0"[..], &0u32.to_le_bytes()].concat();
    assert!(error(&[no_ifd, vec![0; 64]].concat()).contains("no IFD"));
}

/// What references cannot express is left out and named (or, for the full-resolution image,
/// an error naming why): a mask, a second page, strips that do not divide the image, a
/// compression tifffile does not reference, 1-bit samples.
#[test]
fn what_references_cannot_express_is_named() {
    let scanned = scan("tests/scan/tiff", "masked_rgb");
    assert_eq!(scanned.skipped.len(), 1, "{:?}", scanned.skipped);
    assert!(scanned.skipped[0].reason.contains("transparency mask"), "{:?}", scanned.skipped);

    let second_page = tiff(&[tiled(1000, &[]), tiled(1000, &[])], None, 5000);
    let scanned = scan_bytes(&second_page, &ScanOptions::default()).unwrap();
    assert!(scanned.skipped.len() == 1 && scanned.skipped[0].reason.contains("another image"), "{:?}", scanned.skipped);

    let strips = vec![
        (256, 4, vec![10]),
        (257, 4, vec![25]),
        (258, 3, vec![8]),
        (273, 4, vec![1000, 1100, 1200]),
        (277, 3, vec![1]),
        (278, 4, vec![10]),
        (279, 4, vec![100, 100, 50]),
    ];
    let message = error(&tiff(&[strips], None, 2000));
    assert!(message.contains("strips of 10 rows, which do not divide its 25 rows"), "{message}");

    let ccitt = error(&tiff(&[tiled(1000, &[(259, 3, vec![4])])], None, 5000));
    assert!(ccitt.contains("compression 4"), "{ccitt}");
    let one_bit = error(&tiff(&[tiled(1000, &[(258, 3, vec![1])])], None, 5000));
    assert!(one_bit.contains("1-bit samples"), "{one_bit}");

    // An overview in a compression not referenced is left out, the full resolution kept.
    let overview = tiled(1000, &[(254, 4, vec![1]), (259, 3, vec![4])]);
    let scanned = scan_bytes(&tiff(&[tiled(1000, &[]), overview], None, 5000), &ScanOptions::default()).unwrap();
    assert!(scanned.skipped.len() == 1 && scanned.skipped[0].reason.contains("compression 4"), "{:?}", scanned.skipped);
    assert!(scanned.references.get("overview_1/band_data/.zarray").is_none());
}

/// Copies of `tests/scan/tiff/NAME.tif` named `names` in a new folder, each scanned (its
/// references naming it by its file name), with the folder.
fn copies(name: &str, names: &[&str]) -> (tempfile::TempDir, Vec<(String, ReferenceSet)>) {
    let dir = tempfile::tempdir().unwrap();
    let source = root().join("tests/scan/tiff").join(format!("{name}.tif"));
    let store: Arc<dyn ObjectStore> = Arc::new(LocalFileSystem::new_with_prefix(dir.path()).unwrap());
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let mut scanned = Vec::new();
    for file in names {
        std::fs::copy(&source, dir.path().join(file)).unwrap();
        let scan = runtime.block_on(scan_tiff(&store, &StorePath::from(*file), file, &ScanOptions::default())).unwrap();
        scanned.push(((*file).to_owned(), scan.references));
    }
    (dir, scanned)
}

fn url_of(refs: &ReferenceSet, key: &str) -> String {
    match refs.get(key) {
        Some(Reference::Range { url, .. }) => url.unwrap().to_owned(),
        other => panic!("{key}: {other:?}"),
    }
}

/// COGs of one grid, one a day with the date only in their names, become a time series: every
/// level's `band_data` gains `time` (the files in date order), while `x`, `y`, `band` and the
/// grid mapping `spatial_ref` stay as they are, checked the same in every file.
#[test]
fn cogs_of_one_grid_combine_along_time_from_their_names() {
    let names = ["scene_20240103.tif", "scene_20240101.tif", "scene_20240102.tif"];
    let (_dir, scanned) = copies("cog_utm", &names);
    let source: kerchunk_combine::CoordinateSource = r"name:scene_(\d{8})\.tif$:%Y%m%d".parse().unwrap();
    let options = kerchunk_combine::CombineOptions::new("time").with_coordinate(source);
    let combined = kerchunk_combine::combine_with(scanned, &options).unwrap();
    for group in ["", "overview_1/", "overview_2/"] {
        let data = text(&combined, &format!("{group}band_data/.zattrs"));
        assert_eq!(data["_ARRAY_DIMENSIONS"], serde_json::json!(["time", "y", "x", "band"]), "{group}");
        assert_eq!(text(&combined, &format!("{group}band_data/.zarray"))["shape"][0], 3);
        assert_eq!(url_of(&combined, &format!("{group}band_data/1.0.0.0")), "scene_20240102.tif");
        for unchanged in ["x", "y", "band", "spatial_ref"] {
            let attrs = text(&combined, &format!("{group}{unchanged}/.zattrs"));
            assert!(!attrs["_ARRAY_DIMENSIONS"].to_string().contains("time"), "{group}{unchanged}: {attrs}");
        }
    }
    // The times are the dates the names give, in order: decoded with the units written.
    let time = text(&combined, "time/.zattrs");
    let units =
        zarrs_cf::TimeUnits::parse(time["units"].as_str().unwrap(), time["calendar"].as_str()).unwrap().unwrap();
    assert_eq!(text(&combined, "time/.zarray")["dtype"], "<f8");
    let Some(Reference::Inline(values)) = combined.get("time/0") else { panic!("no time/0") };
    let dates: Vec<_> = values.chunks_exact(8).map(|v| units.date(f64::from_le_bytes(v.try_into().unwrap()))).collect();
    let from_names: Vec<_> = (1..=3).map(|day| Some(zarrs_cf::DateTime::date(2024, 1, day))).collect();
    assert_eq!(dates, from_names);
}

/// Single-band files of one scene (`_B1`, `_B2`...) become one array along `band`, the band
/// numbers from their names.
#[test]
fn single_band_files_combine_along_band_from_their_names() {
    let names = ["scene_B3.tif", "scene_B1.tif", "scene_B2.tif"];
    let (_dir, scanned) = copies("cog_geographic_bigtiff", &names);
    let source: kerchunk_combine::CoordinateSource = r"name:_B(\d+)\.tif$".parse().unwrap();
    let options = kerchunk_combine::CombineOptions::new("band").with_coordinate(source);
    let combined = kerchunk_combine::combine_with(scanned, &options).unwrap();
    assert_eq!(text(&combined, "band_data/.zarray")["shape"], serde_json::json!([3, 90, 180]));
    assert_eq!(url_of(&combined, "band_data/2.0.0"), "scene_B3.tif");
    let Some(Reference::Inline(bands)) = combined.get("band/0") else { panic!("no band/0") };
    let bands: Vec<i64> = bands.chunks_exact(8).map(|b| i64::from_le_bytes(b.try_into().unwrap())).collect();
    assert_eq!(bands, [1, 2, 3]);
    assert_eq!(text(&combined, "overview_1/band_data/.zarray")["shape"][0], 3);
}
