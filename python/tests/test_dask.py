"""Distributed: a 2-process dask LocalCluster computes reductions over arrays of a JSON set and
of a parquet root, with zarr and with the xarray engine, equal to a local read; each worker
process opens each reference set once, however many tasks read it; and a scan spread over the
cluster (tools.scan(executor=client)) writes what the same scan on one machine writes."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest
import xarray as xr
import zarr
from conftest import DATA

from zarrs_kerchunk import ReferenceStore

da = pytest.importorskip("dask.array")
distributed = pytest.importorskip("dask.distributed")

SETS = [
    pytest.param(DATA / "mzz_time_concat" / "refs.json", "tas", id="json"),
    pytest.param(DATA / "parquet_fastparquet" / "refs.parq", None, id="parquet"),
]


@pytest.fixture(scope="module")
def client():
    with distributed.LocalCluster(n_workers=2, threads_per_worker=2, processes=True, dashboard_address=None) as cluster:
        with distributed.Client(cluster) as client:
            yield client


def _opened_sets() -> int:
    from zarrs_kerchunk.store import _OPENED

    return len(_OPENED)


def _array_name(location, name):
    if name is not None:
        return name
    group = zarr.open_group(ReferenceStore(location), mode="r", zarr_format=2)
    return max((n for n, a in group.arrays() if a.dtype.kind in "iuf"), key=lambda n: group[n].size)


@pytest.mark.parametrize(("location", "name"), SETS)
def test_reductions_on_the_cluster_equal_a_local_read(client, location, name) -> None:
    name = _array_name(location, name)
    store = ReferenceStore(location)
    local = np.asarray(zarr.open_group(store, mode="r", zarr_format=2)[name][...])
    array = zarr.open_group(store, mode="r", zarr_format=2)[name]
    lazy = da.from_zarr(array, chunks=array.chunks)
    assert lazy.numblocks != (1,) * lazy.ndim or lazy.size < 100
    # The same graph computed in this process: the same summation order, so exactly equal.
    assert client.compute(lazy.sum()).result() == lazy.sum().compute(scheduler="sync")
    assert client.compute(lazy.max()).result() == local.max()
    assert np.array_equal(client.compute(lazy).result(), local, equal_nan=True)
    # Through xarray, both engines, on the cluster.
    ours = xr.open_dataset(location, engine="zarrs_kerchunk", chunks={})
    theirs = xr.open_dataset(store, engine="zarr", consolidated=None, zarr_format=2, chunks={})
    for ds in [ours, theirs]:
        total = client.compute(ds[name].sum(skipna=False)).result()
        xr.testing.assert_identical(total, ds[name].sum(skipna=False).compute(scheduler="sync"))
        xr.testing.assert_identical(client.compute(ds[name]).result(), ds[name].compute(scheduler="sync"))
    # One opened set per worker process (the store and the engine share it), not one per task.
    assert set(client.run(_opened_sets).values()) <= {1, 2}



def test_a_scan_spread_over_the_cluster_equals_one_on_this_machine(client, tmp_path) -> None:
    """tools.scan(executor=client): every worker scans a share of the files (one each here) and
    the caller combines them; the references written equal those of the same scan made here."""
    from zarrs_kerchunk import tools

    folder = Path(__file__).resolve().parents[2] / "tests" / "scan" / "combine"
    for n in range(4):
        shutil.copy(folder / f"mixed_units_{n}.nc", tmp_path)
    pattern = str(tmp_path / "mixed_units_*.nc")
    here = tools.scan(pattern, tmp_path / "here.json", concat="time")
    spread = tools.scan(pattern, tmp_path / "spread.json", concat="time", jobs=1, executor=client)
    assert json.loads((tmp_path / "spread.json").read_text()) == json.loads((tmp_path / "here.json").read_text())
    assert spread["files"] == here["files"] and spread["references"] == here["references"]
