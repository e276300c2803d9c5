#!/usr/bin/env python3
"""One HDF5 file of 10^5 chunks, for `benches/scan/large.sh`: a 1000 x 10000
float32 dataset in chunks of 10 x 10 (400 bytes each, deflated), written by
h5py with its default (B-tree v1) chunk index, and a second copy written with
libver="latest" (an extensible array over two unlimited dimensions: a B-tree v2).

    python benches/scan/make_large.py FOLDER
"""
import pathlib
import sys

import h5py
import numpy as np

folder = pathlib.Path(sys.argv[1])
folder.mkdir(parents=True, exist_ok=True)
values = np.random.default_rng(0).integers(0, 100, (1000, 10000)).astype("f4")
for name, libver, maxshape in [("large.h5", "earliest", None), ("large_latest.h5", "latest", (None, None))]:
    with h5py.File(folder / name, "w", libver=libver) as f:
        f.create_dataset("v", data=values, chunks=(10, 10), compression="gzip", maxshape=maxshape)
