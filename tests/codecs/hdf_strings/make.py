#!/usr/bin/env python3
"""HDF5 variable-length strings as kerchunk's HDF5 scanner references them with
`vlen_encode="encode"` (each 16-byte heap id mapped to its string by the `fill_hdf_strings`
filter's `id_map`) and `vlen_encode="null"` (no strings kept: kerchunk's codec gives None).

kerchunk 0.2.10 (with zarr-python 3) can no longer write these arrays: zarr-python 3 refuses an
object dtype without a codec of its own ("Zarr data type resolution from object failed"), and the
scanner drops the variable with a warning. The references users hold come from kerchunk with
zarr-python 2, so this script runs in a virtualenv of its own (Python 3.11):

    python3.11 -m venv /tmp/legacy
    /tmp/legacy/bin/pip install "kerchunk==0.2.6" "zarr==2.18.7" "numcodecs==0.15.2" "numpy==2.0.2" h5py fsspec ujson
    /tmp/legacy/bin/python tests/codecs/hdf_strings/make.py

Writes strings.h5 (h5py), CASE.kerchunk.json (SingleHdf5ToZarr, inline_threshold=0, the path
replaced by the file's name) and CASE.expected.json: what fsspec + zarr 2 + kerchunk's codec read
for each string variable (null as JSON null), beside h5py's own strings (asserted equal where the
mode keeps them).
"""
import json
import pathlib

import fsspec
import h5py
import numpy as np
import zarr
from kerchunk.hdf import SingleHdf5ToZarr

HERE = pathlib.Path(__file__).resolve().parent
STRINGS = {"names": ["alpha", "beta", "gamma", "délta", ""], "units": ["m s-1"]}


def main():
    path = HERE / "strings.h5"
    with h5py.File(path, "w") as f:
        for name, values in STRINGS.items():
            f.create_dataset(name, data=np.array(values, dtype=object), dtype=h5py.string_dtype())
        f.create_dataset("x", data=np.arange(5, dtype="i4"))
    for mode in ("encode", "null"):
        refs = SingleHdf5ToZarr(str(path), vlen_encode=mode, inline_threshold=0).translate()
        fs = fsspec.filesystem("reference", fo=refs)
        group = zarr.open_group(fs.get_mapper(""), mode="r")
        read = {name: group[name][:].tolist() for name in STRINGS}
        if mode == "encode":
            assert read == STRINGS, read
        else:
            assert all(v is None for values in read.values() for v in values), read
        text = json.dumps(refs, indent=0, sort_keys=True).replace(str(path), path.name)
        (HERE / f"{mode}.kerchunk.json").write_text(text + "\n")
        (HERE / f"{mode}.expected.json").write_text(json.dumps(read, indent=1, ensure_ascii=False) + "\n")


if __name__ == "__main__":
    main()
