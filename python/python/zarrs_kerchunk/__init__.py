"""Read kerchunk reference sets from zarr-python, xarray and Dask, through Rust.

>>> import xarray as xr
>>> from zarrs_kerchunk import ReferenceStore
>>> store = ReferenceStore("refs.json")                                # doctest: +SKIP
>>> ds = xr.open_zarr(store, consolidated=False, zarr_format=2)        # doctest: +SKIP

The store is read-only and picklable: a Dask worker opens each reference set once. Errors are
in :mod:`zarrs_kerchunk.errors`. Importing the package registers numcodecs stand-ins that decode
GRIB2 and TIFF's codecs in Rust, for the ids numcodecs does not know (:mod:`zarrs_kerchunk.codecs`).
"""

from typing import TYPE_CHECKING, Any

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

if TYPE_CHECKING:
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


def __getattr__(name: str) -> Any:
    # ReferenceStore is imported when first asked for: it imports zarr, which the tools (a
    # spread scan's client, say) never need.
    if name == "ReferenceStore":
        from zarrs_kerchunk.store import ReferenceStore

        globals()["ReferenceStore"] = ReferenceStore
        return ReferenceStore
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
