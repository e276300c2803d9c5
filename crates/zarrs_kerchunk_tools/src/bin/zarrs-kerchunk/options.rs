//! The options every command takes to open references: the builder's, as flags.

use clap::Args;
use indicatif::{ProgressBar, ProgressStyle};
use std::sync::Arc;

use zarrs_kerchunk::object_store::aws::AwsCredentialProvider;
use zarrs_kerchunk::{
    DEFAULT_CACHE_BYTES, DiskCache, HttpCredentials, Pins, ReferenceStore, ReferenceStoreBuilder, StoreRegistry,
};
use zarrs_kerchunk_tools::credentials::{HttpOptions, default_netrc, s3_credential_providers, with_bearer_tokens};

/// The S3 credential providers of `--credentials`, by prefix.
type S3Providers = Vec<(String, AwsCredentialProvider)>;

/// How to reach object stores: the options every command that reads or writes a URL takes.
#[derive(Args)]
pub(crate) struct Access {
    /// Read public data without credentials.
    #[arg(long)]
    anonymous: bool,
    /// An object store configuration key, such as `aws_region=us-west-2` (repeatable).
    #[arg(long = "option", value_name = "KEY=VALUE", value_parser = pair)]
    options: Vec<(String, String)>,
    /// Keep the byte ranges read from remote files (and remote reference files) in this folder,
    /// shared by every process that uses it: a warm read costs one HEAD per file and no GET.
    /// Each range is served only for the version of the file it came from (ETag, else size and
    /// last-modified time) and checked against its checksum. Off unless given.
    #[arg(long, value_name = "DIR", env = "ZARRS_KERCHUNK_CACHE", hide_env_values = true)]
    cache: Option<std::path::PathBuf>,
    /// The most the cache holds, such as `500M` or `20G` (K, M, G, T: powers of 1024; default
    /// 10G); the least recently read ranges are removed past it, approximately.
    #[arg(long, value_name = "SIZE", value_parser = byte_size, requires = "cache")]
    cache_size: Option<u64>,
    /// Check pinned files' versions too (one HEAD per file per process) when reading through the
    /// cache: otherwise a range cached for a pinned ETag is read with no request.
    #[arg(long, requires = "cache")]
    cache_check_pins: bool,
    /// Where credentials come from, by URL prefix: a JSON file such as
    /// `{"s3://podaac-ops-cumulus-protected/": {"s3credentials": "https://archive.podaac.earthdata.nasa.gov/s3credentials", "token_env": "EARTHDATA_TOKEN"}}`:
    /// the buckets under a prefix are read with temporary keys from that endpoint (a DAAC's
    /// `/s3credentials`, asked with the bearer token in the variable `token_env` names,
    /// `EARTHDATA_TOKEN` by default), renewed before they expire. The longest prefix wins.
    /// An `https://` prefix may name the variable of the bearer token for the URLs under it:
    /// `{"https://data.ornldaac.earthdata.nasa.gov/": {"bearer_env": "EARTHDATA_TOKEN"}}`.
    #[arg(long, value_name = "FILE")]
    credentials: Option<std::path::PathBuf>,
    /// A bearer token (an Earthdata Login token) for the `--token-host` hosts, NASA Earthdata's
    /// (`*.earthdata.nasa.gov`, `*.earthdatacloud.nasa.gov`) unless given. Prefer the variable
    /// to the option: other users can see a command line.
    #[arg(long, value_name = "TOKEN", env = "EARTHDATA_TOKEN", hide_env_values = true)]
    bearer_token: Option<String>,
    /// A host the bearer token is sent to (repeatable): `data.example.org`,
    /// `data.example.org:8443`, or `*.example.org` for every host below it. Never to any other,
    /// even one a listed host redirects to.
    #[arg(long = "token-host", value_name = "HOST")]
    token_hosts: Vec<String>,
    /// A header sent to HOST only, as `HOST='NAME: VALUE'` (repeatable).
    #[arg(long = "header", value_name = "HOST=NAME: VALUE", value_parser = pair)]
    headers: Vec<(String, String)>,
    /// The `.netrc` file whose logins are used (basic authentication, to the machine named
    /// only), as Earthdata Login's redirects ask for them; `~/.netrc` if there is one.
    #[arg(long, value_name = "FILE", env = "NETRC")]
    netrc: Option<std::path::PathBuf>,
    /// Use no `.netrc` file.
    #[arg(long, conflicts_with = "netrc")]
    no_netrc: bool,
}

impl Access {
    /// These options for an icechunk repository's own storage: `--option`s, and
    /// `--anonymous` as S3's unsigned requests.
    pub(crate) fn repository_options(&self) -> Vec<(String, String)> {
        let mut options = self.options.clone();
        if self.anonymous {
            options.push(("aws_skip_signature".into(), "true".into()));
        }
        options
    }

    /// The registry that makes object stores for URLs with these options, as
    /// the store builder's does: from the options given and the cloud
    /// environment's own variables, never from the rest of the environment;
    /// remote stores read through the cache, if one is asked for.
    pub(crate) fn registry(&self) -> Result<StoreRegistry, Box<dyn std::error::Error>> {
        let registry = if self.anonymous { StoreRegistry::new().with_anonymous() } else { StoreRegistry::new() };
        let mut registry =
            self.options.iter().fold(registry, |registry, (key, value)| registry.with_option(key, value));
        let (s3, http) = self.credentials()?;
        for (prefix, provider) in s3 {
            registry = registry.with_s3_credentials(&prefix, provider)?;
        }
        let registry = registry.with_http_credentials(http);
        Ok(match self.cache()? {
            Some(cache) => registry.with_cache(cache),
            None => registry,
        })
    }

    /// The sources `--credentials` names, by prefix.
    fn credential_sources(
        &self,
    ) -> Result<Option<serde_json::Map<String, serde_json::Value>>, Box<dyn std::error::Error>> {
        let Some(file) = &self.credentials else { return Ok(None) };
        let what = file.display();
        let text = std::fs::read_to_string(file).map_err(|e| format!("cannot read credentials {what}: {e}"))?;
        Ok(Some(
            serde_json::from_str(&text)
                .map_err(|e| format!("credentials {what}: not a JSON object of URL prefixes: {e}"))?,
        ))
    }

    /// The S3 credential providers `--credentials` names, by prefix, each token read from the
    /// variable the file names (without one, an endpoint is asked with the HTTP credentials: a
    /// `.netrc` login); and what HTTP(S) requests carry: `--bearer-token` (or `EARTHDATA_TOKEN`)
    /// for its hosts, `--header`s, the `.netrc` file's logins, and the tokens the file names.
    /// The file is read once.
    fn credentials(&self) -> Result<(S3Providers, HttpCredentials), Box<dyn std::error::Error>> {
        let netrc = match (&self.netrc, self.no_netrc) {
            (_, true) => None,
            (Some(file), false) => Some(file.clone()),
            // clap has read NETRC into `netrc` already: this finds ~/.netrc.
            (None, false) => default_netrc(),
        };
        let mut options = HttpOptions::default();
        options.bearer_token.clone_from(&self.bearer_token);
        options.token_hosts.clone_from(&self.token_hosts);
        options.headers.clone_from(&self.headers);
        options.netrc = netrc;
        let http = options.credentials()?;
        let Some(sources) = self.credential_sources()? else { return Ok((Vec::new(), http)) };
        let token = |variable: &str| std::env::var(variable).ok();
        let what = self.credentials.as_deref().unwrap_or_else(|| std::path::Path::new("")).display();
        let http = with_bearer_tokens(&sources, token, http).map_err(|e| format!("credentials {what}: {e}"))?;
        let s3 = s3_credential_providers(&sources, token, &http).map_err(|e| format!("credentials {what}: {e}"))?;
        Ok((s3, http))
    }

    /// The disk cache `--cache` (or `ZARRS_KERCHUNK_CACHE`) names, opened.
    pub(crate) fn cache(&self) -> Result<Option<Arc<DiskCache>>, Box<dyn std::error::Error>> {
        let Some(dir) = self.cache.as_ref().filter(|dir| !dir.as_os_str().is_empty()) else { return Ok(None) };
        let cache = DiskCache::new(dir)?
            .with_max_bytes(self.cache_size.unwrap_or(DEFAULT_CACHE_BYTES))
            .with_pinned_revalidation(self.cache_check_pins);
        Ok(Some(Arc::new(cache)))
    }
}

/// A size in bytes: a number, with K, M, G or T (powers of 1024; `KiB`, `MB` and so on read the same).
fn byte_size(text: &str) -> Result<u64, String> {
    let trimmed = text.trim();
    let digits = trimmed.find(|c: char| !c.is_ascii_digit()).unwrap_or(trimmed.len());
    let (number, unit) = trimmed.split_at(digits);
    let number: u64 = number.parse().map_err(|_| format!("expected a size such as 500M or 20G, found {text:?}"))?;
    let shift = match unit.trim().to_ascii_uppercase().trim_end_matches('B').trim_end_matches('I') {
        "" => 0,
        "K" => 10,
        "M" => 20,
        "G" => 30,
        "T" => 40,
        _ => return Err(format!("expected a size such as 500M or 20G, found {text:?}")),
    };
    number.checked_mul(1 << shift).ok_or_else(|| format!("{text:?} is too large"))
}

/// Where the references are, and how to open them.
#[derive(Args)]
pub(crate) struct Opening {
    /// The references: a JSON file (v0 or v1, plain, gzip or zstd) or a parquet root; a path or a
    /// URL; or an icechunk repository, `icechunk://PATH`, `icechunk+s3://BUCKET/PREFIX`,
    /// `icechunk+gs://BUCKET/PREFIX` or `icechunk+az://CONTAINER/PREFIX` (`@BRANCH`, `@TAG` or
    /// `@SNAPSHOT` after it; `main` by default), read back as references.
    pub(crate) refs: String,
    #[command(flatten)]
    pub(crate) how: HowToOpen,
}

impl Opening {
    /// The builder these options describe.
    pub(crate) fn builder(&self) -> Result<ReferenceStoreBuilder, Box<dyn std::error::Error>> {
        self.how.builder()
    }

    /// The registry that makes object stores for URLs with these options,
    /// as the builder's does: for outputs (`convert`).
    pub(crate) fn registry(&self) -> Result<StoreRegistry, Box<dyn std::error::Error>> {
        self.how.registry()
    }

    /// These options for an icechunk repository's own storage (`convert`'s output).
    pub(crate) fn repository_options(&self) -> Vec<(String, String)> {
        self.how.repository_options()
    }

    /// The store over the references.
    pub(crate) fn open(&self) -> Result<ReferenceStore, Box<dyn std::error::Error>> {
        self.how.open(&self.refs, &self.builder()?)
    }

    /// The store over the references, opened by `builder`.
    pub(crate) fn open_with(
        &self,
        builder: &ReferenceStoreBuilder,
    ) -> Result<ReferenceStore, Box<dyn std::error::Error>> {
        self.how.open(&self.refs, builder)
    }
}

/// How to open references, wherever they are: the options every command that reads them takes.
#[derive(Args)]
pub(crate) struct HowToOpen {
    #[command(flatten)]
    access: Access,
    /// The target of references whose URL is null.
    #[arg(long, value_name = "URL")]
    target: Option<String>,
    /// Replace a version 1 template, such as `root=s3://bucket/data` (repeatable).
    #[arg(long = "template", value_name = "NAME=VALUE", value_parser = pair)]
    templates: Vec<(String, String)>,
    /// Read targets under FROM from TO instead, such as `s3://old/=/data/copy/` (repeatable).
    #[arg(long = "rewrite", value_name = "FROM=TO", value_parser = pair)]
    rewrites: Vec<(String, String)>,
    /// Read only targets under this folder URL (repeatable).
    #[arg(long = "allow-prefix", value_name = "URL")]
    allowed_prefixes: Vec<String>,
    /// Let remote references point at local files.
    #[arg(long)]
    allow_local: bool,
    /// Check every read (and the audit) against the pins in FILE, written by `pin`.
    #[arg(long, value_name = "FILE")]
    pins: Option<std::path::PathBuf>,
    /// Read targets under this folder URL without checking their pins (repeatable).
    #[arg(long = "relax-pins", value_name = "URL", requires = "pins")]
    relaxed: Vec<String>,
}

impl HowToOpen {
    /// The builder these options describe.
    pub(crate) fn builder(&self) -> Result<ReferenceStoreBuilder, Box<dyn std::error::Error>> {
        // An array whose codec nothing registered decodes is refused when opened, naming both.
        let mut builder = ReferenceStoreBuilder::new()
            .allow_local_files_from_remote_references(self.allow_local)
            .with_codec_check(zarrs_kerchunk_codecs::is_decodable);
        if self.access.anonymous {
            builder = builder.with_anonymous();
        }
        for (key, value) in &self.access.options {
            builder = builder.with_option(key, value);
        }
        if let Some(cache) = self.access.cache()? {
            builder = builder.with_cache(cache);
        }
        let (s3, http) = self.access.credentials()?;
        for (prefix, provider) in s3 {
            builder = builder.with_s3_credentials(prefix, provider);
        }
        builder = builder.with_http_credentials(http);
        if let Some(target) = &self.target {
            builder = builder.with_target(target);
        }
        for (name, value) in &self.templates {
            builder = builder.with_template_override(name, value);
        }
        for (from, to) in &self.rewrites {
            builder = builder.with_url_rewrite(from, to);
        }
        if !self.allowed_prefixes.is_empty() {
            builder = builder.with_allowed_prefixes(&self.allowed_prefixes);
        }
        if let Some(file) = &self.pins {
            let text =
                std::fs::read_to_string(file).map_err(|e| format!("cannot read pins {}: {e}", file.display()))?;
            let mut pins = Pins::from_json(&text).map_err(|e| format!("pins {}: {e}", file.display()))?;
            for prefix in &self.relaxed {
                pins.relax_under(prefix)?;
            }
            builder = builder.with_pins(pins);
        }
        Ok(builder)
    }

    /// The registry that makes object stores for URLs with these options,
    /// as the builder's does: for outputs (`convert`).
    pub(crate) fn registry(&self) -> Result<StoreRegistry, Box<dyn std::error::Error>> {
        self.access.registry()
    }

    /// These options for an icechunk repository's own storage (`convert`'s output).
    pub(crate) fn repository_options(&self) -> Vec<(String, String)> {
        self.access.repository_options()
    }

    /// The store over the references at `refs`, opened by `builder`: an icechunk
    /// repository's (`icechunk://PATH[@REF]`) read back as references, any
    /// other location's as it is.
    pub(crate) fn open(
        &self,
        refs: &str,
        builder: &ReferenceStoreBuilder,
    ) -> Result<ReferenceStore, Box<dyn std::error::Error>> {
        if let Some(location) = zarrs_kerchunk_tools::icechunk::IcechunkLocation::parse(refs) {
            let location = location.with_options(self.access.repository_options());
            return Ok(zarrs_kerchunk_tools::icechunk::open_icechunk(builder, &location)?);
        }
        Ok(builder.open(refs)?)
    }
}

/// A flag's value that is not `NAME=VALUE`.
#[derive(Debug, thiserror::Error)]
#[error("expected NAME=VALUE, found {0:?}")]
struct NotAPair(String);

/// `name=value`, split at the first `=`.
fn pair(text: &str) -> Result<(String, String), NotAPair> {
    text.split_once('=')
        .map(|(name, value)| (name.to_owned(), value.to_owned()))
        .ok_or_else(|| NotAPair(text.to_owned()))
}

/// A progress bar on stderr, drawn only when stderr is a terminal.
pub(crate) fn progress_bar(message: &'static str) -> ProgressBar {
    let bar = ProgressBar::new(0).with_message(message);
    bar.set_style(
        ProgressStyle::with_template("{msg} [{bar:40}] {pos}/{len} ({eta})")
            .expect("the template is valid")
            .progress_chars("=> "),
    );
    bar
}
