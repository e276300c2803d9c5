//! The extension module of the `zarrs_kerchunk` Python package
//! (`zarrs_kerchunk._rs`): the Rust store and tools that its Python modules
//! wrap. Everything Python users call is documented in `_rs.pyi` and in the
//! Python modules; this crate is not meant to be used from Rust.

mod array;
mod codecs;
mod combine;
mod documents;
mod errors;
mod manifests;
mod options;
mod packed;
mod refs_dict;
mod runtime;
mod scan;
mod shares;
mod store;
mod tools;

use pyo3::prelude::*;

#[pymodule]
fn _rs(module: &Bound<'_, PyModule>) -> PyResult<()> {
    module.add_class::<store::StoreHandle>()?;
    module.add_class::<array::ArrayHandle>()?;
    module.add_class::<pyo3_bytes::PyBytes>()?;
    // Chunks come back as this class: name it where users will find it.
    module.py().get_type::<pyo3_bytes::PyBytes>().setattr("__module__", "zarrs_kerchunk._rs")?;
    tools::register(module)?;
    scan::register(module)?;
    combine::register(module)?;
    shares::register(module)?;
    codecs::register(module)?;
    manifests::register(module)?;
    module.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
