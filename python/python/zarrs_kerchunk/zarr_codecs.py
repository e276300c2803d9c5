"""zarr-python 3's ``numcodecs.<id>`` codecs for the ids :mod:`zarrs_kerchunk.codecs` decodes in Rust.

Zarr 3 metadata names a numcodecs codec ``numcodecs.<id>`` (VirtualiZarr's manifests of GRIB2 and
TIFF files do: ``numcodecs.grib``, ``numcodecs.imagecodecs_lzw`` ...), and zarr-python resolves
only the ids it wraps itself. For every other id of :data:`~zarrs_kerchunk.codecs.DECODED_IDS`, the
package's ``zarr.codecs`` entry points name a bytes-to-bytes codec here whose decoding runs in Rust
(the GIL released): a GRIB message to its values, a TIFF tile to its pixels. Like the numcodecs
stand-ins, they only decode.

>>> from zarrs_kerchunk.zarr_codecs import codec_class
>>> codec_class("grib").from_dict({"name": "numcodecs.grib", "configuration": {"var": "t"}}).to_dict()
{'name': 'numcodecs.grib', 'configuration': {'var': 't'}}
"""

from __future__ import annotations

import asyncio
import functools
import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np
from zarr.abc.codec import BytesBytesCodec
from zarr.core.common import parse_named_configuration

from zarrs_kerchunk._rs import DECODED_IDS, decode_chunk

if TYPE_CHECKING:
    from typing import Self

    from zarr.core.array_spec import ArraySpec
    from zarr.core.buffer import Buffer

__all__ = ["PREFIX", "RustBytesCodec", "codec_class"]

#: The prefix zarr-python gives numcodecs' ids in Zarr 3 metadata.
PREFIX = "numcodecs."


@dataclass(frozen=True)
class RustBytesCodec(BytesBytesCodec):
    """A numcodecs codec in Zarr 3 metadata (``numcodecs.<id>``) decoded in Rust; one subclass
    per id, made by :func:`codec_class`."""

    codec_id: ClassVar[str] = ""
    is_fixed_size = False

    configuration: dict[str, Any]

    def __init__(self, **configuration: Any) -> None:
        object.__setattr__(self, "configuration", configuration)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Self:
        _, configuration = parse_named_configuration(data, PREFIX + cls.codec_id, require_configuration=False)
        return cls(**(configuration or {}))

    def to_dict(self) -> dict[str, Any]:
        return {"name": PREFIX + self.codec_id, "configuration": dict(self.configuration)}

    def _decode_sync(self, chunk_bytes: Buffer, chunk_spec: ArraySpec) -> Buffer:
        # The chunk's decoded size: what every decoder here makes (values, pixels) is the chunk's
        # elements; a stream that decodes to more is an error, not a larger buffer.
        limit = int(np.prod(chunk_spec.shape)) * chunk_spec.dtype.to_native_dtype().itemsize
        config = json.dumps({"id": self.codec_id, **self.configuration})
        return chunk_spec.prototype.buffer.from_bytes(decode_chunk(config, chunk_bytes.to_bytes(), limit))

    async def _decode_single(self, chunk_bytes: Buffer, chunk_spec: ArraySpec) -> Buffer:
        return await asyncio.to_thread(self._decode_sync, chunk_bytes, chunk_spec)

    async def _encode_single(self, chunk_bytes: Buffer, chunk_spec: ArraySpec) -> Buffer | None:
        raise NotImplementedError(f"{PREFIX}{self.codec_id}: zarrs_kerchunk's codecs only decode")

    def compute_encoded_size(self, input_byte_length: int, chunk_spec: ArraySpec) -> int:
        raise NotImplementedError(f"{PREFIX}{self.codec_id}: zarrs_kerchunk's codecs only decode")


@functools.cache
def codec_class(codec_id: str) -> type[RustBytesCodec]:
    """The :class:`RustBytesCodec` of ``codec_id`` (one class per id)."""
    doc = f"``{PREFIX}{codec_id}``, decoded in Rust."
    return type(f"RustBytesCodec_{codec_id}", (RustBytesCodec,), {"codec_id": codec_id, "__doc__": doc})


# One class per id, named for the package's `zarr.codecs` entry points (pyproject.toml), which
# list the ids zarr-python does not wrap itself: zarr finds them wherever the package is
# installed, a Dask worker that never imported it included.
for _codec_id in DECODED_IDS:
    globals()[f"RustBytesCodec_{_codec_id}"] = codec_class(_codec_id)
