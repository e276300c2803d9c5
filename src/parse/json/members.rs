//! Reading a top-level JSON object member by member from a [`Read`], a
//! block at a time, so that a large version 0 document is never in memory
//! whole: each member's key and value are handed out as slices of the
//! current block, for `serde_json` to parse on their own.
//!
//! The scanner only finds where members begin and end (strings, escapes,
//! nesting); `serde_json` still checks every value it is given, so a malformed
//! document is still an error.

use std::io::{self, Read};

use super::fast::{self, RangeLayout, RangeMember};

/// Bytes read at a time; a member longer than this grows the block.
const BLOCK: usize = 4 << 20;

/// Why a member could not be read.
#[derive(Debug)]
pub(super) enum MemberError {
    Io(io::Error),
    /// Not a JSON object where the scanner looked: the byte offset and what was expected.
    Syntax {
        offset: u64,
        expected: &'static str,
    },
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum State {
    BeforeObject,
    NextMember,
    Done,
}

/// Where the scan of one member stopped.
enum Stop {
    /// The block ends inside the member: read more and scan it again.
    NeedMore,
    Syntax(usize, &'static str),
}

/// What one scan found.
enum Scan {
    Member {
        key: std::ops::Range<usize>,
        value: std::ops::Range<usize>,
        next: usize,
    },
    /// A member of the common shape, read as it was scanned.
    Range {
        layout: RangeLayout,
        start: usize,
    },
    End {
        next: usize,
    },
}

/// One member of the top-level object.
pub(super) struct Member<'a> {
    /// The key, a JSON string with its quotes.
    pub(super) key: &'a [u8],
    /// The value, JSON text.
    pub(super) value: &'a [u8],
    /// The member read already, if it has the common shape of a range reference.
    pub(super) range: Option<RangeMember<'a>>,
}

/// The members of the top-level object of a JSON document, in order.
pub(super) struct MemberScanner<R> {
    reader: R,
    block: Vec<u8>,
    /// The unread bytes are `block[pos..end]`.
    pos: usize,
    end: usize,
    eof: bool,
    /// How many bytes of the document came before `block[0]`.
    before_block: u64,
    state: State,
}

impl<R: Read> MemberScanner<R> {
    pub(super) fn new(reader: R) -> Self {
        Self { reader, block: vec![0; BLOCK], pos: 0, end: 0, eof: false, before_block: 0, state: State::BeforeObject }
    }

    /// The next member, or `None` after the closing brace.
    ///
    /// # Errors
    /// A read error, or the offset of a byte that cannot start or continue a member.
    pub(super) fn next_member(&mut self) -> Result<Option<Member<'_>>, MemberError> {
        loop {
            if self.state == State::Done {
                return Ok(None);
            }
            match self.scan() {
                Ok(Scan::Member { key, value, next }) => {
                    self.pos = next;
                    self.state = State::NextMember;
                    return Ok(Some(Member { key: &self.block[key], value: &self.block[value], range: None }));
                }
                Ok(Scan::Range { layout, start }) => {
                    let text = &self.block[start..];
                    self.pos = start + layout.value.end;
                    self.state = State::NextMember;
                    let (key, value) = (&text[layout.key.clone()], &text[layout.value.clone()]);
                    return Ok(Some(Member { key, value, range: layout.member(text) }));
                }
                Ok(Scan::End { next }) => {
                    self.pos = next;
                    self.state = State::Done;
                    return self.expect_only_whitespace().map(|()| None);
                }
                Err(Stop::NeedMore) if self.eof => {
                    return Err(self.syntax(self.end, "more of the document: it ends inside the object"));
                }
                Err(Stop::NeedMore) => self.refill()?,
                Err(Stop::Syntax(at, expected)) => return Err(self.syntax(at, expected)),
            }
        }
    }

    fn syntax(&self, at: usize, expected: &'static str) -> MemberError {
        MemberError::Syntax { offset: self.before_block + at as u64, expected }
    }

    /// Keep the unread bytes, then read until the block is full or the document ends.
    fn refill(&mut self) -> Result<(), MemberError> {
        self.block.copy_within(self.pos..self.end, 0);
        self.before_block += self.pos as u64;
        self.end -= self.pos;
        self.pos = 0;
        if self.end == self.block.len() {
            // One member fills the whole block.
            self.block.resize(self.block.len() * 2, 0);
        }
        while self.end < self.block.len() {
            match self.reader.read(&mut self.block[self.end..]) {
                Ok(0) => {
                    self.eof = true;
                    break;
                }
                Ok(n) => self.end += n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(MemberError::Io(e)),
            }
        }
        Ok(())
    }

    fn expect_only_whitespace(&mut self) -> Result<(), MemberError> {
        loop {
            let rest = &self.block[self.pos..self.end];
            if let Some(at) = rest.iter().position(|b| !b.is_ascii_whitespace()) {
                return Err(self.syntax(self.pos + at, "nothing after the top-level object"));
            }
            self.pos = self.end;
            if self.eof {
                return Ok(());
            }
            self.refill()?;
        }
    }

    /// Scan one member (or the closing brace) from `pos`, without moving.
    fn scan(&self) -> Result<Scan, Stop> {
        let b = &self.block[..self.end];
        let mut i = skip_whitespace(b, self.pos)?;
        match self.state {
            State::BeforeObject => {
                if b[i] != b'{' {
                    return Err(Stop::Syntax(i, "a JSON object"));
                }
                i = skip_whitespace(b, i + 1)?;
                if b[i] == b'}' {
                    return Ok(Scan::End { next: i + 1 });
                }
            }
            State::NextMember => match b[i] {
                b',' => i = skip_whitespace(b, i + 1)?,
                b'}' => return Ok(Scan::End { next: i + 1 }),
                _ => return Err(Stop::Syntax(i, "',' or '}'")),
            },
            State::Done => unreachable!("no scan after the end"),
        }
        if b[i] != b'"' {
            return Err(Stop::Syntax(i, "a string key"));
        }
        if let Some(layout) = fast::range_layout(&b[i..]) {
            return Ok(Scan::Range { layout, start: i });
        }
        let key = i..string_end(b, i)?;
        i = skip_whitespace(b, key.end)?;
        if b[i] != b':' {
            return Err(Stop::Syntax(i, "':'"));
        }
        let start = skip_whitespace(b, i + 1)?;
        let end = value_end(b, start)?;
        Ok(Scan::Member { key, value: start..end, next: end })
    }
}

fn skip_whitespace(b: &[u8], mut i: usize) -> Result<usize, Stop> {
    while i < b.len() && matches!(b[i], b' ' | b'\t' | b'\n' | b'\r') {
        i += 1;
    }
    if i == b.len() { Err(Stop::NeedMore) } else { Ok(i) }
}

/// One past the closing quote of the string opening at `b[i]`.
fn string_end(b: &[u8], i: usize) -> Result<usize, Stop> {
    let mut j = i + 1;
    loop {
        let at = j + memchr::memchr2(b'"', b'\\', b.get(j..).ok_or(Stop::NeedMore)?).ok_or(Stop::NeedMore)?;
        if b[at] == b'"' {
            return Ok(at + 1);
        }
        j = at + 2; // the escaped byte cannot end the string
    }
}

/// One past the end of the value starting at `b[i]`.
fn value_end(b: &[u8], mut i: usize) -> Result<usize, Stop> {
    match b[i] {
        b'"' => string_end(b, i),
        b'{' | b'[' => {
            let mut depth = 0usize;
            while i < b.len() {
                match b[i] {
                    b'"' => {
                        i = string_end(b, i)?;
                        continue;
                    }
                    b'{' | b'[' => depth += 1,
                    b'}' | b']' => {
                        depth -= 1;
                        if depth == 0 {
                            return Ok(i + 1);
                        }
                    }
                    _ => {}
                }
                i += 1;
            }
            Err(Stop::NeedMore)
        }
        b',' | b'}' | b']' | b':' => Err(Stop::Syntax(i, "a value")),
        _ => {
            // A number, literal or stray token: serde_json judges it.
            while i < b.len() && !matches!(b[i], b',' | b'}' | b']' | b' ' | b'\t' | b'\n' | b'\r') {
                i += 1;
            }
            if i == b.len() { Err(Stop::NeedMore) } else { Ok(i) }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A reader that hands out at most `step` bytes a call, to cut members anywhere.
    struct Trickle<'a>(&'a [u8], usize);

    impl Read for Trickle<'_> {
        fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
            let n = self.1.min(out.len()).min(self.0.len());
            out[..n].copy_from_slice(&self.0[..n]);
            self.0 = &self.0[n..];
            Ok(n)
        }
    }

    fn members(doc: &str, step: usize, block: usize) -> Result<Vec<(String, String)>, MemberError> {
        let mut reader = MemberScanner::new(Trickle(doc.as_bytes(), step));
        reader.block = vec![0; block];
        let mut out = Vec::new();
        while let Some(Member { key, value, .. }) = reader.next_member()? {
            out.push((String::from_utf8(key.to_vec()).unwrap(), String::from_utf8(value.to_vec()).unwrap()));
        }
        Ok(out)
    }

    #[test]
    fn splits_members_wherever_blocks_end() {
        let doc = r#" { "a" : "x,}\"]" , "b\\\"":["u", 1, [2, {"c": "}"}]], "n": -1.5e3,"o":{"p":null}, "t":true }
        "#;
        let want: Vec<(String, String)> = [
            (r#""a""#, r#""x,}\"]""#),
            (r#""b\\\"""#, r#"["u", 1, [2, {"c": "}"}]]"#),
            (r#""n""#, "-1.5e3"),
            (r#""o""#, r#"{"p":null}"#),
            (r#""t""#, "true"),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_owned(), v.to_owned()))
        .collect();
        for step in [1, 2, 3, 7, 1000] {
            for block in [1, 4, 16, 4096] {
                assert_eq!(members(doc, step, block).unwrap(), want, "step {step}, block {block}");
            }
        }
        assert!(members("{}", 1, 1).unwrap().is_empty());
    }

    #[test]
    fn malformed_documents() {
        for (doc, expected, offset) in [
            ("[1]", "a JSON object", 0),
            (r#"{"a": 1 "b": 2}"#, "',' or '}'", 8),
            (r#"{"a" 1}"#, "':'", 5),
            ("{a: 1}", "a string key", 1),
            (r#"{"a": }"#, "a value", 6),
            (r#"{"a": 1} x"#, "nothing after the top-level object", 9),
            (r#"{"a": [1, 2"#, "more of the document: it ends inside the object", 11),
            ("", "more of the document: it ends inside the object", 0),
        ] {
            match members(doc, 3, 4) {
                Err(MemberError::Syntax { offset: at, expected: what }) => {
                    assert_eq!((what, at), (expected, offset), "{doc}");
                }
                other => panic!("{doc}: {other:?}"),
            }
        }
    }
}
