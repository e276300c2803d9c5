#!/usr/bin/env python3
"""Files of uneven length combined (tests/scan/uneven, issue 52) read by zarr-python 3.4: every
case scanned by `zarrs-kerchunk scan FILES --concat time` (chunks as ranges of the files), then
read through fsspec's ReferenceFileSystem and zarr-python with `array.rectilinear_chunks` on, and
through the package's xarray engine, each equal to xarray's own concatenation of the files
(CASE.expected.json): t's values exactly, the times as dates; and each set exported into an
icechunk repository (`convert SET icechunk://REPO`), read by icechunk-python. The sets without a padded chunk
(one chunk a file) are read with nothing of the package's imported (each in a process of its
own, which checks that it never loaded `zarrs_kerchunk`); those with one need its
`zarrs_kerchunk.crop` codec, which zarr-python finds through the package's entry point.

    uneven.py ZARRS_KERCHUNK_BINARY    (in tests/icechunk/run.sh's virtualenv, the package installed)
"""
import json
import pathlib
import subprocess
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parents[2]
DATA = ROOT / "tests" / "scan" / "uneven"
# case -> (files, whether a file's last chunk is stored whole in the middle of the array)
CASES = {"whole": (3, False), "classic": (3, False), "padded": (3, True), "later": (3, True), "leap": (2, True)}


def read(references, engine):
    """t's values and the times of the set at `references`, read by zarr-python through fsspec
    (`engine` "fsspec"), by the package's xarray engine ("zarrs_kerchunk"), or by icechunk-python
    from the repository `references` names ("icechunk", its virtual chunks' folder authorised)."""
    import fsspec
    import xarray as xr
    import zarr

    if engine == "icechunk":
        import icechunk

        zarr.config.set({"array.rectilinear_chunks": True})
        storage = icechunk.local_filesystem_storage(str(references))
        access = {f"file://{DATA}/": icechunk.credentials.LocalFileSystemAccess}
        repo = icechunk.Repository.open(storage, authorize_virtual_chunk_access=access)
        ds = xr.open_zarr(repo.readonly_session("main").store, zarr_format=3, consolidated=False)
    elif engine == "fsspec":
        zarr.config.set({"array.rectilinear_chunks": True})
        store = zarr.storage.FsspecStore(fsspec.filesystem("reference", fo=str(references)), read_only=True, path="")
        ds = xr.open_zarr(store, zarr_format=3, consolidated=False)
    else:
        ds = xr.open_dataset(references, engine="zarrs_kerchunk")
    times = [str(t)[:19] for t in ds.time.values]
    return ds.t.values, times, list(ds.t.dims)


def differences(references, case, engine):
    """How the set read by `engine` differs from xarray's concatenation of the files: a list."""
    import numpy as np

    expected = json.loads((DATA / f"{case}.expected.json").read_text())
    values, times, dims = read(references, engine)
    truth = np.array(expected["t"], dtype="f4")
    found = []
    if values.dtype != truth.dtype or values.shape != truth.shape or not np.array_equal(values, truth):
        found.append(f"t differs from xarray's ({values.dtype} {values.shape})")
    if times != expected["time"]:
        found.append("the times differ from xarray's")
    if dims != expected["dims"]:
        found.append(f"t's dimensions are {dims}, not {expected['dims']}")
    return found


def alone(references, case):
    """`differences` by fsspec and zarr-python in a process of its own, which must never import
    the package: the unpadded form is read with nothing of ours."""
    code = (
        "import sys, json; sys.path.insert(0, %r); import uneven; "
        "found = uneven.differences(%r, %r, 'fsspec'); "
        "found += ['zarrs_kerchunk was imported'] if 'zarrs_kerchunk' in sys.modules else []; "
        "print(json.dumps(found))"
    ) % (str(pathlib.Path(__file__).parent), str(references), case)
    done = subprocess.run([sys.executable, "-W", "ignore", "-c", code], capture_output=True, text=True)
    if done.returncode != 0:
        return [f"the reading process failed: {done.stderr.strip()[-800:]}"]
    return json.loads(done.stdout)


def main():
    binary = sys.argv[1]
    failures = []
    with tempfile.TemporaryDirectory() as tmp:
        for case, (count, padded) in CASES.items():
            references = pathlib.Path(tmp) / f"{case}.json"
            files = [str(DATA / f"{case}_{n}.nc") for n in range(count)]
            command = [binary, "scan", *files, "--concat", "time", "--inline-threshold", "0", "-o", str(references)]
            made = subprocess.run(command, capture_output=True, text=True)
            if made.returncode != 0:
                failures.append(f"{case}: scan: {made.stderr.strip()}")
                continue
            fsspec_found = differences(references, case, "fsspec") if padded else alone(references, case)
            failures += [f"{case} (fsspec, zarr-python): {found}" for found in fsspec_found]
            failures += [f"{case} (engine): {found}" for found in differences(references, case, "zarrs_kerchunk")]
            # Exported into an icechunk repository (`convert`), read by icechunk-python.
            repository = pathlib.Path(tmp) / f"{case}.icechunk"
            exported = subprocess.run([binary, "convert", str(references), f"icechunk://{repository}"],
                                      capture_output=True, text=True)
            if exported.returncode != 0:
                failures.append(f"{case}: convert to icechunk: {exported.stderr.strip()}")
            else:
                failures += [f"{case} (icechunk): {found}" for found in differences(repository, case, "icechunk")]
            print(f"uneven: {case}: {'padded' if padded else 'unpadded'}, read by zarr-python, the engine and icechunk",
                  file=sys.stderr)
    for failure in failures:
        print(f"uneven: {failure}", file=sys.stderr)
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
