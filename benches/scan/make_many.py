#!/usr/bin/env python3
"""N small NetCDF-4 files of one time series, for `benches/scan/many.sh`: the archive of
many files that issue 34's speed figures are about (1 000 and 10 000 files).

Each file holds 4 six-hourly times of 2 float variables on a 10 x 20 grid (a zlib chunk per
time), with `lat`, `lon` and `time` coordinates: about 20 KB a file. Needs netCDF4 and numpy.

With ROWS, the grid has ROWS latitudes and a chunk per latitude row: 8 * ROWS chunks a file,
so 10 000 files of ROWS=125 make the 10^7 references of the bounded-memory figure
(`benches/scan/bounded.sh`).

    python benches/scan/make_many.py FOLDER N [ROWS]
"""
import pathlib
import sys

import netCDF4
import numpy as np

folder, count = pathlib.Path(sys.argv[1]), int(sys.argv[2])
rows = int(sys.argv[3]) if len(sys.argv) > 3 else None
lat, chunk = (rows, 1) if rows else (10, 10)
folder.mkdir(parents=True, exist_ok=True)
for n in range(count):
    with netCDF4.Dataset(folder / f"f{n:05d}.nc", "w", format="NETCDF4") as ds:
        ds.createDimension("time", None)
        ds.createDimension("lat", lat)
        ds.createDimension("lon", 20)
        time = ds.createVariable("time", "f8", ("time",))
        time.units = "hours since 2000-01-01"
        time[:] = [24 * n + 6 * k for k in range(4)]
        ds.createVariable("lat", "f4", ("lat",))[:] = np.linspace(-45, 45, lat)
        ds.createVariable("lon", "f4", ("lon",))[:] = np.linspace(0, 190, 20)
        noise = np.random.default_rng(n)
        for name in ["tas", "pr"]:
            v = ds.createVariable(name, "f4", ("time", "lat", "lon"), zlib=True, chunksizes=(1, chunk, 20))
            v[:] = noise.integers(0, 100, (4, lat, 20)).astype("f4")
