//! Arrays whose chunks along one axis are not all one length: Zarr v3's
//! rectilinear chunk grid, and the codec that crops chunks stored larger than
//! their place in the array.

use serde_json::{Value, json};

/// The name of the codec that crops a chunk stored larger than its place in
/// the grid ([`Uneven::stored`]): an array-to-array codec of this project's,
/// configured with `stored_chunk_shape`. A chunk decodes, through the codecs
/// after it, to its place's extent or to the stored one where that is larger,
/// axis by axis, and is cropped to its place's.
pub const CROP_CODEC: &str = "zarrs_kerchunk.crop";

/// In the Zarr v2 form [`set_v2`](crate::set_v2) gives of a Zarr v3 set, the key of an uneven
/// array's `.zarray` that holds its chunks along the uneven axis (`{"axis": 0, "edges": [...],
/// "stored": 10}`), for combining to continue its grid ([`edges_of`]). No reader sees it: a set
/// combined from such a form is written as Zarr v3 again.
pub const EDGES: &str = "zarrs_kerchunk_edges";

/// The chunks along its uneven axis that the `.zarray` `zarray` holds under [`EDGES`], if any.
#[must_use]
pub fn edges_of(zarray: &Value) -> Option<Uneven> {
    let grid = zarray.get(EDGES)?;
    let axis = usize::try_from(grid["axis"].as_u64()?).ok()?;
    let edges: Vec<u64> = serde_json::from_value(grid["edges"].clone()).ok()?;
    Some(Uneven { axis, edges, stored: grid["stored"].as_u64() })
}

/// An array's chunks along one axis, where they are not all one length (files
/// of uneven length concatenated).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Uneven {
    /// The axis.
    pub axis: usize,
    /// Each chunk's extent along the axis, in order (the last may pass the
    /// array's end, as Zarr v3 allows).
    pub edges: Vec<u64>,
    /// The extent along the axis every chunk shorter than it is stored at
    /// (HDF5 stores a dataset's last chunk whole): such chunks are cropped by
    /// [`CROP_CODEC`]. `None` where every chunk is stored at its extent.
    pub stored: Option<u64>,
}

impl Uneven {
    /// The rectilinear `chunk_grid` of an array of `shape` and of `chunks` along every axis but
    /// [`Uneven::axis`], its edges run-length encoded. The other axes' chunks are listed too (as
    /// one run), not given as one number: icechunk 2.3 reads lists only.
    pub(crate) fn chunk_grid(&self, shape: &[u64], chunks: &[u64]) -> Value {
        let shapes: Vec<Value> = chunks
            .iter()
            .zip(shape)
            .enumerate()
            .map(|(axis, (&chunk, &length))| {
                if axis == self.axis {
                    run_lengths(&self.edges)
                } else {
                    let count = if chunk == 0 { 0 } else { length.div_ceil(chunk) };
                    run_lengths(&vec![chunk; usize::try_from(count).unwrap_or(0)])
                }
            })
            .collect();
        json!({"name": "rectilinear", "configuration": {"kind": "inline", "chunk_shapes": shapes}})
    }

    /// The crop codec for chunks of `chunks` along every other axis, if any chunk is stored larger.
    pub(crate) fn crop_codec(&self, chunks: &[u64]) -> Option<Value> {
        let stored = self.stored?;
        let shape: Vec<u64> =
            chunks.iter().enumerate().map(|(axis, &chunk)| if axis == self.axis { stored } else { chunk }).collect();
        Some(json!({"name": CROP_CODEC, "configuration": {"stored_chunk_shape": shape}}))
    }
}

/// `edges` run-length encoded as the rectilinear grid writes them: a run of
/// one length as `[length, count]`, a single one as the length.
fn run_lengths(edges: &[u64]) -> Value {
    let mut runs: Vec<(u64, u64)> = Vec::new();
    for &edge in edges {
        match runs.last_mut() {
            Some((length, count)) if *length == edge => *count += 1,
            _ => runs.push((edge, 1)),
        }
    }
    Value::Array(
        runs.into_iter()
            .map(|(length, count)| if count == 1 { json!(length) } else { json!([length, count]) })
            .collect(),
    )
}

/// The v3 chunk key (default encoding, `/`) of the chunk `indices` of the array at `path`:
/// `path/c/0/1`, and `path/c` for a 0-d array's one chunk.
#[must_use]
pub fn chunk_key(path: &str, indices: &[u64]) -> String {
    let mut key = if path.is_empty() { "c".to_owned() } else { format!("{path}/c") };
    for index in indices {
        key.push('/');
        key.push_str(&index.to_string());
    }
    key
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn edges_are_run_length_encoded() {
        let uneven = Uneven { axis: 0, edges: vec![10, 10, 10, 1, 10, 10, 8, 10], stored: Some(10) };
        assert_eq!(
            uneven.chunk_grid(&[80, 9], &[10, 4]),
            json!({"name": "rectilinear", "configuration": {"kind": "inline",
                "chunk_shapes": [[[10, 3], 1, [10, 2], 8, 10], [[4, 3]]]}})
        );
        assert_eq!(uneven.chunk_grid(&[80, 4], &[10, 4])["configuration"]["chunk_shapes"][1], json!([4]));
        assert_eq!(
            uneven.crop_codec(&[10, 4]),
            Some(json!({"name": CROP_CODEC, "configuration": {"stored_chunk_shape": [10, 4]}}))
        );
        assert_eq!(Uneven { stored: None, ..uneven }.crop_codec(&[10, 4]), None);
    }

    #[test]
    fn chunk_keys_are_v3s() {
        assert_eq!(chunk_key("a/t", &[3, 0]), "a/t/c/3/0");
        assert_eq!(chunk_key("t", &[]), "t/c");
        assert_eq!(chunk_key("", &[1]), "c/1");
    }
}
