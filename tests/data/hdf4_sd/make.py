"""Make the `hdf4_sd` conformance case: a real HDF4 file and kerchunk's HDF4 references.

Ours, not from ../shared/conformance. It covers what kerchunk's HDF4 scanner
(`kerchunk.hdf4.HDF4ToZarr`, made for MODIS granules such as kerchunk's own
test file MOD14.hdf4) writes: chunked zlib arrays, and a scientific data set
along an unlimited dimension that was never written (MOD14's fire pixel tables
when a granule has no fire), which the scanner writes as `"shape": [0],
"chunks": [0]` (issue 9, class 10).

- `make_hdf4.c` writes `data.hdf` with the HDF4 C library's SD interface;
- `refs.json` is the map `HDF4ToZarr("data.hdf").translate()` returns, written
  as JSON (a version 0 map, relative URL);
- `expected/*.npy` are read from `data.hdf` by the HDF4 library (`hdp dumpsds`;
  shapes through pyhdf), never through kerchunk;
- fsspec + zarr must read `refs.json` as the same values (the peer's view);
- `case.json` is the manifest, in the schema of the shared corpus.

Needs gcc and Debian's libhdf4-dev and hdf4-tools (HDF4 4.2.15), and
`pip install pyhdf kerchunk==0.2.10 zarr==3.1.6 fsspec ujson numpy`.
Run from this folder: `python make.py`.
"""

import hashlib
import json
import os
import subprocess
import sys
from importlib.metadata import version

import fsspec  # noqa: F401 - the peer below opens the references through it
import kerchunk.hdf4
import numpy as np
import zarr
from kerchunk.utils import refs_as_store
from pyhdf.SD import SD, SDC

os.chdir(os.path.dirname(os.path.abspath(__file__)))
subprocess.run(["gcc", "-O1", "-Wall", "-I/usr/include/hdf", "make_hdf4.c", "-o", "/tmp/make_hdf4",
                "-lmfhdf", "-ldf"], check=True)
if os.path.exists("data.hdf"):
    os.remove("data.hdf")
subprocess.run(["/tmp/make_hdf4"], check=True)

# translate(filename=...) opens its output for reading in kerchunk 0.2.10 and
# fails, so the returned map is written here; its metadata values are bytes.
out = kerchunk.hdf4.HDF4ToZarr("data.hdf").translate()
refs = {k: v.decode() if isinstance(v, bytes) else v for k, v in out.items()}
with open("refs.json", "w") as f:
    json.dump(refs, f)

# Ground truth from the HDF4 library itself.
sd = SD("data.hdf", SDC.READ)
os.makedirs("expected", exist_ok=True)
arrays, peer_errors = [], []
group = zarr.open_group(refs_as_store("refs.json", remote_protocol="file"), mode="r", zarr_format=2)
for name in sorted(sd.datasets()):
    sds = sd.select(name)
    shape = [int(n) for n in sds.info()[2]] if isinstance(sds.info()[2], list) else [int(sds.info()[2])]
    # pyhdf reads no little-endian floats, so the values come from the HDF4
    # library's own dump; every value written is exact in its decimal form.
    dump = subprocess.run(["hdp", "dumpsds", "-d", "-n", name, "data.hdf"], check=True, capture_output=True, text=True)
    dtype = np.dtype(json.loads(refs[f"{name}/.zarray"])["dtype"])
    values = np.array([float(v) for v in dump.stdout.split()], dtype=dtype).reshape(shape)
    expected = f"expected/{name.replace(' ', '_')}.npy"
    np.save(expected, values)
    zarray = json.loads(refs[f"{name}/.zarray"])
    zattrs = json.loads(refs.get(f"{name}/.zattrs", "{}"))
    assert list(values.shape) == zarray["shape"], (name, values.shape, zarray["shape"])
    assert values.dtype.str == zarray["dtype"], (name, values.dtype.str, zarray["dtype"])
    chunk_keys = [k for k in refs if k.startswith(f"{name}/") and not k.split("/")[-1].startswith(".")]
    grid = int(np.prod([-(-s // c) if c else 0 for s, c in zip(zarray["shape"], zarray["chunks"])]))
    got = np.asarray(group[name][...])
    if got.shape != values.shape or not np.array_equal(got, values):
        peer_errors.append(f"{name}: fsspec + zarr read {got!r}")
    arrays.append({
        "attrs": zattrs,
        "chunk_ref_kinds": {"url_range": len(chunk_keys)} if chunk_keys else {},
        "chunks": zarray["chunks"],
        "compressor": zarray["compressor"],
        "dimension_separator": zarray.get("dimension_separator", "."),
        "dims": zattrs.get("_ARRAY_DIMENSIONS"),
        "dtype": zarray["dtype"],
        "expected": expected,
        "expected_npy_dtype": values.dtype.str,
        "fill_value": zarray["fill_value"],
        "filters": zarray["filters"],
        "inline_chunks": [],
        "missing_chunks": [],
        "n_chunks_grid": grid,
        "n_missing_chunks": grid - len(chunk_keys),
        "order": zarray["order"],
        "path": name,
        "sha256": hashlib.sha256(values.tobytes()).hexdigest(),
        "shape": zarray["shape"],
        "support": "required",
    })
sd.end()
if peer_errors:
    sys.exit("\n".join(peer_errors))

names = sorted(a["path"] for a in arrays)
case = {
    "absent_from_refs": {},
    "arrays": arrays,
    "description": "A real HDF4 file (SD interface) scanned by kerchunk's HDF4 scanner: chunked zlib arrays "
                   "and an empty array written as shape [0], chunks [0]",
    "expected_unsupported": None,
    "features": ["hdf4", "chunked", "zlib", "empty-dimension"],
    "generator_versions": {p: version(p) for p in ["kerchunk", "zarr", "fsspec", "numpy", "pyhdf"]}
    | {"hdf4": "4.2.15 (Debian libhdf4-dev)", "python": sys.version.split()[0]},
    "kerchunk_warnings": [],
    "name": "hdf4_sd",
    "notes": ["Made by make.py in this folder; not part of ../shared/conformance."],
    "python_peer_details": [{"errors": [], "file": "refs.json", "notes": [], "ok": True,
                             "xarray_arrays_checked": 0, "xarray_ok": None, "zarr_ok": True}],
    "python_peer_error": None,
    "python_peer_ok": True,
    "references": [{"compression": None, "file": "refs.json", "format": "kerchunk-json-v0", "fsspec_options": {},
                    "produced_by": "kerchunk.hdf4.HDF4ToZarr('data.hdf').translate(), written by json.dump"}],
    "schema_version": 1,
    "source_files": [{"file": "data.hdf", "sha256": hashlib.sha256(open("data.hdf", "rb").read()).hexdigest(),
                      "size": os.path.getsize("data.hdf")}],
    "split": "public",
    "store_listing": {"arrays": names, "children": {"": names}, "groups": [""]},
    "url_note": "kerchunk was given the bare file name, so every reference URL is relative to this folder.",
}
json.dump(case, open("case.json", "w"), indent=1, sort_keys=True)
print(f"{len(arrays)} arrays; fsspec + zarr read every one as the HDF4 library does")
