"""Shared by the tests: the conformance corpus (``tests/data`` at the workspace root), its
manifests and ground truth, and the real servers ``.ci/servers.sh`` starts."""

from __future__ import annotations

import importlib.util
import json
import os
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "tests" / "data"

# py312/ is the Python 3.12 suite (VirtualiZarr needs 3.12), run by tests/icechunk/run.sh in its
# own virtualenv; this one (3.11) has no VirtualiZarr.
if importlib.util.find_spec("virtualizarr") is None:
    collect_ignore = ["py312"]



class Case:
    """One conformance case: a folder of tests/data with its case.json."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.name = folder.name
        self.manifest = json.loads((folder / "case.json").read_text())

    def references(self, parquet: bool | None = None) -> list[str]:
        """The reference files (JSON, parquet or both)."""
        return [
            r["file"]
            for r in self.manifest["references"]
            if parquet is None or (r["format"] == "kerchunk-parquet") == parquet
        ]

    @property
    def arrays(self) -> list[dict]:
        return self.manifest["arrays"]

    def __repr__(self) -> str:
        return self.name


def cases() -> list[Case]:
    found = sorted((Case(d) for d in DATA.iterdir() if (d / "case.json").exists()), key=lambda c: c.name)
    assert len(found) >= 12, f"conformance cases missing from {DATA}"
    return found


def compare(entry: dict, got: np.ndarray, folder: Path) -> str | None:
    """A problem with `got`, the array `entry` describes, or None if it equals the ground truth exactly."""
    if entry["dtype"] == "|O":
        want = entry.get("expected_values_json")
        values = got.ravel().tolist()
        if want is not None and values != np.asarray(want, dtype=object).ravel().tolist():
            return f"values differ: {values[:5]} vs {want[:5]}"
        return None
    return differs(got, np.load(folder / entry["expected"]))


def differs(got: np.ndarray, expected: np.ndarray) -> str | None:
    """How `got` differs from `expected` (NaN equal to NaN), or None if it is exactly equal."""
    if got.shape != expected.shape:
        return f"shape {got.shape} != {expected.shape}"
    if {got.dtype.kind, expected.dtype.kind} == {"S", "V"} or got.dtype.kind == expected.dtype.kind == "V":
        # zarr-python 3 reads a V2 "|S5" as raw "|V5": the same bytes.
        return None if got.tobytes() == expected.tobytes() else "bytes differ"
    nan = got.dtype.kind in "fc"
    if not np.array_equal(got.astype(expected.dtype), expected, equal_nan=nan):
        return f"values differ: {got.ravel()[:5]} != {expected.ravel()[:5]}"
    return None


def server(name: str) -> str | None:
    """The URL of a real server of .ci/servers.sh, or None; with ZK_REQUIRE_SERVERS a missing one fails."""
    url = os.environ.get(name)
    if url is None and os.environ.get("ZK_REQUIRE_SERVERS"):
        pytest.fail(f"{name} is not set, and ZK_REQUIRE_SERVERS says the servers must be there (.ci/servers.sh)")
    return url


def s3_user(who: str) -> tuple[object, dict[str, str]]:
    """The S3 server's user `who` (``"REFS"`` or ``"DATA"``, each allowed its own bucket): a boto3
    client to put objects with, and the object_store options that reach the server as that user.
    Skips without the server (fails under ZK_REQUIRE_SERVERS)."""
    endpoint = server("ZK_S3")
    if endpoint is None:
        pytest.skip("no S3 server: start the servers with .ci/servers.sh")
    import boto3

    key, secret = os.environ[f"ZK_S3_{who}_KEY"], os.environ[f"ZK_S3_{who}_SECRET"]
    client = boto3.client(
        "s3", endpoint_url=endpoint, region_name="us-east-1", aws_access_key_id=key, aws_secret_access_key=secret
    )
    options = {
        "aws_access_key_id": key,
        "aws_secret_access_key": secret,
        "aws_endpoint": endpoint,
        "aws_region": "us-east-1",
        "aws_allow_http": "true",
    }
    return client, options


def array_read_in_another_process(pickled: bytes, array: str, env: dict[str, str], tmp: Path):
    """The array `array` of the group in the pickled store `pickled`, read by a new Python process
    with `env`: what a Dask worker sees."""
    import subprocess
    import sys

    script = (
        "import pickle, sys, numpy as np, zarr; store = pickle.loads(sys.stdin.buffer.read());"
        "np.save(sys.argv[1], zarr.open_group(store, mode='r', zarr_format=2)[sys.argv[2]][:])"
    )
    out = tmp / "read-in-another-process.npy"
    subprocess.run([sys.executable, "-c", script, str(out), array], input=pickled, check=True, env=env)
    return np.load(out)


def put_in_zk_data(folder: Path, prefix: str) -> dict[str, str]:
    """Every file under `folder` put in the S3 server's bucket zk-data under `prefix`, with its
    own user's keys; those keys' object_store options."""
    client, options = s3_user("DATA")
    for path in folder.rglob("*"):
        if path.is_file():
            client.put_object(Bucket="zk-data", Key=f"{prefix}/{path.relative_to(folder).as_posix()}",
                              Body=path.read_bytes())
    return options


@pytest.fixture
def nginx() -> str:
    url = server("ZK_NGINX")
    if url is None:
        pytest.skip("no nginx: start the servers with .ci/servers.sh")
    return url
