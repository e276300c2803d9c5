"""kerchunk's API over our scanners (issue 57, first part): `zarrs_kerchunk.kerchunk.hdf.
SingleHdf5ToZarr` and `.netCDF3.NetCDF3ToZarr` against kerchunk 0.2.10's own on the same files.

- the signatures are kerchunk's: the same parameters, in order, with the same defaults;
- for every HDF5 and NetCDF-4 case of the conformance corpus, at three inline thresholds,
  `translate()` gives kerchunk's output: the same keys, metadata equal as parsed JSON, inline
  values equal as bytes, ranges equal;
- for the NetCDF-3 case, the same keys and ranges; kerchunk compresses the arrays it inlines with
  zarr's default compressor (blosc), ours are held raw: their metadata differ by that
  `compressor` only, and their inline values decode to the same bytes (README, "kerchunk's API");
- `out=` is filled, `spec=0` gives the bare references, and arguments that cannot be honoured are
  refused by name."""

from __future__ import annotations

import inspect
import io
from pathlib import Path

import kerchunk.hdf
import kerchunk.netCDF3
import numcodecs
import pytest

from corpus import DATA, reference_value
from zarrs_kerchunk.kerchunk.hdf import SingleHdf5ToZarr
from zarrs_kerchunk.kerchunk.netCDF3 import NetCDF3ToZarr

HDF5 = ["nc4_deflate_shuffle", "nc4_fill_missing", "nc4_scalar_coords_bigendian", "cf_air", "hdf5_contiguous",
        "hdf5_nested_groups"]


def _file(case: str) -> str:
    found = [p for p in (DATA / case).iterdir() if p.suffix in (".nc", ".h5")]
    assert len(found) == 1
    return str(found[0])




@pytest.mark.parametrize(("ours", "theirs"), [(SingleHdf5ToZarr, kerchunk.hdf.SingleHdf5ToZarr),
                                              (NetCDF3ToZarr, kerchunk.netCDF3.NetCDF3ToZarr)])
def test_the_signatures_are_kerchunks(ours, theirs) -> None:
    mine = list(inspect.signature(ours.__init__).parameters.values())
    kerchunks = list(inspect.signature(theirs.__init__).parameters.values())
    assert [(p.name, p.default, p.kind) for p in mine] == [(p.name, p.default, p.kind) for p in kerchunks]


@pytest.mark.parametrize("inline_threshold", [0, 500, 100_000])
@pytest.mark.parametrize("case", HDF5)
def test_single_hdf5_to_zarr_gives_kerchunks_references(case, inline_threshold) -> None:
    path = _file(case)
    ours = SingleHdf5ToZarr(path, inline_threshold=inline_threshold).translate()
    theirs = kerchunk.hdf.SingleHdf5ToZarr(path, inline_threshold=inline_threshold).translate()
    assert ours["version"] == theirs["version"] == 1
    assert sorted(ours["refs"]) == sorted(theirs["refs"])
    for key in theirs["refs"]:
        assert reference_value(ours["refs"][key]) == reference_value(theirs["refs"][key]), key


def test_netcdf3_to_zarr_gives_kerchunks_references_but_raw_inline_arrays() -> None:
    path = _file("netcdf3_classic")
    ours = NetCDF3ToZarr(path).translate()["refs"]
    theirs = kerchunk.netCDF3.NetCDF3ToZarr(path).translate()["refs"]
    assert sorted(ours) == sorted(theirs)
    def parts(key: str) -> tuple[str, str]:
        array, _, name = key.rpartition("/")
        return array, name

    inlined = {parts(key)[0] for key, value in theirs.items() if isinstance(value, str)
               and not parts(key)[1].startswith(".")}
    assert inlined, "the case inlines nothing: the difference is not exercised"
    for key in theirs:
        array, name = parts(key)
        mine, kerchunks = reference_value(ours[key]), reference_value(theirs[key])
        if name == ".zarray" and array in inlined:
            assert kerchunks[1].pop("compressor")["id"] == "blosc" and mine[1].pop("compressor") is None
        elif array in inlined and not name.startswith("."):
            assert mine[1] == numcodecs.Blosc().decode(kerchunks[1]), key
            continue
        assert mine == kerchunks, key


def test_out_spec_and_what_cannot_be_honoured() -> None:
    path = _file("nc4_deflate_shuffle")
    out: dict = {}
    assert SingleHdf5ToZarr(path, out=out).translate()["refs"] is out and "temp/.zarray" in out
    assert "version" not in SingleHdf5ToZarr(path, spec=0).translate()
    with pytest.raises(NotImplementedError, match="vlen_encode='null'"):
        SingleHdf5ToZarr(path, vlen_encode="null")
    with pytest.raises(TypeError, match="give its url="):
        SingleHdf5ToZarr(io.BytesIO(Path(path).read_bytes()))
    with open(path, "rb") as f:
        assert SingleHdf5ToZarr(f, url=path, inline_threshold=0).translate()["refs"]["temp/0.0.0"][0] == path
    with pytest.raises(NotImplementedError, match="max_chunk_size=10"):
        NetCDF3ToZarr(_file("netcdf3_classic"), max_chunk_size=10)


def test_what_the_scan_leaves_out_is_a_warning_as_error_warn_says() -> None:
    """`error="warn"` (kerchunk's default) names each dataset left out and why, as kerchunk warns of
    what it quashes; `"ignore"` leaves them out silently; `"raise"` fails. The datasets are those
    h5py reads as a compound type and a null dataspace."""
    import warnings

    import h5py

    path = str(Path(__file__).resolve().parents[3] / "tests" / "scan" / "hdf5" / "earliest.h5")
    with h5py.File(path) as f:
        assert f["compound"].dtype.names and f["null"].shape is None
    with pytest.warns(UserWarning) as warned:
        refs = SingleHdf5ToZarr(path).translate()["refs"]
    messages = sorted(str(w.message) for w in warned)
    assert [m.split(": ")[1] for m in messages] == ["compound is left out", "null is left out"]
    assert all(m.startswith(f"{path}: ") for m in messages) and "compound type" in messages[0]
    assert not any(key.startswith(("compound/", "null/")) for key in refs)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert SingleHdf5ToZarr(path, error="ignore").translate()["refs"] == refs
    with pytest.raises(ValueError, match="compound"):
        SingleHdf5ToZarr(path, error="raise").translate()


def test_a_pool_forked_after_scanning_scans_too() -> None:
    """kerchunk's users scan a file, then a pool of forked workers scans the rest: a scan through
    the kerchunk API must not start the package's I/O runtime, which a forked child cannot use.
    Run in a fresh interpreter: other tests here start that runtime in this one."""
    import subprocess
    import sys

    script = f"""
import multiprocessing
from zarrs_kerchunk.kerchunk.hdf import SingleHdf5ToZarr
from zarrs_kerchunk.kerchunk.tiff import tiff_to_zarr
path = {_file("nc4_deflate_shuffle")!r}
tiff = {str(Path(__file__).resolve().parents[3] / "tests" / "scan" / "tiff" / "cog_utm.tif")!r}
first = SingleHdf5ToZarr(path).translate()["refs"]
tiff_to_zarr(tiff)
def work(_):
    return SingleHdf5ToZarr(path).translate()["refs"] == first
with multiprocessing.get_context("fork").Pool(2) as pool:
    print(pool.map(work, range(2)))
"""
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[True, True]", done.stderr
