"""Make the two CF conformance cases: `cf_conventions` and `cf_air`.

Ours, not from ../shared/conformance. They hold what the corpus lacks for
the CF view of issue 25 (`crates/zarrs_cf`):

- `cf_conventions/data.nc`, written here with netCDF4: packed int16 with
  `scale_factor`, `add_offset`, `_FillValue` and `missing_value`; `_Unsigned`
  bytes; a valid range; a latitude that runs north to south; a scalar
  coordinate named by a `coordinates` attribute; and time
  variables in every CF calendar (standard across 1582-10-15, gregorian,
  proleptic_gregorian, julian, noleap, 365_day, all_leap, 366_day, 360_day),
  one with a missing time.
- `cf_air/air.nc`: kerchunk's own test file (fsspec/kerchunk `tests/air.nc`,
  MIT licence; NCEP reanalysis 4x-daily air temperature, a subset of
  xarray's tutorial dataset): int16 packed with a float32 `scale_factor`,
  latitudes stored north first, hours since 1800-01-01.

For each: `refs.json` is what `SingleHdf5ToZarr(<file>, inline_threshold=0)`
returns; `expected/<name>.npy` are the stored values read from the file by
netCDF4 with masking and scaling off (never through kerchunk);
`expected/<name>.decoded.npy` is what xarray's CF decoding gives on the same
references (`xr.open_dataset("reference://", engine="zarr")` through fsspec),
as float32/float64, or, for times, ISO 8601 text (`NaT` where missing) since
cftime dates have no NumPy type. `case.json` is the manifest, in the schema
of the shared corpus.

Needs netCDF4, h5py, kerchunk 0.2.10, xarray, cftime, fsspec, zarr 3, numpy.
Run from anywhere: `python tests/data/make_cf_cases.py` (air.nc must be in
`cf_air/`; fetch it from kerchunk's repository).
"""

import hashlib
import json
import os
import sys
from importlib.metadata import version

import cftime
import netCDF4
import numpy as np
import xarray as xr
from kerchunk.hdf import SingleHdf5ToZarr

HERE = os.path.dirname(os.path.abspath(__file__))


def write_cf_conventions(path: str) -> None:
    rng = np.random.default_rng(25)
    with netCDF4.Dataset(path, "w") as ds:
        ds.Conventions = "CF-1.10"
        ds.createDimension("time", 3)
        ds.createDimension("lat", 4)
        ds.createDimension("lon", 5)
        time = ds.createVariable("time", "f8", ("time",))
        time.units = "hours since 1800-01-01 00:00:0.0"
        time.calendar = "standard"
        time[:] = [1_858_344.0, 1_858_350.0, 1_858_356.0]
        lat = ds.createVariable("lat", "f4", ("lat",))
        lat.units = "degrees_north"
        lat[:] = [60.0, 50.0, 40.0, 30.0]  # north first, as many reanalyses store it
        lon = ds.createVariable("lon", "f4", ("lon",))
        lon.units = "degrees_east"
        lon[:] = [0.0, 2.5, 5.0, 7.5, 10.0]

        height = ds.createVariable("height", "f8", ())
        height.units = "m"
        height.standard_name = "height"
        height[...] = 2.0

        packed = ds.createVariable("tas", "i2", ("time", "lat", "lon"), fill_value=np.int16(-32767))
        packed.coordinates = "height"
        packed.scale_factor = 0.01
        packed.add_offset = 273.15
        packed.missing_value = np.int16(-32766)
        packed.units = "K"
        packed.set_auto_maskandscale(False)
        raw = rng.integers(-3000, 3000, (3, 4, 5), dtype=np.int16)
        raw[0, 0, :2] = -32767
        raw[1, 2, 3] = -32766
        packed[:] = raw

        unsigned = ds.createVariable("ubyte", "i1", ("lat", "lon"), fill_value=np.int8(-1))
        unsigned._Unsigned = "true"
        unsigned.units = "1"
        unsigned.set_auto_maskandscale(False)
        values = rng.integers(-128, 127, (4, 5), dtype=np.int8)
        values[0, 0] = -1
        values[1, 1] = -128  # 128 unsigned
        unsigned[:] = values

        ranged = ds.createVariable("ranged", "f4", ("lat", "lon"))
        ranged.valid_min = np.float32(-1.0)
        ranged.valid_max = np.float32(1.0)
        ranged.set_auto_maskandscale(False)
        values = rng.uniform(-2, 2, (4, 5)).astype("f4")
        ranged[:] = values

        calendars = {
            "standard_old": ("standard", "days since 1582-10-01", [0, 3, 4, 10]),
            "gregorian": ("gregorian", "days since 1900-01-01", [0, 58, 59, 366]),
            "proleptic": ("proleptic_gregorian", "seconds since 1970-01-01T00:00:00Z", [-1, 0, 86_399, 951_782_400]),
            "julian": ("julian", "days since 1900-01-01", [0, 58, 59, 366]),
            "noleap": ("noleap", "days since 2000-01-01", [0, 58, 59, 365]),
            "day365": ("365_day", "hours since 2001-02-28", [0, 24, 48, 36]),
            "all_leap": ("all_leap", "days since 2001-01-01", [0, 58, 59, 365]),
            "day366": ("366_day", "minutes since 2001-02-28 12:00", [0, 720, 2160, 1440]),
            "day360": ("360_day", "days since 2000-01-01", [0, 29, 59, 359]),
        }
        for name, (calendar, units, numbers) in calendars.items():
            ds.createDimension(f"n_{name}", len(numbers))
            variable = ds.createVariable(f"t_{name}", "f8", (f"n_{name}",))
            variable.units = units
            variable.calendar = calendar
            variable[:] = numbers
        ds.createDimension("n_missing", 3)
        missing = ds.createVariable("t_missing", "i4", ("n_missing",), fill_value=np.int32(-999))
        missing.units = "days since 2000-01-01"
        missing.set_auto_maskandscale(False)
        missing[:] = [0, -999, 2]


def iso(value) -> str:
    """A decoded time as ISO 8601 text, as `zarrs_cf::DateTime` shows it."""
    if isinstance(value, cftime.datetime):
        text = f"{value.year:04d}-{value.month:02d}-{value.day:02d}T{value.hour:02d}:{value.minute:02d}:{value.second:02d}"
        return text + (f".{value.microsecond:06d}".rstrip("0") if value.microsecond else "")
    if np.isnat(value):
        return "NaT"
    return str(np.datetime_as_string(value, unit="s"))


def make_case(folder: str, source: str, name: str, description: str, features: list[str]) -> None:
    os.chdir(folder)
    refs = SingleHdf5ToZarr(source, inline_threshold=0).translate()
    with open("refs.json", "w") as f:
        json.dump(refs, f, indent=1)
    os.makedirs("expected", exist_ok=True)
    decoded = xr.open_dataset("reference://", engine="zarr", consolidated=False, zarr_format=2,
                              storage_options={"fo": "refs.json", "remote_protocol": "file"}, use_cftime=None,
                              decode_times=xr.coders.CFDatetimeCoder(use_cftime=None))
    arrays = []
    with netCDF4.Dataset(source) as ds:
        ds.set_auto_maskandscale(False)
        for path, variable in sorted(ds.variables.items()):
            raw = np.asarray(variable[...])
            zarray = json.loads(refs["refs"][f"{path}/.zarray"])
            zattrs = json.loads(refs["refs"].get(f"{path}/.zattrs", "{}"))
            assert raw.dtype.str == zarray["dtype"], (path, raw.dtype.str, zarray["dtype"])
            np.save(f"expected/{path}.npy", raw)
            values = decoded[path].values
            if values.dtype.kind in "Mm" or values.dtype == object:
                values = np.array([iso(v) for v in values.ravel()]).reshape(values.shape)
            np.save(f"expected/{path}.decoded.npy", values)
            chunk_keys = [k for k in refs["refs"] if k.startswith(f"{path}/") and not k.split("/")[-1].startswith(".")]
            grid = int(np.prod([-(-s // c) for s, c in zip(zarray["shape"], zarray["chunks"])]))
            arrays.append({
                "attrs": zattrs,
                "chunk_ref_kinds": {"url_range": len(chunk_keys)} if chunk_keys else {},
                "chunks": zarray["chunks"],
                "compressor": zarray["compressor"],
                "decoded_expected": {
                    "dtype": values.dtype.str,
                    "file": f"expected/{path}.decoded.npy",
                    "rule": "xarray CF decoding of the references (engine='zarr' through fsspec's ReferenceFileSystem, "
                            "mask_and_scale=True, decode_times=True); times as ISO 8601 text",
                    "sha256": hashlib.sha256(values.tobytes()).hexdigest(),
                },
                "dimension_separator": zarray.get("dimension_separator", "."),
                "dims": zattrs.get("_ARRAY_DIMENSIONS"),
                "dtype": zarray["dtype"],
                "expected": f"expected/{path}.npy",
                "expected_npy_dtype": raw.dtype.str,
                "fill_value": zarray["fill_value"],
                "filters": zarray["filters"],
                "inline_chunks": [],
                "missing_chunks": [],
                "n_chunks_grid": grid,
                "n_missing_chunks": grid - len(chunk_keys),
                "order": zarray["order"],
                "path": path,
                "sha256": hashlib.sha256(raw.tobytes()).hexdigest(),
                "shape": zarray["shape"],
                "support": "required",
            })
    names = sorted(a["path"] for a in arrays)
    case = {
        "absent_from_refs": {},
        "arrays": arrays,
        "description": description,
        "expected_unsupported": None,
        "features": features,
        "generator_versions": {p: version(p) for p in ["kerchunk", "zarr", "fsspec", "numpy", "xarray", "netCDF4",
                                                        "h5py", "cftime"]}
        | {"python": sys.version.split()[0], "netcdf-c": netCDF4.__netcdf4libversion__,
           "hdf5": netCDF4.__hdf5libversion__},
        "kerchunk_warnings": [],
        "name": name,
        "notes": ["Made by tests/data/make_cf_cases.py; not part of ../shared/conformance. 'expected' is raw stored "
                  "values (netCDF4, masking and scaling off); 'decoded_expected' is xarray's CF decoding of the "
                  "references."],
        "python_peer_details": [{"errors": [], "file": "refs.json", "notes": [], "ok": True,
                                 "xarray_arrays_checked": len(arrays), "xarray_ok": True, "zarr_ok": True}],
        "python_peer_error": None,
        "python_peer_ok": True,
        "references": [{"compression": None, "file": "refs.json", "format": "kerchunk-json-v1", "fsspec_options": {},
                        "produced_by": f"kerchunk.hdf.SingleHdf5ToZarr('{source}', inline_threshold=0).translate()"}],
        "schema_version": 1,
        "source_files": [{"file": source, "sha256": hashlib.sha256(open(source, "rb").read()).hexdigest(),
                          "size": os.path.getsize(source)}],
        "split": "public",
        "store_listing": {"arrays": names, "children": {"": names}, "groups": [""]},
        "url_note": "kerchunk was given the bare file name, so every reference URL is relative to this folder.",
    }
    json.dump(case, open("case.json", "w"), indent=1, sort_keys=True)
    print(f"{name}: {len(arrays)} arrays")


conventions = os.path.join(HERE, "cf_conventions")
os.makedirs(conventions, exist_ok=True)
write_cf_conventions(os.path.join(conventions, "data.nc"))
make_case(conventions, "data.nc", "cf_conventions",
          "CF conventions for the CF view: packing with _FillValue and missing_value, _Unsigned bytes, a valid "
          "range, latitudes north first, a scalar coordinate named by 'coordinates', and times in every CF calendar",
          ["cf-packing", "fill-value", "cf-unsigned", "cf-valid-range", "cf-calendars"])
make_case(os.path.join(HERE, "cf_air"), "air.nc", "cf_air",
          "kerchunk's own air.nc: int16 air temperature packed with a float32 scale_factor, latitudes north first, "
          "hours since 1800-01-01",
          ["cf-packing", "cf-time"])
