//! A share of a spread scan as it travels from a worker to the caller: its files' URLs, and
//! their references packed into one `bytes`, each file's compact JSON (version 1) on a line of
//! its own, the whole compressed with zstd.
//!
//! Why one compressed `bytes` rather than one per file: the files of a share repeat their
//! metadata, and inline chunks are base64 in JSON, so a share compresses to under half (10 000
//! of `benches/scan/make_many.py`'s small NetCDF-4 files: 51.4 MB of JSON, 24.1 MB packed). What
//! the caller holds while a share arrives (the executor's frames, the Python object, and what is
//! read from it) shrinks with it: fetching those files' shares from a two-worker Dask cluster
//! took the caller's peak 21 MiB above its start before, 8 MiB after. The caller reads one
//! file's references at a time from the share, never a copy of it.

use std::io::{BufRead, BufReader, Write};

use zarrs_kerchunk::kerchunk::{JsonWriteOptions, ParseOptions, ReferenceSet};

use crate::errors::{Error, Kind};

/// zstd's level for a share: the fastest of its standard levels, since a worker compresses
/// every share and the caller's memory, not the last few percent of size, is what packing is for.
const LEVEL: i32 = 1;

/// `sets`, each file's URL and references, packed: the URLs, and the references of all of them
/// in one compressed buffer, in the same order.
///
/// # Errors
/// [`Kind::Invalid`] naming the file whose references cannot be written (JSON cannot hold them).
pub(crate) fn pack(sets: Vec<(String, ReferenceSet)>) -> Result<(Vec<String>, Vec<u8>), Error> {
    let failed = |e: std::io::Error| Error::new(Kind::Invalid, format!("cannot pack a share's references: {e}"));
    let mut encoder = zstd::Encoder::new(Vec::new(), LEVEL).map_err(failed)?;
    let mut urls = Vec::with_capacity(sets.len());
    for (url, set) in sets {
        set.write_json(&mut encoder, &JsonWriteOptions::default())
            .map_err(|e| Error::new(Kind::Invalid, format!("cannot write {url}'s references: {e}")))?;
        encoder.write_all(b"\n").map_err(failed)?;
        urls.push(url);
    }
    Ok((urls, encoder.finish().map_err(failed)?))
}

/// Hand each file of a share [`pack`] made to `each`, in order, with its URL (of `urls`):
/// one file's references read at a time.
///
/// # Errors
/// [`Kind::Invalid`] if `packed` is not what [`pack`] makes for `urls` (naming the file whose
/// references cannot be read, or saying how many files it holds); any error of `each`.
pub(crate) fn each_file(
    urls: &[String],
    packed: &[u8],
    mut each: impl FnMut(&str, ReferenceSet) -> Result<(), Error>,
) -> Result<(), Error> {
    let corrupt = |reason: String| Error::new(Kind::Invalid, format!("a share's packed references: {reason}"));
    let decoder = zstd::Decoder::with_buffer(packed).map_err(|e| corrupt(e.to_string()))?;
    let mut lines = BufReader::new(decoder);
    let mut line = Vec::new();
    for url in urls {
        line.clear();
        lines.read_until(b'\n', &mut line).map_err(|e| corrupt(format!("{url}: {e}")))?;
        let Some(json) = line.strip_suffix(b"\n") else {
            return Err(corrupt(format!("{url}'s references are missing")));
        };
        let set = ReferenceSet::from_json(json, &ParseOptions::default())
            .map_err(|e| Error::new(Kind::Invalid, format!("{url}: the share's references: {e}")))?;
        each(url, set)?;
    }
    line.clear();
    let rest = lines.read_until(b'\n', &mut line).map_err(|e| corrupt(e.to_string()))?;
    if rest > 0 {
        return Err(corrupt(format!("more files than the {} it names", urls.len())));
    }
    Ok(())
}
