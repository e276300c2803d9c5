"""The xarray engine: on every case of the corpus it gives what xarray's zarr engine gives on the
same references (CF decoding, dimensions, attributes, fill values), reads only the chunks a
selection needs, and works lazily with Dask."""

from __future__ import annotations

import json
import pickle
from pathlib import Path

import numpy as np
import pytest
import xarray as xr
import zarr
from conftest import cases, compare

from zarrs_kerchunk import ReferenceReadError, ReferenceStore
from zarrs_kerchunk.xarray_backend import RustArray, ZarrsKerchunkBackendEntrypoint

CASES = cases()
FILES = [pytest.param(case, file, id=f"{case.name}/{file}") for case in CASES for file in case.references()]
SAMPLE = Path(__file__).resolve().parents[2] / "crates/zarrs_kerchunk/examples/data/sample.json"


def zarr_engine(location, **kwargs):
    return xr.open_dataset(ReferenceStore(location), engine="zarr", consolidated=False, zarr_format=2, **kwargs)


def outcome(open_dataset):
    """The loaded dataset, or the type of the error opening or loading it raised."""
    try:
        return open_dataset().load()
    except Exception as e:  # noqa: BLE001 - the two engines must fail alike
        return type(e)


@pytest.mark.parametrize(("case", "file"), FILES)
def test_same_as_the_zarr_engine(case, file) -> None:
    location = case.folder / file
    for decode in [True, False]:
        ours = outcome(lambda: xr.open_dataset(location, engine="zarrs_kerchunk", decode_cf=decode))
        theirs = outcome(lambda: zarr_engine(location, decode_cf=decode))
        if isinstance(theirs, type):
            assert ours is theirs, f"the zarr engine raised {theirs.__name__}, ours gave {ours}"
            continue
        xr.testing.assert_identical(ours, theirs)
        for name, variable in ours.variables.items():
            assert variable.dims == theirs[name].dims
            assert json.dumps(variable.attrs, default=repr) == json.dumps(theirs[name].attrs, default=repr), name
            assert variable.encoding.get("chunks") == theirs[name].encoding.get("chunks"), name


@pytest.mark.parametrize(("case", "file"), FILES)
def test_raw_values_are_the_ground_truth(case, file) -> None:
    try:
        ds = xr.open_dataset(case.folder / file, engine="zarrs_kerchunk", decode_cf=False)
    except Exception:  # noqa: BLE001 - a case the zarr engine cannot open either (checked above)
        pytest.skip("not an xarray dataset")
    for entry in case.arrays:
        name = entry["path"].rsplit("/", 1)[-1]
        if "/" in entry["path"] or name not in ds.variables:
            continue
        assert compare(entry, ds[name].values, case.folder) is None, name


def test_selections_read_as_the_zarr_engine_reads_them() -> None:
    ours = xr.open_dataset(SAMPLE, engine="zarrs_kerchunk")
    theirs = zarr_engine(SAMPLE)
    rng = np.random.default_rng(0)
    selections = [
        {"time": 1},
        {"time": slice(1, 3), "lat": slice(None, None, -3)},
        {"lat": [0, 5, 17, 5], "lon": slice(2, 20, 4)},
        {"time": xr.DataArray([0, 3, 1], dims="p"), "lat": xr.DataArray([2, 9, 17], dims="p")},
        {"lat": xr.DataArray(rng.integers(0, 18, 50), dims="p"), "lon": xr.DataArray(rng.integers(0, 24, 50), dims="p")},
        {"lat": slice(5, 5)},
        {"time": xr.DataArray([[0, 3], [2, 1]], dims=("a", "b")), "lat": xr.DataArray([[-1, 4], [17, 0]], dims=("a", "b")),
         "lon": xr.DataArray([[23, 0], [5, 5]], dims=("a", "b"))},
        {"time": xr.DataArray(rng.integers(0, 4, 200), dims="p"), "lat": xr.DataArray(rng.integers(0, 18, 200), dims="p"),
         "lon": xr.DataArray(rng.integers(0, 24, 200), dims="p")},
    ]
    for selection in selections:
        xr.testing.assert_identical(ours.isel(selection).load(), theirs.isel(selection).load())


def test_reads_only_the_chunks_a_selection_needs(tmp_path: Path) -> None:
    (tmp_path / "data.bin").write_bytes(np.arange(8, dtype="<i4").tobytes())
    zarray = {"shape": [8], "chunks": [2], "dtype": "<i4", "compressor": None, "filters": None,
              "fill_value": None, "order": "C", "zarr_format": 2}
    refs = {".zgroup": json.dumps({"zarr_format": 2}), "x/.zarray": json.dumps(zarray),
            "x/.zattrs": json.dumps({"_ARRAY_DIMENSIONS": ["i"]}),
            "x/0": ["data.bin", 0, 8], "x/1": ["data.bin", 8, 8], "x/2": ["gone.bin", 0, 8], "x/3": ["data.bin", 24, 8]}
    (tmp_path / "refs.json").write_text(json.dumps({"version": 1, "refs": refs}))
    ds = xr.open_dataset(tmp_path / "refs.json", engine="zarrs_kerchunk")
    assert ds.x[0:4].values.tolist() == [0, 1, 2, 3]
    assert ds.x[6:].values.tolist() == [6, 7]
    # A chunk that cannot be read is an error, never fill values.
    with pytest.raises(ReferenceReadError, match="gone.bin"):
        ds.x.values
    lazy = xr.open_dataset(tmp_path / "refs.json", engine="zarrs_kerchunk", chunks={})
    assert lazy.x.chunks == ((2, 2, 2, 2),)
    assert int(lazy.x[0:4].sum()) == 6
    with pytest.raises(ReferenceReadError):
        lazy.x.sum().compute()


def test_with_dask_chunks_and_pickling() -> None:
    ds = xr.open_dataset(SAMPLE, engine="zarrs_kerchunk", chunks={})
    assert float(ds.air.mean()) == pytest.approx(float(zarr_engine(SAMPLE).air.mean()), rel=1e-6)
    array = ds.air.variable._data
    copy = pickle.loads(pickle.dumps(ds))
    xr.testing.assert_identical(copy.load(), ds.load())
    backend = xr.open_dataset(SAMPLE, engine="zarrs_kerchunk", decode_cf=False).air.variable._data
    while not isinstance(backend, RustArray):
        backend = backend.array
    assert b"air" in pickle.dumps(backend) and len(pickle.dumps(backend)) < 2000
    # The dask-backed variable pickles too, and reads the same values once unpickled.
    np.testing.assert_array_equal(pickle.loads(pickle.dumps(array)).compute(), ds.air.values)


def test_engine_is_registered_and_claims_only_its_stores() -> None:
    assert "zarrs_kerchunk" in xr.backends.list_engines()
    engine = ZarrsKerchunkBackendEntrypoint()
    assert engine.guess_can_open(ReferenceStore(SAMPLE))
    assert not engine.guess_can_open(str(SAMPLE))
    ds = xr.open_dataset(ReferenceStore(SAMPLE))
    assert "air" in ds


def test_store_options_pass_through(tmp_path: Path) -> None:
    with pytest.raises(TypeError, match="unknown option"):
        xr.open_dataset(SAMPLE, engine="zarrs_kerchunk", no_such_option=1)
    elsewhere = tmp_path.as_uri() + "/"
    # The time coordinate is decoded when opening: the refusal comes at once.
    with pytest.raises(ReferenceReadError, match="allowed prefixes"):
        xr.open_dataset(SAMPLE, engine="zarrs_kerchunk", allowed_prefixes=[elsewhere])


def test_zarr_python_reads_the_metadata_as_written(tmp_path: Path) -> None:
    """zarr-python gets each ``.zarray`` byte for byte: ``|S5`` stays bytes, and a numcodecs
    filter zarrs lacks (``delta``: zarr-python decodes it in the store, zarrs_kerchunk_codecs under
    the engine) and a datetime dtype read as the zarr engine over fsspec reads them."""
    values = np.array([3, 5, 4, 10, 10, 2], dtype="<i4")
    deltas = np.concatenate([values[:1], np.diff(values)]).astype("<i4")
    names = np.array([b"alpha", b"be", b"gamma"], dtype="S5")
    times = np.array(["2013-01-01", "2013-01-02", "2013-01-03"], dtype="<M8[ns]")
    (tmp_path / "data.bin").write_bytes(deltas.tobytes() + names.tobytes() + times.tobytes())
    array = {"compressor": None, "filters": None, "order": "C", "zarr_format": 2}
    zarrays = {
        "delta": dict(array, shape=[6], chunks=[6], dtype="<i4", fill_value=0,
                      filters=[{"id": "delta", "dtype": "<i4"}]),
        "name": dict(array, shape=[3], chunks=[3], dtype="|S5", fill_value="AAAAAAA="),
        "time": dict(array, shape=[3], chunks=[3], dtype="<M8[ns]", fill_value=None),
    }
    refs = {".zgroup": json.dumps({"zarr_format": 2})}
    offset = 0
    for (name, zarray), data in zip(zarrays.items(), (deltas, names, times)):
        refs[f"{name}/.zarray"] = json.dumps(zarray)
        refs[f"{name}/.zattrs"] = json.dumps({"_ARRAY_DIMENSIONS": [f"n_{name}"]})
        refs[f"{name}/0"] = [str(tmp_path / "data.bin"), offset, data.nbytes]
        offset += data.nbytes
    location = tmp_path / "refs.json"
    location.write_text(json.dumps({"version": 1, "refs": refs}))

    store = ReferenceStore(location)
    for name in zarrays:
        assert store.get_sync(f"{name}/.zarray").to_bytes() == refs[f"{name}/.zarray"].encode()
    group = zarr.open_group(store, mode="r", zarr_format=2)
    np.testing.assert_array_equal(group["delta"][:], values)
    np.testing.assert_array_equal(group["name"][:], names)
    np.testing.assert_array_equal(group["time"][:], times)

    ours = xr.open_dataset(location, engine="zarrs_kerchunk")
    fsspec_options = {"fo": str(location), "remote_protocol": "file"}
    theirs = xr.open_dataset("reference://", engine="zarr", consolidated=False, zarr_format=2,
                             storage_options=fsspec_options)
    xr.testing.assert_identical(ours, theirs)
    xr.testing.assert_identical(zarr_engine(location), theirs)
    np.testing.assert_array_equal(ours["delta"].values, values)
    assert list(ours["name"].values) == list(names)  # bytes; xarray's fill masking makes them objects
    np.testing.assert_array_equal(ours["time"].values, times)
