//! What one reference document may cost: explicit limits, checked before
//! anything is allocated in proportion to a number the document gives, and a
//! budget that every template render of the document draws on.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// A document's template budget is spent.
#[derive(Debug, thiserror::Error)]
#[error("the document's templates need more than {limit} {what} ({method})")]
pub(crate) struct OverBudget {
    what: &'static str,
    limit: u64,
    method: &'static str,
}

/// Limits on what one reference document may make the reader do, with
/// defaults a laptop survives and that every real reference set seen so far
/// (10^7 references, 700 MB of JSON) stays inside.
///
/// What they bound, measured with the defaults (release build, 2-core VM):
/// explicit references cost about 8 bytes of memory per byte of document at
/// most (2 × 10^6 one-byte inline values under short keys: 29 MB of JSON,
/// 226 MB resident, 1.3 s), and 20 bytes a chunk once an array's `.zarray`
/// is known. `gen` multiplies a document of a few bytes into many references:
/// at most 10^7 of them and 1 GiB of rendered keys and URLs, which cost at
/// most about 1 GiB of memory for the references and 7 s of native rendering
/// (10^7 keys outside any chunk grid: 1.0 GiB resident, 6.7 s; in a chunk
/// grid: 0.2 GiB), plus the template budgets of fuel and time.
///
/// ```
/// use kerchunk::{Limits, ParseOptions};
/// let limits = Limits::default().with_max_document_bytes(64 << 20).with_max_generated_references(1_000_000);
/// let options = ParseOptions::default().with_limits(limits);
/// # let _ = options;
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    pub(crate) document_bytes: u64,
    pub(crate) generated_references: u64,
    pub(crate) generated_bytes: u64,
    pub(crate) template_fuel: u64,
    pub(crate) template_time: Duration,
    pub(crate) key_bytes: usize,
    pub(crate) chunk_bytes: u64,
}

impl Default for Limits {
    /// A 2 GiB document (after decompression); 10^7 generated references and
    /// 1 GiB of generated text; 10^8 units of template work (minijinja's fuel,
    /// about a second of CPU) and 60 s of template rendering for the whole
    /// document; keys `gen` renders of at most 1 KiB; 2 GiB chunks.
    fn default() -> Self {
        Self {
            document_bytes: 2 << 30,
            generated_references: 10_000_000,
            generated_bytes: 1 << 30,
            template_fuel: 100_000_000,
            template_time: Duration::from_mins(1),
            key_bytes: 1024,
            chunk_bytes: 2 << 30,
        }
    }
}

impl Limits {
    /// The largest reference document, in bytes, as stored and after
    /// decompression; also the largest parquet `.zmetadata` or record file. A
    /// remote document is refused from its size, or once that many bytes have
    /// arrived; a compressed one is decompressed only that far.
    #[must_use]
    pub fn with_max_document_bytes(mut self, bytes: u64) -> Self {
        self.document_bytes = bytes;
        self
    }

    /// The most references `gen` entries may generate in total. A document
    /// that would generate more is rejected before any is rendered.
    #[must_use]
    pub fn with_max_generated_references(mut self, references: u64) -> Self {
        self.generated_references = references;
        self
    }

    /// The most text (keys and URLs) templates and `gen` may render for one document.
    #[must_use]
    pub fn with_max_generated_bytes(mut self, bytes: u64) -> Self {
        self.generated_bytes = bytes;
        self
    }

    /// The most template work (minijinja fuel, across every render of the
    /// document, function templates included) one document may use.
    #[must_use]
    pub fn with_max_template_fuel(mut self, fuel: u64) -> Self {
        self.template_fuel = fuel;
        self
    }

    /// The most time the template engine may spend rendering one document,
    /// across every render (`gen` and function templates included). Fuel
    /// counts the engine's instructions, and a builtin can do much work in
    /// one (`range(100000)|sum`); this bounds what such renders cost in all.
    /// Templates rendered natively (plain names and integer arithmetic, what
    /// nearly every real `gen` uses) are not timed: they cost microseconds.
    #[must_use]
    pub fn with_max_template_time(mut self, time: Duration) -> Self {
        self.template_time = time;
        self
    }

    /// The longest key `gen` may render, in bytes. No Zarr key is longer than
    /// a few hundred bytes; a longer one is an error naming the entry,
    /// before it is stored.
    #[must_use]
    pub fn with_max_key_bytes(mut self, bytes: usize) -> Self {
        self.key_bytes = bytes;
        self
    }

    /// The largest chunk an array may declare: its `chunks` times the size of
    /// its dtype. A larger one is refused when its `.zarray` is read, before
    /// anything is allocated for it.
    #[must_use]
    pub fn with_max_chunk_bytes(mut self, bytes: u64) -> Self {
        self.chunk_bytes = bytes;
        self
    }

    /// The largest chunk an array may declare, in bytes.
    #[must_use]
    pub fn max_chunk_bytes(&self) -> u64 {
        self.chunk_bytes
    }

    /// The largest document (or parquet metadata or record file), in bytes.
    #[must_use]
    pub fn max_document_bytes(&self) -> u64 {
        self.document_bytes
    }
}

/// What is left of one document's template budget, shared by every render
/// (function templates run in environments of their own, on other threads'
/// stacks, hence atomics).
#[derive(Debug)]
pub(crate) struct Budget {
    fuel: AtomicU64,
    bytes: AtomicU64,
    /// Rendering time left, in nanoseconds.
    nanos: AtomicU64,
    limits: Limits,
}

impl Budget {
    pub(crate) fn new(limits: Limits) -> Self {
        Self {
            fuel: AtomicU64::new(limits.template_fuel),
            bytes: AtomicU64::new(limits.generated_bytes),
            nanos: AtomicU64::new(u64::try_from(limits.template_time.as_nanos()).unwrap_or(u64::MAX)),
            limits,
        }
    }

    /// Whether rendering time is left.
    pub(crate) fn has_time(&self) -> bool {
        self.nanos.load(Ordering::Relaxed) > 0
    }

    /// Spend the time since `started`; an error once the document's rendering time is gone.
    pub(crate) fn spend_time(&self, started: Instant) -> Result<(), OverBudget> {
        let spent = u64::try_from(started.elapsed().as_nanos()).unwrap_or(u64::MAX);
        take(&self.nanos, spent).map_err(|()| self.out_of_time())
    }

    /// The longest key `gen` may render.
    pub(crate) fn max_key_bytes(&self) -> usize {
        self.limits.key_bytes
    }

    /// The error for a document whose rendering time is gone.
    pub(crate) fn out_of_time(&self) -> OverBudget {
        OverBudget {
            what: "milliseconds of rendering",
            limit: u64::try_from(self.limits.template_time.as_millis()).unwrap_or(u64::MAX),
            method: "Limits::with_max_template_time",
        }
    }

    /// The fuel one render may use at most: what is left, up to `per_render`.
    pub(crate) fn fuel_for_render(&self, per_render: u64) -> u64 {
        self.fuel.load(Ordering::Relaxed).min(per_render)
    }

    /// Spend `fuel`; an error once the document's budget is gone.
    pub(crate) fn spend_fuel(&self, fuel: u64) -> Result<(), OverBudget> {
        take(&self.fuel, fuel).map_err(|()| OverBudget {
            what: "units of work",
            limit: self.limits.template_fuel,
            method: "Limits::with_max_template_fuel",
        })
    }

    /// Spend `bytes` of rendered text; an error once the document's budget is gone.
    pub(crate) fn spend_bytes(&self, bytes: usize) -> Result<(), OverBudget> {
        take(&self.bytes, bytes as u64).map_err(|()| OverBudget {
            what: "bytes of rendered text",
            limit: self.limits.generated_bytes,
            method: "Limits::with_max_generated_bytes",
        })
    }
}

/// Take `amount` from `left`, or fail (leaving nothing) if there is not that much.
fn take(left: &AtomicU64, amount: u64) -> Result<(), ()> {
    let mut current = left.load(Ordering::Relaxed);
    loop {
        let Some(rest) = current.checked_sub(amount) else {
            left.store(0, Ordering::Relaxed);
            return Err(());
        };
        match left.compare_exchange_weak(current, rest, Ordering::Relaxed, Ordering::Relaxed) {
            Ok(_) => return Ok(()),
            Err(now) => current = now,
        }
    }
}
