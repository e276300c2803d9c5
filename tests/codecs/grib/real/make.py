#!/usr/bin/env python3
"""Real GRIB files from cfgrib's test suite (ecmwf/cfgrib, tests/sample-data, Apache-2.0; see
README.md), referenced by kerchunk and decoded by eccodes, for the `grib` codec's tests.

Run from the repository root in python/tests/run.sh's virtualenv with eccodes, cfgrib and
kerchunk's GRIB dependencies added:

    python tests/codecs/grib/real/make.py

For each FILE.grib and each of its messages N (from 0):
- FILE.N.kerchunk.json: kerchunk's `scan_grib` references to the message, with `inline_threshold`
  0, made from a file holding only that message, pointed back at FILE.grib with eccodes' offset and
  length: kerchunk 0.2.10 reads a GRIB1 message's length from GRIB2's octets 13-16 (garbage), and
  never returns on alternate-scanning.grib, whose message is followed by bytes that are no message
  (its `_split_file` seeks back over them forever).
- FILE.N.npy: eccodes' values of the message (float64, NaN where the bitmap says missing), in the
  shape of kerchunk's array; checked against kerchunk's own Python path (fsspec, zarr and its
  codec).
- cases.json: for each FILE.N, the variable (cfgrib's name) the message's values are.
- messages.json: for each FILE, eccodes' `[offset, totalLength, edition]` of every message, the
  truth of the scanner's message index.
"""
import json
import pathlib
import tempfile

import eccodes
import numpy as np

HERE = pathlib.Path(__file__).resolve().parent
FILES = [
    "regular_ll_msl",
    "alternate-scanning",
    "fields_with_missing_values",
    "regular_gg_sfc",
    "cams-egg4-monthly",
    "step_60m",
    "t_on_different_level_types",
]


def messages(path):
    """(offset, length, edition, values) of every message, by eccodes."""
    out = []
    with open(path, "rb") as f:
        while (h := eccodes.codes_grib_new_from_file(f)) is not None:
            values = eccodes.codes_get_values(h).astype("f8")
            if eccodes.codes_get(h, "bitmapPresent"):
                values[eccodes.codes_get_array(h, "bitmap") == 0] = np.nan
            out.append((int(eccodes.codes_get(h, "offset", ktype=int)), eccodes.codes_get(h, "totalLength"),
                        eccodes.codes_get(h, "edition"), values))
            eccodes.codes_release(h)
    return out


def references(path, found):
    """kerchunk's references to each message, pointing into `path`."""
    from kerchunk.grib2 import scan_grib

    sets = []
    data = path.read_bytes()
    for offset, length, _, _ in found:
        with tempfile.NamedTemporaryFile(suffix=".grib") as one:
            one.write(data[offset:offset + length])
            one.flush()
            (refs,) = scan_grib(one.name, inline_threshold=0)
            text = json.dumps(refs).replace(one.name, path.name)
        refs = json.loads(text)
        for value in refs["refs"].values():
            if isinstance(value, list) and len(value) == 3:
                value[1], value[2] = offset, length
        sets.append(refs)
    return sets


def kerchunk_reads(refs, variable):
    import fsspec
    import kerchunk.codecs  # noqa: F401 - registers grib
    import zarr

    fs = fsspec.filesystem("reference", fo=refs, remote_protocol="file")
    return zarr.open_group(fs.get_mapper(""), mode="r", zarr_format=2)[variable][...]


def main():
    import os

    os.chdir(HERE)
    cases, located = {}, {}
    for name in FILES:
        path = HERE / f"{name}.grib"
        found = messages(path)
        located[f"{name}.grib"] = [[offset, length, edition] for offset, length, edition, _ in found]
        for n, (refs, (_, _, _, values)) in enumerate(zip(references(path, found), found)):
            arrays = {k.removesuffix("/.zarray"): json.loads(v) for k, v in refs["refs"].items() if k.endswith("/.zarray")}
            (variable,) = [a for a, m in arrays.items() if m["filters"] and m["filters"][0].get("var") not in
                           ("latitude", "longitude") and np.prod(m["shape"]) == values.size]
            truth = values.reshape(arrays[variable]["shape"])
            theirs = kerchunk_reads(refs, variable).astype("f8")
            # kerchunk's codec also turns a real 9999 into NaN; these files have none.
            assert np.array_equal(theirs, truth, equal_nan=True), (name, n)
            np.save(HERE / f"{name}.{n}.npy", truth)
            cases[f"{name}.{n}"] = variable
            (HERE / f"{name}.{n}.kerchunk.json").write_text(json.dumps(refs, indent=0, sort_keys=True) + "\n")
    (HERE / "cases.json").write_text(json.dumps(cases, indent=1, sort_keys=True) + "\n")
    (HERE / "messages.json").write_text(json.dumps(located, sort_keys=True) + "\n")


if __name__ == "__main__":
    main()
