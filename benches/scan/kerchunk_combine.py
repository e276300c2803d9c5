#!/usr/bin/env python3
"""kerchunk's side of `benches/scan/combine.sh`: MultiZarrToZarr over the per-file JSONs of
FOLDER (paths, as a user gives them), along time, lat and lon taken once, written to OUT.

    python benches/scan/kerchunk_combine.py FOLDER OUT
"""
import glob
import json
import sys
import time

from kerchunk.combine import MultiZarrToZarr

folder, out = sys.argv[1], sys.argv[2]
jsons = sorted(glob.glob(f"{folder}/f*.json"))
t0 = time.perf_counter()
combined = MultiZarrToZarr(jsons, concat_dims=["time"], identical_dims=["lat", "lon"]).translate()
t1 = time.perf_counter()
json.dump(combined, open(out, "w"))
print(f"kerchunk: combine {t1 - t0:.2f} s, {len(combined['refs'])} references")
