#!/usr/bin/env python3
"""Every conformance case (tests/data), each of its reference files written into an icechunk
repository by `zarrs-kerchunk convert REFS icechunk://PATH`, reads back through icechunk-python
and zarr-python equal to the case's ground truth (expected/*.npy, made by h5py, netCDF4 and
xarray when the case was made), every array, exactly; and so does each written again with every
chunk in a manifest of its own, committed in parts of one chunk (`--manifest-split 1
--commit-every 1`). And repositories VirtualiZarr writes of
the JSON files it can parse, imported as references (`convert icechunk://VZ refs.json`), read
the same ground truth.

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


def convert(binary, source, output, *options):
    """`zarrs-kerchunk convert SOURCE OUTPUT [OPTIONS]`; its error, or None."""
    command = [binary, "convert", str(source), str(output), *options]
    made = subprocess.run(command, capture_output=True, text=True)
    return None if made.returncode == 0 else f"convert {source} {output}: {made.stderr.strip()}"


def check(binary, case_dir, references, repo_dir, *options):
    """The references written into a repository at `repo_dir` by the command line (with
    `options`), read back through icechunk-python against the case's ground truth: the failures."""
    if (error := convert(binary, references, f"icechunk://{repo_dir}", *options)) is not None:
        return [error]
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


# The JSON files of the corpus VirtualiZarr 2.8 writes into repositories. The others it refuses:
# complex fill values (exotic_dtypes), version 0 files and hdf4_sd's v0-shaped one ("refs"),
# one dimension name of two sizes (hdf5_contiguous, inline_mixed, zstd_json_v1), `gen` templates
# (v1_templates_gen), zstd-compressed JSON, and cf_conventions' all_leap calendar. It writes
# nc4_deflate_shuffle/refs.v1.json's URLs with their templates unexpanded (`{{root}}/data.nc`),
# which no reader can read: a repository that is wrong before it is imported. Of
# hdf5_nested_groups it writes the root's arrays only (its dataset holds no nested groups).
VIRTUALIZARR = ["cf_air/refs.json", "mzz_time_concat/refs.json",
                "nc4_deflate_shuffle/refs.json",
                "nc4_fill_missing/refs.json", "nc4_scalar_coords_bigendian/refs.json",
                "netcdf3_classic/refs.json", "parquet_fastparquet/refs.json"]


def virtualizarr_repository(references, repo_dir):
    """The repository VirtualiZarr writes of `references` (its kerchunk parser, then
    `vz.to_icechunk`), with a container for their folder."""
    from obspec_utils.registry import ObjectStoreRegistry
    from obstore.store import LocalStore
    from virtualizarr.parsers import KerchunkJSONParser

    folder = f"file://{references.parent}/"
    registry = ObjectStoreRegistry({"file://": LocalStore()})
    dataset = KerchunkJSONParser(fs_root=folder)(f"file://{references}", registry).to_virtual_dataset()
    config = icechunk.RepositoryConfig.default()
    config.set_virtual_chunk_container(
        icechunk.VirtualChunkContainer(folder, icechunk.local_filesystem_store(str(references.parent))))
    repo = icechunk.Repository.create(icechunk.local_filesystem_storage(str(repo_dir)), config=config,
                                      authorize_virtual_chunk_access={
                                          folder: icechunk.credentials.LocalFileSystemAccess})
    session = repo.writable_session("main")
    dataset.vz.to_icechunk(session.store)
    session.commit("written by VirtualiZarr")


def check_imported(binary, case_dir, file, scratch):
    """A repository VirtualiZarr wrote, read back by `convert icechunk://VZ refs.json` (our import):
    those references, written into a repository again, read the case's ground truth."""
    name = f"{case_dir.name}-{file}"
    virtualizarr_repository(case_dir / file, scratch / f"vz-{name}")
    imported = scratch / f"imported-{name}.json"
    if (error := convert(binary, f"icechunk://{scratch / f'vz-{name}'}", imported)) is not None:
        return [error]
    return check(binary, case_dir, imported, scratch / f"again-{name}")


def main():
    binary = sys.argv[1]
    failures, checked = [], 0
    with tempfile.TemporaryDirectory() as scratch:
        for case_file in sorted((ROOT / "tests" / "data").glob("*/case.json")):
            case_dir = case_file.parent
            for reference in json.loads(case_file.read_text())["references"]:
                checked += 1
                file, scratch_dir = reference["file"], pathlib.Path(scratch)
                repo_dir = scratch_dir / f"{case_dir.name}-{file}"
                for failure in check(binary, case_dir, case_dir / file, repo_dir):
                    failures.append(f"{case_dir.name}/{file}: {failure}")
                split = ("--manifest-split", "1", "--commit-every", "1")
                split_dir = repo_dir.with_name(repo_dir.name + "-split")
                for failure in check(binary, case_dir, case_dir / file, split_dir, *split):
                    failures.append(f"{case_dir.name}/{file}, split and in parts: {failure}")
        for name in VIRTUALIZARR:
            checked += 1
            case_dir, file = ROOT / "tests" / "data" / name.split("/")[0], name.split("/")[1]
            for failure in check_imported(binary, case_dir, file, pathlib.Path(scratch)):
                failures.append(f"{name}, as VirtualiZarr wrote it and we imported it: {failure}")
    print(f"icechunk: {checked} reference files written and read back, each in one commit and split in "
          f"parts (VirtualiZarr's repositories of {len(VIRTUALIZARR)} of them imported), "
          f"{len(failures)} failures")
    for failure in failures:
        print("  " + failure)
    sys.exit(1 if failures or checked == 0 else 0)


if __name__ == "__main__":
    main()
