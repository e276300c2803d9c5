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

/// Bytes read at a time; a member longer than this grows the block. Small,
/// for the blocks in memory at once between the scanning and the inserting
/// thread (see `pipeline`). Loading 10^6 references peaked at 33 MiB with
/// blocks of 256 KiB, 39 to 41 MiB with 1 MiB and 52 MiB with 4 MiB, as fast.
pub(super) const BLOCK: usize = 256 << 10;
/// Blocks given back to be read into again, at most (their capacity at most twice [`BLOCK`]).
const SPARE_BLOCKS: usize = 2;

/// Why a member could not be read.
#[derive(Debug)]
pub(super) enum MemberError {
    Io(io::Error),
    /// A block of this many bytes, for one long member, could not be had.
    OutOfMemory(usize),
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

/// The members scanned in one block of the document, in order, and what
/// came after them: more blocks, the end of the document, or an error.
pub(super) struct Block {
    bytes: Vec<u8>,
    /// Each a [`Scan::Member`] or [`Scan::Range`], at its place in `bytes`.
    found: Vec<Scan>,
    /// `Ok(true)`: more blocks follow; `Ok(false)`: the document ended well.
    end: Result<bool, MemberError>,
}

impl Block {
    /// Whether more blocks follow this one.
    pub(super) fn more(&self) -> bool {
        matches!(self.end, Ok(true))
    }

    /// The members of the block, in order.
    pub(super) fn members(&self) -> impl Iterator<Item = Member<'_>> {
        self.found.iter().filter_map(|scan| match scan {
            Scan::Member { key, value, .. } => {
                Some(Member { key: &self.bytes[key.clone()], value: &self.bytes[value.clone()], range: None })
            }
            Scan::Range { layout, start } => {
                let text = &self.bytes[*start..];
                let (key, value) = (&text[layout.key.clone()], &text[layout.value.clone()]);
                Some(Member { key, value, range: layout.member(text) })
            }
            Scan::End { .. } => None,
        })
    }

    /// The block's memory, to be read into again ([`MemberScanner::recycle`]),
    /// and what came after its members.
    pub(super) fn finish(self) -> (Vec<u8>, Result<bool, MemberError>) {
        (self.bytes, self.end)
    }
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
    /// The size of a new block.
    block_size: usize,
    /// Blocks handed out and given back, to be read into again.
    spare: Vec<Vec<u8>>,
}

impl<R: Read> MemberScanner<R> {
    /// Scan what `reader` reads, `block_size` bytes at a time ([`BLOCK`], but for tests).
    pub(super) fn new(reader: R, block_size: usize) -> Self {
        Self {
            reader,
            block: vec![0; block_size.max(1)],
            pos: 0,
            end: 0,
            eof: false,
            before_block: 0,
            state: State::BeforeObject,
            block_size: block_size.max(1),
            spare: Vec::new(),
        }
    }

    /// The members of the next block of the document (at least one, unless
    /// the block also holds the end or an error), handed out with the block
    /// so that another thread can read them while this one reads on.
    pub(super) fn next_block(&mut self) -> Block {
        let mut found = Vec::new();
        let end = loop {
            if self.state == State::Done {
                break Ok(false);
            }
            let scan = self.scan();
            match scan {
                Ok(Scan::Member { next, .. }) => {
                    self.pos = next;
                    self.state = State::NextMember;
                }
                Ok(Scan::Range { ref layout, start }) => {
                    self.pos = start + layout.value.end;
                    self.state = State::NextMember;
                }
                Ok(Scan::End { next }) => {
                    self.pos = next;
                    self.state = State::Done;
                    // What follows is read into a new block: this one holds the members.
                    let (bytes, taken) = self.take_block();
                    let end = taken.and_then(|()| self.expect_only_whitespace()).map(|()| false);
                    return Block { bytes, found, end };
                }
                Err(Stop::NeedMore) if self.eof => {
                    break Err(self.syntax(self.end, "more of the document: it ends inside the object"));
                }
                Err(Stop::NeedMore) if found.is_empty() => match self.refill() {
                    Ok(()) => continue,
                    Err(e) => break Err(e),
                },
                Err(Stop::NeedMore) => break Ok(true),
                Err(Stop::Syntax(at, expected)) => break Err(self.syntax(at, expected)),
            }
            found.extend(scan.ok());
        };
        let (bytes, end) = match end {
            // After an error nothing more is read: the unread bytes are not carried on.
            Err(e) => (self.hand_out(), Err(e)),
            Ok(more) => {
                let (bytes, taken) = self.take_block();
                (bytes, taken.map(|()| more))
            }
        };
        self.state = if matches!(end, Ok(true)) { self.state } else { State::Done };
        Block { bytes, found, end }
    }

    /// Give back the memory of a block handed out, to read into again.
    pub(super) fn recycle(&mut self, bytes: Vec<u8>) {
        // A block grown for one long member is not kept: it would stay that large.
        if bytes.capacity() <= 2 * self.block_size && self.spare.len() < SPARE_BLOCKS {
            self.spare.push(bytes);
        }
    }

    /// Hand out the current block, going on in a new one that starts with its
    /// unread bytes; if that block cannot be had, the current one is handed
    /// out with the error, and nothing more is read.
    fn take_block(&mut self) -> (Vec<u8>, Result<(), MemberError>) {
        let unread = self.end - self.pos;
        let mut next = self.spare.pop().unwrap_or_default();
        let size = self.block_size.max(unread);
        if next.try_reserve_exact(size.saturating_sub(next.len())).is_err() {
            return (self.hand_out(), Err(MemberError::OutOfMemory(size)));
        }
        next.resize(size, 0);
        next[..unread].copy_from_slice(&self.block[self.pos..self.end]);
        self.before_block += self.pos as u64;
        (self.pos, self.end) = (0, unread);
        (std::mem::replace(&mut self.block, next), Ok(()))
    }

    /// Hand out the current block, and read no more.
    fn hand_out(&mut self) -> Vec<u8> {
        self.state = State::Done;
        (self.pos, self.end) = (0, 0);
        std::mem::take(&mut self.block)
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
            // One member fills the whole block: twice the room, if the process can have it. A
            // failed allocation is an error naming the document, not an abort (a container's
            // memory limit, `ulimit -v`); the document limit stops the reader before 2^64.
            let grown = self.block.len().saturating_mul(2);
            if self.block.try_reserve_exact(grown - self.block.len()).is_err() {
                return Err(MemberError::OutOfMemory(grown));
            }
            self.block.resize(grown, 0);
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
            // JSON's whitespace: not `u8::is_ascii_whitespace`, which also takes a form feed.
            if let Some(at) = rest.iter().position(|b| !matches!(b, b' ' | b'\t' | b'\n' | b'\r')) {
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
        let mut reader = MemberScanner::new(Trickle(doc.as_bytes(), step), block);
        let mut out = Vec::new();
        loop {
            let block = reader.next_block();
            for Member { key, value, .. } in block.members() {
                out.push((String::from_utf8(key.to_vec()).unwrap(), String::from_utf8(value.to_vec()).unwrap()));
            }
            let (bytes, end) = block.finish();
            if !end? {
                return Ok(out);
            }
            reader.recycle(bytes);
        }
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
