//! The common shape of a member, `"key": ["url", offset, length]`, read
//! without serde.
//!
//! In a document of a million references nearly every member has this shape,
//! and serde's general visitor took most of the load time. This reader
//! accepts only a subset of what the general path accepts, and reads it the
//! same way: strings without escapes or control characters, and integers
//! written as JSON writes them (no sign, fraction, exponent or leading zero)
//! that fit in a `u64`. Anything else, well formed or not, is left to the
//! general path, which accepts it or names what is wrong: so this changes no
//! result, only the time. The member scanner tries it first at every member,
//! so that the bytes of a common member are looked at once.

use std::ops::Range;

/// A member of the common shape, borrowed from the document.
#[derive(Debug, PartialEq, Eq)]
pub(super) struct RangeMember<'a> {
    pub(super) key: &'a str,
    pub(super) url: &'a str,
    pub(super) offset: u64,
    pub(super) length: u64,
}

/// Where a member of the common shape lies in the text that starts with it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct RangeLayout {
    /// The key, quotes included.
    pub(super) key: Range<usize>,
    /// The value, from `[` to `]`.
    pub(super) value: Range<usize>,
    /// The URL, without its quotes.
    pub(super) url: Range<usize>,
    pub(super) offset: u64,
    pub(super) length: u64,
}

impl RangeLayout {
    /// The member, from the same `text` the layout was found in; `None` if
    /// its key or URL is not UTF-8 (the general path says so).
    pub(super) fn member<'a>(&self, text: &'a [u8]) -> Option<RangeMember<'a>> {
        // One check over both strings: the key comes first, the URL last.
        let start = self.key.start + 1;
        let strings = std::str::from_utf8(&text[start..self.url.end]).ok()?;
        Some(RangeMember {
            key: &strings[..self.key.end - 1 - start],
            url: &strings[self.url.start - start..],
            offset: self.offset,
            length: self.length,
        })
    }
}

/// The layout of the member at the start of `text` (at its key's opening
/// quote), if it has the common shape; `None` leaves it to the general path,
/// as does a member that `text` ends inside.
pub(super) fn range_layout(text: &[u8]) -> Option<RangeLayout> {
    let mut cursor = Cursor { bytes: text, at: 0 };
    let key = cursor.string()?;
    cursor.token(b':')?;
    cursor.token(b'[')?;
    let value_start = cursor.at - 1;
    let url = cursor.string()?;
    cursor.token(b',')?;
    let offset = cursor.integer()?;
    cursor.token(b',')?;
    let length = cursor.integer()?;
    cursor.token(b']')?;
    let key = key.start - 1..key.end + 1;
    Some(RangeLayout { key, value: value_start..cursor.at, url, offset, length })
}

struct Cursor<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl Cursor<'_> {
    /// JSON's whitespace: space, tab, line feed, carriage return.
    fn skip_whitespace(&mut self) {
        while let Some(b' ' | b'\t' | b'\n' | b'\r') = self.bytes.get(self.at) {
            self.at += 1;
        }
    }

    /// The byte `byte`, after any whitespace.
    fn token(&mut self, byte: u8) -> Option<()> {
        self.skip_whitespace();
        (self.bytes.get(self.at) == Some(&byte)).then(|| self.at += 1)
    }

    /// A string with no escapes and no control characters, after any
    /// whitespace: where its contents lie, without the quotes.
    fn string(&mut self) -> Option<Range<usize>> {
        self.token(b'"')?;
        let start = self.at;
        let end = start + closing_quote(&self.bytes[start..])?;
        self.at = end + 1;
        Some(start..end)
    }

    /// A non-negative integer as JSON writes it, fitting in a `u64`, after any whitespace.
    fn integer(&mut self) -> Option<u64> {
        /// Fewer digits than this cannot overflow a `u64`.
        const SAFE_DIGITS: usize = 19;
        self.skip_whitespace();
        let rest = &self.bytes[self.at..];
        let (mut n, mut digits) = (0u64, 0);
        for &b in rest {
            let digit = b.wrapping_sub(b'0');
            if digit > 9 {
                break;
            }
            n = n.wrapping_mul(10).wrapping_add(u64::from(digit));
            digits += 1;
        }
        if digits == 0 || (digits > 1 && rest[0] == b'0') || matches!(rest.get(digits), Some(b'.' | b'e' | b'E')) {
            return None;
        }
        if digits > SAFE_DIGITS {
            n = rest[..digits].iter().try_fold(0u64, |n, &b| n.checked_mul(10)?.checked_add(u64::from(b - b'0')))?;
        }
        self.at += digits;
        Some(n)
    }
}

/// The index of the first `"` in `bytes`, if no `\` or control character
/// comes before it.
fn closing_quote(bytes: &[u8]) -> Option<usize> {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    // Eight bytes at a time: the high bit of a byte of `flags` is set where it is
    // `"`, `\` or below 0x20 (`(x - 1) & !x` finds zero bytes; past the first,
    // a borrow may flag a byte wrongly, so only the lowest flag is used).
    let flags = |word: u64| {
        let quote = word ^ (ONES * u64::from(b'"'));
        let backslash = word ^ (ONES * u64::from(b'\\'));
        (quote.wrapping_sub(ONES) & !quote
            | backslash.wrapping_sub(ONES) & !backslash
            | word.wrapping_sub(ONES * 0x20) & !word)
            & HIGH
    };
    let words = bytes.chunks_exact(8);
    let tail = words.remainder();
    for (i, word) in words.enumerate() {
        let found = flags(u64::from_le_bytes(word.try_into().ok()?));
        if found != 0 {
            let at = i * 8 + found.trailing_zeros() as usize / 8;
            return (bytes[at] == b'"').then_some(at);
        }
    }
    let at = bytes.len() - tail.len() + tail.iter().position(|&b| b == b'"' || b == b'\\' || b < 0x20)?;
    (bytes[at] == b'"').then_some(at)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn member(text: &str) -> Option<RangeMember<'_>> {
        range_layout(text.as_bytes())?.member(text.as_bytes())
    }

    #[test]
    fn the_common_shape() {
        let range = |key: &'static str, url, offset, length| Some(RangeMember { key, url, offset, length });
        for (text, want) in [
            (r#""a/0.0": ["s3://b/f.nc", 10, 20]"#, range("a/0.0", "s3://b/f.nc", 10, 20)),
            ("\"a/0\" :\n[ \"f\" ,0,\t0 ]\n,", range("a/0", "f", 0, 0)),
            (r#""é/0":["ü", 18446744073709551615, 1]}"#, range("é/0", "ü", u64::MAX, 1)),
            (r#""":["", 1, 2]"#, range("", "", 1, 2)),
            (
                r#""a/0": ["a rather longer URL, past eight bytes", 1, 2]"#,
                range("a/0", "a rather longer URL, past eight bytes", 1, 2),
            ),
        ] {
            assert_eq!(member(text), want, "{text}");
        }
        let layout = range_layout(br#""a/0.0" : ["u", 1, 2] , "b""#).unwrap();
        assert_eq!((layout.key, layout.value), (0..7, 10..21));
    }

    /// Each of these is another shape, not JSON, or cut short: the general path decides.
    #[test]
    fn anything_else_is_left_to_the_general_path() {
        for text in [
            r#""a\/0": ["f", 1, 2]"#,
            "\"a\u{1}\": [\"f\", 1, 2]",
            r#""a/0" ["f", 1, 2]"#,
            r#""a/0": ["f\"", 1, 2]"#,
            r#""a/0": ["a long URL, then an escape\"", 1, 2]"#,
            "\"a/0\": [\"f\t\", 1, 2]",
            "\"a/0\": [\"a long URL, then a tab\t\", 1, 2]",
            r#""a/0": ["f", 01, 2]"#,
            r#""a/0": ["f", -1, 2]"#,
            r#""a/0": ["f", 1.0, 2]"#,
            r#""a/0": ["f", 1e3, 2]"#,
            r#""a/0": ["f", 1, 2E1]"#,
            r#""a/0": ["f", 18446744073709551616, 2]"#,
            r#""a/0": ["f", 99999999999999999999, 2]"#,
            r#""a/0": ["f", 1]"#,
            r#""a/0": ["f", 1, 2, 3]"#,
            r#""a/0": [null, 1, 2]"#,
            r#""a/0": ["f"]"#,
            r#""a/0": "base64:AA==""#,
            r#""a/0": ["f", 1, 2"#,
            r#""a/0": ["f", 1,, 2]"#,
            r#""a/0": ["f"#,
            "\"a/0\": [\"f\", 1\u{a0}, 2]",
        ] {
            assert_eq!(member(text), None, "{text}");
        }
        assert_eq!(member("\"a\": [\"\u{ff}\", 1, 2]").map(|m| m.url), Some("\u{ff}"), "UTF-8");
        let text = b"\"a\": [\"\xff\", 1, 2]";
        assert!(range_layout(text).is_some_and(|layout| layout.member(text).is_none()), "not UTF-8");
    }

    #[test]
    fn integers_read_as_rust_writes_them() {
        let mut numbers: Vec<u64> = vec![0, 7, 10, 99_999_999, 100_000_000, 1_073_741_824, u64::MAX, u64::MAX - 1];
        let mut x = 0x9E37_79B9_7F4A_7C15u64;
        for _ in 0..2000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            numbers.push(x >> (x % 64));
        }
        for n in numbers {
            for after in ["]", ", 1]", " ]", "\"]", "e1]", ""] {
                let text = format!("{n}{after}");
                let mut cursor = Cursor { bytes: text.as_bytes(), at: 0 };
                let want = (!after.starts_with('e')).then_some(n).filter(|_| !text.is_empty());
                assert_eq!(cursor.integer(), want, "{text}");
                if want.is_some() {
                    assert_eq!(cursor.at, n.to_string().len(), "{text}");
                }
            }
        }
        for text in ["18446744073709551616]", "000000001]", "01]", "]", "-1]", "1.5]", "12345678.0]"] {
            assert_eq!(Cursor { bytes: text.as_bytes(), at: 0 }.integer(), None, "{text}");
        }
    }

    #[test]
    fn closing_quotes() {
        for length in 0..40 {
            let plain = "x".repeat(length);
            assert_eq!(closing_quote(format!("{plain}\"yy").as_bytes()), Some(length));
            assert_eq!(closing_quote(plain.as_bytes()), None);
            for bad in ["\\\"", "\n\"", "\u{1f}\""] {
                assert_eq!(closing_quote(format!("{plain}{bad}").as_bytes()), None, "{length} {bad:?}");
            }
            assert_eq!(closing_quote(format!("{plain}\u{7f}é\"").as_bytes()), Some(length + 3));
        }
    }
}
