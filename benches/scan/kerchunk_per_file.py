#!/usr/bin/env python3
"""The per-file references `benches/scan/combine.sh` combines: SingleHdf5ToZarr on every
`f*.nc` of FOLDER, each written to FOLDER/refs-THRESHOLD/fNNNNN.json (kerchunk's own JSON,
naming its file by absolute path), with `inline_threshold` THRESHOLD (500, kerchunk's default,
holds these files' small chunks inline; 0 holds every chunk, coordinates included, as a range).

    python benches/scan/kerchunk_per_file.py FOLDER THRESHOLD
"""
import glob
import json
import pathlib
import sys

from kerchunk.hdf import SingleHdf5ToZarr

folder, threshold = pathlib.Path(sys.argv[1]), int(sys.argv[2])
out = folder / f"refs-{threshold}"
out.mkdir(exist_ok=True)
for path in sorted(glob.glob(f"{folder}/f*.nc")):
    refs = SingleHdf5ToZarr(path, inline_threshold=threshold).translate()
    (out / (pathlib.Path(path).stem + ".json")).write_text(json.dumps(refs))
