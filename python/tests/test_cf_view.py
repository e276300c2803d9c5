"""The Rust CF view (``crates/zarrs_cf``, through ``zarrs-kerchunk cat --npy``) against xarray's
own CF decoding of the same references, in this virtualenv's pinned xarray and cftime: every
numeric array of every corpus case, bit for bit in xarray's type, dates as the same instants.

One deliberate difference: the view masks values outside ``valid_range``/``valid_min``/
``valid_max`` (as CF and netCDF4-python do) and xarray does not, so xarray's values get that
mask here before comparing."""

from __future__ import annotations

import subprocess
from pathlib import Path

import cftime
import numpy as np
import pytest
import xarray as xr
from conftest import ROOT, cases

from zarrs_kerchunk import ReferenceStore

CASES = [case for case in cases() if "refs.json" in case.references(parquet=False)]
ARRAYS = [
    pytest.param(case, entry, id=f"{case.name}/{entry['path']}")
    for case in CASES
    for entry in case.arrays
    if entry["dtype"][1:2] in ("i", "u", "f", "b") and entry.get("support") == "required"
]


@pytest.fixture(scope="session")
def cli() -> Path:
    """The command line, built (or brought up to date) as the README's test command builds it
    (tests/all.sh runs the workspace's tests first, so this finds it built, with the same
    features: another feature set would build the workspace again)."""
    subprocess.run(["cargo", "test", "--quiet", "--workspace", "--all-features", "--no-run"], cwd=ROOT, check=True,
                   capture_output=True)
    return ROOT / "target" / "debug" / "zarrs-kerchunk"


def xarray_decoded(case, path: str) -> xr.DataArray:
    """xarray's decoding of one variable, through its zarr engine, the others dropped (a corpus
    case may give two variables one dimension name with different lengths)."""
    group, _, name = path.rpartition("/")
    siblings = [e["path"].rpartition("/") for e in case.arrays]
    others = [other for parent, _, other in siblings if parent == group and other != name]
    store = ReferenceStore(case.folder / "refs.json")
    dataset = xr.open_dataset(store, engine="zarr", consolidated=False, zarr_format=2, drop_variables=others,
                              group=group or None, decode_times=xr.coders.CFDatetimeCoder(use_cftime=None))
    return dataset[name]


def iso(value) -> str:
    if isinstance(value, cftime.datetime):
        text = f"{value.year:04d}-{value.month:02d}-{value.day:02d}T{value.hour:02d}:{value.minute:02d}:{value.second:02d}"
        return text + (f".{value.microsecond:06d}".rstrip("0") if value.microsecond else "")
    return "NaT" if np.isnat(value) else str(np.datetime_as_string(value, unit="s"))


@pytest.mark.parametrize(("case", "entry"), ARRAYS)
def test_the_cf_view_is_xarrays_decoding(case, entry, cli: Path, tmp_path: Path) -> None:
    path = entry["path"]
    out = tmp_path / "out.npy"
    subprocess.run([cli, "cat", case.folder / "refs.json", path, "--npy", out], check=True, capture_output=True)
    ours = np.load(out)
    theirs = xarray_decoded(case, path)
    values = theirs.values
    if values.dtype.kind == "M" and ours.dtype.kind == "M":
        assert np.array_equal(ours, values.astype("M8[ns]"), equal_nan=True), (ours, values)
        return
    if values.dtype.kind in "MO":
        texts = [iso(v) for v in values.ravel()]
        assert ours.dtype.kind == "U", ours.dtype
        assert [str(t) if str(t) else "NaT" for t in ours.ravel()] == texts
        return
    attrs = theirs.encoding | theirs.attrs
    if any(name in attrs for name in ("valid_min", "valid_max", "valid_range")):
        raw = np.load(case.folder / entry["expected"])
        low, high = attrs.get("valid_range", (attrs.get("valid_min", -np.inf), attrs.get("valid_max", np.inf)))
        values = np.where((raw < low) | (raw > high), np.nan, values).astype(values.dtype)
    assert ours.dtype == values.dtype.newbyteorder("="), (ours.dtype, values.dtype)
    assert ours.shape == values.shape
    same = (ours == values) | (np.isnan(ours) & np.isnan(values)) if values.dtype.kind == "f" else ours == values
    assert same.all(), (ours[~same][:5], values[~same][:5])
