"""The disk cache's workload: data.bin (20 000 chunks of 4 KiB, random float32), references
mapping `small/I.0` to chunk I at URL (the proxy in front of nginx), and keys.json, 1 000 of
those keys in a random order (seed 55), none twice.

    python make.py FOLDER URL"""

import json
import os
import sys

import numpy as np

ROWS, COLS = 20_000, 1024
CHUNK = COLS * 4
folder, url = sys.argv[1], sys.argv[2]
os.makedirs(folder, exist_ok=True)
rng = np.random.default_rng(55)
rng.standard_normal((ROWS, COLS), dtype=np.float32).tofile(os.path.join(folder, "data.bin"))
zarray = {"chunks": [1, COLS], "compressor": None, "dtype": "<f4", "fill_value": None, "filters": None,
          "order": "C", "shape": [ROWS, COLS], "zarr_format": 2}
refs = {".zgroup": json.dumps({"zarr_format": 2}), "small/.zarray": json.dumps(zarray),
        "small/.zattrs": json.dumps({"_ARRAY_DIMENSIONS": ["row", "col"]})}
for i in range(ROWS):
    refs[f"small/{i}.0"] = [f"{url}/data.bin", i * CHUNK, CHUNK]
json.dump(refs, open(os.path.join(folder, "refs.json"), "w"), separators=(",", ":"))
keys = [f"small/{i}.0" for i in rng.choice(ROWS, size=1000, replace=False)]
json.dump(keys, open(os.path.join(folder, "keys.json"), "w"))
print(f"wrote {folder}: {ROWS} chunks of {CHUNK} bytes, 1000 keys")
