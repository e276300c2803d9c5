//! Reference documents given as Python dicts (kerchunk's `translate()` output), read as the
//! JSON text `json.dumps` would make of them is read, without making it where that is plain.

use std::sync::Arc;

use kerchunk::{ParseOptions, ReferenceSet, ReferenceSetBuilder};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyInt, PyList, PyString, PyTuple};
use serde_json::Value as Json;

/// A document as combining opens it: its references taken from Python, or its JSON text, each
/// still to be read into a set (on combining's threads, without the GIL).
pub(crate) enum Document {
    /// A plain document's references, as the parser would read each from its text.
    Values(Vec<(String, Value)>),
    Text(String),
}

/// A reference of a plain document.
pub(crate) enum Value {
    /// `[url, offset, length]`, the most of a document's references: its URL shared by the
    /// references before it to the same target, not copied for each.
    Range { url: Option<Arc<str>>, offset: u64, length: u64 },
    /// Any other, as `json.dumps` would write it.
    Json(Json),
}

impl Document {
    /// `document` (a dict): its references taken here if it is a plain version 1 document
    /// (`version` 1, no `templates` or `gen`, `refs` whose keys are strings and whose values are
    /// strings or lists of strings, `None` and integers), each as the JSON value `json.dumps`
    /// would write, which [`ReferenceSetBuilder::insert_json`] reads as the parser reads that
    /// text; any other document as `json.dumps`' text, for the parser.
    ///
    /// # Errors
    /// `json.dumps`' error, for a document JSON cannot hold (bytes, say).
    pub(crate) fn new(document: &Bound<'_, PyAny>) -> PyResult<Self> {
        if let Ok(dict) = document.cast_exact::<PyDict>()
            && let Some(values) = plain(dict)?
        {
            return Ok(Self::Values(values));
        }
        let text = document.py().import("json")?.call_method1("dumps", (document,))?;
        Ok(Self::Text(text.extract()?))
    }

    /// The set, parsed if it is text; errors name it `location`.
    ///
    /// # Errors
    /// The parser's, for text that is not a reference document.
    pub(crate) fn read(self, location: &str) -> Result<ReferenceSet, kerchunk::ParseError> {
        match self {
            Self::Values(values) => {
                let mut builder = ReferenceSetBuilder::new();
                // Each array's `.zarray` first, so that its chunks go straight to its table: kerchunk
                // writes the chunks first, and each was held by its key text until the table came.
                // A dict's keys are distinct, so the order changes nothing else.
                let is_zarray = |key: &str| key == ".zarray" || key.ends_with("/.zarray");
                let (zarrays, others): (Vec<_>, Vec<_>) = values.iter().partition(|(key, _)| is_zarray(key));
                for (key, value) in zarrays.into_iter().chain(others) {
                    match value {
                        // What the parser does with `[url, offset, length]`, where the range is whole.
                        Value::Range { url, offset, length } if offset.checked_add(*length).is_some() => {
                            builder.insert_range(key, url.as_deref(), *offset, *length);
                        }
                        Value::Range { url, offset, length } => {
                            let url = url.as_deref().map_or(Json::Null, Json::from);
                            builder
                                .insert_json(key, &Json::Array(vec![url, Json::from(*offset), Json::from(*length)]))?;
                        }
                        // The builder keeps malformed references, as the parser's default does.
                        Value::Json(value) => builder.insert_json(key, value)?,
                    }
                }
                Ok(builder.build())
            }
            Self::Text(text) => ReferenceSet::from_json_at(text.as_bytes(), &ParseOptions::default(), location),
        }
    }
}

/// `document` read directly, or `None` where it is not plain (see [`Document::new`]).
fn plain(document: &Bound<'_, PyDict>) -> PyResult<Option<Vec<(String, Value)>>> {
    let mut refs = None;
    for (name, value) in document.iter() {
        let Some(name) = name.is_exact_instance_of::<PyString>().then(|| text(&name)).flatten() else {
            return Ok(None);
        };
        match name.as_str() {
            "version" if value.is_exact_instance_of::<PyInt>() && value.extract::<i64>().ok() == Some(1) => {}
            "refs" => refs = Some(value),
            _ => return Ok(None),
        }
    }
    if document.len() != 2 {
        return Ok(None);
    }
    let Some(Ok(refs)) = refs.as_ref().map(|refs| refs.cast_exact::<PyDict>()) else { return Ok(None) };
    let mut values = Vec::with_capacity(refs.len());
    let mut previous_url = None;
    for (key, value) in refs.iter() {
        let key = key.is_exact_instance_of::<PyString>().then(|| text(&key)).flatten();
        let value = match range(&value, &mut previous_url)? {
            Some(range) => Some(range),
            None => reference(&value)?.map(Value::Json),
        };
        let (Some(key), Some(value)) = (key, value) else { return Ok(None) };
        values.push((key, value));
    }
    Ok(Some(values))
}

/// A list `[url, offset, length]` (a string or `None`, then two integers of 64 bits) as a
/// [`Value::Range`], its URL the one before's (`previous`) where the text is the same; `None` for
/// anything else.
fn range(value: &Bound<'_, PyAny>, previous: &mut Option<Arc<str>>) -> PyResult<Option<Value>> {
    let Ok(list) = value.cast_exact::<PyList>() else { return Ok(None) };
    if list.len() != 3 {
        return Ok(None);
    }
    let number =
        |item: Bound<'_, PyAny>| item.is_exact_instance_of::<PyInt>().then(|| item.extract::<u64>().ok()).flatten();
    let (Some(offset), Some(length)) = (number(list.get_item(1)?), number(list.get_item(2)?)) else { return Ok(None) };
    let url = list.get_item(0)?;
    let url = if url.is_none() {
        None
    } else {
        let Some(text) = url.cast_exact::<PyString>().ok().and_then(|url| url.to_str().ok()) else { return Ok(None) };
        match previous {
            Some(url) if **url == *text => Some(Arc::clone(url)),
            _ => Some(Arc::clone(previous.insert(Arc::from(text)))),
        }
    };
    Ok(Some(Value::Range { url, offset, length }))
}

/// A reference value as the JSON `json.dumps` writes of it, where that is one of the plain forms.
fn reference(value: &Bound<'_, PyAny>) -> PyResult<Option<Json>> {
    if value.is_exact_instance_of::<PyString>() {
        return Ok(text(value).map(Json::String));
    }
    if !(value.is_exact_instance_of::<PyList>() || value.is_exact_instance_of::<PyTuple>()) {
        return Ok(None);
    }
    let mut array = Vec::with_capacity(value.len()?);
    for item in value.try_iter()? {
        let item = item?;
        array.push(if item.is_none() {
            Json::Null
        } else if item.is_exact_instance_of::<PyString>() {
            let Some(text) = text(&item) else { return Ok(None) };
            Json::String(text)
        } else if !item.is_exact_instance_of::<PyInt>() {
            return Ok(None);
        } else if let Ok(number) = item.extract::<u64>() {
            Json::from(number)
        } else if let Ok(number) = item.extract::<i64>() {
            Json::from(number)
        } else {
            // Past 64 bits: the parser reads json.dumps' digits as a float.
            return Ok(None);
        });
    }
    Ok(Some(Json::Array(array)))
}

/// A Python string's text, unless it has lone surrogates (which `json.dumps` escapes and the
/// parser refuses: left to them).
fn text(value: &Bound<'_, PyAny>) -> Option<String> {
    value.cast::<PyString>().ok()?.to_str().ok().map(str::to_owned)
}
