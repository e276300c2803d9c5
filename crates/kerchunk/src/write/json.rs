//! Streaming kerchunk JSON: one reference at a time into any `Write`.

use std::io::Write;

use base64::Engine as _;

use super::{JsonVersion, JsonWriteOptions, Progress};

/// How often progress is reported while writing, in references.
const PROGRESS_EVERY: u64 = 100_000;
use crate::model::Reference;

/// Where the document goes: the caller's writer, or a zstd frame written to it.
enum Output<W: Write> {
    Plain(W),
    Zstd(zstd::Encoder<'static, W>),
}

impl<W: Write> Output<W> {
    /// `out`, compressed as one zstd frame at `level` if a level is given.
    fn new(out: W, zstd_level: Option<i32>) -> std::io::Result<Self> {
        Ok(match zstd_level {
            None => Self::Plain(out),
            Some(level) => Self::Zstd(zstd::Encoder::new(out, level)?),
        })
    }

    /// End the frame, if any, and flush; returns the caller's writer.
    fn finish(self) -> std::io::Result<W> {
        let mut out = match self {
            Self::Plain(out) => out,
            Self::Zstd(encoder) => encoder.finish()?,
        };
        out.flush()?;
        Ok(out)
    }
}

impl<W: Write> Write for Output<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        match self {
            Self::Plain(out) => out.write(buf),
            Self::Zstd(encoder) => encoder.write(buf),
        }
    }

    fn flush(&mut self) -> std::io::Result<()> {
        match self {
            Self::Plain(out) => out.flush(),
            Self::Zstd(encoder) => encoder.flush(),
        }
    }
}

/// Writes a kerchunk JSON document as references arrive:
/// `{"version":1,"refs":{...}}`, or a flat version 0 object, compact,
/// optionally as one zstd frame. Memory stays at one reference whatever the
/// document's length. Progress, if the options ask for it, is reported every
/// 100 000 references and when the document is finished.
///
/// ```
/// use kerchunk::{JsonWriteOptions, JsonWriter, Reference};
/// let mut writer = JsonWriter::new(Vec::new(), &JsonWriteOptions::default())?;
/// writer.entry(".zgroup", Reference::Inline(br#"{"zarr_format":2}"#))?;
/// writer.entry("x/0", Reference::Range { url: Some("s3://bucket/file.nc"), offset: 100, length: 8 })?;
/// let (written, out) = writer.finish()?;
/// assert_eq!(written, 2);
/// assert!(out.starts_with(br#"{"version":1,"refs":{".zgroup""#));
/// # Ok::<(), std::io::Error>(())
/// ```
pub struct JsonWriter<W: Write> {
    out: Output<W>,
    version: JsonVersion,
    written: u64,
    progress: Option<Progress>,
    /// Each templated URL and its reference text (`{{u0}}`).
    templates: std::collections::HashMap<String, String>,
    /// Base64 text of the inline value being written, reused from one to the next.
    base64: String,
}

impl<W: Write> JsonWriter<W> {
    /// Start a document in `out`, as `options` say (version, compression).
    ///
    /// # Errors
    /// The error of `out`, or of the compressor, if the document's opening cannot be written.
    pub fn new(out: W, options: &JsonWriteOptions) -> std::io::Result<Self> {
        Self::with_templates(out, options, Vec::new())
    }

    /// [`JsonWriter::new`], with `urls` written once each as version 1
    /// templates (`u0`, `u1`, ... in order), which references naming them
    /// use (see [`JsonWriteOptions::with_url_templates`]).
    ///
    /// # Errors
    /// As [`JsonWriter::new`]; an error of kind `InvalidInput` for templates
    /// in a version 0 document, which has none.
    pub fn with_templates(out: W, options: &JsonWriteOptions, urls: Vec<String>) -> std::io::Result<Self> {
        let version = options.version;
        if version == JsonVersion::V0 && !urls.is_empty() {
            return Err(std::io::Error::new(
                std::io::ErrorKind::InvalidInput,
                "a version 0 document has no templates: write version 1",
            ));
        }
        let mut out = Output::new(out, options.zstd_level)?;
        let mut templates = std::collections::HashMap::with_capacity(urls.len());
        match version {
            JsonVersion::V0 => out.write_all(b"{")?,
            JsonVersion::V1 if urls.is_empty() => out.write_all(b"{\"version\":1,\"refs\":{")?,
            JsonVersion::V1 => {
                out.write_all(b"{\"version\":1,\"templates\":{")?;
                for (i, url) in urls.into_iter().enumerate() {
                    if i > 0 {
                        out.write_all(b",")?;
                    }
                    write!(out, "\"u{i}\":")?;
                    serde_json::to_writer(&mut out, &url)?;
                    templates.insert(url, format!("{{{{u{i}}}}}"));
                }
                out.write_all(b"},\"refs\":{")?;
            }
        }
        Ok(Self { out, version, written: 0, progress: options.progress().cloned(), templates, base64: String::new() })
    }

    /// Append one reference. A `null` URL is written as `null`; inline bytes
    /// as kerchunk writes them (ASCII text as itself, anything else as `base64:`).
    ///
    /// # Errors
    /// The error of `out`, or of the compressor; an error of kind
    /// `InvalidData` naming the key for a [`Reference::Malformed`], which has
    /// nothing to write (the document it came from is not kept), before
    /// anything of it is written.
    pub fn entry(&mut self, key: &str, entry: Reference<'_>) -> std::io::Result<()> {
        if let Reference::Malformed { reason } = entry {
            return Err(std::io::Error::new(
                std::io::ErrorKind::InvalidData,
                format!("key {key:?} has a malformed reference, which cannot be written: {reason}"),
            ));
        }
        if self.written > 0 {
            self.out.write_all(b",")?;
        }
        self.written += 1;
        serde_json::to_writer(&mut self.out, key)?;
        self.out.write_all(b":")?;
        match entry {
            Reference::Inline(bytes) => match std::str::from_utf8(bytes) {
                Ok(text) if is_plain_text(text) => serde_json::to_writer(&mut self.out, text)?,
                // No character of base64 needs escaping in JSON: written as it is,
                // without serde's escaping pass (a fifth of writing 10^5 inline chunks).
                _ => {
                    self.base64.clear();
                    base64::engine::general_purpose::STANDARD.encode_string(bytes, &mut self.base64);
                    self.out.write_all(b"\"base64:")?;
                    self.out.write_all(self.base64.as_bytes())?;
                    self.out.write_all(b"\"")?;
                }
            },
            Reference::Whole { url } => {
                let url = url_text(&self.templates, url);
                serde_json::to_writer(&mut self.out, &[url])?;
            }
            Reference::Range { url, offset, length } => {
                let url = url_text(&self.templates, url);
                serde_json::to_writer(&mut self.out, &(url, offset, length))?;
            }
            Reference::Malformed { .. } => {} // refused above
        }
        if let Some(progress) = &self.progress
            && self.written.is_multiple_of(PROGRESS_EVERY)
        {
            progress.report(self.written);
        }
        Ok(())
    }

    /// The number of references written so far.
    #[must_use]
    pub fn written(&self) -> u64 {
        self.written
    }

    /// Close the document and its compression, and flush; returns the
    /// number of references written and `out`.
    ///
    /// # Errors
    /// The error of `out`, or of the compressor.
    pub fn finish(mut self) -> std::io::Result<(u64, W)> {
        self.out.write_all(match self.version {
            JsonVersion::V0 => b"}",
            JsonVersion::V1 => b"}}",
        })?;
        let out = self.out.finish()?;
        if let Some(progress) = &self.progress {
            progress.report(self.written);
        }
        Ok((self.written, out))
    }
}

/// How a reference names `url`: its template, if it has one.
fn url_text<'u>(templates: &'u std::collections::HashMap<String, String>, url: Option<&'u str>) -> Option<&'u str> {
    url.map(|url| templates.get(url).map_or(url, String::as_str))
}

/// Whether inline bytes are written as themselves, as kerchunk writes them:
/// ASCII text; anything else (and text that would read as base64) is `base64:...`.
fn is_plain_text(text: &str) -> bool {
    text.is_ascii() && !text.starts_with("base64:")
}

/// Inline `bytes` as the string a kerchunk JSON document holds for them, as [`JsonWriter`]
/// writes it (and kerchunk's `consolidate`): ASCII text as itself, anything else (and text that
/// would read as base64) as `base64:` and its standard base64. For those who hand references on
/// as values rather than as a document (a Python dict of `refs`).
///
/// ```
/// assert_eq!(kerchunk::inline_json_string(br#"{"zarr_format":2}"#), r#"{"zarr_format":2}"#);
/// assert_eq!(kerchunk::inline_json_string(&[0, 255]), "base64:AP8=");
/// ```
#[must_use]
pub fn inline_json_string(bytes: &[u8]) -> std::borrow::Cow<'_, str> {
    match std::str::from_utf8(bytes) {
        Ok(text) if is_plain_text(text) => std::borrow::Cow::Borrowed(text),
        _ => {
            let mut text = String::from("base64:");
            base64::engine::general_purpose::STANDARD.encode_string(bytes, &mut text);
            std::borrow::Cow::Owned(text)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_every_kind_of_value() {
        let mut writer = JsonWriter::new(Vec::new(), &JsonWriteOptions::default()).unwrap();
        writer.entry(".zgroup", Reference::Inline(br#"{"zarr_format":2}"#)).unwrap();
        writer.entry("a/0", Reference::Inline(&[0, 255])).unwrap();
        writer.entry("a/1", Reference::Inline(b"base64:looks encoded")).unwrap();
        writer.entry("a/2", Reference::Whole { url: Some("x \"y\".nc") }).unwrap();
        writer.entry("a/3", Reference::Range { url: None, offset: 5, length: 0 }).unwrap();
        let (n, bytes) = writer.finish().unwrap();
        assert_eq!(n, 5);
        let doc: serde_json::Value = serde_json::from_slice(&bytes).unwrap();
        assert_eq!(
            doc,
            serde_json::json!({"version": 1, "refs": {
                ".zgroup": r#"{"zarr_format":2}"#,
                "a/0": "base64:AP8=",
                "a/1": "base64:YmFzZTY0Omxvb2tzIGVuY29kZWQ=",
                "a/2": ["x \"y\".nc"],
                "a/3": [null, 5, 0],
            }})
        );
        let v0 = JsonWriteOptions::default().with_version(JsonVersion::V0);
        let (_, bytes) = JsonWriter::new(Vec::new(), &v0).unwrap().finish().unwrap();
        assert_eq!(bytes, b"{}");
    }

    /// URLs several references share are written once, as templates, and
    /// the document reads back to the same references; a URL used once, or
    /// in a version 0 document, is written as it is.
    #[test]
    fn shared_urls_are_written_once_as_templates() {
        use crate::{ParseOptions, ReferenceSet, ReferenceSetBuilder};
        let mut builder = ReferenceSetBuilder::new();
        builder.insert_inline(".zgroup", br#"{"zarr_format":2}"#);
        for i in 0..3u64 {
            builder.insert_range(&format!("a/{i}"), Some("s3://bucket/{odd} \"name\".nc"), i * 8, 8);
            builder.insert_range(&format!("b/{i}"), Some("https://host/b.h5"), i * 4, 4);
        }
        builder.insert_range("c/0", Some("once.nc"), 0, 2);
        builder.insert_whole("d/0", Some("https://host/b.h5"));
        let set = builder.build();
        let options = JsonWriteOptions::default().with_url_templates(true);
        let mut text = Vec::new();
        set.write_json(&mut text, &options).unwrap();
        let doc: serde_json::Value = serde_json::from_slice(&text).unwrap();
        assert_eq!(
            doc["templates"],
            serde_json::json!({"u0": "s3://bucket/{odd} \"name\".nc", "u1": "https://host/b.h5"})
        );
        assert_eq!(doc["refs"]["a/2"], serde_json::json!(["{{u0}}", 16, 8]));
        assert_eq!(doc["refs"]["d/0"], serde_json::json!(["{{u1}}"]));
        assert_eq!(doc["refs"]["c/0"], serde_json::json!(["once.nc", 0, 2]));
        let back = ReferenceSet::from_json(&text[..], &ParseOptions::default()).unwrap();
        let all = |set: &ReferenceSet| set.iter_owned().map(|(k, r)| (k.into_owned(), r)).collect::<Vec<_>>();
        assert_eq!(all(&back), all(&set));
        // Version 0 has no templates: the option does nothing there.
        let mut v0 = Vec::new();
        set.write_json(&mut v0, &options.clone().with_version(JsonVersion::V0)).unwrap();
        assert!(!String::from_utf8(v0).unwrap().contains("{{u0}}"));
    }

    #[test]
    fn progress_is_reported_every_100_000_references_and_at_the_end() {
        let seen = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
        let log = std::sync::Arc::clone(&seen);
        let options = JsonWriteOptions::default().with_progress(Progress::new(move |n| log.lock().unwrap().push(n)));
        let mut writer = JsonWriter::new(std::io::sink(), &options).unwrap();
        for _ in 0..250_000 {
            writer.entry("k", Reference::Whole { url: None }).unwrap();
        }
        assert_eq!(writer.finish().unwrap().0, 250_000);
        assert_eq!(*seen.lock().unwrap(), [100_000, 200_000, 250_000]);
    }
}
