#!/usr/bin/env python3
"""100 NetCDF files of one time series, for `benches/scan/run.sh`.

Each file holds 24 hourly records of 20 float variables on a 90 x 180 grid,
with `lat`, `lon` and `time` coordinates. FORMAT `netcdf3` (the default):
64-bit offset files of 29 MB, 2.9 GB in all; `netcdf4`: NetCDF-4 files with
each record of each variable a zlib-compressed chunk of noisy values (480
chunks of about 16 KB a file, 0.8 GB in all).
Needs netCDF4 and numpy.

    python benches/scan/make_series.py FOLDER [FORMAT]
"""
import pathlib
import sys

import netCDF4
import numpy as np

folder = pathlib.Path(sys.argv[1])
netcdf4 = len(sys.argv) > 2 and sys.argv[2] == "netcdf4"
folder.mkdir(parents=True, exist_ok=True)
for n in range(100):
    with netCDF4.Dataset(folder / f"f{n:03d}.nc", "w", format="NETCDF4" if netcdf4 else "NETCDF3_64BIT_OFFSET") as ds:
        ds.createDimension("time", None)
        ds.createDimension("lat", 90)
        ds.createDimension("lon", 180)
        time = ds.createVariable("time", "f8", ("time",))
        time.units = "hours since 2000-01-01"
        ds.createVariable("lat", "f4", ("lat",))[:] = np.linspace(-89, 89, 90)
        ds.createVariable("lon", "f4", ("lon",))[:] = np.linspace(0, 358, 180)
        compressed = {"zlib": True, "chunksizes": (1, 90, 180)} if netcdf4 else {}
        variables = [ds.createVariable(f"v{i:02d}", "f4", ("time", "lat", "lon"), **compressed) for i in range(20)]
        for v in variables:
            v.units = "K"
            v.long_name = "a variable"
        noise = np.random.default_rng(n)
        for k in range(24):
            time[k] = n * 24 + k
            for v in variables:
                v[k] = noise.integers(0, 100, (90, 180)).astype("f4") if netcdf4 else np.float32(k)
