//! A document read a block at a time on two threads: the calling thread
//! reads the document (decompressing it) and scans each block for its
//! members, while another reads the members of the blocks already scanned
//! into the set. In a large version 0 document the two halves take about as
//! long as each other, so the load takes about half as long on two cores.
//!
//! Members are read into the set in document order, and the first error in
//! document order is the one reported, as on one thread. A few blocks are in
//! memory at once: the one being scanned, those queued, the one being read
//! and those given back, a few MiB in all.

use std::io::Read;
use std::sync::mpsc;

use serde::de::IgnoredAny;

use super::members::{Block, MemberError, MemberScanner};
use super::stream;
use crate::error::ParseError;
use crate::model::ReferenceSetBuilder;

/// Blocks scanned and waiting to be read into the set, at most: a few, so
/// that neither thread waits on the other's uneven blocks.
const QUEUED_BLOCKS: usize = 4;

/// What a document's top-level members give: its version 0 references, and
/// its version 1 members (`version`, `templates`, `refs`, `gen`), kept whole.
pub(super) struct Members {
    pub(super) builder: ReferenceSetBuilder,
    pub(super) kept: [Option<Vec<u8>>; 4],
}

/// What errors say about the document, and which ones stop it.
#[derive(Clone, Copy)]
pub(super) struct Naming<'a> {
    /// The options the document is parsed with (its policy for malformed references).
    pub(super) options: &'a super::ParseOptions,
    pub(super) location: &'a str,
    /// The compression the document was read through, if any.
    pub(super) format: Option<&'static str>,
    /// The limit on the document's size.
    pub(super) limit: u64,
}

impl Naming<'_> {
    /// A failed read of the document.
    pub(super) fn read_error(self, source: std::io::Error) -> ParseError {
        match self.format {
            Some(format) => ParseError::Decompress { format, source },
            None => ParseError::Io { location: self.location.to_owned(), source },
        }
    }

    fn scan_error(self, error: MemberError) -> ParseError {
        match error {
            MemberError::Io(e) if e.kind() == std::io::ErrorKind::FileTooLarge => {
                ParseError::TooLarge { location: self.location.to_owned(), limit: self.limit }
            }
            MemberError::Io(e) => self.read_error(e),
            MemberError::OutOfMemory(bytes) => {
                ParseError::OutOfMemory { location: self.location.to_owned(), bytes: bytes as u64 }
            }
            MemberError::Syntax { offset, expected } => {
                ParseError::Syntax { location: self.location.to_owned(), offset, expected }
            }
        }
    }
}

/// The top-level members of the document `scanner` scans.
///
/// # Errors
/// The first error in document order: of a read, of the JSON text, or of a reference.
pub(super) fn read(mut scanner: MemberScanner<impl Read>, naming: Naming<'_>) -> Result<Members, ParseError> {
    let first = scanner.next_block();
    if !first.more() {
        return on_this_thread(&mut scanner, first, naming);
    }
    std::thread::scope(|scope| {
        let (queue, queued) = mpsc::sync_channel::<Block>(QUEUED_BLOCKS);
        let (give_back, returned) = mpsc::channel::<Vec<u8>>();
        let spawned = std::thread::Builder::new().name("zarrs-kerchunk-refs".into()).spawn_scoped(scope, move || {
            let mut inserting = Inserting::new(naming);
            for block in queued {
                let (bytes, more) = inserting.block(block)?;
                // The scanner may have finished: then the block is not needed.
                let _ = give_back.send(bytes);
                if !more {
                    break;
                }
            }
            Ok(inserting.members)
        });
        // No second thread to be had: one will do.
        let Ok(inserter) = spawned else { return on_this_thread(&mut scanner, first, naming) };
        let mut block = first;
        loop {
            let more = block.more();
            // The inserter stops at its first error; then nothing more is read.
            if queue.send(block).is_err() || !more {
                break;
            }
            for bytes in returned.try_iter() {
                scanner.recycle(bytes);
            }
            block = scanner.next_block();
        }
        drop(queue);
        inserter.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic))
    })
}

/// [`read`] on the calling thread alone, from the block `block` on.
fn on_this_thread(
    scanner: &mut MemberScanner<impl Read>,
    mut block: Block,
    naming: Naming<'_>,
) -> Result<Members, ParseError> {
    let mut inserting = Inserting::new(naming);
    while let (bytes, true) = inserting.block(block)? {
        scanner.recycle(bytes);
        block = scanner.next_block();
    }
    Ok(inserting.members)
}

/// The members read so far.
struct Inserting<'a> {
    members: Members,
    naming: Naming<'a>,
}

impl<'a> Inserting<'a> {
    fn new(naming: Naming<'a>) -> Self {
        Self { members: Members { builder: naming.options.builder(), kept: Default::default() }, naming }
    }

    /// Read the members of `block`; returns its memory and whether more blocks follow.
    fn block(&mut self, block: Block) -> Result<(Vec<u8>, bool), ParseError> {
        let location = self.naming.location;
        let Members { builder, kept } = &mut self.members;
        for member in block.members() {
            if let Some(reserved) = stream::top_level_member(builder, &member, location)?
                && let Some(earlier) = kept[reserved as usize].replace(member.value.to_vec())
            {
                // A repeated member replaces the earlier one, as in the whole-document
                // reader, which still parses the earlier one: it must be JSON.
                serde_json::from_slice::<IgnoredAny>(&earlier)
                    .map_err(|source| ParseError::Json { location: location.to_owned(), source })?;
            }
        }
        let (bytes, end) = block.finish();
        Ok((bytes, end.map_err(|e| self.naming.scan_error(e))?))
    }
}
