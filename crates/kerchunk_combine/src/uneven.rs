//! Files whose chunks along the dimension do not make one regular grid when
//! concatenated: lengths that are not a multiple of the chunk length, files
//! chunked differently (one chunk each), or a set that is uneven already (an
//! append). Such an array is written on Zarr v3's rectilinear grid
//! ([`kerchunk_v3::Uneven`]).

use kerchunk_v3::Uneven;

/// One file's (or set's) chunks of an array along the dimension.
pub(crate) struct ChunkRun {
    /// The file, as combining names it.
    pub(crate) file: String,
    /// Each chunk's extent along the dimension, and the length it is stored at (Zarr v2's,
    /// and HDF5's, last chunk is stored whole, past the array's end).
    pub(crate) chunks: Vec<(u64, u64)>,
}

impl ChunkRun {
    /// The chunks of a file `length` long along the dimension in chunks of `chunk`, each
    /// stored whole.
    pub(crate) fn regular(file: String, length: u64, chunk: u64) -> Self {
        let (full, rest) = (length / chunk, length % chunk);
        let mut chunks: Vec<(u64, u64)> =
            std::iter::repeat_n((chunk, chunk), usize::try_from(full).unwrap_or(0)).collect();
        if rest > 0 {
            chunks.push((rest, chunk));
        }
        Self { file, chunks }
    }

    /// The chunks of a set `length` long along the dimension, on the rectilinear grid of
    /// `uneven` (whose chunks shorter than its stored length are stored at it).
    pub(crate) fn rectilinear(file: String, length: u64, uneven: &Uneven) -> Self {
        let mut remaining = length;
        let chunks = uneven
            .edges
            .iter()
            .map(|&edge| {
                let extent = edge.min(remaining);
                remaining -= extent;
                let stored = uneven.stored.map_or(edge, |stored| edge.max(stored));
                (extent, stored)
            })
            .collect();
        Self { file, chunks }
    }
}

/// The chunks along `axis` (the dimension's, `dimension`) of the files' `runs` concatenated:
/// `None` where they make a regular grid (one stored length, every chunk but the last that
/// long), as Zarr v2 writes it; otherwise each chunk's extent, and the length every chunk
/// shorter than the one it is stored at is stored at (cropped by the crop codec). The last
/// chunk of all keeps its stored length, passing the array's end as a regular grid's does.
///
/// # Errors
/// The file and why, where no one stored length describes the chunks: chunks shorter than
/// their stored length stored at two lengths, or a whole chunk shorter than the length the
/// shorter ones are stored at (the crop codec would take it for a cropped one).
pub(crate) fn along(runs: &[ChunkRun], axis: usize, dimension: &str) -> Result<Option<Uneven>, (String, String)> {
    let all: Vec<(u64, u64, &str)> = runs
        .iter()
        .flat_map(|run| run.chunks.iter().map(|&(extent, stored)| (extent, stored, run.file.as_str())))
        .collect();
    let Some((last, before)) = all.split_last() else { return Ok(None) };
    let chunk = last.1;
    if all.iter().all(|&(_, stored, _)| stored == chunk) && before.iter().all(|&(extent, _, _)| extent == chunk) {
        return Ok(None);
    }
    let mut edges: Vec<u64> = before.iter().map(|&(extent, _, _)| extent).collect();
    edges.push(last.1);
    // The stored length of the cropped chunks, and the first file with one.
    let mut cropped: Option<(u64, &str)> = None;
    for &(extent, stored, file) in before.iter().filter(|(extent, stored, _)| extent < stored) {
        match cropped {
            Some((length, first)) if length != stored => {
                return Err((
                    file.to_owned(),
                    format!(
                        "its last chunk along {dimension} is {extent} long and stored {stored} long, where {first}'s \
                         is stored {length} long: chunks stored at two lengths cannot be cropped by one codec"
                    ),
                ));
            }
            Some(_) => {}
            None => cropped = Some((stored, file)),
        }
    }
    if let Some((length, first)) = cropped {
        let whole = before.iter().filter(|(extent, stored, _)| extent == stored).chain(std::iter::once(last));
        if let Some(&(_, short, file)) = whole.into_iter().find(|(_, stored, _)| *stored < length) {
            return Err((
                file.to_owned(),
                format!(
                    "its chunks along {dimension} are {short} long, shorter than the {length} that {first}'s last \
                     chunk is stored at: no one stored length describes both"
                ),
            ));
        }
    }
    Ok(Some(Uneven { axis, edges, stored: cropped.map(|(length, _)| length) }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn runs(files: &[(u64, u64)]) -> Vec<ChunkRun> {
        files
            .iter()
            .enumerate()
            .map(|(i, &(length, chunk))| ChunkRun::regular(format!("f{i}"), length, chunk))
            .collect()
    }

    #[test]
    fn a_regular_grid_stays_regular() {
        assert_eq!(along(&runs(&[(30, 10), (20, 10), (7, 10)]), 0, "time"), Ok(None));
        assert_eq!(along(&runs(&[(31, 31)]), 0, "time"), Ok(None));
    }

    #[test]
    fn uneven_files_are_rectilinear() {
        // 31, 28 and 31 days in chunks of 10: each file's last chunk stored whole.
        let uneven = along(&runs(&[(31, 10), (28, 10), (31, 10)]), 1, "time").unwrap().unwrap();
        assert_eq!(uneven.edges, [10, 10, 10, 1, 10, 10, 8, 10, 10, 10, 10]);
        assert_eq!((uneven.axis, uneven.stored), (1, Some(10)));
        // One chunk a file: every chunk stored as long as it is.
        let uneven = along(&runs(&[(31, 31), (28, 28), (31, 31)]), 0, "time").unwrap().unwrap();
        assert_eq!((uneven.edges, uneven.stored), (vec![31, 28, 31], None));
    }

    /// An uneven set (from an earlier combine) continued by another file: its cropped chunks
    /// stay cropped, and its last chunk, which passed its end, is cropped to its extent.
    #[test]
    fn an_uneven_set_is_continued() {
        let set = Uneven { axis: 0, edges: vec![10, 10, 10, 1, 10, 10, 10], stored: Some(10) };
        let continued = [ChunkRun::rectilinear("set".into(), 59, &set), ChunkRun::regular("new".into(), 12, 10)];
        let uneven = along(&continued, 0, "time").unwrap().unwrap();
        assert_eq!(uneven.edges, [10, 10, 10, 1, 10, 10, 8, 10, 10]);
        assert_eq!(uneven.stored, Some(10));
    }

    #[test]
    fn what_one_stored_length_cannot_describe_is_refused_naming_the_file() {
        let (file, reason) = along(&runs(&[(31, 10), (28, 20), (31, 10)]), 0, "time").unwrap_err();
        assert_eq!(file, "f1");
        assert!(reason.starts_with("its last chunk along time is 8 long and stored 20 long, where f0's is stored 10"));
        let (file, reason) = along(&runs(&[(31, 10), (5, 5), (31, 10)]), 0, "time").unwrap_err();
        assert_eq!(file, "f1");
        assert!(reason.starts_with("its chunks along time are 5 long, shorter than the 10 that f0's"), "{reason}");
    }
}
