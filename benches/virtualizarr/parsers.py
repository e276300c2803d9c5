#!/usr/bin/env python3
"""Issue 57's measurements, side by side in one process: VirtualiZarr's HDFParser against ours
(`zarrs_kerchunk.virtualizarr.HDFParser`) on the 100 NetCDF-4 files of
`benches/scan/make_series.py FOLDER netcdf4`, and kerchunk's SingleHdf5ToZarr against ours
(`zarrs_kerchunk.kerchunk.hdf`). Each workload runs ROUNDS times, alternating, after a warm-up
pass of each (the page cache warm); the median wall time is printed.

- `parse`: each parser called on every file, one after another (`parser(url=, registry=)`);
- `mfdataset`: `open_virtual_mfdataset` over the 100 files with each parser, combined along time
  (VirtualiZarr's own combining, the same for both);
- `translate`: `SingleHdf5ToZarr(path).translate()` on every file;
- `combine`: `MultiZarrToZarr(refs, concat_dims=["time"], coo_map={"time": "cf:time"}).translate()`
  over kerchunk's per-file references of the 100 files (made once, before timing), each side given
  its own copy.

- `scan_grib` (given GRIB, a file of `benches/scan/make_grib.py`: 120 messages on HRRR's grid):
  `scan_grib(GRIB)` (kerchunk's opens every message with eccodes and cfgrib);
- `grib_tree`: `grib_tree(scan_grib(GRIB))`.

- `tiff_to_zarr`: `tiff_to_zarr(path)` on every TIFF and COG of `tests/codecs/tiff` and
  `tests/scan/tiff` (62 files, one after another);
- `tiff_to_zarr` of a COG (given COG, `benches/scan/make_cog.py`'s 10 000 x 10 000 COG).

Needs VirtualiZarr 2.8, kerchunk 0.2.10 (with cfgrib for the GRIB workloads) and the package built
with --release (Python 3.12).

    python benches/virtualizarr/parsers.py FOLDER [ROUNDS [WORKLOADS [GRIB [COG]]]]   (WORKLOADS: "0,3", by number)
"""

import statistics
import sys
import time
import warnings

warnings.simplefilter("ignore")

import copy
import functools
import json
from pathlib import Path

import kerchunk.combine
import kerchunk.hdf
import kerchunk.tiff
from obspec_utils.registry import ObjectStoreRegistry
from obstore.store import LocalStore
from virtualizarr import open_virtual_mfdataset
from virtualizarr.parsers import HDFParser as TheirHDFParser

import zarrs_kerchunk.kerchunk.combine
import zarrs_kerchunk.kerchunk.grib2
import zarrs_kerchunk.kerchunk.hdf
import zarrs_kerchunk.kerchunk.tiff
from zarrs_kerchunk.virtualizarr import HDFParser as OurHDFParser

folder = sys.argv[1].rstrip("/")
rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 3
paths = [f"{folder}/f{n:03d}.nc" for n in range(100)]
urls = [f"file://{path}" for path in paths]
registry = ObjectStoreRegistry({"file://": LocalStore()})


def parse(parser_class):
    parser = parser_class()
    for url in urls:
        parser(url=url, registry=registry)


def mfdataset(parser_class):
    open_virtual_mfdataset(urls, registry=registry, parser=parser_class(), concat_dim="time", combine="nested",
                           coords="minimal", compat="override", data_vars="minimal", loadable_variables=[])


def translate(module):
    for path in paths:
        module.SingleHdf5ToZarr(path).translate()


@functools.cache
def singles():
    """kerchunk's per-file references, made once, when the workload that combines them first asks:
    held from the start, their 50 000 objects made each full garbage collection in the other
    workloads' runs 40 ms longer (`gc.collect()` 0.05 s without them, 0.09 s with), on whichever
    side's run set it off."""
    return [json.loads(json.dumps(kerchunk.hdf.SingleHdf5ToZarr(path).translate())) for path in paths]


def combine(module, references):
    module.MultiZarrToZarr(references, concat_dims=["time"], coo_map={"time": "cf:time"}).translate()


def kerchunk_grib2():
    """kerchunk's GRIB module, imported only where it is measured (it needs cfgrib)."""
    import kerchunk.grib2

    return kerchunk.grib2


def fresh_copies():
    """The per-file references, copied before each timed run (kerchunk may change what it is given)."""
    return copy.deepcopy(singles())


def nothing():
    return None


grib = sys.argv[4] if len(sys.argv) > 4 else None


def grib_scan(module):
    return module.scan_grib(grib)


def grib_tree(module):
    return module.grib_tree(module.scan_grib(grib))


repository = Path(__file__).resolve().parents[2]
tiffs = sorted(str(p) for d in ("tests/codecs/tiff", "tests/scan/tiff") for p in (repository / d).rglob("*.tif"))


def tiff_to_zarr(module):
    for path in tiffs:
        module.tiff_to_zarr(path)


cog = sys.argv[5] if len(sys.argv) > 5 else None


# (name, theirs, ours, peer, setup): each run is given what setup made for it, untimed.
workloads = [
    ("parse 100 files", lambda _: parse(TheirHDFParser), lambda _: parse(OurHDFParser), "VirtualiZarr's HDFParser",
     nothing),
    ("open_virtual_mfdataset, 100 files", lambda _: mfdataset(TheirHDFParser), lambda _: mfdataset(OurHDFParser),
     "VirtualiZarr's HDFParser", nothing),
    ("SingleHdf5ToZarr on 100 files", lambda _: translate(kerchunk.hdf),
     lambda _: translate(zarrs_kerchunk.kerchunk.hdf), "kerchunk 0.2.10", nothing),
    ("MultiZarrToZarr over 100 files' references", lambda refs: combine(kerchunk.combine, refs),
     lambda refs: combine(zarrs_kerchunk.kerchunk.combine, refs), "kerchunk 0.2.10", fresh_copies),
    ("scan_grib, 120 messages", lambda _: grib_scan(kerchunk_grib2()), lambda _: grib_scan(zarrs_kerchunk.kerchunk.grib2),
     "kerchunk 0.2.10", nothing),
    ("scan_grib + grib_tree, 120 messages", lambda _: grib_tree(kerchunk_grib2()),
     lambda _: grib_tree(zarrs_kerchunk.kerchunk.grib2), "kerchunk 0.2.10", nothing),
    (f"tiff_to_zarr, {len(tiffs)} files", lambda _: tiff_to_zarr(kerchunk.tiff),
     lambda _: tiff_to_zarr(zarrs_kerchunk.kerchunk.tiff), "kerchunk 0.2.10 (tifffile 2026.11.8)", nothing),
    ("tiff_to_zarr, a 10 000 x 10 000 COG", lambda _: kerchunk.tiff.tiff_to_zarr(cog),
     lambda _: zarrs_kerchunk.kerchunk.tiff.tiff_to_zarr(cog), "kerchunk 0.2.10 (tifffile 2026.11.8)", nothing),
]
only = sys.argv[3].split(",") if len(sys.argv) > 3 else None
workloads = [w for n, w in enumerate(workloads) if (only is None or str(n) in only) and (n not in (4, 5) or grib) and (n != 7 or cog)]
for name, theirs, ours, peer, setup in workloads:
    times = {"theirs": [], "ours": []}
    theirs(setup()), ours(setup())  # warm-up
    for _ in range(rounds):
        for side, run in (("theirs", theirs), ("ours", ours)):
            given = setup()
            start = time.perf_counter()
            run(given)
            times[side].append(time.perf_counter() - start)
    t, o = statistics.median(times["theirs"]), statistics.median(times["ours"])
    print(f"{name}: {peer} {t:.3f} s, ours {o:.3f} s, {t / o:.1f}x "
          f"(all: {[round(x, 3) for x in times['theirs']]} vs {[round(x, 3) for x in times['ours']]})", flush=True)
