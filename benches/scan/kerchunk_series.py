#!/usr/bin/env python3
"""kerchunk's side of `benches/scan/run.sh`: NetCDF3ToZarr (or, for
NetCDF-4 files, SingleHdf5ToZarr) on every file of FOLDER, then
MultiZarrToZarr along time, written to OUT.

    python benches/scan/kerchunk_series.py FOLDER OUT
"""
import glob
import json
import sys
import time

from kerchunk.combine import MultiZarrToZarr
from kerchunk.hdf import SingleHdf5ToZarr
from kerchunk.netCDF3 import NetCDF3ToZarr

folder, out = sys.argv[1], sys.argv[2]
files = sorted(glob.glob(f"{folder}/f*.nc"))
t0 = time.perf_counter()
def single(path):
    with open(path, "rb") as f:
        hdf5 = f.read(4) == b"\x89HDF"
    if hdf5:
        return SingleHdf5ToZarr(path, inline_threshold=500).translate()
    return NetCDF3ToZarr(path, inline_threshold=100).translate()


singles = [single(f) for f in files]
t1 = time.perf_counter()
combined = MultiZarrToZarr(singles, concat_dims=["time"], identical_dims=["lat", "lon"], inline_threshold=0).translate()
t2 = time.perf_counter()
json.dump(combined, open(out, "w"))
print(f"kerchunk: scan {t1 - t0:.2f} s, combine {t2 - t1:.2f} s, {len(combined['refs'])} references")
