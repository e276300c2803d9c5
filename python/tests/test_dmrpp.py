"""DMR++ sidecars through tools.scan (tests/scan/dmrpp/written, written by build.py from h5py's
chunk index): files read through the sidecars beside them (their headers destroyed), alone and
combined along time, read by zarr-python through ReferenceStore equal to h5py's and netCDF4's
values (the .npy files); dmrpp="never" and "only" as the command line's --dmrpp."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest
import zarr
from conftest import ROOT

from zarrs_kerchunk import ReferenceStore, tools

WRITTEN = ROOT / "tests" / "scan" / "dmrpp" / "written"


@pytest.fixture
def headless(tmp_path: Path) -> Path:
    """The written pairs, each file's superblock and root group destroyed."""
    for file in WRITTEN.iterdir():
        if file.suffix == ".npy":
            continue
        data = bytearray(file.read_bytes())
        if file.suffix in (".h5", ".nc"):
            data[:800] = b"\xaa" * 800
        (tmp_path / file.name).write_bytes(bytes(data))
    return tmp_path


def test_files_are_read_through_their_sidecars(headless: Path) -> None:
    report = tools.scan(headless / "features.h5", headless / "features.json")
    assert report["files"] == ["features.h5"], report
    group = zarr.open_group(ReferenceStore(headless / "features.json"), mode="r", zarr_format=2)
    for truth in WRITTEN.glob("features.h5.*.npy"):
        path = truth.name.removeprefix("features.h5.").removesuffix(".npy").replace("~", "/")
        expected = np.load(truth)
        got = group[path][...]
        assert got.shape == expected.shape and got.tobytes() == expected.astype(got.dtype).tobytes(), path


def test_sidecars_combine_along_time(headless: Path) -> None:
    expected = np.load(ROOT / "tests" / "scan" / "hdf5" / "series.temp.npy")
    for pattern in ["series?.nc.dmrpp", "series?.nc*"]:
        output = headless / "series.json"
        report = tools.scan(str(headless / pattern), output, concat="time")
        assert len(report["files"]) == 3, report
        got = zarr.open_group(ReferenceStore(output), mode="r", zarr_format=2)["temp"][...]
        assert got.tobytes() == expected.astype(got.dtype).tobytes(), pattern


def test_never_and_only(headless: Path) -> None:
    with pytest.raises(Exception, match="features.h5"):
        tools.scan(headless / "features.h5", headless / "x.json", dmrpp="never")
    alone = headless / "alone.nc"
    shutil.copy(ROOT / "tests" / "scan" / "hdf5" / "series0.nc", alone)
    with pytest.raises(Exception, match="alone.nc.dmrpp.*there is none beside the file"):
        tools.scan(alone, headless / "x.json", dmrpp="only")
    with pytest.raises(ValueError, match='dmrpp="sometimes"'):
        tools.scan(alone, headless / "x.json", dmrpp="sometimes")
