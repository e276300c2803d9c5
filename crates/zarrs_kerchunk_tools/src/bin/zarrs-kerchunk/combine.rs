//! `combine`: reference sets that already exist (kerchunk's per-file JSONs, `VirtualiZarr`'s,
//! parquet roots, icechunk repositories, ours) made one set, as `scan --concat` combines files.

use std::sync::Arc;
use std::time::Instant;

use clap::Args;
use zarrs_kerchunk_tools::make::{MakeError, combine_sets, expand};

use crate::combining::CombineArgs;
use crate::convert::Output;
use crate::options::{HowToOpen, progress_bar};
use crate::outcome::{Outcome, Result};

#[derive(Args)]
pub(crate) struct Combine {
    /// The reference sets: JSON files (v0 or v1, plain, gzip or zstd) or parquet roots, paths or
    /// URLs, or patterns of them (`'refs/*.json'`), or icechunk repositories (`icechunk://PATH`).
    /// Each set's relative URLs and templates are resolved as it reads them.
    #[arg(required = true)]
    refs: Vec<String>,
    /// Where to write (as for `convert`): a parquet root if it ends in `.parq`, `.parquet` or `/`,
    /// zstd JSON if in `.zst`, else JSON. A local path or a URL. Local targets are named
    /// relative to its folder when they lie under it, else by their absolute paths.
    #[arg(long, short, value_name = "OUTPUT")]
    output: String,
    #[command(flatten)]
    combining: CombineArgs,
    #[command(flatten)]
    format: Output,
    #[command(flatten)]
    open: HowToOpen,
}

impl Combine {
    pub(crate) fn run(self) -> Result {
        let start = Instant::now();
        let registry = Arc::new(self.open.registry());
        let mut sets = Vec::new();
        for refs in &self.refs {
            // icechunk repositories are not patterns: `@` and the rest as written.
            if refs.starts_with("icechunk") {
                sets.push(refs.clone());
            } else {
                sets.extend(expand(refs, &registry)?);
            }
        }
        let Some(combining) = self.combining.combining()? else {
            return Err(MakeError::NeedsConcat.into());
        };
        let builder = self.open.builder()?;
        let bar = progress_bar("sets read");
        bar.set_length(sets.len() as u64);
        let open = |location: &str| {
            self.open.open(location, &builder).map_err(|e| MakeError::Input {
                location: location.to_owned(),
                reason: format!("cannot open it: {}", kerchunk::error_chain(e.as_ref())),
            })
        };
        let memory = self.combining.memory();
        let combined =
            combine_sets(&sets, open, &combining, &self.output, Arc::clone(&registry), memory, || bar.inc(1))?;
        bar.finish_and_clear();
        let written = self.format.write(combined.references.as_ref(), &self.output, &registry)?;
        eprintln!(
            "{written} references of {} set(s) written to {} in {:.2?}",
            combined.sets.len(),
            self.output,
            start.elapsed()
        );
        Ok(Outcome::Done)
    }
}
