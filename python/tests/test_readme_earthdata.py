"""The README's Earthdata walk-through, run as written against the stand-ins of `.ci/earthdata.py`
(issue 54): its two shell blocks (`<!-- earthdata: stand-ins -->`, then `<!-- earthdata:
walk-through -->`) in one shell, with the command line the workspace's test build made and this
virtualenv's Python on the PATH.

Truth: xarray's reading, with netCDF4, of the granules themselves (`tests/earthdata/granules/`,
written by netCDF4), concatenated along time; the set the walk-through writes must read the same
values and coordinates, and its last step must print what netCDF4's values give. The DAAC's own
log shows the last granule was scanned from its sidecar, not its header."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import urllib.request
from pathlib import Path

import numpy as np
import pytest
import xarray as xr
from conftest import server

ROOT = Path(__file__).resolve().parents[2]
GRANULES = sorted((ROOT / "tests" / "earthdata" / "granules").glob("*.nc"))


def _block(readme: str, marker: str) -> str:
    found = re.search(rf"<!-- earthdata: {marker} -->\n```sh\n(.*?)```", readme, re.S)
    assert found, f"the README has no block marked 'earthdata: {marker}'"
    return found.group(1)


def test_the_readme_walk_through_runs_as_written_and_reads_what_netcdf4_reads(tmp_path) -> None:
    if server("ZK_DAAC") is None:
        pytest.skip("no Earthdata stand-ins: start the servers with .ci/servers.sh")
    # The command line the workspace's test build made (tests/binary.sh builds it if need be).
    found = subprocess.run(["bash", str(ROOT / "tests" / "binary.sh")], capture_output=True, text=True, check=True)
    binary = Path(found.stdout.strip())
    readme = (ROOT / "README.md").read_text()
    script = "set -euo pipefail\n" + f"cd {ROOT}\n" + _block(readme, "stand-ins") + f"cd {tmp_path}\n" + _block(
        readme, "walk-through"
    )
    env = {**os.environ, "PATH": f"{binary.parent}:{Path(sys.executable).parent}:{os.environ['PATH']}",
           "HOME": str(tmp_path)}
    env.pop("NETRC", None)
    done = subprocess.run(["bash", "-c", script], env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, f"stdout:\n{done.stdout}\nstderr:\n{done.stderr}"

    truth = xr.open_mfdataset(GRANULES, engine="netcdf4", combine="nested", concat_dim="time").load()
    daac = os.environ["ZK_DAAC"]
    ours = xr.open_dataset(tmp_path / "month.json", engine="zarrs_kerchunk", backend_kwargs={
        "url_rewrite": {"s3://zk-data/": f"{daac}/zk-data/"}, "token_hosts": ["127.0.0.3"],
        "bearer_token": os.environ["ZK_EARTHDATA_TOKEN"]}).load()
    xr.testing.assert_equal(ours, truth)
    assert np.isnan(truth.analysed_sst.values).any(), "the granules' fill values are not exercised"
    printed = str(truth.analysed_sst.sel(lat=0, lon=0, method="nearest").values)
    assert done.stdout.strip().endswith(printed), f"printed {done.stdout!r}, netCDF4 gives {printed}"

    with urllib.request.urlopen(f"{daac}/__seen") as answer:
        paths = [r["path"] for r in json.load(answer)]
    last = f"/zk-data/walkthrough/{GRANULES[-1].name}"
    assert last + ".dmrpp" in paths, "step 2 did not read the last granule's sidecar"
