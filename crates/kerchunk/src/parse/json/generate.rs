//! Version 1 `gen`: references generated from the cartesian product of
//! named dimensions, the last dimension varying fastest (Python's
//! `itertools.product` order).
//!
//! Unlike fsspec since 2026.6.0, `gen` is always expanded: its templates run
//! in the same sandbox as every other template (see [`super::template`]),
//! and the number of references it may generate is capped.

use std::collections::BTreeMap;

use minijinja::value::Value;
use serde_json::Value as Json;

use super::expression::{NativeTemplate, Variable};
use super::template::{Templates, template_error};
use crate::error::ParseError;
use crate::model::ReferenceSetBuilder;

/// Expand every entry of a `gen` array into `builder`.
pub(crate) fn expand(
    gen_doc: &Json,
    templates: &Templates,
    max_generated: u64,
    builder: &mut ReferenceSetBuilder,
) -> Result<(), ParseError> {
    let entries = match gen_doc {
        Json::Null => return Ok(()),
        Json::Array(entries) => entries,
        other => {
            return Err(ParseError::Structure(format!("\"gen\" must be an array, found {other}")));
        }
    };
    let mut generated = 0u64;
    for (index, entry) in entries.iter().enumerate() {
        let spec = GenSpec::parse(index, entry, templates)?;
        generated = generated.saturating_add(spec.count());
        if generated > max_generated {
            return Err(ParseError::Structure(format!(
                "\"gen\" would generate {generated} or more references, more than the limit of \
                 {max_generated} (see Limits::with_max_generated_references)"
            )));
        }
        spec.expand(templates, builder)?;
    }
    Ok(())
}

/// An offset or length of a `gen` entry.
#[derive(Clone, Copy)]
enum Field<'a> {
    Template(&'a str),
    Literal(u64),
}

/// A [`Field`] ready to evaluate.
enum CompiledField<'env, 'source> {
    Template(CompiledTemplate<'env, 'source>),
    Literal(u64),
}

struct GenSpec<'a> {
    index: usize,
    key: &'a str,
    url: &'a str,
    range: Option<(Field<'a>, Field<'a>)>,
    dimensions: Vec<(&'a str, Dimension)>,
}

impl<'a> GenSpec<'a> {
    fn parse(index: usize, entry: &'a Json, templates: &Templates) -> Result<Self, ParseError> {
        let fail = |reason: String| ParseError::Structure(format!("gen[{index}]: {reason}"));
        let Json::Object(map) = entry else {
            return Err(fail(format!("must be an object, found {entry}")));
        };
        let text = |field: &str| -> Result<&'a str, ParseError> {
            match map.get(field) {
                None => Err(fail(format!("missing \"{field}\""))),
                Some(Json::String(s)) => Ok(s.as_str()),
                Some(other) => Err(fail(format!("\"{field}\" must be a string, found {other}"))),
            }
        };
        // Offsets and lengths are template strings; a plain integer is accepted as a literal.
        let number = |field: &str| -> Result<Option<Field<'a>>, ParseError> {
            match map.get(field) {
                None => Ok(None),
                Some(Json::String(s)) => Ok(Some(Field::Template(s.as_str()))),
                Some(Json::Number(n)) if n.is_u64() => Ok(n.as_u64().map(Field::Literal)),
                Some(other) => {
                    Err(fail(format!("\"{field}\" must be a template string or a non-negative integer, found {other}")))
                }
            }
        };
        let key = text("key")?;
        let url = text("url")?;
        let range = match (number("offset")?, number("length")?) {
            (Some(offset), Some(length)) => Some((offset, length)),
            (None, None) => None,
            _ => return Err(fail("\"offset\" and \"length\" must both be present or both absent".into())),
        };
        let Some(Json::Object(dims)) = map.get("dimensions") else {
            return Err(fail("\"dimensions\" must be an object".into()));
        };
        if dims.is_empty() {
            return Err(fail("\"dimensions\" must name at least one dimension".into()));
        }
        let mut dimensions = Vec::with_capacity(dims.len());
        for (name, dim) in dims {
            if templates.contains(name) {
                return Err(fail(format!("dimension {name:?} has the same name as a template")));
            }
            let values = dimension_values(dim).map_err(|reason| fail(format!("dimension {name:?}: {reason}")))?;
            dimensions.push((name.as_str(), values));
        }
        Ok(Self { index, key, url, range, dimensions })
    }

    fn count(&self) -> u64 {
        self.dimensions.iter().fold(1u64, |n, (_, d)| n.saturating_mul(d.len()))
    }

    fn expand(&self, templates: &Templates, builder: &mut ReferenceSetBuilder) -> Result<(), ParseError> {
        if self.count() == 0 {
            return Ok(());
        }
        let env = templates.environment();
        let context = format!("gen[{}]", self.index);
        // Names in scope for native rendering: the dimensions, then the plain templates.
        let plain: Vec<(&str, &str)> = templates.plain_templates().collect();
        let names: Vec<&str> =
            self.dimensions.iter().map(|(name, _)| *name).chain(plain.iter().map(|(n, _)| *n)).collect();
        let native_ok = self.dimensions.iter().all(|(_, d)| d.is_native());
        let compile = |source: &'a str, field: &str| {
            let jinja = env.template_from_str(source).map_err(|e| template_error(&format!("{context}.{field}"), e))?;
            let native = if native_ok { NativeTemplate::compile(source, &names) } else { None };
            Ok::<_, ParseError>(CompiledTemplate { native, jinja, name: field.to_owned() })
        };
        let key_t = compile(self.key, "key")?;
        let url_t = compile(self.url, "url")?;
        let compile_field = |field: Field<'a>, name: &str| match field {
            Field::Template(source) => compile(source, name).map(CompiledField::Template),
            Field::Literal(n) => Ok(CompiledField::Literal(n)),
        };
        let range_t = match self.range {
            Some((o, l)) => Some((compile_field(o, "offset")?, compile_field(l, "length")?)),
            None => None,
        };
        let mut position = vec![0u64; self.dimensions.len()];
        let mut variables: Vec<Variable<'_>> = self
            .dimensions
            .iter()
            .map(|(_, d)| d.variable(0))
            .chain(plain.iter().map(|(_, value)| Variable::Text(value)))
            .collect();
        loop {
            // The jinja context, built only if a field needs the engine.
            let jinja_vars = || {
                let vars: BTreeMap<&str, Value> = self
                    .dimensions
                    .iter()
                    .zip(&position)
                    .map(|((name, dimension), &i)| (*name, dimension.value(i)))
                    .collect();
                Value::from(vars)
            };
            let render = |t: &CompiledTemplate<'_, '_>| -> Result<String, ParseError> {
                if let Some(native) = &t.native {
                    let mut out = String::new();
                    if native.render_into(&variables, &mut out).is_some() {
                        return templates.rendered(out, &context);
                    }
                }
                let vars = jinja_vars();
                let field_context = format!("{context}.{} at {vars}", t.name);
                templates.render_jinja(&t.jinja, vars, &field_context)
            };
            let key = render(&key_t)?;
            if key.len() > templates.max_key_bytes() {
                return Err(ParseError::InvalidReference {
                    key: key.chars().take(64).chain("...".chars()).collect(),
                    reason: format!(
                        "{context} renders a key of {} bytes, longer than the limit of {} (Limits::with_max_key_bytes)",
                        key.len(),
                        templates.max_key_bytes()
                    ),
                });
            }
            let url = render(&url_t)?;
            match &range_t {
                None => builder.insert_whole(&key, Some(&url)),
                Some((offset_t, length_t)) => {
                    // A render that fails stops the document; one that gives no integer
                    // makes this key malformed.
                    let value = |field: &CompiledField<'_, '_>| match field {
                        CompiledField::Literal(n) => Ok(Ok(*n)),
                        CompiledField::Template(t) => {
                            match t.native.as_ref().and_then(|n| n.integer(&variables)).map(u64::try_from) {
                                Some(Ok(n)) => Ok(Ok(n)),
                                _ => Ok(parse_integer(&render(t)?, &t.name)),
                            }
                        }
                    };
                    match (value(offset_t)?, value(length_t)?) {
                        (Ok(offset), Ok(length)) => super::insert_range(builder, &key, Some(&url), offset, length)?,
                        (Err(reason), _) | (_, Err(reason)) => super::malformed(builder, &key, reason)?,
                    }
                }
            }
            // Odometer: the last dimension varies fastest.
            let mut dim = position.len();
            loop {
                if dim == 0 {
                    return Ok(());
                }
                dim -= 1;
                position[dim] += 1;
                if position[dim] < self.dimensions[dim].1.len() {
                    variables[dim] = self.dimensions[dim].1.variable(position[dim]);
                    break;
                }
                position[dim] = 0;
                variables[dim] = self.dimensions[dim].1.variable(0);
            }
        }
    }
}

/// A template field compiled both ways: natively when it is in the native
/// subset, and with jinja for everything else (and to report errors).
struct CompiledTemplate<'env, 'source> {
    native: Option<NativeTemplate>,
    jinja: minijinja::Template<'env, 'source>,
    name: String,
}

/// The values one dimension takes.
enum Dimension {
    /// Python's `range(start, stop, step)`, kept lazy so that the
    /// generated-reference limit is checked before anything is allocated.
    Range {
        start: i64,
        step: i64,
        len: u64,
    },
    List(Vec<Value>),
}

impl Dimension {
    fn len(&self) -> u64 {
        match self {
            Self::Range { len, .. } => *len,
            Self::List(values) => values.len() as u64,
        }
    }

    /// Whether every value can be used by native rendering (integers and strings).
    fn is_native(&self) -> bool {
        match self {
            Self::Range { .. } => true,
            Self::List(values) => values.iter().all(|v| v.is_integer() || v.as_str().is_some()),
        }
    }

    /// Value `i` for native rendering; only called when [`is_native`](Self::is_native).
    fn variable(&self, i: u64) -> Variable<'_> {
        match self {
            Self::Range { start, step, .. } => Variable::Integer(range_value(*start, *step, i)),
            #[expect(clippy::cast_possible_truncation, reason = "an index of a list in memory")]
            Self::List(values) => {
                let value = &values[i as usize];
                match value.as_i64().filter(|_| value.is_integer()) {
                    Some(n) => Variable::Integer(n),
                    None => Variable::Text(value.as_str().unwrap_or_default()),
                }
            }
        }
    }

    fn value(&self, i: u64) -> Value {
        match self {
            Self::Range { start, step, .. } => Value::from(range_value(*start, *step, i)),
            #[expect(clippy::cast_possible_truncation, reason = "an index of a list in memory")]
            Self::List(values) => values[i as usize].clone(),
        }
    }
}

/// Value `i` of `range(start, stop, step)`, for `i` below the range's length.
///
/// `start + step * i` lies between `start` and `stop`, both `i64`, but
/// `step * i` alone may not fit an `i64` (a range from `i64::MIN` to
/// `i64::MAX` in steps of 2^62): so it is computed in `i128`, where it fits
/// (`|step| * i < 2^127`), and the sum is then in range by construction.
fn range_value(start: i64, step: i64, i: u64) -> i64 {
    let value = i128::from(start) + i128::from(step) * i128::from(i);
    // Unreachable for `i` below the length; the nearer end of the range if it ever were.
    i64::try_from(value).unwrap_or(if value < 0 { i64::MIN } else { i64::MAX })
}

/// Why a `gen` dimension cannot be read.
#[derive(Debug, thiserror::Error)]
enum DimensionError {
    #[error("range needs \"{0}\"")]
    Missing(&'static str),
    #[error("range \"{field}\" must be an integer, found {found}")]
    NotAnInteger { field: &'static str, found: Json },
    #[error("range \"step\" must not be zero")]
    ZeroStep,
    #[error("range is too long")]
    TooLong,
    #[error("must be a list or a range object, found {0}")]
    NotADimension(Json),
    #[error("unsupported number {0}")]
    Number(serde_json::Number),
    #[error("list values must be numbers, strings or booleans, found {0}")]
    ListValue(Json),
}

/// Read one dimension: a list, or a Python-style range object.
fn dimension_values(dim: &Json) -> Result<Dimension, DimensionError> {
    match dim {
        Json::Array(items) => items.iter().map(scalar_value).collect::<Result<_, _>>().map(Dimension::List),
        Json::Object(range) => {
            let int = |field: &'static str, default: Option<i64>| match range.get(field) {
                None => default.ok_or(DimensionError::Missing(field)),
                Some(v) => v.as_i64().ok_or_else(|| DimensionError::NotAnInteger { field, found: v.clone() }),
            };
            let (first, stop, stride) = (int("start", Some(0))?, int("stop", None)?, int("step", Some(1))?);
            if stride == 0 {
                return Err(DimensionError::ZeroStep);
            }
            let (span, step_wide) = (i128::from(stop) - i128::from(first), i128::from(stride));
            let len =
                if span != 0 && (span > 0) == (step_wide > 0) { (span.abs() - 1) / step_wide.abs() + 1 } else { 0 };
            let len = u64::try_from(len).map_err(|_| DimensionError::TooLong)?;
            Ok(Dimension::Range { start: first, step: stride, len })
        }
        other => Err(DimensionError::NotADimension(other.clone())),
    }
}

fn scalar_value(value: &Json) -> Result<Value, DimensionError> {
    Ok(match value {
        Json::Number(n) => n
            .as_i64()
            .map(Value::from)
            .or_else(|| n.as_u64().map(Value::from))
            .or_else(|| n.as_f64().map(Value::from))
            .ok_or_else(|| DimensionError::Number(n.clone()))?,
        Json::String(s) => Value::from(s.as_str()),
        Json::Bool(b) => Value::from(*b),
        other => return Err(DimensionError::ListValue(other.clone())),
    })
}

/// A rendered offset or length, or what is wrong with it.
fn parse_integer(text: &str, field: &str) -> Result<u64, String> {
    text.trim().parse::<u64>().map_err(|_| format!("generated {field} {text:?} is not a non-negative integer"))
}
