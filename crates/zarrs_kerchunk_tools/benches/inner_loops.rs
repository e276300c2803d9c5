//! Criterion benches of the inner loops behind the `refbench` workloads:
//! JSON parsing (integers eight digits at a time), `gen` expansion, key
//! lookup, parquet record decoding, range coalescing with slicing, and the
//! read-ahead's following of a C-order read. Everything is in memory, so these
//! measure the crate's own work, not I/O.
//!
//! ```text
//! cargo bench --bench inner_loops
//! ```
#![allow(missing_docs)]

use std::hint::black_box;
use std::sync::Arc;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use kerchunk::{ParquetWriteOptions, ParseOptions, ReferenceSet};
use object_store::ObjectStoreExt as _;
use object_store::memory::InMemory;
use zarrs_kerchunk::{AsyncReferenceStore, ReferenceStoreBuilder, write_parquet_async};
use zarrs_storage::{ReadableStorageTraits as _, StoreKey};

/// References per document: time steps of 10 x 10 chunks, as in `make_synthetic.py`.
const N: u64 = 100_000;
const STEPS: u64 = N / 100;
const CHUNK: u64 = 262_144;
const SMALL_CHUNK: u64 = 4096;

fn zarray() -> String {
    format!(
        r#"{{"chunks":[1,256,256],"compressor":null,"dtype":"<f4","fill_value":null,"filters":null,"order":"C","shape":[{STEPS},2560,2560],"zarr_format":2}}"#
    )
}

/// A version 0 document like `refs_1e5_v0.json`, pointing at `url` with chunks of `chunk` bytes.
fn v0_document(url: &str, chunk: u64) -> String {
    let mut refs = serde_json::Map::new();
    refs.insert(".zgroup".into(), r#"{"zarr_format":2}"#.into());
    refs.insert("var/.zarray".into(), zarray().into());
    for i in 0..N {
        let (t, y, x) = (i / 100, i / 10 % 10, i % 10);
        refs.insert(format!("var/{t}.{y}.{x}"), serde_json::json!([url, (i % 4096) * chunk, chunk]));
    }
    serde_json::Value::Object(refs).to_string()
}

/// The same references as one `gen` entry, like `refs_1e5_v1.json`.
fn v1_document() -> String {
    serde_json::json!({
        "version": 1,
        "templates": {"u": "/data/src"},
        "refs": {".zgroup": r#"{"zarr_format":2}"#, "var/.zarray": zarray()},
        "gen": [{
            "key": "var/{{t}}.{{y}}.{{x}}",
            "url": format!("{{{{u}}}}/part-{{{{(t*8)//{STEPS}}}}}.bin"),
            "offset": "{{((t*100+y*10+x) % 4096) * 262144}}",
            "length": "262144",
            "dimensions": {"t": {"stop": STEPS}, "y": {"stop": 10}, "x": {"stop": 10}},
        }],
    })
    .to_string()
}

/// 1000 chunk keys spread over the set (a multiplicative hash of 0..1000).
fn sample_keys() -> Vec<String> {
    (0..1000u64)
        .map(|i| i.wrapping_mul(2_654_435_761) % N)
        .map(|i| format!("var/{}.{}.{}", i / 100, i / 10 % 10, i % 10))
        .collect()
}

fn parse(c: &mut Criterion) {
    let mut group = c.benchmark_group("parse");
    group.throughput(Throughput::Elements(N));
    let v0 = v0_document("/data/src/part-0.bin", CHUNK);
    group.bench_function("json_v0_1e5", |b| {
        b.iter(|| ReferenceSet::from_json(black_box(v0.as_bytes()), &ParseOptions::default()).unwrap());
    });
    // The reader a local or fetched document goes through: members of the common
    // shape are read without serde (`parse/json/fast.rs`).
    group.bench_function("json_v0_1e5_streamed", |b| {
        b.iter(|| ReferenceSet::from_reader(black_box(v0.as_bytes()), &ParseOptions::default()).unwrap());
    });
    let v1 = v1_document();
    group.bench_function("gen_1e5", |b| {
        b.iter(|| ReferenceSet::from_json(black_box(v1.as_bytes()), &ParseOptions::default()).unwrap());
    });
    group.finish();
}

fn lookup(c: &mut Criterion) {
    let set = ReferenceSet::from_json(v0_document("/data/src/part-0.bin", CHUNK).as_bytes(), &ParseOptions::default())
        .unwrap();
    let keys = sample_keys();
    let mut group = c.benchmark_group("lookup");
    group.throughput(Throughput::Elements(keys.len() as u64));
    group.bench_function("get_1000_chunk_keys", |b| {
        b.iter(|| keys.iter().filter(|k| set.get(black_box(k)).is_some()).count());
    });
    group.bench_function("get_1000_missing_keys", |b| {
        b.iter(|| keys.iter().filter(|k| set.get(black_box(&format!("{k}x"))).is_some()).count());
    });
    group.finish();
}

/// An in-memory bucket holding a v0 document at `s3://bucket/refs.json` whose chunks are
/// 4 KiB ranges of `s3://bucket/data.bin` (16 MiB: 4096 chunks).
fn bucket(runtime: &tokio::runtime::Runtime) -> (Arc<InMemory>, ReferenceStoreBuilder) {
    let memory = Arc::new(InMemory::new());
    runtime.block_on(async {
        let doc = v0_document("s3://bucket/data.bin", SMALL_CHUNK);
        memory.put(&"refs.json".into(), doc.into_bytes().into()).await.unwrap();
        let data: Vec<u8> = (0..4096 * SMALL_CHUNK).map(|i| (i % 251) as u8).collect();
        memory.put(&"data.bin".into(), data.into()).await.unwrap();
    });
    (Arc::clone(&memory), ReferenceStoreBuilder::new().with_store("s3://bucket/", memory))
}

fn parquet(c: &mut Criterion) {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let (memory, builder) = bucket(&runtime);
    runtime.block_on(async {
        let json: AsyncReferenceStore = builder.open_async("s3://bucket/refs.json").await.unwrap();
        let options = ParquetWriteOptions::default().with_record_size(N);
        write_parquet_async(json.source().as_ref(), memory.as_ref(), &"refs.parq".into(), &options).await.unwrap();
    });
    let key = StoreKey::new("var/500.5.5").unwrap();
    let mut group = c.benchmark_group("parquet");
    group.throughput(Throughput::Elements(N));
    // Opening reads `.zmetadata`; the first lookup reads and decodes the one record of N rows.
    group.bench_function("open_and_decode_record_1e5", |b| {
        b.iter(|| {
            runtime.block_on(async {
                let store = builder.open_async("s3://bucket/refs.parq").await.unwrap();
                store.reference(&key).await.unwrap().unwrap()
            })
        });
    });
    group.finish();
}

fn coalescing(c: &mut Criterion) {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let (_, builder) = bucket(&runtime);
    let store = runtime.block_on(builder.open_async("s3://bucket/refs.json")).unwrap();
    // 4096 chunks laid end to end in one file: planned, merged into blocks, fetched, sliced.
    let keys: Vec<StoreKey> =
        (0..4096u64).map(|i| StoreKey::new(format!("var/{}.{}.{}", i / 100, i / 10 % 10, i % 10)).unwrap()).collect();
    let mut group = c.benchmark_group("fetch");
    group.throughput(Throughput::Elements(keys.len() as u64));
    group.sample_size(20);
    group.bench_function("prefetch_4096_adjacent_ranges", |b| {
        b.iter(|| {
            runtime.block_on(store.prefetch(keys.iter().cloned())).unwrap();
            store.clear_prefetched();
        });
    });
    group.finish();
}

/// 4096 chunks read one `get` at a time in C order, as one rayon thread of a
/// whole-array read asks for them, with the read-ahead following the stream
/// and without it. The bucket is in memory, so there is no latency to hide:
/// with read-ahead the time is its own work per chunk (stream lookup, window
/// planning, handing over a held chunk) plus a few batched reads; without it,
/// one hop to the I/O runtime and back per chunk.
fn read_ahead(c: &mut Criterion) {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let (_, builder) = bucket(&runtime);
    let keys: Vec<StoreKey> =
        (0..4096u64).map(|i| StoreKey::new(format!("var/{}.{}.{}", i / 100, i / 10 % 10, i % 10)).unwrap()).collect();
    let mut group = c.benchmark_group("read_ahead");
    group.throughput(Throughput::Elements(keys.len() as u64));
    group.sample_size(20);
    for (name, budget) in [("get_4096_in_order", zarrs_kerchunk::DEFAULT_READ_AHEAD), ("get_4096_in_order_off", 0)] {
        let store = builder.clone().with_read_ahead(budget).open("s3://bucket/refs.json").unwrap();
        // Each pass starts again at the first chunk, which continues no stream: a new one.
        group.bench_function(name, |b| {
            b.iter(|| keys.iter().map(|key| store.get(key).unwrap().map_or(0, |bytes| bytes.len())).sum::<usize>());
        });
    }
    group.finish();
}

/// One 256 KiB chunk like the benchmark corpus' zlib chunks (a smooth field quantised to 0.5,
/// level 1, about 4:1), inflated as zarrs' codec does (a reader into a growing buffer) and by
/// each inflater of the sized codec (one call into a buffer of the chunk's size).
fn zlib(c: &mut Criterion) {
    use std::io::{Read, Write};
    #[expect(clippy::cast_precision_loss, reason = "a small index")]
    let values: Vec<u8> = (0..65_536)
        .flat_map(|i| {
            let (y, x) = ((i / 256) as f32, (i % 256) as f32);
            (((y / 9.0).sin() * (x / 13.0).cos() * 80.0).round() * 0.5).to_le_bytes()
        })
        .collect();
    let mut deflate = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::new(1));
    deflate.write_all(&values).unwrap();
    let encoded = deflate.finish().unwrap();
    let mut group = c.benchmark_group("zlib");
    group.throughput(Throughput::Bytes(values.len() as u64));
    group.bench_function("inflate_256k_as_zarrs", |b| {
        b.iter(|| {
            let mut decoded = Vec::new();
            flate2::read::ZlibDecoder::new(&encoded[..]).read_to_end(&mut decoded).unwrap();
            decoded
        });
    });
    for &inflater in zarrs_zlib_sized::Inflater::ALL {
        let name = match inflater {
            zarrs_zlib_sized::Inflater::ZlibRs => "inflate_256k_sized",
            _ => "inflate_256k_sized_libdeflate",
        };
        group.bench_function(name, |b| b.iter(|| inflater.inflate(&encoded, values.len()).unwrap()));
    }
    group.finish();
}

criterion_group!(benches, parse, lookup, parquet, coalescing, read_ahead, zlib);
criterion_main!(benches);
