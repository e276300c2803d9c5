//! Writing reference sets: kerchunk JSON (version 0 or 1) a reference at a
//! time into any [`Write`], and fsspec's parquet layout a record file at a
//! time into bytes. Walking a source that must read first (a remote parquet
//! root) and putting files in object stores is the store crate's work.

mod json;
#[cfg(feature = "parquet")]
pub(crate) mod parquet;

use std::io::Write;
use std::sync::Arc;

pub use json::{JsonWriter, inline_json_string};

use crate::error::WriteError;
use crate::model::{Reference, ReferenceSet};
use crate::zarr::is_metadata_key;

/// Called with the number of references written so far, after each record
/// or batch, so that long conversions can show progress.
#[derive(Clone)]
pub struct Progress(Arc<dyn Fn(u64) + Send + Sync>);

impl Progress {
    /// Report progress to `report`.
    pub fn new(report: impl Fn(u64) + Send + Sync + 'static) -> Self {
        Self(Arc::new(report))
    }

    /// Report that `written` references have been written so far.
    pub fn report(&self, written: u64) {
        (self.0)(written);
    }
}

impl std::fmt::Debug for Progress {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Progress(..)")
    }
}

/// Which kerchunk JSON layout to write.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum JsonVersion {
    /// A flat object of keys.
    V0,
    /// `{"version": 1, "refs": {...}}`, with templates and `gen` already expanded.
    #[default]
    V1,
}

/// How to write kerchunk JSON.
///
/// ```
/// use kerchunk::{JsonVersion, JsonWriteOptions};
/// let options = JsonWriteOptions::default().with_version(JsonVersion::V0).with_zstd(3);
/// # let _ = options;
/// ```
#[derive(Clone, Debug, Default)]
pub struct JsonWriteOptions {
    version: JsonVersion,
    zstd_level: Option<i32>,
    progress: Option<Progress>,
    url_templates: bool,
}

impl JsonWriteOptions {
    /// Version 0 or version 1 (the default).
    #[must_use]
    pub fn with_version(mut self, version: JsonVersion) -> Self {
        self.version = version;
        self
    }

    /// Compress the document as one zstd frame at `level` (readers recognise it by its magic bytes).
    #[must_use]
    pub fn with_zstd(mut self, level: i32) -> Self {
        self.zstd_level = Some(level);
        self
    }

    /// Write each URL that several references share once, as a version 1
    /// template (`"templates": {"u0": "s3://..."}`, references
    /// `["{{u0}}", offset, length]`), as kerchunk's `MultiZarrToZarr` output
    /// often is: a set of 10^6 chunks of a few files then holds each file's
    /// URL a few times, not 10^6 times. Version 1 only; every reader of
    /// version 1 expands templates.
    #[must_use]
    pub fn with_url_templates(mut self, url_templates: bool) -> Self {
        self.url_templates = url_templates;
        self
    }

    /// Report progress while writing.
    #[must_use]
    pub fn with_progress(mut self, progress: Progress) -> Self {
        self.progress = Some(progress);
        self
    }

    /// The version written.
    #[must_use]
    pub fn version(&self) -> JsonVersion {
        self.version
    }

    /// Where progress is reported, if anywhere.
    #[must_use]
    pub fn progress(&self) -> Option<&Progress> {
        self.progress.as_ref()
    }

    /// Whether shared URLs are written as templates.
    #[must_use]
    pub fn url_templates(&self) -> bool {
        self.url_templates
    }
}

/// Whether the `path` column of a parquet record is dictionary-encoded.
///
/// The encoding is parquet's (dictionary pages); pandas reads the column as
/// plain strings, not as a categorical, because fsspec reads the nulls of a
/// categorical as NaN and then fails on missing chunks.
#[cfg(feature = "parquet")]
#[cfg_attr(docsrs, doc(cfg(feature = "parquet")))]
#[derive(Clone, Copy, Debug, PartialEq)]
#[non_exhaustive]
pub enum PathEncoding {
    /// Plain strings.
    Plain,
    /// Always dictionary pages.
    Dictionary,
    /// A dictionary when the non-null paths of a record outnumber its distinct
    /// paths by more than this factor, as kerchunk's `categorical_threshold` (default 10).
    AboveRepetition(f64),
}

/// How each record file is encoded.
#[cfg(feature = "parquet")]
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct RecordEncoding {
    pub(crate) record_size: u64,
    pub(crate) path_encoding: PathEncoding,
    pub(crate) zstd_level: Option<i32>,
}

/// How to write a parquet reference root.
///
/// ```
/// use kerchunk::{ParquetWriteOptions, PathEncoding};
/// let options = ParquetWriteOptions::default().with_record_size(10_000).with_path_encoding(PathEncoding::Plain);
/// # let _ = options;
/// ```
#[cfg(feature = "parquet")]
#[cfg_attr(docsrs, doc(cfg(feature = "parquet")))]
#[derive(Clone, Debug)]
pub struct ParquetWriteOptions {
    encoding: RecordEncoding,
    progress: Option<Progress>,
}

#[cfg(feature = "parquet")]
impl Default for ParquetWriteOptions {
    /// kerchunk's `refs_to_dataframe` defaults: 100 000 rows per record file, dictionary paths
    /// above a repetition of 10, zstd compression.
    fn default() -> Self {
        let encoding = RecordEncoding {
            record_size: 100_000,
            path_encoding: PathEncoding::AboveRepetition(10.0),
            zstd_level: Some(3),
        };
        Self { encoding, progress: None }
    }
}

#[cfg(feature = "parquet")]
impl ParquetWriteOptions {
    /// Rows per record file (at least 1).
    #[must_use]
    pub fn with_record_size(mut self, record_size: u64) -> Self {
        self.encoding.record_size = record_size.max(1);
        self
    }

    /// How the `path` column is encoded.
    #[must_use]
    pub fn with_path_encoding(mut self, encoding: PathEncoding) -> Self {
        self.encoding.path_encoding = encoding;
        self
    }

    /// zstd compression at `level`, or none.
    #[must_use]
    pub fn with_zstd(mut self, level: Option<i32>) -> Self {
        self.encoding.zstd_level = level;
        self
    }

    /// Report progress while writing.
    #[must_use]
    pub fn with_progress(mut self, progress: Progress) -> Self {
        self.progress = Some(progress);
        self
    }

    /// Rows per record file.
    #[must_use]
    pub fn record_size(&self) -> u64 {
        self.encoding.record_size
    }

    /// Where progress is reported, if anywhere.
    #[must_use]
    pub fn progress(&self) -> Option<&Progress> {
        self.progress.as_ref()
    }
}

impl ReferenceSet {
    /// The URLs more than one reference names, in the order first met: those
    /// [`JsonWriteOptions::with_url_templates`] writes as templates.
    #[must_use]
    pub fn shared_urls(&self) -> Vec<String> {
        let mut urls = SharedUrls::default();
        self.iter().for_each(|(_, reference)| urls.add(&reference));
        urls.shared()
    }

    /// Write the references as kerchunk JSON to `out`, as `options` say:
    /// the metadata keys first, then the rest in [`iter`](Self::iter) order.
    /// Returns the number of references written. (The store crate's
    /// `write_json` writes any `ReferenceSource` the same way.)
    ///
    /// ```
    /// use kerchunk::{JsonVersion, JsonWriteOptions, ParseOptions, ReferenceSet};
    /// let set = ReferenceSet::from_json(br#"{".zgroup": {"zarr_format": 2}, "x/0": ["f.nc", 0, 8]}"#, &ParseOptions::default())?;
    /// let mut out = Vec::new();
    /// let written = set.write_json(&mut out, &JsonWriteOptions::default().with_version(JsonVersion::V0))?;
    /// assert_eq!((written, &out[..]), (2, &br#"{".zgroup":"{\"zarr_format\":2}","x/0":["f.nc",0,8]}"#[..]));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// # Errors
    /// [`WriteError::Io`] if `out` cannot be written.
    pub fn write_json(&self, out: impl Write, options: &JsonWriteOptions) -> Result<u64, WriteError> {
        let failed = |source| WriteError::Io { location: "the JSON output".into(), source };
        let templates = if options.url_templates() && options.version() == JsonVersion::V1 {
            self.shared_urls()
        } else {
            Vec::new()
        };
        let mut writer = JsonWriter::with_templates(out, options, templates).map_err(failed)?;
        let metadata = self.iter().filter(|(key, _)| is_metadata_key(key));
        let rest = self.iter().filter(|(key, _)| !is_metadata_key(key));
        for (key, reference) in metadata.chain(rest) {
            writer.entry(&key, reference).map_err(failed)?;
        }
        Ok(writer.finish().map_err(failed)?.0)
    }
}

/// Counts the URLs references name, to find those several share (written
/// once as templates: [`JsonWriteOptions::with_url_templates`]). Memory
/// grows with the number of distinct URLs, not of references.
#[derive(Debug, Default)]
pub struct SharedUrls {
    uses: std::collections::HashMap<String, (usize, u32)>,
}

impl SharedUrls {
    /// Count the URL `reference` names, if any.
    pub fn add(&mut self, reference: &Reference<'_>) {
        if let Reference::Range { url: Some(url), .. } | Reference::Whole { url: Some(url) } = reference {
            if let Some(entry) = self.uses.get_mut(*url) {
                entry.1 = entry.1.saturating_add(1);
            } else {
                let order = self.uses.len();
                self.uses.insert((*url).to_owned(), (order, 1));
            }
        }
    }

    /// The URLs named more than once, in the order first met.
    #[must_use]
    pub fn shared(self) -> Vec<String> {
        let mut shared: Vec<(usize, String)> =
            self.uses.into_iter().filter(|(_, (_, count))| *count > 1).map(|(url, (order, _))| (order, url)).collect();
        shared.sort_unstable();
        shared.into_iter().map(|(_, url)| url).collect()
    }
}
