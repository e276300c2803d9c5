"""Combining from Python never gives a silently wrong value: ``tools.scan`` and
``tools.combine`` refuse files and sets packed each their own way, naming the attribute, and
``tools.combine`` reads kerchunk's per-file references (coordinates chunked, compressed,
big-endian, held as ranges, in per-file units) into what xarray's ``open_mfdataset`` reads of
the files themselves (tests/scan/combine, made by its make.py)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import xarray as xr
from conftest import ROOT

from zarrs_kerchunk import InvalidReferencesError, ReferencesNotFoundError, ReferenceStore, tools

COMBINE = ROOT / "tests" / "scan" / "combine"


def iso(values: np.ndarray) -> list[str]:
    return [np.datetime_as_string(value, unit="s") for value in values.ravel()]


@pytest.mark.parametrize("form", ["range", "inline"])
@pytest.mark.parametrize("output", ["combined.json", "combined.parq"])
def test_kerchunk_per_file_references_combine_as_xarray_reads_the_files(tmp_path: Path, form: str, output: str) -> None:
    expected = json.loads((COMBINE / "refsets.expected.json").read_text())
    sets = [COMBINE / f"refsets_{n}.{form}.json" for n in (2, 0, 1)]
    report = tools.combine(sets, tmp_path / output, concat="time")
    assert report["sets"] == [str(s) for s in sets] and report["references"] > 0
    with xr.open_zarr(ReferenceStore(tmp_path / output), zarr_format=2, consolidated=False) as ds:
        assert iso(ds.time.values) == expected["time"]
        assert iso(ds.time_bnds.values) == [t for row in expected["time_bnds"] for t in row]
        assert np.array_equal(ds.t.values, np.array(expected["t"], dtype="f4"))


def test_files_and_sets_packed_each_their_own_way_are_refused(tmp_path: Path) -> None:
    files = [COMBINE / f"packed_{n}.nc" for n in range(2)]
    def refused(suffix: str) -> str:
        return f"cannot combine .*packed_1{suffix}: \"t\": its scale_factor 0.02 differs from .*packed_0{suffix}'s 0.01"

    with pytest.raises(InvalidReferencesError, match=refused(".nc")):
        tools.scan(files, tmp_path / "scanned.json", concat="time")
    sets = []
    for n, file in enumerate(files):
        tools.scan(file, tmp_path / f"packed_{n}.json")
        sets.append(tmp_path / f"packed_{n}.json")
    with pytest.raises(InvalidReferencesError, match=refused(".json")):
        tools.combine(sets, tmp_path / "combined.json", concat="time")
    assert not (tmp_path / "combined.json").exists()


def test_audit_finds_the_packing_a_kerchunk_set_gets_wrong() -> None:
    """kerchunk's MultiZarrToZarr of the packed files keeps the first file's packing: the
    encodings audit reads each file's own header and names the two it decodes wrong."""
    report = tools.audit(COMBINE / "packed.kerchunk.json", encodings=True)
    found = {(Path(t["url"].removeprefix("file://")).name, d["attribute"], d["target"], d["set"])
             for t in report["targets"] for d in t.get("differences", [])}
    assert found == {
        ("packed_1.nc", "scale_factor", "0.02", "0.01"), ("packed_1.nc", "add_offset", "250.0", "273.15"),
        ("packed_2.nc", "scale_factor", "0.005", "0.01"), ("packed_2.nc", "add_offset", "290.0", "273.15"),
    }
    assert [t["status"] for t in report["targets"]] == ["differs", "differs", "agrees"]


def test_a_set_that_cannot_be_opened_is_named(tmp_path: Path) -> None:
    sets = [COMBINE / "refsets_0.range.json", tmp_path / "nope.json"]
    with pytest.raises(ReferencesNotFoundError, match="nope.json"):
        tools.combine(sets, tmp_path / "combined.json", concat="time")
    with pytest.raises(InvalidReferencesError, match="concat"):
        tools.combine([COMBINE / "refsets_0.range.json", COMBINE / "refsets_1.range.json"], tmp_path / "c.json")


def test_sets_are_appended_to_a_combined_set(tmp_path: Path) -> None:
    expected = json.loads((COMBINE / "refsets.expected.json").read_text())
    sets = [COMBINE / f"refsets_{n}.range.json" for n in range(3)]
    out = tmp_path / "combined.parq"
    tools.combine(sets[:2], out, concat="time")
    report = tools.combine(sets[2], out, append_to=out)
    assert report["sets"] == [str(sets[2])] and report["records"]["written"] > 0
    with xr.open_zarr(ReferenceStore(out), zarr_format=2, consolidated=False) as ds:
        assert iso(ds.time.values) == expected["time"]
        assert np.array_equal(ds.t.values, np.array(expected["t"], dtype="f4"))
    with pytest.raises(InvalidReferencesError, match="refsets_1.range.json is in .*combined.parq already"):
        tools.combine(sets[1], out, append_to=out)


def test_a_spread_scan_refuses_files_packed_each_their_own_way(tmp_path: Path) -> None:
    """Scanned over an executor, the files are combined on the caller with the same checks."""
    from concurrent.futures import ThreadPoolExecutor

    files = [COMBINE / f"packed_{n}.nc" for n in range(3)]
    with ThreadPoolExecutor(2) as executor, pytest.raises(
        InvalidReferencesError, match=r'"t": its scale_factor 0.02 differs from .*packed_0.nc\'s 0.01'
    ):
        tools.scan(files, tmp_path / "spread.json", concat="time", executor=executor, jobs=1)
