//! The bodies of the fuzz targets.
//!
//! Each target takes arbitrary bytes and must return without panicking,
//! whatever they hold; `cargo fuzz run <target>` drives them on nightly.
//! Each returns how many references it parsed or arrays it read whole, so
//! that the replay can tell a live harness from one that only meets errors.
//! `tests/fuzz_corpora.rs` includes this file and replays the saved corpora
//! and every crash found so far on stable, so they stay fixed.
//!
//! Everything a target opens lives in memory under `s3://fuzz/`, the only
//! prefix it may read: a document can name any URL, and none is fetched.

use std::sync::{Arc, OnceLock};

use kerchunk::{Limits, ParseOptions, ReferenceSet};
use object_store::memory::InMemory;
use object_store::path::Path;
use object_store::{ObjectStore, ObjectStoreExt};
use zarrs::array::{Array, ArrayBytes};
use zarrs_kerchunk::{RecordCacheOptions, ReferenceStore, ReferenceStoreBuilder};
use zarrs_storage::{ReadableStorageTraits, StoreKey};

/// Arrays holding more than this are opened but not read: the reader's own
/// limits are tested elsewhere, and a fuzzer needs fast executions.
const MAX_ARRAY_BYTES: u64 = 1 << 20;

/// The prefix every fuzzed document may read.
const PREFIX: &str = "s3://fuzz/";

/// Limits small enough that each execution takes milliseconds, not seconds.
fn limits() -> Limits {
    Limits::default()
        .with_max_document_bytes(4 << 20)
        .with_max_generated_references(20_000)
        .with_max_generated_bytes(4 << 20)
        .with_max_template_fuel(200_000)
        .with_max_chunk_bytes(4 << 20)
}

fn options() -> ParseOptions {
    ParseOptions::default().with_limits(limits())
}

/// A kerchunk JSON document, parsed whole and streamed. Where both accept
/// it, they must hold the same references. Returns how many it holds.
pub fn json_document(data: &[u8]) -> usize {
    let whole = ReferenceSet::from_json(data, &options());
    let streamed = ReferenceSet::from_reader(data, &options());
    if let (Ok(whole), Ok(streamed)) = (&whole, &streamed) {
        assert_same(whole, streamed);
    }
    // The streamed reader takes a subset (not bare NaN), never more: what it
    // reads, fast path or serde, the whole-document reader reads too.
    assert!(streamed.is_err() || whole.is_ok(), "streamed read what whole refused: {whole:?}");
    whole.map_or(0, |set| set.len())
}

/// `gen` and templates: the input's lines become a version 1 document's
/// templates, template-using URLs, and a `gen` entry's fields and ranges, so
/// that the fuzzer works on the template engine rather than on JSON syntax.
pub fn templates(data: &[u8]) -> usize {
    let text = String::from_utf8_lossy(data);
    let mut lines = text.split('\n');
    let mut next = || lines.next().unwrap_or_default().to_owned();
    let (template_a, template_b, url, gen_key, gen_url) = (next(), next(), next(), next(), next());
    let mut number = || next().trim().parse::<i64>().unwrap_or(0);
    let (first, end, stride, length) = (number(), number(), number(), number());
    let document = serde_json::json!({
        "version": 1,
        "templates": {"a": template_a, "b": template_b},
        "refs": {
            ".zgroup": "{\"zarr_format\": 2}",
            "x/0": [url, 0, 8],
            "x/1": [url],
        },
        "gen": [{
            "key": gen_key,
            "url": gen_url,
            "offset": "{{ i * 8 }}",
            "length": length.to_string(),
            "dimensions": {"i": {"start": first, "stop": end, "step": stride}, "j": [0, 1]},
        }],
    });
    json_document(document.to_string().as_bytes())
}

/// A parquet reference root: the input is a `.zmetadata` document (its
/// length in the first two bytes, little-endian) and one record file, which
/// stands for the first record of every array the metadata names.
pub fn parquet_root(data: &[u8]) -> usize {
    let Some((length, rest)) = data.split_first_chunk::<2>() else { return 0 };
    let split = usize::from(u16::from_le_bytes(*length)).min(rest.len());
    let (zmetadata, record) = rest.split_at(split);
    let memory = targets();
    put(&memory, "root.parq/.zmetadata", zmetadata);
    let arrays = serde_json::from_slice::<serde_json::Value>(zmetadata)
        .ok()
        .and_then(|v| v.get("metadata").and_then(|m| m.as_object()).cloned())
        .map(|metadata| array_paths(metadata.keys().map(String::as_str)))
        .unwrap_or_default();
    for array in arrays.iter().take(4) {
        put(&memory, &format!("root.parq/{array}/refs.0.parq"), record);
    }
    builder(&memory).open(&format!("{PREFIX}root.parq")).map_or(0, |store| read_everything(&Arc::new(store), &arrays))
}

/// The metadata rewrites: the input is an array's `.zarray`, whose chunks
/// are inline bytes; the array is opened through zarrs and read.
pub fn metadata(data: &[u8]) -> usize {
    let zarray = String::from_utf8_lossy(data);
    let chunk = "base64:AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=";
    let document = serde_json::json!({
        ".zgroup": "{\"zarr_format\": 2}",
        "a/.zarray": zarray,
        "a/.zattrs": "{}",
        "a/0": chunk, "a/0.0": chunk, "a/0.0.0": chunk, "a/1": chunk, "a/0.1": chunk,
    });
    let Ok(set) = ReferenceSet::from_json(document.to_string().as_bytes(), &options()) else { return 0 };
    builder(&targets())
        .build(set, &format!("{PREFIX}refs.json"))
        .map_or(0, |store| read_everything(&Arc::new(store), &["a".to_owned()]))
}

/// End to end: the input is a reference document, opened as if it were
/// `s3://fuzz/refs.json` beside the conformance cases' target files, and
/// every array it holds is opened through zarrs and read.
pub fn end_to_end(data: &[u8]) -> usize {
    let Ok(set) = ReferenceSet::from_json(data, &options()) else { return 0 };
    let arrays =
        array_paths(set.iter().map(|(key, _)| key.into_owned()).collect::<Vec<_>>().iter().map(String::as_str));
    builder(&targets())
        .build(set, &format!("{PREFIX}refs.json"))
        .map_or(0, |store| read_everything(&Arc::new(store), &arrays))
}

/// The sized zlib codec's inflaters (every one built in) against flate2's streaming reader
/// (what zarrs' own codec uses). The first two bytes are the chunk size (little endian), the
/// rest a zlib stream: where the reader decodes the stream, each inflater returns the same
/// bytes, or refuses them as longer than the chunk; none decodes what the reader refuses.
/// Returns 1 for a stream decoded.
///
/// # Panics
/// Where an inflater and the reader disagree.
pub fn zlib_inflate(data: &[u8]) -> usize {
    use std::io::Read;
    use zarrs_zlib_sized::{InflateError, Inflater};
    let Some((size, stream)) = data.split_first_chunk::<2>() else { return 0 };
    let size = usize::from(u16::from_le_bytes(*size));
    // The reader is bounded too, so that a fuzzed stream cannot inflate without end.
    let mut streamed = Vec::new();
    let reader = flate2::read::ZlibDecoder::new(stream).take(1 << 20).read_to_end(&mut streamed);
    let mut decoded_streams = 0;
    for &inflater in Inflater::ALL {
        match (&reader, inflater.inflate(stream, size)) {
            (Ok(_), Ok(decoded)) => {
                assert_eq!(decoded, streamed, "{inflater:?} decoded other bytes");
                decoded_streams = 1;
            }
            (Ok(_), Err(InflateError::TooLong { .. })) => assert!(
                streamed.len() > size,
                "{inflater:?} refused the stream as longer than {size} bytes, but the reader decodes {}",
                streamed.len()
            ),
            (Ok(_), Err(error)) => {
                panic!("the reader decodes {} bytes, {inflater:?} refuses: {error}", streamed.len())
            }
            (Err(_), Ok(decoded)) => {
                panic!("{inflater:?} decodes {} bytes of a stream the reader refuses", decoded.len())
            }
            (Err(_), Err(_)) => {}
        }
    }
    decoded_streams
}

/// Decode `stream` with the registered codec of `configuration` into at most
/// `size` bytes: `Some(bytes)`, or `None` for an error. A decoded chunk is
/// never larger than `size`.
///
/// # Panics
/// Where the codec decodes more than `size` bytes.
fn decode_with(configuration: &serde_json::Value, stream: &[u8], size: usize) -> Option<Vec<u8>> {
    use std::borrow::Cow;
    use zarrs::array::codec::api::{BytesRepresentation, Codec, CodecOptions};
    static CODECS: OnceLock<()> = OnceLock::new();
    CODECS.get_or_init(|| drop(zarrs_kerchunk_codecs::register_codecs()));
    let metadata: zarrs::metadata::v2::MetadataV2 = serde_json::from_value(configuration.clone()).ok()?;
    let Ok(Codec::BytesToBytes(codec)) = Codec::from_metadata(&metadata) else { return None };
    let representation = BytesRepresentation::FixedSize(size as u64);
    let decoded = codec.decode(Cow::Borrowed(stream), &representation, &CodecOptions::default()).ok()?;
    assert!(decoded.len() <= size, "{configuration}: {} bytes decoded into a chunk of {size}", decoded.len());
    Some(decoded.into_owned())
}

/// A GRIB2 message (after two bytes: the chunk's size in values, and
/// whether `var` is the data or a coordinate) through the `grib` codec:
/// values or an error, never a panic, never more than the chunk. Returns 1
/// for a message decoded.
///
/// # Panics
/// Where the codec panics or decodes more than the chunk.
pub fn grib_codec(data: &[u8]) -> usize {
    let Some((head, message)) = data.split_first_chunk::<2>() else { return 0 };
    // The high two bits pick the variable: a field's values (float64 or float32), or a projected
    // grid's latitudes or longitudes (grib/grid); the rest, the chunk's size in values.
    let values = usize::from(u16::from_le_bytes(*head) & 0x3FFF);
    let (var, dtype, item) = match head[1] >> 6 {
        0 => ("t", "float64", 8),
        2 => ("t", "float32", 4),
        1 => ("latitude", "float64", 8),
        _ => ("longitude", "float64", 8),
    };
    let configuration = serde_json::json!({"id": "grib", "var": var, "dtype": dtype});
    usize::from(decode_with(&configuration, message, values * item).is_some())
}

/// TIFF's codecs and filters: the first byte picks one and its layout, the
/// next two the chunk's size; the rest is the stream. Returns 1 for a chunk decoded.
///
/// # Panics
/// Where a codec panics or decodes more than the chunk.
pub fn tiff_codecs(data: &[u8]) -> usize {
    let Some((&[pick, low, high], stream)) = data.split_first_chunk::<3>() else { return 0 };
    let size = usize::from(u16::from_le_bytes([low, high]));
    let dtypes = ["|u1", "<u2", ">i2", "<u4", ">f4", "<f4", "<f8", ">f8"];
    let dtype = dtypes[usize::from(pick >> 5) % dtypes.len()];
    let item: usize = dtype[2..].parse().unwrap_or(1);
    // A shape of the chunk's size: rows of 8 values, or 4 with 2 samples.
    let values = size / item;
    let (shape, axis) = if pick & 0x10 == 0 { (vec![values / 8, 8], -1) } else { (vec![values / 8, 4, 2], -2) };
    let configuration = match pick & 0x0F {
        0 => serde_json::json!({"id": "imagecodecs_lzw"}),
        1 => serde_json::json!({"id": "imagecodecs_packbits"}),
        2 => serde_json::json!({"id": "imagecodecs_zstd"}),
        3 => serde_json::json!({"id": "lzma"}),
        4 => serde_json::json!({"id": "deflate"}),
        5 => serde_json::json!({"id": "imagecodecs_delta", "dtype": dtype, "shape": shape, "axis": axis, "dist": 1}),
        6 => {
            serde_json::json!({"id": "imagecodecs_floatpred", "dtype": dtype, "shape": shape, "axis": axis, "dist": 1})
        }
        7 => serde_json::json!({"id": "lzma", "format": 2}),
        8 | 10 => serde_json::json!({"id": "imagecodecs_jpeg", "colorspace_jpeg": if pick & 2 == 0 { 2 } else { 3 }}),
        9 => serde_json::json!({"id": "imagecodecs_webp"}),
        11 => serde_json::json!({"id": "imagecodecs_png"}),
        12 => serde_json::json!({"id": "imagecodecs_lerc"}),
        13 => serde_json::json!({"id": "imagecodecs_jpeg2k"}),
        14 => serde_json::json!({"id": "imagecodecs_jpegxl"}),
        15 if pick & 0x10 != 0 => {
            serde_json::json!({"id": "fill_hdf_strings", "dtype": "S16", "id_map": {"\u{1}": "one", "ab": "x"}})
        }
        _ => {
            serde_json::json!({"id": "fixedscaleoffset", "scale": 10, "offset": 273.15, "dtype": "<f8", "astype": dtype})
        }
    };
    usize::from(decode_with(&configuration, stream, size).is_some())
}

/// A builder reading only `s3://fuzz/`, from `memory`.
fn builder(memory: &Arc<InMemory>) -> ReferenceStoreBuilder {
    let store: Arc<dyn ObjectStore> = Arc::clone(memory) as Arc<dyn ObjectStore>;
    // A record file the parquet crate spins on fails after a second, well inside libFuzzer's timeout.
    let records = RecordCacheOptions::default().with_decode_deadline(std::time::Duration::from_secs(1));
    ReferenceStoreBuilder::new()
        .with_store(PREFIX, store)
        .with_allowed_prefixes([PREFIX])
        .with_limits(limits())
        .with_record_cache(records)
}

/// A store holding the target files of the conformance cases, by file name,
/// so that seeds from `tests/data` read real bytes.
fn targets() -> Arc<InMemory> {
    static FILES: OnceLock<Vec<(String, Vec<u8>)>> = OnceLock::new();
    let files = FILES.get_or_init(|| {
        let here = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
        let data = [here.join("tests/data"), here.join("../tests/data")].into_iter().find(|d| d.is_dir());
        let mut files = Vec::new();
        for case in data.iter().flat_map(|d| std::fs::read_dir(d).into_iter().flatten().flatten()) {
            for file in std::fs::read_dir(case.path()).into_iter().flatten().flatten() {
                let name = file.file_name().to_string_lossy().into_owned();
                let is_target = !name.starts_with("refs") && name != "case.json" && name != "expected";
                if is_target && file.path().is_file() && !files.iter().any(|(n, _)| *n == name) {
                    files.push((name, std::fs::read(file.path()).unwrap_or_default()));
                }
            }
        }
        files
    });
    let memory = Arc::new(InMemory::new());
    for (name, bytes) in files {
        put(&memory, name, bytes);
    }
    memory
}

fn put(memory: &InMemory, path: &str, bytes: &[u8]) {
    let path = Path::from(path);
    // InMemory's futures complete at once; no runtime is needed.
    futures::executor::block_on(memory.put(&path, bytes::Bytes::copy_from_slice(bytes).into()))
        .expect("an in-memory put cannot fail");
}

/// The arrays (folders holding a `.zarray`) among `keys`.
fn array_paths<'k>(keys: impl Iterator<Item = &'k str>) -> Vec<String> {
    keys.filter_map(|key| key.strip_suffix(".zarray"))
        .map(|folder| folder.trim_end_matches('/').to_owned())
        .filter(|path| !path.is_empty())
        .collect()
}

/// Every metadata key, then every small array, read; errors are expected,
/// panics are not. Returns how many arrays were read whole.
fn read_everything(store: &Arc<ReferenceStore>, arrays: &[String]) -> usize {
    let mut read = 0;
    for key in [".zgroup", ".zattrs", ".zmetadata"] {
        let _ = store.get(&StoreKey::new(key).expect("a valid key"));
    }
    for path in arrays.iter().take(8) {
        for name in [".zarray", ".zattrs"] {
            if let Ok(key) = StoreKey::new(format!("{path}/{name}")) {
                let _ = store.get(&key);
            }
        }
        let Ok(array) = Array::open(Arc::clone(store), &format!("/{path}")) else { continue };
        let elements: u64 = array.shape().iter().try_fold(1u64, |n, &d| n.checked_mul(d)).unwrap_or(u64::MAX);
        let size = array.data_type().fixed_size().map_or(u64::MAX, |s| s as u64);
        if elements.saturating_mul(size) <= MAX_ARRAY_BYTES
            && array.retrieve_array_subset::<ArrayBytes>(&array.subset_all()).is_ok()
        {
            read += 1;
        }
    }
    read
}

/// Two parses of one document hold the same references.
fn assert_same(a: &ReferenceSet, b: &ReferenceSet) {
    let entries = |set: &ReferenceSet| {
        let mut entries: Vec<String> = set.iter().map(|(key, reference)| format!("{key} {reference:?}")).collect();
        entries.sort();
        entries
    };
    assert_eq!(entries(a), entries(b), "whole and streamed parses differ");
}

/// The scanners [`scan_in_memory`] drives.
#[derive(Clone, Copy)]
enum Scanner {
    Netcdf3,
    Grib,
    Tiff,
    Dmrpp,
}

/// `data` scanned by `scanner` through an in-memory store, in blocks of 256
/// bytes so that a header spans several reads, with header and reference
/// limits small enough for fast executions. Never a panic, and every range
/// it references lies inside the file. Returns the number of references made.
///
/// # Panics
/// Where a reference lies past the end of the file.
fn scan_in_memory(data: &[u8], scanner: Scanner) -> usize {
    let memory = InMemory::new();
    let name = match scanner {
        Scanner::Netcdf3 => "data.nc",
        Scanner::Grib => "data.grib2",
        Scanner::Tiff => "data.tif",
        Scanner::Dmrpp => "data.h5.dmrpp",
    };
    let path = Path::from(name);
    let options = kerchunk_scan::ScanOptions::default()
        .with_block_bytes(256)
        .with_max_header_bytes(1 << 20)
        .with_max_references(100_000);
    futures::executor::block_on(async {
        memory.put(&path, data.to_vec().into()).await.expect("an in-memory put");
        let store: Arc<dyn ObjectStore> = Arc::new(memory);
        let result = match scanner {
            Scanner::Netcdf3 => kerchunk_scan::scan_netcdf3(&store, &path, name, &options).await,
            Scanner::Grib => kerchunk_scan::scan_grib(&store, &path, name, &options).await,
            Scanner::Tiff => kerchunk_scan::scan_tiff(&store, &path, name, &options).await,
            // Its references point into the file it describes, not into itself.
            Scanner::Dmrpp => {
                let scan = kerchunk_scan::scan_dmrpp(&store, &path, name, &options).await;
                return scan.map_or(0, |scan| scan.references.len());
            }
        };
        let Ok(scan) = result else { return 0 };
        for (key, reference) in scan.references.iter() {
            if let kerchunk::Reference::Range { offset, length, .. } = reference {
                assert!(offset.checked_add(length).is_some_and(|end| end <= data.len() as u64), "{key}");
            }
        }
        scan.references.len()
    })
}

/// A NetCDF-3 file scanned into references (`kerchunk_scan`): see [`scan_in_memory`].
///
/// # Panics
/// Where a reference lies past the end of the file.
pub fn netcdf3_scan(data: &[u8]) -> usize {
    scan_in_memory(data, Scanner::Netcdf3)
}

/// Finds the messages of `data` as a GRIB file through an in-memory store, in
/// blocks of 256 bytes, and parses it as NOAA and ECMWF inventories. Never a
/// panic and never a hang; every message lies inside the file, after the
/// one before. Returns the number of messages and entries found.
///
/// # Panics
/// Where a message lies past the end of the file or overlaps the one before.
pub fn grib_index(data: &[u8]) -> usize {
    let memory = InMemory::new();
    let path = Path::from("data.grib2");
    let options = kerchunk_scan::ScanOptions::default().with_block_bytes(256).with_max_references(100_000);
    let found = futures::executor::block_on(async {
        memory.put(&path, data.to_vec().into()).await.expect("an in-memory put");
        let store: Arc<dyn ObjectStore> = Arc::new(memory);
        kerchunk_scan::grib_messages(&store, &path, "data.grib2", &options).await.unwrap_or_default()
    });
    let mut end = 0;
    for message in &found {
        assert!(message.offset >= end && message.offset + message.length <= data.len() as u64, "{message:?}");
        end = message.offset + message.length;
    }
    let text = String::from_utf8_lossy(data);
    let size = data.len() as u64;
    let idx = kerchunk_scan::parse_noaa_idx(&text, "data.idx", size).unwrap_or_default();
    let index = kerchunk_scan::parse_ecmwf_index(&text, "data.index", size).unwrap_or_default();
    for entry in idx.iter().chain(&index) {
        assert!(entry.offset + entry.length <= size, "{entry:?}");
    }
    found.len() + idx.len() + index.len()
}

/// Scans `data` as a GRIB file into references: never a panic and never a
/// hang (see [`scan_in_memory`]).
///
/// # Panics
/// Where a reference lies past the end of the file.
pub fn grib_scan(data: &[u8]) -> usize {
    scan_in_memory(data, Scanner::Grib)
}

/// Scans `data` as a TIFF into references: never a panic, never a hang (an
/// IFD loop), memory bounded by the header limit whatever the counts
/// declared (see [`scan_in_memory`]).
///
/// # Panics
/// Where a reference lies past the end of the file.
pub fn tiff_scan(data: &[u8]) -> usize {
    scan_in_memory(data, Scanner::Tiff)
}

/// A DMR++ sidecar scanned into references (`kerchunk_scan::scan_dmrpp`; its data file absent,
/// so nothing is held): never a panic, an overflow or an allocation of what the document claims.
/// Returns the number of references made.
pub fn dmrpp_scan(data: &[u8]) -> usize {
    scan_in_memory(data, Scanner::Dmrpp)
}

/// Scans `data` as an HDF5 file through an in-memory store, in blocks of
/// 512 bytes. Never a panic (the scan catches the parser's and reports
/// [`kerchunk_scan::ScanError::Hdf5Panic`], which this target makes a
/// crash), and every range it references lies inside the file. Returns the
/// number of references made.
///
/// # Panics
/// Where the parser panicked, or a reference lies past the end of the file.
pub fn hdf5_scan(data: &[u8]) -> usize {
    static RUNTIME: std::sync::OnceLock<tokio::runtime::Runtime> = std::sync::OnceLock::new();
    let runtime = RUNTIME.get_or_init(|| {
        tokio::runtime::Builder::new_multi_thread().worker_threads(1).build().expect("a Tokio runtime")
    });
    let memory = InMemory::new();
    let path = Path::from("data.h5");
    let options = kerchunk_scan::ScanOptions::default()
        .with_block_bytes(512)
        .with_max_header_bytes(4 << 20)
        .with_max_references(100_000);
    runtime.block_on(async {
        memory.put(&path, data.to_vec().into()).await.expect("an in-memory put");
        let store: Arc<dyn ObjectStore> = Arc::new(memory);
        let scan = match kerchunk_scan::scan_hdf5(&store, &path, "data.h5", &options).await {
            Ok(scan) => scan,
            Err(kerchunk_scan::ScanError::Hdf5Panic { message, .. }) => panic!("the HDF5 parser panicked: {message}"),
            Err(_) => return 0,
        };
        for (key, reference) in scan.references.iter() {
            if let kerchunk::Reference::Range { offset, length, .. } = reference {
                assert!(offset.checked_add(length).is_some_and(|end| end <= data.len() as u64), "{key}");
            }
        }
        scan.references.len()
    })
}

/// The CF view (`zarrs_cf`) of an array whose attributes are the input's.
/// The first byte picks the stored type; the rest is lines of text: the
/// array's `.zattrs`, its coordinates' `.zattrs`, its `fill_value` (JSON),
/// then selections (`lat=50`, `time=2013-01-01`, ...). The array (4 x 5)
/// and its coordinates `x` and `y` hold fixed bytes. Every read and
/// selection must return a value or an error. Returns the reads that succeeded.
pub fn cf_view(data: &[u8]) -> usize {
    use base64::Engine as _;
    use zarrs_cf::{Selection, Variable};
    const TYPES: [(&str, usize); 10] = [
        ("<i2", 2),
        ("|i1", 1),
        ("|u1", 1),
        ("<f4", 4),
        ("<f8", 8),
        ("<i8", 8),
        ("<u8", 8),
        (">f4", 4),
        ("<f2", 2),
        ("|b1", 1),
    ];
    let Some((&pick, text)) = data.split_first() else { return 0 };
    let (dtype, size) = TYPES[usize::from(pick) % TYPES.len()];
    let text = String::from_utf8_lossy(text);
    let mut lines = text.split('\n');
    let (attributes, coordinate_attributes) = (lines.next().unwrap_or("{}"), lines.next().unwrap_or("{}"));
    let fill: serde_json::Value = serde_json::from_str(lines.next().unwrap_or("null")).unwrap_or_default();
    let bytes: Vec<u8> = (0..=255u8).cycle().take(20 * size).collect();
    let coordinates: Vec<u8> = [3.0f64, 2.0, 1.0, 0.5, -1.0].iter().flat_map(|v| v.to_le_bytes()).collect();
    let inline = |b: &[u8]| format!("base64:{}", base64::engine::general_purpose::STANDARD.encode(b));
    let zarray = |shape: &[u64], dtype: &str, fill: &serde_json::Value| {
        serde_json::json!({"shape": shape, "chunks": shape, "dtype": dtype, "fill_value": fill,
                           "compressor": null, "filters": null, "order": "C", "zarr_format": 2})
        .to_string()
    };
    let document = serde_json::json!({
        ".zgroup": "{\"zarr_format\": 2}",
        "a/.zarray": zarray(&[4, 5], dtype, &fill),
        "a/.zattrs": attributes,
        "a/0.0": inline(&bytes),
        "x/.zarray": zarray(&[4], "<f8", &serde_json::Value::Null),
        "x/.zattrs": coordinate_attributes,
        "x/0": inline(&coordinates[..32]),
        "y/.zarray": zarray(&[5], "<f8", &serde_json::Value::Null),
        "y/.zattrs": coordinate_attributes,
        "y/0": inline(&coordinates),
        "h/.zarray": zarray(&[], "<f8", &serde_json::Value::Null),
        "h/.zattrs": coordinate_attributes,
        "h/0": inline(&coordinates[..8]),
    });
    let Ok(set) = ReferenceSet::from_json(document.to_string().as_bytes(), &options()) else { return 0 };
    let Ok(store) = builder(&targets()).build(set, &format!("{PREFIX}refs.json")) else { return 0 };
    let Ok(variable) = Variable::open(Arc::new(store), "/a") else { return 0 };
    let whole = [0..4, 0..5];
    let mut read = usize::from(variable.read(&whole).is_ok());
    read += usize::from(variable.read_f32(&whole).is_ok());
    read += usize::from(variable.read_times(&whole).is_ok());
    let _ = variable.decoded_attributes();
    for coordinate in (0..2).filter_map(|d| variable.coordinate(d)).chain(variable.auxiliary_coordinates()) {
        let ranges: Vec<_> = coordinate.shape().iter().map(|&n| 0..n).collect();
        read += usize::from(coordinate.read(&ranges).is_ok());
        read += usize::from(coordinate.read_times(&ranges).is_ok());
    }
    for line in lines.take(8) {
        if let Ok(selection) = line.parse::<Selection>()
            && let Ok(ranges) = variable.select(&[selection])
        {
            read += usize::from(variable.read(&ranges).is_ok());
        }
    }
    read
}
