//! `zarrs-kerchunk`: inspect, audit, pin, print, convert and make kerchunk
//! reference sets from the command line, over the `zarrs_kerchunk` library.
//!
//! Exit codes: 0 on success, 1 when an audit or a pin found a problem with a
//! target, 2 on any error (one line on stderr naming what failed and why).

mod array;
mod audit;
mod cat;
mod cf;
mod combine;
mod combining;
mod convert;
mod info;
mod options;
mod outcome;
mod pin;
mod plot;
mod scan;
mod stats;
mod ticks;

use std::process::ExitCode;

use clap::{Parser, Subcommand};

use options::Opening;
use outcome::{Outcome, Result};

#[derive(Parser)]
#[command(name = "zarrs-kerchunk", version, about = "Inspect, audit, pin, print and convert kerchunk reference sets")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// The hierarchy: groups and arrays with shapes, dtypes, chunks, codecs and attributes.
    Info {
        #[command(flatten)]
        open: Opening,
        /// Print JSON for machines.
        #[arg(long)]
        json: bool,
    },
    /// References per array (by kind, chunks missing, bytes) and per target.
    Stats {
        #[command(flatten)]
        open: Opening,
        /// Print JSON for machines.
        #[arg(long)]
        json: bool,
        /// List every target with its references and bytes.
        #[arg(long)]
        targets: bool,
    },
    /// The values of an array, or of a slice of it, as text or as a .npy file: decoded
    /// through the CF conventions (scale and offset, fill values, dates), or as stored with --raw.
    Cat {
        #[command(flatten)]
        open: Opening,
        /// The array's path, such as `temp` or `/group/temp`.
        array: String,
        /// One entry per dimension, as Python slices: `0`, `2:5`, `:`, `-1`; omitted dimensions are whole.
        slice: Option<String>,
        #[command(flatten)]
        picking: cf::Picking,
        /// Write the values to this .npy file instead of printing them.
        #[arg(long, value_name = "FILE")]
        npy: Option<std::path::PathBuf>,
    },
    /// A slice of an array as a PNG: a map (2-D, north up, colour bar in the variable's units,
    /// missing values transparent) or a line against its coordinate (1-D, such as a time series).
    Plot {
        #[command(flatten)]
        open: Opening,
        /// The array's path, such as `temp` or `/group/temp`.
        array: String,
        /// As for `cat`; it must leave 1 or 2 dimensions longer than 1 (default: index 0 of all but the last two).
        slice: Option<String>,
        #[command(flatten)]
        picking: cf::Picking,
        /// The PNG file to write.
        #[arg(long, short, value_name = "FILE")]
        output: std::path::PathBuf,
    },
    /// Check every target with one metadata request: missing, short, unreachable or (with --pins) changed.
    Audit {
        #[command(flatten)]
        open: Opening,
        /// Print JSON for machines.
        #[arg(long)]
        json: bool,
        /// Metadata requests at once (with --encodings, targets scanned at once).
        #[arg(long, default_value_t = 16)]
        concurrency: usize,
        /// Read each target's own metadata (a header scan, no data) and report every target whose
        /// packing, fill value, valid range, units or calendar differ from what the set gives the
        /// arrays whose chunks it holds: values the set decodes wrong (exit code 1).
        #[arg(long)]
        encodings: bool,
    },
    /// Record each target's size, ETag and last-modified time in a pin file next to the references.
    Pin {
        #[command(flatten)]
        open: Opening,
        /// Where to write the pins (default: `<refs>.pins.json`, for local references).
        #[arg(long, short, value_name = "FILE")]
        output: Option<std::path::PathBuf>,
    },
    /// Convert between kerchunk JSON (v0, v1, plain or zstd) and fsspec's parquet layout.
    Convert(convert::Convert),
    /// Make references from NetCDF-3, NetCDF-4, HDF5, GRIB2 and TIFF files, reading only their headers (and arrays to inline).
    Scan(scan::Scan),
    /// Combine reference sets that exist (per-file JSONs, parquet roots, icechunk repositories) along a dimension, as `scan` combines files.
    Combine(combine::Combine),
}

/// Whether the output's reader went away (`zarrs-kerchunk cat ... | head`): `println!` then
/// panics, which is no bug.
static STDOUT_CLOSED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// The exit code of a process a closed pipe ended, as shells report one that SIGPIPE killed.
const CLOSED_PIPE: u8 = 128 + 13;

/// Whether `error` is, or was caused by, a write to a pipe whose reader went away.
fn closed_pipe(error: &(dyn std::error::Error + 'static)) -> bool {
    let mut cause = Some(error);
    while let Some(error) = cause {
        if error.downcast_ref::<std::io::Error>().is_some_and(|e| e.kind() == std::io::ErrorKind::BrokenPipe) {
            return true;
        }
        cause = error.source();
    }
    false
}

fn main() -> ExitCode {
    // A bug must not reach the user as a backtrace: one line, and the exit code of an error.
    std::panic::set_hook(Box::new(|info| {
        let message = info
            .payload()
            .downcast_ref::<&str>()
            .map(ToString::to_string)
            .or_else(|| info.payload().downcast_ref::<String>().cloned())
            .unwrap_or_default();
        // Rust ignores SIGPIPE, so a reader that stops reading makes the next print panic: the
        // command ends quietly, as one that SIGPIPE ends.
        if message.starts_with("failed printing to stdout") && message.contains("Broken pipe") {
            STDOUT_CLOSED.store(true, std::sync::atomic::Ordering::SeqCst);
            return;
        }
        let location = info.location().map(ToString::to_string).unwrap_or_default();
        eprintln!("zarrs-kerchunk: internal error (please report it): {message} at {location}");
    }));
    let cli = Cli::parse();
    // cat, stats and plot decode chunks; the sized codec inflates each zlib chunk in one call and
    // stops a stream that would inflate past its chunk. It stays registered for the process.
    let _zlib = zarrs_zlib_sized::register_zlib_codec();
    // TIFF's codecs (LZW, PackBits, ZSTD, LZMA, predictors) and numcodecs' others, for the process.
    let _codecs = zarrs_kerchunk_codecs::register_codecs();
    match std::panic::catch_unwind(|| run(cli)) {
        Ok(Ok(Outcome::Done)) => ExitCode::SUCCESS,
        Ok(Ok(Outcome::Problems)) => ExitCode::from(1),
        Ok(Err(error)) if closed_pipe(error.as_ref()) => ExitCode::from(CLOSED_PIPE),
        Ok(Err(error)) => {
            eprintln!("zarrs-kerchunk: error: {}", kerchunk::error_chain(error.as_ref()).replace('\n', " "));
            ExitCode::from(2)
        }
        Err(_) if STDOUT_CLOSED.load(std::sync::atomic::Ordering::SeqCst) => ExitCode::from(CLOSED_PIPE),
        Err(_) => ExitCode::from(2),
    }
}

fn run(cli: Cli) -> Result {
    match cli.command {
        Command::Info { open, json } => info::run(&open.open()?, json),
        Command::Stats { open, json, targets } => stats::run(&open.open()?, json, targets),
        Command::Cat { open, array, slice, picking, npy } => {
            cat::run(&open.open()?, &array, slice.as_deref(), npy.as_deref(), &picking)
        }
        Command::Plot { open, array, slice, picking, output } => {
            plot::run(&open.open()?, &array, slice.as_deref(), &picking, &output)
        }
        Command::Audit { open, json, concurrency, encodings: false } => audit::run(&open.open()?, json, concurrency),
        Command::Audit { open, json, concurrency, encodings: true } => audit::encodings(&open, json, concurrency),
        Command::Pin { open, output } => pin::run(&open, output),
        Command::Convert(convert) => convert.run(),
        Command::Scan(scan) => scan.run(),
        Command::Combine(combine) => combine.run(),
    }
}
