//! An array held whole and decoded in the references (a coordinate `combine` reads), assembled
//! from its chunks in the data file, each decoded through the file's filter pipeline by the HDF5
//! parser's own filters.

/// An array to hold whole and decoded: its chunks' places in the data file, and how to decode
/// and lay them out.
pub(crate) struct Whole {
    /// The key of its one chunk.
    pub(crate) key: String,
    pub(crate) shape: Vec<u64>,
    pub(crate) chunk_shape: Vec<u64>,
    pub(crate) itemsize: u64,
    pub(crate) pipeline: Vec<hdf5_reader::messages::filter_pipeline::FilterDescription>,
    /// Each chunk's index in the grid, offset and stored length.
    pub(crate) chunks: Vec<(Vec<u64>, u64, u64)>,
}

impl Whole {
    /// The array's path.
    pub(crate) fn variable(&self) -> &str {
        self.key.rsplit_once('/').map_or("", |(path, _)| path)
    }

    /// The array's bytes, from its chunks' `stored` bytes (in the order of [`Whole::chunks`]).
    ///
    /// # Errors
    /// Why a chunk does not decode to a chunk's bytes.
    pub(crate) fn assemble(&self, stored: &[bytes::Bytes]) -> Result<Vec<u8>, String> {
        let itemsize = usize::try_from(self.itemsize).map_err(|e| e.to_string())?;
        // Both within the metadata budget, checked when the array was described.
        let bytes = |shape: &[u64]| {
            shape
                .iter()
                .try_fold(self.itemsize, |n, &d| n.checked_mul(d))
                .and_then(|n| usize::try_from(n).ok())
                .ok_or_else(|| format!("{shape:?} holds more bytes than memory counts"))
        };
        let (chunk_bytes, total) = (bytes(&self.chunk_shape)?, bytes(&self.shape)?);
        let mut out = vec![0u8; total];
        for ((index, offset, _), bytes) in self.chunks.iter().zip(stored) {
            let decoded = hdf5_reader::filters::apply_pipeline_with_limit(
                bytes,
                &self.pipeline,
                0,
                itemsize,
                None,
                Some(chunk_bytes),
            )
            .map_err(|e| format!("the chunk at {index:?} (offset {offset}) does not decode: {e}"))?;
            if decoded.len() != chunk_bytes {
                return Err(format!(
                    "the chunk at {index:?} (offset {offset}) decodes to {} bytes, not {chunk_bytes}",
                    decoded.len()
                ));
            }
            place(&mut out, &self.shape, &decoded, &self.chunk_shape, index, itemsize);
        }
        Ok(out)
    }
}

/// Copies `chunk` (of `chunk_shape`, at grid `index`) into `out` (of `shape`), C order, the
/// parts of an edge chunk past the array left out.
fn place(out: &mut [u8], shape: &[u64], chunk: &[u8], chunk_shape: &[u64], index: &[u64], itemsize: usize) {
    let to_usize = |n: u64| usize::try_from(n).unwrap_or(usize::MAX);
    let ndim = shape.len();
    if ndim == 0 {
        out.copy_from_slice(&chunk[..out.len()]);
        return;
    }
    let start: Vec<u64> = index.iter().zip(chunk_shape).map(|(i, c)| i * c).collect();
    let extent: Vec<u64> = (0..ndim).map(|d| chunk_shape[d].min(shape[d].saturating_sub(start[d]))).collect();
    if extent.contains(&0) {
        return;
    }
    // Every row (all axes but the last) of the chunk's part inside the array.
    let rows: u64 = extent[..ndim - 1].iter().product();
    let run = to_usize(extent[ndim - 1]) * itemsize;
    for row in 0..rows {
        let (mut rest, mut source, mut target) = (row, 0u64, 0u64);
        let (mut source_stride, mut target_stride) = (chunk_shape[ndim - 1], shape[ndim - 1]);
        let mut position = vec![0u64; ndim - 1];
        for d in (0..ndim - 1).rev() {
            position[d] = rest % extent[d];
            rest /= extent[d];
        }
        for d in (0..ndim - 1).rev() {
            source += position[d] * source_stride;
            target += (start[d] + position[d]) * target_stride;
            source_stride *= chunk_shape[d];
            target_stride *= shape[d];
        }
        let target = to_usize(target + start[ndim - 1]) * itemsize;
        let source = to_usize(source) * itemsize;
        out[target..target + run].copy_from_slice(&chunk[source..source + run]);
    }
}
