//! Streaming kerchunk JSON: one reference at a time into any `Write`.

use std::io::Write;

use base64::Engine as _;

use super::{Entry, JsonVersion};

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
    pub(crate) fn entry(&mut self, key: &str, entry: Entry<'_>) -> std::io::Result<()> {
        if self.written > 0 {
            self.out.write_all(b",")?;
        }
        self.written += 1;
        serde_json::to_writer(&mut self.out, key)?;
        self.out.write_all(b":")?;
        match entry {
            Entry::Inline(bytes) => serde_json::to_writer(&mut self.out, &inline_text(bytes))?,
            Entry::Whole(url) => serde_json::to_writer(&mut self.out, &[url])?,
            Entry::Range { url, offset, length } => {
                serde_json::to_writer(&mut self.out, &(url, offset, length))?;
            }
        }
        Ok(())
    }

    /// Close the document; returns the writer and the number of references written.
    pub(crate) fn finish(mut self) -> std::io::Result<(W, u64)> {
        self.out.write_all(match self.version {
            JsonVersion::V0 => b"}",
            JsonVersion::V1 => b"}}",
        })?;
        self.out.flush()?;
        Ok((self.out, self.written))
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
        writer.entry(".zgroup", Entry::Inline(br#"{"zarr_format":2}"#)).unwrap();
        writer.entry("a/0", Entry::Inline(&[0, 255])).unwrap();
        writer.entry("a/1", Entry::Inline(b"base64:looks encoded")).unwrap();
        writer.entry("a/2", Entry::Whole(Some("x \"y\".nc"))).unwrap();
        writer.entry("a/3", Entry::Range { url: None, offset: 5, length: 0 }).unwrap();
        let (bytes, n) = writer.finish().unwrap();
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
        let (bytes, _) = JsonWriter::new(Vec::new(), JsonVersion::V0).unwrap().finish().unwrap();
        assert_eq!(bytes, b"{}");
    }
}
