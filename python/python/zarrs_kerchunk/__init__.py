"""Read kerchunk reference sets from zarr-python, xarray and Dask, through Rust.

>>> import xarray as xr
>>> from zarrs_kerchunk import ReferenceStore
>>> store = ReferenceStore("refs.json")                                # doctest: +SKIP
>>> ds = xr.open_zarr(store, consolidated=False, zarr_format=2)        # doctest: +SKIP

The store is read-only and picklable: a Dask worker opens each reference set once. Errors are
in :mod:`zarrs_kerchunk.errors`. Importing the package registers numcodecs stand-ins that decode
GRIB2 and TIFF's codecs in Rust, for the ids numcodecs does not know (:mod:`zarrs_kerchunk.codecs`).
"""

from zarrs_kerchunk import codecs, errors, tools
from zarrs_kerchunk._rs import __version__
from zarrs_kerchunk.errors import (
    AccessDeniedError,
    InvalidReferencesError,
    KerchunkError,
    ReferenceReadError,
    ReferencesNotFoundError,
    TargetUnreachableError,
)
from zarrs_kerchunk.store import ReferenceStore

__all__ = [
    "AccessDeniedError",
    "InvalidReferencesError",
    "KerchunkError",
    "ReferenceReadError",
    "ReferenceStore",
    "ReferencesNotFoundError",
    "TargetUnreachableError",
    "__version__",
    "codecs",
    "errors",
    "tools",
]

codecs.register()
