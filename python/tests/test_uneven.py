"""Files of uneven length combined (tests/scan/uneven, issue 52): the ``zarrs_kerchunk.crop``
codec as zarr-python takes it, and the engine's answer under a zarr-python that cannot read
rectilinear chunk grids. (zarr-python 3.4 reading such sets, and the engine reading them, are
checked by tests/icechunk/uneven.py, in a virtualenv with zarr 3.4.)"""

import pathlib

import numpy as np
import pytest
import zarr

from zarrs_kerchunk.crop import NAME, CropCodec

ROOT = pathlib.Path(__file__).resolve().parents[2]


def test_the_codec_reads_and_writes_its_metadata():
    codec = CropCodec.from_dict({"name": NAME, "configuration": {"stored_chunk_shape": [10, 4]}})
    assert codec.stored_chunk_shape == (10, 4)
    assert codec.to_dict() == {"name": NAME, "configuration": {"stored_chunk_shape": [10, 4]}}
    for shape in ([], [0, 4], [1.5], [True]):
        with pytest.raises(ValueError, match="stored_chunk_shape must be positive whole numbers"):
            CropCodec(stored_chunk_shape=shape)


def test_a_chunk_is_cropped_to_its_place_and_padded_back():
    from zarr.core.array_spec import ArrayConfig, ArraySpec
    from zarr.core.buffer import default_buffer_prototype
    from zarr.core.dtype import parse_dtype

    codec = CropCodec(stored_chunk_shape=[4, 3])
    prototype = default_buffer_prototype()
    spec = ArraySpec(
        shape=(2, 3),
        dtype=parse_dtype("uint8", zarr_format=3),
        fill_value=9,
        config=ArrayConfig.from_dict({}),
        prototype=prototype,
    )
    assert codec.resolve_metadata(spec).shape == (4, 3)
    stored = prototype.nd_buffer.from_numpy_array(np.arange(12, dtype="u1").reshape(4, 3))
    cropped = codec._decode_sync(stored, spec)
    assert cropped.as_numpy_array().tolist() == [[0, 1, 2], [3, 4, 5]]
    padded = codec._encode_sync(cropped, spec)
    assert padded.as_numpy_array().tolist() == [[0, 1, 2], [3, 4, 5], [9, 9, 9], [9, 9, 9]]
    with pytest.raises(ValueError, match=r"a chunk decoded as \(2, 3\), where it is stored as \(4, 3\)"):
        codec._decode_sync(cropped, spec)


@pytest.mark.skipif(
    tuple(int(p) for p in zarr.__version__.split(".")[:2]) >= (3, 4), reason="zarr-python reads them from 3.4 on"
)
def test_the_engine_names_the_zarr_python_it_needs(tmp_path):
    import xarray as xr

    from zarrs_kerchunk import tools
    from zarrs_kerchunk.errors import InvalidReferencesError

    files = [ROOT / "tests/scan/uneven" / f"whole_{n}.nc" for n in range(3)]
    out = tmp_path / "whole.json"
    tools.scan(files, out, concat="time")
    with pytest.raises(InvalidReferencesError, match="which zarr-python reads from 3.4 on; this is zarr 3.1"):
        xr.open_dataset(out, engine="zarrs_kerchunk")
