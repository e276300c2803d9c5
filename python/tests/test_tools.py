"""The tools from Python: stats, audit, pin, convert and scan return plain objects, write
references every reader reads, and raise the exceptions of zarrs_kerchunk.errors."""

from __future__ import annotations

import base64
import json
import shutil
import struct
import subprocess
import sys
from pathlib import Path

import fsspec
import numpy as np
import pytest
import zarr
from fsspec.implementations.reference import LazyReferenceMapper
from conftest import DATA, ROOT, cases, differs
from test_conformance import check

from zarrs_kerchunk import (
    InvalidReferencesError,
    ReferenceReadError,
    ReferencesNotFoundError,
    ReferenceStore,
    tools,
)

SERIES = DATA / "mzz_time_concat" / "refs.json"
SCANNED = ROOT / "tests" / "scan"


def test_stats_count_what_the_references_point_at() -> None:
    stats = tools.stats(SERIES)
    assert {a["path"] for a in stats["arrays"]} == {"lat", "lon", "tas", "time"}
    assert all(t["url"].startswith("file://") for t in stats["targets"])
    assert sum(t["references"] for t in stats["targets"]) == sum(
        a["references"]["range"] + a["references"]["whole"] for a in stats["arrays"]
    ) + stats["other"]["range"] + stats["other"]["whole"]


def test_audit_and_pins_find_a_missing_and_a_short_target(tmp_path: Path) -> None:
    folder = tmp_path / "case"
    shutil.copytree(DATA / "mzz_time_concat", folder)
    report = tools.audit(folder / "refs.json")
    assert {t["status"] for t in report["targets"]} == {"ok"}
    pins, report = tools.pin(folder / "refs.json")
    assert len(pins["targets"]) == len(report["targets"]) > 0
    (folder / "day2.nc").unlink()
    day3 = (folder / "day3.nc").read_bytes()
    (folder / "day3.nc").write_bytes(day3[:64])
    statuses = {Path(t["url"]).name: t["status"] for t in tools.audit(folder / "refs.json")["targets"]}
    assert (statuses["day1.nc"], statuses["day2.nc"], statuses["day3.nc"]) == ("ok", "missing", "short"), statuses
    # The pins refuse the changed file at read time, naming it.
    pins_file = tmp_path / "pins.json"
    pins_file.write_text(json.dumps(pins))
    (folder / "day2.nc").write_bytes(day3)
    store = ReferenceStore(folder / "refs.json", pins=str(pins_file))
    with pytest.raises(ReferenceReadError, match="day[23].nc: the target changed since it was pinned"):
        zarr.open_group(store, mode="r", zarr_format=2)["tas"][...]


@pytest.mark.parametrize("case", cases(), ids=lambda c: c.name)
def test_convert_writes_what_reads_exactly(case, tmp_path: Path) -> None:
    source = case.folder / case.references()[0]
    for name, kwargs in [("v1.json", {}), ("t.json", {"url_templates": True}), ("v0.json.zst", {"version": 0}),
                         ("r.parq", {"record_size": 7, "paths": "plain"}), ("d.parq", {"paths": "dictionary"})]:
        # Relative URLs resolve against the written file's folder: write beside the targets.
        output = case.folder / f".written-{name}"
        try:
            assert tools.convert(source, output, **kwargs) > 0
            assert check(case, ReferenceStore(output)) == [], name
        finally:
            shutil.rmtree(output, ignore_errors=True) if output.is_dir() else output.unlink(missing_ok=True)


def test_convert_commits_into_an_icechunk_repository(tmp_path: Path) -> None:
    """`tools.convert` to `icechunk://PATH` creates the repository, commits, and commits again on
    the same branch; what it committed is reported. (Reading the repositories back, through
    icechunk-python, is tests/icechunk/run.sh's: icechunk-python needs Python 3.12.)"""
    case = DATA / "nc4_deflate_shuffle"
    arrays = json.loads((case / "case.json").read_text())["arrays"]
    first = tools.convert(case / "refs.json", f"icechunk://{tmp_path / 'repo'}", message="first")
    assert (first["branch"], first["arrays"], first["inline_chunks"]) == ("main", len(arrays), 0), first
    # Every chunk of the grid the case lists as neither missing nor inline.
    assert first["virtual_chunks"] == sum(
        a["n_chunks_grid"] - a["n_missing_chunks"] - len(a["inline_chunks"]) for a in arrays)
    assert first["containers"] == [case.resolve().as_uri() + "/"]
    second = tools.convert(ReferenceStore(case / "refs.json"), f"icechunk://{tmp_path / 'repo'}@main")
    assert second["snapshot"] != first["snapshot"]


@pytest.mark.parametrize("case", cases(), ids=lambda c: c.name)
def test_an_icechunk_repository_opens_as_the_references_it_was_made_from(case, tmp_path: Path) -> None:
    """Every conformance case committed into a repository and opened back as references
    (`ReferenceStore("icechunk://PATH")`) reads exactly the case's ground truth, as the
    references did."""
    tools.convert(case.folder / case.references()[0], f"icechunk://{tmp_path / 'repo'}")
    assert check(case, ReferenceStore(f"icechunk://{tmp_path / 'repo'}@main")) == []


@pytest.mark.parametrize("case", ["nc4_deflate_shuffle", "inline_mixed"])
def test_a_repository_written_in_parts_reads_the_same(case, tmp_path: Path) -> None:
    """`manifest_split` and `commit_every` reach the export: with every chunk in a manifest of its
    own and a commit a chunk, the repository opened back as references reads the case's ground
    truth. (That the working branch goes is the Rust tests'.)"""
    case = next(c for c in cases() if c.name == case)
    repo = tmp_path / "repo"
    report = tools.convert(
        case.folder / case.references()[0], f"icechunk://{repo}", manifest_split=1, commit_every=1
    )
    assert report["branch"] == "main", report
    assert check(case, ReferenceStore(f"icechunk://{repo}@main")) == []


def test_a_missing_repository_is_not_found(tmp_path: Path) -> None:
    with pytest.raises(ReferencesNotFoundError, match="no icechunk repository"):
        ReferenceStore(f"icechunk://{tmp_path / 'nothing'}")


def test_convert_refuses_what_icechunk_cannot_hold_naming_it(tmp_path: Path) -> None:
    """An empty chunk ([url, 0, 0]) is an error naming its key, outside OSError's family (zarr would
    take an OSError's subclass FileNotFoundError for a missing key)."""
    target = tmp_path / "data.bin"
    target.write_bytes(b"\x01\x00\x02\x00")
    refs = {".zgroup": '{"zarr_format": 2}',
            "a/.zarray": json.dumps({"zarr_format": 2, "shape": [4], "chunks": [2], "dtype": "<u2",
                                     "compressor": None, "fill_value": 0, "order": "C", "filters": None}),
            "a/0": [str(target), 0, 4], "a/1": [str(target), 0, 0]}
    (tmp_path / "refs.json").write_text(json.dumps({"version": 1, "refs": refs}))
    with pytest.raises(InvalidReferencesError, match='"a/1".*empty chunk') as raised:
        tools.convert(tmp_path / "refs.json", f"icechunk://{tmp_path / 'repo'}")
    assert not isinstance(raised.value, OSError)


def _generated_reference(k: int) -> str | list | None:
    """The `k`th chunk's reference in a generated set: missing, inline or a range, by k % 10."""
    kind = k % 10
    if kind == 0:
        return None
    if kind == 1:
        return "base64:" + base64.b64encode(struct.pack("<I", k)).decode()
    return [f"s3://bucket/file{kind}.bin", k * 4, 4]


def test_a_million_references_written_as_parquet_read_in_fsspec(tmp_path: Path) -> None:
    """10^6 generated references through our parquet writer, each read back by fsspec's own
    LazyReferenceMapper and compared with the formula that made it (not with our reader)."""
    n = 1000
    zarray = {"shape": [n, n], "chunks": [1, 1], "dtype": "<f4", "compressor": None, "filters": None,
              "fill_value": "NaN", "order": "C", "zarr_format": 2}
    refs = {".zgroup": '{"zarr_format":2}', "a/.zarray": json.dumps(zarray)}
    refs.update((f"a/{k // n}.{k % n}", ref) for k in range(n * n) if (ref := _generated_reference(k)) is not None)
    (tmp_path / "refs.json").write_text(json.dumps({"version": 1, "refs": refs}))
    assert tools.convert(tmp_path / "refs.json", tmp_path / "refs.parq") == len(refs) - 2
    lazy = LazyReferenceMapper(str(tmp_path / "refs.parq"), fs=fsspec.filesystem("file"))
    wrong = []
    for k in range(n * n):
        try:
            got = lazy[f"a/{k // n}.{k % n}"]
        except KeyError:
            got = None
        if isinstance(got, bytes):
            got = "base64:" + base64.b64encode(got).decode()
        if got is not None and not isinstance(got, str):
            got = list(got)
        if got != _generated_reference(k) and len(wrong) < 5:
            wrong.append((k, got, _generated_reference(k)))
    assert wrong == []


# What references cannot express, and the scan leaves out by name: nothing else may be.
LEFT_OUT = {
    "netcdf3/cdf5.nc": {},
    "hdf5/latest.h5": {"compound": "a compound type", "null": "a null dataspace"},
    "hdf5/netcdf4.nc": {},
}


def test_scan_makes_references_equal_to_the_files(tmp_path: Path) -> None:
    for name, left_out in LEFT_OUT.items():
        file = SCANNED / name
        copy = tmp_path / file.name
        shutil.copy(file, copy)
        report = tools.scan(copy, tmp_path / f"{file.name}.json")
        assert report["files"] == [file.name] and report["requests"] >= 1
        group = zarr.open_group(ReferenceStore(tmp_path / f"{file.name}.json"), mode="r", zarr_format=2)
        skipped = {s["path"]: s["reason"] for s in report["skipped"]}
        assert sorted(skipped) == sorted(left_out), f"{name}: {skipped}"
        assert all(skipped[path].startswith(reason) for path, reason in left_out.items()), skipped
        group_arrays = {path for path, _ in group.arrays()}
        assert not group_arrays & set(left_out), f"{name}: {group_arrays & set(left_out)} is left out"
        # The ground truth beside each file: <name>.<variable>.npy (NetCDF-3: <stem>.<variable>.npy).
        stem = file.name if file.suffix == ".h5" or "hdf5" in name else file.stem
        truths = sorted(file.parent.glob(f"{stem}.*.npy"))
        checked = 0
        for truth in truths:
            path = truth.name[len(stem) + 1 : -len(".npy")].replace("~", "/")
            expected = np.load(truth)
            got = np.asarray(group[path][...])
            assert differs(got, expected) is None, path
            checked += 1
        # Every truth is of an array the scan references (those left out have none).
        assert checked == len(truths) > 0, name


def test_scan_combines_a_series(tmp_path: Path) -> None:
    for file in (SCANNED / "hdf5").glob("series*.nc"):
        shutil.copy(file, tmp_path)
    report = tools.scan(str(tmp_path / "series*.nc"), tmp_path / "series.parq", concat="time")
    assert report["files"] == ["series0.nc", "series1.nc", "series2.nc"]
    group = zarr.open_group(ReferenceStore(tmp_path / "series.parq"), mode="r", zarr_format=2)
    # netCDF4's values of the three files' temp, concatenated by the script that wrote them.
    expected = np.load(SCANNED / "hdf5" / "series.temp.npy")
    assert np.array_equal(group["temp"][...], expected)
    times = group["time"][...]
    assert times.shape == expected.shape[:1] and np.all(np.diff(times) > 0), times


def test_scan_takes_a_member_from_file_names(tmp_path: Path) -> None:
    """Members only in the file names (tests/scan/combine/members_m*.nc) become a new first
    dimension, ordered as numbers; values as open_mfdataset gives them (members.expected.json)."""
    combine = SCANNED / "combine"
    for file in combine.glob("members_m*.nc"):
        shutil.copy(file, tmp_path)
    tools.scan(str(tmp_path / "members_m*.nc"), tmp_path / "members.json", coords={"member": r"name:_m(\d+)\.nc$"})
    expected = json.loads((combine / "members.expected.json").read_text())
    group = zarr.open_group(ReferenceStore(tmp_path / "members.json"), mode="r", zarr_format=2)
    assert group["member"][...].tolist() == expected["member"]
    assert np.array_equal(group["t"][...], np.array(expected["t"], dtype="f4"))
    with pytest.raises(InvalidReferencesError, match="no coordinate array"):
        tools.scan(str(tmp_path / "members_m*.nc"), tmp_path / "x.json", concat="time", coords={"member": "data"})


def test_scan_combines_members_by_name_and_times_by_data(tmp_path: Path) -> None:
    """Two dimensions: members in the names (outer) × times in the data (inner), read as
    open_mfdataset nested along ["member", "time"] gives them (ens.expected.json)."""
    combine = SCANNED / "combine"
    for file in combine.glob("ens_m*.nc"):
        shutil.copy(file, tmp_path)
    tools.scan(str(tmp_path / "ens_m*.nc"), tmp_path / "ens.json", concat=["time"], coords={"member": r"name:_m(\d+)_"})
    expected = json.loads((combine / "ens.expected.json").read_text())
    group = zarr.open_group(ReferenceStore(tmp_path / "ens.json"), mode="r", zarr_format=2)
    assert group["member"][...].tolist() == expected["member"]
    assert np.array_equal(group["t"][...], np.array(expected["t"], dtype="f4"))


@pytest.mark.parametrize(("spread", "combine_memory"), [(False, 64), (False, 0), (True, 0)],
                         ids=["held", "on-disk", "spread"])
def test_scan_combines_members_and_times_both_in_the_data(tmp_path: Path, spread: bool, combine_memory: int) -> None:
    """Two dimensions, both in the files' coordinates (one member a file), with no ``coords``:
    read as open_mfdataset(combine="by_coords") reads them (ensdata.expected.json), whether each
    file's chunks wait in memory or on disk, and scanned here or by a pool's threads."""
    from concurrent.futures import ThreadPoolExecutor

    combine = SCANNED / "combine"
    for file in combine.glob("ensdata_m*.nc"):
        shutil.copy(file, tmp_path)
    with ThreadPoolExecutor(2) as pool:
        tools.scan(str(tmp_path / "ensdata_m*.nc"), tmp_path / "ensdata.json", concat=["time", "member"],
                   combine_memory=combine_memory, jobs=1, executor=pool if spread else None)
    expected = json.loads((combine / "ensdata.expected.json").read_text())
    group = zarr.open_group(ReferenceStore(tmp_path / "ensdata.json"), mode="r", zarr_format=2)
    assert group["member"][...].tolist() == expected["member"]
    assert np.array_equal(group["t"][...], np.array(expected["t"], dtype="f4"))


def test_scan_merges_files_of_one_variable_each(tmp_path: Path) -> None:
    """merge=True: both variables of merged_t.nc and merged_rh.nc, as xarray's merge gives them."""
    combine = SCANNED / "combine"
    files = [combine / "merged_t.nc", combine / "merged_rh.nc"]
    for file in files:
        shutil.copy(file, tmp_path)
    tools.scan([tmp_path / f.name for f in files], tmp_path / "merged.json", merge=True)
    expected = json.loads((combine / "merged.expected.json").read_text())
    group = zarr.open_group(ReferenceStore(tmp_path / "merged.json"), mode="r", zarr_format=2)
    for name in ["t", "rh", "x"]:
        assert np.array_equal(group[name][...], np.array(expected[name], dtype="f4")), name


def test_scan_splits_chunks_as_kerchunks_subchunk(tmp_path: Path) -> None:
    source = SCANNED / "hdf5" / "earliest.h5"
    shutil.copy(source, tmp_path)
    out = tmp_path / "split.json"
    tools.scan(tmp_path / "earliest.h5", out, inline_threshold=0, subchunk={"contiguous": 3})
    array = zarr.open_group(ReferenceStore(out), mode="r", zarr_format=2)["contiguous"]
    assert array.chunks == (1, 4)
    assert differs(np.asarray(array[...]), np.load(SCANNED / "hdf5" / "earliest.h5.contiguous.npy")) is None
    with pytest.raises(InvalidReferencesError, match="cannot split \"contiguous\" into 2 chunks"):
        tools.scan(tmp_path / "earliest.h5", out, inline_threshold=0, subchunk={"contiguous": 2})


def test_errors_say_what_went_wrong(tmp_path: Path) -> None:
    with pytest.raises(ReferencesNotFoundError, match="nope.json"):
        tools.stats(tmp_path / "nope.json")
    with pytest.raises(ReferencesNotFoundError, match="no file matches"):
        tools.scan(str(tmp_path / "none" / "*.nc"), tmp_path / "out.json")
    (tmp_path / "notes.txt").write_text("not a NetCDF file")
    with pytest.raises(InvalidReferencesError, match="notes.txt"):
        tools.scan(tmp_path / "notes.txt", tmp_path / "out.json")
    with pytest.raises(InvalidReferencesError, match="concat"):
        tools.scan([SCANNED / "hdf5/series0.nc", SCANNED / "hdf5/series1.nc"], tmp_path / "out.json")
    (tmp_path / "broken.json").write_text('{"version": 1, "refs": [')
    with pytest.raises(InvalidReferencesError, match="broken.json"):
        tools.stats(tmp_path / "broken.json")
    with pytest.raises(ValueError, match="version"):
        tools.convert(SERIES, tmp_path / "x.json", version=3)
    # The access policy: every target outside the allowed prefixes is refused, by name.
    audit = tools.audit(SERIES, allowed_prefixes=["s3://elsewhere/"])
    assert audit["targets"] and {t["status"] for t in audit["targets"]} == {"refused"}
    assert all("outside the allowed prefixes (s3://elsewhere/)" in t["error"] for t in audit["targets"])


def test_scan_appends_to_a_combined_set(tmp_path: Path) -> None:
    """A set made from one file of mixed_units, then appended to with the others in the order
    of their dates, reads the times open_mfdataset gives for all four (mixed_units.expected.json);
    a file appended twice is an error, or left out with skip_existing."""
    combine = SCANNED / "combine"
    for n in range(4):
        shutil.copy(combine / f"mixed_units_{n}.nc", tmp_path)
    refs = tmp_path / "series.json"
    tools.scan(tmp_path / "mixed_units_0.nc", refs, concat="time")
    for n in [2, 1, 3]:
        tools.scan(tmp_path / f"mixed_units_{n}.nc", refs, append_to=refs)
    expected = json.loads((combine / "mixed_units.expected.json").read_text())
    group = zarr.open_group(ReferenceStore(refs), mode="r", zarr_format=2)
    assert np.array_equal(group["t"][...], np.array(expected["t"], dtype="f4"))
    with pytest.raises(InvalidReferencesError, match="already"):
        tools.scan(tmp_path / "mixed_units_2.nc", refs, append_to=refs)
    tools.scan(tmp_path / "mixed_units_2.nc", refs, append_to=refs, skip_existing=True)
    assert zarr.open_group(ReferenceStore(refs), mode="r", zarr_format=2)["t"].shape == group["t"].shape


@pytest.mark.parametrize("spread", [False, True], ids=["here", "pool"])
def test_scan_appends_a_time_to_every_member(tmp_path: Path, spread: bool) -> None:
    """A set of members (from the names) × times made from each member's first file, then
    appended to with each member's second (no concat or coords repeated, the new files scanned
    here or by a pool's threads), reads what open_mfdataset gives for all four
    (ens.expected.json); one member's file alone is an error, as the members would differ."""
    from concurrent.futures import ThreadPoolExecutor

    combine = SCANNED / "combine"
    for file in combine.glob("ens_m*.nc"):
        shutil.copy(file, tmp_path)
    refs = tmp_path / "ens.parq"
    tools.scan([tmp_path / "ens_m7_0.nc", tmp_path / "ens_m2_0.nc"], refs, concat="time",
               coords={"member": r"name:_m(\d+)_"})
    with ThreadPoolExecutor(2) as pool:
        executor = pool if spread else None
        with pytest.raises(InvalidReferencesError, match="differ"):
            tools.scan(tmp_path / "ens_m2_1.nc", refs, append_to=refs, executor=executor)
        tools.scan([tmp_path / "ens_m2_1.nc", tmp_path / "ens_m7_1.nc"], refs, append_to=refs, jobs=1,
                   executor=executor)
    expected = json.loads((combine / "ens.expected.json").read_text())
    group = zarr.open_group(ReferenceStore(refs), mode="r", zarr_format=2)
    assert group["member"][...].tolist() == expected["member"]
    assert np.array_equal(group["t"][...], np.array(expected["t"], dtype="f4"))


@pytest.mark.parametrize("spread", [False, True], ids=["here", "pool"])
def test_scan_appends_a_member_at_every_time(tmp_path: Path, spread: bool) -> None:
    """A set of members × times, members from the data, made from member 2's two files, then
    appended to with member 7's two (scanned here or by a pool's threads), reads what
    open_mfdataset gives for all four (ensdata.expected.json); member 7's first file alone is
    an error naming both dimensions, as its times differ from the set's too."""
    from concurrent.futures import ThreadPoolExecutor

    combine = SCANNED / "combine"
    for file in combine.glob("ensdata_m*.nc"):
        shutil.copy(file, tmp_path)
    refs = tmp_path / "ensdata.json"
    tools.scan([tmp_path / "ensdata_m2_0.nc", tmp_path / "ensdata_m2_1.nc"], refs, concat=["time", "member"])
    with ThreadPoolExecutor(2) as pool:
        executor = pool if spread else None
        with pytest.raises(InvalidReferencesError, match="along time and member"):
            tools.scan(tmp_path / "ensdata_m7_0.nc", refs, append_to=refs, executor=executor)
        tools.scan([tmp_path / "ensdata_m7_1.nc", tmp_path / "ensdata_m7_0.nc"], refs, append_to=refs,
                   executor=executor)
    expected = json.loads((combine / "ensdata.expected.json").read_text())
    group = zarr.open_group(ReferenceStore(refs), mode="r", zarr_format=2)
    assert group["member"][...].tolist() == expected["member"]
    assert np.array_equal(group["t"][...], np.array(expected["t"], dtype="f4"))


def test_appending_to_a_parquet_root_writes_only_the_records_that_change(tmp_path: Path) -> None:
    """A parquet root of three rows a record, appended to in place: `t` has one chunk a time, so
    its records 0 and 1 are whole before and after the third file (2020-01-03) comes; their
    files are left as they were, and the root reads open_mfdataset's times and values."""
    combine = SCANNED / "combine"
    for n in range(3):
        shutil.copy(combine / f"mixed_units_{n}.nc", tmp_path)
    root = tmp_path / "series.parq"
    tools.scan([tmp_path / "mixed_units_0.nc", tmp_path / "mixed_units_2.nc"], root, concat="time",
               inline_threshold=0, record_size=3)
    kept = {name: (root / name).read_bytes() for name in ["t/refs.0.parq", "t/refs.1.parq", "x/refs.0.parq"]}
    report = tools.scan(tmp_path / "mixed_units_1.nc", root, append_to=root, inline_threshold=0)
    assert report["records"]["unchanged"] == len(kept) and report["records"]["removed"] == 0, report
    for name, before in kept.items():
        assert (root / name).read_bytes() == before, name
    expected = json.loads((combine / "mixed_units.expected.json").read_text())
    group = zarr.open_group(ReferenceStore(root), mode="r", zarr_format=2)
    assert np.array_equal(group["t"][...], np.array(expected["t"][:12], dtype="f4"))
    import xarray as xr

    times = xr.open_dataset(ReferenceStore(root), engine="zarr", consolidated=False, zarr_format=2)["time"].values
    assert times.tolist() == np.array(expected["time"][:12], dtype="datetime64[ns]").tolist()


def test_a_spread_scan_sets_chunks_aside_on_disk_unless_told() -> None:
    """combine_memory: 64 MiB on one machine, none with an executor, as given if given."""
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(1) as pool:
        assert tools._combine_memory(None, pool) == 0
        assert tools._combine_memory(16, pool) == 16
    assert tools._combine_memory(None, None) == 64
    assert tools._combine_memory(0, None) == 0


def test_scan_spreads_over_a_process_pool(tmp_path: Path) -> None:
    """tools.scan(executor=ProcessPoolExecutor(2)) writes what the scan on one machine writes.
    Spawned workers: a child forked after this process started its I/O runtime refuses to use it."""
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    combine = SCANNED / "combine"
    for n in range(4):
        shutil.copy(combine / f"mixed_units_{n}.nc", tmp_path)
    pattern = str(tmp_path / "mixed_units_*.nc")
    tools.scan(pattern, tmp_path / "here.json", concat="time")
    # With no memory for the combined chunks, every file's wait on disk: the same set. Spread,
    # that is the default; held in memory, the same again.
    tools.scan(pattern, tmp_path / "here-disk.json", concat="time", combine_memory=0)
    with ProcessPoolExecutor(2, mp_context=multiprocessing.get_context("spawn")) as pool:
        tools.scan(pattern, tmp_path / "spread.json", concat="time", jobs=1, executor=pool)
        tools.scan(pattern, tmp_path / "spread.parq", concat="time", jobs=1, executor=pool)
        tools.scan(pattern, tmp_path / "spread-held.json", concat="time", jobs=1, combine_memory=64, executor=pool)
    here = json.loads((tmp_path / "here.json").read_text())
    for written in ["spread.json", "here-disk.json", "spread-held.json"]:
        assert json.loads((tmp_path / written).read_text()) == here, written
    # Set aside share by share and read back as written: what open_mfdataset reads, JSON and parquet.
    import xarray as xr

    expected = json.loads((combine / "mixed_units.expected.json").read_text())
    for written in ["spread.json", "spread.parq", "spread-held.json"]:
        ds = xr.open_dataset(ReferenceStore(tmp_path / written), engine="zarr", consolidated=False, zarr_format=2)
        assert ds["time"].values.tolist() == np.array(expected["time"], dtype="datetime64[ns]").tolist(), written
        assert np.array_equal(ds["t"].values, np.array(expected["t"], dtype="f4")), written


def test_a_spread_scan_makes_at_most_four_tasks_a_worker() -> None:
    """Shares of ``jobs`` files, grown where they would make more than four tasks a worker: a Dask
    client's threads, or 16 workers for an executor that cannot say."""
    from concurrent.futures import ThreadPoolExecutor

    from zarrs_kerchunk.tools import _share_size

    class Client:
        def nthreads(self) -> dict[str, int]:
            return {"tcp://a": 1, "tcp://b": 1}

    assert _share_size(Client(), 10_000, 16) == 1_250
    assert _share_size(Client(), 20, 16) == 16
    assert _share_size(Client(), 20, 1) == 3
    with ThreadPoolExecutor(2) as pool:
        assert _share_size(pool, 10_000, 16) == 157
        assert _share_size(pool, 3, 1) == 1


class _Swapped:
    """An executor run in this process whose futures hand back each other's results: a spread
    scan's shares out of the order of the files."""

    def __init__(self) -> None:
        self.calls: list = []

    def submit(self, fn, *args):
        self.calls.append((fn, args))
        return _SwappedFuture(self, len(self.calls) - 1)


class _SwappedFuture:
    def __init__(self, executor: _Swapped, index: int) -> None:
        self.executor, self.index = executor, index

    def result(self):
        fn, args = self.executor.calls[(self.index + 1) % len(self.executor.calls)]
        return fn(*args)


def test_shares_out_of_order_are_an_error_naming_the_files(tmp_path: Path) -> None:
    """A share whose files are not the next ones (an executor that mixes its results up) is an
    InvalidReferencesError naming the file that came and the one expected, and nothing is written."""
    combine = SCANNED / "combine"
    for n in range(4):
        shutil.copy(combine / f"mixed_units_{n}.nc", tmp_path)
    with pytest.raises(InvalidReferencesError, match=r"mixed_units_1\.nc where .*mixed_units_0\.nc comes next"):
        tools.scan(str(tmp_path / "mixed_units_*.nc"), tmp_path / "out.json", concat="time", jobs=1, executor=_Swapped())
    assert not (tmp_path / "out.json").exists()


def test_the_tools_import_without_zarr() -> None:
    """Importing the package for its tools (a spread scan's client) leaves zarr unimported, and
    ReferenceStore is still the package's, imported when first asked for."""
    check = (
        "import sys; import zarrs_kerchunk; from zarrs_kerchunk import tools; "
        "assert 'zarr' not in sys.modules, 'zarr was imported'; "
        "from zarrs_kerchunk import ReferenceStore; import zarrs_kerchunk.store as store; "
        "assert ReferenceStore is store.ReferenceStore is zarrs_kerchunk.ReferenceStore"
    )
    subprocess.run([sys.executable, "-c", check], check=True)


class _Damaging:
    """An executor run in this process whose futures hand back each share damaged by ``damage``
    (its files' URLs and packed references in, the same out)."""

    def __init__(self, damage) -> None:
        self.damage = damage

    def submit(self, fn, *args):
        (urls, packed), report = fn(*args)
        return _Done((self.damage(urls, packed), report))


class _Done:
    def __init__(self, value) -> None:
        self.value = value

    def result(self):
        return self.value


@pytest.mark.parametrize("whole", [False, True], ids=["set-aside", "whole"])
def test_a_damaged_share_is_an_error_and_nothing_is_written(tmp_path: Path, whole: bool) -> None:
    """A share whose packed references were cut short, or hold fewer files than it names, is an
    InvalidReferencesError saying so (naming the file where one is missing), whether the shares
    are set aside as they come (mixed_units along time) or combined whole (the same files but
    the first appended to the set of the first), and nothing is written; unharmed, the same
    shares combine."""
    for file in (SCANNED / "combine").glob("mixed_units_*.nc"):
        shutil.copy(file, tmp_path)
    out = tmp_path / "out.json"
    if whole:
        tools.scan(tmp_path / "mixed_units_0.nc", out, concat="time")
        files, options = [str(tmp_path / f"mixed_units_{n}.nc") for n in (1, 2, 3)], {"append_to": out}
    else:
        files, options = str(tmp_path / "mixed_units_*.nc"), {"concat": "time"}
    before = out.read_bytes() if whole else None
    options = options | {"jobs": 2}

    def cut(urls, packed):
        return urls, packed[: len(packed) // 2]

    def one_more(urls, packed):
        return [*urls, "extra.nc"], packed

    with pytest.raises(InvalidReferencesError, match="packed references"):
        tools.scan(files, out, executor=_Damaging(cut), **options)
    with pytest.raises(InvalidReferencesError, match=r"extra\.nc|no more files"):
        tools.scan(files, out, executor=_Damaging(one_more), **options)
    assert (out.read_bytes() if out.exists() else None) == before
    tools.scan(files, out, executor=_Damaging(lambda urls, packed: (urls, packed)), **options)
    assert out.exists() and out.read_bytes() != before


def test_an_append_spreads_over_a_process_pool(tmp_path: Path) -> None:
    """tools.scan(append_to=..., executor=...) on a parquet root made from the first file of
    mixed_units: the other three, scanned by two spawned workers, are appended as the root
    records (no concat given), its kept records untouched; it reads open_mfdataset's times and
    values for all four, and a file it has is an error."""
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    combine = SCANNED / "combine"
    for n in range(4):
        shutil.copy(combine / f"mixed_units_{n}.nc", tmp_path)
    root = tmp_path / "series.parq"
    tools.scan(tmp_path / "mixed_units_0.nc", root, concat="time", inline_threshold=0, record_size=3)
    first = (root / "t/refs.0.parq").read_bytes()
    new = [tmp_path / f"mixed_units_{n}.nc" for n in (1, 2, 3)]
    with ProcessPoolExecutor(2, mp_context=multiprocessing.get_context("spawn")) as pool:
        report = tools.scan(new, root, append_to=root, inline_threshold=0, jobs=1, executor=pool)
        assert report["records"]["unchanged"] >= 1 and (root / "t/refs.0.parq").read_bytes() == first, report
        with pytest.raises(InvalidReferencesError, match="already"):
            tools.scan(new[0], root, append_to=root, executor=pool)
    expected = json.loads((combine / "mixed_units.expected.json").read_text())
    group = zarr.open_group(ReferenceStore(root), mode="r", zarr_format=2)
    assert np.array_equal(group["t"][...], np.array(expected["t"], dtype="f4"))
    import xarray as xr

    times = xr.open_dataset(ReferenceStore(root), engine="zarr", consolidated=False, zarr_format=2)["time"].values
    assert times.tolist() == np.array(expected["time"], dtype="datetime64[ns]").tolist()
