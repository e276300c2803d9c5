//! Streaming the JSON document into a [`ReferenceSetBuilder`]: no
//! `serde_json::Value` tree is built for the references.
//!
//! One pass over the top-level object inserts version 0 references as they
//! come and keeps the four version 1 members (`version`, `templates`,
//! `refs`, `gen`) as borrowed slices of the input. If the document turns out
//! to be version 1, the version 0 guesses are dropped and `refs` is streamed
//! in a second pass, now that the templates are known.

use std::borrow::Cow;
use std::fmt;

use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::Value as Json;
use serde_json::value::RawValue;

use super::members::Member;
use super::template::Templates;
use super::{insert_range, insert_value};
use crate::error::ParseError;
use crate::model::ReferenceSetBuilder;
use crate::zarr::lenient;

/// The version 1 members of the top-level object, unparsed.
#[derive(Default)]
pub(super) struct DocumentMembers<'de> {
    pub(super) version: Option<&'de RawValue>,
    pub(super) templates: Option<&'de RawValue>,
    pub(super) refs: Option<&'de RawValue>,
    pub(super) gen_doc: Option<&'de RawValue>,
}

/// Stream `text`'s top-level object: version 0 references into `builder`, version 1 members aside.
pub(super) fn top_level<'de>(
    text: &'de str,
    builder: &mut ReferenceSetBuilder,
    location: &str,
) -> Result<DocumentMembers<'de>, ParseError> {
    let mut failure = None;
    let mut deserializer = serde_json::Deserializer::from_str(text);
    let members = TopLevel { builder, templates: None, failure: &mut failure }
        .deserialize(&mut deserializer)
        .and_then(|members| deserializer.end().map(|()| members));
    finish(members, failure, location)
}

/// The version 1 members of the top-level object.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum ReservedMember {
    Version,
    Templates,
    Refs,
    Gen,
}

/// One top-level member read on its own (see [`super::members`]): a version 0
/// reference goes into `builder`; a version 1 member is named, for the caller to keep.
pub(super) fn top_level_member(
    builder: &mut ReferenceSetBuilder,
    member: &Member<'_>,
    location: &str,
) -> Result<Option<ReservedMember>, ParseError> {
    if let Some(range) = &member.range
        && ReservedMember::named(range.key).is_none()
    {
        return insert_range(builder, range.key, Some(range.url), range.offset, range.length).map(|()| None);
    }
    let Key(key) = finish(serde_json::from_slice(member.key), None, location)?;
    if let Some(member) = ReservedMember::named(&key) {
        return Ok(Some(member));
    }
    let mut failure = None;
    let value: Result<RawReference<'_>, _> = serde_json::from_slice(member.value);
    // Bare NaN/Infinity tokens (Python's json) are quoted in this member alone, as the
    // whole-document reader quotes them, so a document that has them is still read once.
    let quoted = match &value {
        Err(e) if e.is_syntax() => lenient::quote_non_finite(member.value),
        _ => None,
    };
    let value = match &quoted {
        Some(quoted) => serde_json::from_slice(quoted).or(value),
        None => value,
    };
    let done = value.and_then(|v| insert(builder, &key, v, None, &mut failure).map_err(de::Error::custom));
    finish(done, failure, location).map(|()| None)
}

impl ReservedMember {
    /// The version 1 member called `name`, if it is one.
    fn named(name: &str) -> Option<Self> {
        Some(match name {
            "version" => Self::Version,
            "templates" => Self::Templates,
            "refs" => Self::Refs,
            "gen" => Self::Gen,
            _ => return None,
        })
    }
}

impl<'de> DocumentMembers<'de> {
    fn slot(&mut self, member: ReservedMember) -> &mut Option<&'de RawValue> {
        match member {
            ReservedMember::Version => &mut self.version,
            ReservedMember::Templates => &mut self.templates,
            ReservedMember::Refs => &mut self.refs,
            ReservedMember::Gen => &mut self.gen_doc,
        }
    }
}

/// Stream a version 1 `refs` object into `builder`, rendering templated URLs.
pub(super) fn refs(
    raw: &RawValue,
    builder: &mut ReferenceSetBuilder,
    templates: Option<&Templates>,
    location: &str,
) -> Result<(), ParseError> {
    let mut failure = None;
    let mut deserializer = serde_json::Deserializer::from_str(raw.get());
    let done = Refs { builder, templates, failure: &mut failure }.deserialize(&mut deserializer);
    finish(done, failure, location)
}

fn finish<T>(
    result: Result<T, serde_json::Error>,
    failure: Option<ParseError>,
    location: &str,
) -> Result<T, ParseError> {
    match (result, failure) {
        (_, Some(failure)) => Err(failure),
        (Ok(value), None) => Ok(value),
        (Err(e), None) if e.is_data() => Err(ParseError::Structure(e.to_string())),
        (Err(source), None) => Err(ParseError::Json { location: location.to_owned(), source }),
    }
}

/// Visits the top-level object.
struct TopLevel<'a> {
    builder: &'a mut ReferenceSetBuilder,
    templates: Option<&'a Templates>,
    failure: &'a mut Option<ParseError>,
}

impl<'de> DeserializeSeed<'de> for TopLevel<'_> {
    type Value = DocumentMembers<'de>;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Self::Value, D::Error> {
        deserializer.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for TopLevel<'_> {
    type Value = DocumentMembers<'de>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("the document to be a JSON object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut members = DocumentMembers::default();
        while let Some(Key(key)) = map.next_key()? {
            if let Some(member) = ReservedMember::named(&key) {
                *members.slot(member) = Some(map.next_value()?);
                continue;
            }
            let value: RawReference<'de> = map.next_value()?;
            insert(self.builder, &key, value, self.templates, self.failure).map_err(de::Error::custom)?;
        }
        Ok(members)
    }
}

/// Visits a version 1 `refs` object.
struct Refs<'a> {
    builder: &'a mut ReferenceSetBuilder,
    templates: Option<&'a Templates>,
    failure: &'a mut Option<ParseError>,
}

impl<'de> DeserializeSeed<'de> for Refs<'_> {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Refs<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("\"refs\" to be an object")
    }

    fn visit_unit<E: de::Error>(self) -> Result<(), E> {
        Ok(()) // "refs": null
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        while let Some(Key(key)) = map.next_key()? {
            let value: RawReference<'de> = map.next_value()?;
            insert(self.builder, &key, value, self.templates, self.failure).map_err(de::Error::custom)?;
        }
        Ok(())
    }
}

/// Insert one reference; a failure is kept aside (serde's error type cannot carry it).
fn insert(
    builder: &mut ReferenceSetBuilder,
    key: &str,
    value: RawReference<'_>,
    templates: Option<&Templates>,
    failure: &mut Option<ParseError>,
) -> Result<(), &'static str> {
    let result = match value {
        RawReference::Text(text) => insert_value(builder, key, &Json::String(text.into_owned()), templates),
        RawReference::Range(url, offset, length) if templates.is_none() || !url.contains("{{") => {
            insert_range(builder, key, Some(&url), offset, length)
        }
        RawReference::Range(url, offset, length) => insert_value(
            builder,
            key,
            &Json::Array(vec![Json::String(url.into_owned()), offset.into(), length.into()]),
            templates,
        ),
        RawReference::Other(value) => insert_value(builder, key, &value, templates),
    };
    result.map_err(|e| {
        *failure = Some(e);
        "invalid reference"
    })
}

/// A key, borrowed from the input unless it has escapes.
struct Key<'de>(Cow<'de, str>);

impl<'de> de::Deserialize<'de> for Key<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct KeyVisitor;
        impl<'de> Visitor<'de> for KeyVisitor {
            type Value = Key<'de>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a string key")
            }
            fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<Key<'de>, E> {
                Ok(Key(Cow::Borrowed(v)))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Key<'de>, E> {
                Ok(Key(Cow::Owned(v.to_owned())))
            }
            fn visit_string<E: de::Error>(self, v: String) -> Result<Key<'de>, E> {
                Ok(Key(Cow::Owned(v)))
            }
        }
        deserializer.deserialize_str(KeyVisitor)
    }
}

/// One reference value as read, with the common shapes kept cheap.
enum RawReference<'de> {
    /// A string (inline text or `base64:`).
    Text(Cow<'de, str>),
    /// `[url, offset, length]` with a string URL and non-negative integers.
    Range(Cow<'de, str>, u64, u64),
    /// Anything else, checked by the general path (which names what is wrong).
    Other(Json),
}

impl<'de> de::Deserialize<'de> for RawReference<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(EntryVisitor)
    }
}

struct EntryVisitor;

impl<'de> Visitor<'de> for EntryVisitor {
    type Value = RawReference<'de>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a reference value")
    }

    fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<RawReference<'de>, E> {
        Ok(RawReference::Text(Cow::Borrowed(v)))
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<RawReference<'de>, E> {
        Ok(RawReference::Text(Cow::Owned(v.to_owned())))
    }

    fn visit_string<E: de::Error>(self, v: String) -> Result<RawReference<'de>, E> {
        Ok(RawReference::Text(Cow::Owned(v)))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<RawReference<'de>, A::Error> {
        // The first four elements tell `[url, offset, length]` apart without a Vec per reference.
        let mut head: [Option<Item<'de>>; 4] = [None, None, None, None];
        for slot in &mut head {
            *slot = seq.next_element()?;
            if slot.is_none() {
                break;
            }
        }
        Ok(match head {
            [Some(Item::Text(url)), Some(Item::Number(offset)), Some(Item::Number(length)), None] => {
                RawReference::Range(url, offset, length)
            }
            head => {
                let mut items: Vec<Json> = head.into_iter().flatten().map(Item::into_json).collect();
                while let Some(item) = seq.next_element::<Item<'de>>()? {
                    items.push(item.into_json());
                }
                RawReference::Other(Json::Array(items))
            }
        })
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<RawReference<'de>, A::Error> {
        de::Deserialize::deserialize(de::value::MapAccessDeserializer::new(map)).map(RawReference::Other)
    }

    fn visit_unit<E: de::Error>(self) -> Result<RawReference<'de>, E> {
        Ok(RawReference::Other(Json::Null))
    }

    fn visit_bool<E: de::Error>(self, v: bool) -> Result<RawReference<'de>, E> {
        Ok(RawReference::Other(Json::Bool(v)))
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> Result<RawReference<'de>, E> {
        Ok(RawReference::Other(v.into()))
    }

    fn visit_i64<E: de::Error>(self, v: i64) -> Result<RawReference<'de>, E> {
        Ok(RawReference::Other(v.into()))
    }

    fn visit_f64<E: de::Error>(self, v: f64) -> Result<RawReference<'de>, E> {
        Ok(RawReference::Other(v.into()))
    }
}

/// One element of a reference array.
enum Item<'de> {
    Text(Cow<'de, str>),
    Number(u64),
    Other(Json),
}

impl Item<'_> {
    fn into_json(self) -> Json {
        match self {
            Self::Text(text) => Json::String(text.into_owned()),
            Self::Number(n) => n.into(),
            Self::Other(value) => value,
        }
    }
}

impl<'de> de::Deserialize<'de> for Item<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        match deserializer.deserialize_any(EntryVisitor)? {
            RawReference::Text(text) => Ok(Item::Text(text)),
            RawReference::Other(Json::Number(n)) if n.is_u64() => Ok(Item::Number(n.as_u64().unwrap_or_default())),
            RawReference::Other(value) => Ok(Item::Other(value)),
            RawReference::Range(url, offset, length) => {
                Ok(Item::Other(Json::Array(vec![Json::String(url.into_owned()), offset.into(), length.into()])))
            }
        }
    }
}
