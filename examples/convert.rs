//! Convert a reference set between kerchunk JSON and fsspec's parquet layout.
//!
//! ```sh
//! cargo run --release --example convert -- <input> <output> [options]
//! ```
//!
//! `<input>` is anything the stores open: a JSON reference file (v0 or v1,
//! plain, gzip or zstd) or a parquet root, local or remote. The output format
//! follows `<output>`'s name: a name ending in `.parq`, `.parquet` or `/` is a
//! parquet root; `.json.zst` is zstd-compressed JSON; anything else is JSON.
//! A local path or a URL (`s3://...`, with the usual `AWS_*` variables).
//!
//! Options: `--record-size N` (parquet, default 100000), `--paths plain|dictionary|auto`
//! (parquet `path` column, default `auto`: dictionary above 10 repetitions, as kerchunk),
//! `--no-compression` (parquet), `--v0` (JSON version 0 instead of 1), `--zstd LEVEL` (JSON).
//!
//! Progress goes to stderr; the last line reports the time taken and the peak memory.

use std::error::Error;
use std::io::Write;
use std::sync::Mutex;
use std::time::Instant;

use zarrs_kerchunk::object_store::{self, ObjectStore, ObjectStoreExt};
use zarrs_kerchunk::{
    JsonVersion, JsonWriteOptions, ParquetWriteOptions, PathEncoding, Progress, RecordCacheOptions,
    ReferenceStoreBuilder, write_json, write_parquet,
};

fn main() -> std::process::ExitCode {
    match run() {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("error: {error}");
            std::process::ExitCode::FAILURE
        }
    }
}

struct Options {
    input: String,
    output: String,
    parquet: ParquetWriteOptions,
    json: JsonWriteOptions,
}

fn parse_args() -> Result<Options, Box<dyn Error>> {
    let mut args = std::env::args().skip(1);
    let mut positional = Vec::new();
    let mut parquet = ParquetWriteOptions::default();
    let mut json = JsonWriteOptions::default();
    let mut zstd_level = None;
    while let Some(arg) = args.next() {
        let mut value = |name: &str| args.next().ok_or(format!("{name} needs a value"));
        match arg.as_str() {
            "--record-size" => parquet = parquet.with_record_size(value("--record-size")?.parse()?),
            "--paths" => {
                let encoding = match value("--paths")?.as_str() {
                    "plain" => PathEncoding::Plain,
                    "dictionary" => PathEncoding::Dictionary,
                    "auto" => PathEncoding::AboveRepetition(10.0),
                    other => return Err(format!("--paths must be plain, dictionary or auto, not {other:?}").into()),
                };
                parquet = parquet.with_path_encoding(encoding);
            }
            "--no-compression" => parquet = parquet.with_zstd(None),
            "--v0" => json = json.with_version(JsonVersion::V0),
            "--zstd" => zstd_level = Some(value("--zstd")?.parse()?),
            flag if flag.starts_with("--") => return Err(format!("unknown option {flag}").into()),
            _ => positional.push(arg),
        }
    }
    let [input, output] = <[String; 2]>::try_from(positional)
        .map_err(|_| "usage: convert <input> <output> [--record-size N] [--paths plain|dictionary|auto] [--no-compression] [--v0] [--zstd LEVEL]")?;
    if let Some(level) = zstd_level.or(output.to_ascii_lowercase().ends_with(".zst").then_some(3)) {
        json = json.with_zstd(level);
    }
    Ok(Options { input, output, parquet, json })
}

fn run() -> Result<(), Box<dyn Error>> {
    let mut options = parse_args()?;
    let start = Instant::now();
    // Each source record is read once, in order: two cached records are all a conversion needs.
    let source = ReferenceStoreBuilder::new()
        .with_record_cache(RecordCacheOptions::default().with_max_records(2))
        .open(&options.input)?;
    eprintln!("opened {} in {:.2?}", options.input, start.elapsed());

    let last_report = Mutex::new(Instant::now());
    let progress = Progress::new(move |written: u64| {
        let mut last = last_report.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        if last.elapsed().as_millis() >= 500 {
            eprint!("\r{written} references written ({:.1?})", start.elapsed());
            *last = Instant::now();
        }
    });
    options.parquet = options.parquet.with_progress(progress.clone());
    options.json = options.json.with_progress(progress);
    let (store, path) = destination(&options.output)?;
    let is_parquet = [".parq", ".parquet", "/"].iter().any(|suffix| options.output.ends_with(suffix));
    let source = source.source().as_ref();
    let written = if is_parquet {
        write_parquet(source, store.as_ref(), &path, &options.parquet)?
    } else if options.output.contains("://") {
        // One PUT of the whole document.
        let mut bytes = Vec::new();
        let written = write_json(source, &mut bytes, &options.json)?;
        let runtime = tokio::runtime::Runtime::new()?;
        runtime.block_on(store.put(&path, bytes.into()))?;
        written
    } else {
        // Streamed to the file as it is written.
        let file = std::io::BufWriter::new(std::fs::File::create(&options.output)?);
        write_json(source, file, &options.json)?
    };
    eprintln!(
        "\r{written} references written to {} in {:.2?}; peak memory {}",
        options.output,
        start.elapsed(),
        peak_memory()
    );
    std::io::stderr().flush()?;
    Ok(())
}

/// The object store and path of a local path or URL.
fn destination(output: &str) -> Result<(Box<dyn ObjectStore>, object_store::path::Path), Box<dyn Error>> {
    let trimmed = output.trim_end_matches('/');
    if trimmed.contains("://") {
        let url = url::Url::parse(trimmed)?;
        Ok(object_store::parse_url_opts(&url, std::env::vars())?)
    } else {
        let path = std::path::absolute(trimmed)?;
        let parent = path.parent().ok_or("the output has no parent folder")?;
        std::fs::create_dir_all(parent)?;
        let name = path.file_name().ok_or("the output has no name")?.to_string_lossy().into_owned();
        Ok((Box::new(object_store::local::LocalFileSystem::new_with_prefix(parent)?), name.into()))
    }
}

/// The process's peak resident memory, from `/proc/self/status` (Linux).
fn peak_memory() -> String {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|status| status.lines().find(|l| l.starts_with("VmHWM:")).map(|l| l[6..].trim().to_owned()))
        .unwrap_or_else(|| "unknown".into())
}
