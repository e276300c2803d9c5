//! What every read from an object store must respect, whichever store
//! serves it: a deadline, and one version of each object.
//!
//! Both are here rather than left to the stores because a store given to
//! the builder may have no timeouts of its own, and no store knows that two
//! of its reads belong to one reference set, whose offsets describe one
//! version of each file.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

/// How long one read of one object may take, all its ranges and retries
/// included, unless the builder says otherwise: the created stores' request
/// timeout (60 s) and retry window (30 s), with room to spare.
pub(crate) const DEFAULT_READ_DEADLINE: Duration = Duration::from_mins(2);

/// The rules shared by every read of the sources one resolver hands out.
#[derive(Debug)]
pub(crate) struct ReadPolicy {
    /// The longest one read of one object may take.
    pub(crate) deadline: Duration,
    /// Whether objects are read through a disk cache, which fetches what it
    /// lacks in merged ranges itself: reads then ask for the ranges they
    /// need, never for the bytes between them, so that a warm cache serves
    /// every read whichever way the cold one was merged.
    pub(crate) through_cache: bool,
    /// The ETag first seen for each object, by store and path.
    versions: Mutex<HashMap<String, Arc<str>>>,
}

impl Default for ReadPolicy {
    fn default() -> Self {
        Self::new(DEFAULT_READ_DEADLINE, false)
    }
}

impl ReadPolicy {
    pub(crate) fn new(deadline: Duration, through_cache: bool) -> Self {
        Self { deadline, through_cache, versions: Mutex::default() }
    }

    /// The version of `object` that reads must match, once one was seen.
    pub(crate) fn pinned(&self, object: &str) -> Option<String> {
        self.lock().get(object).map(ToString::to_string)
    }

    /// Check the version a response says it holds against the one pinned
    /// for `object`, pinning it if it is the first. `Err((was, now))` if the
    /// object changed. A response without an ETag cannot be checked.
    pub(crate) fn check(&self, object: &str, seen: Option<&str>) -> Result<(), (String, String)> {
        let Some(seen) = seen else { return Ok(()) };
        let mut versions = self.lock();
        match versions.get(object) {
            Some(pinned) if **pinned != *seen => Err((pinned.to_string(), seen.to_owned())),
            Some(_) => Ok(()),
            None => {
                versions.insert(object.to_owned(), Arc::from(seen));
                Ok(())
            }
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Arc<str>>> {
        self.versions.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_version_seen_is_pinned() {
        let policy = ReadPolicy::default();
        assert_eq!(policy.check("a", None), Ok(()));
        assert_eq!(policy.pinned("a"), None);
        assert_eq!(policy.check("a", Some("v1")), Ok(()));
        assert_eq!(policy.check("a", Some("v1")), Ok(()));
        assert_eq!(policy.check("b", Some("v2")), Ok(()), "objects are pinned separately");
        assert_eq!(policy.check("a", Some("v2")), Err(("v1".into(), "v2".into())));
        assert_eq!(policy.pinned("a").as_deref(), Some("v1"));
    }
}
