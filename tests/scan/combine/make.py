#!/usr/bin/env python3
"""NetCDF-4 series whose files write their times in units of their own, for
the combining tests, with what xarray's open_mfdataset and kerchunk's
MultiZarrToZarr make of each.

Run from the repository root with netCDF4, xarray, dask, cftime and kerchunk
0.2.10 installed (python/tests/run.sh's virtualenv plus netCDF4; not needed
by the tests themselves):

    python tests/scan/combine/make.py

For each CASE it writes CASE_<n>.nc and:
- CASE.expected.json: open_mfdataset(files, combine="by_coords")'s times as
  ISO 8601 text (decoded by xarray with cftime for other calendars) and `t`'s
  values, or the error xarray raises;
- CASE.kerchunk.json: MultiZarrToZarr(coo_map={"time": "cf:time"}) over
  SingleHdf5ToZarr(inline_threshold=0) of each file (absent where it fails);
  so for members (the member from the names) and for ens and ensdata
  (concat_dims ["member", "time"]).

For each NAMED case (the coordinate only in file names or a global attribute)
it writes the files and NAME.expected.json: open_mfdataset(combine="nested")
along the new dimension, each file's value added in preprocess, sorted by it;
and the GRID files (member in the name × time in the data) with
ens.expected.json, open_mfdataset nested along ["member", "time"]; the
GRID_DATA files (member and time both in the data, member one value a file)
with ensdata.expected.json, open_mfdataset(combine="by_coords"); and one file
per variable (VARIABLES) with merged.expected.json, their merge
(merged_rh_other_x.nc has another x, which merging must refuse).

    python tests/scan/combine/make.py ensdata

makes only the cases named (a CASES or NAMED name, ens, ensdata, merged, encodings, packed,
bounds or refsets).

refsets_*.nc have kerchunk's per-file references beside them (refsets_N.range.json,
refsets_N.inline.json), their coordinates chunked, compressed and big-endian, with
refsets.expected.json (open_mfdataset over the files).

ENCODINGS pairs (encoding_NAME_0.nc, encoding_NAME_1.nc) differ in one attribute that changes
what a value decodes to; packed_*.nc are packed each with its own scale and offset, with
packed.expected.json (open_mfdataset, each file decoded with its own) and packed.kerchunk.json
(MultiZarrToZarr, which keeps the first file's: wrong); bounds_*.nc count their times, their
time_bnds and obs_time from each file's own day, with bounds.expected.json (open_mfdataset) and
bounds.kerchunk.json.
"""
import json
import pathlib
import re
import sys

import netCDF4
import numpy as np
import xarray as xr

HERE = pathlib.Path(__file__).resolve().parent

# name -> one (units, calendar, times) per file, in file order. `t`'s values
# in a file are 100 * (file number) + the index of the time, and x.
CASES = {
    # One file a day, each counting hours from its own midnight.
    "units_by_day": [
        ("hours since 2020-01-01", "standard", [0, 6, 12, 18]),
        ("hours since 2020-01-02", "standard", [0, 6, 12, 18]),
        ("hours since 2020-01-03", "standard", [0, 6, 12, 18]),
    ],
    # Units of other epochs and lengths; as numbers the files' order is wrong.
    "mixed_units": [
        ("hours since 2020-01-01", "standard", [0, 6, 12, 18]),
        ("hours since 2019-12-31", "standard", [72, 78, 84, 90]),
        ("days since 2020-01-01", "standard", [1.0, 1.25, 1.5, 1.75]),
        ("minutes since 2020-01-01T12:00:00", "standard", [5040, 5400]),
    ],
    # Chunks of two times, and a last file one time long: its one chunk is partial.
    "shorter_last": [
        ("hours since 2020-01-01", "standard", [0, 6, 12, 18]),
        ("hours since 2020-01-02", "standard", [0, 6, 12, 18]),
        ("hours since 2020-01-03", "standard", [0]),
    ],
    # noleap across the end of February of a leap year: 02-28 is followed by 03-01.
    "noleap": [
        ("days since 2004-02-27", "noleap", [0, 1]),
        ("days since 2004-03-01", "noleap", [0, 1]),
        ("hours since 2004-01-01", "noleap", [1488, 1512]),
    ],
    # Two calendars: neither xarray's nor our combining can put them on one axis.
    "calendars_differ": [
        ("days since 2004-02-27", "noleap", [0, 1]),
        ("days since 2004-03-01", "standard", [0, 1]),
    ],
}


def write(path, units, calendar, times, number):
    with netCDF4.Dataset(path, "w", format="NETCDF4") as ds:
        ds.createDimension("time", None)
        ds.createDimension("x", 2)
        time = ds.createVariable("time", "f8" if any(isinstance(t, float) for t in times) else "i4", ("time",))
        time.units = units
        time.calendar = calendar
        time.standard_name = "time"
        x = ds.createVariable("x", "f4", ("x",))
        x[:] = [10.0, 20.0]
        along_time = 2 if path.name.startswith("shorter_last") else 1
        t = ds.createVariable("t", "f4", ("time", "x"), chunksizes=(along_time, 2))
        t.units = "K"
        time[:] = times
        t[:] = np.array([[100 * number + i, 100 * number + i + 0.5] for i in range(len(times))], dtype="f4")


# Files that hold no coordinate along the dimension they are combined on: the
# value is only in the file's name (an ensemble member; a date) or in a global
# attribute. Each file: t(time, x) for members, t(x) for dates. name -> files.
NAMED = {
    # Members 7, 2 and 11: ordered as numbers, not as text.
    "members": ["members_m7.nc", "members_m2.nc", "members_m11.nc"],
    # One file a day, the date in the name and in the global attribute `date`.
    "dated": ["dated_20200103.nc", "dated_20200101.nc", "dated_20200102.nc"],
}

# Two dimensions at once: members 7 and 2 (in the name), each in two files along time.
GRID = {"ens_m7_0.nc": (7, 0), "ens_m7_1.nc": (7, 1), "ens_m2_0.nc": (2, 0), "ens_m2_1.nc": (2, 1)}


# Two dimensions, both in the data: each file holds one member (a `member` dimension of length one
# and its coordinate) and two times.
GRID_DATA = {"ensdata_m7_0.nc": (7, 0), "ensdata_m7_1.nc": (7, 1), "ensdata_m2_0.nc": (2, 0),
             "ensdata_m2_1.nc": (2, 1)}


# One file per variable, sharing time and x: merged, as xarray's merge gives them.
VARIABLES = {"merged_t.nc": "t", "merged_rh.nc": "rh", "merged_rh_other_x.nc": "rh"}


def write_variable(path, name):
    with netCDF4.Dataset(path, "w", format="NETCDF4") as ds:
        ds.createDimension("time", 2)
        ds.createDimension("x", 2)
        x = ds.createVariable("x", "f4", ("x",))
        x[:] = [10.0, 25.0] if "other" in path.name else [10.0, 20.0]
        time = ds.createVariable("time", "i4", ("time",))
        time.units = "hours since 2020-01-01"
        time[:] = [0, 6]
        v = ds.createVariable(name, "f4", ("time", "x"), chunksizes=(1, 2))
        v[:] = np.arange(4, dtype="f4").reshape(2, 2) + (100 if name == "rh" else 0)


def merged_expected(paths):
    """open_mfdataset(combine="by_coords") over one file per variable: their merge."""
    with xr.open_mfdataset(paths, combine="by_coords") as ds:
        values = {name: ds[name].values.tolist() for name in ["t", "rh", "x"]}
        return values | {"time": iso(ds.time.values), "variables": sorted(ds.data_vars)}


def write_grid(path, member, part):
    with netCDF4.Dataset(path, "w", format="NETCDF4") as ds:
        ds.createDimension("time", None)
        ds.createDimension("x", 2)
        x = ds.createVariable("x", "f4", ("x",))
        x[:] = [10.0, 20.0]
        time = ds.createVariable("time", "i4", ("time",))
        time.units = "hours since 2020-01-01"
        time[:] = [12 * part, 12 * part + 6]
        t = ds.createVariable("t", "f4", ("time", "x"), chunksizes=(1, 2))
        t[:] = np.array([[1000 * member + 10 * part + i, 1000 * member + 10 * part + i + 0.5] for i in range(2)], dtype="f4")


def grid_expected(paths):
    """open_mfdataset(combine="nested", concat_dim=["member", "time"]) over the files nested by
    member then time, each given its member (from its name) in preprocess."""
    def member(ds):
        return ds.expand_dims(member=[int(pathlib.Path(ds.encoding["source"]).stem.split("_m")[1].split("_")[0])])

    by_member = {}
    for path in sorted(paths):
        by_member.setdefault(GRID[path.name][0], []).append(path)
    nested = [by_member[m] for m in sorted(by_member)]
    with xr.open_mfdataset(nested, combine="nested", concat_dim=["member", "time"], preprocess=member) as ds:
        return {"member": ds.member.values.tolist(), "time": iso(ds.time.values), "t": ds.t.values.tolist(),
                "t_dims": list(ds.t.dims)}


def write_grid_data(path, member, part):
    with netCDF4.Dataset(path, "w", format="NETCDF4") as ds:
        ds.createDimension("member", 1)
        ds.createDimension("time", None)
        ds.createDimension("x", 2)
        m = ds.createVariable("member", "i4", ("member",))
        m[:] = [member]
        x = ds.createVariable("x", "f4", ("x",))
        x[:] = [10.0, 20.0]
        time = ds.createVariable("time", "i4", ("time",))
        time.units = "hours since 2020-01-01"
        time[:] = [12 * part, 12 * part + 6]
        t = ds.createVariable("t", "f4", ("member", "time", "x"), chunksizes=(1, 1, 2))
        t[:] = np.array([[[1000 * member + 10 * part + i, 1000 * member + 10 * part + i + 0.5] for i in range(2)]],
                        dtype="f4")


def grid_data_expected(paths):
    """open_mfdataset(combine="by_coords"): both dimensions from the files' coordinates."""
    with xr.open_mfdataset(paths, combine="by_coords") as ds:
        return {"member": ds.member.values.tolist(), "time": iso(ds.time.values), "t": ds.t.values.tolist(),
                "t_dims": list(ds.t.dims)}


def write_named(path, number):
    with netCDF4.Dataset(path, "w", format="NETCDF4") as ds:
        ds.createDimension("x", 2)
        x = ds.createVariable("x", "f4", ("x",))
        x[:] = [10.0, 20.0]
        if path.name.startswith("members"):
            ds.createDimension("time", 2)
            time = ds.createVariable("time", "i4", ("time",))
            time.units = "hours since 2020-01-01"
            time[:] = [0, 6]
            t = ds.createVariable("t", "f4", ("time", "x"), chunksizes=(1, 2))
            t[:] = np.array([[100 * number + i, 100 * number + i + 0.5] for i in range(2)], dtype="f4")
        else:
            ds.date = f"{path.stem[6:10]}-{path.stem[10:12]}-{path.stem[12:14]}"
            t = ds.createVariable("t", "f4", ("x",))
            t[:] = np.array([100 * number, 100 * number + 0.5], dtype="f4")
        t.units = "K"


def named_expected(name, paths):
    """open_mfdataset along a new dimension, each file given its value in preprocess (from its
    name for members, from its `date` attribute for dates), ordered by that value."""
    def member(ds):
        number = int(pathlib.Path(ds.encoding["source"]).stem.split("_m")[1])
        return ds.expand_dims(member=[number])

    def dated(ds):
        return ds.expand_dims(time=[np.datetime64(ds.attrs["date"], "ns")])

    dimension, preprocess = ("member", member) if name == "members" else ("time", dated)
    with xr.open_mfdataset(paths, combine="nested", concat_dim=dimension, preprocess=preprocess) as ds:
        ds = ds.sortby(dimension)
        values = ds[dimension].values
        coordinate = iso(values) if values.dtype.kind == "M" else values.tolist()
        return {dimension: coordinate, "t": ds.t.values.tolist(), "t_dims": list(ds.t.dims)}


# Files packed or masked each their own way: every attribute that changes what a stored value
# decodes to, different in the second file of a pair (ENCODINGS) or in every file (packed_*.nc,
# int16 temperatures each with its own scale_factor and add_offset, as per-granule archives pack
# them). Combining must refuse them: kept from the first file, they decode the others wrong.
# name -> (the attribute, the first file's value, the second's).
ENCODINGS = {
    "scale_factor": ("scale_factor", 0.01, 0.02),
    "add_offset": ("add_offset", 273.15, 200.0),
    "fill_value": ("_FillValue", -999, -9999),
    "missing_value": ("missing_value", -999, -9999),
    "valid_min": ("valid_min", -100, -200),
    "valid_max": ("valid_max", 100, 200),
    "valid_range": ("valid_range", [-100, 100], [-200, 200]),
    "unsigned": ("_Unsigned", "false", "true"),
    "units": ("units", "K", "degC"),
    "calendar": ("calendar", "standard", "noleap"),
}
PACKED = [(0.01, 273.15), (0.02, 250.0), (0.005, 290.0)]


def write_encoding(path, number, attribute, value):
    """t(time, x) int16 with `attribute` set to `value` (calendar: on obs_time(time), in days)."""
    with netCDF4.Dataset(path, "w", format="NETCDF4") as ds:
        ds.createDimension("time", None)
        ds.createDimension("x", 2)
        time = ds.createVariable("time", "i4", ("time",))
        time.units = "hours since 2020-01-01"
        time[:] = [24 * number, 24 * number + 12]
        fill = {"fill_value": value} if attribute == "_FillValue" else {}
        t = ds.createVariable("t", "i2", ("time", "x"), **fill)
        t.set_auto_maskandscale(False)
        if attribute == "calendar":
            obs = ds.createVariable("obs_time", "f8", ("time",))
            obs.units = "days since 2020-01-01"
            obs.calendar = value
            obs[:] = [number, number + 0.5]
        elif attribute != "_FillValue":
            t.setncattr(attribute, np.array(value, dtype="i2") if isinstance(value, (int, list)) else value)
        t[:] = np.array([[10 * number + i, 10 * number + i + 1] for i in range(2)], dtype="i2")


def write_packed(path, number, scale, offset):
    """t(time, x) int16 kelvin packed with this file's own scale and offset."""
    with netCDF4.Dataset(path, "w", format="NETCDF4") as ds:
        ds.createDimension("time", None)
        ds.createDimension("x", 3)
        time = ds.createVariable("time", "i4", ("time",))
        time.units = "hours since 2020-01-01"
        time[:] = [24 * number, 24 * number + 12]
        t = ds.createVariable("t", "i2", ("time", "x"), fill_value=-32768)
        t.scale_factor = scale
        t.add_offset = offset
        t.units = "K"
        t[:] = np.array([[280.0 + number + i, 285.5 - i, 300.25 + 2 * number] for i in range(2)])


# Times with bounds, each file counting from its own day: time_bnds(time, nv) takes its units
# from time (CF 7.1), and obs_time(time) has units of its own, in seconds from the file's noon.
BOUNDS = 3


def write_bounds(path, number):
    with netCDF4.Dataset(path, "w", format="NETCDF4") as ds:
        ds.createDimension("time", None)
        ds.createDimension("nv", 2)
        ds.createDimension("x", 2)
        time = ds.createVariable("time", "f8", ("time",))
        time.units = f"hours since 2020-01-0{number + 1}"
        time.calendar = "standard"
        time.bounds = "time_bnds"
        time[:] = [3.0, 9.0, 15.0, 21.0]
        bounds = ds.createVariable("time_bnds", "f8", ("time", "nv"))
        bounds[:] = [[0.0, 6.0], [6.0, 12.0], [12.0, 18.0], [18.0, 24.0]]
        obs = ds.createVariable("obs_time", "f8", ("time",))
        obs.units = f"seconds since 2020-01-0{number + 1}T12:00:00"
        obs[:] = [-32400.0 + 60 * number, -10800.0, 10800.0, 32400.0]
        t = ds.createVariable("t", "f4", ("time", "x"))
        t.units = "K"
        t[:] = np.array([[100 * number + i, 100 * number + i + 0.5] for i in range(4)], dtype="f4")


def bounds_expected(paths):
    """open_mfdataset(combine="by_coords"): each file's times, bounds and (where the files have
    it) obs_time decoded in its own units, then concatenated."""
    with xr.open_mfdataset(paths, combine="by_coords") as ds:
        expected = {"time": iso(ds.time.values), "time_bnds": [iso(row) for row in ds.time_bnds.values],
                    "t": ds.t.values.tolist()}
        if "obs_time" in ds:
            expected["obs_time"] = iso(ds.obs_time.values)
        return expected


# Per-file reference sets as kerchunk makes them, to be combined as MultiZarrToZarr combines a
# folder of them: each file counts its times from its own day, its coordinate chunked by 3,
# zlib-compressed and big-endian, with time_bnds (the coordinate's units), and t(time, x).
# refsets_<n>.range.json holds every chunk as a range (inline_threshold=0), .inline.json the small
# ones inline (kerchunk's default 500 bytes): each names its file relative to itself.
REFSETS = 3


def write_refset_file(path, number):
    with netCDF4.Dataset(path, "w", format="NETCDF4") as ds:
        ds.createDimension("time", None)
        ds.createDimension("nv", 2)
        ds.createDimension("x", 2)
        time = ds.createVariable("time", "f8", ("time",), chunksizes=(3,), zlib=True, endian="big")
        time.units = f"hours since 2021-03-0{number + 1}"
        time.calendar = "proleptic_gregorian"
        time.bounds = "time_bnds"
        time[:] = [3.0, 9.0, 15.0, 21.0]
        bounds = ds.createVariable("time_bnds", "f8", ("time", "nv"), chunksizes=(3, 2), zlib=True, endian="big")
        bounds[:] = [[0.0, 6.0], [6.0, 12.0], [12.0, 18.0], [18.0, 24.0]]
        t = ds.createVariable("t", "f4", ("time", "x"), chunksizes=(2, 2), zlib=True)
        t.units = "K"
        t[:] = np.array([[100 * number + i, 100 * number + i + 0.5] for i in range(4)], dtype="f4")


def refsets(paths):
    """Each file's SingleHdf5ToZarr references, range and inline, its file named relative to them."""
    from kerchunk.hdf import SingleHdf5ToZarr

    for path in paths:
        for form, threshold in [("range", 0), ("inline", 500)]:
            refs = SingleHdf5ToZarr(str(path), inline_threshold=threshold).translate()
            text = json.dumps(refs, indent=0, sort_keys=True).replace(str(path), path.name)
            (HERE / f"{path.stem}.{form}.json").write_text(text + "\n")


def iso(values):
    out = []
    for value in values:
        if isinstance(value, np.datetime64):
            out.append(np.datetime_as_string(value, unit="s"))
        else:
            out.append(value.isoformat().replace(" ", "T"))
    return out


def main():
    only = set(sys.argv[1:])

    def wanted(name):
        return not only or name in only

    for name, files in CASES.items():
        if not wanted(name):
            continue
        paths = []
        for number, (units, calendar, times) in enumerate(files):
            path = HERE / f"{name}_{number}.nc"
            write(path, units, calendar, times, number)
            paths.append(path)
        try:
            with xr.open_mfdataset(paths, combine="by_coords", use_cftime=None) as ds:
                expected = {"time": iso(ds.time.values), "t": ds.t.values.tolist()}
        except Exception as error:  # what xarray says, for the case that must fail
            expected = {"error": f"{type(error).__name__}: {error}"}
        (HERE / f"{name}.expected.json").write_text(json.dumps(expected, indent=1) + "\n")
        kerchunk_refs(name, paths)
    for name, files in NAMED.items():
        if not wanted(name):
            continue
        paths = [HERE / file for file in files]
        for number, path in enumerate(paths):
            write_named(path, number)
        expected = named_expected(name, paths)
        (HERE / f"{name}.expected.json").write_text(json.dumps(expected, indent=1) + "\n")
        if name == "members":
            kerchunk_named(name, paths, {"member": re.compile(r"_m(\d+)\.nc$")}, ["x", "time"], {"member": "int64"})
    for name, grid, write_file, expected in [("ens", GRID, write_grid, grid_expected),
                                             ("ensdata", GRID_DATA, write_grid_data, grid_data_expected)]:
        if wanted(name):
            paths = [HERE / file for file in grid]
            for path in paths:
                write_file(path, *grid[path.name])
            (HERE / f"{name}.expected.json").write_text(json.dumps(expected(paths), indent=1) + "\n")
            # Members from the names (ens) or the data (ensdata), outside times from the data.
            members = {"member": re.compile(r"_m(\d+)_")} if name == "ens" else {"member": "data:member"}
            kerchunk_named(name, paths, members | {"time": "cf:time"}, ["x"], {"member": "int64"})
    if wanted("encodings"):
        for name, (attribute, first, second) in ENCODINGS.items():
            for number, value in enumerate([first, second]):
                write_encoding(HERE / f"encoding_{name}_{number}.nc", number, attribute, value)
    if wanted("packed"):
        paths = [HERE / f"packed_{n}.nc" for n in range(len(PACKED))]
        for number, (path, (scale, offset)) in enumerate(zip(paths, PACKED, strict=True)):
            write_packed(path, number, scale, offset)
        # xarray decodes each file with its own packing; kerchunk keeps the first file's.
        with xr.open_mfdataset(paths, combine="by_coords") as ds:
            expected = {"time": iso(ds.time.values), "t": ds.t.values.tolist()}
        (HERE / "packed.expected.json").write_text(json.dumps(expected, indent=1) + "\n")
        kerchunk_refs("packed", paths)
    if wanted("bounds"):
        paths = [HERE / f"bounds_{n}.nc" for n in range(BOUNDS)]
        for number, path in enumerate(paths):
            write_bounds(path, number)
        (HERE / "bounds.expected.json").write_text(json.dumps(bounds_expected(paths), indent=1) + "\n")
        kerchunk_refs("bounds", paths)
    if wanted("refsets"):
        paths = [HERE / f"refsets_{n}.nc" for n in range(REFSETS)]
        for number, path in enumerate(paths):
            write_refset_file(path, number)
        refsets(paths)
        (HERE / "refsets.expected.json").write_text(json.dumps(bounds_expected(paths), indent=1) + "\n")
    if wanted("merged"):
        for file, name in VARIABLES.items():
            write_variable(HERE / file, name)
        merged = [HERE / "merged_t.nc", HERE / "merged_rh.nc"]
        (HERE / "merged.expected.json").write_text(json.dumps(merged_expected(merged), indent=1) + "\n")


def kerchunk_refs(name, paths):
    from kerchunk.combine import MultiZarrToZarr
    from kerchunk.hdf import SingleHdf5ToZarr

    out = HERE / f"{name}.kerchunk.json"
    singles = [SingleHdf5ToZarr(str(p), inline_threshold=0).translate() for p in paths]
    try:
        combined = MultiZarrToZarr(
            singles, remote_protocol="file", concat_dims=["time"], coo_map={"time": "cf:time"}, inline_threshold=0
        ).translate()
    except Exception as error:
        print(f"{name}: kerchunk fails: {type(error).__name__}: {error}")
        out.unlink(missing_ok=True)
        return
    # File names, not the paths of the machine that made them.
    text = json.dumps(combined, indent=0, sort_keys=True)
    for p in paths:
        text = text.replace(str(p), p.name)
    out.write_text(text + "\n")


def kerchunk_named(name, paths, coo_map, identical, coo_dtypes=None):
    """MultiZarrToZarr along the dimensions of coo_map (outermost first; a regex reads a
    file's name), the coordinates in identical_dims, over SingleHdf5ToZarr(inline_threshold=0):
    NAME.kerchunk.json (absent where it fails)."""
    from kerchunk.combine import MultiZarrToZarr
    from kerchunk.hdf import SingleHdf5ToZarr

    out = HERE / f"{name}.kerchunk.json"
    singles = [SingleHdf5ToZarr(str(p), inline_threshold=0).translate() for p in paths]
    try:
        # indicts pairs each file's references with its name, which a regex reads.
        combined = MultiZarrToZarr(
            [str(p) for p in paths], indicts=singles, remote_protocol="file", concat_dims=list(coo_map),
            coo_map=coo_map, coo_dtypes=coo_dtypes or {}, identical_dims=identical, inline_threshold=0,
        ).translate()
    except Exception as error:
        print(f"{name}: kerchunk fails: {type(error).__name__}: {error}")
        out.unlink(missing_ok=True)
        return
    text = json.dumps(combined, indent=0, sort_keys=True)
    for p in paths:
        text = text.replace(str(p), p.name)
    out.write_text(text + "\n")


if __name__ == "__main__":
    main()
