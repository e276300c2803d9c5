#!/usr/bin/env python3
"""VirtualiZarr's side of `benches/scan/dmrpp.sh`: its DMRPPParser on the sidecar of every
NetCDF-4 file of FOLDER (`fNNN.nc.dmrpp`), combined along time by `open_virtual_mfdataset`, written
as kerchunk JSON to OUT.

    python benches/scan/virtualizarr_dmrpp.py FOLDER OUT
"""
import sys
import time
import warnings

warnings.simplefilter("ignore")

from obspec_utils.registry import ObjectStoreRegistry
from obstore.store import LocalStore
from virtualizarr import open_virtual_mfdataset
from virtualizarr.parsers import DMRPPParser

folder, out = sys.argv[1].rstrip("/"), sys.argv[2]
registry = ObjectStoreRegistry({"file://": LocalStore()})
urls = [f"file://{folder}/f{n:03d}.nc.dmrpp" for n in range(100)]
t0 = time.perf_counter()
combined = open_virtual_mfdataset(urls, registry=registry, parser=DMRPPParser(), concat_dim="time",
                                  combine="nested", coords="minimal", compat="override", data_vars="minimal",
                                  loadable_variables=["time", "lat", "lon"])
t1 = time.perf_counter()
combined.vz.to_kerchunk(out, format="json")
t2 = time.perf_counter()
print(f"virtualizarr: open {t1 - t0:.2f} s, write {t2 - t1:.2f} s")
