//! `combine`: reference sets that already exist (kerchunk's per-file JSONs, `VirtualiZarr`'s,
//! parquet roots, icechunk repositories, ours) made one set, as `scan --concat` combines files.

use std::sync::Arc;
use std::time::Instant;

use clap::Args;
use zarrs_kerchunk_tools::make::{MakeError, append_sets, combine_sets, expand, load_references};

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
    /// relative to its folder when they lie under it, else by their absolute paths. With
    /// `--append-to`, that set unless given.
    #[arg(long, short, value_name = "OUTPUT", required_unless_present = "append_to")]
    output: Option<String>,
    /// Add the sets to this reference set (JSON or parquet) made by combining (`scan --concat`
    /// or `combine --concat`), combined as it records: the sets it has are not read again, and
    /// it is written again in place (or to `--output`).
    #[arg(long, value_name = "REFS", conflicts_with_all = ["concat", "coord", "merge", "units"])]
    append_to: Option<String>,
    /// With `--append-to`, leave out sets the set records already (else an error).
    #[arg(long, requires = "append_to")]
    skip_existing: bool,
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
        let registry = Arc::new(self.open.registry()?);
        let mut sets = Vec::new();
        for refs in &self.refs {
            // icechunk repositories are not patterns: `@` and the rest as written.
            if refs.starts_with("icechunk") {
                sets.push(refs.clone());
            } else {
                sets.extend(expand(refs, &registry)?);
            }
        }
        let output = self.output.clone().or_else(|| self.append_to.clone()).unwrap_or_default();
        let builder = self.open.builder()?;
        let bar = progress_bar("sets read");
        bar.set_length(sets.len() as u64);
        let open = |location: &str| {
            self.open.open(location, &builder).map_err(|e| MakeError::Input {
                location: location.to_owned(),
                reason: format!("cannot open it: {}", kerchunk::error_chain(e.as_ref())),
            })
        };
        let (sets, references) = if let Some(location) = &self.append_to {
            let existing = load_references(self.open.open(location, &builder)?.source().as_ref(), location)?;
            let registry = Arc::clone(&registry);
            let (added, appended) =
                append_sets(existing, location, &sets, self.skip_existing, open, &output, registry)?;
            (added, appended.into_source())
        } else {
            let Some(combining) = self.combining.combining()? else {
                return Err(MakeError::NeedsConcat.into());
            };
            let memory = self.combining.memory();
            let combined =
                combine_sets(&sets, open, &combining, &output, Arc::clone(&registry), memory, || bar.inc(1))?;
            (combined.sets, combined.references)
        };
        bar.finish_and_clear();
        let (written, records) =
            self.format.write_result(references.as_ref(), &output, self.append_to.as_deref(), &registry)?;
        eprintln!(
            "{written} references of {} set(s) written to {output} in {:.2?}{records}",
            sets.len(),
            start.elapsed()
        );
        Ok(Outcome::Done)
    }
}
