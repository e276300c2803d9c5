#!/usr/bin/env python3
"""Decode every tile kerchunk references in each TIFF with imagecodecs' numcodecs codecs (the
compressor, then the filters in reverse, as zarr does), the tiles read into memory first; print
one line per file: `<file> imagecodecs <median ms> <min ms> (<tiles> tiles)`.

    python benches/codecs/imagecodecs_decode.py RUNS REFS...
"""
import json
import statistics
import sys
import time

import imagecodecs.numcodecs
import numcodecs


def tiles(path):
    refs = json.load(open(path))
    refs = refs.get("refs", refs)
    meta = refs[".zarray"]
    meta = json.loads(meta) if isinstance(meta, str) else meta
    data = open(path.replace(".kerchunk.json", ".tif"), "rb").read()
    chunks = [data[v[1]:v[1] + v[2]] for k, v in refs.items() if isinstance(v, list)]
    compressor = numcodecs.get_codec(meta["compressor"])
    filters = [numcodecs.get_codec(f) for f in reversed(meta["filters"] or [])]
    return chunks, compressor, filters


def main():
    imagecodecs.numcodecs.register_codecs(verbose=False)
    runs = int(sys.argv[1])
    for path in sys.argv[2:]:
        chunks, compressor, filters = tiles(path)

        def work():
            for chunk in chunks:
                out = compressor.decode(chunk)
                for f in filters:
                    out = f.decode(out)

        work()
        times = []
        for _ in range(runs):
            start = time.perf_counter()
            work()
            times.append((time.perf_counter() - start) * 1000)
        print(f"{path} imagecodecs {statistics.median(times):.2f} {min(times):.2f} ({len(chunks)} tiles)")


if __name__ == "__main__":
    main()
