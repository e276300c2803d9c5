#!/usr/bin/env python3
"""GeoTIFFs and COGs for the TIFF scanner's tests, and what rasterio, rioxarray and kerchunk say
of them and of the TIFFs of tests/codecs/tiff (and its real/ folder).

Run from the repository root in python/tests/run.sh's virtualenv with rasterio, rioxarray,
tifffile and imagecodecs added (the versions are in README.md beside this file):

    python tests/scan/tiff/make.py

It writes, beside itself:
- the files of FILES, by GDAL (rasterio), from values made here;
- for each: NAME.kerchunk.json (kerchunk.tiff.tiff_to_zarr, inline_threshold=0, the path
  replaced by the file's name), NAME.LEVEL.npy (rasterio's values of each level, band first,
  every 7th row and column) and cases.json, as tests/codecs/tiff/real/make.py does;
- georef.json: for every TIFF of the three folders, what rasterio and rioxarray read: the
  EPSG code, the nodata value, the bands, and per level (the full resolution, then each
  overview) its size, GDAL's geotransform and rioxarray's x and y (every 7th, and the last),
  the bands' scales, offsets and descriptions, and the dataset's metadata items (tags).
"""
import json
import math
import pathlib
import sys

import numpy as np
import rasterio
from rasterio.transform import from_origin

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parents[2]
STRIDE = 7


def field(bands, height, width, dtype, seed):
    rng = np.random.default_rng(seed)
    y, x = np.mgrid[0:height, 0:width]
    out = []
    for band in range(bands):
        f = 40 * np.sin(x / 11.0 + band) + 30 * np.cos(y / 9.0) + rng.normal(0, 2, (height, width))
        if np.issubdtype(dtype, np.integer):
            info = np.iinfo(dtype)
            scale, shift = (1, 128) if info.bits == 8 else (100, 0 if info.min < 0 else 10000)
            f = np.clip(f * scale + shift, info.min + 1, info.max - 1)
        out.append(f.astype(dtype))
    return np.stack(out)


# name -> (driver, dtype, bands, (height, width), crs, transform, nodata, creation options, edit)
FILES = {
    # The doc example too (crates/kerchunk_scan/examples/data): two bands, UTM, two overviews.
    "cog_utm": ("COG", "uint16", 2, (120, 160), "EPSG:32633", from_origin(500000, 4500000, 30, 30), 65535,
                {"compress": "deflate", "predictor": 2, "blocksize": 32, "overview_count": 2}, None),
    "cog_geographic_bigtiff": ("COG", "float32", 1, (90, 180), "EPSG:4326", from_origin(-180, 90, 2, 2),
                               float("nan"), {"compress": "lzw", "predictor": 3, "blocksize": 32,
                                              "overview_count": 1, "bigtiff": "yes"}, None),
    "point_big_endian": ("GTiff", "int16", 1, (64, 48), "EPSG:3857", from_origin(-20000, 60000, 500, 500), -32768,
                         {"tiled": True, "blockxsize": 16, "blockysize": 16, "endianness": "big",
                          "compress": "zstd"}, "point"),
    "laea_strips": ("GTiff", "float64", 1, (40, 30), "+proj=laea +lat_0=52 +lon_0=10 +x_0=4321000 +y_0=3210000 "
                    "+ellps=GRS80 +units=m +no_defs", from_origin(4000000, 3000000, 1000, 1000), None,
                    {"blockysize": 8}, None),
    "masked_rgb": ("GTiff", "uint8", 3, (48, 64), "EPSG:2154", from_origin(700000, 6600000, 10, 10), None,
                   {"tiled": True, "blockxsize": 32, "blockysize": 32, "compress": "deflate",
                    "interleave": "pixel"}, "mask"),
    "sparse": ("GTiff", "uint8", 1, (64, 64), "EPSG:32631", from_origin(300000, 5000000, 20, 20), None,
               {"tiled": True, "blockxsize": 32, "blockysize": 32, "sparse_ok": True}, "sparse"),
    # Bands by band, each with a description; a scale and offset the bands share, and a
    # dataset item: GDAL_METADATA's band and dataset items.
    "described_bands": ("GTiff", "int16", 3, (32, 48), "EPSG:32632", from_origin(400000, 5500000, 100, 100), -999,
                        {"tiled": True, "blockxsize": 16, "blockysize": 16, "compress": "lzw",
                         "interleave": "band"}, "describe"),
}


def write(name):
    driver, dtype, bands, (height, width), crs, transform, nodata, options, edit = FILES[name]
    values = field(bands, height, width, np.dtype(dtype), len(name))
    path = HERE / f"{name}.tif"
    profile = dict(driver=driver, dtype=dtype, count=bands, height=height, width=width, crs=crs,
                   transform=transform, nodata=nodata, **options)
    with rasterio.Env(GDAL_TIFF_INTERNAL_MASK=True):
        with rasterio.open(path, "w", **profile) as dst:
            if edit == "point":
                dst.update_tags(AREA_OR_POINT="Point")
            if edit == "sparse":
                # Only the first tile is written: the other three stay empty (offset and count 0).
                dst.write(values[:, :32, :32], window=rasterio.windows.Window(0, 0, 32, 32))
                return
            dst.write(values)
            if edit == "describe":
                for band, name in enumerate(["red edge", "near infrared", "short-wave <1>"], start=1):
                    dst.set_band_description(band, name)
                dst.scales = (0.01,) * bands
                dst.offsets = (-5.0,) * bands
                dst.update_tags(PRODUCT="demo & test")
            if edit == "mask":
                mask = np.full((height, width), 255, np.uint8)
                mask[:10, :10] = 0
                dst.write_mask(mask)


def band_first(values, axes):
    if len(axes) == 2:
        return values[None]
    if axes[-1].startswith("S"):
        return np.moveaxis(values, -1, 0)
    return values


def references(name):
    """kerchunk's references and rasterio's values per level, as tests/codecs/tiff/real/make.py."""
    from kerchunk.tiff import tiff_to_zarr

    path = HERE / f"{name}.tif"
    refs = tiff_to_zarr(str(path), inline_threshold=0)
    text = json.dumps(refs, indent=0, sort_keys=True).replace(str(path), path.name)
    (HERE / f"{name}.kerchunk.json").write_text(text + "\n")
    refs = json.loads(text)
    arrays = sorted(k.removesuffix(".zarray").rstrip("/") for k in refs if k.endswith(".zarray"))
    entries = []
    for level, array in enumerate(arrays):
        attrs = refs[f"{array}/.zattrs" if array else ".zattrs"]
        axes = (json.loads(attrs) if isinstance(attrs, str) else attrs)["_ARRAY_DIMENSIONS"]
        with rasterio.open(path, **({"overview_level": level - 1} if level else {})) as src:
            truth = src.read()
        np.save(HERE / f"{name}.{level}.npy", np.ascontiguousarray(truth[:, ::STRIDE, ::STRIDE]))
        entries.append({"path": array, "axes": axes, "tolerance": 0, "shape": list(truth.shape)})
    return entries


def sample(values):
    values = [float(v) for v in values]
    return {"every7": values[::STRIDE], "last": values[-1], "length": len(values)}


def georeference(path):
    """What rasterio and rioxarray read of the file's georeferencing, level by level."""
    import rioxarray

    levels = []
    with rasterio.open(path) as src:
        epsg = src.crs.to_epsg() if src.crs else None
        nodata = src.nodata
        count = src.count
        overviews = len(src.overviews(1))
        masks = [flag.name for flag in src.mask_flag_enums[0]]
        scales, offsets, descriptions = list(src.scales), list(src.offsets), list(src.descriptions)
        tags = src.tags()
    for level in range(overviews + 1):
        options = {"overview_level": level - 1} if level else {}
        with rasterio.open(path, **options) as src:
            transform = list(src.transform.to_gdal())
            size = [src.height, src.width]
        da = rioxarray.open_rasterio(path, **options)
        rectilinear = "x" in da.coords and "y" in da.coords
        levels.append({
            "height": size[0], "width": size[1], "transform": transform,
            "x": sample(da.x.values) if rectilinear else None,
            "y": sample(da.y.values) if rectilinear else None,
        })
    if nodata is not None and math.isnan(nodata):
        nodata = "NaN"
    return {"epsg": epsg, "nodata": nodata, "bands": count, "mask_flags": masks, "levels": levels,
            "scales": scales, "offsets": offsets, "descriptions": descriptions, "tags": tags}


def main():
    cases = {}
    for name in FILES:
        write(name)
        cases[name] = references(name)
    (HERE / "cases.json").write_text(json.dumps(cases, indent=1, sort_keys=True) + "\n")
    georef = {}
    for folder in (ROOT / "tests/codecs/tiff", ROOT / "tests/codecs/tiff/real", HERE):
        for path in sorted(folder.glob("*.tif")):
            try:
                georef[str(path.relative_to(ROOT))] = georeference(path)
            except rasterio.errors.RasterioIOError as error:
                # JPEG 2000 and JPEG XL tiles (written by tifffile): this GDAL has no codec for them.
                print(f"{path.name}: not georeferenced: {error}", file=sys.stderr)
    (HERE / "georef.json").write_text(json.dumps(georef, indent=1, sort_keys=True) + "\n")
    example = ROOT / "crates/kerchunk_scan/examples/data/cog_utm.tif"
    example.write_bytes((HERE / "cog_utm.tif").read_bytes())
    print(f"{len(FILES)} files made, {len(georef)} georeferenced", file=sys.stderr)


if __name__ == "__main__":
    main()
