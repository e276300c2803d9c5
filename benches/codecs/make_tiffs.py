#!/usr/bin/env python3
"""GeoTIFFs for the TIFF decoding benchmark, written by GDAL (rasterio): 2048 x 2048 pixels in
tiles of 256, in the three compressions COGs use most: LZW (uint16, predictor 2), DEFLATE
(uint16, predictor 2) and ZSTD (float32, predictor 3); with kerchunk's references to each
(OUT/<name>.tif, OUT/<name>.kerchunk.json).

    python benches/codecs/make_tiffs.py OUT
"""
import json
import pathlib
import sys

import numpy as np
import rasterio
from kerchunk.tiff import tiff_to_zarr
from rasterio.transform import from_origin

SIZE, TILE = 2048, 256
CASES = {
    "lzw_u16_pred2": ("uint16", {"compress": "lzw", "predictor": 2}),
    "deflate_u16_pred2": ("uint16", {"compress": "deflate", "predictor": 2}),
    "zstd_f32_pred3": ("float32", {"compress": "zstd", "predictor": 3}),
}


def main(out):
    out.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(3)
    y, x = np.mgrid[0:SIZE, 0:SIZE]
    # An elevation-like surface with noise: what such files hold.
    field = 1500 + 800 * np.sin(x / 300.0) * np.cos(y / 250.0) + rng.normal(0, 4, (SIZE, SIZE))
    for name, (dtype, options) in CASES.items():
        path = out / f"{name}.tif"
        profile = {"driver": "GTiff", "height": SIZE, "width": SIZE, "count": 1, "dtype": dtype,
                   "crs": "EPSG:32633", "transform": from_origin(500000.0, 4500000.0, 30.0, 30.0),
                   "tiled": True, "blockxsize": TILE, "blockysize": TILE, **options}
        with rasterio.open(path, "w", **profile) as dst:
            dst.write(field.astype(dtype)[None])
        refs = tiff_to_zarr(str(path), inline_threshold=0)
        (out / f"{name}.kerchunk.json").write_text(json.dumps(refs))


if __name__ == "__main__":
    main(pathlib.Path(sys.argv[1]))
