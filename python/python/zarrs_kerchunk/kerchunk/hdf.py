"""``kerchunk.hdf.SingleHdf5ToZarr``, scanned in Rust (see :mod:`zarrs_kerchunk.kerchunk`)."""

from __future__ import annotations

from typing import Any

from . import _access, _scan_one, _url_of

__all__ = ["SingleHdf5ToZarr"]


class SingleHdf5ToZarr:
    """kerchunk's ``SingleHdf5ToZarr(h5f, url=None, spec=1, inline_threshold=500,
    storage_options=None, error="warn", vlen_encode="embed", out=None)`` for HDF5 and NetCDF-4
    files. ``h5f`` is a path or URL, or an open file (or h5py object) with its ``url``; the scan
    reads the file itself, with ``storage_options`` (fsspec's ``anon``, s3fs's ``key``,
    ``secret``, ``token`` and ``client_kwargs``, or object_store's keys). ``error="raise"``
    fails on an array references cannot express; ``"warn"`` leaves it out with a ``UserWarning``
    naming it and why, ``"ignore"`` silently.
    ``spec=0`` returns the references without the version wrapper. ``vlen_encode`` other than
    ``"embed"`` and ``unsupported_inline_threshold`` are refused."""

    def __init__(
        self,
        h5f: Any,
        url: str | None = None,
        spec: int = 1,
        inline_threshold: int = 500,
        storage_options: dict[str, Any] | None = None,
        error: str = "warn",
        vlen_encode: str = "embed",
        out: dict | None = None,
        unsupported_inline_threshold: int | None = None,
    ) -> None:
        if spec not in (0, 1):
            raise ValueError(f"spec={spec!r}: kerchunk's specs are 0 and 1")
        if error not in ("warn", "raise", "ignore"):
            raise ValueError(f'error={error!r}: it is "warn", "raise" or "ignore"')
        if vlen_encode != "embed":
            raise NotImplementedError(f"vlen_encode={vlen_encode!r}: only 'embed' is supported")
        if unsupported_inline_threshold is not None:
            raise NotImplementedError("unsupported_inline_threshold: arrays references cannot express are left out")
        self.url = _url_of(h5f, url, "h5f")
        self.spec = spec
        self.inline = inline_threshold
        self.error = error
        self._access = _access(storage_options)
        self.store_dict = out if out is not None else {}

    def translate(self, preserve_linked_dsets: bool = False) -> dict:
        """The file's references: ``{"version": 1, "refs": {...}}`` (``spec=1``)."""
        if preserve_linked_dsets:
            raise NotImplementedError("preserve_linked_dsets: linked datasets are not kept")
        references = _scan_one(self.url, self.inline, self.error == "raise", self._access, self.error == "warn")
        self.store_dict.update(references["refs"])
        return self.store_dict if self.spec == 0 else {"version": 1, "refs": self.store_dict}
