//! Targets that moved: URL prefixes replaced after templates, `gen` and
//! relative resolution, before the access policy, so that data copied to
//! another bucket, a mirror or a local folder is read without regenerating
//! the references.

use url::Url;

use super::Location;
use crate::error::ResolveError;

/// Replace the prefix `from` of target URLs with `to`.
#[derive(Clone, Debug)]
pub(crate) struct UrlRewrite {
    /// A folder (ending in `/`), or one whole URL.
    from: Url,
    to: Url,
}

impl UrlRewrite {
    /// A rewrite from the location `from` to `to`, as a user writes them
    /// (URLs or local paths). A folder (ending in `/`) is rewritten to a
    /// folder; anything else names one file.
    pub(crate) fn new(from: &str, to: &str) -> Result<Self, ResolveError> {
        let url = |text: &str| -> Result<Url, ResolveError> {
            let mut url = Location::parse(text)?.normalized()?.to_url()?;
            // `Location` keeps no trailing `/` on local folders; the user's text says what was meant.
            if text.ends_with('/') && !url.path().ends_with('/') {
                url.set_path(&format!("{}/", url.path()));
            }
            Ok(url)
        };
        let (from, to) = (url(from)?, url(to)?);
        if from.path().ends_with('/') != to.path().ends_with('/') {
            return Err(ResolveError::InvalidLocation {
                location: format!("{from} -> {to}"),
                reason: "a rewrite maps a folder (ending in '/') to a folder, or a file to a file".into(),
            });
        }
        Ok(Self { from, to })
    }

    /// The length of the prefix this rewrite replaces in `url`, if it applies.
    fn matches(&self, url: &Url) -> Option<usize> {
        let from = self.from.as_str();
        let applies = if from.ends_with('/') { url.as_str().starts_with(from) } else { url.as_str() == from };
        applies.then_some(from.len())
    }
}

/// Apply the rewrite with the longest matching prefix to `target`, if any;
/// a rewritten target must stay inside its new folder.
pub(crate) fn rewrite(rewrites: &[UrlRewrite], target: Location) -> Result<Location, ResolveError> {
    if rewrites.is_empty() {
        return Ok(target);
    }
    let url = target.to_url()?;
    let Some((rewrite, len)) =
        rewrites.iter().filter_map(|r| r.matches(&url).map(|len| (r, len))).max_by_key(|(_, len)| *len)
    else {
        return Ok(target);
    };
    let moved = format!("{}{}", rewrite.to, &url.as_str()[len..]);
    let invalid = |reason: &str| ResolveError::InvalidLocation {
        location: url.to_string(),
        reason: format!("rewritten from {} to {}: {moved} {reason}", rewrite.from, rewrite.to),
    };
    let location = Location::parse(&moved).and_then(Location::normalized).map_err(|e| invalid(&e.to_string()))?;
    // A `%2F..` in the rest of a URL decodes into a climb out of a local folder.
    let inside = rewrite.to.as_str() == moved || super::lies_under(&rewrite.to, &location.to_url()?);
    if !inside {
        return Err(invalid("leaves the folder it was rewritten to"));
    }
    Ok(location)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn apply(rewrites: &[UrlRewrite], text: &str) -> Result<String, ResolveError> {
        rewrite(rewrites, Location::parse(text).unwrap()).map(|l| l.to_string())
    }

    #[test]
    fn the_longest_prefix_wins_and_folders_stay_folders() {
        let rewrites = [
            UrlRewrite::new("s3://old/", "https://mirror.example.org/data/").unwrap(),
            UrlRewrite::new("s3://old/special/", "/copy/special/").unwrap(),
            UrlRewrite::new("s3://one/file.nc", "s3://two/renamed.nc").unwrap(),
        ];
        assert_eq!(apply(&rewrites, "s3://old/a/b.nc").unwrap(), "https://mirror.example.org/data/a/b.nc");
        assert_eq!(apply(&rewrites, "s3://old/special/x.nc").unwrap(), "/copy/special/x.nc");
        assert_eq!(apply(&rewrites, "s3://one/file.nc").unwrap(), "s3://two/renamed.nc");
        assert_eq!(apply(&rewrites, "s3://one/file.nc4").unwrap(), "s3://one/file.nc4", "a file is matched whole");
        assert_eq!(apply(&rewrites, "s3://older/a.nc").unwrap(), "s3://older/a.nc", "a folder is matched whole");
        assert_eq!(apply(&rewrites, "/data/a.nc").unwrap(), "/data/a.nc");
        assert!(UrlRewrite::new("s3://old/", "s3://new/file.nc").is_err());
    }

    #[test]
    fn a_rewritten_target_cannot_climb_out_of_its_new_folder() {
        let rewrites = [UrlRewrite::new("s3://old/", "/copy/").unwrap()];
        assert_eq!(apply(&rewrites, "s3://old/a%20b.nc").unwrap(), "/copy/a b.nc");
        let err = apply(&rewrites, "s3://old/a%2F..%2F..%2Fetc/passwd").unwrap_err();
        assert!(err.to_string().contains("leaves the folder"), "{err}");
    }
}
