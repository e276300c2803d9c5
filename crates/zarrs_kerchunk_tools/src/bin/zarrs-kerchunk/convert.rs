//! `convert`: kerchunk JSON and fsspec's parquet layout, either way.

use std::time::Instant;

use clap::{Args, ValueEnum};
use indicatif::ProgressBar;
use kerchunk::{JsonVersion, JsonWriteOptions, ParquetWriteOptions, PathEncoding, Progress, ReferenceSource};
use zarrs_kerchunk::{ParquetUpdate, RecordCacheOptions, ReferenceStoreBuilder, StoreRegistry};
use zarrs_kerchunk_tools::icechunk::{ExportOptions, IcechunkLocation, MANIFEST_SPLIT, write_icechunk};
use zarrs_kerchunk_tools::output::{rewrite_references, write_references};

use crate::options::{Opening, progress_bar};
use crate::outcome::{Outcome, Result};

/// How the parquet `path` column is encoded.
#[derive(Clone, Copy, ValueEnum)]
enum Paths {
    Plain,
    Dictionary,
    /// Dictionary above 10 repetitions per distinct path, as kerchunk.
    Auto,
}

#[derive(Args)]
pub(crate) struct Convert {
    #[command(flatten)]
    open: Opening,
    /// Where to write: a name ending in `.parq`, `.parquet` or `/` is a parquet root; `.json.zst`
    /// is zstd-compressed JSON; anything else JSON. A local path or a URL. `icechunk://PATH`,
    /// `icechunk+s3://BUCKET/PREFIX`, `icechunk+gs://BUCKET/PREFIX` or `icechunk+az://CONTAINER/PREFIX`
    /// reached with the `--option`s (`@BRANCH` after it, `main` by default), is an icechunk
    /// repository, created if absent, the references committed into it as virtual chunks.
    output: String,
    #[command(flatten)]
    format: Output,
    /// The commit message, when writing into an icechunk repository.
    #[arg(long)]
    message: Option<String>,
    /// The most chunks in one icechunk manifest: an array of more is split into manifests of at
    /// most CHUNKS along its outer axes, unless the repository's configuration splits them. icechunk
    /// builds each manifest whole in memory when it commits.
    #[arg(long, value_name = "CHUNKS", default_value_t = MANIFEST_SPLIT)]
    manifest_split: u32,
    /// Commit into the icechunk repository in parts of CHUNKS chunks, so that icechunk holds one
    /// part at a time rather than every reference: on a working branch of their own, the branch
    /// then moved to the last part (its history shows every part). One commit by default.
    #[arg(long, value_name = "CHUNKS")]
    commit_every: Option<u64>,
}

/// How references are written: the options of every command that writes them.
#[derive(Args)]
#[expect(clippy::struct_excessive_bools, reason = "command-line switches, as clap reads them")]
pub(crate) struct Output {
    /// References per parquet record file (appending to a parquet root keeps the root's).
    #[arg(long, default_value_t = 100_000)]
    record_size: u64,
    /// The parquet `path` column's encoding.
    #[arg(long, value_enum, default_value_t = Paths::Auto)]
    paths: Paths,
    /// Write parquet record files without compression.
    #[arg(long)]
    no_compression: bool,
    /// Write JSON version 0 (a flat map) instead of version 1.
    #[arg(long, conflicts_with_all = ["url_templates", "v1"])]
    v0: bool,
    /// Write JSON version 1 (`{"version": 1, "refs": ...}`), the default.
    #[arg(long)]
    v1: bool,
    /// Write each URL that several references share once, as a JSON version 1 template.
    #[arg(long)]
    url_templates: bool,
    /// Compress JSON with zstd at LEVEL (default for names ending in `.zst`: 3).
    #[arg(long, value_name = "LEVEL")]
    zstd: Option<i32>,
}

impl Output {
    /// Write `source` to `to` (a name ending in `.parq`, `.parquet` or `/` is a
    /// parquet root, `.zst` zstd-compressed JSON, anything else JSON; a local
    /// path or a URL) with a progress bar; returns the number of references written.
    pub(crate) fn write(
        &self,
        source: &dyn ReferenceSource,
        to: &str,
        registry: &StoreRegistry,
    ) -> std::result::Result<u64, Box<dyn std::error::Error>> {
        let (bar, json, parquet) = self.options(to);
        let written = write_references(source, to, registry, &json, &parquet)?;
        bar.finish_and_clear();
        Ok(written)
    }

    /// [`Self::write`] to `to`, which holds `previous` now: a parquet root there has only its
    /// record files that change written ([`rewrite_references`]), at its own record size.
    pub(crate) fn write_over(
        &self,
        source: &dyn ReferenceSource,
        previous: &dyn ReferenceSource,
        to: &str,
        registry: &StoreRegistry,
    ) -> std::result::Result<(u64, Option<ParquetUpdate>), Box<dyn std::error::Error>> {
        let (bar, json, parquet) = self.options(to);
        let written = rewrite_references(source, previous, to, registry, &json, &parquet)?;
        bar.finish_and_clear();
        Ok(written)
    }

    /// `source` written to `output`, by [`Self::write_over`] where it goes back to the set
    /// `appended_to` it extends (a parquet root has only the records that change written), else
    /// by [`Self::write`]: the references written, and for a parquet root written over, what
    /// became of its record files (`; record files: ...`, else empty).
    pub(crate) fn write_result(
        &self,
        source: &dyn ReferenceSource,
        output: &str,
        appended_to: Option<&str>,
        registry: &std::sync::Arc<StoreRegistry>,
    ) -> std::result::Result<(u64, String), Box<dyn std::error::Error>> {
        let (written, update) = match appended_to {
            Some(location) if location == output => {
                let previous = ReferenceStoreBuilder::new()
                    .with_registry(std::sync::Arc::clone(registry) as _)
                    .with_record_cache(RecordCacheOptions::default().with_max_records(2))
                    .open(location)?;
                self.write_over(source, previous.source().as_ref(), output, registry)?
            }
            _ => (self.write(source, output, registry)?, None),
        };
        let records = update.map_or_else(String::new, |u| {
            format!(
                "; record files: {} written, {} unchanged, {} removed",
                u.records_written, u.records_kept, u.records_removed
            )
        });
        Ok((written, records))
    }

    /// A progress bar, and the writers' options these switches give for writing to `to`.
    fn options(&self, to: &str) -> (ProgressBar, JsonWriteOptions, ParquetWriteOptions) {
        let bar = progress_bar("references written");
        let shown = bar.clone();
        let progress = Progress::new(move |written| shown.set_position(written));
        let encoding = match self.paths {
            Paths::Plain => PathEncoding::Plain,
            Paths::Dictionary => PathEncoding::Dictionary,
            Paths::Auto => PathEncoding::AboveRepetition(10.0),
        };
        let mut parquet = ParquetWriteOptions::default()
            .with_record_size(self.record_size)
            .with_path_encoding(encoding)
            .with_progress(progress.clone());
        if self.no_compression {
            parquet = parquet.with_zstd(None);
        }
        let mut json = JsonWriteOptions::default().with_progress(progress).with_url_templates(self.url_templates);
        if self.v0 {
            json = json.with_version(JsonVersion::V0);
        }
        if let Some(level) = self.zstd.or(to.to_ascii_lowercase().ends_with(".zst").then_some(3)) {
            json = json.with_zstd(level);
        }
        (bar, json, parquet)
    }
}

impl Convert {
    /// How references are committed into an icechunk repository.
    fn export_options(&self) -> ExportOptions {
        let options =
            ExportOptions::default().with_manifest_split(self.manifest_split).with_commit_every(self.commit_every);
        match &self.message {
            Some(message) => options.with_message(message),
            None => options,
        }
    }

    pub(crate) fn run(self) -> Result {
        let start = Instant::now();
        // Each source record is read once, in order: two cached records are all a conversion needs.
        let builder = self.open.builder()?.with_record_cache(RecordCacheOptions::default().with_max_records(2));
        let source = self.open.open_with(&builder)?;
        if let Some(location) = IcechunkLocation::parse(&self.output) {
            let location = location.with_options(self.open.repository_options());
            let exported = write_icechunk(&source, &location, self.export_options())?;
            eprintln!(
                "{} arrays, {} virtual and {} stored chunks committed to {} ({}, snapshot {}) in {:.2?}; \
                 readers authorise these virtual chunk containers: {}",
                exported.arrays,
                exported.virtual_chunks,
                exported.inline_chunks,
                self.output,
                location.branch,
                exported.snapshot,
                start.elapsed(),
                exported.containers.join(", "),
            );
            return Ok(Outcome::Done);
        }
        let written = self.format.write(source.source().as_ref(), &self.output, &self.open.registry()?)?;
        eprintln!("{written} references written to {} in {:.2?}", self.output, start.elapsed());
        Ok(Outcome::Done)
    }
}
