#!/usr/bin/env python3
"""Issue 57's measurements, side by side in one process: VirtualiZarr's HDFParser against ours
(`zarrs_kerchunk.virtualizarr.HDFParser`) on the 100 NetCDF-4 files of
`benches/scan/make_series.py FOLDER netcdf4`, and kerchunk's SingleHdf5ToZarr against ours
(`zarrs_kerchunk.kerchunk.hdf`). Each workload runs ROUNDS times, alternating, after a warm-up
pass of each (the page cache warm); the median wall time is printed.

- `parse`: each parser called on every file, one after another (`parser(url=, registry=)`);
- `mfdataset`: `open_virtual_mfdataset` over the 100 files with each parser, combined along time
  (VirtualiZarr's own combining, the same for both);
- `translate`: `SingleHdf5ToZarr(path).translate()` on every file.

Needs VirtualiZarr 2.8, kerchunk 0.2.10 and the package built with --release (Python 3.12).

    python benches/virtualizarr/parsers.py FOLDER [ROUNDS]
"""

import statistics
import sys
import time
import warnings

warnings.simplefilter("ignore")

import kerchunk.hdf
from obspec_utils.registry import ObjectStoreRegistry
from obstore.store import LocalStore
from virtualizarr import open_virtual_mfdataset
from virtualizarr.parsers import HDFParser as TheirHDFParser

import zarrs_kerchunk.kerchunk.hdf
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


workloads = [
    ("parse 100 files", lambda: parse(TheirHDFParser), lambda: parse(OurHDFParser), "VirtualiZarr's HDFParser"),
    ("open_virtual_mfdataset, 100 files", lambda: mfdataset(TheirHDFParser), lambda: mfdataset(OurHDFParser),
     "VirtualiZarr's HDFParser"),
    ("SingleHdf5ToZarr on 100 files", lambda: translate(kerchunk.hdf), lambda: translate(zarrs_kerchunk.kerchunk.hdf),
     "kerchunk 0.2.10"),
]
for name, theirs, ours, peer in workloads:
    times = {"theirs": [], "ours": []}
    theirs(), ours()  # warm-up
    for _ in range(rounds):
        for side, run in (("theirs", theirs), ("ours", ours)):
            start = time.perf_counter()
            run()
            times[side].append(time.perf_counter() - start)
    t, o = statistics.median(times["theirs"]), statistics.median(times["ours"])
    print(f"{name}: {peer} {t:.3f} s, ours {o:.3f} s, {t / o:.1f}x "
          f"(all: {[round(x, 3) for x in times['theirs']]} vs {[round(x, 3) for x in times['ours']]})", flush=True)
