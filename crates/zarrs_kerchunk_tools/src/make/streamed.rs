//! Many files concatenated along one dimension or several, or merged, a file at a time: each
//! file's references set aside as its scan ends ([`SetAsideFiles`]), the files ordered and checked on what is left,
//! and the combined chunks read back from where they wait as the output is written.

use std::sync::Arc;

use kerchunk::ReferenceSet;
use kerchunk_scan::{FileRests, ScanOptions, StreamedCombine};
use zarrs_kerchunk::StoreRegistry;

use super::{Combining, Made, MakeError, SetAsideFiles, record_of, scan_each, with_record};

/// How [`make_streamed`] combines `files` files, if it can combine them as `combining` says:
/// several files, concatenated or merged.
#[must_use]
pub fn streamable(combining: Option<&Combining>, files: usize) -> Option<&Combining> {
    combining.filter(|_| files > 1)
}

/// The references `set` of the file `name`, split as `combining` combines files a file at a
/// time: the chunks to set aside, and the rest, held to order, merge and check the files
/// ([`kerchunk_scan::split_combined_chunks`], [`kerchunk_scan::split_merged_chunks`]).
///
/// # Errors
/// [`MakeError::Scan`] if a key below an array combining renumbers is not one of its chunks.
pub fn split_for(
    combining: &Combining,
    name: &str,
    set: &ReferenceSet,
) -> Result<(ReferenceSet, ReferenceSet), MakeError> {
    match combining {
        Combining::Concat(concat) => Ok(kerchunk_scan::split_combined_chunks(name, set, concat)?),
        Combining::Merge => Ok(kerchunk_scan::split_merged_chunks(set)),
    }
}

/// What [`make_streamed`] gives.
#[derive(Debug)]
#[non_exhaustive]
pub struct Streamed {
    /// What scanning cost (with its `references` left empty).
    pub made: Made,
    /// The combined references, the way they were combined recorded (under
    /// [`COMBINED_WITH`](super::COMBINED_WITH)): a [`ReferenceSource`](kerchunk::ReferenceSource)
    /// for the writers, which reads each file's chunks back as it is walked.
    pub references: StreamedCombine,
}

/// [`make_references`](super::make_references) for files concatenated along one dimension
/// or several, or merged ([`streamable`]), the same set made holding less: each file's combined chunks are set
/// aside as its scan ends, up to `memory` bytes of them in memory ([`SET_ASIDE_MEMORY`](super::SET_ASIDE_MEMORY)
/// is the command line's default) and the rest in a temporary file, and only the rest of
/// each file's references (metadata, coordinates, arrays taken once) is held to order and
/// check the files. Writing the result reads one file's chunks back at a time.
///
/// # Errors
/// As [`make_references`](super::make_references); [`MakeError::SetAside`] if a file's
/// chunks cannot be set aside.
#[expect(clippy::too_many_arguments, reason = "make_references' arguments, and the memory to use")]
pub fn make_streamed(
    files: &[String],
    combining: &Combining,
    options: &ScanOptions,
    jobs: usize,
    registry: &StoreRegistry,
    url_of: impl Fn(&str) -> String,
    progress: impl Fn() + Sync,
    memory: usize,
) -> Result<Streamed, MakeError> {
    let set_aside = Arc::new(SetAsideFiles::new(memory)?);
    let mut rests = FileRests::new();
    let keep = |name: &str, set| {
        let (rest, chunks) = split_for(combining, name, &set)?;
        set_aside.keep(name, chunks)?;
        rests.push(name.to_owned(), rest);
        Ok(())
    };
    let (made, places) = scan_each(files, Some(combining), options, jobs, registry, url_of, progress, keep)?;
    let references = combine_set_aside(rests, combining, set_aside, &made.files, places.reader()?)?;
    Ok(Streamed { made, references })
}

/// Files whose combined chunks were set aside (each file's kept in `set_aside` under its name
/// in `files`, the rest of its references in `rests`: [`split_for`]), combined as `combining`
/// says, arrays that must be the same in every file read through `reader`, and the way they
/// were combined recorded (under [`COMBINED_WITH`](super::COMBINED_WITH)). What
/// [`make_streamed`] does after its scans, and what combines the shares of a scan spread over
/// other machines.
///
/// # Errors
/// [`MakeError::Scan`] if the files cannot be combined.
pub fn combine_set_aside(
    rests: FileRests,
    combining: &Combining,
    set_aside: Arc<SetAsideFiles>,
    files: &[String],
    reader: kerchunk_scan::RangeReader,
) -> Result<StreamedCombine, MakeError> {
    let combined = match combining {
        Combining::Concat(concat) => {
            kerchunk_scan::combine_streamed(rests, &concat.clone().with_range_reader(reader), set_aside)?
        }
        Combining::Merge => kerchunk_scan::merge_streamed(rests, set_aside, Some(&reader))?,
    };
    let base = with_record(combined.base(), &record_of(combining, files));
    Ok(combined.with_base(base))
}
