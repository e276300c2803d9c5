"""zarr-python's ``zarrs_kerchunk.crop`` codec: chunks stored larger than their place in a
rectilinear chunk grid, cropped to it.

HDF5 stores a dataset's last chunk whole (padded past the dataset's end). Files of uneven length
combined along a dimension (``zarrs-kerchunk scan FILES --concat time``) put such a chunk in the
middle of the combined array, where the grid says it is shorter than it is stored; no standard
Zarr codec says so yet (zarr-extensions #74, #75). The references list this array-to-array codec
first, configured with ``stored_chunk_shape``: a chunk whose place is ``shape`` is stored at
``max(shape, stored_chunk_shape)`` along each axis and cropped to ``shape``.

The package registers it with zarr-python through the ``zarr.codecs`` entry point, so that
installing it is enough: ``zarr.config.set({"array.rectilinear_chunks": True})`` and
``xr.open_zarr(store, zarr_format=3, consolidated=False)`` read such a set. zarrs decodes it in
Rust (``zarrs_kerchunk_codecs``).

>>> CropCodec(stored_chunk_shape=[10, 4]).to_dict()
{'name': 'zarrs_kerchunk.crop', 'configuration': {'stored_chunk_shape': [10, 4]}}
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

import numpy as np
from zarr.abc.codec import ArrayArrayCodec
from zarr.core.array_spec import ArraySpec
from zarr.core.common import parse_named_configuration

if TYPE_CHECKING:
    from typing import Self

    from zarr.core.buffer import NDBuffer

__all__ = ["NAME", "CropCodec"]

#: The codec's name in Zarr v3 metadata.
NAME = "zarrs_kerchunk.crop"


@dataclass(frozen=True)
class CropCodec(ArrayArrayCodec):
    """Chunks stored at ``stored_chunk_shape`` where their place is smaller, cropped to it."""

    is_fixed_size = True

    stored_chunk_shape: tuple[int, ...]

    def __init__(self, *, stored_chunk_shape: Any) -> None:
        shape = tuple(stored_chunk_shape)
        if not shape or not all(isinstance(n, int) and not isinstance(n, bool) and n > 0 for n in shape):
            raise ValueError(f"{NAME}: stored_chunk_shape must be positive whole numbers, not {stored_chunk_shape!r}")
        object.__setattr__(self, "stored_chunk_shape", shape)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Self:
        _, configuration = parse_named_configuration(data, NAME)
        return cls(**configuration)

    def to_dict(self) -> dict[str, Any]:
        return {"name": NAME, "configuration": {"stored_chunk_shape": list(self.stored_chunk_shape)}}

    def evolve_from_array_spec(self, array_spec: ArraySpec) -> Self:
        if array_spec.ndim != len(self.stored_chunk_shape):
            raise ValueError(
                f"{NAME}: an array of {array_spec.ndim} dimensions, where the stored chunk shape "
                f"{list(self.stored_chunk_shape)} has {len(self.stored_chunk_shape)}"
            )
        return self

    def _stored(self, shape: tuple[int, ...]) -> tuple[int, ...]:
        if len(shape) != len(self.stored_chunk_shape):
            raise ValueError(f"{NAME}: a chunk of shape {shape} for a stored chunk shape {self.stored_chunk_shape}")
        return tuple(max(place, stored) for place, stored in zip(shape, self.stored_chunk_shape, strict=True))

    def resolve_metadata(self, chunk_spec: ArraySpec) -> ArraySpec:
        return replace(chunk_spec, shape=self._stored(chunk_spec.shape))

    def _decode_sync(self, chunk_array: NDBuffer, chunk_spec: ArraySpec) -> NDBuffer:
        stored = self._stored(chunk_spec.shape)
        if tuple(chunk_array.shape) != stored:
            raise ValueError(f"{NAME}: a chunk decoded as {tuple(chunk_array.shape)}, where it is stored as {stored}")
        return chunk_array[tuple(slice(0, n) for n in chunk_spec.shape)]

    async def _decode_single(self, chunk_array: NDBuffer, chunk_spec: ArraySpec) -> NDBuffer:
        return self._decode_sync(chunk_array, chunk_spec)

    def _encode_sync(self, chunk_array: NDBuffer, chunk_spec: ArraySpec) -> NDBuffer | None:
        stored = self._stored(chunk_spec.shape)
        padded = chunk_spec.prototype.nd_buffer.create(
            shape=stored, dtype=chunk_array.dtype, fill_value=chunk_spec.fill_value
        )
        padded[tuple(slice(0, n) for n in chunk_spec.shape)] = chunk_array
        return padded

    async def _encode_single(self, chunk_array: NDBuffer, chunk_spec: ArraySpec) -> NDBuffer | None:
        return self._encode_sync(chunk_array, chunk_spec)

    def compute_encoded_size(self, input_byte_length: int, chunk_spec: ArraySpec) -> int:
        place = int(np.prod(chunk_spec.shape))
        return input_byte_length // max(place, 1) * int(np.prod(self._stored(chunk_spec.shape)))
