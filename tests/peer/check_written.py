"""Check that the references zarrs_kerchunk writes open with the real Python peer.

Usage: python check_written.py OUT

OUT holds one folder per conformance case (made by run.sh): the case's source
files, its `case.json` and `expected/`, and the reference files our converter
wrote, named `written*`. Every written file is opened the way users open them,
with the case folder as working directory (the references are relative):

- JSON: fsspec `ReferenceFileSystem` (via `kerchunk.utils.refs_as_store`) + zarr 3;
- parquet: the same (fsspec picks `LazyReferenceMapper` for a parquet root), and
  `LazyReferenceMapper` explicitly with each engine, fastparquet and pyarrow.

Every array of the case is read in full and compared exactly (NaN-aware) with
the expected values. A folder without `case.json` holds NetCDF-3 files that
`zarrs-kerchunk scan` made references for (`written_scan_*`), checked against
the ground truth beside them. Exits non-zero, listing every failure, if anything differs.
"""

import json
import os
import sys

import fsspec
import numpy as np
import pandas as pd
import zarr
from fsspec.implementations.reference import LazyReferenceMapper
from kerchunk.utils import refs_as_store

# With pandas 3's string inference fsspec sees null parquet paths as NaN and fails (conformance README).
pd.options.future.infer_string = False


def openers(name):
    """(label, store factory) for each way a peer opens the written file `name`."""
    if name.endswith(".parq"):
        yield "ReferenceFileSystem", lambda: refs_as_store(name, remote_protocol="file")
        for engine in ["fastparquet", "pyarrow"]:
            def lazy(engine=engine):
                mapper = LazyReferenceMapper(name, fs=fsspec.filesystem("file"), engine=engine)
                return refs_as_store(mapper, remote_protocol="file")
            yield f"LazyReferenceMapper[{engine}]", lazy
    else:
        options = {"target_options": {"compression": "zstd"}} if name.endswith(".zst") else {}
        yield "ReferenceFileSystem", lambda: refs_as_store(name, remote_protocol="file", **options)


def compare(case, entry, got):
    expected = np.load(entry["expected"])
    if entry["dtype"] == "|O":
        want = entry.get("expected_values_json")
        values = got.ravel().tolist()
        if want is not None and values != want and values != [w for w in np.asarray(want).ravel().tolist()]:
            return f"values differ: {values[:5]} vs {want[:5]}"
        return None
    if got.shape != expected.shape:
        return f"shape {got.shape} != {expected.shape}"
    nan = got.dtype.kind in "fc"
    if not np.array_equal(got.astype(expected.dtype), expected, equal_nan=nan):
        return "values differ"
    return None


def check_reads(label_of, written, arrays, failures):
    """Open every file in `written` each way a peer opens it and read each of `arrays`,
    (path, compare) pairs where compare(got) returns a problem or None; returns the reads made."""
    checked = 0
    for name in written:
        for label, open_store in openers(name):
            try:
                group = zarr.open_group(open_store(), mode="r", zarr_format=2)
            except Exception as e:  # noqa: BLE001 - any failure to open is a finding
                failures.append(f"{label_of(name)} [{label}]: open: {type(e).__name__}: {e}")
                continue
            for path, compare_with in arrays(name):
                try:
                    problem = compare_with(np.asarray(group[path][...]))
                except Exception as e:  # noqa: BLE001
                    problem = f"{type(e).__name__}: {e}"
                if problem:
                    failures.append(f"{label_of(name)} [{label}] {path}: {problem}")
                checked += 1
    return checked


def check_case(folder):
    case = json.load(open(os.path.join(folder, "case.json")))
    failures = []
    os.chdir(folder)
    written = sorted(n for n in os.listdir(".") if n.startswith("written"))
    arrays = [(entry["path"], lambda got, entry=entry: compare(case, entry, got)) for entry in case["arrays"]]
    checked = check_reads(lambda name: f"{case['name']}/{name}", written, lambda name: arrays, failures)
    return failures, checked


def check_scanned(folder):
    """A folder of files `scan` read (no case.json): `written_scan_<stem>.json` and `.parq` are
    the references made from `<stem>.nc` (or from `<stem>`, a file name with its extension), and
    `<stem>.<variable>.npy` the ground truth netCDF4 or h5py read (`~` for `/` in the variable's
    path), or `<stem>.<variable>.json` for variable-length strings. In `scan_hdf5_plugins`,
    imagecodecs' codecs read HDF5's LZ4 and bitshuffle plugins."""
    if folder.endswith("scan_hdf5_plugins"):
        # HDF5's LZ4 and bitshuffle plugins are referenced under imagecodecs' ids.
        import imagecodecs.numcodecs

        imagecodecs.numcodecs.register_codecs(verbose=False)
    failures = []
    os.chdir(folder)
    written = sorted(n for n in os.listdir(".") if n.startswith("written_scan_"))

    def same_as(expected):
        def compare_with(got):
            if got.shape == expected.shape and np.array_equal(got.astype(expected.dtype), expected):
                return None
            return f"{got.shape} {got.ravel()[:5]} != {expected.shape} {expected.ravel()[:5]}"
        return compare_with

    def same_strings(expected):
        def compare_with(got):
            got = [str(v) for v in got.ravel().tolist()]
            return None if got == expected else f"{got[:5]} != {expected[:5]}"
        return compare_with

    def arrays(name):
        stem = name[len("written_scan_"):].removesuffix(".json").removesuffix(".parq")
        out = []
        for truth in sorted(n for n in os.listdir(".") if n.startswith(stem + ".")):
            variable, extension = os.path.splitext(truth[len(stem) + 1:])
            path = variable.replace("~", "/")
            if extension == ".npy":
                out.append((path, same_as(np.load(truth))))
            elif extension == ".json" and not truth.startswith("written"):
                out.append((path, same_strings(json.load(open(truth)))))
        return out

    checked = check_reads(lambda name: f"scan/{name}", written, arrays, failures)
    return failures, checked


# Lossy TIFF codecs, and how far imagecodecs may be from rasterio's truth (tests/codecs/tiff/README.md).
def lossy(case):
    """JPEG (GDAL's and tifffile's) and lossy WebP: within 4 of rasterio's values."""
    return case.startswith("jpeg_") or case == "webp_lossy"


def worst_difference(ours, theirs):
    """The largest absolute difference of two arrays: None for other shapes, NaN where one holds
    NaN and the other does not (NaN in both agrees), so that `not worst <= bound` catches both;
    numpy's max of differences would be NaN, and `NaN > bound` is false."""
    if ours.shape != theirs.shape:
        return None
    a, b = ours.astype(float), theirs.astype(float)
    if not np.array_equal(np.isnan(a), np.isnan(b)):
        return float("nan")
    differences = np.abs(a - b)[~np.isnan(a)]
    return float(differences.max()) if differences.size else 0.0


def check_codecs(folder):
    """kerchunk's references to GRIB2 (`codecs_grib`) or TIFF (`codecs_tiff`) files as `convert`
    wrote them (`written_<case>.*`), read with kerchunk's `grib` codec (eccodes) and imagecodecs'
    codecs: GRIB's `t` equal to `<case>.npy` (NaN where missing) and a projected grid's latitude
    and longitude within 1e-9 degrees of eccodes' (kerchunk's 1-D ones, of its first column and
    row); a TIFF's root array, band first, equal to
    rasterio's `<case>.npy` (within 4 units for the lossy codecs)."""
    import imagecodecs.numcodecs
    import kerchunk.codecs  # noqa: F401 - registers the grib codec

    imagecodecs.numcodecs.register_codecs(verbose=False)
    failures = []
    os.chdir(folder)
    written = sorted(n for n in os.listdir(".") if n.startswith("written_"))
    tiff = folder.endswith("codecs_tiff")

    def band_first(got, name):
        refs = json.load(open(f"{name}.kerchunk.json"))
        attrs = refs.get("refs", refs)[".zattrs"]
        axes = (json.loads(attrs) if isinstance(attrs, str) else attrs)["_ARRAY_DIMENSIONS"]
        return got[None] if axes == ["Y", "X"] else np.moveaxis(got, -1, 0) if axes == ["Y", "X", "S"] else got

    checked = 0
    for name in written:
        case = name[len("written_"):].split(".")[0]
        for label, open_store in openers(name):
            problem = None
            try:
                store = open_store()
                if tiff:
                    got = band_first(np.asarray(zarr.open_array(store, mode="r", zarr_format=2)[...]), case)
                    truth = np.load(f"{case}.npy")
                    far = worst_difference(got, truth)
                    if far is None or not far <= (4 if lossy(case) else 0):
                        problem = f"{got.shape} vs {truth.shape}, {far} apart"
                else:
                    group = zarr.open_group(store, mode="r", zarr_format=2)
                    got, truth = np.asarray(group["t"][...]), np.load(f"{case}.npy")
                    if not np.array_equal(got.astype("f8"), truth, equal_nan=True):
                        problem = "t differs"
                    for coordinate in ("latitude", "longitude"):
                        if os.path.exists(f"{case}.{coordinate}.npy"):
                            theirs = np.load(f"{case}.{coordinate}.npy")
                            ours = np.asarray(group[coordinate][...])
                            if ours.ndim == 1 and theirs.ndim == 2:
                                # kerchunk's 1-D coordinates (Mercator, Gaussian, space view grids):
                                # the first column's latitudes and the first row's longitudes.
                                theirs = theirs[:, 0] if coordinate == "latitude" else theirs[0]
                            far = worst_difference(ours, theirs)
                            if far is None or not far <= 1e-9:
                                problem = f"{coordinate} differs ({far} apart)"
            except Exception as e:  # noqa: BLE001 - any failure to read is a finding
                problem = f"{type(e).__name__}: {e}"
            if problem:
                failures.append(f"{os.path.basename(folder)}/{name} [{label}]: {problem}")
            checked += 1
    return failures, checked


def main():
    out = os.path.abspath(sys.argv[1])
    failures, checked = [], 0
    for name in sorted(os.listdir(out)):
        folder = os.path.join(out, name)
        if name.startswith("codecs_"):
            check = check_codecs
        elif os.path.exists(os.path.join(folder, "case.json")):
            check = check_case
        else:
            check = check_scanned
        found, n = check(folder)
        failures += found
        checked += n
    for failure in failures:
        print("FAIL", failure)
    print(f"{checked} array reads checked, {len(failures)} failures")
    sys.exit(1 if failures or not checked else 0)


if __name__ == "__main__":
    main()
