#!/usr/bin/env python3
"""kerchunk's TIFF path for the benchmarks: tiff_to_zarr on one file or URL, written as JSON.
Prints a JSON line with the seconds taken and the references made.

    python3 kerchunk_tiff.py OUT.json FILE_OR_URL
"""
import json
import sys
import time

from kerchunk.tiff import tiff_to_zarr

start = time.perf_counter()
refs = tiff_to_zarr(sys.argv[2])
with open(sys.argv[1], "w") as out:
    json.dump(refs, out)
print(json.dumps({"seconds": round(time.perf_counter() - start, 3), "references": len(refs)}))
