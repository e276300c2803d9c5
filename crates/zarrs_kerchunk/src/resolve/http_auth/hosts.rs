//! Which hosts (and, for a URL prefix, which paths on them) a header, a token or a login is sent to.

use std::fmt;

use url::Url;

/// A host a credential is for: `data.example.com` (any port),
/// `data.example.com:8443` (that port only) or `*.example.com` (every host
/// below `example.com`, not `example.com` itself). A URL is taken for its
/// host, explicit port and path: `https://data.example.com/archive/` is that
/// host's URLs under `/archive/` only.
#[derive(Clone, PartialEq, Eq)]
pub(crate) struct HostPattern {
    host: String,
    port: Option<u16>,
    subdomains: bool,
    /// The path's segments a URL's must begin with; none for the whole host.
    path: Vec<String>,
}

impl HostPattern {
    /// Parse `text`, or say why it is not a host.
    pub(crate) fn parse(text: &str) -> Result<Self, String> {
        let trimmed = text.trim();
        if trimmed.contains("://") {
            let url = Url::parse(trimmed).map_err(|e| format!("not a URL: {e}"))?;
            let host = url.host_str().ok_or("a URL without a host")?;
            let path = segments(&url).map(str::to_owned).collect();
            return Ok(Self { host: host.to_ascii_lowercase(), port: url.port(), subdomains: false, path });
        }
        let (subdomains, rest) = match trimmed.strip_prefix("*.") {
            Some(rest) => (true, rest),
            None => (false, trimmed),
        };
        // Parsing as a URL's authority checks the host and port as a client will see them.
        let url = Url::parse(&format!("https://{rest}/")).map_err(|e| format!("not a host: {e}"))?;
        let host = url.host_str().filter(|h| !h.is_empty()).ok_or("not a host")?;
        if url.path() != "/" || url.query().is_some() || !url.username().is_empty() || rest.contains('@') {
            return Err("a host, such as data.example.com, *.example.com or data.example.com:8443".to_owned());
        }
        // `Url` drops :443 for https; keep a port that was written.
        let port = url.port().or_else(|| rest.rsplit_once(':').and_then(|(_, p)| p.parse().ok()));
        Ok(Self { host: host.to_ascii_lowercase(), port, subdomains, path: Vec::new() })
    }

    /// Whether a request to `url` may carry what this pattern is for.
    pub(crate) fn matches(&self, url: &Url) -> bool {
        let Some(host) = url.host_str() else { return false };
        let host = host.to_ascii_lowercase();
        let host_matches = if self.subdomains {
            host.strip_suffix(self.host.as_str()).is_some_and(|head| head.len() > 1 && head.ends_with('.'))
        } else {
            host == self.host
        };
        let mut path = segments(url);
        host_matches
            && self.port.is_none_or(|port| url.port_or_known_default() == Some(port))
            && self.path.iter().all(|segment| path.next() == Some(segment.as_str()))
    }

    /// How much of a URL this pattern pins down: where several give the same header, the
    /// longest prefix wins.
    pub(crate) fn specificity(&self) -> usize {
        self.path.len()
    }

    /// Whether this is the one host `name` names (for a `.netrc` machine).
    pub(crate) fn is_host(&self, name: &str) -> bool {
        !self.subdomains && self.port.is_none() && self.path.is_empty() && self.host.eq_ignore_ascii_case(name)
    }
}

impl fmt::Display for HostPattern {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.subdomains {
            f.write_str("*.")?;
        }
        f.write_str(&self.host)?;
        if let Some(port) = self.port {
            write!(f, ":{port}")?;
        }
        self.path.iter().try_for_each(|segment| write!(f, "/{segment}"))
    }
}

impl fmt::Debug for HostPattern {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

/// The non-empty segments of `url`'s path.
fn segments(url: &Url) -> impl Iterator<Item = &str> {
    url.path().split('/').filter(|segment| !segment.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn url(text: &str) -> Url {
        Url::parse(text).unwrap()
    }

    #[test]
    fn hosts_match_by_name_port_and_subdomain() {
        let exact = HostPattern::parse("Data.Example.com").unwrap();
        assert!(exact.matches(&url("https://data.example.com/a.nc")));
        assert!(exact.matches(&url("http://DATA.example.com:8080/a.nc")));
        assert!(!exact.matches(&url("https://data.example.com.evil.net/a.nc")));
        assert!(!exact.matches(&url("https://other.example.com/a.nc")));

        let port = HostPattern::parse("127.0.0.2:8443").unwrap();
        assert!(port.matches(&url("http://127.0.0.2:8443/x")));
        assert!(!port.matches(&url("http://127.0.0.2:8444/x")));
        assert!(HostPattern::parse("example.com:443").unwrap().matches(&url("https://example.com/x")));

        let below = HostPattern::parse("*.earthdata.nasa.gov").unwrap();
        assert!(below.matches(&url("https://urs.earthdata.nasa.gov/oauth")));
        assert!(!below.matches(&url("https://earthdata.nasa.gov/")));
        assert!(!below.matches(&url("https://evilearthdata.nasa.gov/")));
        assert!(!below.matches(&url("https://bucket.s3.amazonaws.com/?earthdata.nasa.gov")));

        let from_url = HostPattern::parse("https://data.example.com:8443/some/path/").unwrap();
        assert_eq!(from_url.to_string(), "data.example.com:8443/some/path");
        assert!(from_url.matches(&url("https://data.example.com:8443/some/path/a.nc")));
        assert!(!from_url.matches(&url("https://data.example.com:8443/some/pathology/a.nc")));
        assert!(!from_url.matches(&url("https://data.example.com:8443/other/a.nc")));
        assert_eq!((from_url.specificity(), exact.specificity()), (2, 0));
    }

    #[test]
    fn what_is_not_a_host_is_refused() {
        for text in ["", "*.", "a b", "host/path", "user@host", "host:port"] {
            assert!(HostPattern::parse(text).is_err(), "{text:?} was taken for a host");
        }
    }
}
