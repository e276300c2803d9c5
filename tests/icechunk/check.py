#!/usr/bin/env python3
"""Every conformance case (tests/data), each of its reference files written into an icechunk
repository by `zarrs-kerchunk convert REFS icechunk://PATH`, reads back through icechunk-python
and zarr-python equal to the case's ground truth (expected/*.npy, made by h5py, netCDF4 and
xarray when the case was made), every array, exactly.

    check.py ZARRS_KERCHUNK_BINARY
"""
import json
import pathlib
import subprocess
import sys
import tempfile

import icechunk
import numpy as np
import zarr

ROOT = pathlib.Path(__file__).resolve().parents[2]


def same(found, expected):
    """Whether two arrays are equal in dtype, shape and every value (NaN equal to NaN)."""
    if found.shape != expected.shape:
        return f"shape {found.shape}, expected {expected.shape}"
    if "O" in (found.dtype.kind, expected.dtype.kind) or found.dtype.kind == "T":
        # Variable-length text: numpy's object arrays, or its StringDType.
        return None if found.tolist() == expected.tolist() else "values differ"
    if (found.dtype.kind, found.dtype.itemsize) != (expected.dtype.kind, expected.dtype.itemsize):
        return f"dtype {found.dtype}, expected {expected.dtype}"
    if expected.dtype.kind in "fc":
        equal = np.array_equal(found, expected, equal_nan=True)
    else:
        equal = np.array_equal(found, expected)
    return None if equal else "values differ"


def check(binary, case_dir, file, scratch):
    repo_dir = scratch / f"{case_dir.name}-{file}"
    made = subprocess.run([binary, "convert", str(case_dir / file), f"icechunk://{repo_dir}"],
                          capture_output=True, text=True)
    if made.returncode != 0:
        return [f"convert: {made.stderr.strip()}"]
    storage = icechunk.local_filesystem_storage(str(repo_dir))
    repo = icechunk.Repository.open(storage)
    # Each container authorised by name, as a reader must: local folders with no credentials.
    prefixes = {c.url_prefix: icechunk.credentials.LocalFileSystemAccess
                for c in (repo.config.virtual_chunk_containers or {}).values()}
    repo = icechunk.Repository.open(storage, authorize_virtual_chunk_access=prefixes)
    group = zarr.open_group(repo.readonly_session("main").store, mode="r")
    failures = []
    for entry in json.loads((case_dir / "case.json").read_text())["arrays"]:
        expected = np.load(case_dir / entry["expected"], allow_pickle=False)
        try:
            found = group[entry["path"]][...]
        except Exception as e:  # a read error is a failure, named, like a wrong value
            failures.append(f"{entry['path']}: {type(e).__name__}: {e}")
            continue
        if (why := same(np.asarray(found), expected)) is not None:
            failures.append(f"{entry['path']}: {why}")
    return failures


def main():
    binary = sys.argv[1]
    failures, checked = [], 0
    with tempfile.TemporaryDirectory() as scratch:
        for case_file in sorted((ROOT / "tests" / "data").glob("*/case.json")):
            case_dir = case_file.parent
            for reference in json.loads(case_file.read_text())["references"]:
                checked += 1
                for failure in check(binary, case_dir, reference["file"], pathlib.Path(scratch)):
                    failures.append(f"{case_dir.name}/{reference['file']}: {failure}")
    print(f"icechunk: {checked} reference files written and read back, {len(failures)} failures")
    for failure in failures:
        print("  " + failure)
    sys.exit(1 if failures or checked == 0 else 0)


if __name__ == "__main__":
    main()
