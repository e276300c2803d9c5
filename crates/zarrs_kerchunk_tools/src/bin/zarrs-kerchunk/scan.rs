//! `scan`: NetCDF-3, NetCDF-4 and HDF5 files into references, combined along
//! a dimension when there are several, written as `convert` writes them.

use std::sync::Arc;
use std::time::Instant;

use clap::Args;
use futures::{StreamExt, TryStreamExt};
use kerchunk_scan::{ScanOptions, UnsupportedArrays, scan};
use object_store::ObjectStore;
use zarrs_kerchunk::StoreRegistry;
use zarrs_kerchunk::object_store::registry::ObjectStoreRegistry;

use crate::convert::{Output, location};
use crate::options::{Access, progress_bar};
use crate::outcome::{Outcome, Result};

/// Files scanned at once.
const CONCURRENT_SCANS: usize = 16;

#[derive(Args)]
pub(crate) struct Scan {
    /// The files, NetCDF-3 (classic, 64-bit offset or CDF-5), NetCDF-4 or HDF5: paths or URLs,
    /// or patterns of them (`'s3://bucket/run/*.nc'`: `*`, `?` and `[...]` within one level of
    /// folders), expanded by listing the store.
    #[arg(required = true)]
    files: Vec<String>,
    /// Where to write (as for `convert`): a parquet root if it ends in `.parq`, `.parquet` or `/`,
    /// zstd JSON if in `.zst`, else JSON. A local path or a URL.
    #[arg(long, short, value_name = "OUTPUT")]
    output: String,
    /// Combine the files along this dimension (required for more than one file), as kerchunk does
    /// for one concatenated dimension; every other array is taken from the first file.
    #[arg(long, value_name = "DIM")]
    concat: Option<String>,
    /// Hold data of fewer bytes than this in the references (0: none): whole NetCDF-3 arrays,
    /// HDF5 chunks as stored. Default: kerchunk's, 100 for NetCDF-3 and 500 for HDF5.
    #[arg(long, value_name = "BYTES")]
    inline_threshold: Option<u64>,
    /// Fail on an HDF5 array references cannot express (a filter or type zarr lacks) instead of
    /// leaving it out with a warning.
    #[arg(long)]
    fail_unsupported: bool,
    #[command(flatten)]
    format: Output,
    #[command(flatten)]
    access: Access,
}

impl Scan {
    pub(crate) fn run(self) -> Result {
        let start = Instant::now();

        let registry = self.access.registry();
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
        if let Some(dimension) = &self.concat {
            options = options.with_inlined_variables([dimension.clone()]);
        }
        if files.len() > 1 && self.concat.is_none() {
            return Err("several files need --concat DIM: the dimension to combine them along".into());
        }
        let mut places = Vec::with_capacity(files.len());
        for file in &files {
            let (store, path) = location(file, &registry, false)?;
            places.push((store, path, self.url_in_references(file)?));
        }
        let bar = progress_bar("files scanned");
        bar.set_length(places.len() as u64);
        let scans = tokio::runtime::Runtime::new()?.block_on(
            futures::stream::iter(places.iter().map(|(store, path, url)| {
                let (options, bar) = (&options, &bar);
                async move {
                    let scan = scan(store, path, url, options).await;
                    bar.inc(1);
                    scan.map(|scan| (url.clone(), scan))
                }
            }))
            .buffered(CONCURRENT_SCANS)
            .collect::<Vec<_>>(),
        );
        bar.finish_and_clear();
        let (mut requests, mut bytes, mut sets) = (0, 0, Vec::with_capacity(scans.len()));
        for scan in scans {
            let (url, scan) = scan?;
            for skipped in &scan.skipped {
                eprintln!("warning: {url}: {}: left out: {}", skipped.path, skipped.reason);
            }
            requests += scan.stats.requests;
            bytes += scan.stats.bytes;
            sets.push((url, scan.references));
        }
        let references = match &self.concat {
            Some(dimension) => kerchunk_scan::combine(sets, dimension)?,
            None => sets.pop().expect("one file").1,
        };
        let written = self.format.write(&references, &self.output, &registry)?;
        eprintln!(
            "{written} references to {} file(s) written to {} in {:.2?} ({requests} requests, {bytes} bytes read)",
            files.len(),
            self.output,
            start.elapsed(),
        );
        Ok(Outcome::Done)
    }

    /// How the references name `file`: a URL as given; a local file by its
    /// path relative to the references' folder when both are local and it
    /// lies under that folder (so the two move together), else by its
    /// absolute path.
    fn url_in_references(&self, file: &str) -> std::result::Result<String, Box<dyn std::error::Error>> {
        if file.contains("://") {
            return Ok(file.to_owned());
        }
        let absolute = std::path::absolute(file)?;
        if !self.output.contains("://") {
            let output = std::path::absolute(&self.output)?;
            if let Some(relative) = output.parent().and_then(|folder| absolute.strip_prefix(folder).ok()) {
                return Ok(relative.to_string_lossy().replace('\\', "/"));
            }
        }
        Ok(absolute.to_string_lossy().into_owned())
    }
}

/// The files `file` names: itself, or if it is a pattern (`*`, `?`, `[...]`),
/// every object of its store whose path matches it, in order. A pattern's
/// wildcards stay within one level of folders.
fn expand(file: &str, registry: &StoreRegistry) -> std::result::Result<Vec<String>, Box<dyn std::error::Error>> {
    let Some(wildcard) = file.find(['*', '?', '[']) else { return Ok(vec![file.to_owned()]) };
    let folder = &file[..file[..wildcard].rfind('/').map_or(0, |slash| slash + 1)];
    let pattern = glob::Pattern::new(&file[folder.len()..]).map_err(|e| format!("{file}: not a pattern: {e}"))?;
    let (store, prefix): (Arc<dyn ObjectStore>, Option<object_store::path::Path>) = if folder.contains("://") {
        let (store, path) = registry.resolve(&url::Url::parse(folder)?)?;
        (store, Some(path).filter(|p| !p.as_ref().is_empty()))
    } else {
        let local = std::path::absolute(if folder.is_empty() { "." } else { folder })?;
        (Arc::new(object_store::local::LocalFileSystem::new_with_prefix(local)?), None)
    };
    let listed: Vec<object_store::ObjectMeta> = tokio::runtime::Runtime::new()?
        .block_on(store.list(prefix.as_ref()).try_collect())
        .map_err(|e| format!("cannot list {folder:?} for {file}: {e}"))?;
    let within = |location: &object_store::path::Path| -> String {
        let full = location.as_ref();
        match &prefix {
            Some(prefix) => full.strip_prefix(prefix.as_ref()).unwrap_or(full).trim_start_matches('/').to_owned(),
            None => full.to_owned(),
        }
    };
    let options = glob::MatchOptions { require_literal_separator: true, ..glob::MatchOptions::new() };
    let mut matched: Vec<String> = listed
        .iter()
        .map(|meta| within(&meta.location))
        .filter(|name| pattern.matches_with(name, options))
        .map(|name| format!("{folder}{name}"))
        .collect();
    matched.sort();
    if matched.is_empty() {
        return Err(format!("no file matches {file}").into());
    }
    Ok(matched)
}
