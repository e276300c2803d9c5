#!/usr/bin/env python3
"""kerchunk's side of `benches/scan/run.sh`: NetCDF3ToZarr (or, for
NetCDF-4 files, SingleHdf5ToZarr) on every file of FOLDER, then
MultiZarrToZarr along time, written to OUT.

    python benches/scan/kerchunk_series.py FOLDER OUT
"""
import base64
import glob
import json
import sys
import time

import fsspec

from kerchunk.combine import MultiZarrToZarr
from kerchunk.hdf import SingleHdf5ToZarr

folder, out = sys.argv[1], sys.argv[2]
if folder.startswith("http"):
    # Over HTTP (run.sh's latency proxy): the same 100 files by URL, read through fsspec.
    files = [f"{folder.rstrip('/')}/f{n:03d}.nc" for n in range(100)]
else:
    files = sorted(glob.glob(f"{folder}/f*.nc"))
t0 = time.perf_counter()
def single(path):
    with fsspec.open(path, "rb") as f:
        hdf5 = f.read(4) == b"\x89HDF"
    if hdf5:
        return SingleHdf5ToZarr(path, inline_threshold=500).translate()
    from kerchunk.netCDF3 import NetCDF3ToZarr  # needs scipy, which NetCDF-4 files do not

    return NetCDF3ToZarr(path, inline_threshold=100).translate()


singles = [single(f) for f in files]
t1 = time.perf_counter()
if folder.startswith("http"):
    # MultiZarrToZarr cannot read a coordinate over HTTP with zarr 3 (zarr's event loop meets
    # the session of fsspec's: "Timeout context manager should be used inside a task"), so each
    # file's time chunk is fetched here first (the one read per file it would make) and inlined.
    for refs in singles:
        url, offset, length = refs["refs"]["time/0"]
        with fsspec.open(url, "rb") as f:
            f.seek(offset)
            refs["refs"]["time/0"] = "base64:" + base64.b64encode(f.read(length)).decode()
combined = MultiZarrToZarr(singles, concat_dims=["time"], identical_dims=["lat", "lon"], inline_threshold=0).translate()
t2 = time.perf_counter()
json.dump(combined, open(out, "w"))
print(f"kerchunk: scan {t1 - t0:.2f} s, combine {t2 - t1:.2f} s, {len(combined['refs'])} references")
