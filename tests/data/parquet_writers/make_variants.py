"""Write the parquet writer variants of the `parquet_fastparquet` case.

The same references (`../parquet_fastparquet/refs.json`, made by kerchunk from
`data.nc`) are written by each writer a reader meets in the wild, and each
result is checked key by key against the JSON with fsspec's own
`LazyReferenceMapper`:

- refs.pyarrow.parq        fsspec LazyReferenceMapper, pyarrow engine, record_size 10:
                           `path` as large_string, all-null columns with the NULL type
- refs.pyarrow100.parq     the same with record_size 100: `path` dictionary-encoded
- refs.fastparquet100.parq fastparquet engine, record_size 100: `path` categorical
- refs.legacy.parq         kerchunk's 2023 layout, written here with pyarrow, record_size 7:
                           1-column (`raw` only) files where every row is inline,
                           3-column (`path`, `offset`, `size`) files where none is,
                           and the last file of each array cut short instead of padded

Run from this folder with the versions pinned in `case.json` (see `generator_versions`).
"""

import base64
import json
import os
import shutil
import sys

import fsspec
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
from fsspec.implementations.reference import LazyReferenceMapper

HERE = os.path.dirname(os.path.abspath(__file__))
REFS = json.load(open(os.path.join(HERE, "..", "parquet_fastparquet", "refs.json")))["refs"]


def decoded(value):
    """A JSON reference value as fsspec serves it."""
    if isinstance(value, str):
        return base64.b64decode(value[7:]) if value.startswith("base64:") else value.encode()
    return value


def write_with_fsspec(name, engine, record_size):
    root = os.path.join(HERE, name)
    fs = fsspec.filesystem("file")
    out = LazyReferenceMapper.create(root, fs=fs, record_size=record_size, engine=engine)
    for key in sorted(REFS):
        out[key] = REFS[key]
    out.flush()


def write_legacy(name, record_size):
    root = os.path.join(HERE, name)
    shutil.rmtree(root, ignore_errors=True)
    os.makedirs(root)
    metadata = {k: (json.loads(v) if isinstance(v, str) else v) for k, v in REFS.items() if "/.z" in k or k.startswith(".z")}
    with open(os.path.join(root, ".zmetadata"), "w") as f:
        json.dump({"metadata": metadata, "record_size": record_size}, f)
    for key in (k for k in metadata if k.endswith("/.zarray")):
        field = key[: -len("/.zarray")]
        zarray = metadata[key]
        grid = [-(-s // c) for s, c in zip(zarray["shape"], zarray["chunks"])] or [1]
        total = 1
        for n in grid:
            total *= n
        keys = []
        for linear in range(total):
            index, rest = [], linear
            for n in reversed(grid):
                index.append(rest % n)
                rest //= n
            keys.append(f"{field}/{'.'.join(map(str, reversed(index))) if zarray['shape'] else '0'}")
        os.makedirs(os.path.join(root, field), exist_ok=True)
        for record in range(-(-total // record_size)):
            rows = [REFS.get(k) for k in keys[record * record_size : (record + 1) * record_size]]
            if all(r is None for r in rows):
                continue
            inline = [isinstance(r, str) for r in rows]
            if all(inline):
                table = pa.table({"raw": pa.array([decoded(r) for r in rows], pa.binary())})
            elif not any(inline):
                table = pa.table({
                    "path": pa.array([r[0] if r else None for r in rows], pa.string()),
                    "offset": pa.array([r[1] if r and len(r) > 1 else 0 for r in rows], pa.int64()),
                    "size": pa.array([r[2] if r and len(r) > 1 else 0 for r in rows], pa.int64()),
                })
            else:
                table = pa.table({
                    "path": pa.array([r[0] if isinstance(r, list) else None for r in rows], pa.string()),
                    "offset": pa.array([r[1] if isinstance(r, list) and len(r) > 1 else 0 for r in rows], pa.int64()),
                    "size": pa.array([r[2] if isinstance(r, list) and len(r) > 1 else 0 for r in rows], pa.int64()),
                    "raw": pa.array([decoded(r) if isinstance(r, str) else None for r in rows], pa.binary()),
                })
            pq.write_table(table, os.path.join(root, field, f"refs.{record}.parq"), compression="zstd")


def check(name, engine):
    """Every key of the JSON reads the same through fsspec's LazyReferenceMapper."""
    mapper = LazyReferenceMapper(os.path.join(HERE, name), fs=fsspec.filesystem("file"), engine=engine)
    for key, value in REFS.items():
        if "/.z" in key or key.startswith(".z"):
            continue
        got = mapper[key]
        want = decoded(value)
        if isinstance(want, list):
            got = list(got)
        assert got == want, (name, key, got, want)
    print(f"{name}: {sum(1 for k in REFS if '/.z' not in k and not k.startswith('.z'))} chunk keys match", file=sys.stderr)


write_with_fsspec("refs.pyarrow.parq", "pyarrow", 10)
write_with_fsspec("refs.pyarrow100.parq", "pyarrow", 100)
write_with_fsspec("refs.fastparquet100.parq", "fastparquet", 100)
write_legacy("refs.legacy.parq", 7)
# Written with pandas 3's defaults (so pyarrow stores large_string); read back the way fsspec
# expects, since it sees null strings as NaN under pandas 3's string inference (conformance README).
pd.options.future.infer_string = False
for name, engine in [("refs.pyarrow.parq", "pyarrow"), ("refs.pyarrow100.parq", "pyarrow"),
                     ("refs.fastparquet100.parq", "fastparquet"), ("refs.legacy.parq", "pyarrow")]:
    check(name, engine)

# The manifest: the parquet_fastparquet case's arrays and listing, with these reference files.
case = json.load(open(os.path.join(HERE, "..", "parquet_fastparquet", "case.json")))
versions = {m: __import__(m).__version__ for m in ["fsspec", "pandas", "pyarrow", "fastparquet", "kerchunk"]}
case.update(
    name="parquet_writers",
    description="The parquet_fastparquet references written by every writer variant a reader meets (make_variants.py)",
    generator_versions={**case["generator_versions"], **versions},
    python_peer_details=[],
    notes=[__doc__.strip()],
    references=[
        {"file": name, "format": "kerchunk-parquet", "compression": None, "fsspec_options": {},
         "lazy_reference_mapper_engine": engine, "produced_by": "make_variants.py"}
        for name, engine in [("refs.pyarrow.parq", "pyarrow"), ("refs.pyarrow100.parq", "pyarrow"),
                             ("refs.fastparquet100.parq", "fastparquet"), ("refs.legacy.parq", "pyarrow")]
    ],
)
with open(os.path.join(HERE, "case.json"), "w") as f:
    json.dump(case, f, indent=1, sort_keys=True)
