#!/usr/bin/env python3
"""Real GeoTIFFs from rasterio's test suite (rasterio/rasterio, tests/data, BSD-3-Clause; see
README.md), referenced by kerchunk, for the TIFF codecs' tests.

Run from the repository root in python/tests/run.sh's virtualenv with rasterio, tifffile and
imagecodecs added:

    python tests/codecs/tiff/real/make.py

For each NAME.tif: NAME.kerchunk.json (kerchunk.tiff.tiff_to_zarr, inline_threshold=0, the path
replaced by the file's name), and for each array of it (the root, or one group per overview
level of a COG) NAME.LEVEL.npy: rasterio's values of that level, band first, at every row and
every 7th column (the files are up to 2880 x 1200 pixels: every row, so that every strip is
checked, one-row strips included, and a seventh of the columns, which keeps the truth small). cases.json says, per file, each array's path, its axes and how far a reader may
be from rasterio: 0, or for JPEG as far as kerchunk's own Python path (fsspec, zarr, imagecodecs)
is, and at least 4. The script checks that path reads rasterio's values exactly where lossless.
For JPEG arrays, NAME.LEVEL.imagecodecs.npy: that path's values (imagecodecs, libjpeg-turbo) on the
same rows and columns, which a JPEG decoder must give.
"""
import json
import os
import pathlib

import numpy as np
import rasterio

HERE = pathlib.Path(__file__).resolve().parent
FILES = ["byte", "rotated", "float_nan", "float_raster_with_nodata", "RGBA.uint16", "world.byte",
         "goes", "cogeo", "alpha"]
STRIDE, TOLERANCE = 7, 4


def band_first(values, axes):
    """tifffile's axes (Y, X), (Y, X, S) or (S, Y, X), numbered on overview levels (Y1, X1, S1),
    as rasterio's (band, y, x)."""
    if len(axes) == 2:
        return values[None]
    if axes[-1].startswith("S"):
        return np.moveaxis(values, -1, 0)
    return values


def main():
    import fsspec
    import imagecodecs.numcodecs
    import zarr
    from kerchunk.tiff import tiff_to_zarr

    imagecodecs.numcodecs.register_codecs(verbose=False)
    os.chdir(HERE)
    cases = {}
    for name in FILES:
        path = HERE / f"{name}.tif"
        refs = tiff_to_zarr(str(path), inline_threshold=0)
        text = json.dumps(refs, indent=0, sort_keys=True).replace(str(path), path.name)
        (HERE / f"{name}.kerchunk.json").write_text(text + "\n")
        refs = json.loads(text)
        fs = fsspec.filesystem("reference", fo=refs, remote_protocol="file")
        arrays = sorted(k.removesuffix(".zarray").rstrip("/") for k in refs if k.endswith(".zarray"))
        entries = []
        for level, array in enumerate(arrays):
            meta = refs[f"{array}/.zarray" if array else ".zarray"]
            meta = json.loads(meta) if isinstance(meta, str) else meta
            attrs = refs[f"{array}/.zattrs" if array else ".zattrs"]
            axes = (json.loads(attrs) if isinstance(attrs, str) else attrs)["_ARRAY_DIMENSIONS"]
            lossy = "jpeg" in (meta["compressor"] or {}).get("id", "")
            options = {"overview_level": level - 1} if level else {}
            with rasterio.open(path, **options) as src:
                truth = src.read()
            theirs = band_first(zarr.open_array(fs.get_mapper(array), mode="r", zarr_format=2)[...], axes)
            assert theirs.shape == truth.shape, (name, array, theirs.shape, truth.shape)
            far = np.nanmax(np.abs(theirs.astype("f8") - truth.astype("f8")))
            same_nan = np.array_equal(np.isnan(theirs.astype("f8")), np.isnan(truth.astype("f8")))
            # JPEG: imagecodecs (libjpeg-turbo) and GDAL upsample chroma differently; kerchunk's path
            # is up to 11 from GDAL on these YCbCr COGs. A reader may be as far as it, and at least 4.
            assert same_nan and (lossy or far == 0), (name, array, far)
            tolerance = max(TOLERANCE, int(far)) if lossy else 0
            np.save(HERE / f"{name}.{level}.npy", np.ascontiguousarray(truth[:, :, ::STRIDE]))
            if lossy:
                # What a JPEG decoder must give: imagecodecs' (libjpeg-turbo's) values of the same tiles.
                np.save(HERE / f"{name}.{level}.imagecodecs.npy", np.ascontiguousarray(theirs[:, :, ::STRIDE]))
            entries.append({"path": array, "axes": axes, "tolerance": tolerance, "shape": list(truth.shape)})
        cases[name] = entries
    (HERE / "cases.json").write_text(json.dumps(cases, indent=1, sort_keys=True) + "\n")


if __name__ == "__main__":
    main()
