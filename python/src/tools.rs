use pyo3::prelude::*;
pub(crate) fn register(_module: &Bound<'_, PyModule>) -> PyResult<()> { Ok(()) }
