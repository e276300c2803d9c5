#!/usr/bin/env python3
"""Files of uneven length along time, for combining them on Zarr v3's rectilinear chunk grid
(issue 52), with what xarray makes of them: each file opened on its own, then concatenated along
time (xr.concat), the truth the tests hold the combined references to.

Run from the repository root with netCDF4 and xarray installed (not needed by the tests):

    python tests/scan/uneven/make.py

CASE -> files CASE_<n>.nc and CASE.expected.json ({"time": ISO 8601 dates, "t": values,
"dims": t's dimensions}):
- padded: NetCDF-4, 31, 28 and 31 days (January to March 2021) of t(time, x) in chunks of 10 days,
  zlib and shuffle: each file's last chunk is stored whole (HDF5 pads it), in the middle of the
  combined array;
- whole: the same days, one chunk a file (chunks of 31, 28 and 31): no chunk padded;
- later: NetCDF-4, t(level, time, x), time the second axis, chunks of 10 days, zlib;
- classic: NetCDF-3 (classic), time a fixed dimension, each variable one contiguous block;
- leap: NetCDF-4, the days of 2023 and of 2024 (a leap year), chunks of 100 days, zlib;
- appended: NetCDF-4, 30, 30, 28 and 31 days in chunks of 10: the first two combine regularly,
  appending the third keeps the grid regular, appending the fourth after it makes it uneven;
- later_months: 31, 28 and 31 days after them, appended to the uneven set in turn
  (appended_then.expected.json: the seven files concatenated).

And padded_<n>.kerchunk.json: kerchunk 0.2.10's SingleHdf5ToZarr(inline_threshold=0) of each padded
file (the file named by its name alone), sets others made, for `combine`.
"""
import json
import pathlib

import netCDF4
import numpy as np
import xarray as xr

HERE = pathlib.Path(__file__).resolve().parent

# name -> (format, lengths, first day of each file, chunks along time (None: one a file),
#          shape of t beside time, time's axis, compression)
CASES = {
    "padded": ("NETCDF4", [31, 28, 31], ["2021-01-01", "2021-02-01", "2021-03-01"], 10, (4,), 0, True),
    "whole": ("NETCDF4", [31, 28, 31], ["2021-01-01", "2021-02-01", "2021-03-01"], None, (4,), 0, True),
    "later": ("NETCDF4", [31, 28, 31], ["2021-01-01", "2021-02-01", "2021-03-01"], 10, (2, 3), 1, False),
    "classic": ("NETCDF3_CLASSIC", [31, 28, 31], ["2021-01-01", "2021-02-01", "2021-03-01"], None, (4,), 0, False),
    "leap": ("NETCDF4", [365, 366], ["2023-01-01", "2024-01-01"], 100, (2,), 0, True),
    "appended": ("NETCDF4", [30, 30, 28, 31], ["2021-04-01", "2021-05-01", "2021-05-31", "2021-06-28"], 10, (3,), 0,
                 True),
    "later_months": ("NETCDF4", [31, 28, 31], ["2021-07-29", "2021-08-29", "2021-09-26"], 10, (3,), 0, True),
}

# The set appended to in turn: appended's files, then later_months' (appended_then.expected.json).
THEN = [("appended", 4), ("later_months", 3)]

UNITS = "days since 2021-01-01"


def write(path, fmt, length, first, chunk, others, axis, compressed, number):
    start = (np.datetime64(first) - np.datetime64("2021-01-01")).astype(int)
    with netCDF4.Dataset(path, "w", format=fmt) as ds:
        ds.createDimension("time", length)
        names = ["level", "x"] if len(others) == 2 else ["x"]
        for name, size in zip(names, others, strict=True):
            ds.createDimension(name, size)
        time = ds.createVariable("time", "i4", ("time",))
        time.units = UNITS
        time.calendar = "standard"
        time.standard_name = "time"
        time[:] = np.arange(start, start + length, dtype="i4")
        dims = list(names)
        dims.insert(axis, "time")
        shape = list(others)
        shape.insert(axis, length)
        kwargs = {}
        if fmt == "NETCDF4":
            chunks = list(others)
            if len(others) == 2:
                chunks[0] = 1
            chunks.insert(axis, length if chunk is None else chunk)
            kwargs = {"chunksizes": chunks, "zlib": compressed, "shuffle": compressed}
            if compressed:
                kwargs["complevel"] = 4
        t = ds.createVariable("t", "f4", dims, **kwargs)
        t.units = "K"
        values = 1000.0 * number + np.arange(np.prod(shape), dtype="f4").reshape(shape) / 10.0
        t[:] = values.astype("f4")


def main():
    for name, (fmt, lengths, firsts, chunk, others, axis, compressed) in CASES.items():
        paths = []
        for number, (length, first) in enumerate(zip(lengths, firsts, strict=True)):
            path = HERE / f"{name}_{number}.nc"
            write(path, fmt, length, first, chunk, others, axis, compressed, number)
            paths.append(path)
        datasets = [xr.open_dataset(path) for path in paths]
        combined = xr.concat(datasets, dim="time")
        expected = {
            "time": [str(t)[:19] for t in combined.time.values.astype("datetime64[s]")],
            "t": combined.t.values.astype("f8").tolist(),
            "dims": list(combined.t.dims),
        }
        (HERE / f"{name}.expected.json").write_text(json.dumps(expected) + "\n")
        for ds in datasets:
            ds.close()
    then = [xr.open_dataset(HERE / f"{name}_{n}.nc") for name, count in THEN for n in range(count)]
    combined = xr.concat(then, dim="time")
    expected = {
        "time": [str(t)[:19] for t in combined.time.values.astype("datetime64[s]")],
        "t": combined.t.values.astype("f8").tolist(),
        "dims": list(combined.t.dims),
    }
    (HERE / "appended_then.expected.json").write_text(json.dumps(expected) + "\n")
    for ds in then:
        ds.close()
    from kerchunk.hdf import SingleHdf5ToZarr

    for number in range(3):
        path = HERE / f"padded_{number}.nc"
        refs = SingleHdf5ToZarr(str(path), inline_threshold=0).translate()
        text = json.dumps(refs, indent=1, sort_keys=True).replace(str(path), path.name)
        (HERE / f"padded_{number}.kerchunk.json").write_text(text + "\n")


if __name__ == "__main__":
    main()
