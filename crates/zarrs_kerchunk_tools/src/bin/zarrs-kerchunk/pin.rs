//! `pin`: each target's size, ETag and last-modified time, in a pin file.

use std::path::PathBuf;

use zarrs_kerchunk_tools::inspect;

use crate::options::Opening;
use crate::outcome::{Outcome, Result};

pub(crate) fn run(open: &Opening, output: Option<PathBuf>) -> Result {
    let output = match output {
        Some(output) => output,
        None if !open.refs.contains("://") => format!("{}.pins.json", open.refs.trim_end_matches('/')).into(),
        None => return Err("the references are remote: say where to write the pins with --output".into()),
    };
    let store = open.open()?;
    let (bar, options) = crate::audit::with_progress("pinning targets");
    let (pins, audit) = inspect::pin(&store, &options)?;
    bar.finish_and_clear();
    std::fs::write(&output, pins.to_json()).map_err(|e| format!("cannot write {}: {e}", output.display()))?;
    println!("pinned {} of {} targets in {}", pins.len(), audit.targets.len(), output.display());
    // Malformed references have nothing to pin: the audit's target problems alone matter here.
    if audit.problems().next().is_none() {
        Ok(Outcome::Done)
    } else {
        print!("not pinned:\n{audit}");
        Ok(Outcome::Problems)
    }
}
