#!/usr/bin/env python3
"""VirtualiZarr's side of `benches/scan/run.sh` and `http.sh`: its HDFParser
on every NetCDF-4 file of FOLDER (a local folder, or an http:// URL of one),
combined along time by `open_virtual_mfdataset`, written as kerchunk JSON
to OUT.

    python benches/scan/virtualizarr_series.py FOLDER OUT
"""
import sys
import time
import warnings

warnings.simplefilter("ignore")

from obspec_utils.registry import ObjectStoreRegistry
from obstore.store import HTTPStore, LocalStore
from virtualizarr import open_virtual_mfdataset
from virtualizarr.parsers import HDFParser

folder, out = sys.argv[1].rstrip("/"), sys.argv[2]
if folder.startswith("http"):
    registry = ObjectStoreRegistry({folder: HTTPStore.from_url(folder, client_options={"allow_http": True})})
    urls = [f"{folder}/f{n:03d}.nc" for n in range(100)]
else:
    registry = ObjectStoreRegistry({"file://": LocalStore()})
    urls = [f"file://{folder}/f{n:03d}.nc" for n in range(100)]
t0 = time.perf_counter()
combined = open_virtual_mfdataset(urls, registry=registry, parser=HDFParser(), concat_dim="time",
                                  combine="nested", coords="minimal", compat="override", data_vars="minimal",
                                  loadable_variables=["time", "lat", "lon"])
t1 = time.perf_counter()
combined.vz.to_kerchunk(out, format="json")
t2 = time.perf_counter()
print(f"virtualizarr: open {t1 - t0:.2f} s, write {t2 - t1:.2f} s")
