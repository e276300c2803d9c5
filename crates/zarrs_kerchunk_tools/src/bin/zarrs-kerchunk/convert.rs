//! `convert`: kerchunk JSON and fsspec's parquet layout, either way.

use std::time::Instant;

use clap::{Args, ValueEnum};
use kerchunk::{JsonVersion, JsonWriteOptions, ParquetWriteOptions, PathEncoding, Progress};
use zarrs_kerchunk::object_store::registry::ObjectStoreRegistry;
use zarrs_kerchunk::object_store::{self, ObjectStore, ObjectStoreExt};
use zarrs_kerchunk::{RecordCacheOptions, write_json, write_parquet};

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
    /// is zstd-compressed JSON; anything else JSON. A local path or a URL.
    output: String,
    /// References per parquet record file.
    #[arg(long, default_value_t = 100_000)]
    record_size: u64,
    /// The parquet `path` column's encoding.
    #[arg(long, value_enum, default_value_t = Paths::Auto)]
    paths: Paths,
    /// Write parquet record files without compression.
    #[arg(long)]
    no_compression: bool,
    /// Write JSON version 0 (a flat map) instead of version 1.
    #[arg(long)]
    v0: bool,
    /// Compress JSON with zstd at LEVEL (default for names ending in `.zst`: 3).
    #[arg(long, value_name = "LEVEL")]
    zstd: Option<i32>,
}

impl Convert {
    pub(crate) fn run(self) -> Result {
        let start = Instant::now();
        // Each source record is read once, in order: two cached records are all a conversion needs.
        let source = self
            .open
            .builder()?
            .with_record_cache(RecordCacheOptions::default().with_max_records(2))
            .open(&self.open.refs)?;
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
        let mut json = JsonWriteOptions::default().with_progress(progress);
        if self.v0 {
            json = json.with_version(JsonVersion::V0);
        }
        if let Some(level) = self.zstd.or(self.output.to_ascii_lowercase().ends_with(".zst").then_some(3)) {
            json = json.with_zstd(level);
        }
        let (store, path) = destination(&self.output, &self.open)?;
        let is_parquet = [".parq", ".parquet", "/"].iter().any(|suffix| self.output.ends_with(suffix));
        let source = source.source().as_ref();
        let written = if is_parquet {
            write_parquet(source, store.as_ref(), &path, &parquet)?
        } else if self.output.contains("://") {
            // One PUT of the whole document.
            let mut bytes = Vec::new();
            let written = write_json(source, &mut bytes, &json)?;
            tokio::runtime::Runtime::new()?.block_on(store.put(&path, bytes.into()))?;
            written
        } else {
            // Streamed to the file as it is written.
            let file = std::fs::File::create(&self.output).map_err(|e| format!("cannot write {}: {e}", self.output))?;
            write_json(source, std::io::BufWriter::new(file), &json)?
        };
        bar.finish_and_clear();
        eprintln!("{written} references written to {} in {:.2?}", self.output, start.elapsed());
        Ok(Outcome::Done)
    }
}

/// The object store and path of a local path or URL. A URL's store is made
/// as the references' stores are ([`Opening::registry`]): from the options
/// given and the cloud environment's own variables, never from the rest of
/// the environment.
fn destination(output: &str, open: &Opening) -> Result<(std::sync::Arc<dyn ObjectStore>, object_store::path::Path)> {
    let trimmed = output.trim_end_matches('/');
    if trimmed.contains("://") {
        let url = url::Url::parse(trimmed)?;
        Ok(open.registry().resolve(&url)?)
    } else {
        let path = std::path::absolute(trimmed)?;
        let parent = path.parent().ok_or("the output has no parent folder")?;
        std::fs::create_dir_all(parent)?;
        let name = path.file_name().ok_or("the output has no name")?.to_string_lossy().into_owned();
        Ok((std::sync::Arc::new(object_store::local::LocalFileSystem::new_with_prefix(parent)?), name.into()))
    }
}
