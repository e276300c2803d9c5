//! The codecs of `zarrs_kerchunk_codecs` (GRIB2, TIFF's, numcodecs' others)
//! for the numcodecs stand-ins of `zarrs_kerchunk.codecs`: zarr-python asks
//! numcodecs for every codec of an array it opens, and these decode in Rust
//! where neither eccodes nor imagecodecs is installed.

use std::borrow::Cow;

use pyo3::prelude::*;
use pyo3::types::PyBytes;
use zarrs::array::codec::api::{BytesRepresentation, Codec, CodecOptions};
use zarrs::metadata::v2::MetadataV2;

use crate::errors::{Error, Kind};
use crate::runtime;

pub(crate) fn register(module: &Bound<'_, PyModule>) -> PyResult<()> {
    module.add_function(wrap_pyfunction!(decode_chunk, module)?)?;
    module.add("DECODED_IDS", zarrs_kerchunk_codecs::IDS.to_vec())?;
    Ok(())
}

/// Decode one chunk with the codec of `configuration` (its numcodecs JSON,
/// `id` included), into at most `max_size` bytes, with the GIL released.
///
/// # Errors
/// `InvalidReferencesError` naming the codec: a configuration it refuses, a
/// codec with no decoder, or a chunk it cannot decode.
#[pyfunction]
fn decode_chunk<'py>(
    py: Python<'py>,
    configuration: &str,
    data: &[u8],
    max_size: u64,
) -> PyResult<Bound<'py, PyBytes>> {
    runtime::register_codecs();
    let invalid = |reason: String| Error::new(Kind::Invalid, format!("codec {configuration}: {reason}"));
    let metadata: MetadataV2 = serde_json::from_str(configuration).map_err(|e| invalid(e.to_string()))?;
    let Codec::BytesToBytes(codec) = Codec::from_metadata(&metadata).map_err(|e| invalid(e.to_string()))? else {
        return Err(invalid("not a codec of bytes to bytes".into()).into());
    };
    let size = BytesRepresentation::BoundedSize(max_size);
    let decoded = py
        .detach(|| codec.decode(Cow::Borrowed(data), &size, &CodecOptions::default()).map(Cow::into_owned))
        .map_err(|e| invalid(e.to_string()))?;
    Ok(PyBytes::new(py, &decoded))
}
