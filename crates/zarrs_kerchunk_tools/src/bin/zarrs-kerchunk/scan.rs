//! `scan`: NetCDF-3, NetCDF-4, HDF5, GRIB and TIFF files (or the DMR++ sidecars of HDF5 ones)
//! into references, combined along a dimension when there are several, written as `convert`
//! writes them.

use std::sync::Arc;
use std::time::Instant;

use clap::Args;
use kerchunk::{ReferenceSet, ReferenceSource};
use kerchunk_scan::{DmrppSidecars, ScanOptions, UnsupportedArrays};
use zarrs_kerchunk::ReferenceStoreBuilder;
use zarrs_kerchunk_tools::make::{
    CONCURRENT_SCANS, Made, append_references, expand, load_references, make_references, make_streamed, streamable,
    url_in_references, without_named_sidecars, writable,
};

use crate::combining::CombineArgs;
use crate::convert::Output;
use crate::options::{Access, progress_bar};
use crate::outcome::{Outcome, Result};

#[derive(Args)]
#[expect(clippy::struct_excessive_bools, reason = "independent command-line flags")]
pub(crate) struct Scan {
    /// The files, NetCDF-3 (classic, 64-bit offset or CDF-5), NetCDF-4, HDF5, GRIB2 or TIFF (GeoTIFF, COG): paths or URLs,
    /// or patterns of them (`'s3://bucket/run/*.nc'`: `*`, `?` and `[...]` within one level of
    /// folders), expanded by listing the store.
    #[arg(required = true)]
    files: Vec<String>,
    /// Where to write (as for `convert`): a parquet root if it ends in `.parq`, `.parquet` or `/`,
    /// zstd JSON if in `.zst`, else JSON. A local path or a URL. With `--append-to`, that set
    /// unless given.
    #[arg(long, short, value_name = "OUTPUT", required_unless_present = "append_to")]
    output: Option<String>,
    /// Add the files to this reference set (JSON or parquet), made by `scan --concat`, combined
    /// as it records (root attribute `zarrs_kerchunk_combined_with`): the old files are not
    /// scanned again, and the set is written again in place (or to `--output`). Along several
    /// dimensions, the files extend the one whose values they change (new times for every
    /// member, or a new member with every time).
    #[arg(long, value_name = "REFS", conflicts_with_all = ["concat", "coord", "merge", "units"])]
    append_to: Option<String>,
    /// With `--append-to`, leave out files the set references already (else an error).
    #[arg(long, requires = "append_to")]
    skip_existing: bool,
    #[command(flatten)]
    combining: CombineArgs,
    /// How many files to scan at once (each a few requests in flight).
    #[arg(long, value_name = "N", default_value_t = CONCURRENT_SCANS, value_parser = at_least_one)]
    jobs: usize,
    /// Hold data of fewer bytes than this in the references (0: none): whole NetCDF-3 arrays,
    /// HDF5 chunks and TIFF tiles as stored. Default: kerchunk's, 100 for NetCDF-3, 500 for HDF5
    /// and none for TIFF.
    #[arg(long, value_name = "BYTES")]
    inline_threshold: Option<u64>,
    /// Fail on an HDF5 array references cannot express (a filter or type zarr lacks) instead of
    /// leaving it out with a warning.
    #[arg(long)]
    fail_unsupported: bool,
    /// Find a GRIB file's messages from their own lengths, not from the inventory beside it
    /// (NOAA's `FILE.idx`, ECMWF's `.index`), which is otherwise read: one that disagrees with
    /// the file is an error.
    #[arg(long)]
    no_idx: bool,
    /// Read the header of every GRIB message a NOAA inventory lists. Otherwise messages whose
    /// lines differ only in their level's numbers (`TMP:500 mb`, `TMP:850 mb`) share one header
    /// read, their levels taken from their lines: one request per distinct variable.
    #[arg(long)]
    idx_every_header: bool,
    /// DMR++ sidecars (`FILE.dmrpp` beside a file, OPeNDAP Hyrax's, as beside most of NASA
    /// Earthdata's granules): `auto` reads a file's sidecar in place of its header where there is
    /// one (one small request, the header unread), `never` reads the file's header, `only` fails
    /// a file without one. A sidecar named among the files is scanned for the file it describes.
    #[arg(long, value_enum, default_value_t = Sidecars::Auto)]
    dmrpp: Sidecars,
    /// Split an uncompressed array's chunks (a contiguous dataset, a NetCDF-3 variable) into this
    /// many along its first dimension, as kerchunk's `subchunk` does: `temp=4` (repeatable).
    #[arg(long, value_name = "ARRAY=FACTOR", value_parser = split_factor)]
    subchunk: Vec<(String, u64)>,
    #[command(flatten)]
    format: Output,
    #[command(flatten)]
    access: Access,
}

/// `--dmrpp`: whether a file's DMR++ sidecar is read in place of its header.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
enum Sidecars {
    Auto,
    Never,
    Only,
}

impl From<Sidecars> for DmrppSidecars {
    fn from(sidecars: Sidecars) -> Self {
        match sidecars {
            Sidecars::Auto => DmrppSidecars::Auto,
            Sidecars::Never => DmrppSidecars::Never,
            Sidecars::Only => DmrppSidecars::Only,
        }
    }
}

impl Scan {
    pub(crate) fn run(self) -> Result {
        let start = Instant::now();

        let registry = Arc::new(self.access.registry()?);
        let mut files = Vec::new();
        for file in &self.files {
            files.extend(expand(file, &registry)?);
        }
        let mut options = ScanOptions::default();
        if let Some(bytes) = self.inline_threshold {
            options = options.with_inline_threshold(bytes);
        }
        if self.fail_unsupported {
            options = options.with_unsupported_arrays(UnsupportedArrays::Fail);
        }
        options = options.with_grib_inventory(!self.no_idx).with_grib_levels_from_inventory(!self.idx_every_header);
        options = options.with_dmrpp_sidecars(self.dmrpp.into());
        let files = without_named_sidecars(files, self.dmrpp.into());
        let output = self.output.clone().or_else(|| self.append_to.clone()).expect("clap requires one");
        let bar = progress_bar("files scanned");
        bar.set_length(files.len() as u64);
        let url_of = |file: &str| url_in_references(file, &output);
        let combining = self.combining.combining()?;
        let (made, references): (Made, Box<dyn ReferenceSource>) = if let Some(location) = &self.append_to {
            let existing =
                ReferenceStoreBuilder::new().with_registry(Arc::new(self.access.registry()?)).open(location)?;
            let existing = load_references(existing.source().as_ref(), location)?;
            let (made, appended) = append_references(
                existing,
                location,
                &files,
                self.skip_existing,
                &options,
                self.jobs,
                &registry,
                url_of,
                || bar.inc(1),
            )?;
            if self.subchunk.is_empty() {
                (made, appended.into_source())
            } else {
                (made, Box::new(self.subchunked(appended.into_whole(location)?)?))
            }
        } else if let Some(concat) = streamable(combining.as_ref(), files.len()).filter(|_| self.subchunk.is_empty()) {
            // Each file's chunks wait aside until written: memory does not grow with the files.
            let memory = self.combining.memory();
            let streamed =
                make_streamed(&files, concat, &options, self.jobs, &registry, url_of, || bar.inc(1), memory)?;
            (streamed.made, writable(streamed.references)?)
        } else {
            let mut made =
                make_references(&files, combining.as_ref(), &options, self.jobs, &registry, url_of, || bar.inc(1))?;
            let references = self.subchunked(std::mem::take(&mut made.references))?;
            (made, Box::new(references))
        };
        bar.finish_and_clear();
        for (url, skipped) in &made.skipped {
            eprintln!("warning: {url}: {}: left out: {}", skipped.path, skipped.reason);
        }
        let (written, records) =
            self.format.write_result(references.as_ref(), &output, self.append_to.as_deref(), &registry)?;
        eprintln!(
            "{written} references to {} file(s) written to {} in {:.2?} ({} requests, {} bytes read{records})",
            made.files.len(),
            output,
            start.elapsed(),
            made.requests,
            made.bytes,
        );
        Ok(Outcome::Done)
    }

    /// `references` with the arrays `--subchunk` names split.
    fn subchunked(&self, mut references: ReferenceSet) -> Result<ReferenceSet> {
        for (array, factor) in &self.subchunk {
            references = kerchunk_scan::subchunk(&references, array, *factor)?;
        }
        Ok(references)
    }
}

/// A whole number from 1, as `--jobs` takes it.
fn at_least_one(text: &str) -> std::result::Result<usize, String> {
    text.parse().ok().filter(|&n| n > 0).ok_or_else(|| format!("{text:?} is not a whole number from 1"))
}

/// `ARRAY=FACTOR`, as `--subchunk` takes it.
fn split_factor(text: &str) -> std::result::Result<(String, u64), String> {
    let (array, factor) = text.split_once('=').ok_or_else(|| format!("{text:?} is not ARRAY=FACTOR"))?;
    let factor = factor.parse().map_err(|_| format!("{factor:?} in {text:?} is not a whole number"))?;
    Ok((array.to_owned(), factor))
}
