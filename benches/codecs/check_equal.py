#!/usr/bin/env python3
"""The benchmark's messages decode to eccodes' values, bit for bit, through the Python package's
Rust decoder (the codec the timings measure): a speed figure holds only for the right answer.

    python benches/codecs/check_equal.py FILES...
"""
import json
import sys

import eccodes
import numpy as np
from zarrs_kerchunk import _rs

CONFIGURATION = json.dumps({"id": "grib", "var": "t", "dtype": "float64"})

for path in sys.argv[1:]:
    message = open(path, "rb").read()
    handle = eccodes.codes_new_from_message(message)
    truth = eccodes.codes_get_values(handle)
    eccodes.codes_release(handle)
    ours = np.frombuffer(bytes(_rs.decode_chunk(CONFIGURATION, message, truth.size * 8)), dtype="<f8")
    if not np.array_equal(ours, truth):
        sys.exit(f"{path}: our values differ from eccodes'")
    print(f"{path}: {truth.size} values, eccodes' bit for bit")
