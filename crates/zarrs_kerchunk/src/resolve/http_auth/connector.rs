//! An `object_store` HTTP client that follows redirects itself, so that
//! each hop carries the credentials of its own host and no other's.
//! reqwest's own redirects keep every header but `Authorization` and
//! `Cookie` on a cross-host hop, so a user's header would reach a signed
//! object-store URL, and it sends no `.netrc` login to the host redirected to.

use std::fmt;
use std::time::Duration;

use http::header::{AUTHORIZATION, CONTENT_LENGTH, CONTENT_TYPE, LOCATION};
use http::{HeaderName, Method, StatusCode};
use object_store::client::{
    HttpClient, HttpConnector, HttpError, HttpErrorKind, HttpRequest, HttpRequestBody, HttpResponse, HttpResponseBody,
    HttpService,
};
use object_store::{ClientConfigKey, ClientOptions};
use url::Url;

use super::HttpCredentials;

/// At most this many redirects per request, as reqwest and browsers.
const MAX_REDIRECTS: usize = 10;

/// Makes the clients of the HTTP stores a [`StoreRegistry`](crate::StoreRegistry)
/// with [`HttpCredentials`] creates: the store's [`ClientOptions`], with
/// redirects followed hop by hop and the credentials' cookie jar.
#[derive(Debug)]
pub(crate) struct CredentialsConnector {
    pub(crate) credentials: HttpCredentials,
}

impl HttpConnector for CredentialsConnector {
    fn connect(&self, options: &ClientOptions) -> object_store::Result<HttpClient> {
        Ok(HttpClient::new(RedirectingService {
            client: client(options, &self.credentials.cookies)?,
            credentials: self.credentials.clone(),
        }))
    }
}

/// Whether the store sets `name` itself, so that a user's header of that name would break its requests.
pub(crate) fn is_request_header(name: &HeaderName) -> bool {
    matches!(
        name.as_str(),
        "range"
            | "if-match"
            | "if-none-match"
            | "if-modified-since"
            | "if-unmodified-since"
            | "host"
            | "content-length"
            | "content-type"
            | "content-range"
            | "transfer-encoding"
            | "connection"
            | "cookie"
            | "location"
    )
}

/// A reqwest client as `options` describe it (what `object_store` would
/// build), that follows no redirect and keeps cookies in `jar`. Options it
/// cannot honour are refused by name rather than dropped.
fn client(
    options: &ClientOptions,
    jar: &std::sync::Arc<reqwest::cookie::Jar>,
) -> object_store::Result<reqwest::Client> {
    let error = |why: String| object_store::Error::Generic { store: "HTTP", source: why.into() };
    let value = |key: ClientConfigKey| options.get_config_value(&key);
    let flag = |key: ClientConfigKey| value(key).is_some_and(|v| v == "true");
    let duration = |key: ClientConfigKey| -> object_store::Result<Option<Duration>> {
        value(key)
            .map(|text| humantime::parse_duration(&text).map_err(|e| error(format!("the duration {text:?}: {e}"))))
            .transpose()
    };
    let unsupported = [
        ClientConfigKey::Http2KeepAliveInterval,
        ClientConfigKey::Http2KeepAliveTimeout,
        ClientConfigKey::Http2MaxFrameSize,
    ];
    if let Some(key) = unsupported.into_iter().find(|key| value(*key).is_some()) {
        return Err(error(format!("the HTTP client option {key:?} is not supported for http(s):// stores")));
    }
    if flag(ClientConfigKey::NoSystemCertificates) || flag(ClientConfigKey::Http2KeepAliveWhileIdle) {
        return Err(error(
            "the HTTP client options no_system_certificates and http2_keep_alive_while_idle are not supported for http(s):// stores"
                .into(),
        ));
    }
    let user_agent = value(ClientConfigKey::UserAgent)
        .unwrap_or_else(|| concat!("zarrs_kerchunk/", env!("CARGO_PKG_VERSION")).to_owned());
    let mut builder = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .cookie_provider(std::sync::Arc::clone(jar))
        .user_agent(user_agent)
        // As object_store: compression would hide the object's length.
        .no_gzip()
        .no_brotli()
        .no_zstd()
        .no_deflate()
        .https_only(!flag(ClientConfigKey::AllowHttp))
        .danger_accept_invalid_certs(flag(ClientConfigKey::AllowInvalidCertificates));
    if let Some(timeout) = duration(ClientConfigKey::Timeout)? {
        builder = builder.timeout(timeout);
    }
    if let Some(timeout) = duration(ClientConfigKey::ConnectTimeout)? {
        builder = builder.connect_timeout(timeout);
    }
    if let Some(timeout) = duration(ClientConfigKey::ReadTimeout)? {
        builder = builder.read_timeout(timeout);
    }
    if let Some(timeout) = duration(ClientConfigKey::PoolIdleTimeout)? {
        builder = builder.pool_idle_timeout(timeout);
    }
    if let Some(max) = value(ClientConfigKey::PoolMaxIdlePerHost) {
        builder =
            builder.pool_max_idle_per_host(max.parse().map_err(|_| error(format!("pool_max_idle_per_host {max:?}")))?);
    }
    if let Some(proxy) = value(ClientConfigKey::ProxyUrl) {
        let mut proxy = reqwest::Proxy::all(&proxy).map_err(|e| error(format!("the proxy URL: {e}")))?;
        if let Some(excludes) = value(ClientConfigKey::ProxyExcludes) {
            proxy = proxy.no_proxy(reqwest::NoProxy::from_string(&excludes));
        }
        builder = builder.proxy(proxy);
        if let Some(pem) = value(ClientConfigKey::ProxyCaCertificate) {
            let certificate = reqwest::Certificate::from_pem(pem.as_bytes())
                .map_err(|e| error(format!("the proxy's CA certificate: {e}")))?;
            builder = builder.tls_certs_merge(std::iter::once(certificate));
        }
    }
    if flag(ClientConfigKey::Http1Only) {
        builder = builder.http1_only();
    }
    if flag(ClientConfigKey::Http2Only) {
        builder = builder.http2_prior_knowledge();
    }
    builder.build().map_err(|e| error(format!("cannot make the HTTP client: {e}")))
}

/// Sends each request, and each redirect it meets, with the credentials of
/// the hop's host only.
struct RedirectingService {
    client: reqwest::Client,
    credentials: HttpCredentials,
}

impl fmt::Debug for RedirectingService {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RedirectingService").field("credentials", &self.credentials).finish_non_exhaustive()
    }
}

/// A redirect that cannot be followed. URLs are shown without their query,
/// which for a signed URL holds its signature.
#[derive(Debug, thiserror::Error)]
enum RedirectError {
    #[error("more than {MAX_REDIRECTS} redirects, from {from} (last to {last})")]
    TooMany { from: String, last: String },
    #[error("{from} redirected to a location that is not a URL")]
    BadLocation { from: String },
}

#[async_trait::async_trait]
impl HttpService for RedirectingService {
    async fn call(&self, request: HttpRequest) -> Result<HttpResponse, HttpError> {
        let (parts, mut body) = request.into_parts();
        let mut method = parts.method;
        let mut headers = parts.headers;
        let mut url = Url::parse(&parts.uri.to_string()).map_err(|_| {
            let from = format!("{}{}", parts.uri.authority().map_or("", |a| a.host()), parts.uri.path());
            HttpError::new(HttpErrorKind::Unknown, RedirectError::BadLocation { from })
        })?;
        let first = shown(&url);
        let mut redirects = 0;
        loop {
            let mut hop_headers = headers.clone();
            for name in self.credentials.header_names() {
                hop_headers.remove(name);
            }
            for (name, value) in self.credentials.headers_for(&url) {
                hop_headers.insert(name, value);
            }
            let mut hop = HttpRequest::new(body.clone());
            *hop.method_mut() = method.clone();
            *hop.uri_mut() = url.as_str().parse().map_err(|_| {
                HttpError::new(HttpErrorKind::Unknown, RedirectError::BadLocation { from: first.clone() })
            })?;
            *hop.headers_mut() = hop_headers;
            let response = HttpService::call(&self.client, hop).await?;
            let status = response.status();
            let location = response.headers().get(LOCATION).and_then(|value| value.to_str().ok());
            let follow = matches!(
                status,
                StatusCode::MOVED_PERMANENTLY
                    | StatusCode::FOUND
                    | StatusCode::SEE_OTHER
                    | StatusCode::TEMPORARY_REDIRECT
                    | StatusCode::PERMANENT_REDIRECT
            );
            let (true, Some(location)) = (follow, location) else {
                return Ok(self.explained(response, &url, redirects.gt(&0).then_some(first.as_str())));
            };
            let next = url.join(location).map_err(|_| {
                HttpError::new(HttpErrorKind::Unknown, RedirectError::BadLocation { from: shown(&url) })
            })?;
            redirects += 1;
            if redirects > MAX_REDIRECTS {
                return Err(HttpError::new(
                    HttpErrorKind::Unknown,
                    RedirectError::TooMany { from: first, last: shown(&next) },
                ));
            }
            if status == StatusCode::SEE_OTHER
                || (matches!(status, StatusCode::MOVED_PERMANENTLY | StatusCode::FOUND) && method == Method::POST)
            {
                method = if method == Method::HEAD { Method::HEAD } else { Method::GET };
                body = HttpRequestBody::empty();
                headers.remove(CONTENT_LENGTH);
                headers.remove(CONTENT_TYPE);
            }
            // The caller's own credentials, if it set any, are for the first host only.
            headers.remove(AUTHORIZATION);
            url = next;
        }
    }
}

impl RedirectingService {
    /// A refusal (401, 403) says which host refused, what it was sent, and
    /// from where a redirect led there; other answers are passed on as they are.
    fn explained(&self, response: HttpResponse, url: &Url, redirected_from: Option<&str>) -> HttpResponse {
        let status = response.status();
        if !matches!(status, StatusCode::UNAUTHORIZED | StatusCode::FORBIDDEN) {
            return response;
        }
        let host = url.host_str().unwrap_or_default();
        let sent = self.credentials.headers_for(url);
        let what = if sent.is_empty() {
            format!("no token, header or .netrc login is given for {host}")
        } else {
            let names: Vec<&str> = sent.iter().map(|(name, _)| name.as_str()).collect();
            format!("{host} refused what is given for it ({})", names.join(", "))
        };
        let from = redirected_from.map(|from| format!(", reached by redirects from {from}")).unwrap_or_default();
        let message = format!("access denied by {}{from}: {what}", shown(url));
        let (mut parts, _) = response.into_parts();
        parts.headers.remove(CONTENT_LENGTH);
        parts.headers.remove(http::header::CONTENT_ENCODING);
        HttpResponse::from_parts(parts, HttpResponseBody::from(message))
    }
}

/// `url` without its query and fragment: a signed URL's signature stays out of messages.
fn shown(url: &Url) -> String {
    let mut url = url.clone();
    url.set_query(None);
    url.set_fragment(None);
    let _ = url.set_password(None);
    let _ = url.set_username("");
    url.to_string()
}
