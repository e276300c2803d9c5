#!/usr/bin/env python3
"""100 NetCDF-3 files of one time series, for `benches/scan/run.sh`.

Each file (64-bit offset) holds 24 hourly records of 20 float variables on a
90 x 180 grid, with `lat`, `lon` and `time` coordinates: 29 MB, 2.9 GB in
all. Needs netCDF4 and numpy.

    python benches/scan/make_series.py FOLDER
"""
import pathlib
import sys

import netCDF4
import numpy as np

folder = pathlib.Path(sys.argv[1])
folder.mkdir(parents=True, exist_ok=True)
for n in range(100):
    with netCDF4.Dataset(folder / f"f{n:03d}.nc", "w", format="NETCDF3_64BIT_OFFSET") as ds:
        ds.createDimension("time", None)
        ds.createDimension("lat", 90)
        ds.createDimension("lon", 180)
        time = ds.createVariable("time", "f8", ("time",))
        time.units = "hours since 2000-01-01"
        ds.createVariable("lat", "f4", ("lat",))[:] = np.linspace(-89, 89, 90)
        ds.createVariable("lon", "f4", ("lon",))[:] = np.linspace(0, 358, 180)
        variables = [ds.createVariable(f"v{i:02d}", "f4", ("time", "lat", "lon")) for i in range(20)]
        for v in variables:
            v.units = "K"
            v.long_name = "a variable"
        for k in range(24):
            time[k] = n * 24 + k
            for v in variables:
                v[k] = np.float32(k)
