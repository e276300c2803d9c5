#!/usr/bin/env python3
"""Whether two icechunk repositories of the same references give the same bytes for the same
200 random chunks of their one array, read through icechunk-python (raw, not decoded).

    same_chunks.py OURS THEIRS ROOT
"""
import random
import sys

import icechunk as ic
import zarr


def open_store(path, root):
    storage = ic.local_filesystem_storage(path)
    config = ic.Repository.open(storage).config
    # Each container authorised as its kind needs: local folders, and HTTP hosts, with no credentials.
    prefixes = {c.url_prefix: ic.credentials.HttpAccess if c.url_prefix.startswith("http")
                else ic.credentials.LocalFileSystemAccess
                for c in (config.virtual_chunk_containers or {}).values()}
    return ic.Repository.open(storage, authorize_virtual_chunk_access=prefixes).readonly_session("main").store


def main():
    ours, theirs = (open_store(p, sys.argv[3]) for p in sys.argv[1:3])
    group = zarr.open_group(ours, mode="r")
    name, array = next(iter(group.arrays()))
    grid = [-(-n // c) for n, c in zip(array.shape, array.chunks)]
    rng = random.Random(0)
    import asyncio
    from zarr.core.buffer import default_buffer_prototype

    async def get(store, key):
        found = await store.get(key, prototype=default_buffer_prototype())
        return None if found is None else found.to_bytes()

    differ = 0
    for _ in range(200):
        key = f"{name}/c/" + "/".join(str(rng.randrange(n)) for n in grid)
        if asyncio.run(get(ours, key)) != asyncio.run(get(theirs, key)):
            differ += 1
    print(f"same chunks: {200 - differ} of 200 random chunks of {name} {array.shape} equal in both repositories")
    sys.exit(1 if differ else 0)


if __name__ == "__main__":
    main()
