//! Pins: the size, ETag and last-modified time of each target, recorded when
//! the references were known to be good, so that a later read of a changed
//! target is an error rather than other bytes at the same offsets.
//!
//! A pinned read costs no extra request: object stores are asked with
//! `If-Match` (or `If-Unmodified-Since` where there is no ETag) and the
//! answer's metadata is checked on arrival; local files are checked against
//! the `fstat` every local read already makes.

use std::collections::BTreeMap;
use std::fmt;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use url::Url;

use crate::error::ReadError;

/// The format's name and version, written first in every pin file.
const FORMAT: &str = "zarrs_kerchunk pins 1";

/// What one target was when it was pinned.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Pin {
    /// The size in bytes.
    pub size: u64,
    /// The ETag, if the store gives one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub etag: Option<String>,
    /// The last-modified time, if the store gives one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_modified: Option<DateTime<Utc>>,
}

impl Pin {
    /// A pin of a target of `size` bytes with this ETag and last-modified time.
    #[must_use]
    pub fn new(size: u64, etag: Option<String>, last_modified: Option<DateTime<Utc>>) -> Self {
        Self { size, etag, last_modified }
    }

    /// Check what a read found against the pin: the ETag if both have one,
    /// else the last-modified time if both have one; and always the size.
    ///
    /// # Errors
    /// [`ReadError::Stale`], naming what the pin recorded and what was found.
    pub fn check(&self, found: &Pin) -> Result<(), ReadError> {
        let same_version = match (&self.etag, &found.etag, self.last_modified, found.last_modified) {
            (Some(pinned), Some(seen), _, _) => pinned == seen,
            (_, _, Some(pinned), Some(seen)) => pinned == seen,
            _ => true,
        };
        if same_version && self.size == found.size {
            Ok(())
        } else {
            Err(ReadError::Stale { pinned: self.to_string(), found: found.to_string() })
        }
    }
}

impl fmt::Display for Pin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} bytes", self.size)?;
        if let Some(etag) = &self.etag {
            write!(f, ", ETag {etag}")?;
        }
        if let Some(time) = &self.last_modified {
            write!(f, ", last modified {}", time.to_rfc3339())?;
        }
        Ok(())
    }
}

/// The pins of a reference set's targets, by URL (as resolved: absolute,
/// `file://` for local files), with the prefixes whose targets are read
/// unpinned.
///
/// Written as a JSON sidecar next to the references by
/// `zarrs_kerchunk_tools::inspect::pin` or `zarrs-kerchunk pin`, and given to
/// [`ReferenceStoreBuilder::with_pins`](crate::ReferenceStoreBuilder::with_pins).
///
/// ```
/// use zarrs_kerchunk::{Pin, Pins};
/// let mut pins = Pins::default();
/// pins.insert("s3://bucket/a.nc", Pin::new(1024, Some("\"e1\"".into()), None));
/// let text = pins.to_json();
/// assert_eq!(Pins::from_json(&text)?.get("s3://bucket/a.nc"), pins.get("s3://bucket/a.nc"));
/// # Ok::<(), zarrs_kerchunk::PinsError>(())
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Pins {
    targets: BTreeMap<String, Pin>,
    /// Folders (URLs ending in `/`) whose targets are not checked.
    relaxed: Vec<Url>,
}

/// A pin file that cannot be read.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum PinsError {
    /// Not JSON, or not a pin file.
    #[error("not a zarrs_kerchunk pin file: {0}")]
    Format(#[source] serde_json::Error),
    /// A pin file of another format version.
    #[error("a pin file of format {found:?}; this version reads {FORMAT:?}")]
    Version {
        /// The format the file names.
        found: String,
    },
    /// A relaxed prefix that is not a folder URL.
    #[error("cannot relax pins under {prefix:?}: {reason}")]
    Prefix {
        /// The prefix as given.
        prefix: String,
        /// What is wrong with it.
        reason: String,
    },
}

#[derive(Serialize, Deserialize)]
struct PinFile {
    format: String,
    targets: BTreeMap<String, Pin>,
}

impl Pins {
    /// The pin of the target at `url`, unless none was recorded or its prefix is relaxed.
    #[must_use]
    pub fn get(&self, url: &str) -> Option<&Pin> {
        let pin = self.targets.get(url)?;
        let relaxed = !self.relaxed.is_empty()
            && Url::parse(url).is_ok_and(|url| self.relaxed.iter().any(|prefix| super::lies_under(prefix, &url)));
        (!relaxed).then_some(pin)
    }

    /// Pin the target at `url`.
    pub fn insert(&mut self, url: impl Into<String>, pin: Pin) {
        self.targets.insert(url.into(), pin);
    }

    /// The number of pinned targets.
    #[must_use]
    pub fn len(&self) -> usize {
        self.targets.len()
    }

    /// Whether no target is pinned.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.targets.is_empty()
    }

    /// Every pinned target, by URL.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &Pin)> {
        self.targets.iter().map(|(url, pin)| (url.as_str(), pin))
    }

    /// Read targets under the folder `prefix` (a URL ending in `/`) without
    /// checking their pins: for archives that rewrite files without changing
    /// their content.
    ///
    /// # Errors
    /// [`PinsError::Prefix`] if `prefix` is not a URL of a folder.
    pub fn relax_under(&mut self, prefix: &str) -> Result<(), PinsError> {
        let invalid = |reason: String| PinsError::Prefix { prefix: prefix.to_owned(), reason };
        let url = Url::parse(prefix).map_err(|e| invalid(e.to_string()))?;
        if !url.path().ends_with('/') {
            return Err(invalid("a prefix names a folder and ends with '/'".into()));
        }
        self.relaxed.push(url);
        Ok(())
    }

    /// The pin file: JSON, one target per line.
    #[must_use]
    #[expect(clippy::missing_panics_doc, reason = "strings, integers and times always serialise")]
    pub fn to_json(&self) -> String {
        let file = PinFile { format: FORMAT.to_owned(), targets: self.targets.clone() };
        serde_json::to_string_pretty(&file).expect("pins serialise: strings, integers and times")
    }

    /// Read a pin file.
    ///
    /// # Errors
    /// [`PinsError`] if `text` is not a pin file of this format.
    pub fn from_json(text: &str) -> Result<Self, PinsError> {
        let file: PinFile = serde_json::from_str(text).map_err(PinsError::Format)?;
        if file.format != FORMAT {
            return Err(PinsError::Version { found: file.format });
        }
        Ok(Self { targets: file.targets, relaxed: Vec::new() })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[expect(clippy::unnecessary_wraps, reason = "pins hold an optional time")]
    fn time(text: &str) -> Option<DateTime<Utc>> {
        Some(DateTime::parse_from_rfc3339(text).unwrap().with_timezone(&Utc))
    }

    #[test]
    fn a_pin_checks_the_etag_else_the_time_and_always_the_size() {
        let tagged = Pin::new(10, Some("\"a\"".into()), time("2026-01-01T00:00:00Z"));
        assert!(tagged.check(&Pin::new(10, Some("\"a\"".into()), time("2026-05-01T00:00:00Z"))).is_ok());
        let err = tagged.check(&Pin::new(10, Some("\"b\"".into()), None)).unwrap_err();
        assert!(err.to_string().contains("ETag \"a\"") && err.to_string().contains("ETag \"b\""), "{err}");
        assert!(tagged.check(&Pin::new(11, Some("\"a\"".into()), None)).is_err());
        let timed = Pin::new(10, None, time("2026-01-01T00:00:00Z"));
        assert!(timed.check(&Pin::new(10, None, time("2026-01-01T00:00:00Z"))).is_ok());
        assert!(timed.check(&Pin::new(10, None, time("2026-01-02T00:00:00Z"))).is_err());
        assert!(timed.check(&Pin::new(10, None, None)).is_ok(), "nothing to compare but the size");
    }

    #[test]
    fn pin_files_round_trip_and_prefixes_relax() {
        let mut pins = Pins::default();
        pins.insert("s3://b/keep/a.nc", Pin::new(1, Some("\"x\"".into()), None));
        pins.insert("s3://b/loose/a.nc", Pin::new(2, None, time("2026-01-01T00:00:00Z")));
        let mut read = Pins::from_json(&pins.to_json()).unwrap();
        assert_eq!(read, pins);
        read.relax_under("s3://b/loose/").unwrap();
        assert!(read.get("s3://b/keep/a.nc").is_some());
        assert!(read.get("s3://b/loose/a.nc").is_none());
        assert!(read.relax_under("s3://b/loose").is_err());
        assert!(matches!(Pins::from_json("{\"format\": \"other\", \"targets\": {}}"), Err(PinsError::Version { .. })));
        assert!(matches!(Pins::from_json("[]"), Err(PinsError::Format(_))));
    }
}
