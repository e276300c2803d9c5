"""An xarray engine that reads kerchunk references and decodes chunks in Rust.

``xr.open_dataset(location, engine="zarrs_kerchunk", chunks={})`` opens the references as
xarray's zarr engine does (the same dimensions, attributes, fill values and CF decoding, from
the same code), but every chunk of a fixed-size data type is fetched and decoded by zarrs with
the GIL released, straight into a NumPy array: no zarr-python codec pipeline, no asyncio loop.
Variable-length strings are read through zarr-python, as the zarr engine reads them.

Keyword arguments that are not xarray's decoders are the options of
:class:`~zarrs_kerchunk.ReferenceStore` (``storage_options``, ``allowed_prefixes`` ...), but for
its disk cache, ``cache_dir`` (xarray's own ``cache`` argument keeps arrays in memory):
``backend_kwargs={"cache_dir": "/var/tmp/ranges"}``.

``xr.open_datatree(location, engine="zarrs_kerchunk")`` opens every group of the set as a node of
a tree, each as :func:`open_dataset` opens it: a COG's overviews (``overview_1``...) or a GRIB
file's ``grib_tree`` hierarchy as the scanner writes them.

A set whose root is an array, not a group (kerchunk's references to a single-level TIFF), opens
as a dataset of one data variable named :data:`ROOT_ARRAY_NAME` (``"data"``), its dimensions
from ``_ARRAY_DIMENSIONS`` and its fill value as ``_FillValue``, decoded as the zarr engine
decodes a variable.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Iterable
from typing import Any

import numpy as np
from xarray.backends import BackendArray, BackendEntrypoint
from xarray.backends.store import StoreBackendEntrypoint
from xarray.backends.zarr import ZarrStore
from xarray.core import indexing
from xarray.core.variable import Variable

from zarrs_kerchunk._rs import ArrayHandle
from zarrs_kerchunk.errors import InvalidReferencesError
from zarrs_kerchunk.store import ReferenceStore

__all__ = ["ROOT_ARRAY_NAME", "RustArray", "ZarrsKerchunkBackendEntrypoint"]

#: The name of the one data variable of a set whose root is an array.
ROOT_ARRAY_NAME = "data"


class RustArray(BackendArray):
    """An array of a reference set whose selections zarrs reads and decodes (the GIL released).

    Picklable: it pickles as its store (a location and options) and its path, and opens the
    array again, once, where it is unpickled.
    """

    __slots__ = ("_handle", "dtype", "path", "shape", "store")

    def __init__(self, store: ReferenceStore, path: str, shape: tuple[int, ...], dtype: np.dtype) -> None:
        self.store, self.path, self.shape = store, path, tuple(shape)
        # zarrs decodes into native byte order.
        self.dtype = dtype.newbyteorder("=") if dtype.byteorder not in ("|", "=") else dtype
        self._handle: ArrayHandle | None = None

    def __getstate__(self) -> tuple[Any, ...]:
        return (self.store, self.path, self.shape, self.dtype)

    def __setstate__(self, state: tuple[Any, ...]) -> None:
        self.store, self.path, self.shape, self.dtype = state
        self._handle = None

    def _array(self) -> ArrayHandle:
        if self._handle is None:
            self._handle = ArrayHandle(self.store._handle, self.path)
        return self._handle

    def take_decoded_dtype(self) -> None:
        """Opens the array in Rust and takes the dtype zarrs decodes to, where the store serves
        metadata that zarr-python reads as written otherwise (kerchunk's FITS images: `>i2`
        stored, float64 decoded)."""
        name = self._array().data_type
        try:
            decoded = np.dtype(name) if name is not None else None
        except TypeError:
            # A zarrs type numpy does not name (raw bits `r40` for `|S5`): the metadata's stands.
            return
        if decoded is not None and decoded.kind in "biufc" and decoded != self.dtype:
            self.dtype = decoded

    def __getitem__(self, key: indexing.ExplicitIndexer) -> np.ndarray:
        if isinstance(key, indexing.VectorizedIndexer) and all(isinstance(k, np.ndarray) for k in key.tuple):
            # Points: each chunk that holds one is read once, not the block that bounds them all.
            return self._points(key.tuple)
        return indexing.explicit_indexing_adapter(key, self.shape, indexing.IndexingSupport.OUTER, self._read)

    async def async_getitem(self, key: indexing.ExplicitIndexer) -> np.ndarray:
        return await asyncio.to_thread(self.__getitem__, key)

    def _read(self, key: tuple[Any, ...]) -> np.ndarray:
        """Outer indexing: the block that bounds the selection is read, then cut to it."""
        ranges, cuts = [], []
        for k, n in zip(key, self.shape, strict=True):
            if isinstance(k, slice):
                start, stop, step = k.indices(n)
                if step < 0:
                    k = np.arange(start, stop, step)
                else:
                    stop = max(start, stop)
                    ranges.append((start, stop))
                    cuts.append(slice(None, None, step) if step != 1 else slice(None))
                    continue
            if isinstance(k, (int, np.integer)):
                ranges.append((int(k), int(k) + 1))
                cuts.append(0)
                continue
            index = np.asarray(k, dtype=np.int64)
            if index.size == 0:
                ranges.append((0, 0))
                cuts.append(slice(None))
                continue
            low = int(index.min())
            ranges.append((low, int(index.max()) + 1))
            cuts.append(index - low)
        block = self._block(ranges)
        # Cut from the last axis, so that an integer's dropped axis does not renumber the rest.
        for axis in reversed(range(len(cuts))):
            cut = cuts[axis]
            if isinstance(cut, np.ndarray):
                block = np.take(block, cut, axis=axis)
            elif isinstance(cut, int):
                block = np.take(block, cut, axis=axis) if block.ndim else block
            elif cut != slice(None):
                block = block[(slice(None),) * axis + (cut,)]
        return block

    def _points(self, key: tuple[np.ndarray, ...]) -> np.ndarray:
        """Vectorized (pointwise) indexing by integer arrays, broadcast together."""
        arrays = np.broadcast_arrays(*(np.asarray(k, dtype=np.int64) for k in key))
        shape = arrays[0].shape if arrays else ()
        coordinates = []
        for axis, (index, size) in enumerate(zip(arrays, self.shape, strict=True)):
            flat = index.ravel()
            flat = np.where(flat < 0, flat + size, flat)
            if flat.size and (flat.min() < 0 or flat.max() >= size):
                raise IndexError(f"index out of bounds for axis {axis} of size {size}")
            coordinates.append(flat.tolist())
        data = self._array().read_points(coordinates)
        if data is None:  # pragma: no cover - variable-length types are read through zarr
            raise TypeError(f"{self.path}: a variable-length data type cannot be decoded in Rust")
        return np.frombuffer(data, dtype=self.dtype).reshape(shape)

    def _block(self, ranges: list[tuple[int, int]]) -> np.ndarray:
        shape = tuple(stop - start for start, stop in ranges)
        if 0 in shape:
            return np.empty(shape, dtype=self.dtype)
        data = self._array().read(ranges)
        if data is None:  # pragma: no cover - variable-length types are read through zarr
            raise TypeError(f"{self.path}: a variable-length data type cannot be decoded in Rust")
        return np.frombuffer(data, dtype=self.dtype).reshape(shape)


class _RustDecodedStore(ZarrStore):
    """xarray's zarr store, with each fixed-size variable's data read by :class:`RustArray`."""

    def open_store_variable(self, name: str) -> Variable:
        variable = super().open_store_variable(name)
        zarr_array = self.members[name]
        store = self.zarr_group.store
        dtype = np.dtype(zarr_array.dtype) if isinstance(zarr_array.dtype, np.dtype) else None
        if not isinstance(store, ReferenceStore) or dtype is None or dtype.kind in "OTU" or dtype.hasobject:
            return variable
        array = RustArray(store, zarr_array.path, zarr_array.shape, dtype)
        try:
            array.take_decoded_dtype()
        except InvalidReferencesError:
            # A data type or codec zarrs does not decode: zarr-python reads it, as the zarr engine does.
            return variable
        return Variable(variable.dims, indexing.LazilyIndexedArray(array), variable.attrs, variable.encoding)


def _store_options(options: dict[str, Any]) -> dict[str, Any]:
    """The store's options from the engine's: ``cache_dir`` is the store's ``cache`` (xarray's
    own ``cache`` argument, arrays kept in memory, takes the name)."""
    if "cache_dir" not in options:
        return options
    if "cache" in options:
        raise TypeError("cache_dir is the store's cache: give it once")
    options = dict(options)
    options["cache"] = options.pop("cache_dir")
    return options


class ZarrsKerchunkBackendEntrypoint(BackendEntrypoint):
    """``engine="zarrs_kerchunk"``: kerchunk references, decoded in Rust."""

    description = "Open kerchunk reference sets (JSON or parquet), decoding chunks in Rust with zarrs"
    url = "https://github.com/zarrs/zarrs_kerchunk"
    open_dataset_parameters = (
        "filename_or_obj",
        "drop_variables",
        "mask_and_scale",
        "decode_times",
        "concat_characters",
        "decode_coords",
        "use_cftime",
        "decode_timedelta",
        "group",
    )

    def guess_can_open(self, filename_or_obj: Any) -> bool:
        # Only our own stores: a ".json" name could be any JSON file.
        return isinstance(filename_or_obj, ReferenceStore)

    def open_dataset(  # type: ignore[override]
        self,
        filename_or_obj: str | os.PathLike[str] | ReferenceStore,
        *,
        mask_and_scale: bool = True,
        decode_times: bool = True,
        concat_characters: bool = True,
        decode_coords: bool = True,
        drop_variables: str | Iterable[str] | None = None,
        use_cftime: bool | None = None,
        decode_timedelta: bool | None = None,
        group: str | None = None,
        **options: Any,
    ):
        if isinstance(filename_or_obj, ReferenceStore):
            if options:
                raise TypeError(f"options {sorted(options)} are for opening a location, not an opened ReferenceStore")
            store = filename_or_obj
        else:
            store = ReferenceStore(filename_or_obj, **_store_options(options))
        decoders = {
            "mask_and_scale": mask_and_scale,
            "decode_times": decode_times,
            "concat_characters": concat_characters,
            "decode_coords": decode_coords,
            "drop_variables": drop_variables,
            "use_cftime": use_cftime,
            "decode_timedelta": decode_timedelta,
        }
        if group is None and _root_is_an_array(store):
            return _root_array_dataset(store, decoders)
        zarr_format = _zarr_format(store)
        zarr_store = _RustDecodedStore.open_group(
            store, group=group, mode="r", consolidated=None, zarr_format=zarr_format, use_zarr_fill_value_as_mask=None
        )
        return StoreBackendEntrypoint().open_dataset(
            zarr_store,
            mask_and_scale=mask_and_scale,
            decode_times=decode_times,
            concat_characters=concat_characters,
            decode_coords=decode_coords,
            drop_variables=drop_variables,
            use_cftime=use_cftime,
            decode_timedelta=decode_timedelta,
        )


    def open_groups_as_dict(  # type: ignore[override]
        self,
        filename_or_obj: str | os.PathLike[str] | ReferenceStore,
        *,
        group: str | None = None,
        **kwargs: Any,
    ) -> dict[str, Any]:
        """Every group of the set (under ``group``, if given) opened by :meth:`open_dataset`,
        by its path from the root (``"/"``, ``"/overview_1"`` ...)."""
        import zarr

        decoders = {key: kwargs.pop(key) for key in list(kwargs) if key in self.open_dataset_parameters}
        store = (
            filename_or_obj
            if isinstance(filename_or_obj, ReferenceStore)
            else ReferenceStore(filename_or_obj, **_store_options(kwargs))
        )
        base = (group or "").strip("/")
        top = zarr.open_group(store, mode="r", zarr_format=2, path=base or None)
        paths = [""] + sorted(path for path, member in top.members(max_depth=None) if isinstance(member, zarr.Group))
        groups = {}
        for path in paths:
            inner = "/".join(part for part in (base, path) if part)
            groups["/" + path] = self.open_dataset(store, group=inner or None, **decoders)
        return groups

    def open_datatree(  # type: ignore[override]
        self,
        filename_or_obj: str | os.PathLike[str] | ReferenceStore,
        **kwargs: Any,
    ):
        """The set's groups as an ``xarray.DataTree`` (see :meth:`open_groups_as_dict`)."""
        from xarray import DataTree

        return DataTree.from_dict(self.open_groups_as_dict(filename_or_obj, **kwargs))


def _zarr_format(store: ReferenceStore) -> int:
    """2, or 3 for a Zarr v3 set (files of uneven length combined, on rectilinear chunk grids):
    zarr-python reads its metadata from 3.4 on, with its ``array.rectilinear_chunks`` option,
    which this turns on."""
    if store._handle.get_sync("zarr.json") is None:
        return 2
    import zarr

    version = tuple(int(part) for part in zarr.__version__.split(".")[:2] if part.isdigit())
    if version < (3, 4):
        raise InvalidReferencesError(
            f"the references are Zarr v3 on rectilinear chunk grids (files of uneven length combined), which "
            f"zarr-python reads from 3.4 on; this is zarr {zarr.__version__}"
        )
    zarr.config.set({"array.rectilinear_chunks": True})
    return 3


def _root_is_an_array(store: ReferenceStore) -> bool:
    """Whether the set's root is an array (a ``.zarray`` and no ``.zgroup`` at the top)."""
    return store._handle.get_sync(".zarray") is not None and store._handle.get_sync(".zgroup") is None


def _root_array_dataset(store: ReferenceStore, decoders: dict[str, Any]):
    """The root array as a dataset of one variable, :data:`ROOT_ARRAY_NAME`, read by zarrs."""
    import xarray as xr
    import zarr

    array = zarr.open_array(store, mode="r", zarr_format=2)
    attrs = dict(array.attrs)
    dims = attrs.pop("_ARRAY_DIMENSIONS", None) or [f"dim_{axis}" for axis in range(array.ndim)]
    if array.metadata.fill_value is not None:
        # As xarray's zarr engine maps a Zarr V2 fill value.
        attrs["_FillValue"] = array.metadata.fill_value
    data = RustArray(store, "", array.shape, np.dtype(array.dtype))
    data.take_decoded_dtype()
    variable = Variable(dims, indexing.LazilyIndexedArray(data), attrs)
    dataset = xr.Dataset({ROOT_ARRAY_NAME: variable})
    drop = decoders.pop("drop_variables")
    if drop is not None:
        dataset = dataset.drop_vars([drop] if isinstance(drop, str) else list(drop), errors="ignore")
    return xr.decode_cf(dataset, **decoders)
