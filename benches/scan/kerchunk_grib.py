#!/usr/bin/env python3
"""kerchunk's GRIB path for the benchmarks: scan_grib on each file, grib_tree over all the
messages, written as JSON. Prints a JSON line with the seconds taken.

    python3 kerchunk_grib.py OUT.json FILE_OR_URL...
"""
import json
import sys
import time
import warnings

from kerchunk.grib2 import grib_tree, scan_grib

warnings.filterwarnings("ignore")
start = time.perf_counter()
groups = [group for url in sys.argv[2:] for group in scan_grib(url)]
tree = grib_tree(groups)
with open(sys.argv[1], "w") as out:
    json.dump(tree, out, default=lambda b: b.decode())
print(json.dumps({"seconds": round(time.perf_counter() - start, 3), "messages": len(groups)}))
