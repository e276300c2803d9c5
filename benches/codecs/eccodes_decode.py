#!/usr/bin/env python3
"""Decode each message of FILES with eccodes, as kerchunk's GRIBCodec does (codes_new_from_message,
codes_get_array "values", missing values to NaN), and with cfgrib (xarray's engine, the whole
field loaded); print one line per file and path: `<file> <path> <median ms> <min ms>`.

    python benches/codecs/eccodes_decode.py RUNS FILES...
"""
import statistics
import sys
import time

import numpy as np


def kerchunk_codec(message):
    from kerchunk.codecs import GRIBCodec

    return GRIBCodec(var="t", dtype="float64").decode(message)


def cfgrib(path):
    import xarray as xr

    with xr.open_dataset(path, engine="cfgrib", backend_kwargs={"indexpath": ""}) as ds:
        return next(iter(ds.data_vars.values())).values


def timed(runs, work):
    work()  # warm-up
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        work()
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times), min(times)


def main():
    runs = int(sys.argv[1])
    for path in sys.argv[2:]:
        message = open(path, "rb").read()
        values = kerchunk_codec(message)
        assert np.isfinite(values).any()
        for name, work in [("kerchunk-codec", lambda: kerchunk_codec(message)), ("cfgrib", lambda: cfgrib(path))]:
            median, best = timed(runs, work)
            print(f"{path} {name} {median:.2f} {best:.2f}", flush=True)


if __name__ == "__main__":
    main()
