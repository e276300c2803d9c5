//! `audit`: every target checked with one metadata request.

use zarrs_kerchunk::ReferenceStore;
use zarrs_kerchunk_tools::encodings::audit_encodings;
use zarrs_kerchunk_tools::inspect::{self, AuditOptions};

use crate::options::{Opening, progress_bar};
use crate::outcome::{Outcome, Result};

pub(crate) fn run(store: &ReferenceStore, json: bool, concurrency: usize) -> Result {
    let (bar, options) = with_progress("auditing targets");
    let options = options.with_concurrency(concurrency);
    let audit = inspect::audit(store, &options)?;
    bar.finish_and_clear();
    if json {
        println!("{}", serde_json::to_string_pretty(&audit)?);
    } else {
        print!("{audit}");
    }
    Ok(if audit.is_ok() { Outcome::Done } else { Outcome::Problems })
}

/// `audit --encodings`: each target's own packing and fill values against the set's.
pub(crate) fn encodings(open: &Opening, json: bool, concurrency: usize) -> Result {
    let store = open.open()?;
    let audit = audit_encodings(&store, &open.refs, &open.registry()?, concurrency)?;
    if json {
        println!("{}", serde_json::to_string_pretty(&audit)?);
    } else {
        print!("{audit}");
    }
    Ok(if audit.is_ok() { Outcome::Done } else { Outcome::Problems })
}

/// Audit options that move a progress bar, and the bar.
pub(crate) fn with_progress(message: &'static str) -> (indicatif::ProgressBar, AuditOptions) {
    let bar = progress_bar(message);
    let progress = bar.clone();
    let options = AuditOptions::default().with_progress(move |done, total| {
        progress.set_length(total);
        progress.set_position(done);
    });
    (bar, options)
}
