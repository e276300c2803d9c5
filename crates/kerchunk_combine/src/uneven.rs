//! Files whose chunks along the dimension do not make one regular grid when
//! concatenated: lengths that are not a multiple of the chunk length, or
//! files chunked differently (one chunk each). Such an array is written on
//! Zarr v3's rectilinear grid ([`kerchunk_v3::Uneven`]).

use kerchunk_v3::Uneven;

/// One file's chunks of an array along the dimension.
pub(crate) struct ChunkRun {
    /// The file, as combining names it.
    pub(crate) file: String,
    /// Its length along the dimension.
    pub(crate) length: u64,
    /// Its chunk length along the dimension: every chunk is stored this long (Zarr v2's, and
    /// HDF5's, last chunk is stored whole, past the array's end).
    pub(crate) chunk: u64,
}

/// The chunks along `axis` (the dimension's, `dimension`) of the files' `runs` concatenated:
/// `None` where they make a regular grid (one chunk length, every file but the last a
/// multiple of it), as Zarr v2 writes it; otherwise each chunk's extent, and the length every
/// chunk shorter than its file's chunk length is stored at (cropped by the crop codec). The
/// last chunk of all keeps its stored length, passing the array's end as a regular grid's does.
///
/// # Errors
/// The file and why, where no one stored length describes the chunks: chunks shorter than
/// their file's chunk length stored at two lengths, or a whole chunk shorter than the length
/// the shorter ones are stored at (the crop codec would take it for a cropped one).
pub(crate) fn along(runs: &[ChunkRun], axis: usize, dimension: &str) -> Result<Option<Uneven>, (String, String)> {
    let Some(first) = runs.first() else { return Ok(None) };
    let before_last = &runs[..runs.len() - 1];
    if runs.iter().all(|run| run.chunk == first.chunk) && before_last.iter().all(|run| run.length % run.chunk == 0) {
        return Ok(None);
    }
    let last = runs.iter().rposition(|run| run.length > 0);
    let mut edges = Vec::new();
    // Each whole chunk's length (and its file), and the stored length of the cropped ones.
    let mut whole: Vec<(u64, &str)> = Vec::new();
    let mut stored: Option<(u64, &str)> = None;
    for (i, run) in runs.iter().enumerate() {
        let (full, rest) = (run.length / run.chunk, run.length % run.chunk);
        edges.extend(std::iter::repeat_n(run.chunk, usize::try_from(full).unwrap_or(usize::MAX)));
        if full > 0 {
            whole.push((run.chunk, &run.file));
        }
        if rest == 0 {
            continue;
        }
        if Some(i) == last {
            // The last chunk of all: its stored length, the array's shape ending it.
            edges.push(run.chunk);
            whole.push((run.chunk, &run.file));
            continue;
        }
        edges.push(rest);
        match stored {
            Some((length, file)) if length != run.chunk => {
                return Err((
                    run.file.clone(),
                    format!(
                        "its last chunk along {dimension} is {rest} long and stored {} long, where {file}'s is \
                         stored {length} long: chunks stored at two lengths cannot be cropped by one codec",
                        run.chunk
                    ),
                ));
            }
            Some(_) => {}
            None => stored = Some((run.chunk, &run.file)),
        }
    }
    if let Some((length, file)) = stored
        && let Some((short, its)) = whole.iter().find(|(chunk, _)| *chunk < length)
    {
        return Err((
            (*its).to_owned(),
            format!(
                "its chunks along {dimension} are {short} long, shorter than the {length} that {file}'s last \
                 chunk is stored at: no one stored length describes both"
            ),
        ));
    }
    Ok(Some(Uneven { axis, edges, stored: stored.map(|(length, _)| length) }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn runs(files: &[(u64, u64)]) -> Vec<ChunkRun> {
        files
            .iter()
            .enumerate()
            .map(|(i, &(length, chunk))| ChunkRun { file: format!("f{i}"), length, chunk })
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
