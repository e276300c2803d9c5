"""``kerchunk.netCDF3.NetCDF3ToZarr``, scanned in Rust (see :mod:`zarrs_kerchunk.kerchunk`)."""

from __future__ import annotations

from typing import Any

from . import _access, _scan_one

__all__ = ["NetCDF3ToZarr"]


class NetCDF3ToZarr:
    """kerchunk's ``NetCDF3ToZarr(filename, storage_options=None, inline_threshold=100,
    max_chunk_size=0, out=None)`` for classic, 64-bit offset and CDF-5 files. ``max_chunk_size``
    (splitting record variables' chunks) is refused unless 0, as are other keyword arguments."""

    def __init__(
        self,
        filename: str,
        storage_options: dict[str, Any] | None = None,
        inline_threshold: int = 100,
        max_chunk_size: int = 0,
        out: dict | None = None,
        **kwargs: Any,
    ) -> None:
        if max_chunk_size:
            raise NotImplementedError(f"max_chunk_size={max_chunk_size}: chunks are not split")
        if kwargs:
            raise TypeError(f"arguments {sorted(kwargs)} are not supported (they are scipy's netcdf_file's)")
        self.filename = str(filename)
        self.inline = inline_threshold
        self._access = _access(storage_options)
        self.out = out if out is not None else {}

    def translate(self) -> dict:
        """The file's references: ``{"version": 1, "refs": {...}}``."""
        references = _scan_one(self.filename, self.inline, False, self._access)
        self.out.update(references["refs"])
        return {"version": 1, "refs": self.out}
