#!/usr/bin/env python3
"""FITS images with BZERO and BSCALE, as kerchunk.fits references them: a `fixedscaleoffset`
filter whose `dtype` (`<f8`) is not the array's (the stored type, `>i2`), which zarrs refused.

Run from the repository root in python/tests/run.sh's virtualenv with astropy added (versions in
README.md beside this file; not needed by the tests themselves):

    python tests/codecs/fits/make.py

For each CASE it writes CASE.fits (astropy), CASE.kerchunk.json (kerchunk.fits.process_file,
as a version 1 document, the path replaced by the file's name) and CASE.npy: the image's
values by the FITS standard, `stored * BSCALE + BZERO` in float64 from the integers astropy
reads unscaled. The script asserts that astropy's own scaled reading is within its float32
rounding of them, and that where BSCALE is 1 numcodecs' decoding of kerchunk's filter gives
them exactly (where it is not, numcodecs divides by BSCALE: README.md).
"""
import json
import pathlib

import numcodecs
import numpy as np
from astropy.io import fits
from kerchunk.fits import process_file

HERE = pathlib.Path(__file__).resolve().parent

# name -> (stored dtype, BSCALE, BZERO)
CASES = {
    # FITS' unsigned 16-bit integers: int16 stored, BZERO 32768.
    "uint16": (">i2", 1.0, 32768.0),
    # FITS' unsigned 32-bit integers: int32 stored, BZERO 2^31.
    "uint32": (">i4", 1.0, 2147483648.0),
    # A scaled image: BSCALE 0.5 (see README.md: kerchunk writes it as numcodecs' scale).
    "scaled_i2": (">i2", 0.5, 100.0),
}


def main():
    for seed, (name, (stored, bscale, bzero)) in enumerate(CASES.items()):
        rng = np.random.default_rng(seed)
        info = np.iinfo(stored)
        raw = rng.integers(info.min, info.max, size=(12, 10), endpoint=True).astype(stored)
        raw[0, :3] = [info.min, 0, info.max]
        hdu = fits.PrimaryHDU(raw)
        hdu.header["BSCALE"] = bscale
        hdu.header["BZERO"] = bzero
        path = HERE / f"{name}.fits"
        hdu.writeto(path, overwrite=True)
        refs = process_file(str(path))
        refs = {k: (v.decode() if isinstance(v, bytes) else v) for k, v in refs.items()}
        text = json.dumps({"version": 1, "refs": refs}, indent=0, sort_keys=True).replace(str(path), path.name)
        (HERE / f"{name}.kerchunk.json").write_text(text + "\n")
        meta = json.loads(refs["PRIMARY/.zarray"])
        (config,) = meta["filters"]
        codec = numcodecs.get_codec(config)
        with fits.open(path, do_not_scale_image_data=True) as f:
            stored_values = f[0].data
            assert stored_values.dtype == np.dtype(stored), (name, stored_values.dtype)
        truth = stored_values.astype("f8") * bscale + bzero
        np.save(HERE / f"{name}.npy", truth)
        with fits.open(path) as f:
            scaled = f[0].data
            # astropy gives FITS' unsigned integers as integers, and scaled images as float32 or float64.
            rtol = np.finfo(scaled.dtype).eps if scaled.dtype.kind == "f" else 0
            assert np.allclose(scaled.astype("f8"), truth, rtol=rtol, atol=0), name
        numcodecs_values = codec.decode(stored_values.tobytes()).reshape(raw.shape)
        if bscale == 1.0:
            assert np.array_equal(numcodecs_values, truth), name
        else:
            far = np.abs(numcodecs_values - truth).max()
            print(f"{name}: numcodecs' decoding of kerchunk's filter is up to {far} from the FITS values")


if __name__ == "__main__":
    main()
