"""Make the bundled sample: a small NetCDF4 file and its kerchunk references.

Run from this folder with netCDF4, kerchunk 0.2.10 and their dependencies installed:
    python make_sample.py
kerchunk is given the bare file name, so the reference URL is relative ("sample.nc").
"""
import json

import netCDF4
import numpy as np
from kerchunk.hdf import SingleHdf5ToZarr

rng = np.random.default_rng(42)
with netCDF4.Dataset("sample.nc", "w") as ds:
    ds.title = "Near-surface air temperature, synthetic sample for zarrs_kerchunk"
    ds.Conventions = "CF-1.8"
    ds.createDimension("time", 4)
    ds.createDimension("lat", 18)
    ds.createDimension("lon", 24)
    time = ds.createVariable("time", "f8", ("time",))
    time.units = "days since 2000-01-01"
    time.standard_name = "time"
    time[:] = np.arange(4)
    lat = ds.createVariable("lat", "f4", ("lat",))
    lat.units = "degrees_north"
    lat.standard_name = "latitude"
    lat[:] = np.linspace(-85, 85, 18)
    lon = ds.createVariable("lon", "f4", ("lon",))
    lon.units = "degrees_east"
    lon.standard_name = "longitude"
    lon[:] = np.linspace(0, 345, 24)
    air = ds.createVariable("air", "f4", ("time", "lat", "lon"), zlib=True, shuffle=True,
                            chunksizes=(1, 9, 12), fill_value=np.float32(-9999.0))
    air.units = "K"
    air.standard_name = "air_temperature"
    air.long_name = "near-surface air temperature"
    la = np.deg2rad(lat[:])[None, :, None]
    lo = np.deg2rad(lon[:])[None, None, :]
    t = np.arange(4)[:, None, None]
    air[:] = (288 - 40 * np.sin(la) ** 2 + 5 * np.cos(lo + t / 2) + rng.normal(0, 0.5, (4, 18, 24))).astype("f4")

refs = SingleHdf5ToZarr("sample.nc", inline_threshold=0).translate()
with open("sample.json", "w") as f:
    json.dump(refs, f, indent=1)
print("wrote sample.nc and sample.json with", len(refs["refs"]), "references")
