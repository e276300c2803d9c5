"""Four daily granules as NASA Earthdata's Level-4 sea-surface temperature collections hold them
(one time record each, packed int16 with `scale_factor` and `add_offset`, zlib chunks), each with
the DMR++ sidecar OPeNDAP's build_dmrpp writes beside it: the data of the README's Earthdata
walk-through, which `.ci/earthdata.py`'s DAAC serves.

The files are written by netCDF4; their sidecars by `tests/scan/dmrpp/build.py`, from h5py's own
chunk index (never from this project's scanners). The values are a smooth field plus noise, so that
a misplaced chunk shows.

    python tests/earthdata/make.py      (netCDF4, h5py, numpy; writes tests/earthdata/granules/)
"""

import sys
from pathlib import Path

import netCDF4
import numpy as np

here = Path(__file__).parent
sys.path.insert(0, str(here.parent / "scan" / "dmrpp"))
import build  # noqa: E402  (the sidecar writer beside the DMR++ tests)

out = here / "granules"
out.mkdir(exist_ok=True)
rng = np.random.default_rng(54)
lat = np.linspace(-87.5, 87.5, 36, dtype="f4")
lon = np.linspace(-177.5, 177.5, 72, dtype="f4")
for day in range(4):
    path = out / f"202601{day + 1:02d}-SST-L4-zk.nc"
    with netCDF4.Dataset(path, "w", format="NETCDF4") as ds:
        ds.title = "zarrs_kerchunk walk-through: daily sea-surface temperature"
        ds.createDimension("time", 1)
        ds.createDimension("lat", lat.size)
        ds.createDimension("lon", lon.size)
        time = ds.createVariable("time", "i4", ("time",))
        time.units = "seconds since 1981-01-01 00:00:00"
        time.calendar = "standard"
        time[:] = [int((np.datetime64(f"2026-01-{day + 1:02d}T09") - np.datetime64("1981-01-01")) / np.timedelta64(1, "s"))]
        ds.createVariable("lat", "f4", ("lat",))[:] = lat
        ds.createVariable("lon", "f4", ("lon",))[:] = lon
        sst = ds.createVariable("analysed_sst", "i2", ("time", "lat", "lon"), zlib=True, complevel=4,
                                chunksizes=(1, 18, 36), fill_value=-32768)
        sst.units = "kelvin"
        sst.scale_factor = 0.01
        sst.add_offset = 273.15
        field = 273.15 + 28 * np.cos(np.deg2rad(lat))[:, None] + np.sin(np.deg2rad(lon + 10 * day))[None, :]
        values = field + rng.normal(0, 0.3, field.shape)
        values[:4, :] = np.nan  # land or ice: the fill value
        sst[0] = np.ma.masked_array(np.nan_to_num(values), mask=np.isnan(values))
    build.sidecar(path)
    print(path, path.stat().st_size, "bytes")
