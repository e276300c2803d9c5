//! Are the targets still there, long enough, and (with pins) unchanged?
//! One metadata request per unique target, a bounded number at a time; no
//! chunk bytes are read.

use std::collections::HashMap;
use std::fmt;
use std::sync::Arc;

use futures::StreamExt;
use serde::Serialize;

use kerchunk::error_chain;
use zarrs_kerchunk::{AsyncReferenceStore, Pin, Pins, ReadError, ReferenceStore};

use super::InspectError;
use super::stats::{Resolution, target_url};
use super::tally::{Tally, TargetUse};

/// Called with the number of targets checked so far and the number to check.
pub type AuditProgress = Arc<dyn Fn(u64, u64) + Send + Sync>;

/// How to audit.
#[derive(Clone)]
pub struct AuditOptions {
    concurrency: usize,
    progress: Option<AuditProgress>,
}

impl Default for AuditOptions {
    fn default() -> Self {
        Self { concurrency: 16, progress: None }
    }
}

impl fmt::Debug for AuditOptions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AuditOptions").field("concurrency", &self.concurrency).finish_non_exhaustive()
    }
}

impl AuditOptions {
    /// Make at most `requests` metadata requests at once (default 16).
    #[must_use]
    pub fn with_concurrency(mut self, requests: usize) -> Self {
        self.concurrency = requests.max(1);
        self
    }

    /// Report progress to `report` after each target.
    #[must_use]
    pub fn with_progress(mut self, report: impl Fn(u64, u64) + Send + Sync + 'static) -> Self {
        self.progress = Some(Arc::new(report));
        self
    }
}

/// What an audit found of one target.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "status", rename_all = "snake_case")]
#[non_exhaustive]
pub enum TargetStatus {
    /// There, long enough, and as pinned (if pinned).
    Ok,
    /// The target does not exist.
    Missing,
    /// The target could not be asked about (network, credentials, ...).
    Unreachable {
        /// The error, with its causes.
        error: String,
    },
    /// The target is shorter than its references need.
    Short {
        /// Its size.
        size: u64,
        /// The largest offset + length of a reference to it.
        needed: u64,
    },
    /// The target is not what its pin recorded.
    Changed {
        /// What differs.
        error: String,
    },
    /// The access policy refuses the target, or its URL cannot be used.
    Refused {
        /// Why.
        error: String,
    },
}

/// One target, as the audit found it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct TargetAudit {
    /// The target's URL, resolved (absolute, rewritten, `file://` for local
    /// files), as pins name it; as written if it cannot be resolved.
    pub url: String,
    /// References to it.
    pub references: u64,
    /// The largest offset + length of a range reference to it.
    pub needed_bytes: u64,
    /// What the target is now (size, ETag, last-modified), if it could be asked.
    pub found: Option<Pin>,
    /// What its pin recorded, if the store has one for it.
    pub pinned: Option<Pin>,
    /// The verdict.
    #[serde(flatten)]
    pub status: TargetStatus,
}

/// The audit of every target of a reference set; see [`audit`].
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct Audit {
    /// Every target, problems first, then by URL.
    pub targets: Vec<TargetAudit>,
    /// How many references are malformed
    /// ([`kerchunk::Reference::Malformed`]): keys whose every read is an error.
    pub malformed_references: u64,
    /// The first 100 of them, in the walk's order.
    pub malformed: Vec<MalformedKey>,
}

/// A key whose reference is malformed.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct MalformedKey {
    /// The key.
    pub key: String,
    /// What is wrong with its reference.
    pub reason: String,
}

impl Audit {
    /// Whether every reference can be read: none is malformed, and every
    /// target is there, long enough and as pinned.
    #[must_use]
    pub fn is_ok(&self) -> bool {
        self.malformed_references == 0 && self.targets.iter().all(|t| t.status == TargetStatus::Ok)
    }

    /// The targets with a problem.
    pub fn problems(&self) -> impl Iterator<Item = &TargetAudit> {
        self.targets.iter().filter(|t| t.status != TargetStatus::Ok)
    }

    /// Pins of every target found well, as it is now: what
    /// [`ReferenceStoreBuilder::with_pins`](zarrs_kerchunk::ReferenceStoreBuilder::with_pins) takes.
    #[must_use]
    pub fn to_pins(&self) -> Pins {
        let mut pins = Pins::default();
        for target in &self.targets {
            if let (TargetStatus::Ok, Some(found)) = (&target.status, &target.found) {
                pins.insert(target.url.clone(), found.clone());
            }
        }
        pins
    }
}

/// Check every target of `store`'s references with one metadata request
/// (`HEAD`, or `fstat` for local files) each: whether it exists, is at least
/// as long as its references need, and, if the store was opened with
/// [`with_pins`](zarrs_kerchunk::ReferenceStoreBuilder::with_pins), is as pinned. Targets are
/// resolved as reads resolve them (templates, rewrites, access policy). No
/// chunk bytes are read.
///
/// # Errors
/// [`InspectError`] if the references cannot be walked. Problems with
/// targets are not errors: they are in the [`Audit`].
pub async fn audit_async(store: &AsyncReferenceStore, options: &AuditOptions) -> Result<Audit, InspectError> {
    let tally = Tally::walk(store).await?;
    let malformed_references = tally.other.malformed + tally.arrays.values().map(|a| a.chunks.malformed).sum::<u64>();
    let malformed = tally.malformed.into_iter().map(|(key, reason)| MalformedKey { key, reason }).collect();
    // Two spellings of one file are one target.
    let mut targets: HashMap<String, (Resolution, TargetUse)> = HashMap::new();
    for (written, usage) in tally.targets {
        let resolution = store.target(written.as_deref());
        let url = target_url(&resolution, written.as_ref());
        targets.entry(url).or_insert_with(|| (resolution, TargetUse::default())).1.merge(&usage);
    }
    let total = targets.len() as u64;
    let mut checked = 0;
    let mut audited: Vec<TargetAudit> = futures::stream::iter(targets)
        .map(|(url, (resolution, usage))| check(url, resolution, usage))
        .buffer_unordered(options.concurrency)
        .inspect(|_| {
            checked += 1;
            if let Some(progress) = &options.progress {
                progress(checked, total);
            }
        })
        .collect()
        .await;
    audited.sort_by(|a, b| (a.status == TargetStatus::Ok, &a.url).cmp(&(b.status == TargetStatus::Ok, &b.url)));
    Ok(Audit { targets: audited, malformed_references, malformed })
}

/// [`audit_async`], on the runtime of a sync store.
///
/// # Errors
/// See [`audit_async`].
pub fn audit(store: &ReferenceStore, options: &AuditOptions) -> Result<Audit, InspectError> {
    let (store_async, options) = (store.to_async(), options.clone());
    store.block_on(async move { audit_async(&store_async, &options).await })?
}

/// Audit the targets of `store` and pin those found well: see
/// [`audit_async`] and [`Audit::to_pins`]. The audit tells which targets
/// could not be pinned.
///
/// # Errors
/// See [`audit_async`].
pub async fn pin_async(store: &AsyncReferenceStore, options: &AuditOptions) -> Result<(Pins, Audit), InspectError> {
    let audit = audit_async(store, options).await?;
    Ok((audit.to_pins(), audit))
}

/// [`pin_async`], on the runtime of a sync store.
///
/// # Errors
/// See [`audit_async`].
pub fn pin(store: &ReferenceStore, options: &AuditOptions) -> Result<(Pins, Audit), InspectError> {
    let audit = audit(store, options)?;
    Ok((audit.to_pins(), audit))
}

async fn check(url: String, resolution: Resolution, usage: TargetUse) -> TargetAudit {
    let mut audited = TargetAudit {
        url,
        references: usage.references,
        needed_bytes: usage.end,
        found: None,
        pinned: None,
        status: TargetStatus::Ok,
    };
    let target = match resolution {
        Ok(target) => target,
        Err(error) => {
            audited.status = TargetStatus::Refused { error: error_chain(&*error) };
            return audited;
        }
    };
    audited.pinned = target.pin().cloned();
    audited.status = match target.observe().await {
        Err(error) if is_not_found(&error) => TargetStatus::Missing,
        Err(error) => TargetStatus::Unreachable { error: error_chain(&error) },
        Ok(found) => {
            let status = match audited.pinned.as_ref().map(|pin| pin.check(&found)) {
                Some(Err(changed)) => TargetStatus::Changed { error: changed.to_string() },
                _ if found.size < usage.end => TargetStatus::Short { size: found.size, needed: usage.end },
                _ => TargetStatus::Ok,
            };
            audited.found = Some(found);
            status
        }
    };
    audited
}

fn is_not_found(error: &ReadError) -> bool {
    match error {
        ReadError::Io { source, .. } => source.kind() == std::io::ErrorKind::NotFound,
        ReadError::ObjectStore(error) => matches!(**error, object_store::Error::NotFound { .. }),
        _ => false,
    }
}

impl fmt::Display for Audit {
    /// One line per problem, then the counts.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for MalformedKey { key, reason } in &self.malformed {
            writeln!(f, "malformed: {key}: {reason}")?;
        }
        if self.malformed_references > 0 {
            let more = self.malformed_references - self.malformed.len() as u64;
            let more = if more > 0 { format!(" ({more} not shown)") } else { String::new() };
            writeln!(f, "{} malformed references{more}: reading them is an error", self.malformed_references)?;
        }
        let mut counts: [(&str, usize); 6] =
            [("ok", 0), ("missing", 0), ("short", 0), ("changed", 0), ("unreachable", 0), ("refused", 0)];
        for target in &self.targets {
            let (index, line) = match &target.status {
                TargetStatus::Ok => (0, None),
                TargetStatus::Missing => (1, Some(format!("missing: {}", target.url))),
                TargetStatus::Short { size, needed } => {
                    (2, Some(format!("short: {} has {size} bytes; its references need {needed}", target.url)))
                }
                TargetStatus::Changed { error } => (3, Some(format!("changed: {}: {error}", target.url))),
                TargetStatus::Unreachable { error } => (4, Some(format!("unreachable: {}: {error}", target.url))),
                TargetStatus::Refused { error } => (5, Some(format!("refused: {}: {error}", target.url))),
            };
            counts[index].1 += 1;
            if let Some(line) = line {
                writeln!(f, "{line}")?;
            }
        }
        let counts: Vec<String> =
            counts.iter().filter(|(_, n)| *n > 0).map(|(what, n)| format!("{n} {what}")).collect();
        writeln!(
            f,
            "{} targets: {}",
            self.targets.len(),
            if counts.is_empty() { "none".into() } else { counts.join(", ") }
        )
    }
}
