#!/usr/bin/env python3
"""Issue 23's workloads through xarray (with Dask), one workload per process, one JSON line of
in-process timings on stdout (the convention of ../../../shared/bench/peer_bench.py, whose
`repeat` harness times these runs as whole processes).

Readers (--reader):
  engine    xr.open_dataset(location, engine="zarrs_kerchunk"): our store, chunks decoded in Rust
  store     xarray's zarr engine over zarrs_kerchunk.ReferenceStore (zarr-python decodes)
  fsspec    xarray's zarr engine over fsspec's ReferenceFileSystem (kerchunk.utils.refs_as_store)
  virtualizarr  xarray's zarr engine over VirtualiZarr's ManifestStore (obstore), as
            ../../../shared/bench/peers/vz_peer.py builds it (peers venv, Python 3.12)
  icechunk  xarray's zarr engine over an icechunk session's store, the repository converted from
            the same references by `icechunk_peer.py prepare` (peers venv)

Workloads (corpus of make_synthetic.py in --root):
  open-json N          open refs_1eK_v0.json as a Dataset (open_s)
  open-parquet N       open refs_1eK.parq (open_s)
  mean [--zlib] [--http]   mean of the whole 1 GiB array `data`, chunks="auto" (xr.open_zarr's
                       default) and dask's threads (read_s)
  points K [--zlib] [--http]  K random point selections (vectorized isel, no dask) (read_s)
  cluster-mean [--zlib]    the mean on a 2-process LocalCluster (read_s; per-worker peak RSS)
  cluster-1e6 [--parquet]  on the cluster, the mean of the first 8 time steps (800 chunks) of the
                       10^6-reference set, JSON or parquet root: what a worker holds of a large set
"""
import time

T0 = time.perf_counter()

import argparse  # noqa: E402
import json  # noqa: E402
import os  # noqa: E402
import resource  # noqa: E402

HTTP = "http://127.0.0.1:8765"
PEERS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "../../../shared/bench/peers")


def emit(**fields):
    fields["maxrss_mib"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)
    fields["process_s"] = round(time.perf_counter() - T0, 4)
    print(json.dumps(fields), flush=True)


def open_dataset(reader, location, chunks):
    import xarray as xr

    if reader == "engine":
        return xr.open_dataset(location, engine="zarrs_kerchunk", chunks=chunks)
    if reader == "store":
        from zarrs_kerchunk import ReferenceStore

        return xr.open_dataset(ReferenceStore(location), engine="zarr", consolidated=False, zarr_format=2,
                               chunks=chunks)
    if reader == "fsspec":
        import pandas as pd
        from kerchunk.utils import refs_as_store

        pd.options.future.infer_string = False  # fsspec's parquet paths (tests/data/README.md)
        protocol = "http" if "_http" in location else "file"
        return xr.open_dataset(refs_as_store(location, remote_protocol=protocol), engine="zarr",
                               consolidated=False, zarr_format=2, chunks=chunks)
    import sys

    sys.path.insert(0, PEERS)
    name = os.path.basename(location)
    if reader == "virtualizarr":
        from vz_peer import manifest_store_from_json, registry

        if name.endswith(".parq"):
            from virtualizarr.parsers import KerchunkParquetParser

            store = KerchunkParquetParser()(location, registry(False))
        else:
            store = manifest_store_from_json(location, registry("_http" in name))
        return xr.open_dataset(store, engine="zarr", consolidated=False, zarr_format=3, chunks=chunks)
    if reader == "icechunk":
        from types import SimpleNamespace

        from icechunk_peer import IC_DIR_DEFAULT, open_repo

        session = open_repo(SimpleNamespace(root=os.path.dirname(location), ic_dir=IC_DIR_DEFAULT), name)
        return xr.open_dataset(session.store, engine="zarr", consolidated=False, zarr_format=3, chunks=chunks)
    raise SystemExit(f"unknown reader {reader}")


def refs(a):
    return f"{a.root}/" + ("refs_z_v0" if a.zlib else "refs_v0") + ("_http" if a.http else "") + ".json"


def exponent(n):
    return {"1e4": 4, "1e5": 5, "1e6": 6, "1e7": 7}[n]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--root", default="/tmp/refbench")
    ap.add_argument("--reader", required=True, choices=["engine", "store", "fsspec", "virtualizarr", "icechunk"])
    ap.add_argument("workload", choices=["open-json", "open-parquet", "mean", "points", "cluster-mean", "cluster-1e6", "imports"])
    ap.add_argument("n", nargs="?", default="1000")
    ap.add_argument("--zlib", action="store_true")
    ap.add_argument("--http", action="store_true")
    ap.add_argument("--parquet", action="store_true")
    a = ap.parse_args()

    import numpy as np
    import xarray as xr  # noqa: F401  - imported before timing, as the peers do

    if a.reader in ("engine", "store"):
        import zarrs_kerchunk  # noqa: F401

    if a.workload == "imports":
        return emit(import_s=round(time.perf_counter() - T0, 4))
    if a.workload in ("open-json", "open-parquet"):
        e = exponent(a.n)
        location = f"{a.root}/refs_1e{e}_v0.json" if a.workload == "open-json" else f"{a.root}/refs_1e{e}.parq"
        t = time.perf_counter()
        ds = open_dataset(a.reader, location, chunks={})
        open_s = time.perf_counter() - t
        return emit(open_s=round(open_s, 4), shape=list(ds["var"].shape))
    if a.workload == "mean":
        t = time.perf_counter()
        # Dask's own chunk sizes, aligned to the stored chunks, as xr.open_zarr picks by default.
        ds = open_dataset(a.reader, refs(a), chunks="auto")
        mean = float(ds["data"].mean().compute())
        return emit(read_s=round(time.perf_counter() - t, 4), mean=mean)
    if a.workload == "points":
        k = int(a.n)
        ds = open_dataset(a.reader, refs(a), chunks=None)
        rng = np.random.default_rng(23)
        index = {dim: xr.DataArray(rng.integers(0, size, k), dims="p") for dim, size in ds["data"].sizes.items()}
        t = time.perf_counter()
        values = ds["data"].isel(index).values
        return emit(read_s=round(time.perf_counter() - t, 4), checksum=float(values.sum(dtype="f8")))
    if a.workload in ("cluster-mean", "cluster-1e6"):
        from dask.distributed import Client, LocalCluster

        with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster, \
                Client(cluster) as client:
            client.run(lambda: None)
            t = time.perf_counter()
            if a.workload == "cluster-mean":
                ds = open_dataset(a.reader, refs(a), chunks="auto")
                selected = ds["data"]
            else:
                location = f"{a.root}/refs_1e6.parq" if a.parquet else f"{a.root}/refs_1e6_v0.json"
                ds = open_dataset(a.reader, location, chunks={})
                selected = ds["var"][:8]
            mean = float(client.compute(selected.mean()).result())
            read_s = time.perf_counter() - t
            peaks = client.run(lambda: resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)
        return emit(read_s=round(read_s, 4), mean=mean, worker_peak_mib=round(max(peaks.values()), 1))
    return None


if __name__ == "__main__":
    main()
