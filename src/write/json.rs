//! Streaming kerchunk JSON: one reference at a time into any `Write`.

use std::io::Write;

use base64::Engine as _;

use super::JsonVersion;
use crate::model::Reference;

/// Where the document goes: the caller's writer, or a zstd frame written to it.
pub(crate) enum Output<W: Write> {
    Plain(W),
    Zstd(zstd::Encoder<'static, W>),
}

impl<W: Write> Output<W> {
    /// `out`, compressed as one zstd frame at `level` if a level is given.
    pub(crate) fn new(out: W, zstd_level: Option<i32>) -> std::io::Result<Self> {
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

/// Writes `{"version": 1, "refs": {` ... `}}` (or a flat version 0 object) as references arrive.
pub(crate) struct JsonWriter<W: Write> {
    out: W,
    version: JsonVersion,
    written: u64,
}

impl<W: Write> JsonWriter<W> {
    pub(crate) fn new(mut out: W, version: JsonVersion) -> std::io::Result<Self> {
        out.write_all(match version {
            JsonVersion::V0 => b"{",
            JsonVersion::V1 => b"{\"version\":1,\"refs\":{",
        })?;
        Ok(Self { out, version, written: 0 })
    }

    /// Append one reference. A `null` URL is written as `null`.
    pub(crate) fn entry(&mut self, key: &str, entry: Reference<'_>) -> std::io::Result<()> {
        if self.written > 0 {
            self.out.write_all(b",")?;
        }
        self.written += 1;
        serde_json::to_writer(&mut self.out, key)?;
        self.out.write_all(b":")?;
        match entry {
            Reference::Inline(bytes) => serde_json::to_writer(&mut self.out, &inline_text(bytes))?,
            Reference::Whole { url } => serde_json::to_writer(&mut self.out, &[url])?,
            Reference::Range { url, offset, length } => {
                serde_json::to_writer(&mut self.out, &(url, offset, length))?;
            }
        }
        Ok(())
    }

    /// The number of references written so far.
    pub(crate) fn written(&self) -> u64 {
        self.written
    }

    /// Close the document; returns the writer and the number of references written.
    pub(crate) fn close(mut self) -> std::io::Result<(W, u64)> {
        self.out.write_all(match self.version {
            JsonVersion::V0 => b"}",
            JsonVersion::V1 => b"}}",
        })?;
        self.out.flush()?;
        Ok((self.out, self.written))
    }
}

impl<W: Write> JsonWriter<Output<W>> {
    /// Close the document and its compression; returns the number of references written.
    pub(crate) fn finish(self) -> std::io::Result<u64> {
        self.finish_into().map(|(written, _)| written)
    }

    /// [`finish`](Self::finish), giving the caller's writer back.
    pub(crate) fn finish_into(self) -> std::io::Result<(u64, W)> {
        let (out, written) = self.close()?;
        Ok((written, out.finish()?))
    }
}

/// Inline bytes as kerchunk writes them: ASCII text as itself, anything else
/// (and text that would read as base64) as `base64:...`.
fn inline_text(bytes: &[u8]) -> String {
    match std::str::from_utf8(bytes) {
        Ok(text) if text.is_ascii() && !text.starts_with("base64:") => text.to_owned(),
        _ => format!("base64:{}", base64::engine::general_purpose::STANDARD.encode(bytes)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_every_kind_of_value() {
        let mut writer = JsonWriter::new(Vec::new(), JsonVersion::V1).unwrap();
        writer.entry(".zgroup", Reference::Inline(br#"{"zarr_format":2}"#)).unwrap();
        writer.entry("a/0", Reference::Inline(&[0, 255])).unwrap();
        writer.entry("a/1", Reference::Inline(b"base64:looks encoded")).unwrap();
        writer.entry("a/2", Reference::Whole { url: Some("x \"y\".nc") }).unwrap();
        writer.entry("a/3", Reference::Range { url: None, offset: 5, length: 0 }).unwrap();
        let (bytes, n) = writer.close().unwrap();
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
        let (bytes, _) = JsonWriter::new(Vec::new(), JsonVersion::V0).unwrap().close().unwrap();
        assert_eq!(bytes, b"{}");
    }
}
