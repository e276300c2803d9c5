#!/usr/bin/env python3
"""GRIB2 messages of HRRR's size (1799 x 1059 points) for the decoding benchmark, written by
eccodes in the packings HRRR and GFS use (complex with spatial differencing of order 2) and
in simple, PNG and JPEG 2000 packing, one message per file: OUT/<packing>.grib2.

    python benches/codecs/make_messages.py OUT
"""
import pathlib
import sys

import eccodes
import numpy as np

NI, NJ = 1799, 1059


def field(seed):
    rng = np.random.default_rng(seed)
    y, x = np.mgrid[0:NJ, 0:NI]
    return 280 + 15 * np.sin(x / 90.0) * np.cos(y / 70.0) + 0.3 * rng.normal(size=(NJ, NI))


PACKINGS = {
    "complex_sd2": {"packingType": "grid_complex_spatial_differencing", "orderOfSpatialDifferencing": 2},
    "simple": {"packingType": "grid_simple"},
    "png": {"packingType": "grid_png"},
    # NCEP's other products (NAM, RAP, GEFS) and older GFS files: JPEG 2000, lossless.
    "jpeg": {"packingType": "grid_jpeg"},
}


def main(out):
    out.mkdir(parents=True, exist_ok=True)
    for seed, (name, keys) in enumerate(PACKINGS.items()):
        h = eccodes.codes_grib_new_from_samples("regular_ll_sfc_grib2")
        for key, value in {
            "Ni": NI,
            "Nj": NJ,
            "latitudeOfFirstGridPointInDegrees": 60.0,
            "latitudeOfLastGridPointInDegrees": 60.0 - (NJ - 1) * 0.05,
            "jDirectionIncrementInDegrees": 0.05,
            "longitudeOfFirstGridPointInDegrees": 0.0,
            "longitudeOfLastGridPointInDegrees": (NI - 1) * 0.1,
            "iDirectionIncrementInDegrees": 0.1,
        }.items():
            eccodes.codes_set(h, key, value)
        for key, value in keys.items():
            eccodes.codes_set(h, key, value)
        # HRRR's temperatures: a decimal scale factor of 1 and 12 bits (0.1 K).
        eccodes.codes_set(h, "bitsPerValue", 12)
        eccodes.codes_set_values(h, field(seed).ravel())
        with open(out / f"{name}.grib2", "wb") as f:
            eccodes.codes_write(h, f)
        eccodes.codes_release(h)


if __name__ == "__main__":
    main(pathlib.Path(sys.argv[1]))
