//! The benchmark driver: the workloads of `../shared/bench/peer_bench.py`, run
//! through this crate, one workload per process, printing one JSON line with
//! in-process timings (and the peak RSS), so that both can be timed side by
//! side as whole processes, for example with `peer_bench.py repeat`:
//!
//! ```sh
//! cargo build --release --example refbench
//! python peer_bench.py repeat -n 5 -- target/release/examples/refbench open-parquet 1e6
//! python peer_bench.py repeat -n 5 -- open-parquet 1e6
//! ```
//!
//! Workloads (the corpus is made by `make_synthetic.py`, default `/tmp/refbench`):
//!
//! - `load-json N`: open `refs_1eK_v0.json` (N = 1e4 to 1e7, optional `z` suffix) and read the last chunk key;
//! - `load-v1 N`: the same for `refs_1eK_v1.json` (templates and one `gen` entry);
//! - `open-parquet N [--lookups L]`: open `refs_1eK.parq` and look up L (100) random chunk references;
//! - `read-full [--http] [--prefetch]`, `read-full-zlib [--http] [--prefetch]`: read the whole 1 GiB
//!   array `data` through zarrs (`--http`: the `*_http.json` references, served by
//!   `peer_bench.py serve-start`; `--prefetch`: read every chunk's bytes first with
//!   `ReferenceStore::prefetch`, in a few large concurrent reads: this pays off when latency
//!   or decoding dominates, while for 1 GiB of uncompressed local data, holding every chunk's
//!   bytes first costs as much in fresh-page faults as it saves);
//! - `read-random K [--zlib] [--http]`: K single-chunk reads of random time steps;
//! - with `read-full*` and `read-random`: `--read-ahead BYTES` sets the store's read-ahead
//!   budget (0: off; default `DEFAULT_READ_AHEAD`), and `--async` (read-full only) reads through
//!   `AsyncReferenceStore` and zarrs' async API on a tokio runtime;
//! - with any workload, `--zlib-codec`: decode zlib chunks with
//!   `zarrs_zlib_sized::SizedZlibCodec` (`register_zlib_codec`) instead of zarrs' own,
//!   with its default inflater, or `--inflater zlib-rs|libdeflate` (feature `libdeflate`);
//! - `inflate-limit [--threads T]`: the zlib chunks of `data_z.bin`, in memory, inflated on T
//!   threads (2) with no I/O, by libdeflate and by zlib-rs into a reused buffer, and by zlib-rs
//!   as zarrs' zlib codec calls it (a `flate2` reader into an empty `Vec`): the decode limit that
//!   `read-full-zlib` is measured against (best of three passes each);
//! - `read-small K [--no-prefetch]`: the first K rows of the 4 KiB-chunked array of
//!   `refs_small_http.json`, through the delaying proxy of `benches/tools/small_chunks.py`
//!   (which also counts the requests), with `ReferenceStore::prefetch_region` first.
//!
//! The random keys come from `SplitMix64` seeded with 42, not Python's Mersenne
//! Twister, so the keys differ from the peer's while the workload (L uniform
//! keys over N) is the same. Every reference is checked against the value
//! `make_synthetic.py` wrote; `bad` counts mismatches.

use std::error::Error;
use std::time::Instant;

use std::sync::Arc;

use kerchunk::OwnedReference;
use zarrs::array::{Array, ArrayBytes};
use zarrs_kerchunk::{ReferenceStore, ReferenceStoreBuilder};
use zarrs_storage::{ReadableStorageTraits, StoreKey};

const NT: u64 = 4096;
const CHUNK_BYTES: u64 = 262_144;
const MIB: f64 = 1_048_576.0;

fn main() -> std::process::ExitCode {
    let start = Instant::now();
    match run(start) {
        Ok(line) => {
            println!("{line}");
            std::process::ExitCode::SUCCESS
        }
        Err(error) => {
            eprintln!("error: {error}");
            std::process::ExitCode::FAILURE
        }
    }
}

fn run(start: Instant) -> Result<serde_json::Value, Box<dyn Error>> {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let mut root = "/tmp/refbench".to_owned();
    if let Some(i) = args.iter().position(|a| a == "--root") {
        args.remove(i);
        root = args.get(i).cloned().ok_or("--root needs a folder")?;
        args.remove(i);
    }
    let root = root.trim_end_matches('/').to_owned();
    let option = |name: &str, default: u64| -> Result<u64, Box<dyn Error>> {
        match args.iter().position(|a| a == name) {
            Some(i) => Ok(args.get(i + 1).ok_or(format!("{name} needs a value"))?.parse()?),
            None => Ok(default),
        }
    };
    let flag = |name: &str| args.iter().any(|a| a == name);
    let data = || -> Result<Data, Box<dyn Error>> {
        Ok(Data {
            zlib: false,
            http: flag("--http"),
            prefetch: flag("--prefetch"),
            read_ahead: option("--read-ahead", zarrs_kerchunk::DEFAULT_READ_AHEAD)?,
        })
    };
    // Opt in to the sized zlib codec for every array this process opens.
    let _zlib =
        if flag("--zlib-codec") { Some(zarrs_zlib_sized::register_zlib_codec_with(inflater(&args)?)) } else { None };
    let workload = args.first().ok_or("usage: refbench [--root DIR] <workload> [args]; see the source's header")?;
    let n = || parse_n(args.get(1).ok_or("the workload needs N (1e4 to 1e7)")?);
    let mut line = match workload.as_str() {
        "load-json" => load_json(&root, n()?, 0)?,
        "load-v1" => load_json(&root, n()?, 1)?,
        "open-parquet" => open_parquet(&root, n()?, option("--lookups", 100)?)?,
        "read-full" | "read-full-zlib" => {
            let data = Data { zlib: workload.ends_with("zlib"), ..data()? };
            if flag("--async") { read_full_async(&root, &data)? } else { read_full(&root, &data)? }
        }
        "read-random" => {
            let k = args.get(1).ok_or("read-random needs K")?.parse()?;
            read_random(&root, k, &Data { zlib: flag("--zlib"), ..data()? })?
        }
        "inflate-limit" => inflate_limit(&root, option("--threads", 2)?)?,
        "read-small" => {
            let k = args.get(1).ok_or("read-small needs K")?.parse()?;
            read_small(&root, k, !flag("--no-prefetch"))?
        }
        other => return Err(format!("unknown workload {other:?}").into()),
    };
    line["maxrss_mib"] = serde_json::json!(peak_rss_mib());
    line["process_s"] = serde_json::json!(round(start.elapsed().as_secs_f64()));
    Ok(line)
}

/// `1e6` -> (1000000, ""); `1e6z` -> (1000000, "z").
fn parse_n(text: &str) -> Result<(u64, &'static str), Box<dyn Error>> {
    let z = if text.ends_with('z') { "z" } else { "" };
    #[expect(clippy::cast_possible_truncation, clippy::cast_sign_loss, reason = "1e4..1e7")]
    let n = text.trim_end_matches('z').parse::<f64>()? as u64;
    if ![10_000, 100_000, 1_000_000, 10_000_000].contains(&n) {
        return Err(format!("N must be 1e4, 1e5, 1e6 or 1e7 (optionally suffixed z), got {text}").into());
    }
    Ok((n, z))
}

fn exponent(n: u64) -> usize {
    n.to_string().len() - 1
}

/// The key of chunk `i` of the big arrays, and its time index `t` and the number of time steps.
fn big_key(n: u64, i: u64) -> (String, u64, u64) {
    let steps = n / 100;
    let (t, r) = (i / 100, i % 100);
    (format!("var/{t}.{}.{}", r / 10, r % 10), t, steps)
}

/// The reference `make_synthetic.py` wrote for chunk `i` (regular sets; `None` for the zlib variant's offsets).
fn expected(root: &str, n: u64, i: u64, z: &str) -> (String, Option<(u64, u64)>) {
    let (_, t, steps) = big_key(n, i);
    let part = t * 8 / steps;
    if z.is_empty() {
        (format!("{root}/src/part-{part}.bin"), Some(((i % NT) * CHUNK_BYTES, CHUNK_BYTES)))
    } else {
        (format!("{root}/src/zpart-{part}.bin"), None)
    }
}

fn matches(reference: Option<&OwnedReference>, want: &(String, Option<(u64, u64)>)) -> bool {
    match reference {
        Some(OwnedReference::Range { url: Some(url), offset, length }) => {
            **url == *want.0 && want.1.is_none_or(|range| range == (*offset, *length))
        }
        _ => false,
    }
}

#[expect(clippy::cast_precision_loss, reason = "byte counts far below 2^52")]
fn load_json(root: &str, (n, z): (u64, &str), version: u8) -> Result<serde_json::Value, Box<dyn Error>> {
    if version == 1 && !z.is_empty() {
        return Err("the irregular (z) sets have no v1 form".into());
    }
    let path = format!("{root}/refs_1e{}{z}_v{version}.json", exponent(n));
    let t0 = Instant::now();
    let store = ReferenceStore::open(&path)?;
    let open_s = t0.elapsed().as_secs_f64();
    let (key, _, _) = big_key(n, n - 1);
    let t1 = Instant::now();
    let data = store.get(&StoreKey::new(key.clone())?)?.ok_or("the last key is missing")?;
    let want = expected(root, n, n - 1, z).1.map_or(data.len() as u64, |(_, length)| length);
    let memory = store.references().map_or(0, kerchunk::ReferenceSet::memory_size);
    Ok(serde_json::json!({
        "workload": format!("{}{}", if version == 0 { "load-json" } else { "load-v1" }, if z.is_empty() { "" } else { "-z" }),
        "n": n,
        "open_s": round(open_s),
        "touch_s": round(t1.elapsed().as_secs_f64()),
        "nrefs": store.references().map_or(0, kerchunk::ReferenceSet::len),
        // What the references take in memory, and per chunk reference.
        "table_mib": round(memory as f64 / MIB),
        "bytes_per_ref": round(memory as f64 / n as f64),
        "touched": key,
        "ok": data.len() as u64 == want,
    }))
}

fn open_parquet(root: &str, (n, z): (u64, &str), lookups: u64) -> Result<serde_json::Value, Box<dyn Error>> {
    let path = format!("{root}/refs_1e{}{z}.parq", exponent(n));
    let t0 = Instant::now();
    let store = ReferenceStore::open(&path)?;
    let zarray = store.get(&StoreKey::new("var/.zarray")?)?.ok_or("no var/.zarray")?;
    let zarray: serde_json::Value = serde_json::from_slice(&zarray)?;
    let open_s = t0.elapsed().as_secs_f64();
    let mut random = SplitMix64(42);
    let indices: Vec<u64> = (0..lookups).map(|_| random.below(n)).collect();
    let t1 = Instant::now();
    let mut first = None;
    let mut references = Vec::with_capacity(indices.len());
    for &i in &indices {
        references.push(store.reference(&StoreKey::new(big_key(n, i).0)?)?);
        first.get_or_insert_with(Instant::now);
    }
    let lookups_done = t1.elapsed().as_secs_f64();
    let first = first.unwrap_or(t1);
    let bad = indices.iter().zip(&references).filter(|(i, r)| !matches(r.as_ref(), &expected(root, n, **i, z))).count();
    let records: std::collections::BTreeSet<u64> = indices.iter().map(|i| i / 100_000).collect();
    Ok(serde_json::json!({
        "workload": format!("open-parquet{}", if z.is_empty() { "" } else { "-z" }),
        "n": n,
        "engine": "zarrs_kerchunk",
        "open_s": round(open_s),
        "lookups": lookups,
        "lookup_s": round(lookups_done),
        "first_lookup_s": round((first - t1).as_secs_f64()),
        "rest_lookup_s": round(first.elapsed().as_secs_f64()),
        "records_touched": records.len(),
        "bad": bad,
        "shape": zarray["shape"],
    }))
}

/// Which references of the 1 GiB array to read, and how.
struct Data {
    zlib: bool,
    http: bool,
    /// Prefetch every chunk first (`--prefetch`).
    prefetch: bool,
    /// The store's read-ahead budget in bytes (`--read-ahead`, 0: off).
    read_ahead: u64,
}

impl Data {
    fn references(&self, root: &str) -> String {
        let name = if self.zlib { "refs_z_v0" } else { "refs_v0" };
        format!("{root}/{name}{}.json", if self.http { "_http" } else { "" })
    }

    fn builder(&self) -> ReferenceStoreBuilder {
        ReferenceStoreBuilder::new().with_read_ahead(self.read_ahead)
    }

    fn workload(&self, name: &str, asynchronous: bool) -> String {
        let mut workload = name.to_owned();
        for (on, suffix) in [
            (self.zlib, "-zlib"),
            (self.http, "-http"),
            (self.prefetch, "-prefetch"),
            (asynchronous, "-async"),
            (self.read_ahead == 0, "-no-read-ahead"),
        ] {
            if on {
                workload.push_str(suffix);
            }
        }
        workload
    }
}

/// The store and array `data` of the 1 GiB array's references.
fn open_data(root: &str, data: &Data) -> Result<(Arc<ReferenceStore>, Array<ReferenceStore>), Box<dyn Error>> {
    let store = Arc::new(data.builder().open(&data.references(root))?);
    Ok((Arc::clone(&store), Array::open(store, "/data")?))
}

fn read_full(root: &str, data: &Data) -> Result<serde_json::Value, Box<dyn Error>> {
    let t0 = Instant::now();
    let (store, array) = open_data(root, data)?;
    let t1 = Instant::now();
    if data.prefetch {
        // Every chunk's bytes in a few large concurrent reads, before zarrs decodes from memory.
        store.prefetch_region("/data", &array.subset_all().to_ranges())?;
    }
    let prefetch_s = t1.elapsed().as_secs_f64();
    // The decoded bytes as zarrs returns them (one allocation, as the peer's `arr[:]`).
    let decoded: ArrayBytes = array.retrieve_array_subset(&array.subset_all())?;
    let read_s = t1.elapsed().as_secs_f64();
    let times = FullTimes { open: t1.duration_since(t0).as_secs_f64(), prefetch: prefetch_s, read: read_s };
    Ok(full_line(&decoded.into_fixed()?, &data.workload("read-full", false), &times))
}

/// [`read_full`] through the async store and zarrs' async API, on a tokio runtime.
fn read_full_async(root: &str, data: &Data) -> Result<serde_json::Value, Box<dyn Error>> {
    let runtime = tokio::runtime::Runtime::new()?;
    runtime.block_on(async {
        let t0 = Instant::now();
        let store = Arc::new(data.builder().open_async(&data.references(root)).await?);
        let array = Array::async_open(Arc::clone(&store), "/data").await?;
        let t1 = Instant::now();
        if data.prefetch {
            store.prefetch_region("/data", &array.subset_all().to_ranges()).await?;
        }
        let prefetch_s = t1.elapsed().as_secs_f64();
        let decoded: ArrayBytes = array.async_retrieve_array_subset(&array.subset_all()).await?;
        let read_s = t1.elapsed().as_secs_f64();
        let times = FullTimes { open: t1.duration_since(t0).as_secs_f64(), prefetch: prefetch_s, read: read_s };
        Ok(full_line(&decoded.into_fixed()?, &data.workload("read-full", true), &times))
    })
}

/// The times of a whole read: opening, prefetching (if asked) and reading, in seconds.
struct FullTimes {
    open: f64,
    prefetch: f64,
    read: f64,
}

/// The line of a whole read of the array, decoded into `bytes`: its times, checks and rate.
fn full_line(bytes: &[u8], workload: &str, times: &FullTimes) -> serde_json::Value {
    let read_s = times.read;
    let value = |i: usize| f32::from_le_bytes(bytes[i * 4..i * 4 + 4].try_into().expect("4 bytes"));
    assert_eq!(bytes.len(), 4096 * 256 * 256 * 4);
    // The peer's checksum: out[::97, ::31, ::17].sum().
    let mut checksum = 0.0f64;
    for t in (0..4096).step_by(97) {
        for y in (0..256).step_by(31) {
            for x in (0..256).step_by(17) {
                checksum += f64::from(value((t * 256 + y) * 256 + x));
            }
        }
    }
    #[expect(clippy::cast_precision_loss, reason = "a rate")]
    let mb_s = bytes.len() as f64 / read_s / 1e6;
    serde_json::json!({
        "workload": workload,
        "open_s": round(times.open),
        "prefetch_s": round(times.prefetch),
        "read_s": round(read_s),
        "mb_s": (mb_s * 10.0).round() / 10.0,
        "bytes": bytes.len(),
        "checksum": checksum,
    })
}

/// The inflater `--inflater` names (`zlib-rs`, `libdeflate`), or the codec's default.
fn inflater(args: &[String]) -> Result<zarrs_zlib_sized::Inflater, Box<dyn Error>> {
    use zarrs_zlib_sized::Inflater;
    let Some(i) = args.iter().position(|a| a == "--inflater") else { return Ok(Inflater::default()) };
    match args.get(i + 1).map(String::as_str) {
        Some("zlib-rs") => Ok(Inflater::ZlibRs),
        Some("libdeflate") => Ok(Inflater::Libdeflate),
        other => Err(format!("--inflater {other:?}: zlib-rs, or libdeflate").into()),
    }
}

/// How one inflater decodes a chunk into `out` (exactly its decoded length); returns the bytes written.
type Inflate = fn(&[u8], &mut [u8]) -> Result<usize, BoxError>;

/// An error from an inflater's worker thread.
type BoxError = Box<dyn Error + Send + Sync>;

fn inflate_limit(root: &str, threads: u64) -> Result<serde_json::Value, Box<dyn Error>> {
    let store = ReferenceStore::open(&format!("{root}/refs_z_v0.json"))?;
    let file = std::fs::read(format!("{root}/data_z.bin"))?;
    let mut chunks = Vec::new();
    for t in 0..NT {
        let key = StoreKey::new(format!("data/{t}.0.0"))?;
        let Some(OwnedReference::Range { offset, length, .. }) = store.reference(&key)? else {
            return Err(format!("{key} is not a range reference").into());
        };
        let range = usize::try_from(offset)?..usize::try_from(offset + length)?;
        chunks.push(file.get(range).ok_or("a chunk past the end of data_z.bin")?);
    }
    let libdeflate: Inflate = |chunk, out| Ok(libdeflater::Decompressor::new().zlib_decompress(chunk, out)?);
    let zlib_rs: Inflate = |chunk, out| {
        let mut inflate = flate2::Decompress::new(true);
        inflate.decompress(chunk, out, flate2::FlushDecompress::Finish)?;
        Ok(usize::try_from(inflate.total_out())?)
    };
    let zlib_rs_as_zarrs: Inflate = |chunk, out| {
        let mut decoded = Vec::new();
        std::io::Read::read_to_end(&mut flate2::read::ZlibDecoder::new(std::io::Cursor::new(chunk)), &mut decoded)?;
        out.copy_from_slice(&decoded);
        Ok(decoded.len())
    };
    #[expect(clippy::cast_precision_loss, reason = "a size in MiB")]
    let mut line = serde_json::json!({"workload": "inflate-limit", "threads": threads,
        "compressed_mib": round(file.len() as f64 / MIB)});
    let mut cases = vec![
        ("libdeflate", libdeflate, false),
        ("zlib_rs", zlib_rs, false),
        ("libdeflate_into_new_array", libdeflate, true),
        ("zlib_rs_into_new_array", zlib_rs, true),
        ("zlib_rs_as_zarrs_into_new_array", zlib_rs_as_zarrs, true),
    ];
    cases.extend(codec_cases());
    for (name, inflate, into_new_array) in cases {
        let mut best = f64::INFINITY;
        for _ in 0..3 {
            best = best.min(inflate_all(&chunks, threads, inflate, into_new_array)?);
        }
        line[format!("{name}_s")] = round(best).into();
    }
    Ok(line)
}

/// The sized codec's own inflaters, as zarrs' codec chain calls them: each chunk decoded
/// into a new buffer of its size, which zarrs then copies into its place.
fn codec_cases() -> Vec<(&'static str, Inflate, bool)> {
    use zarrs_zlib_sized::Inflater;
    fn as_codec(inflater: Inflater, chunk: &[u8], out: &mut [u8]) -> Result<usize, BoxError> {
        let decoded = inflater.inflate(chunk, out.len())?;
        out.get_mut(..decoded.len()).ok_or("decoded too much")?.copy_from_slice(&decoded);
        Ok(decoded.len())
    }
    let codec_zlib_rs: Inflate = |chunk, out| as_codec(Inflater::ZlibRs, chunk, out);
    let codec_libdeflate: Inflate = |chunk, out| as_codec(Inflater::Libdeflate, chunk, out);
    vec![
        ("codec_zlib_rs_into_new_array", codec_zlib_rs, true),
        ("codec_libdeflate_into_new_array", codec_libdeflate, true),
    ]
}

/// Seconds to inflate every chunk with `inflate` on `threads` threads taking
/// chunks in turn: into a buffer per thread, or (`into_new_array`) each into
/// its place in a new zeroed 1 GiB array, whose pages are first touched then.
fn inflate_all(chunks: &[&[u8]], threads: u64, inflate: Inflate, into_new_array: bool) -> Result<f64, Box<dyn Error>> {
    #[expect(clippy::cast_possible_truncation, reason = "a chunk in memory")]
    let chunk_bytes = CHUNK_BYTES as usize;
    let start = Instant::now();
    let mut array = if into_new_array { vec![0u8; chunks.len() * chunk_bytes] } else { Vec::new() };
    let places = std::sync::Mutex::new(array.chunks_mut(chunk_bytes).enumerate());
    let next = std::sync::atomic::AtomicUsize::new(0);
    std::thread::scope(|scope| {
        let workers: Vec<_> = (0..threads)
            .map(|_| {
                scope.spawn(|| -> Result<(), BoxError> {
                    let mut buffer = vec![0u8; chunk_bytes];
                    loop {
                        let (i, out) = if into_new_array {
                            let Some(place) = places.lock().map_err(|_| "poisoned")?.next() else { return Ok(()) };
                            place
                        } else {
                            (next.fetch_add(1, std::sync::atomic::Ordering::Relaxed), &mut buffer[..])
                        };
                        let Some(chunk) = chunks.get(i) else { return Ok(()) };
                        let written = inflate(chunk, out)?;
                        if written != chunk_bytes {
                            return Err(format!("chunk {i}: {written} bytes decoded").into());
                        }
                    }
                })
            })
            .collect();
        workers.into_iter().try_for_each(|w| w.join().map_err(|_| BoxError::from("a worker panicked"))?)
    })
    .map_err(|e| -> Box<dyn Error> { e })?;
    let seconds = start.elapsed().as_secs_f64();
    drop(array);
    Ok(seconds)
}

/// The first `k` rows of `small` (4 KiB chunks over the delaying proxy), checked against `data.bin`.
fn read_small(root: &str, k: u64, prefetch: bool) -> Result<serde_json::Value, Box<dyn Error>> {
    const COLS: u64 = 1024;
    let t0 = Instant::now();
    let store = Arc::new(ReferenceStore::open(&format!("{root}/refs_small_http.json"))?);
    let array = Array::open(store.clone(), "/small")?;
    let t1 = Instant::now();
    let region = [0..k, 0..COLS];
    if prefetch {
        store.prefetch_region("/small", &region)?;
    }
    let prefetch_s = t1.elapsed().as_secs_f64();
    let decoded: ArrayBytes = array.retrieve_array_subset(&region)?;
    let read_s = t1.elapsed().as_secs_f64();
    let bytes = decoded.into_fixed()?;
    let mut want = vec![0u8; usize::try_from(k * COLS * 4)?];
    std::io::Read::read_exact(&mut std::fs::File::open(format!("{root}/data.bin"))?, &mut want)?;
    Ok(serde_json::json!({
        "workload": "read-small",
        "engine": "zarrs_kerchunk",
        "k": k,
        "prefetch": prefetch,
        "open_s": round(t1.duration_since(t0).as_secs_f64()),
        "prefetch_s": round(prefetch_s),
        "read_s": round(read_s),
        "ok": *bytes == want[..],
    }))
}

fn read_random(root: &str, k: usize, data: &Data) -> Result<serde_json::Value, Box<dyn Error>> {
    let t0 = Instant::now();
    let (_, array) = open_data(root, data)?;
    let t1 = Instant::now();
    let mut random = SplitMix64(7);
    let mut latencies = Vec::with_capacity(k);
    let mut checksum = 0.0f64;
    for _ in 0..k {
        let t = random.below(NT);
        let start = Instant::now();
        let chunk: Vec<f32> = array.retrieve_chunk(&[t, 0, 0])?;
        latencies.push(start.elapsed().as_secs_f64() * 1e3);
        checksum += f64::from(chunk[0]);
    }
    let read_s = t1.elapsed().as_secs_f64();
    latencies.sort_by(f64::total_cmp);
    let at = |q: f64| {
        #[expect(
            clippy::cast_possible_truncation,
            clippy::cast_sign_loss,
            clippy::cast_precision_loss,
            reason = "a quantile's index"
        )]
        let i = ((latencies.len() - 1) as f64 * q).round() as usize;
        latencies.get(i).copied().unwrap_or(0.0)
    };
    #[expect(clippy::cast_precision_loss, reason = "a rate")]
    let per_s = k as f64 / read_s;
    Ok(serde_json::json!({
        "workload": data.workload("read-random", false),
        "k": k,
        "open_s": round(t1.duration_since(t0).as_secs_f64()),
        "read_s": round(read_s),
        "per_chunk_ms_median": (at(0.5) * 1000.0).round() / 1000.0,
        "per_chunk_ms_p90": (at(0.9) * 1000.0).round() / 1000.0,
        "chunks_per_s": (per_s * 10.0).round() / 10.0,
        "checksum": checksum,
    }))
}

/// A small, well-known generator (Steele, Lea and Flood), so runs are repeatable without a dependency.
struct SplitMix64(u64);

impl SplitMix64 {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform in `0..n` (rejection sampling, no modulo bias).
    fn below(&mut self, n: u64) -> u64 {
        let zone = u64::MAX - u64::MAX % n;
        loop {
            let x = self.next();
            if x < zone {
                return x % n;
            }
        }
    }
}

fn round(seconds: f64) -> f64 {
    (seconds * 1e6).round() / 1e6
}

/// Peak resident memory in MiB, from `/proc/self/status` (Linux).
fn peak_rss_mib() -> f64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let kib: f64 = status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or(0.0);
    (kib / 1024.0 * 10.0).round() / 10.0
}
