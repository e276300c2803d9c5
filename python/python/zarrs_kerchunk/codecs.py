"""numcodecs stand-ins for the codecs that zarrs_kerchunk decodes in Rust.

zarr-python asks numcodecs for every codec of an array it opens, so kerchunk's references to GRIB2
files (``grib``) and to TIFF files (``imagecodecs_lzw``, ``imagecodecs_delta`` ...) open only
where kerchunk with eccodes, or imagecodecs, is installed. :func:`register` registers a codec
class for each id that numcodecs does not know, whose ``decode`` runs the Rust decoder of
``zarrs_kerchunk_codecs`` (the GIL released); ``import zarrs_kerchunk`` calls it, so neither
eccodes, cfgrib nor imagecodecs is needed. Ids numcodecs already knows keep their codecs
(``register(replace=True)`` replaces them). The stand-ins only decode.

>>> from zarrs_kerchunk import codecs
>>> "grib" in codecs.DECODED_IDS
True
"""

from __future__ import annotations

import json
from typing import Any

import numcodecs
import numcodecs.registry
import numpy as np
from numcodecs.abc import Codec
from numcodecs.compat import ensure_contiguous_ndarray, ndarray_copy

from zarrs_kerchunk._rs import DECODED_IDS, decode_chunk

__all__ = ["DECODED_IDS", "MAX_DECODED_BYTES", "RustCodec", "register"]

#: The most a chunk may decode to when numcodecs gives no output buffer (it does not say the
#: chunk's size): a stream that decodes to more is an error, not a larger buffer.
MAX_DECODED_BYTES = 1 << 31


class RustCodec(Codec):
    """A codec whose decoding runs in Rust; one subclass per id, made by :func:`register`."""

    codec_id: str | None = None

    def __init__(self, **configuration: Any) -> None:
        self.configuration = configuration

    def get_config(self) -> dict[str, Any]:
        return {"id": self.codec_id, **self.configuration}

    def encode(self, buf: Any) -> Any:
        raise NotImplementedError(f"{self.codec_id}: zarrs_kerchunk's codecs only decode")

    def decode(self, buf: Any, out: Any = None) -> Any:
        data = ensure_contiguous_ndarray(buf).view("u1").tobytes()
        limit = ensure_contiguous_ndarray(out).nbytes if out is not None else MAX_DECODED_BYTES
        decoded = decode_chunk(json.dumps(self.get_config()), data, limit)
        if out is not None:
            return ndarray_copy(np.frombuffer(decoded, dtype="u1"), out)
        return decoded

    def __repr__(self) -> str:
        return f"RustCodec({self.get_config()!r})"


def register(*, replace: bool = False) -> list[str]:
    """Register a :class:`RustCodec` for each id of :data:`DECODED_IDS` numcodecs does not know.

    With ``replace=True``, for every id, replacing numcodecs' own (kerchunk's ``grib``,
    imagecodecs' codecs, numcodecs' ``lzma``). Returns the ids registered.
    """
    registered = []
    for codec_id in DECODED_IDS:
        known = codec_id in numcodecs.registry.codec_registry or codec_id in numcodecs.registry.entries
        if known and not replace:
            continue
        numcodecs.register_codec(type(f"RustCodec_{codec_id}", (RustCodec,), {"codec_id": codec_id}))
        registered.append(codec_id)
    return registered
