//! `scan`: a NetCDF-3 file into references, written as `convert` writes them.

use std::time::Instant;

use clap::Args;

use crate::convert::{Output, location};
use crate::options::Access;
use crate::outcome::{Outcome, Result};

#[derive(Args)]
pub(crate) struct Scan {
    /// The NetCDF-3 file (classic, 64-bit offset or CDF-5): a path or a URL.
    file: String,
    #[command(flatten)]
    output: Output,
    /// Hold arrays of fewer bytes than this in the references (0: none).
    #[arg(long, default_value_t = 100)]
    inline_threshold: u64,
    #[command(flatten)]
    access: Access,
}

impl Scan {
    pub(crate) fn run(self) -> Result {
        let start = Instant::now();
        let registry = self.access.registry();
        let (store, path) = location(&self.file, &registry, false)?;
        let url = self.url_in_references()?;
        let options = kerchunk_scan::ScanOptions::default().with_inline_threshold(self.inline_threshold);
        let scan =
            tokio::runtime::Runtime::new()?.block_on(kerchunk_scan::scan_netcdf3(&store, &path, &url, &options))?;
        let written = self.output.write(&scan.references, &registry)?;
        eprintln!(
            "{written} references to {url} written to {} in {:.2?} ({} requests, {} bytes read)",
            self.output.to,
            start.elapsed(),
            scan.stats.requests,
            scan.stats.bytes
        );
        Ok(Outcome::Done)
    }

    /// How the references name the file: a URL as given; a local file by
    /// its path relative to the references' folder when both are local (so
    /// the two move together), else by its absolute path.
    fn url_in_references(&self) -> std::result::Result<String, Box<dyn std::error::Error>> {
        if self.file.contains("://") {
            return Ok(self.file.clone());
        }
        let file = std::path::absolute(&self.file)?;
        if !self.output.to.contains("://") {
            let output = std::path::absolute(&self.output.to)?;
            if let Some(relative) = output.parent().and_then(|folder| file.strip_prefix(folder).ok()) {
                return Ok(relative.to_string_lossy().replace('\\', "/"));
            }
        }
        Ok(file.to_string_lossy().into_owned())
    }
}
