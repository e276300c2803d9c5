//! Kerchunk JSON reference documents (version 0 and 1) into a [`ReferenceSet`]. No I/O.

mod compression;
mod expression;
mod fast;
mod generate;
mod limits;
mod members;
mod pipeline;
mod stream;
mod template;

use std::collections::BTreeMap;

use base64::Engine as _;
use std::io::Read;

use serde_json::Value as Json;
use serde_json::value::RawValue;

use crate::error::ParseError;
use crate::model::{ReferenceSet, ReferenceSetBuilder};
use crate::zarr::lenient;
pub use limits::Limits;
use template::Templates;

/// How reference documents are parsed.
///
/// ```
/// use kerchunk::ParseOptions;
/// let options = ParseOptions::default()
///     .with_template_override("root", "/data/netcdf")
///     .with_max_generated_references(1_000_000);
/// # let _ = options;
/// ```
#[derive(Clone, Debug, Default)]
pub struct ParseOptions {
    template_overrides: BTreeMap<String, String>,
    limits: Limits,
    malformed: MalformedReferences,
}

/// What a parser does with a reference the document states but that cannot
/// be read (see [`Reference::Malformed`](crate::Reference::Malformed)): a
/// 2- or 4-element array, an offset or length that is not a non-negative
/// integer, an end past `u64::MAX`, undecodable base64, a URL that is not a
/// string, a `gen` offset that renders to something other than an integer.
///
/// Whatever the policy, a document that is not a reference set (not JSON,
/// not an object, a `gen` entry without its fields, a template that fails,
/// a limit passed) is refused as a whole: only the reference is in doubt
/// here, never the document.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum MalformedReferences {
    /// Keep the key, and make every read of it an error naming the key and
    /// the cause; the other keys read as usual. What fsspec and GDAL do: one
    /// corrupt entry leaves the rest of a large set readable.
    #[default]
    FailWhenRead,
    /// Refuse the whole document with [`ParseError::InvalidReference`],
    /// naming the first malformed key: for validating a set before it is
    /// published. (A parquet root's records are read lazily, so a malformed
    /// row there always fails its key when read.)
    Refuse,
}

impl ParseOptions {
    /// Replace (or add) the version 1 template `name`, like fsspec's `template_overrides`.
    #[must_use]
    pub fn with_template_override(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.template_overrides.insert(name.into(), value.into());
        self
    }

    /// The most references `gen` entries may generate in total (default 10^7);
    /// see [`Limits::with_max_generated_references`].
    #[must_use]
    pub fn with_max_generated_references(mut self, max: u64) -> Self {
        self.limits = self.limits.with_max_generated_references(max);
        self
    }

    /// What one document may make the reader do (see [`Limits`]).
    #[must_use]
    pub fn with_limits(mut self, limits: Limits) -> Self {
        self.limits = limits;
        self
    }

    /// The limits in force.
    #[must_use]
    pub fn limits(&self) -> Limits {
        self.limits
    }

    /// What to do with a malformed reference (default: keep its key, and
    /// fail its reads; see [`MalformedReferences`]).
    #[must_use]
    pub fn with_malformed_references(mut self, policy: MalformedReferences) -> Self {
        self.malformed = policy;
        self
    }

    /// The policy for malformed references in force.
    #[must_use]
    pub fn malformed_references(&self) -> MalformedReferences {
        self.malformed
    }

    /// An empty builder that applies these options' policy for malformed references.
    fn builder(&self) -> ReferenceSetBuilder {
        let mut builder = ReferenceSetBuilder::new();
        builder.refuse_malformed = self.malformed == MalformedReferences::Refuse;
        builder
    }
}

impl ReferenceSet {
    /// Parse a kerchunk JSON reference document (version 0 or 1), compressed
    /// with gzip or zstd or not.
    ///
    /// ```
    /// use kerchunk::{ParseOptions, Reference, ReferenceSet};
    /// let doc = br#"{"version": 1, "templates": {"u": "s3://bucket/file.nc"},
    ///               "refs": {".zgroup": {"zarr_format": 2}, "x/0": ["{{u}}", 100, 8]}}"#;
    /// let set = ReferenceSet::from_json(doc, &ParseOptions::default())?;
    /// assert_eq!(set.get(".zgroup"), Some(Reference::Inline(br#"{"zarr_format":2}"#)));
    /// assert_eq!(set.get("x/0"), Some(Reference::Range { url: Some("s3://bucket/file.nc"), offset: 100, length: 8 }));
    /// # Ok::<(), kerchunk::ParseError>(())
    /// ```
    ///
    /// # Errors
    /// [`ParseError`] naming the offending key for any malformed reference,
    /// template or `gen` entry; see the crate documentation for what is accepted.
    pub fn from_json(bytes: &[u8], options: &ParseOptions) -> Result<Self, ParseError> {
        Self::from_json_at(bytes, options, "(in memory)")
    }

    /// Parse a kerchunk JSON document from `reader` a block at a time, so
    /// that a large version 0 document is never held whole: the same
    /// references as [`from_json`](Self::from_json) on the same bytes.
    /// zstd and gzip are detected as in [`from_json`](Self::from_json).
    /// A document longer than one block (256 KiB) is read on two threads:
    /// this one reads and scans it while a scoped thread, ended before this
    /// returns, reads the members into the set.
    ///
    /// ```
    /// use kerchunk::{ParseOptions, Reference, ReferenceSet};
    /// let text = br#"{"x/0": ["s3://bucket/file.nc", 100, 8]}"#;
    /// let set = ReferenceSet::from_reader(&text[..], &ParseOptions::default())?;
    /// assert_eq!(set.get("x/0"), Some(Reference::Range { url: Some("s3://bucket/file.nc"), offset: 100, length: 8 }));
    /// # Ok::<(), kerchunk::ParseError>(())
    /// ```
    ///
    /// # Errors
    /// As [`from_json`](Self::from_json), and [`ParseError::Io`] if
    /// `reader` fails. Bare `NaN` and `Infinity` tokens are accepted, as by
    /// [`from_json`](Self::from_json); text that is not JSON is reported with a
    /// byte offset rather than a line and column.
    pub fn from_reader(reader: impl Read, options: &ParseOptions) -> Result<Self, ParseError> {
        Self::from_json_reader(reader, options, "(reader)")
    }

    /// [`from_json`](Self::from_json) for a document read from `location`, which errors name.
    ///
    /// # Errors
    /// As [`from_json`](Self::from_json).
    pub fn from_json_at(bytes: &[u8], options: &ParseOptions, location: &str) -> Result<Self, ParseError> {
        fn utf8<'b>(bytes: &'b [u8], location: &str) -> Result<&'b str, ParseError> {
            std::str::from_utf8(bytes).map_err(|source| ParseError::NotUtf8 { location: location.to_owned(), source })
        }
        let bytes = compression::decompress(bytes, options.limits.document_bytes, location)?;
        // Bare NaN/Infinity tokens (Python's json) are rare outside the string-encoded
        // metadata, so they are only looked for when the strict parse fails.
        match Self::from_json_text(utf8(&bytes, location)?, options, location) {
            Err(strict @ ParseError::Json { .. }) => match lenient::quote_non_finite(&bytes) {
                Some(quoted) => Self::from_json_text(utf8(&quoted, location)?, options, location),
                None => Err(strict),
            },
            result => result,
        }
    }

    /// Parse a reference document from `reader` a block at a time, so that
    /// it is never in memory whole (unless it is version 1, whose `refs` wait
    /// for the templates). `location` names it in errors.
    ///
    /// Bare `NaN` and `Infinity` tokens are accepted. Errors that are about
    /// the JSON text are reported with a byte offset; to report them with a
    /// line and column, the caller may read the document whole and use
    /// [`from_json_at`](Self::from_json_at) ([`ParseError::is_not_json`]
    /// tells these errors apart).
    ///
    /// # Errors
    /// As [`from_reader`](Self::from_reader).
    pub fn from_json_reader(reader: impl Read, options: &ParseOptions, location: &str) -> Result<Self, ParseError> {
        Self::from_json_blocks(reader, options, location, members::BLOCK)
    }

    /// [`from_json_reader`](Self::from_json_reader) in blocks of `block` bytes.
    fn from_json_blocks(
        reader: impl Read,
        options: &ParseOptions,
        location: &str,
        block: usize,
    ) -> Result<Self, ParseError> {
        let mut naming = pipeline::Naming { location, format: None, limit: options.limits.document_bytes, options };
        let (reader, format) = compression::decompressing(reader, naming.limit).map_err(|e| naming.read_error(e))?;
        naming.format = format;
        let pipeline::Members { builder, kept } = pipeline::read(members::MemberScanner::new(reader, block), naming)?;
        // Each kept member is parsed once. Only one that is not JSON is looked at again: its
        // bare NaN/Infinity tokens quoted (version 1 `refs`, say), as the whole-document
        // reader quotes them, and the quoted copy parsed.
        let quoted: [std::cell::OnceCell<Vec<u8>>; 4] = Default::default();
        let raw = |i: stream::ReservedMember| -> Result<Option<&RawValue>, ParseError> {
            let Some(member) = kept[i as usize].as_deref() else { return Ok(None) };
            let mut parsed = serde_json::from_slice(member);
            if let Err(e) = &parsed
                && e.is_syntax()
                && let Some(copy) = lenient::quote_non_finite(member)
            {
                parsed = serde_json::from_slice(quoted[i as usize].get_or_init(|| copy));
            }
            parsed.map(Some).map_err(|source| ParseError::Json { location: location.to_owned(), source })
        };
        let members = stream::DocumentMembers {
            version: raw(stream::ReservedMember::Version)?,
            templates: raw(stream::ReservedMember::Templates)?,
            refs: raw(stream::ReservedMember::Refs)?,
            gen_doc: raw(stream::ReservedMember::Gen)?,
        };
        Self::finish_document(builder, &members, options, location)
    }

    /// Parse the text of a reference document.
    fn from_json_text(text: &str, options: &ParseOptions, location: &str) -> Result<Self, ParseError> {
        let mut builder = options.builder();
        let members = stream::top_level(text, &mut builder, location)?;
        Self::finish_document(builder, &members, options, location)
    }

    /// Finish a document whose version 0 references are in `builder` and
    /// whose version 1 members are `members`.
    fn finish_document(
        mut builder: ReferenceSetBuilder,
        members: &stream::DocumentMembers<'_>,
        options: &ParseOptions,
        location: &str,
    ) -> Result<Self, ParseError> {
        let json_error = |source| ParseError::Json { location: location.to_owned(), source };
        let member = |raw: Option<&RawValue>| {
            raw.map(|raw| serde_json::from_str::<Json>(raw.get()).map_err(json_error)).transpose()
        };
        let Some(version) = member(members.version)? else {
            // Version 0: the whole object is the references, these names included; no templating.
            for (name, raw) in [("templates", members.templates), ("refs", members.refs), ("gen", members.gen_doc)] {
                if let Some(value) = member(raw)? {
                    insert_value(&mut builder, name, &value, None)?;
                }
            }
            return Ok(builder.build());
        };
        if version.as_f64() != Some(1.0) {
            return Err(ParseError::UnsupportedVersion(version.to_string()));
        }
        // Version 1: only `refs` and `gen` hold references.
        let mut builder = options.builder();
        let templates =
            Templates::new(member(members.templates)?.as_ref(), &options.template_overrides, options.limits)?;
        let templates_for_urls = (!templates.is_empty()).then_some(&templates);
        if let Some(refs) = members.refs {
            stream::refs(refs, &mut builder, templates_for_urls, location)?;
        }
        // fsspec applies `gen` last: generated keys replace same-named refs.
        if let Some(gen_doc) = member(members.gen_doc)? {
            generate::expand(&gen_doc, &templates, options.limits.generated_references, &mut builder)?;
        }
        Ok(builder.build())
    }
}

impl ReferenceSetBuilder {
    /// Set `key` to `value`, a reference as a version 1 document without templates holds it
    /// under `refs`, read exactly as the document's parser reads it: a string (inline text, or
    /// `base64:` and its bytes), an object (its JSON text), `[url]` or `[url, offset, length]`.
    /// For references that arrive as values, not as a document (a Python dict of `refs`).
    ///
    /// ```
    /// use kerchunk::{Reference, ReferenceSetBuilder};
    /// let mut builder = ReferenceSetBuilder::new();
    /// builder.insert_json("x/0", &serde_json::json!(["s3://bucket/file.nc", 100, 8]))?;
    /// builder.insert_json("x/1", &serde_json::json!("base64:AP8="))?;
    /// let set = builder.build();
    /// assert_eq!(set.get("x/0"), Some(Reference::Range { url: Some("s3://bucket/file.nc"), offset: 100, length: 8 }));
    /// assert_eq!(set.get("x/1"), Some(Reference::Inline(&[0, 255])));
    /// # Ok::<(), kerchunk::ParseError>(())
    /// ```
    ///
    /// # Errors
    /// None with the builder's default policy, which keeps a malformed reference as
    /// [`Reference::Malformed`](crate::Reference::Malformed) (its reads fail); with
    /// [`MalformedReferences::Refuse`], [`ParseError::InvalidReference`] naming `key`.
    pub fn insert_json(&mut self, key: &str, value: &Json) -> Result<(), ParseError> {
        insert_value(self, key, value, None)
    }
}

pub(crate) fn insert_value(
    builder: &mut ReferenceSetBuilder,
    key: &str,
    value: &Json,
    templates: Option<&Templates>,
) -> Result<(), ParseError> {
    match value {
        Json::String(text) => match text.strip_prefix("base64:") {
            Some(encoded) => match BASE64.decode(encoded.trim_end()) {
                Ok(decoded) => builder.insert_inline(key, &decoded),
                Err(e) => return malformed(builder, key, format!("undecodable base64: {e}")),
            },
            None => builder.insert_inline(key, text.as_bytes()),
        },
        Json::Object(_) => {
            let text = serde_json::to_vec(value).expect("a JSON value serialises");
            builder.insert_inline(key, &text);
        }
        Json::Array(items) => {
            let url = match items.first() {
                Some(Json::Null) => None,
                Some(Json::String(url)) => Some(match templates {
                    Some(t) if url.contains("{{") => std::borrow::Cow::Owned(t.render(url, &format!("key {key:?}"))?),
                    _ => std::borrow::Cow::Borrowed(url.as_str()),
                }),
                Some(other) => {
                    return malformed(builder, key, format!("the URL must be a string or null, found {other}"));
                }
                None => return malformed(builder, key, "an empty array is not a reference".into()),
            };
            match items.len() {
                1 => builder.insert_whole(key, url.as_deref()),
                3 => {
                    let number = |i: usize, what: &str| {
                        items[i]
                            .as_u64()
                            .ok_or_else(|| format!("the {what} must be a non-negative integer, found {}", items[i]))
                    };
                    return match (number(1, "offset"), number(2, "length")) {
                        (Ok(offset), Ok(length)) => insert_range(builder, key, url.as_deref(), offset, length),
                        (Err(reason), _) | (_, Err(reason)) => malformed(builder, key, reason),
                    };
                }
                n => {
                    let reason = format!("a reference array has 1 element [url] or 3 [url, offset, length], not {n}");
                    return malformed(builder, key, reason);
                }
            }
        }
        other => {
            let reason = format!("a value must be a string, an object or an array, not {}", kind(other));
            return malformed(builder, key, reason);
        }
    }
    Ok(())
}

/// Set `key` to a range reference, if its end fits in a `u64`.
pub(crate) fn insert_range(
    builder: &mut ReferenceSetBuilder,
    key: &str,
    url: Option<&str>,
    offset: u64,
    length: u64,
) -> Result<(), ParseError> {
    if offset.checked_add(length).is_none() {
        return malformed(builder, key, format!("offset {offset} + length {length} overflows"));
    }
    builder.insert_range(key, url, offset, length);
    Ok(())
}

/// `key` states a reference that cannot be read, for `reason`: keep the key as
/// malformed (its reads fail), or refuse the document, as the policy says.
pub(crate) fn malformed(builder: &mut ReferenceSetBuilder, key: &str, reason: String) -> Result<(), ParseError> {
    if builder.refuse_malformed {
        return Err(ParseError::InvalidReference { key: key.to_owned(), reason });
    }
    builder.insert_malformed(key, &reason);
    Ok(())
}

/// Standard alphabet; padding optional and non-zero trailing bits allowed,
/// as Python's `base64.b64decode` tolerates, but any other character is an error.
const BASE64: base64::engine::GeneralPurpose = base64::engine::GeneralPurpose::new(
    &base64::alphabet::STANDARD,
    base64::engine::GeneralPurposeConfig::new()
        .with_decode_padding_mode(base64::engine::DecodePaddingMode::Indifferent)
        .with_decode_allow_trailing_bits(true),
);

fn kind(value: &Json) -> &'static str {
    match value {
        Json::Null => "null",
        Json::Bool(_) => "a boolean",
        Json::Number(_) => "a number",
        Json::String(_) => "a string",
        Json::Array(_) => "an array",
        Json::Object(_) => "an object",
    }
}

#[cfg(test)]
mod tests;
