//! What HTTP(S) stores send, and to whom: bearer tokens and headers for
//! the hosts they are given for, logins from a `.netrc` file, and the
//! cookies of a login, kept for the session.
//!
//! Stores made with [`HttpCredentials`] follow redirects themselves
//! ([`connector`]), so that every hop gets what is meant for its host and
//! nothing else: a data host's token never reaches the signed object-store
//! URL it redirects to, and a `.netrc` password is sent only to the machine
//! it names. This is the flow NASA Earthdata Login uses: a data host
//! redirects to the login host, which takes the `.netrc` login and redirects
//! back with a cookie.

mod connector;
mod hosts;

use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use base64::Engine as _;
use http::header::AUTHORIZATION;
use http::{HeaderName, HeaderValue};
use url::Url;

pub(crate) use connector::CredentialsConnector;
use hosts::HostPattern;

/// The hosts an Earthdata Login bearer token is sent to unless told
/// otherwise: NASA Earthdata's distribution and login hosts.
pub const EARTHDATA_HOSTS: [&str; 2] = ["*.earthdata.nasa.gov", "*.earthdatacloud.nasa.gov"];

/// Why [`HttpCredentials`] could not take a token, a header or a login.
/// No variant holds a token, a header's value or a password.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum HttpCredentialsError {
    /// A host a credential is for is not one.
    #[error("{host:?} is not a host a credential can be for: {reason}")]
    InvalidHost {
        /// The host as written.
        host: String,
        /// What is wrong with it.
        reason: String,
    },
    /// A header's name or value cannot be sent.
    #[error("the header {name:?} for {host} cannot be sent: {reason}")]
    InvalidHeader {
        /// The host it is for.
        host: String,
        /// The header's name as written.
        name: String,
        /// What is wrong (never the value).
        reason: String,
    },
    /// A bearer token with no host to send it to.
    #[error("a bearer token needs the hosts it is for")]
    NoHosts,
    /// A `.netrc` file could not be read.
    #[error("cannot read the netrc file {}: {source}", .path.display())]
    NetrcRead {
        /// The file.
        path: PathBuf,
        /// The operating system's error.
        #[source]
        source: std::io::Error,
    },
    /// A `.netrc` file is not one. Its text is not shown: it holds passwords.
    #[error("the netrc file {} is not valid netrc (machine NAME login NAME password PASSWORD ...)", .path.display())]
    NetrcSyntax {
        /// The file.
        path: PathBuf,
    },
}

/// One header, and the hosts it is for.
#[derive(Clone)]
struct ScopedHeader {
    hosts: Vec<HostPattern>,
    name: HeaderName,
    value: HeaderValue,
}

/// A `.netrc` machine's login, sent as basic authentication to that host only.
#[derive(Clone)]
struct Login {
    host: HostPattern,
    /// `Basic base64(login:password)`, marked sensitive.
    authorization: HeaderValue,
}

/// What the HTTP(S) stores of a [`StoreRegistry`](crate::StoreRegistry)
/// send, and to whom: headers and bearer tokens for the hosts each is given
/// for, basic-authentication logins for the machines a `.netrc` file names,
/// and the cookies servers set, kept in one jar for the session (clones
/// share it). Redirects are followed by the store itself, at most 10, and
/// each hop gets only what is meant for its host.
///
/// ```
/// use zarrs_kerchunk::{HttpCredentials, StoreRegistry, EARTHDATA_HOSTS};
///
/// let credentials = HttpCredentials::new()
///     .with_bearer_token("eyJ0eXAi...", EARTHDATA_HOSTS)?
///     .with_header("tiles.example.com", "X-Api-Key", "k-123")?;
/// let registry = StoreRegistry::new().with_http_credentials(credentials);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
///
/// `Debug` shows the header names and the hosts, never a value, a password
/// or a cookie.
#[derive(Clone, Default)]
pub struct HttpCredentials {
    headers: Vec<ScopedHeader>,
    logins: Vec<Login>,
    cookies: Arc<reqwest::cookie::Jar>,
}

impl fmt::Debug for HttpCredentials {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let headers: Vec<String> = self.headers.iter().map(|h| format!("{} for {:?}", h.name, h.hosts)).collect();
        let logins: Vec<String> = self.logins.iter().map(|l| l.host.to_string()).collect();
        f.debug_struct("HttpCredentials").field("headers", &headers).field("logins", &logins).finish_non_exhaustive()
    }
}

impl HttpCredentials {
    /// No credentials yet; an empty cookie jar.
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }

    /// Send `Authorization: Bearer <token>` to `hosts` (such as
    /// [`EARTHDATA_HOSTS`]): names, `name:port`, `*.domain` for every host
    /// below a domain, or URL prefixes (`https://host/archive/`) for the URLs
    /// under them. Where several tokens are given for a URL, the longest
    /// prefix's is sent (a host alone is the shortest).
    ///
    /// # Errors
    /// [`HttpCredentialsError::NoHosts`] without hosts,
    /// [`HttpCredentialsError::InvalidHost`] for one that is not a host, and
    /// [`HttpCredentialsError::InvalidHeader`] for a token a header cannot hold.
    pub fn with_bearer_token<I, S>(self, token: &str, hosts: I) -> Result<Self, HttpCredentialsError>
    where
        I: IntoIterator<Item = S>,
        S: AsRef<str>,
    {
        let hosts = parse_hosts(hosts)?;
        if hosts.is_empty() {
            return Err(HttpCredentialsError::NoHosts);
        }
        self.with_scoped_header(hosts, "Authorization", &format!("Bearer {}", token.trim()))
    }

    /// Send the header `name: value` to `host` (as in [`with_bearer_token`](Self::with_bearer_token)).
    /// The value is treated as a secret: it is marked sensitive and shown nowhere.
    ///
    /// # Errors
    /// [`HttpCredentialsError::InvalidHost`] and [`HttpCredentialsError::InvalidHeader`].
    pub fn with_header(self, host: &str, name: &str, value: &str) -> Result<Self, HttpCredentialsError> {
        let hosts = parse_hosts([host])?;
        self.with_scoped_header(hosts, name, value)
    }

    fn with_scoped_header(
        mut self,
        hosts: Vec<HostPattern>,
        name: &str,
        value: &str,
    ) -> Result<Self, HttpCredentialsError> {
        let invalid = |reason: &str| HttpCredentialsError::InvalidHeader {
            host: hosts.iter().map(ToString::to_string).collect::<Vec<_>>().join(", "),
            name: name.to_owned(),
            reason: reason.to_owned(),
        };
        let name = HeaderName::from_bytes(name.trim().as_bytes()).map_err(|_| invalid("not a header name"))?;
        if connector::is_request_header(&name) {
            return Err(invalid("the store sets this header itself"));
        }
        let mut value =
            HeaderValue::from_str(value.trim()).map_err(|_| invalid("its value holds characters a header cannot"))?;
        value.set_sensitive(true);
        self.headers.push(ScopedHeader { hosts, name, value });
        Ok(self)
    }

    /// Log in to `machine` (a host name, as in `.netrc`) with basic
    /// authentication, on every request to it.
    ///
    /// # Errors
    /// [`HttpCredentialsError::InvalidHost`] for a machine that is not a host name.
    pub fn with_login(mut self, machine: &str, login: &str, password: &str) -> Result<Self, HttpCredentialsError> {
        let host = HostPattern::parse(machine).ok().filter(|host| host.is_host(machine.trim())).ok_or_else(|| {
            HttpCredentialsError::InvalidHost {
                host: machine.to_owned(),
                reason: "a login is for one host name".to_owned(),
            }
        })?;
        let encoded = base64::engine::general_purpose::STANDARD.encode(format!("{login}:{password}"));
        let mut authorization = HeaderValue::from_str(&format!("Basic {encoded}")).map_err(|_| {
            HttpCredentialsError::InvalidHost { host: machine.to_owned(), reason: "unusable login".to_owned() }
        })?;
        authorization.set_sensitive(true);
        self.logins.push(Login { host, authorization });
        Ok(self)
    }

    /// Log in to each machine `path` names, as `.netrc` files say
    /// (`machine HOST login NAME password PASSWORD`). Its `default` entry is
    /// not used: it would send a password to every host. Machines that are
    /// not host names are skipped.
    ///
    /// # Errors
    /// [`HttpCredentialsError::NetrcRead`] and [`HttpCredentialsError::NetrcSyntax`].
    pub fn with_netrc_file(self, path: &Path) -> Result<Self, HttpCredentialsError> {
        let netrc = netrc::Netrc::from_file(path).map_err(|e| match e {
            netrc::Error::Io(source) => HttpCredentialsError::NetrcRead { path: path.to_owned(), source },
            netrc::Error::Parsing { .. } => HttpCredentialsError::NetrcSyntax { path: path.to_owned() },
        })?;
        let mut machines: Vec<_> = netrc.hosts.into_iter().filter(|(machine, _)| machine != "default").collect();
        machines.sort_by(|a, b| a.0.cmp(&b.0));
        Ok(machines.into_iter().fold(self, |credentials, (machine, entry)| {
            credentials.clone().with_login(&machine, &entry.login, &entry.password).unwrap_or(credentials)
        }))
    }

    /// Whether there is nothing to send.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.headers.is_empty() && self.logins.is_empty()
    }

    /// What a request to `url` carries: the headers for its host, then, if
    /// none of those is an `Authorization`, its `.netrc` login.
    pub(crate) fn headers_for(&self, url: &Url) -> Vec<(HeaderName, HeaderValue)> {
        // Of the headers of one name given for this URL, the longest prefix's (the last given of equals).
        let mut chosen: Vec<(&HeaderName, usize, &HeaderValue)> = Vec::new();
        for header in &self.headers {
            let Some(specificity) =
                header.hosts.iter().filter(|host| host.matches(url)).map(HostPattern::specificity).max()
            else {
                continue;
            };
            match chosen.iter_mut().find(|(name, _, _)| **name == header.name) {
                Some(held) if held.1 > specificity => {}
                Some(held) => *held = (&header.name, specificity, &header.value),
                None => chosen.push((&header.name, specificity, &header.value)),
            }
        }
        let mut headers: Vec<(HeaderName, HeaderValue)> =
            chosen.into_iter().map(|(name, _, value)| (name.clone(), value.clone())).collect();
        if !headers.iter().any(|(name, _)| name == AUTHORIZATION)
            && let Some(login) = self.logins.iter().find(|login| login.host.matches(url))
        {
            headers.push((AUTHORIZATION, login.authorization.clone()));
        }
        headers
    }

    /// The names of every header this may add, removed from a request before a hop's own are added.
    pub(crate) fn header_names(&self) -> impl Iterator<Item = &HeaderName> {
        self.headers.iter().map(|h| &h.name)
    }
}

fn parse_hosts<I, S>(hosts: I) -> Result<Vec<HostPattern>, HttpCredentialsError>
where
    I: IntoIterator<Item = S>,
    S: AsRef<str>,
{
    hosts
        .into_iter()
        .map(|host| {
            let host = host.as_ref();
            HostPattern::parse(host)
                .map_err(|reason| HttpCredentialsError::InvalidHost { host: host.to_owned(), reason })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn url(text: &str) -> Url {
        Url::parse(text).unwrap()
    }

    #[test]
    fn each_host_gets_only_its_own_headers_and_login() {
        let folder = tempfile::tempdir().unwrap();
        let netrc = folder.path().join("netrc");
        std::fs::write(
            &netrc,
            "machine login.example.com login alice password s3cret\ndefault login bob password everywhere\n",
        )
        .unwrap();
        let credentials = HttpCredentials::new()
            .with_bearer_token("tok-1", ["*.example.org"])
            .unwrap()
            .with_header("tiles.example.com:8443", "X-Api-Key", "k-1")
            .unwrap()
            .with_netrc_file(&netrc)
            .unwrap();
        let names = |u: &str| -> Vec<String> {
            credentials.headers_for(&url(u)).into_iter().map(|(n, v)| format!("{n}={}", v.to_str().unwrap())).collect()
        };
        assert_eq!(names("https://data.example.org/a.nc"), ["authorization=Bearer tok-1"]);
        assert_eq!(names("https://tiles.example.com:8443/a.tif"), ["x-api-key=k-1"]);
        assert!(names("https://tiles.example.com/a.tif").is_empty());
        // base64("alice:s3cret")
        assert_eq!(names("https://login.example.com/oauth"), ["authorization=Basic YWxpY2U6czNjcmV0"]);
        // The netrc's `default` entry is sent nowhere.
        assert!(names("https://bucket.s3.amazonaws.com/signed").is_empty());
    }

    #[test]
    fn of_several_tokens_for_a_url_the_longest_prefixs_is_sent() {
        let credentials = HttpCredentials::new()
            .with_bearer_token("host-wide", ["data.example.org"])
            .unwrap()
            .with_bearer_token("archive", ["https://data.example.org/archive/"])
            .unwrap()
            .with_bearer_token("deeper", ["https://data.example.org/archive/2026/"])
            .unwrap();
        let token = |u: &str| -> Vec<String> {
            credentials.headers_for(&url(u)).into_iter().map(|(_, v)| v.to_str().unwrap().to_owned()).collect()
        };
        assert_eq!(token("https://data.example.org/other/a.nc"), ["Bearer host-wide"]);
        assert_eq!(token("https://data.example.org/archive/2025/a.nc"), ["Bearer archive"]);
        assert_eq!(token("https://data.example.org/archive/2026/a.nc"), ["Bearer deeper"]);
    }

    #[test]
    fn no_secret_is_shown() {
        let folder = tempfile::tempdir().unwrap();
        let netrc = folder.path().join("netrc");
        std::fs::write(&netrc, "machine login.example.com login alice password s3cret extra-sekrit\n").unwrap();
        let error = HttpCredentials::new().with_netrc_file(&netrc).unwrap_err();
        assert!(matches!(error, HttpCredentialsError::NetrcSyntax { .. }), "{error:?}");
        assert!(!error.to_string().contains("sekrit") && !error.to_string().contains("s3cret"), "{error}");

        let error = HttpCredentials::new().with_bearer_token("sekrit\ntoken", ["a.example.org"]).unwrap_err();
        assert!(matches!(error, HttpCredentialsError::InvalidHeader { .. }), "{error:?}");
        assert!(!error.to_string().contains("sekrit"), "{error}");

        std::fs::write(&netrc, "machine login.example.com login alice password s3cret\n").unwrap();
        let credentials = HttpCredentials::new()
            .with_bearer_token("sekrit-token", ["a.example.org"])
            .unwrap()
            .with_netrc_file(&netrc)
            .unwrap();
        let shown = format!("{credentials:?}");
        assert!(shown.contains("a.example.org") && shown.contains("login.example.com"), "{shown}");
        assert!(!shown.contains("sekrit") && !shown.contains("s3cret") && !shown.contains("YWxp"), "{shown}");
        for (_, value) in credentials.headers_for(&url("https://a.example.org/x")) {
            assert!(value.is_sensitive());
        }
    }

    #[test]
    fn a_token_needs_hosts_and_headers_the_store_sets_are_refused() {
        let none: [&str; 0] = [];
        assert!(matches!(HttpCredentials::new().with_bearer_token("t", none), Err(HttpCredentialsError::NoHosts)));
        let error = HttpCredentials::new().with_header("a.example.org", "Range", "bytes=0-1").unwrap_err();
        assert!(matches!(error, HttpCredentialsError::InvalidHeader { ref name, .. } if name == "Range"), "{error:?}");
    }
}
