#!/usr/bin/env python3
"""A 10 000 x 10 000 COG for the TIFF scanning benchmark: uint16, DEFLATE with predictor 2,
tiles of 512, EPSG:32633, GDAL's overviews (5 levels). Smooth values with noise, so that the
tiles compress as real imagery does.

    python3 make_cog.py OUT.tif      (needs rasterio)
"""
import sys

import numpy as np
import rasterio
from rasterio.transform import from_origin

SIZE = 10_000
rng = np.random.default_rng(0)
y, x = np.mgrid[0:SIZE, 0:SIZE].astype("f4")
values = (20000 + 8000 * np.sin(x / 700) * np.cos(y / 900) + rng.normal(0, 30, (SIZE, SIZE))).astype("u2")
del x, y
profile = dict(driver="COG", dtype="uint16", count=1, height=SIZE, width=SIZE, crs="EPSG:32633",
               transform=from_origin(300000, 5000000, 10, 10), nodata=0, compress="deflate", predictor=2,
               blocksize=512, overview_count=5)
with rasterio.open(sys.argv[1], "w", **profile) as dst:
    dst.write(values, 1)
