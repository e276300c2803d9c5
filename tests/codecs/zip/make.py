#!/usr/bin/env python3
"""Chunks in a zip archive's DEFLATE members, referenced as kerchunk references them: kerchunk's
`utils.dereference_archives` points a compressed member's reference at its local file header
(header, file name, extra field and the compressed bytes) and leaves it to kerchunk's `deflate`
codec (`kerchunk.codecs.DeflateCodec`), which reads the header before inflating.

Run from the repository root in python/tests/run.sh's virtualenv (kerchunk 0.2.10, zarr 3):

    python tests/codecs/zip/make.py

Writes chunks.zip (two members of 3 x 4 int32 each: DEFLATE, one with an extra field, and one
stored), refs.kerchunk.json (version 1: `zip://` references dereferenced by kerchunk, the
compressed array given the `deflate` codec as its compressor) and values.npy (the values
written). Asserts that fsspec + zarr + kerchunk's codec read them (registered by hand: kerchunk
0.2.10 does not register `deflate`).
"""
import json
import pathlib
import zipfile

import numpy as np

HERE = pathlib.Path(__file__).resolve().parent


def main():
    from kerchunk.utils import dereference_archives

    values = np.arange(24, dtype="<i4").reshape(6, 4) * 1000 - 7
    path = HERE / "chunks.zip"
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("a/0.0", values[:3].tobytes(), compress_type=zipfile.ZIP_DEFLATED)
        member = zipfile.ZipInfo("a/1.0")
        member.extra = b"\xca\xfe\x04\x00abcd"  # an extra field the header says to skip
        archive.writestr(member, values[3:].tobytes(), compress_type=zipfile.ZIP_DEFLATED)
        archive.writestr("b/0", values[0].tobytes(), compress_type=zipfile.ZIP_STORED)
    meta = {"shape": [6, 4], "chunks": [3, 4], "dtype": "<i4", "fill_value": 0, "order": "C",
            "compressor": {"id": "deflate"}, "filters": None, "zarr_format": 2}
    meta_b = {**meta, "shape": [4], "chunks": [4], "compressor": None}
    refs = {
        ".zgroup": json.dumps({"zarr_format": 2}),
        "a/.zarray": json.dumps(meta),
        "a/.zattrs": json.dumps({"_ARRAY_DIMENSIONS": ["y", "x"]}),
        "a/0.0": [f"zip://a/0.0::{path}"],
        "a/1.0": [f"zip://a/1.0::{path}"],
        "b/.zarray": json.dumps(meta_b),
        "b/.zattrs": json.dumps({"_ARRAY_DIMENSIONS": ["x"]}),
        "b/0": [f"zip://b/0::{path}"],
    }
    refs = dereference_archives(refs)
    np.save(HERE / "values.npy", values)

    import fsspec
    import kerchunk.codecs
    import numcodecs
    import zarr

    # kerchunk 0.2.10 defines the codec but registers it neither by entry point nor on import.
    numcodecs.register_codec(kerchunk.codecs.DeflateCodec)
    fs = fsspec.filesystem("reference", fo={"version": 1, "refs": refs}, remote_protocol="file")
    group = zarr.open_group(fs.get_mapper(""), mode="r", zarr_format=2)
    assert np.array_equal(group["a"][:], values)
    assert np.array_equal(group["b"][:], values[0])
    text = json.dumps({"version": 1, "refs": refs}, indent=0, sort_keys=True).replace(str(path), path.name)
    (HERE / "refs.kerchunk.json").write_text(text + "\n")


if __name__ == "__main__":
    main()
