#!/usr/bin/env python3
"""Issue 34's cluster figures: the first N files of FOLDER (make_many.py's small NetCDF-4 files)
scanned and combined along time on one Dask LocalCluster of WORKERS processes (one thread each,
default 2), by one of:

- ``ours``: ``zarrs_kerchunk.tools.scan(files, OUT, concat="time", executor=client)`` (every
  file's chunks set aside on disk, a spread scan's default);
- ``ours-held``: the same with ``combine_memory=64`` (up to 64 MiB of them held in memory);
- ``kerchunk``: ``kerchunk.combine.auto_dask`` (``SingleHdf5ToZarr`` per file on the workers,
  ``MultiZarrToZarr`` per batch, WORKERS batches, and once more for the batches);
- ``virtualizarr``: ``open_virtual_mfdataset(parallel="dask")`` with its ``HDFParser``, then
  ``to_kerchunk``.

Prints one JSON line: the tool, the files, the job's seconds (the cluster's start left out), the
peak memory of this process (before the job, and after it) and the largest of the workers', in
MiB. Ours and VirtualiZarr combine in this process; kerchunk's ``auto_dask`` combines on a worker
(the batches, then all of them), and hands this process the result to write.
Run each tool in a process of its own (``benches/scan/cluster.sh``), so that peaks do not mix.

    python benches/scan/cluster.py TOOL FOLDER N OUT [WORKERS]
"""
import glob
import json
import resource
import sys
import time
import warnings

warnings.simplefilter("ignore")

from dask.distributed import Client, LocalCluster


def peak_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def ours(files, out, client, combine_memory=None):
    from zarrs_kerchunk import tools

    memory = {} if combine_memory is None else {"combine_memory": combine_memory}
    tools.scan(files, out, concat="time", executor=client, **memory)


def kerchunk(files, out, client, workers):
    from kerchunk.combine import auto_dask
    from kerchunk.hdf import SingleHdf5ToZarr

    auto_dask(files, SingleHdf5ToZarr, {"inline_threshold": 500},
              {"concat_dims": ["time"], "identical_dims": ["lat", "lon"]}, n_batches=workers, filename=out)


def virtualizarr(files, out, client):
    from obspec_utils.registry import ObjectStoreRegistry
    from obstore.store import LocalStore
    from virtualizarr import open_virtual_mfdataset
    from virtualizarr.parsers import HDFParser

    registry = ObjectStoreRegistry({"file://": LocalStore()})
    combined = open_virtual_mfdataset([f"file://{f}" for f in files], registry=registry, parser=HDFParser(),
                                      concat_dim="time", combine="nested", coords="minimal", compat="override",
                                      data_vars="minimal", loadable_variables=["time", "lat", "lon"],
                                      parallel="dask")
    combined.vz.to_kerchunk(out, format="json")


if __name__ == "__main__":
    tool, folder, count, out = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
    workers = int(sys.argv[5]) if len(sys.argv) > 5 else 2
    files = sorted(glob.glob(f"{folder}/f*.nc"))[:count]
    assert len(files) == count, f"{folder} has {len(files)} files"
    with LocalCluster(n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=None) as cluster, \
            Client(cluster) as client:
        before = peak_mib()
        start = time.perf_counter()
        if tool == "kerchunk":
            kerchunk(files, out, client, workers)
        else:
            {"ours": ours, "ours-held": lambda *a: ours(*a, combine_memory=64),
             "virtualizarr": virtualizarr}[tool](files, out, client)
        seconds = time.perf_counter() - start
        workers_peak = max(client.run(peak_mib).values())
    print(json.dumps({"tool": tool, "files": count, "seconds": round(seconds, 2),
                      "peak_mib_before": round(before), "peak_mib": round(peak_mib()),
                      "worker_peak_mib": round(workers_peak)}))
