//! `ArrayHandle`: one array of an opened reference set, read and decoded by
//! zarrs with the GIL released, for the xarray engine. Values come back as
//! the bytes of a C-order block in native byte order, which `NumPy` wraps
//! without a copy.

use std::collections::HashMap;
use std::ops::Range;
use std::sync::Arc;

use rayon::prelude::*;

use pyo3::prelude::*;
use pyo3_bytes::PyBytes;
use zarrs::array::{Array, ArrayBytes};
use zarrs::plugin::{ExtensionName, ZarrVersion};
use zarrs_kerchunk::ReferenceStore;

use crate::errors::{Error, Kind};
use crate::runtime;
use crate::store::StoreHandle;

/// An array of a reference set, opened by zarrs.
#[pyclass(module = "zarrs_kerchunk._rs", frozen)]
pub(crate) struct ArrayHandle {
    array: Arc<Array<ReferenceStore>>,
    path: String,
}

#[pymethods]
impl ArrayHandle {
    /// The array at `path` (`"air"`, `"group/air"`) of the set `store` opened.
    #[new]
    fn new(py: Python<'_>, store: &StoreHandle, path: &str) -> PyResult<Self> {
        runtime::check_process()?;
        runtime::register_codecs();
        let path = format!("/{}", path.trim_matches('/'));
        let storage = Arc::new(store.zarrs_store().as_ref().clone());
        let array = py
            .detach(|| Array::open(storage, &path))
            .map_err(|e| Error::new(Kind::Invalid, format!("cannot open array {path}: {e}")))?;
        Ok(Self { array: Arc::new(array), path })
    }

    /// The shape.
    #[getter]
    fn shape(&self) -> Vec<u64> {
        self.array.shape().to_vec()
    }

    /// The data type of the decoded elements, by its Zarr V3 name (`"float64"`), which numpy
    /// reads as a dtype: not always the one the metadata says, where the store serves it
    /// rewritten (kerchunk's FITS images, stored `>i2`, decode to float64).
    #[getter]
    fn data_type(&self) -> Option<String> {
        self.array.data_type().name(ZarrVersion::V3).map(String::from)
    }

    /// The elements of the block `ranges` (one `(start, stop)` per dimension), decoded, in C
    /// order and native byte order; `None` for a data type of variable length.
    fn read(&self, py: Python<'_>, ranges: Vec<(u64, u64)>) -> PyResult<Option<PyBytes>> {
        runtime::check_process()?;
        let ranges: Vec<Range<u64>> = ranges.into_iter().map(|(start, stop)| start..stop).collect();
        let array = Arc::clone(&self.array);
        let decoded = py.detach(|| array.retrieve_array_subset::<ArrayBytes>(&ranges));
        let bytes =
            decoded.map_err(|e| Error::new(Kind::Read, format!("cannot read {} {ranges:?}: {e}", self.path)))?;
        Ok(bytes.into_fixed().ok().map(|fixed| PyBytes::new(fixed.into_owned().into())))
    }

    /// The elements at `points` (`points[d][i]`: point `i`'s index along dimension `d`),
    /// decoded, in native byte order: each chunk that holds a point is read once, the chunks
    /// in parallel. `None` for a data type of variable length.
    #[expect(clippy::needless_pass_by_value, reason = "pyo3 extracts arguments by value")]
    fn read_points(&self, py: Python<'_>, points: Vec<Vec<u64>>) -> PyResult<Option<PyBytes>> {
        runtime::check_process()?;
        let array = Arc::clone(&self.array);
        let gathered = py.detach(|| gather_points(&array, &points));
        gathered
            .map(|bytes| bytes.map(|bytes| PyBytes::new(bytes.into())))
            .map_err(|message| Error::new(Kind::Read, format!("cannot read points of {}: {message}", self.path)).into())
    }
}

/// The elements at `points`, one chunk read per chunk that holds any; see [`ArrayHandle::read_points`].
fn gather_points(array: &Array<ReferenceStore>, points: &[Vec<u64>]) -> Result<Option<Vec<u8>>, String> {
    let shape = array.shape();
    if points.len() != shape.len() {
        return Err(format!("{} coordinates for {} dimensions", points.len(), shape.len()));
    }
    let count = points.first().map_or(1, Vec::len);
    if points.iter().any(|axis| axis.len() != count) {
        return Err("the coordinates differ in length".into());
    }
    let zeros = vec![0; shape.len()];
    let chunk: Vec<u64> = array.chunk_shape(&zeros).map_err(|e| e.to_string())?.iter().map(|n| n.get()).collect();
    // The points of each chunk, by the chunk's indices.
    let mut chunks: HashMap<Vec<u64>, Vec<usize>> = HashMap::new();
    #[expect(clippy::needless_range_loop, reason = "a point is a column of `points`, indexed by axis then point")]
    for point in 0..count {
        let mut indices = Vec::with_capacity(shape.len());
        for (axis, &size) in shape.iter().enumerate() {
            let at = points[axis][point];
            if at >= size {
                return Err(format!("index {at} is out of bounds for axis {axis} of size {size}"));
            }
            indices.push(at / chunk[axis]);
        }
        chunks.entry(indices).or_default().push(point);
    }
    let read: Vec<(Vec<usize>, Option<Vec<u8>>, usize)> = chunks
        .into_par_iter()
        .map(|(indices, members)| -> Result<_, String> {
            let decoded = array.retrieve_chunk::<ArrayBytes>(&indices).map_err(|e| e.to_string())?;
            let Ok(bytes) = decoded.into_fixed() else { return Ok((members, None, 0)) };
            let elements: u64 = chunk.iter().product();
            let size = usize::try_from(bytes.len() as u64 / elements.max(1)).map_err(|e| e.to_string())?;
            let out_bytes = members.len().checked_mul(size).ok_or("the points' values exceed the address space")?;
            let mut out = Vec::with_capacity(out_bytes);
            for &point in &members {
                // C order within the chunk.
                let mut offset = 0u64;
                for axis in 0..shape.len() {
                    offset = offset * chunk[axis] + (points[axis][point] - indices[axis] * chunk[axis]);
                }
                let start = usize::try_from(offset).map_err(|e| e.to_string())? * size;
                out.extend_from_slice(&bytes[start..start + size]);
            }
            Ok((members, Some(out), size))
        })
        .collect::<Result<_, _>>()?;
    let Some(size) = read.iter().find(|(_, bytes, _)| bytes.is_some()).map(|(_, _, size)| *size) else {
        return Ok(if count == 0 { Some(Vec::new()) } else { None });
    };
    let total = count.checked_mul(size).ok_or("the points' values exceed the address space")?;
    let mut gathered = vec![0u8; total];
    for (members, bytes, _) in read {
        let Some(bytes) = bytes else { return Ok(None) };
        for (k, point) in members.into_iter().enumerate() {
            gathered[point * size..(point + 1) * size].copy_from_slice(&bytes[k * size..(k + 1) * size]);
        }
    }
    Ok(Some(gathered))
}
