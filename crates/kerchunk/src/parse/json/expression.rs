//! Native evaluation of the templates `gen` entries use in practice:
//! literal text with `{{ ... }}` placeholders holding a name or integer
//! arithmetic (`+ - * // %`, unary minus, parentheses) over dimension values.
//!
//! A template is compiled once and then rendered per reference with no
//! template engine. Anything outside this subset (filters, calls, strings,
//! true division `/`, unknown names) does not compile here, and the caller
//! renders it with the sandboxed jinja engine instead. Semantics follow
//! Python's, which jinja uses: `//` and `%` round towards negative infinity.

use std::fmt::Write as _;

/// A value a name stands for while rendering.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Variable<'a> {
    Integer(i64),
    Text(&'a str),
}

/// A compiled template.
#[derive(Debug)]
pub(crate) struct NativeTemplate {
    parts: Vec<Part>,
}

#[derive(Debug)]
enum Part {
    Literal(String),
    Placeholder(Expr),
}

#[derive(Debug)]
enum Expr {
    Integer(i64),
    /// The index of a name in the compile-time name list.
    Name(usize),
    Negate(Box<Expr>),
    Binary(Op, Box<Expr>, Box<Expr>),
}

#[derive(Clone, Copy, Debug)]
enum Op {
    Add,
    Subtract,
    Multiply,
    FloorDivide,
    Modulo,
}

impl NativeTemplate {
    /// Compile `text`, whose placeholders may use `names` (the dimensions and
    /// templates in scope); `None` if it needs the full template engine.
    pub(crate) fn compile(text: &str, names: &[&str]) -> Option<Self> {
        if !super::template::only_placeholders(text) {
            return None;
        }
        let mut parts = Vec::new();
        let mut rest = text;
        while let Some(start) = rest.find("{{") {
            if start > 0 {
                parts.push(Part::Literal(rest[..start].to_owned()));
            }
            let after = &rest[start + 2..];
            let end = after.find("}}")?;
            let mut parser = Parser { tokens: tokenize(&after[..end], names)?, next: 0 };
            let expr = parser.expression()?;
            if parser.next != parser.tokens.len() {
                return None;
            }
            parts.push(Part::Placeholder(expr));
            rest = &after[end + 2..];
        }
        if rest.contains("}}") || rest.contains("{%") || rest.contains("{#") {
            return None;
        }
        if !rest.is_empty() {
            parts.push(Part::Literal(rest.to_owned()));
        }
        Some(Self { parts })
    }

    /// Render with `values[i]` for `names[i]`, appending to `out`; `None` if a
    /// placeholder does arithmetic on text, overflows or divides by zero (the
    /// caller then renders with the template engine, which reports it).
    pub(crate) fn render_into(&self, values: &[Variable<'_>], out: &mut String) -> Option<()> {
        for part in &self.parts {
            match part {
                Part::Literal(text) => out.push_str(text),
                Part::Placeholder(Expr::Name(i)) => match values.get(*i)? {
                    Variable::Text(text) => out.push_str(text),
                    Variable::Integer(n) => write!(out, "{n}").ok()?,
                },
                Part::Placeholder(expr) => write!(out, "{}", expr.evaluate(values)?).ok()?,
            }
        }
        Some(())
    }

    /// The value of a template that is one integer expression (an offset or a length).
    pub(crate) fn integer(&self, values: &[Variable<'_>]) -> Option<i64> {
        match self.parts.as_slice() {
            [Part::Placeholder(expr)] => expr.evaluate(values),
            _ => None,
        }
    }
}

impl Expr {
    fn evaluate(&self, values: &[Variable<'_>]) -> Option<i64> {
        match self {
            Self::Integer(n) => Some(*n),
            Self::Name(i) => match values.get(*i)? {
                Variable::Integer(n) => Some(*n),
                Variable::Text(_) => None,
            },
            Self::Negate(inner) => inner.evaluate(values)?.checked_neg(),
            Self::Binary(op, left, right) => {
                let (a, b) = (left.evaluate(values)?, right.evaluate(values)?);
                match op {
                    Op::Add => a.checked_add(b),
                    Op::Subtract => a.checked_sub(b),
                    Op::Multiply => a.checked_mul(b),
                    Op::FloorDivide => {
                        let (q, r) = (a.checked_div(b)?, a.checked_rem(b)?);
                        Some(if r != 0 && (r < 0) != (b < 0) { q - 1 } else { q })
                    }
                    Op::Modulo => {
                        let r = a.checked_rem(b)?;
                        Some(if r != 0 && (r < 0) != (b < 0) { r + b } else { r })
                    }
                }
            }
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum Token {
    Integer(i64),
    Name(usize),
    Plus,
    Minus,
    Star,
    SlashSlash,
    Percent,
    Open,
    Close,
}

fn tokenize(text: &str, names: &[&str]) -> Option<Vec<Token>> {
    let bytes = text.as_bytes();
    let mut tokens = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        let c = bytes[i];
        let start = i;
        i += 1;
        tokens.push(match c {
            b' ' | b'\t' | b'\n' | b'\r' => continue,
            b'+' => Token::Plus,
            b'-' => Token::Minus,
            b'*' if bytes.get(i) == Some(&b'*') => return None, // power: leave it to jinja
            b'*' => Token::Star,
            b'/' if bytes.get(i) == Some(&b'/') => {
                i += 1;
                Token::SlashSlash
            }
            b'%' => Token::Percent,
            b'(' => Token::Open,
            b')' => Token::Close,
            b'0'..=b'9' => {
                while bytes.get(i).is_some_and(u8::is_ascii_digit) {
                    i += 1;
                }
                Token::Integer(text[start..i].parse().ok()?)
            }
            c if c == b'_' || c.is_ascii_alphabetic() => {
                while bytes.get(i).is_some_and(|&c| c == b'_' || c.is_ascii_alphanumeric()) {
                    i += 1;
                }
                Token::Name(names.iter().position(|n| *n == &text[start..i])?)
            }
            _ => return None,
        });
    }
    Some(tokens)
}

struct Parser {
    tokens: Vec<Token>,
    next: usize,
}

impl Parser {
    fn peek(&self) -> Option<Token> {
        self.tokens.get(self.next).copied()
    }

    fn expression(&mut self) -> Option<Expr> {
        let mut left = self.term()?;
        while let Some(op @ (Token::Plus | Token::Minus)) = self.peek() {
            self.next += 1;
            let op = if op == Token::Plus { Op::Add } else { Op::Subtract };
            left = Expr::Binary(op, Box::new(left), Box::new(self.term()?));
        }
        Some(left)
    }

    fn term(&mut self) -> Option<Expr> {
        let mut left = self.unary()?;
        while let Some(token @ (Token::Star | Token::SlashSlash | Token::Percent)) = self.peek() {
            self.next += 1;
            let op = match token {
                Token::Star => Op::Multiply,
                Token::SlashSlash => Op::FloorDivide,
                _ => Op::Modulo,
            };
            left = Expr::Binary(op, Box::new(left), Box::new(self.unary()?));
        }
        Some(left)
    }

    fn unary(&mut self) -> Option<Expr> {
        match self.peek()? {
            Token::Minus => {
                self.next += 1;
                Some(Expr::Negate(Box::new(self.unary()?)))
            }
            Token::Plus => {
                self.next += 1;
                self.unary()
            }
            _ => self.atom(),
        }
    }

    fn atom(&mut self) -> Option<Expr> {
        let token = self.peek()?;
        self.next += 1;
        match token {
            Token::Integer(n) => Some(Expr::Integer(n)),
            Token::Name(i) => Some(Expr::Name(i)),
            Token::Open => {
                let inner = self.expression()?;
                (self.peek()? == Token::Close).then(|| self.next += 1)?;
                Some(inner)
            }
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn render(text: &str, names: &[&str], values: &[Variable<'_>]) -> Option<String> {
        let mut out = String::new();
        NativeTemplate::compile(text, names)?.render_into(values, &mut out)?;
        Some(out)
    }

    #[test]
    fn renders_the_templates_gen_uses() {
        let names = ["t", "y", "x", "u"];
        let values = [Variable::Integer(123), Variable::Integer(4), Variable::Integer(5), Variable::Text("/data")];
        assert_eq!(render("var/{{t}}.{{ y }}.{{x}}", &names, &values).unwrap(), "var/123.4.5");
        assert_eq!(render("{{u}}/part-{{(t*8)//100}}.bin", &names, &values).unwrap(), "/data/part-9.bin");
        let offset = NativeTemplate::compile("{{((t*100+y*10+x) % 4096) * 262144}}", &names).unwrap();
        assert_eq!(offset.integer(&values), Some(((123 * 100 + 45) % 4096) * 262_144));
        assert_eq!(render("plain", &names, &values).unwrap(), "plain");
    }

    #[test]
    fn floor_division_and_modulo_follow_python() {
        let names = ["a", "b"];
        for (a, b, quotient, remainder) in
            [(7, 2, 3, 1), (-7, 2, -4, 1), (7, -2, -4, -1), (-7, -2, 3, -1), (6, -3, -2, 0)]
        {
            let values = [Variable::Integer(a), Variable::Integer(b)];
            let q = NativeTemplate::compile("{{a // b}}", &names).unwrap().integer(&values);
            let r = NativeTemplate::compile("{{a % b}}", &names).unwrap().integer(&values);
            assert_eq!((q, r), (Some(quotient), Some(remainder)), "{a} {b}");
        }
        let values = [Variable::Integer(1), Variable::Integer(0)];
        assert_eq!(NativeTemplate::compile("{{a // b}}", &names).unwrap().integer(&values), None);
        assert_eq!(NativeTemplate::compile("{{ -a - -b * 2 + +3 }}", &names).unwrap().integer(&values), Some(2));
        // `{{-` is jinja's whitespace control, not a negation: left to the engine.
        assert!(NativeTemplate::compile("{{-a - -b * 2 + +3}}", &names).is_none());
    }

    #[test]
    fn anything_else_is_left_to_the_engine() {
        let names = ["t", "u"];
        for text in [
            "{{t / 2}}",
            "{{t ** 2}}",
            "{{t|string}}",
            "{{f(t)}}",
            "{{'a'}}",
            "{{z}}",
            "{{t}",
            "{% if t %}",
            "{{(t}}",
            "{{t t}}",
            "{{}}",
        ] {
            assert!(NativeTemplate::compile(text, &names).is_none(), "{text}");
        }
        let values = [Variable::Integer(1), Variable::Text("s")];
        assert_eq!(render("{{u + 1}}", &names, &values), None, "arithmetic on text");
        let max = [Variable::Integer(i64::MAX), Variable::Text("s")];
        assert_eq!(render("{{t + 1}}", &names, &max), None, "overflow");
    }

    /// The native path renders exactly what minijinja renders, or declines:
    /// a generated set of templates mixing literals, placeholders, arithmetic,
    /// statements, comments and whitespace control, rendered both ways.
    #[test]
    fn native_rendering_matches_jinja() {
        let pieces = [
            "a",
            "/",
            ".",
            "-",
            " ",
            "{{i}}",
            "{{ j }}",
            "{{i*3+j}}",
            "{{ (i - j) // 2 }}",
            "{{i % 3}}",
            "{{-i}}",
            "{{ u }}",
            "{% if i %}x{% endif %}",
            "{# note #}",
            "{%- if true -%} y {%- endif -%}",
            "{{- j -}}",
            "{% raw %}{{i}}{% endraw %}",
            "}}",
            "{",
            "{{ i ** 2 }}",
            "{{ 'q' }}",
            "{{i}}{{j}}",
        ];
        let names = ["i", "j", "u"];
        let env = crate::parse::json::template::Templates::default().environment();
        let mut state = 0x9E37_79B9_7F4A_7C15_u64;
        let mut next = || {
            state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
            let mut z = state;
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            z ^ (z >> 31)
        };
        let (mut native, mut declined) = (0, 0);
        for _ in 0..5000 {
            #[expect(clippy::cast_possible_truncation, reason = "small counts and indices")]
            let text: String = (0..=next() % 5).map(|_| pieces[(next() % pieces.len() as u64) as usize]).collect();
            for (i, j) in [(0_i64, 0_i64), (7, 2), (-7, 3), (12, -5)] {
                let values = [Variable::Integer(i), Variable::Integer(j), Variable::Text("s3://b/x")];
                let context = minijinja::context! { i => i, j => j, u => "s3://b/x" };
                let jinja = env.render_str(&text, context).ok();
                match render(&text, &names, &values) {
                    Some(ours) => {
                        native += 1;
                        assert_eq!(Some(&ours), jinja.as_ref(), "{text:?} at i={i}, j={j}");
                    }
                    None => declined += 1,
                }
            }
        }
        assert!(native > 1000 && declined > 1000, "both paths exercised: {native} native, {declined} declined");
    }
}
