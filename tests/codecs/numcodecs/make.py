#!/usr/bin/env python3
"""numcodecs' filters that zarrs lacks (delta, astype, quantize, bitround) or computes otherwise
(fixedscaleoffset), each on values that
wrap, truncate and round, with what numcodecs decodes: cases.json.

Run from the repository root in python/tests/run.sh's virtualenv (numcodecs 0.16.6, numpy):

    python tests/codecs/numcodecs/make.py

Each case: the codec's configuration (get_config), the encoded chunk (numcodecs' encode of the
values) and the decoded chunk (numcodecs' decode of it), both base64, and the decoded dtype.
"""
import base64
import json
import pathlib

import numcodecs
import numpy as np

HERE = pathlib.Path(__file__).resolve().parent
rng = np.random.default_rng(7)

CASES = [
    (numcodecs.Delta(dtype="<i4"), np.array([5, -3, 2**31 - 1, -(2**31), 0, 7], dtype="<i4")),
    (numcodecs.Delta(dtype="<i4", astype="<i2"), np.array([100, 101, 99, 30000, -30000, 5], dtype="<i4")),
    (numcodecs.Delta(dtype="|u1"), np.array([250, 3, 255, 0, 128], dtype="|u1")),
    (numcodecs.Delta(dtype=">i8"), rng.integers(-(2**40), 2**40, 50).astype(">i8")),
    (numcodecs.Delta(dtype="<f8"), rng.normal(size=40)),
    (numcodecs.Delta(dtype="<f4"), rng.normal(size=40).astype("<f4")),
    (numcodecs.AsType(encode_dtype="<f4", decode_dtype="<f8"), rng.normal(size=30)),
    (numcodecs.AsType(encode_dtype="<i2", decode_dtype="<f8"), np.array([1.0, -7.0, 300.0, 32767.0])),
    (numcodecs.AsType(encode_dtype="<f8", decode_dtype="<i4"), np.array([1, -7, 300, 2**30], dtype="<i4")),
    (numcodecs.AsType(encode_dtype=">f4", decode_dtype="<f8"), rng.normal(size=10)),
    (numcodecs.AsType(encode_dtype="<i8", decode_dtype="<f4"), np.array([2**40 + 1, 3, -5], dtype="<f4")),
    (numcodecs.Quantize(digits=2, dtype="<f8", astype="<f4"), rng.normal(size=30)),
    (numcodecs.Quantize(digits=3, dtype="<f4"), rng.normal(size=30).astype("<f4")),
    (numcodecs.BitRound(keepbits=6), rng.normal(size=20).astype("<f4")),
    # fixedscaleoffset, which zarrs computes in f32: an offset f32 cannot hold, int32 above 2^24,
    # float32 stored values (numpy computes those in float32), big-endian, and a cast to integers.
    (numcodecs.FixedScaleOffset(offset=273.15, scale=10, dtype="<f8", astype="<i2"), 273.15 + rng.normal(size=30)),
    (numcodecs.FixedScaleOffset(offset=0.1, scale=1e6, dtype="<f8", astype="<i4"), rng.normal(size=30) * 100),
    (numcodecs.FixedScaleOffset(offset=1000.5, scale=3, dtype="<f8", astype="<f4"), rng.normal(size=30) * 1e4),
    (numcodecs.FixedScaleOffset(offset=-5.25, scale=0.5, dtype=">f8", astype=">i4"), (rng.normal(size=30) * 1e9).astype(">f8")),
    (numcodecs.FixedScaleOffset(offset=2.5, scale=4, dtype="<f4", astype="|u1"), rng.uniform(2.5, 60, 30).astype("<f4")),
]


def main():
    cases = []
    for codec, values in CASES:
        encoded = codec.encode(values)
        decoded = np.asarray(codec.decode(encoded))
        cases.append({
            "configuration": codec.get_config(),
            "encoded": base64.b64encode(np.asarray(encoded).tobytes()).decode(),
            "decoded": base64.b64encode(decoded.tobytes()).decode(),
            "dtype": decoded.dtype.str,
        })
    (HERE / "cases.json").write_text(json.dumps(cases, indent=1) + "\n")


if __name__ == "__main__":
    main()
