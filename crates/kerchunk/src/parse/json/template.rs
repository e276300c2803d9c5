//! Version 1 `templates`: `{{name}}` substitution in reference URLs, and the
//! sandboxed jinja environment used for function templates and `gen`.
//!
//! Plain `{{name}}` (with or without inner spaces) is substituted directly,
//! with no template engine involved. Anything else is rendered by
//! `minijinja`, which has no file system or network access, fails on
//! undefined names, caps string and sequence sizes, and here runs with a
//! fuel limit so that a hostile template stops with an error instead of
//! hanging.

use std::collections::BTreeMap;
use std::sync::Arc;

use minijinja::value::{Kwargs, Value};
use minijinja::{Environment, ErrorKind, Template, UndefinedBehavior};

use super::limits::{Budget, Limits, OverBudget};
use crate::error::ParseError;

/// Instructions one render may execute before it is stopped.
const FUEL_PER_RENDER: u64 = 100_000;
/// The longest text one render may produce.
pub(crate) const MAX_RENDERED_LEN: usize = 64 * 1024;

/// The templates of a version 1 reference set, after overrides, and what the
/// document may still spend rendering them.
#[derive(Debug)]
pub(crate) struct Templates {
    values: BTreeMap<String, String>,
    budget: Arc<Budget>,
}

impl Default for Templates {
    fn default() -> Self {
        Self { values: BTreeMap::new(), budget: Arc::new(Budget::new(Limits::default())) }
    }
}

impl Templates {
    /// Read the document's `templates` object and apply `overrides` over it.
    pub(crate) fn new(
        doc: Option<&serde_json::Value>,
        overrides: &BTreeMap<String, String>,
        limits: Limits,
    ) -> Result<Self, ParseError> {
        let mut values = BTreeMap::new();
        match doc {
            None | Some(serde_json::Value::Null) => {}
            Some(serde_json::Value::Object(map)) => {
                for (name, value) in map {
                    let Some(text) = value.as_str() else {
                        return Err(ParseError::Structure(format!(
                            "template {name:?} must be a string, found {value}"
                        )));
                    };
                    values.insert(name.clone(), text.to_owned());
                }
            }
            Some(other) => {
                return Err(ParseError::Structure(format!("\"templates\" must be an object, found {other}")));
            }
        }
        values.extend(overrides.iter().map(|(k, v)| (k.clone(), v.clone())));
        Ok(Self { values, budget: Arc::new(Budget::new(limits)) })
    }

    /// Whether there are no templates (fsspec then leaves URLs untouched).
    pub(crate) fn is_empty(&self) -> bool {
        self.values.is_empty()
    }

    /// Whether `name` is a template.
    pub(crate) fn contains(&self, name: &str) -> bool {
        self.values.contains_key(name)
    }

    /// Every plain (non-function) template with its value.
    pub(crate) fn plain_templates(&self) -> impl Iterator<Item = (&str, &str)> {
        self.values.iter().filter(|(_, v)| !v.contains("{{")).map(|(k, v)| (k.as_str(), v.as_str()))
    }

    /// The value of a plain (non-function) template.
    fn plain(&self, name: &str) -> Option<&str> {
        self.values.get(name).map(String::as_str).filter(|v| !v.contains("{{"))
    }

    /// Render a reference URL; `context` names it in errors.
    pub(crate) fn render(&self, text: &str, context: &str) -> Result<String, ParseError> {
        if let Some(done) = substitute_simple(text, |name| self.plain(name)) {
            return self.rendered(done, context);
        }
        let env = self.environment();
        let template = env.template_from_str(text).map_err(|e| template_error(context, e))?;
        self.render_jinja(&template, Value::UNDEFINED, context)
    }

    /// Render `template` with `variables`, drawing its work and its output on the document's budget.
    pub(crate) fn render_jinja(
        &self,
        template: &Template<'_, '_>,
        variables: Value,
        context: &str,
    ) -> Result<String, ParseError> {
        let over =
            |e: OverBudget| ParseError::Template { context: context.to_owned(), reason: e.to_string(), source: None };
        let output = render_counted(template, variables, &self.budget).map_err(|e| match e {
            Rendered::Failed(e) => template_error(context, e),
            Rendered::OverBudget(e) => over(e),
        })?;
        self.rendered(output, context)
    }

    /// The longest key `gen` may render ([`Limits::with_max_key_bytes`]).
    pub(crate) fn max_key_bytes(&self) -> usize {
        self.budget.max_key_bytes()
    }

    /// Text rendered for `context`: within the per-render cap and the document's budget.
    pub(crate) fn rendered(&self, text: String, context: &str) -> Result<String, ParseError> {
        let text = check_len(text, context)?;
        self.budget.spend_bytes(text.len()).map_err(|e| ParseError::Template {
            context: context.to_owned(),
            reason: e.to_string(),
            source: None,
        })?;
        Ok(text)
    }

    /// A sandboxed environment with the plain templates as global strings and
    /// the function templates as functions taking keyword arguments.
    pub(crate) fn environment<'s>(&self) -> Environment<'s> {
        let mut env = sandboxed_environment();
        let body_env = Arc::new(sandboxed_environment());
        for (name, value) in &self.values {
            if value.contains("{{") {
                let (body, body_env, budget) = (value.clone(), Arc::clone(&body_env), Arc::clone(&self.budget));
                // A function template's body runs in an environment of its own, on the same budget.
                env.add_function(name.clone(), move |kwargs: Kwargs| {
                    let template = body_env.template_from_str(&body)?;
                    render_counted(&template, Value::from(kwargs), &budget).map_err(|e| match e {
                        Rendered::Failed(e) => e,
                        Rendered::OverBudget(e) => minijinja::Error::new(ErrorKind::InvalidOperation, e.to_string()),
                    })
                });
            } else {
                env.add_global(name.clone(), Value::from(value.clone()));
            }
        }
        env
    }
}

/// Why a counted render produced nothing.
enum Rendered {
    Failed(minijinja::Error),
    OverBudget(OverBudget),
}

/// Render `template`, then charge the fuel it used to `budget`. A render is
/// refused once the budget is spent, so a document does at most its budget
/// plus one render's fuel of template work.
fn render_counted(template: &Template<'_, '_>, variables: Value, budget: &Budget) -> Result<String, Rendered> {
    if budget.fuel_for_render(FUEL_PER_RENDER) == 0 {
        return Err(Rendered::OverBudget(budget.spend_fuel(1).expect_err("no fuel is left")));
    }
    if !budget.has_time() {
        return Err(Rendered::OverBudget(budget.out_of_time()));
    }
    let started = std::time::Instant::now();
    let rendered = template.render_captured(variables);
    // A function template's render is inside its caller's: its time counts for both, a bound still.
    let timed = budget.spend_time(started);
    match rendered {
        Ok(captured) => {
            let used = captured.state().fuel_levels().map_or(0, |(consumed, _)| consumed);
            budget.spend_fuel(used).map_err(Rendered::OverBudget)?;
            timed.map_err(Rendered::OverBudget)?;
            Ok(captured.output().to_owned())
        }
        Err(error) => {
            if error.kind() == ErrorKind::OutOfFuel {
                let _ = budget.spend_fuel(FUEL_PER_RENDER);
            }
            Err(Rendered::Failed(error))
        }
    }
}

fn sandboxed_environment<'s>() -> Environment<'s> {
    let mut env = Environment::new();
    env.set_undefined_behavior(UndefinedBehavior::Strict);
    env.set_fuel(Some(FUEL_PER_RENDER));
    // Keep URLs and keys byte-exact: no HTML escaping.
    env.set_auto_escape_callback(|_| minijinja::AutoEscape::None);
    env
}

pub(crate) fn template_error(context: &str, error: minijinja::Error) -> ParseError {
    ParseError::Template { context: context.to_owned(), reason: crate::error::error_chain(&error), source: Some(error) }
}

pub(crate) fn check_len(text: String, context: &str) -> Result<String, ParseError> {
    if text.len() > MAX_RENDERED_LEN {
        return Err(ParseError::Template {
            context: context.to_owned(),
            reason: format!("rendered text is {} bytes, more than the limit of {MAX_RENDERED_LEN}", text.len()),
            source: None,
        });
    }
    Ok(text)
}

/// Substitute `{{ name }}` placeholders directly when every placeholder in
/// `text` is a bare identifier that `lookup` knows; `None` otherwise (the
/// caller then falls back to the template engine).
pub(crate) fn substitute_simple<'v>(text: &str, lookup: impl Fn(&str) -> Option<&'v str>) -> Option<String> {
    if !only_placeholders(text) {
        return None;
    }
    let mut out = String::with_capacity(text.len() + 32);
    let mut rest = text;
    while let Some(start) = rest.find("{{") {
        out.push_str(&rest[..start]);
        let after = &rest[start + 2..];
        let end = after.find("}}")?;
        let name = after[..end].trim();
        if !is_identifier(name) {
            return None;
        }
        out.push_str(lookup(name)?);
        rest = &after[end + 2..];
    }
    if rest.contains("}}") {
        return None;
    }
    out.push_str(rest);
    Some(out)
}

/// Whether `text` has no jinja syntax but plain `{{ ... }}` placeholders: no
/// statement (`{% ... %}`), comment (`{# ... #}`) or whitespace control
/// (`{{-`, `-}}`, `{{+`, `+}}`). Only such text may take a native fast path;
/// anything else goes to minijinja, so that both always render the same.
pub(crate) fn only_placeholders(text: &str) -> bool {
    ["{%", "{#", "{{-", "-}}", "{{+", "+}}"].iter().all(|syntax| !text.contains(syntax))
}

fn is_identifier(name: &str) -> bool {
    let mut chars = name.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

#[cfg(test)]
mod tests {
    use super::*;

    fn templates(pairs: &[(&str, &str)]) -> Templates {
        let doc = serde_json::Value::Object(
            pairs.iter().map(|(k, v)| ((*k).to_owned(), serde_json::Value::from(*v))).collect(),
        );
        Templates::new(Some(&doc), &BTreeMap::new(), Limits::default()).unwrap()
    }

    #[test]
    fn plain_substitution_with_and_without_spaces() {
        let t = templates(&[("u", "server.domain/path"), ("v", "x")]);
        assert_eq!(t.render("http://{{u}}", "k").unwrap(), "http://server.domain/path");
        assert_eq!(t.render("http://{{ u }}_{{v}}", "k").unwrap(), "http://server.domain/path_x");
    }

    #[test]
    fn function_template() {
        let t = templates(&[("f", "{{c}}")]);
        assert_eq!(t.render("http://{{f(c='text')}}", "k").unwrap(), "http://text");
    }

    #[test]
    fn unknown_name_is_an_error_naming_the_key() {
        let t = templates(&[("u", "a")]);
        let err = t.render("{{nope}}", "x/0").unwrap_err().to_string();
        assert!(err.contains("x/0") && err.contains("undefined"), "{err}");
    }

    #[test]
    fn hostile_templates_fail_fast() {
        let t = templates(&[("u", "a")]);
        for hostile in [
            "{% for i in range(100000) %}{% for j in range(100000) %}x{% endfor %}{% endfor %}",
            "{{ 'x' * 1000000000 }}",
            "{% macro f() %}{{ f() }}{% endmacro %}{{ f() }}",
            "{% include 'etc/passwd' %}",
        ] {
            assert!(t.render(hostile, "k").is_err(), "{hostile}");
        }
        let big = "{{ 'x' * 100000 }}";
        assert!(t.render(big, "k").unwrap_err().to_string().contains("limit"));
    }

    #[test]
    fn overrides_win() {
        let doc = serde_json::json!({"root": "."});
        let overrides = BTreeMap::from([("root".to_owned(), "/abs".to_owned())]);
        let t = Templates::new(Some(&doc), &overrides, Limits::default()).unwrap();
        assert_eq!(t.render("{{root}}/data.nc", "k").unwrap(), "/abs/data.nc");
    }

    /// Plain substitution renders exactly what minijinja renders, or declines.
    #[test]
    fn plain_substitution_matches_jinja() {
        let t = templates(&[("u", "s3://bucket/path"), ("v", "x y")]);
        let env = t.environment();
        for text in [
            "{{u}}/a",
            "{% if true %}{{u}}{% endif %}/b",
            "{# c #}{{u}}",
            "a{% set u = 'z' %}{{u}}",
            "{%- if true %} {{ v }}{% endif %}",
            "{{u}}{# {{v}} #}{{v}}",
            "{% raw %}{{u}}{% endraw %}",
            "{{-u-}} {{ v }}",
            "x}}{{u}}",
        ] {
            let jinja = env.render_str(text, ()).unwrap();
            assert_eq!(t.render(text, "k").unwrap(), jinja, "{text}");
        }
    }
}
