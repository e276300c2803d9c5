"""Our GRIB2, TIFF and DMR++ scanners as VirtualiZarr parsers (issue 57): `zarrs_kerchunk.
virtualizarr`'s `GRIBParser`, `TIFFParser` and `DMRPPParser`, called as VirtualiZarr calls its own,
read by zarr-python (Zarr 3) against each file's own library:

- GRIB2 (tests/scan/grib, made by its make.py): every message is one chunk of the array of its
  variable, step type and level type, and reads, through zarr-python and the package's
  `numcodecs.grib` codec, to eccodes' values of that message, bit for bit;
- TIFF and COGs (tests/scan/tiff): every image and overview reads to rasterio's values;
- DMR++ (tests/scan/dmrpp: OPeNDAP bes's sidecars and files, and sidecars written from h5py's view
  of files): every dataset reads to h5py's values; where VirtualiZarr's own `DMRPPParser` reads a
  sidecar right, our store opens in xarray to the same dataset.

No peer parses GRIB or TIFF in VirtualiZarr 2.8 (virtual-tiff is a package of its own)."""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import numpy as np
import pytest
import xarray as xr
import zarr
from virtualizarr import parsers as theirs

from corpus import local_registry
from zarrs_kerchunk import virtualizarr as ours

SCAN = Path(__file__).resolve().parents[3] / "tests" / "scan"

warnings.filterwarnings("ignore", category=UserWarning)




def _same(read: np.ndarray, expected: np.ndarray, what: str) -> None:
    """Equal bit for bit, NaN where NaN (a NaN is never equal to a number here)."""
    assert read.shape == expected.shape, what
    if read.dtype.kind == "f":
        assert np.array_equal(np.isnan(read), np.isnan(expected)), what
        assert np.array_equal(read[~np.isnan(read)].view(f"u{read.itemsize}"),
                              expected[~np.isnan(expected)].astype(read.dtype).view(f"u{read.itemsize}")), what
    else:
        np.testing.assert_array_equal(read, expected, err_msg=what)


def _manifest(store, path: str) -> dict[str, dict]:
    """The chunk entries of the array at `path` of a ManifestStore, by chunk key."""
    node = store._group
    *groups, name = path.split("/")
    for group in groups:
        node = node.groups[group]
    return node.arrays[name].manifest.dict()


@pytest.mark.parametrize("case", ["hrrr_like", "gefs_like", "ecmwf_like"])
def test_each_grib_message_reads_to_eccodes_values(case) -> None:
    folder = SCAN / "grib"
    store = ours.GRIBParser()(url=(folder / f"{case}.grib2").as_uri(), registry=local_registry())
    messages = json.loads((folder / f"{case}.messages.json").read_text())
    values = np.load(folder / f"{case}.values.npy").reshape(len(messages), -1)
    root = zarr.open_group(store, mode="r", zarr_format=3)
    for n, message in enumerate(messages):
        variable = message["cfVarName"]
        path = f"{variable}/{message['stepType']}/{message['typeOfLevel']}/{variable}"
        found = [key for key, entry in _manifest(store, path).items() if entry.get("offset") == message["offset"]]
        assert len(found) == 1, f"{case}: message {n} is not one chunk of {path}"
        entry = _manifest(store, path)[found[0]]
        assert entry["length"] == message["length"]
        array = root[path]
        block = tuple(int(i) for i in found[0].split("."))
        read = np.asarray(array.blocks[block])
        _same(read.reshape(-1), values[n], f"{case}: {path} {found[0]}")


def test_a_grib_group_opens_in_xarray() -> None:
    store = ours.GRIBParser()(url=(SCAN / "grib" / "hrrr_like.grib2").as_uri(), registry=local_registry())
    messages = json.loads((SCAN / "grib" / "hrrr_like.messages.json").read_text())
    first = messages[0]
    group = f"{first['cfVarName']}/{first['stepType']}/{first['typeOfLevel']}"
    with xr.open_zarr(store, group=group, zarr_format=3, consolidated=False) as ds:
        assert first["cfVarName"] in ds.data_vars
        assert ds[first["cfVarName"]].attrs["GRIB_shortName"] == first["shortName"]
        assert np.isfinite(ds[first["cfVarName"]].values).any()


def _tiff_cases() -> list[tuple[str, dict, int]]:
    cases = json.loads((SCAN / "tiff" / "cases.json").read_text())
    return [(name, level, n) for name, levels in cases.items() for n, level in enumerate(levels)]


@pytest.mark.parametrize(("case", "level", "n"), _tiff_cases())
def test_each_tiff_image_reads_to_rasterios_values(case, level, n) -> None:
    folder = SCAN / "tiff"
    store = ours.TIFFParser()(url=(folder / f"{case}.tif").as_uri(), registry=local_registry())
    root = zarr.open_group(store, mode="r", zarr_format=3)
    # The full resolution at the root, each overview in its group; rasterio's values band first,
    # every 7th row and column (tests/scan/tiff/README.md).
    array = root["band_data" if n == 0 else f"overview_{n}/band_data"]
    read = array[...]
    if array.metadata.dimension_names[0] == "y":
        read = np.moveaxis(read, -1, 0) if read.ndim == 3 else read[np.newaxis]
    expected = np.load(folder / f"{case}.{n}.npy")
    _same(read[:, ::7, ::7], expected.reshape(read[:, ::7, ::7].shape), f"{case}: level {n}")
    assert expected.size == read[:, ::7, ::7].size


def _dmrpp_truths() -> list[tuple[Path, str, Path]]:
    """(sidecar, dataset path, h5py's values) for every truth file of tests/scan/dmrpp."""
    found = []
    for folder in (SCAN / "dmrpp" / "bes", SCAN / "dmrpp" / "written"):
        for sidecar in sorted(folder.glob("*.dmrpp")):
            data = sidecar.with_suffix("")
            for truth in sorted(folder.glob(f"{data.name}.*.npy")):
                found.append((sidecar, truth.name[len(data.name) + 1:-len(".npy")].replace("~", "/"), truth))
    return found


DMRPP_SIDECARS = sorted({sidecar for sidecar, _, _ in _dmrpp_truths()})

# What a sidecar cannot describe, left out by the scan (as crates/kerchunk_scan/tests/dmrpp.rs
# lists): a variable-length string's bytes are pointers into the file's heap.
DMRPP_LEFT_OUT = {
    ("test32v3.nc4.dmrpp", "letter"): "a string without dmrpp:FixedLengthStringArray",
    ("grid_1_2d.h5.dmrpp", "HDFEOS INFORMATION/StructMetadata.0"): "a string without dmrpp:FixedLengthStringArray",
}


@pytest.mark.parametrize("sidecar", DMRPP_SIDECARS, ids=lambda p: p.name)
def test_each_dmrpp_dataset_reads_to_h5pys_values(sidecar) -> None:
    store = ours.DMRPPParser()(url=sidecar.as_uri(), registry=local_registry())
    root = zarr.open_group(store, mode="r", zarr_format=3)
    for candidate, path, truth in _dmrpp_truths():
        if candidate != sidecar:
            continue
        if (sidecar.name, path) in DMRPP_LEFT_OUT:
            assert path not in dict(root.members(max_depth=None)), DMRPP_LEFT_OUT[sidecar.name, path]
            continue
        expected = np.load(truth)
        read = root[path][...]
        if expected.dtype.kind == "S":
            read = read.astype(expected.dtype)
        _same(np.asarray(read), expected, f"{sidecar.name}: {path}")


# The sidecars VirtualiZarr 2.8's DMRPPParser reads right (every dataset h5py's values). On the
# others it fails, or reads other values: fletcher32 before deflate, big-endian data, compact
# data, scalars, strings, enumerations, fill values of absent chunks, groups.
VIRTUALIZARR_DMRPP_RIGHT = {
    "SDS_def_fle.h5.dmrpp", "SDS_shuf_2def_fle.h5.dmrpp", "SDS_shuf_def_fle.h5.dmrpp", "chunked_gzipped_twoD.h5.dmrpp",
    "chunked_shuffled_twoD.h5.dmrpp", "chunked_shufzip_oneD.h5.dmrpp", "chunked_shufzip_twoD.h5.dmrpp",
    "chunked_twoD.h5.dmrpp", "chunked_twoD_uneven.h5.dmrpp", "fill_some_chunks_c_c.h5.dmrpp", "t_float.h5.dmrpp",
    "series0.nc.dmrpp", "series1.nc.dmrpp", "series2.nc.dmrpp",
}

# Attributes VirtualiZarr's DMRPPParser keeps that netCDF hides (HDF5's dimension scales), and the
# sidecar's own record of its making, which ours keeps as a root attribute.
_HDF5_INTERNALS = {"_Netcdf4Coordinates", "_Netcdf4Dimid", "CLASS", "NAME", "REFERENCE_LIST", "DIMENSION_LIST"}


def _reads_right(store, sidecar: Path) -> bool:
    try:
        root = zarr.open_group(store, mode="r", zarr_format=3)
        for candidate, path, truth in _dmrpp_truths():
            if candidate != sidecar or (sidecar.name, path) in DMRPP_LEFT_OUT:
                continue
            expected, read = np.load(truth), root[path][...]
            _same(np.asarray(read.astype(expected.dtype) if expected.dtype.kind == "S" else read), expected, path)
    except Exception:  # VirtualiZarr's failures, of any kind: checked against the list above
        return False
    return True


@pytest.mark.parametrize("sidecar", DMRPP_SIDECARS, ids=lambda p: p.name)
def test_where_virtualizarrs_dmrpp_parser_is_right_the_datasets_are_the_same(sidecar) -> None:
    try:
        their_store = theirs.DMRPPParser()(url=sidecar.as_uri(), registry=local_registry())
    except Exception:  # VirtualiZarr's failures, of any kind: checked against the list above
        their_store = None
    right = their_store is not None and _reads_right(their_store, sidecar)
    assert right == (sidecar.name in VIRTUALIZARR_DMRPP_RIGHT), sidecar.name
    if not right:
        return
    mine = ours.DMRPPParser()(url=sidecar.as_uri(), registry=local_registry())
    with xr.open_zarr(mine, zarr_format=3, consolidated=False) as a, \
            xr.open_zarr(their_store, zarr_format=3, consolidated=False) as b:
        a, b = a.load(), b.load()
        a.attrs.pop("build_dmrpp_metadata", None)
        for variable in b.variables.values():
            variable.attrs = {k: v for k, v in variable.attrs.items() if k not in _HDF5_INTERNALS}
        xr.testing.assert_identical(a, b)
