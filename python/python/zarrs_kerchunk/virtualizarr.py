"""VirtualiZarr parsers whose scanning runs in this package's Rust scanners.

Each parser is called as VirtualiZarr calls its own, ``parser(url=URL, registry=REGISTRY)``, and
returns a :class:`virtualizarr.manifests.ManifestStore` built with that registry, so that
``open_virtual_dataset``, ``open_virtual_mfdataset`` and ``xr.open_zarr(store, zarr_format=3,
consolidated=False)`` take it. Only the import changes::

    from zarrs_kerchunk.virtualizarr import HDFParser   # was: from virtualizarr.parsers import HDFParser

The manifests are built from arrays the scanner makes (URL indices, offsets and lengths), never a
Python dictionary per chunk; the metadata goes through VirtualiZarr's own translation of kerchunk
metadata, so codecs and fill values take the forms its kerchunk parsers give, which
``.vz.to_kerchunk()`` and ``.vz.to_icechunk()`` write.

**Why the scan reads through this package's stores, not the registry's.** The scanners are Rust and
read with ``object_store`` (Rust) stores, concurrently and without the GIL; a registry's stores are
Python objects (obstore's, or any ``obspec`` store), which Rust cannot call without the GIL on
every read. The registry is used for what VirtualiZarr does with the ``ManifestStore``: reading
chunks. Credentials reach the scan as they reach :class:`~zarrs_kerchunk.ReferenceStore`: the
parser's ``storage_options`` (``object_store``'s keys), ``anonymous``, ``credentials``,
``bearer_token``, ``token_hosts``, ``headers`` and ``netrc``, and the ``AWS_*``, ``GOOGLE_*``
and ``AZURE_*`` variables.

Needs VirtualiZarr (2.8), which needs Python 3.12; the package itself does not.
"""

from __future__ import annotations

import copy
import functools
import json
import os
from collections.abc import Iterable
from typing import Any

import numpy as np

from . import _rs
from .tools import _netrc, _one_file, _write_options

__all__ = ["HDFParser", "NetCDF3Parser"]

# netCDF's default fill values by numpy type (netcdf.h's NC_FILL_*; netCDF4.default_fillvals).
_NETCDF_DEFAULT_FILLS = {
    "i1": -127, "u1": 255, "i2": -32767, "u2": 65535, "i4": -2147483647, "u4": 4294967295,
    "i8": -9223372036854775806, "u8": 18446744073709551614, "f4": 9.969209968386869e36, "f8": 9.969209968386869e36,
}


class _RustParser:
    """What every parser shares: the options, and the scan into a ``ManifestStore``."""

    _dmrpp = "never"

    def __init__(
        self,
        group: str | None = None,
        drop_variables: Iterable[str] | None = None,
        *,
        inline_threshold: int | None = None,
        fail_unsupported: bool = False,
        storage_options: dict[str, str] | None = None,
        anonymous: bool = False,
        credentials: dict[str, dict[str, str]] | None = None,
        bearer_token: str | None = None,
        token_hosts: list[str] | None = None,
        headers: dict[str, dict[str, str]] | None = None,
        netrc: str | os.PathLike[str] | bool | None = None,
    ) -> None:
        self.group = group
        self.drop_variables = list(drop_variables or [])
        self.inline_threshold = inline_threshold
        self.fail_unsupported = fail_unsupported
        self._access = {
            "storage_options": storage_options, "anonymous": anonymous, "credentials": credentials,
            "bearer_token": bearer_token, "token_hosts": token_hosts, "headers": headers, "netrc": _netrc(netrc),
        }

    def __repr__(self) -> str:
        return f"{type(self).__name__}(group={self.group!r}, drop_variables={self.drop_variables!r})"

    def __call__(self, url: str, registry: Any):
        """The file at ``url`` as a ``ManifestStore`` over ``registry``: scanned in Rust (see
        the module's notes on stores and credentials)."""
        from virtualizarr.manifests import ManifestStore

        arguments = _one_file(self.inline_threshold, self.fail_unsupported, self._dmrpp)
        write = _write_options(1, False, None, 100_000, "auto", True, self._access)
        scanned = _rs.scan_manifests(os.fspath(url), arguments, write)
        return ManifestStore(group=self._group(scanned), registry=registry)

    def _group(self, scanned: dict[str, Any]):
        from virtualizarr.manifests import ManifestGroup

        root = (self.group or "").strip("/")
        if root and root not in scanned["groups"]:
            found = sorted(path for path in scanned["groups"] if path)
            raise ValueError(f"group {self.group!r} is not in the file; its groups are {found}")
        urls = np.array(scanned["urls"] + [""], dtype=np.dtypes.StringDType())

        def build(path: str):
            prefix = f"{path}/" if path else ""
            arrays = {
                name[len(prefix):]: _manifest_array(columns, urls)
                for name, columns in scanned["arrays"].items()
                if name.startswith(prefix) and "/" not in name[len(prefix):]
                and name[len(prefix):] not in self.drop_variables
            }
            groups = {
                child[len(prefix):]: build(child)
                for child in scanned["groups"]
                if child and child.startswith(prefix) and "/" not in child[len(prefix):]
            }
            return ManifestGroup(arrays=arrays, groups=groups, attributes=json.loads(scanned["groups"].get(path, "{}")))

        return build(root)


def _trimmed_chunk_bytes(zarray: dict[str, Any]) -> int | None:
    """Trim a chunk longer than its array along the first dimension (HDF5's 512 along an
    unlimited dimension holding 24) to the array's length, as VirtualiZarr's HDF parser does, so
    that files concatenate on a regular grid; the new bytes of each chunk, or None if untouched.
    Only where that is one contiguous byte range of the stored chunk: no filters or compressor,
    C order, and no other dimension trimmed."""
    chunks, shape = zarray["chunks"], zarray["shape"]
    if not shape or chunks[0] <= max(shape[0], 1) or zarray.get("filters") or zarray.get("compressor") \
            or zarray.get("order", "C") != "C" or any(c > max(n, 1) for c, n in zip(chunks[1:], shape[1:])):
        return None
    zarray["chunks"] = [max(shape[0], 1), *chunks[1:]]
    return int(np.prod(zarray["chunks"])) * np.dtype(zarray["dtype"]).itemsize


@functools.lru_cache(maxsize=4096)
def _metadata(zarray_text: str, zattrs_text: str):
    """An array's Zarr 3 metadata from its kerchunk `.zarray` and `.zattrs`, and the bytes of a
    trimmed chunk (see :func:`_trimmed_chunk_bytes`). Cached: a series' files repeat their arrays'
    metadata, which zarr takes about 0.4 ms an array to build (its data type found by trying each
    it knows); each array gets a copy with its own attributes."""
    from virtualizarr.parsers.kerchunk.translator import from_kerchunk_refs

    zarray, zattrs = json.loads(zarray_text), json.loads(zattrs_text)
    zarray["dimension_names"] = zattrs.pop("_ARRAY_DIMENSIONS", None)
    if zarray.get("fill_value") is None and np.dtype(zarray["dtype"]).kind in "iuf":
        # kerchunk's null fill (netCDF files' variables without `_FillValue`) would become Zarr 3's
        # default, 0, which a Zarr 2 writer (`.vz.to_kerchunk()`) then writes as the fill value,
        # and xarray masks every 0. Unwritten data there holds netCDF's default fill instead, as
        # HDF5 records it and VirtualiZarr's HDF parser takes it.
        zarray["fill_value"] = _NETCDF_DEFAULT_FILLS[np.dtype(zarray["dtype"]).str[1:]]
    trimmed = _trimmed_chunk_bytes(zarray)
    metadata = from_kerchunk_refs(zarray, zattrs)
    if "_FillValue" in metadata.attributes and metadata.data_type.to_native_dtype().kind not in "SUOT":
        # The file's own `_FillValue` attribute (the scan keeps it), encoded for the array's type
        # as VirtualiZarr's HDF parser encodes it.
        from virtualizarr.parsers.utils import encode_cf_fill_value

        dtype = metadata.data_type.to_native_dtype()
        fill = metadata.attributes["_FillValue"]
        metadata.attributes["_FillValue"] = encode_cf_fill_value(np.asarray(fill, dtype=dtype), dtype)
    return metadata, trimmed


def _manifest_array(columns: dict[str, Any], urls: np.ndarray):
    """One array's ``ManifestArray``: its metadata through VirtualiZarr's kerchunk translation,
    its chunks from the scanner's columns."""
    from virtualizarr.manifests import ChunkManifest, ManifestArray
    from virtualizarr.manifests.manifest import INLINED_CHUNK_PATH

    shared, trimmed = _metadata(columns["zarray"], columns["zattrs"])
    # Each array its own attributes: a reader that changes one array's must not change another's.
    metadata = copy.copy(shared)
    object.__setattr__(metadata, "attributes", copy.deepcopy(shared.attributes))
    # A scalar's grid is (): one chunk, at position ().
    grid = tuple(columns["grid"])
    index = np.frombuffer(columns["url_index"], dtype="<u4").astype(np.int64)
    # A chunk with no reference (u32::MAX) takes the empty path: missing, read as the fill value.
    index[index == 0xFFFFFFFF] = len(urls) - 1
    paths = urls[index].reshape(grid)
    inlined = {tuple(position): data for position, data in columns["inlined"].items()}
    for position in inlined:
        paths[position] = INLINED_CHUNK_PATH
    lengths = np.frombuffer(columns["lengths"], dtype="<u8").astype(np.uint64).reshape(grid)
    if trimmed is not None:
        lengths[lengths > 0] = trimmed
        inlined = {position: data[:trimmed] for position, data in inlined.items()}
    for position, data in inlined.items():
        lengths[position] = len(data)
    manifest = ChunkManifest.from_arrays(
        paths=paths,
        offsets=np.frombuffer(columns["offsets"], dtype="<u8").astype(np.uint64).reshape(grid),
        lengths=lengths,
        validate_paths=False,
        inlined=inlined or None,
    )
    return ManifestArray(metadata=metadata, chunkmanifest=manifest)


class HDFParser(_RustParser):
    """VirtualiZarr's ``HDFParser`` (HDF5 and NetCDF-4 files), scanned in Rust: ``group`` and
    ``drop_variables`` as VirtualiZarr's; ``inline_threshold`` (bytes: smaller chunks held inline),
    ``fail_unsupported`` and the access options as :func:`zarrs_kerchunk.tools.scan`'s."""


class NetCDF3Parser(_RustParser):
    """VirtualiZarr's ``NetCDF3Parser`` (classic, 64-bit offset and CDF-5 files), scanned in Rust;
    options as :class:`HDFParser`'s."""
