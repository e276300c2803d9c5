#!/usr/bin/env python3
"""NetCDF-3 files for the scan's tests, in forms tests/data lacks, with what
kerchunk makes of each and the ground truth read by netCDF4.

Run from the repository root with netCDF4, kerchunk 0.2.10, zarr 3.1 and
scipy installed (any virtualenv; not needed by the tests themselves):

    python tests/scan/netcdf3/make.py

For each FILE.nc it writes FILE.kerchunk.json (kerchunk's NetCDF3ToZarr with
inline_threshold=0; absent where kerchunk fails) and FILE.<variable>.npy
(each variable as stored, with masking and scaling off).
"""
import json
import pathlib

import netCDF4
import numpy as np

HERE = pathlib.Path(__file__).resolve().parent


def records_with_padding(path, fmt):
    """Record variables of 1- and 2-byte types, so records are padded to 4 bytes; every kind of attribute."""
    with netCDF4.Dataset(path, "w", format=fmt) as ds:
        ds.title = "records with padding"
        ds.gint = np.int32(7)
        ds.gfarr = np.array([1.5, 2.5])
        ds.empty = ""
        ds.createDimension("time", None)
        ds.createDimension("lat", 3)
        ds.createDimension("lon", 2)
        ds.createDimension("two", 2)
        time = ds.createVariable("time", "f8", ("time",))
        time.units = "days since 2000-01-01"
        rt = ds.createVariable("rt", "i2", ("time",))
        bb = ds.createVariable("bb", "i1", ("time", "two"))
        temp = ds.createVariable("temp", "f4", ("time", "lat", "lon"), fill_value=np.float32(-9999.0))
        temp.scale_factor = 2.0
        temp.add_offset = 0.5
        temp.valid_range = np.array([0.0, 100.0])
        temp.long_name = "temperature"
        lat = ds.createVariable("lat", "f4", ("lat",))
        lat[:] = [10.0, 20.0, 30.0]
        big = ds.createVariable("big", "f8", ("lat", "lon", "two"))
        big[:] = np.arange(12, dtype="f8").reshape(3, 2, 2)
        for i in range(5):
            time[i] = i
            rt[i] = 100 + i
            bb[i] = [i, -i]
            temp[i] = np.arange(6, dtype="f4").reshape(3, 2) + 10 * i
        temp.set_auto_maskandscale(False)
        temp[4, 0, 0] = np.float32(-9999.0)


def single_short_record(path):
    """One record variable of 2-byte values: records are not padded (kerchunk's stride is wrong here)."""
    with netCDF4.Dataset(path, "w", format="NETCDF3_CLASSIC") as ds:
        ds.createDimension("t", None)
        v = ds.createVariable("v", "i2", ("t",))
        v[:] = [1, 2, 3]


def zero_records(path):
    """An unlimited dimension with no records, beside a fixed variable."""
    with netCDF4.Dataset(path, "w", format="NETCDF3_CLASSIC") as ds:
        ds.createDimension("t", None)
        ds.createDimension("x", 4)
        ds.createVariable("r", "f4", ("t", "x"))
        fixed = ds.createVariable("fixed", "i4", ("x",))
        fixed[:] = [1, 2, 3, 4]


def chars(path):
    """Character arrays, a character fill value, a scalar and a missing_value."""
    with netCDF4.Dataset(path, "w", format="NETCDF3_CLASSIC") as ds:
        ds.createDimension("n", 3)
        ds.createDimension("len", 5)
        names = ds.createVariable("names", "S1", ("n", "len"), fill_value=b"x")
        names[:] = netCDF4.stringtochar(np.array(["abc", "de", "fghij"], dtype="S5"))
        scalar = ds.createVariable("scalar", "f8", ())
        scalar[...] = 3.25
        m = ds.createVariable("m", "i2", ("n",), fill_value=np.int16(-1))
        m.missing_value = np.int16(-2)
        m[:] = [5, -2, 7]


def cdf5(path):
    """CDF-5 (64-bit data): unsigned and 64-bit types, which kerchunk cannot scan."""
    with netCDF4.Dataset(path, "w", format="NETCDF3_64BIT_DATA") as ds:
        ds.createDimension("t", None)
        ds.createDimension("x", 3)
        for name, dtype in [("u2", "u2"), ("u4", "u4"), ("i8", "i8"), ("u8", "u8"), ("u1", "u1")]:
            v = ds.createVariable(name, dtype, ("x",))
            v[:] = np.array([1, 2, np.iinfo(dtype).max], dtype=dtype)
        r = ds.createVariable("r", "i8", ("t", "x"))
        r[0:2] = np.arange(6, dtype="i8").reshape(2, 3) - 3


FILES = {
    "classic_records.nc": lambda p: records_with_padding(p, "NETCDF3_CLASSIC"),
    "offset64_records.nc": lambda p: records_with_padding(p, "NETCDF3_64BIT_OFFSET"),
    "single_short_record.nc": single_short_record,
    "zero_records.nc": zero_records,
    "chars.nc": chars,
    "cdf5.nc": cdf5,
}

for name, make in FILES.items():
    path = HERE / name
    path.unlink(missing_ok=True)
    make(path)
    stem = path.stem
    for old in HERE.glob(f"{stem}.*.npy"):
        old.unlink()
    with netCDF4.Dataset(path) as ds:
        for var in ds.variables.values():
            var.set_auto_maskandscale(False)
            var.set_auto_chartostring(False)
            np.save(HERE / f"{stem}.{var.name}.npy", np.asarray(var[...]))
    refs = HERE / f"{stem}.kerchunk.json"
    refs.unlink(missing_ok=True)
    try:
        from kerchunk.netCDF3 import NetCDF3ToZarr

        out = NetCDF3ToZarr(str(path), inline_threshold=0).translate()
        # References name the file relative to this folder, as the corpus's do.
        text = json.dumps(out, indent=1).replace(json.dumps(str(path))[1:-1], name)
        refs.write_text(text)
        print(name, "kerchunk:", len(out["refs"]), "references")
    except Exception as e:  # kerchunk cannot read CDF-5
        print(name, "kerchunk failed:", type(e).__name__, e)


def day(path, start):
    """One file of a time series: two records of `v(time, lat, lon)`, and the same `lat`, `lon` and `static`."""
    with netCDF4.Dataset(path, "w", format="NETCDF3_CLASSIC") as ds:
        ds.run = "series"
        ds.createDimension("time", None)
        ds.createDimension("lat", 2)
        ds.createDimension("lon", 3)
        time = ds.createVariable("time", "f8", ("time",))
        time.units = "days since 2000-01-01"
        ds.createVariable("lat", "f4", ("lat",))[:] = [10.0, 20.0]
        ds.createVariable("lon", "f4", ("lon",))[:] = [1.0, 2.0, 3.0]
        ds.createVariable("static", "i4", ("lat", "lon"))[:] = np.arange(6).reshape(2, 3)
        v = ds.createVariable("v", "f4", ("time", "lat", "lon"))
        for i in range(2):
            time[i] = start + i
            v[i] = np.arange(6, dtype="f4").reshape(2, 3) + 100 * (start + i)


# A series of three files (written out of order, so the combined order comes from the times),
# combined along time by kerchunk's MultiZarrToZarr, and the combined ground truth.
series = [HERE / f"series_{n}.nc" for n in range(3)]
for n, path in zip([2, 0, 1], series):
    path.unlink(missing_ok=True)
    day(path, 2 * n)
for old in HERE.glob("series.*"):
    old.unlink()
from kerchunk.combine import MultiZarrToZarr  # noqa: E402
from kerchunk.netCDF3 import NetCDF3ToZarr  # noqa: E402

singles = [NetCDF3ToZarr(str(p), inline_threshold=0).translate() for p in series]
combined = MultiZarrToZarr(singles, concat_dims=["time"], identical_dims=["lat", "lon", "static"],
                           inline_threshold=0).translate()
text = json.dumps(combined, indent=1)
for p in series:
    text = text.replace(json.dumps(str(p))[1:-1], p.name)
(HERE / "series.kerchunk.json").write_text(text)
order = sorted(series, key=lambda p: netCDF4.Dataset(p)["time"][0])
with netCDF4.Dataset(order[0]) as first:
    for name in ["lat", "lon", "static"]:
        np.save(HERE / f"series.{name}.npy", np.asarray(first[name][...]))
for name in ["time", "v"]:
    parts = []
    for p in order:
        with netCDF4.Dataset(p) as ds:
            ds[name].set_auto_maskandscale(False)
            parts.append(np.asarray(ds[name][...]))
    np.save(HERE / f"series.{name}.npy", np.concatenate(parts))
print("series: kerchunk:", len(combined["refs"]), "references")
