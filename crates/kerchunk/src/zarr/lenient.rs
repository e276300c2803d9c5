//! Leniency for the bare `NaN`, `Infinity` and `-Infinity` tokens that Python's
//! `json` module writes (and every kerchunk writer therefore emits), which
//! strict JSON parsers reject.
//!
//! Each such token outside a string becomes the matching JSON *string*
//! (`"NaN"`, `"Infinity"`, `"-Infinity"`): the form zarr V2 uses for
//! non-finite fill values and the only form zarrs accepts.

/// Quote every bare non-finite token outside strings.
///
/// Returns `None` when the input has no such token, so callers can keep
/// the original bytes untouched.
#[must_use]
pub fn quote_non_finite(input: &[u8]) -> Option<Vec<u8>> {
    const TOKENS: [&[u8]; 3] = [b"-Infinity", b"Infinity", b"NaN"];
    let mut out: Option<Vec<u8>> = None;
    let mut copied = 0;
    let mut in_string = false;
    let mut i = 0;
    while i < input.len() {
        let byte = input[i];
        if in_string {
            match byte {
                b'\\' => i += 1, // skip the escaped byte
                b'"' => in_string = false,
                _ => {}
            }
            i += 1;
            continue;
        }
        match byte {
            b'"' => in_string = true,
            b'N' | b'I' | b'-' => {
                if let Some(token) = TOKENS.iter().find(|t| input[i..].starts_with(t)) {
                    let buf = out.get_or_insert_with(|| Vec::with_capacity(input.len() + 16));
                    buf.extend_from_slice(&input[copied..i]);
                    buf.push(b'"');
                    buf.extend_from_slice(token);
                    buf.push(b'"');
                    i += token.len();
                    copied = i;
                    continue;
                }
            }
            _ => {}
        }
        i += 1;
    }
    let mut out = out?;
    out.extend_from_slice(&input[copied..]);
    Some(out)
}

/// Parse JSON, accepting bare non-finite tokens (see the module docs).
///
/// # Errors
/// `serde_json`'s error for the text as given, if quoting the tokens does not make it JSON.
pub fn parse_json_lenient(input: &[u8]) -> Result<serde_json::Value, serde_json::Error> {
    match serde_json::from_slice(input) {
        Ok(value) => Ok(value),
        Err(strict_error) => match quote_non_finite(input) {
            Some(quoted) => serde_json::from_slice(&quoted),
            None => Err(strict_error),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quotes_tokens_outside_strings_only() {
        let input = br#"{"a": NaN, "b": [Infinity, -Infinity, -1], "c": "NaN \" Infinity", "d": -2}"#;
        let out = quote_non_finite(input).unwrap();
        assert_eq!(
            std::str::from_utf8(&out).unwrap(),
            r#"{"a": "NaN", "b": ["Infinity", "-Infinity", -1], "c": "NaN \" Infinity", "d": -2}"#
        );
        assert!(quote_non_finite(br#"{"x": "NaN"}"#).is_none());
    }

    #[test]
    fn lenient_parse() {
        let v = parse_json_lenient(b"{\"fill_value\": NaN}").unwrap();
        assert_eq!(v["fill_value"], "NaN");
        assert!(parse_json_lenient(b"{\"x\": nope}").is_err());
    }
}
