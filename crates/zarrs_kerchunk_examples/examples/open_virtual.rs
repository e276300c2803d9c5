//! Open a kerchunk reference set, print its hierarchy and read a slice of one array.
//!
//! ```text
//! cargo run --release -p zarrs_kerchunk_examples --example open_virtual    # the bundled sample
//! cargo run --release -p zarrs_kerchunk_examples --example open_virtual -- <location> [array] [slice] [--prefetch]
//! cargo run --release -p zarrs_kerchunk_examples --example open_virtual --features remote -- s3://bucket/refs.json
//! ```
//!
//! `location` is a local path or a `file://` URL of a JSON reference file; with the
//! feature `remote`, also `http(s)://`, `s3://`, `gs://` or `az://`. `slice` is numpy-like, one item per dimension:
//! `0,10:20,:`. Without an array, the largest is read; without a slice, a
//! corner of it.
//!
//! `--prefetch` first reads every chunk behind the slice with
//! `ReferenceStore::prefetch_region`: ranges of one file merged, many reads in
//! flight. zarrs' sync reads otherwise fetch one chunk per rayon thread, so
//! over a high-latency link this is what reaches async throughput.

use std::error::Error;
use std::ops::Range;
use std::sync::Arc;

use zarrs::array::Array;
use zarrs::node::{Node, NodeMetadata};
use zarrs_kerchunk::ReferenceStore;
use zarrs_storage::{ReadableStorageTraits, StoreKey};

const SAMPLE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../zarrs_kerchunk/examples/data/sample.json");

fn main() -> std::process::ExitCode {
    match run() {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("error: {error}");
            std::process::ExitCode::FAILURE
        }
    }
}

fn run() -> Result<(), Box<dyn Error>> {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let prefetch = args.iter().any(|a| a == "--prefetch");
    args.retain(|a| a != "--prefetch");
    let location = args.first().map_or(SAMPLE, String::as_str);
    println!("reference set: {location}");
    let store = Arc::new(ReferenceStore::open(location)?);
    match store.references() {
        Some(references) => {
            println!("{} references to {} target file(s)\n", references.len(), references.urls().len());
        }
        None => println!("parquet reference root: record files are read as chunks are asked for\n"),
    }

    let root = Node::open(&store, "/")?;
    let mut arrays = Vec::new();
    print_node(&root, &store, 0, &mut arrays)?;

    let array_path = match args.get(1) {
        Some(path) => format!("/{}", path.trim_start_matches('/')),
        None => {
            arrays.iter().max_by_key(|(_, n)| *n).map(|(p, _)| p.clone()).ok_or("the reference set has no arrays")?
        }
    };
    let array = Array::open(store.clone(), &array_path)?;
    let subset = match args.get(2) {
        Some(text) => parse_slice(text, array.shape())?,
        None => default_slice(array.shape()),
    };
    let dtype = v2_dtype(&store, &array_path)?;
    println!("\n{array_path}{} ({dtype}):", show_slice(&subset));
    let start = std::time::Instant::now();
    if prefetch {
        let bytes = store.prefetch_region(&array_path, &subset)?;
        println!("prefetched {bytes} bytes in {:.3} s", start.elapsed().as_secs_f64());
    }
    let values = read_as_f64(&array, &subset, &dtype)?;
    println!("read in {:.3} s", start.elapsed().as_secs_f64());
    println!("{values:.3}");
    let finite: Vec<f64> = values.iter().copied().filter(|v| v.is_finite()).collect();
    if finite.is_empty() {
        println!("no finite values");
    } else {
        let min = finite.iter().copied().fold(f64::INFINITY, f64::min);
        let max = finite.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        #[expect(clippy::cast_precision_loss, reason = "a count, for a mean")]
        let mean = finite.iter().sum::<f64>() / finite.len() as f64;
        println!("min {min}  mean {mean:.6}  max {max}  ({} of {} values finite)", finite.len(), values.len());
    }
    Ok(())
}

/// Print a node and its children; collect arrays with their element counts.
fn print_node(
    node: &Node,
    store: &Arc<ReferenceStore>,
    depth: usize,
    arrays: &mut Vec<(String, u64)>,
) -> Result<(), Box<dyn Error>> {
    let indent = "  ".repeat(depth);
    let path = node.path().as_str();
    match node.metadata() {
        NodeMetadata::Group(_) => {
            println!("{indent}{path} (group)");
            print_attributes(store, path, ".zattrs", &indent)?;
            for child in node.children() {
                print_node(child, store, depth + 1, arrays)?;
            }
        }
        NodeMetadata::Array(_) => {
            let array = Array::open(store.clone(), path)?;
            let chunks = array.chunk_shape(&vec![0; array.shape().len()])?;
            let dtype = v2_dtype(store, path)?;
            println!("{indent}{path}  shape {:?}  dtype {dtype}  chunks {chunks:?}", array.shape());
            print_attributes(store, path, ".zattrs", &indent)?;
            arrays.push((path.to_owned(), array.shape().iter().product()));
        }
    }
    Ok(())
}

fn print_attributes(store: &ReferenceStore, path: &str, name: &str, indent: &str) -> Result<(), Box<dyn Error>> {
    let key = format!("{}/{name}", path.trim_matches('/')).trim_start_matches('/').to_owned();
    if let Some(bytes) = store.get(&StoreKey::new(key)?)? {
        let attributes: serde_json::Map<String, serde_json::Value> = serde_json::from_slice(&bytes)?;
        for (name, value) in attributes {
            println!("{indent}    {name}: {value}");
        }
    }
    Ok(())
}

/// The Zarr V2 dtype string of an array, as served by the store.
fn v2_dtype(store: &ReferenceStore, path: &str) -> Result<String, Box<dyn Error>> {
    let key = format!("{}/.zarray", path.trim_matches('/')).trim_start_matches('/').to_owned();
    let bytes = store.get(&StoreKey::new(key)?)?.ok_or("no .zarray")?;
    let meta: serde_json::Value = serde_json::from_slice(&bytes)?;
    Ok(meta["dtype"].as_str().unwrap_or("?").to_owned())
}

/// Read a subset as `f64`, whatever the numeric dtype.
fn read_as_f64(
    array: &Array<ReferenceStore>,
    subset: &[Range<u64>],
    dtype: &str,
) -> Result<ndarray::ArrayD<f64>, Box<dyn Error>> {
    macro_rules! read {
        ($t:ty) => {{
            let values: ndarray::ArrayD<$t> = array.retrieve_array_subset(&subset.to_vec())?;
            #[allow(
                clippy::cast_precision_loss,
                clippy::cast_lossless,
                reason = "a macro over every dtype: lossy for some, lossless for others"
            )]
            Ok(values.mapv(|v| v as f64))
        }};
    }
    match &dtype[1.min(dtype.len())..] {
        "f4" => read!(f32),
        "f8" => read!(f64),
        "i1" => read!(i8),
        "i2" => read!(i16),
        "i4" => read!(i32),
        "i8" => read!(i64),
        "u1" => read!(u8),
        "u2" => read!(u16),
        "u4" => read!(u32),
        "u8" => read!(u64),
        other => Err(format!("dtype {other} is not a plain number; pick another array").into()),
    }
}

/// A corner: index 0 of all but the last two dimensions, up to 6 x 8 of those.
fn default_slice(shape: &[u64]) -> Vec<Range<u64>> {
    let n = shape.len();
    shape
        .iter()
        .enumerate()
        .map(|(i, &len)| match n - i {
            1 => 0..len.min(8),
            2 => 0..len.min(6),
            _ => 0..len.min(1),
        })
        .collect()
}

/// Parse `0,10:20,:` (missing trailing dimensions are taken whole).
fn parse_slice(text: &str, shape: &[u64]) -> Result<Vec<Range<u64>>, Box<dyn Error>> {
    let items: Vec<&str> = if text.trim().is_empty() { vec![] } else { text.split(',').collect() };
    if items.len() > shape.len() {
        return Err(format!("slice {text:?} has {} items for {} dimensions", items.len(), shape.len()).into());
    }
    shape
        .iter()
        .enumerate()
        .map(|(i, &len)| {
            let item = items.get(i).map_or(":", |s| s.trim());
            let range = match item.split_once(':') {
                None => {
                    let at: u64 = item.parse()?;
                    at..at + 1
                }
                Some((a, b)) => {
                    let start = if a.is_empty() { 0 } else { a.parse()? };
                    let end = if b.is_empty() { len } else { b.parse()? };
                    start..end
                }
            };
            if range.start >= range.end || range.end > len {
                return Err(format!("slice item {item:?} is outside dimension {i} of length {len}").into());
            }
            Ok(range)
        })
        .collect()
}

fn show_slice(subset: &[Range<u64>]) -> String {
    let items: Vec<String> = subset.iter().map(|r| format!("{}:{}", r.start, r.end)).collect();
    format!("[{}]", items.join(", "))
}
