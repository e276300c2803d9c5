//! Many files combined along one dimension or several, a file at a time: each file's references set
//! aside as its scan ends ([`SetAsideFiles`]), the files ordered and checked on what is left,
//! and the combined chunks read back from where they wait as the output is written.

use std::sync::Arc;

use kerchunk_combine::{CombineOptions, FileRests, SetAside, StreamedCombine};
use kerchunk_scan::ScanOptions;
use zarrs_kerchunk::StoreRegistry;

use super::{Combining, Made, MakeError, SetAsideFiles, record_of, scan_each, with_record};

/// The options [`make_streamed`] combines `files` files with, if it can combine them as
/// `combining` says: several files, concatenated (not merged).
#[must_use]
pub fn streamable(combining: Option<&Combining>, files: usize) -> Option<&CombineOptions> {
    match combining {
        Some(Combining::Concat(concat)) if files > 1 => Some(concat),
        _ => None,
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
/// or several ([`streamable`]), the same set made holding less: each file's combined chunks are set
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
    concat: &CombineOptions,
    options: &ScanOptions,
    jobs: usize,
    registry: &StoreRegistry,
    url_of: impl Fn(&str) -> String,
    progress: impl Fn() + Sync,
    memory: usize,
) -> Result<Streamed, MakeError> {
    let set_aside = Arc::new(SetAsideFiles::new(memory)?);
    let combining = Combining::Concat(concat.clone());
    let mut rests = FileRests::new();
    let keep = |name: &str, set| {
        let (rest, chunks) = kerchunk_combine::split_combined_chunks(name, &set, concat)?;
        set_aside.keep(name, chunks)?;
        rests.push(name.to_owned(), rest);
        Ok(())
    };
    let (made, places) = scan_each(files, Some(&combining), options, jobs, registry, url_of, progress, keep)?;
    let references = combine_set_aside(rests, concat, set_aside, &made.files, places.reader()?)?;
    Ok(Streamed { made, references })
}

/// Files whose combined chunks were set aside (each file's kept in `set_aside` under its name
/// in `files`, the rest of its references in `rests`: [`kerchunk_combine::split_combined_chunks`]),
/// combined along `concat`'s dimensions, arrays that must be the same in every file read
/// through `reader`, and the way they were combined recorded (under
/// [`COMBINED_WITH`](super::COMBINED_WITH)). What [`make_streamed`] does after its scans, and
/// what combines the shares of a scan spread over other machines.
///
/// # Errors
/// [`MakeError::Combine`] if the files cannot be combined.
pub fn combine_set_aside(
    rests: FileRests,
    concat: &CombineOptions,
    set_aside: Arc<SetAsideFiles>,
    files: &[String],
    reader: kerchunk_combine::RangeReader,
) -> Result<StreamedCombine, MakeError> {
    let checked = concat.clone().with_range_reader(reader);
    recorded_streamed(rests, &checked, set_aside, &record_of(&Combining::Concat(concat.clone()), files))
}

/// The combined set as the writers take it, read back a file at a time as it is walked: as
/// Zarr v3 where some array's files make uneven chunks ([`StreamedCombine::written_as_v3`]).
///
/// # Errors
/// [`MakeError::Combine`] if an uneven set cannot be written as v3.
pub fn writable(combined: StreamedCombine) -> Result<Box<dyn kerchunk::ReferenceSource>, MakeError> {
    if combined.is_uneven() {
        return Ok(Box::new(combined.written_as_v3()?));
    }
    Ok(Box::new(combined))
}

/// `rests` combined along `options`' dimensions, their chunks read back from `set_aside`, with
/// `record` (how the set was combined) in the result's root attributes.
pub(super) fn recorded_streamed(
    rests: FileRests,
    options: &CombineOptions,
    set_aside: Arc<dyn SetAside>,
    record: &serde_json::Value,
) -> Result<StreamedCombine, MakeError> {
    let combined = kerchunk_combine::combine_streamed(rests, options, set_aside)?;
    let base = with_record(combined.base(), record);
    Ok(combined.with_base(base))
}
