//! `stats`: references per array (by kind, chunks missing, bytes) and per target.

use zarrs_kerchunk::ReferenceStore;
use zarrs_kerchunk_tools::inspect;

use crate::outcome::{Outcome, Result};

pub(crate) fn run(store: &ReferenceStore, json: bool, targets: bool) -> Result {
    let stats = inspect::stats(store)?;
    if json {
        println!("{}", serde_json::to_string_pretty(&stats)?);
        return Ok(Outcome::Done);
    }
    print!("{stats}");
    if targets {
        println!("\n{:>10} {:>14} {:>14}  target", "references", "referenced B", "needed B");
        for target in &stats.targets {
            println!(
                "{:>10} {:>14} {:>14}  {}",
                target.references, target.referenced_bytes, target.needed_bytes, target.url
            );
        }
    }
    Ok(Outcome::Done)
}
