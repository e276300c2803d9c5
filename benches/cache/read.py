"""Read the chunks of `keys.json` one after another, as a notebook or a plot reads scattered
chunks, through one engine and its disk cache; check every chunk against data.bin, read locally;
print one JSON line.

    python read.py ENGINE CACHE_DIR FOLDER [MODE]

MODE `one` (the default): each chunk asked for when the last has come, as a notebook or a plot
reads; `batch`: all of them asked for at once, as a Dask task or an array selection reads
(ours: `get_many`; fsspec: `cat` of the list).

ENGINE: `ours` (zarrs_kerchunk's ReferenceStore with `cache=CACHE_DIR`), `blockcache` or
`simplecache` (fsspec's ReferenceFileSystem over HTTP through that cache, `cache_storage=CACHE_DIR`,
at its defaults). FOLDER holds refs.json, keys.json and data.bin (make.py)."""

import json
import os
import sys
import time

import numpy as np

engine, cache, folder = sys.argv[1], sys.argv[2], sys.argv[3]
mode = sys.argv[4] if len(sys.argv) > 4 else "one"
refs = os.path.join(folder, "refs.json")
keys = json.load(open(os.path.join(folder, "keys.json")))
references = json.load(open(refs))
t0 = time.perf_counter()
if engine == "ours":
    from zarrs_kerchunk import ReferenceStore

    import asyncio

    store = ReferenceStore(refs, cache=cache)
    read = store._handle.get_sync

    async def _many(keys):
        return await store._handle.get_many([(key, None) for key in keys])

    def read_many(keys):
        return asyncio.run(_many(keys))
else:
    import fsspec

    # The references' http:// URLs read through the caching file system, as fsspec's docs chain them.
    remote = fsspec.filesystem(engine, target_protocol="http", cache_storage=cache)
    fs = fsspec.filesystem("reference", fo=refs, fs={"http": remote})
    read = fs.cat_file

    def read_many(keys):
        got = fs.cat(keys)
        return [got[key] for key in keys]
opened = time.perf_counter()
chunks = read_many(keys) if mode == "batch" else [read(key) for key in keys]
done = time.perf_counter()
wrong = 0
with open(os.path.join(folder, "data.bin"), "rb") as data:
    for key, got in zip(keys, chunks):
        _, offset, length = references[key]
        data.seek(offset)
        wrong += bytes(got) != data.read(length)
print(json.dumps({"engine": engine, "mode": mode, "chunks": len(keys), "open_s": round(opened - t0, 3),
                  "read_s": round(done - opened, 3), "wrong": wrong}))
