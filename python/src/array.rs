//! `ArrayHandle`: one array of an opened reference set, read and decoded by
//! zarrs with the GIL released, for the xarray engine. Values come back as
//! the bytes of a C-order block in native byte order, which `NumPy` wraps
//! without a copy.

use std::ops::Range;
use std::sync::Arc;

use pyo3::prelude::*;
use pyo3_bytes::PyBytes;
use zarrs::array::{Array, ArrayBytes};
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
        let storage = Arc::new(store.sync_store().as_ref().clone());
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
}
