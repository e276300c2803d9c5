"""What the Python 3.12 suite's tests share: the conformance corpus and its truth, a registry of
local files, a store opened in xarray, and a reference's value as kerchunk's output is compared."""

from __future__ import annotations

import base64
import json
from pathlib import Path

import numpy as np
import xarray as xr
from obspec_utils.registry import ObjectStoreRegistry
from obstore.store import LocalStore

#: The conformance corpus (`../shared/conformance`, copied).
DATA = Path(__file__).resolve().parents[3] / "tests" / "data"


def local_registry() -> ObjectStoreRegistry:
    """VirtualiZarr's registry of `file://` URLs."""
    return ObjectStoreRegistry({"file://": LocalStore()})


def opened(store) -> xr.Dataset:
    """A `ManifestStore` (or any Zarr 3 store) opened in xarray, CF-decoded, loaded."""
    return xr.open_zarr(store, zarr_format=3, consolidated=False, decode_cf=True).load()


def expected_arrays(case: str) -> dict[str, np.ndarray]:
    """A corpus case's arrays as the file's own library reads them (case.json's `.npy` files)."""
    manifest = json.loads((DATA / case / "case.json").read_text())
    return {entry["path"].strip("/"): np.load(DATA / case / entry["expected"]) for entry in manifest["arrays"]
            if "expected" in entry}


def reference_value(value):
    """A reference's value as compared: metadata parsed, inline values as bytes, ranges as lists."""
    if isinstance(value, str):
        if value.startswith("base64:"):
            return ("bytes", base64.b64decode(value[len("base64:"):]))
        try:
            return ("json", json.loads(value))
        except ValueError:
            return ("bytes", value.encode())
    return ("range", list(value))
