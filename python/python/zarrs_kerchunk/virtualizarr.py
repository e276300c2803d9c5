"""VirtualiZarr parsers whose scanning runs in this package's Rust scanners, and whose reading of
reference sets (``KerchunkJSONParser``, ``KerchunkParquetParser``) runs in its Rust store.

Each parser is called as VirtualiZarr calls its own, ``parser(url=URL, registry=REGISTRY)``, and
returns a :class:`virtualizarr.manifests.ManifestStore` built with that registry, so that
``open_virtual_dataset``, ``open_virtual_mfdataset`` and ``xr.open_zarr(store, zarr_format=3,
consolidated=False)`` take it. Only the import changes::

    from zarrs_kerchunk.virtualizarr import HDFParser   # was: from virtualizarr.parsers import HDFParser

The manifests are built from arrays made in Rust (URL indices, offsets and lengths), never a
Python dictionary per chunk; the metadata goes through VirtualiZarr's own translation of kerchunk
metadata, so codecs and fill values take the forms its kerchunk parsers give, which
``.vz.to_kerchunk()`` and ``.vz.to_icechunk()`` write (a netCDF file's array without a fill value
gets netCDF's default, as VirtualiZarr's HDF parser reads it from the file).

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

__all__ = [
    "DMRPPParser", "GRIBParser", "HDFParser", "KerchunkJSONParser", "KerchunkParquetParser", "NetCDF3Parser",
    "TIFFParser",
]

# netCDF's default fill values by numpy type (netcdf.h's NC_FILL_*; netCDF4.default_fillvals).
_NETCDF_DEFAULT_FILLS = {
    "i1": -127, "u1": 255, "i2": -32767, "u2": 65535, "i4": -2147483647, "u4": 4294967295,
    "i8": -9223372036854775806, "u8": 18446744073709551614, "f4": 9.969209968386869e36, "f8": 9.969209968386869e36,
}


class _RustParser:
    """What every parser shares: the options, and the scan into a ``ManifestStore``."""

    #: How a DMR++ sidecar is taken (``tools.scan``'s ``dmrpp``).
    _dmrpp = "never"
    #: How null fill values and ``_FillValue`` are read (see :func:`_metadata`).
    _source = "netcdf"

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
        return ManifestStore(group=_group(scanned, self.group, self.drop_variables, self._source), registry=registry)


def _group(scanned: dict[str, Any], group: str | None, dropped: list[str], source: str):
    """The ``ManifestGroup`` at ``group`` of what the scan or the reference set gave, without
    the arrays ``dropped``."""
    from virtualizarr.manifests import ManifestGroup

    root = (group or "").strip("/")
    if root and root not in scanned["groups"]:
        found = sorted(path for path in scanned["groups"] if path)
        raise ValueError(f"group {group!r} is not in the file; its groups are {found}")
    urls = np.array(scanned["urls"] + [""], dtype=np.dtypes.StringDType())

    def build(path: str):
        prefix = f"{path}/" if path else ""
        arrays = {
            name[len(prefix):]: _manifest_array(columns, urls, source)
            for name, columns in scanned["arrays"].items()
            if name.startswith(prefix) and "/" not in name[len(prefix):] and name[len(prefix):] not in dropped
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
    if not shape or np.dtype(zarray["dtype"]).kind in "OT" or chunks[0] <= max(shape[0], 1) or zarray.get("filters") or zarray.get("compressor") \
            or zarray.get("order", "C") != "C" or any(c > max(n, 1) for c, n in zip(chunks[1:], shape[1:])):
        return None
    zarray["chunks"] = [max(shape[0], 1), *chunks[1:]]
    return int(np.prod(zarray["chunks"])) * np.dtype(zarray["dtype"]).itemsize


@functools.lru_cache(maxsize=4096)
def _metadata(zarray_text: str, zattrs_text: str, source: str):
    """An array's Zarr 3 metadata from its kerchunk `.zarray` and `.zattrs`, and the bytes of a
    trimmed chunk (see :func:`_trimmed_chunk_bytes`). Cached: a series' files repeat their arrays'
    metadata, which zarr takes about 0.4 ms an array to build (its data type found by trying each
    it knows); each array gets a copy with its own attributes. ``source`` says how it is read:
    ``"references"``, a reference set's, as VirtualiZarr's kerchunk parsers translate it;
    ``"scan"``, a scanned GRIB or TIFF file's, so too, with its ``_FillValue`` encoded as xarray
    reads it from Zarr 3; ``"netcdf"``, a scanned netCDF or HDF5 file's, as VirtualiZarr's HDF
    parser reads the file (netCDF's fill values, chunks trimmed)."""
    from virtualizarr.parsers.kerchunk.translator import from_kerchunk_refs

    zarray, zattrs = json.loads(zarray_text), json.loads(zattrs_text)
    zarray["dimension_names"] = zattrs.pop("_ARRAY_DIMENSIONS", None)
    kind = np.dtype(zarray["dtype"]).kind if isinstance(zarray["dtype"], str) else "V"
    if zarray.get("fill_value") is None and kind in "iuf" and source == "netcdf":
        # The scan's null fill (netCDF files' variables without `_FillValue`) would become Zarr
        # 3's default, 0, which a Zarr 2 writer (`.vz.to_kerchunk()`) then writes as the fill
        # value, and xarray masks every 0. Unwritten data there holds netCDF's default fill
        # instead, as HDF5 records it and VirtualiZarr's HDF parser takes it. Elsewhere a null
        # fill is what every reader of the set takes it for: 0 (NaN for floats), as
        # VirtualiZarr's kerchunk parsers make it.
        zarray["fill_value"] = _NETCDF_DEFAULT_FILLS[np.dtype(zarray["dtype"]).str[1:]]
    if kind == "O":
        if (zarray.get("filters") or []) != [{"id": "vlen-utf8"}] or zarray.get("compressor"):
            raise NotImplementedError(
                f"an object array whose codecs are {zarray.get('filters')} and {zarray.get('compressor')}: "
                "only variable-length strings (vlen-utf8 alone) have a Zarr 3 form here"
            )
        # kerchunk's embedded strings (vlen-utf8 chunks, inline): Zarr 3's variable-length
        # strings, whose vlen-utf8 codec the metadata gets for them, as VirtualiZarr's HDF parser
        # makes its strings.
        zarray["dtype"], zarray["filters"] = "T", None
    fill = zarray.get("fill_value")
    if kind == "c" and isinstance(fill, list) and len(fill) == 2:
        # Zarr 2 writes a complex fill as [real, imaginary], which VirtualiZarr's translation
        # cannot take.
        zarray["fill_value"] = complex(*fill)
    if source == "references":
        return from_kerchunk_refs(zarray, zattrs), None
    trimmed = _trimmed_chunk_bytes(zarray) if source == "netcdf" else None
    metadata = from_kerchunk_refs(zarray, zattrs)
    if "_FillValue" in metadata.attributes and metadata.data_type.to_native_dtype().kind not in "SUOT":
        # The file's own `_FillValue` attribute (the scan keeps it), encoded for the array's type
        # as VirtualiZarr's HDF parser encodes it.
        from virtualizarr.parsers.utils import encode_cf_fill_value

        dtype = metadata.data_type.to_native_dtype()
        fill = metadata.attributes["_FillValue"]
        metadata.attributes["_FillValue"] = encode_cf_fill_value(np.asarray(fill, dtype=dtype), dtype)
    return metadata, trimmed


@functools.cache
def _manifest_types() -> tuple[Any, Any, str]:
    """VirtualiZarr's manifest classes and its inline chunks' path, imported once (an import
    statement per array costs a scan of a small file a few percent)."""
    from virtualizarr.manifests import ChunkManifest, ManifestArray
    from virtualizarr.manifests.manifest import INLINED_CHUNK_PATH

    return ChunkManifest, ManifestArray, INLINED_CHUNK_PATH


def _copied(value: Any) -> Any:
    """A copy of JSON-like attributes (dicts and lists of them, and scalars): ``copy.deepcopy``'s
    result, a few times faster (its memo is for what JSON cannot hold)."""
    if isinstance(value, dict):
        # Scalars, most attributes, taken as they are without a call each.
        return {key: _copied(item) if isinstance(item, _CONTAINERS) else item for key, item in value.items()}
    if isinstance(value, list):
        return [_copied(item) for item in value]
    return copy.deepcopy(value) if isinstance(value, np.ndarray) else value


#: What :func:`_copied` copies: all else in attributes is immutable.
_CONTAINERS = (dict, list, np.ndarray)


def _manifest_array(columns: dict[str, Any], urls: np.ndarray, source: str):
    """One array's ``ManifestArray``: its metadata through VirtualiZarr's kerchunk translation,
    its chunks from the columns Rust made."""
    ChunkManifest, ManifestArray, INLINED_CHUNK_PATH = _manifest_types()
    shared, trimmed = _metadata(columns["zarray"], columns["zattrs"], source)
    # Each array its own attributes: a reader that changes one array's must not change another's.
    # (The frozen dataclass's fields copied as `copy.copy` copies them, without its detour.)
    metadata = object.__new__(type(shared))
    metadata.__dict__.update(shared.__dict__)
    object.__setattr__(metadata, "attributes", _copied(shared.attributes))
    # A scalar's grid is (): one chunk, at position ().
    grid = tuple(columns["grid"])
    if columns["one_url"] is not None:
        # Every chunk a range of one URL (or inline, set apart below): that URL throughout, which
        # numpy writes several times faster than it gathers strings by index.
        paths = np.empty(grid, dtype=urls.dtype)
        paths[...] = urls[columns["one_url"]]
    else:
        index = np.frombuffer(columns["url_index"], dtype=np.uint32).astype(np.int64)
        # A chunk with no reference (u32::MAX) takes the empty path: missing, read as the fill
        # value. An inline one (u32::MAX - 1) takes it too, until set apart below.
        index[index >= 0xFFFFFFFE] = len(urls) - 1
        paths = urls[index].reshape(grid)
    # Keyed by chunk position tuples, as VirtualiZarr keys them.
    inlined = columns["inlined"]
    for position in inlined:
        paths[position] = INLINED_CHUNK_PATH
    lengths = np.frombuffer(columns["lengths"], dtype=np.uint64).reshape(grid)
    if trimmed is not None:
        lengths[lengths > 0] = trimmed
        inlined = {position: data[:trimmed] for position, data in inlined.items()}
    for position, data in inlined.items():
        lengths[position] = len(data)
    manifest = ChunkManifest.from_arrays(
        paths=paths,
        offsets=np.frombuffer(columns["offsets"], dtype=np.uint64).reshape(grid),
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


class DMRPPParser(_RustParser):
    """VirtualiZarr's ``DMRPPParser``: ``url`` is an OPeNDAP DMR++ sidecar (``granule.nc.dmrpp``),
    read in Rust for the file it describes, whose chunks the manifests point at. Besides
    VirtualiZarr's, it reads big-endian data, every filter order with fletcher32, compact data
    and sidecars whose chunks are absent. ``group`` and ``drop_variables`` (VirtualiZarr's
    ``skip_variables`` is taken too) and the access options as :class:`HDFParser`'s."""

    _dmrpp = "only"

    def __init__(self, group: str | None = None, skip_variables: Iterable[str] | None = None, **options: Any) -> None:
        drop = list(skip_variables or []) + list(options.pop("drop_variables", None) or [])
        super().__init__(group, drop, **options)


class GRIBParser(_RustParser):
    """GRIB2 files, scanned in Rust into one group per variable, step type
    and level type, as kerchunk's ``scan_grib`` and ``grib_tree`` make them; each message one
    chunk, decoded in Rust (``numcodecs.grib``, registered with zarr-python by the package).
    Options as :class:`HDFParser`'s."""

    _source = "scan"


class TIFFParser(_RustParser):
    """TIFF, GeoTIFF and COG files, scanned in Rust: each image (each overview of a COG) an array,
    its tiles or strips the chunks, decoded in Rust (``numcodecs.imagecodecs_*``, registered with
    zarr-python by the package); GeoTIFF's georeferencing as attributes. Options as
    :class:`HDFParser`'s."""

    _source = "scan"


class _ReferenceParser:
    """What the reference-set parsers share: VirtualiZarr's options, and the set read in Rust."""

    def __init__(
        self,
        group: str | None = None,
        fs_root: str | None = None,
        skip_variables: Iterable[str] | None = None,
        **options: Any,
    ) -> None:
        self.group = group
        self.fs_root = fs_root
        self.skip_variables = list(skip_variables or [])
        self.options = options

    def __repr__(self) -> str:
        return f"{type(self).__name__}(group={self.group!r}, fs_root={self.fs_root!r}, skip_variables={self.skip_variables!r})"

    def __call__(self, url: str, registry: Any):
        """The reference set at ``url`` as a ``ManifestStore`` over ``registry``."""
        from virtualizarr.manifests import ManifestStore

        from .store import ReferenceStore

        store = ReferenceStore(os.fspath(url), **self.options)
        manifests = _rs.reference_manifests(store._handle, self.fs_root)
        return ManifestStore(group=_group(manifests, self.group, self.skip_variables, "references"), registry=registry)


class KerchunkJSONParser(_ReferenceParser):
    """VirtualiZarr's ``KerchunkJSONParser(group=None, fs_root=None, skip_variables=None)``,
    read in Rust: a JSON reference set (version 0 or 1, plain or compressed, with templates) at
    any URL :class:`~zarrs_kerchunk.ReferenceStore` opens, whose keyword options (credentials,
    ``storage_options`` ...) it takes too. Targets are named as the store reads them: templates
    expanded, and a relative URL joined to ``fs_root``, or, without one, to the set's own folder
    (VirtualiZarr refuses it). The set's nested groups are kept. Zarr v3 reference sets and
    whole-file references (which a manifest cannot hold) are refused by name."""


class KerchunkParquetParser(_ReferenceParser):
    """VirtualiZarr's ``KerchunkParquetParser(group=None, fs_root=None, skip_variables=None,
    reader_options=None)``, read in Rust: fsspec's parquet reference layout, read with
    ``object_store`` rather than fsspec, so ``reader_options`` (fsspec's) is refused unless
    empty: give :class:`~zarrs_kerchunk.ReferenceStore`'s keyword options instead. Otherwise as
    :class:`KerchunkJSONParser`."""

    def __init__(
        self,
        group: str | None = None,
        fs_root: str | None = None,
        skip_variables: Iterable[str] | None = None,
        reader_options: dict | None = None,
        **options: Any,
    ) -> None:
        if reader_options:
            raise NotImplementedError(
                "reader_options: fsspec's options do not reach object_store; give ReferenceStore's "
                "keyword options (storage_options=, anonymous= ...)"
            )
        super().__init__(group, fs_root, skip_variables, **options)
