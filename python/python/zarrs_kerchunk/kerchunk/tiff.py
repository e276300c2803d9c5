"""``kerchunk.tiff.tiff_to_zarr`` and ``TiffToZarr``, scanned in Rust (see :mod:`zarrs_kerchunk.kerchunk`).

kerchunk writes tifffile's layout of a TIFF's first series: one array at the root (``Y``, ``X``
and ``S`` where a pixel has several samples) or, for a pyramid, the group of levels ``0``, ``1``,
... (``Y1``, ``X1``...) with OME-NGFF 0.4 ``multiscales``; the root's attributes are every
tifffile ``*_metadata`` the file has (GDAL's items and structural metadata, the GeoKeys). Our
scan's arrays (``band_data``, ``overview_N/band_data``) have the same chunks, codecs and ranges:
this module lays them out as tifffile does.
"""

from __future__ import annotations

import json
import os
from typing import Any

from . import _access, _scan

__all__ = ["TiffToZarr", "tiff_to_zarr"]

# Our scan's names of a level's axes, as tifffile names them.
_AXES = {"y": "Y", "x": "X", "band": "S"}
# What our scan adds to a data array's attributes that is not one of GDAL's items.
_OURS = {"_ARRAY_DIMENSIONS", "grid_mapping", "coordinates", "AREA_OR_POINT", "scale_factor", "add_offset"}


def tiff_to_zarr(
    urlpath: str,
    remote_options: dict[str, Any] | None = None,
    target: str | os.PathLike[str] | None = None,
    target_options: dict[str, Any] | None = None,
    inline_threshold: int = 0,
    storage_options: dict[str, Any] | None = None,
) -> dict:
    """kerchunk's ``tiff_to_zarr(urlpath, remote_options=None, target=None, target_options=None,
    inline_threshold=0, storage_options=None)``: the references of the TIFF or COG at
    ``urlpath`` in tifffile's layout, as version 0 references (no ``version`` wrapper), written
    to ``target`` (a local path) too if given. ``remote_options`` (else ``storage_options``) are
    fsspec's ``anon``, s3fs's ``key``, ``secret``, ``token`` and ``client_kwargs``, or
    object_store's keys. Chunks smaller than ``inline_threshold`` bytes are held inline.

    Raises ``ValueError`` naming what references cannot express where the scan leaves part of the
    file out (kerchunk's tifffile refuses the same files, or lays them out otherwise);
    ``target_options`` are refused (the target is written locally)."""
    if target_options:
        raise NotImplementedError("target_options: the target is a local path, written without fsspec")
    access = _access(remote_options or storage_options, "remote_options" if remote_options else "storage_options")
    scanned = _scan([urlpath], inline_threshold or None, True, access, refuse_skipped=_not_in_series)["refs"]
    out = _tifffile_layout(scanned, urlpath)
    if target is not None:
        with open(target, "w") as f:
            json.dump(out, f)
    return out


class TiffToZarr:
    """kerchunk's ``TiffToZarr(url, storage_options=None, inline_threshold=100, **kwargs)``, whose
    ``translate()`` is :func:`tiff_to_zarr` of its arguments."""

    def __init__(self, url: str, storage_options: dict[str, Any] | None = None, inline_threshold: int = 100,
                 **kwargs: Any) -> None:
        self.url = url
        self.storage_options = storage_options
        self.inline = inline_threshold
        self.kwargs = kwargs

    def translate(self) -> dict:
        """The file's references (see :func:`tiff_to_zarr`)."""
        return tiff_to_zarr(self.url, inline_threshold=self.inline, storage_options=self.storage_options,
                            **self.kwargs)


def _not_in_series(skipped: dict[str, str]) -> bool:
    """Whether what the scan left out belongs to tifffile's first series, which kerchunk writes:
    all but GDAL's masks, which tifffile keeps out of it too. (Another image than the first may be
    one of the series' pages, where tifffile stacks pages of one shape.)"""
    return not skipped["reason"].startswith("a transparency mask")


def _tifffile_layout(scanned: dict[str, Any], url: str) -> dict[str, Any]:
    """Our scan's references of one TIFF, laid out as tifffile writes them for kerchunk."""
    levels = ["band_data"]
    while f"overview_{len(levels)}/band_data/.zarray" in scanned:
        levels.append(f"overview_{len(levels)}/band_data")
    arrays = [_level(scanned, path) for path in levels]
    root = json.loads(scanned[".zattrs"])
    root.pop("multiscales", None)
    # GDAL's band items, which our scan gives the data array: one value where the bands agree,
    # else one per band (kerchunk keeps the last band's).
    root.update((name, value) for name, value in json.loads(scanned["band_data/.zattrs"]).items()
                if name not in _OURS)
    out: dict[str, Any] = {}
    if len(arrays) == 1:
        zarray, names, _ = arrays[0]
        out[".zarray"] = json.dumps(zarray)
        out[".zattrs"] = json.dumps({"_ARRAY_DIMENSIONS": names, **root})
        prefixes = [""]
    else:
        _check_pyramid(arrays)
        out[".zgroup"] = json.dumps({"zarr_format": 2})
        out[".zattrs"] = json.dumps({"multiscales": _multiscales(arrays, root), **root})
        base = arrays[0][0]["shape"]
        for n, (zarray, names, _) in enumerate(arrays):
            level_names = [name if size == base_size or n == 0 else f"{name}{n}"
                           for name, size, base_size in zip(names, zarray["shape"], base, strict=True)]
            out[f"{n}/.zarray"] = json.dumps(zarray)
            out[f"{n}/.zattrs"] = json.dumps({"_ARRAY_DIMENSIONS": level_names})
        prefixes = [f"{n}/" for n in range(len(arrays))]
    # Each level's chunks, by the folder of their keys: the prefix tifffile gives them, and
    # which of our indices it keeps.
    levels_of = {path: (prefix, keep) for path, prefix, (_, _, keep) in zip(levels, prefixes, arrays, strict=True)}
    for key, value in scanned.items():
        path, _, name = key.rpartition("/")
        level = levels_of.get(path)
        if level is None or name.startswith(".z"):
            continue
        prefix, keep = level
        chunk = ".".join(i for i, kept in zip(name.split("."), keep, strict=True) if kept)
        out[prefix + chunk] = [url, *value[1:]] if isinstance(value, list) else value
    return out


def _level(scanned: dict[str, Any], path: str) -> tuple[dict, list[str], list[bool]]:
    """One level's ``.zarray`` as tifffile writes it, its axes' names, and which of our axes it
    keeps (not a band axis of one band: tifffile has no ``S`` then)."""
    zarray = json.loads(scanned[f"{path}/.zarray"])
    ours = json.loads(scanned[f"{path}/.zattrs"])["_ARRAY_DIMENSIONS"]
    keep = [not (name == "band" and size == 1) for name, size in zip(ours, zarray["shape"], strict=True)]

    def kept(values: list) -> list:
        return [value for value, k in zip(values, keep, strict=True) if k]

    shape, chunks = kept(zarray["shape"]), kept(zarray["chunks"])
    filters = zarray.get("filters")
    for codec in filters or []:
        if "shape" in codec:
            codec["shape"] = chunks
    fill = zarray["fill_value"]
    if fill is None:
        # tifffile's fill value where GDAL_NODATA is absent: 0, as GDAL reads a tile never written.
        fill = 0.0 if zarray["dtype"][1] == "f" else 0
    tifffile = {"chunks": chunks, "compressor": zarray["compressor"], "dtype": zarray["dtype"],
                "fill_value": fill, "filters": filters, "order": "C", "shape": shape, "zarr_format": 2}
    return tifffile, kept([_AXES[name] for name in ours]), keep


def _check_pyramid(arrays: list[tuple[dict, list[str], list[bool]]]) -> None:
    """Refuse a pyramid tifffile would not make of these levels: each must be one step of one
    factor (2, 3 or 4, found at the first overview) below the one before it, in ``Y`` and ``X``
    (rounded down or up), and alike in all else (its ``pyramidize_series``); tifffile makes the
    others series of their own, which kerchunk leaves out."""
    factor = None
    for n in range(1, len(arrays)):
        (above, names, _), (level, _, _) = arrays[n - 1], arrays[n]

        def one_step(p: int) -> bool:
            return above["dtype"] == level["dtype"] and all(
                j in (i // p, -(-i // p)) if name in "XY" else i == j
                for name, i, j in zip(names, above["shape"], level["shape"], strict=True))

        factor = factor or next((p for p in (2, 3, 4) if one_step(p)), None)
        if factor is None or not one_step(factor):
            raise ValueError(
                f"overview {n} ({level['shape']}) is not one step below {above['shape']} by a factor of 2, 3 or 4 "
                "throughout: tifffile would not make it a level of the pyramid kerchunk writes")


def _multiscales(arrays: list[tuple[dict, list[str], list[bool]]], root: dict[str, Any]) -> list[dict]:
    """tifffile's OME-NGFF 0.4 ``multiscales`` of a pyramid: each level's scale and the first
    level's corner, from the GeoTIFF's pixel size and first tiepoint (or its transformation) as
    tifffile derives them; without GeoKeys, each level's size relative to the first (tifffile
    gives every level the first's scale)."""
    base, names = arrays[0][0]["shape"], arrays[0][1]
    origin, pixel, unit = _geotiff_grid(root) if "KeyDirectoryVersion" in root else (None, None, None)
    axes = []
    for name in names:
        axis: dict[str, Any] = {"name": name, "type": "channel" if name == "S" else "space"}
        if unit and name in "XY":
            axis["unit"] = unit
        axes.append(axis)
    # tifffile gives an axis coordinates where the image is more than one pixel across it.
    mapped = {name for name, size in zip(names, base, strict=True) if pixel and name in "XY" and size > 1}
    datasets = []
    for n, (zarray, _, _) in enumerate(arrays):
        scale = [float(pixel[name] * base_size / size if name in mapped else base_size / size)
                 for name, size, base_size in zip(names, zarray["shape"], base, strict=True)]
        transforms: list[dict[str, Any]] = [{"type": "scale", "scale": scale}]
        if n == 0 and mapped:
            transforms.append({"type": "translation",
                               "translation": [float(origin[a]) if a in mapped else 0.0 for a in names]})
        datasets.append({"path": str(n), "coordinateTransformations": transforms})
    return [{"axes": axes, "datasets": datasets, "name": "", "version": "0.4"}]


# GeoTIFF's linear units as tifffile names them (its geodb.LINEAR_UNIT_NAMES).
_UNITS = {9001: "meter", 9002: "foot", 9003: "foot", 9004: "foot", 9005: "foot", 9006: "foot", 9007: "link",
          9008: "link", 9009: "link", 9010: "chain", 9011: "chain", 9012: "yard", 9013: "yard", 9014: "fathom",
          9015: "nautical_mile"}


def _geotiff_grid(root: dict[str, Any]) -> tuple[dict, dict, str | None] | tuple[None, None, None]:
    """The first pixel's corner and the pixel's size (``Y`` negative) as tifffile derives them
    from the model tags (the first tiepoint and the pixel scale, else the transformation), and
    the linear unit's name (the projection's, else the geographic CRS's)."""
    scale, tiepoint, matrix = root.get("ModelPixelScale"), root.get("ModelTiepoint"), root.get("ModelTransformation")
    if scale is not None and tiepoint is not None:
        tiepoint = tiepoint[0] if isinstance(tiepoint[0], list) else tiepoint
        sx, sy = float(scale[0]), float(scale[1])
        origin = {"X": tiepoint[3] - tiepoint[0] * sx, "Y": tiepoint[4] + tiepoint[1] * sy}
    elif matrix is not None:
        sx, sy = abs(float(matrix[0][0])), abs(float(matrix[1][1]))
        origin = {"X": matrix[0][3], "Y": matrix[1][3]}
    else:
        return None, None, None
    if not (sx > 0 and sy > 0):
        return None, None, None
    projected = root.get("GTModelTypeGeoKey") == 1
    unit = root.get("ProjLinearUnitsGeoKey" if projected else "GeogLinearUnitsGeoKey")
    return origin, {"X": sx, "Y": -sy}, _UNITS.get(unit)
