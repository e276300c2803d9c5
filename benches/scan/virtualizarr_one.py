#!/usr/bin/env python3
"""VirtualiZarr's side of `benches/scan/large.sh`: its HDFParser on one HDF5
file (a local path, or an http:// URL), written as kerchunk JSON to OUT.
VirtualiZarr holds no chunk inline: every chunk is a byte range.

    python benches/scan/virtualizarr_one.py FILE-OR-URL OUT
"""
import os
import sys
import time
import warnings

warnings.simplefilter("ignore")

from obspec_utils.registry import ObjectStoreRegistry
from obstore.store import HTTPStore, LocalStore
from virtualizarr import open_virtual_dataset
from virtualizarr.parsers import HDFParser

source, out = sys.argv[1], sys.argv[2]
if source.startswith("http"):
    folder = source.rsplit("/", 1)[0]
    registry = ObjectStoreRegistry({folder: HTTPStore.from_url(folder, client_options={"allow_http": True})})
    url = source
else:
    registry = ObjectStoreRegistry({"file://": LocalStore()})
    url = f"file://{os.path.abspath(source)}"
t0 = time.perf_counter()
dataset = open_virtual_dataset(url, registry=registry, parser=HDFParser())
t1 = time.perf_counter()
dataset.vz.to_kerchunk(out, format="json")
t2 = time.perf_counter()
print(f"virtualizarr: open {t1 - t0:.2f} s, write {t2 - t1:.2f} s", file=sys.stderr)
