#!/usr/bin/env python3
"""GeoTIFFs in every lossless compression and predictor GDAL writes, with
kerchunk's references to each and the values rasterio reads.

Run from the repository root in python/tests/run.sh's virtualenv with
rasterio, tifffile and imagecodecs added (the versions are in README.md
beside this file; not needed by the tests themselves):

    python tests/codecs/tiff/make.py               # every case made again
    python tests/codecs/tiff/make.py imagecodecs   # only NAME.imagecodecs.npy of the JPEG cases
    python tests/codecs/tiff/make.py jpeg          # only the JPEG files tifffile writes (and a progressive
                                                   # one, tiles by Pillow), and that

For each NAME.tif it writes NAME.kerchunk.json (kerchunk.tiff.tiff_to_zarr,
inline_threshold=0, the file's path replaced by its name) and NAME.npy: the
values rasterio reads, band first, as (bands, height, width) in the file's
dtype, native byte order.
"""
import json
import os
import sys
import pathlib

import numpy as np
import rasterio
from kerchunk.tiff import tiff_to_zarr
from rasterio.transform import from_origin

HERE = pathlib.Path(__file__).resolve().parent
HEIGHT, WIDTH = 50, 70  # not a multiple of the tile: partial edge tiles


def values(dtype, bands, seed):
    """Smooth values with noise, negatives for signed types, so predictors matter."""
    rng = np.random.default_rng(seed)
    y, x = np.mgrid[0:HEIGHT, 0:WIDTH]
    out = []
    for band in range(bands):
        field = 40 * np.sin(x / 9.0 + band) + 30 * np.cos(y / 7.0) + rng.normal(0, 3, (HEIGHT, WIDTH))
        info = np.iinfo(dtype) if np.issubdtype(dtype, np.integer) else None
        if info is None:
            out.append((field * 1.37).astype(dtype))
        elif info.min < 0:
            out.append(np.clip(field * 50, info.min, info.max).astype(dtype))
        else:
            out.append(np.clip(field + 128 if info.max < 256 else field * 300 + 20000, 0, info.max).astype(dtype))
    return np.stack(out)


# name -> (dtype, bands, creation options)
CASES = {
    "lzw_u8": ("uint8", 1, {"compress": "lzw"}),
    "lzw_u16_pred2": ("uint16", 1, {"compress": "lzw", "predictor": 2}),
    "lzw_i16_pred2": ("int16", 1, {"compress": "lzw", "predictor": 2}),
    "lzw_f32_pred3": ("float32", 1, {"compress": "lzw", "predictor": 3}),
    "lzw_rgb_pred2_pixel": ("uint8", 3, {"compress": "lzw", "predictor": 2, "interleave": "pixel"}),
    "lzw_rgb_pred2_band": ("uint8", 3, {"compress": "lzw", "predictor": 2, "interleave": "band"}),
    "deflate_u16_pred2": ("uint16", 1, {"compress": "deflate", "predictor": 2}),
    "deflate_f32_pred3": ("float32", 1, {"compress": "deflate", "predictor": 3}),
    "deflate_f64_pred3": ("float64", 1, {"compress": "deflate", "predictor": 3}),
    "deflate_i32_pred2_big": ("int32", 1, {"compress": "deflate", "predictor": 2, "endianness": "big"}),
    "deflate_f32_pred3_big": ("float32", 1, {"compress": "deflate", "predictor": 3, "endianness": "big"}),
    "deflate_f32_pred3_pixel": ("float32", 2, {"compress": "deflate", "predictor": 3, "interleave": "pixel"}),
    "zstd_i16": ("int16", 1, {"compress": "zstd"}),
    "zstd_f32_pred3": ("float32", 1, {"compress": "zstd", "predictor": 3}),
    "packbits_u8": ("uint8", 1, {"compress": "packbits"}),
    "lzma_u16": ("uint16", 1, {"compress": "lzma"}),
    "none_i8": ("int8", 1, {"compress": "none"}),
    "lzw_u32_pred2_strips": ("uint32", 1, {"compress": "lzw", "predictor": 2, "tiled": False, "blockysize": 10}),
    "deflate_u8_bigtiff": ("uint8", 1, {"compress": "deflate", "bigtiff": "yes"}),
}

# LERC, its own seeds so that the cases above keep theirs: name -> (dtype, bands, creation options)
LERC = {
    # LERC, all under kerchunk's one id imagecodecs_lerc: plain, and wrapped in deflate or zstd.
    "lerc_f32": ("float32", 1, {"compress": "lerc"}),
    "lerc_deflate_u16": ("uint16", 1, {"compress": "lerc_deflate"}),
    "lerc_zstd_rgb_pixel": ("uint8", 3, {"compress": "lerc_zstd", "interleave": "pixel"}),
    "lerc_f64_band": ("float64", 2, {"compress": "lerc", "interleave": "band"}),
    # Lossy LERC (every value within 0.5): LERC's dequantisation is arithmetic, so every decoder agrees.
    "lerc_lossy_f32": ("float32", 1, {"compress": "lerc", "max_z_error": 0.5}),
    # A nodata value: every 11th pixel is nodata, which LERC keeps as its mask.
    "lerc_f32_nodata": ("float32", 1, {"compress": "lerc", "nodata": -9999.0}),
}

# Lossy codecs: the values are compared within a tolerance (README.md): two JPEG decoders differ
# in their inverse DCT and, for YCbCr, in their chroma upsampling.
TOLERANCE = 4
LOSSY = {
    "jpeg_gray": ("uint8", 1, {"compress": "jpeg", "jpeg_quality": 90}),
    "jpeg_rgb": ("uint8", 3, {"compress": "jpeg", "photometric": "rgb", "jpeg_quality": 90, "interleave": "pixel"}),
    "jpeg_ycbcr": ("uint8", 3, {"compress": "jpeg", "photometric": "ycbcr", "jpeg_quality": 90, "interleave": "pixel"}),
    "webp_lossless": ("uint8", 3, {"compress": "webp", "webp_lossless": True, "interleave": "pixel"}),
    "webp_lossy": ("uint8", 3, {"compress": "webp", "webp_level": 90, "interleave": "pixel"}),
}


# Codecs GDAL cannot write into a TIFF (or that this GDAL was built without), written by
# tifffile: name -> (dtype, bands, compression, its arguments). The truth is the values written.
TIFFFILE = {
    "png_u8": ("uint8", 1, "png", {}),
    "png_u16": ("uint16", 1, "png", {}),
    "png_rgb": ("uint8", 3, "png", {}),
    "jpeg2k_u8": ("uint8", 1, "jpeg2000", {}),
    "jpeg2k_u16": ("uint16", 1, "jpeg2000", {}),
    "jpeg2k_rgb": ("uint8", 3, "jpeg2000", {}),
    "jpegxl_u8": ("uint8", 1, "jpegxl", {"lossless": True}),
    "jpegxl_u16": ("uint16", 1, "jpegxl", {"lossless": True}),
    "jpegxl_rgb": ("uint8", 3, "jpegxl", {"lossless": True}),
}


def write_with_tifffile(path, dtype, bands, compression, arguments, seed):
    import tifffile

    data = values(np.dtype(dtype), bands, seed)
    interleaved = data[0] if bands == 1 else np.moveaxis(data, 0, -1)
    photometric = "minisblack" if bands == 1 else "rgb"
    # metadata=None: kerchunk's tiff_to_zarr fails on tifffile's own shaped metadata.
    tifffile.imwrite(path, interleaved, compression=compression, compressionargs=arguments, tile=(32, 32),
                     metadata=None, photometric=photometric)
    return data


def write(path, dtype, bands, options, seed):
    profile = {
        "driver": "GTiff",
        "height": HEIGHT,
        "width": WIDTH,
        "count": bands,
        "dtype": dtype,
        "crs": "EPSG:32633",
        "transform": from_origin(500000.0, 4500000.0, 30.0, 30.0),
        "tiled": True,
        "blockxsize": 32,
        "blockysize": 32,
    }
    profile.update(options)
    if not profile["tiled"]:
        del profile["blockxsize"]
    data = values(np.dtype(dtype), bands, seed)
    if "nodata" in profile:
        data.reshape(bands, -1)[:, ::11] = profile["nodata"]
    with rasterio.open(path, "w", **profile) as dst:
        dst.write(data)


def kerchunk_reads(refs):
    """The array as kerchunk's Python path reads it (fsspec, zarr, imagecodecs' codecs), band first."""
    import fsspec
    import zarr

    fs = fsspec.filesystem("reference", fo=refs, remote_protocol="file")
    array = zarr.open_array(fs.get_mapper(""), mode="r", zarr_format=2)[:]
    dims = refs[".zattrs"] if isinstance(refs[".zattrs"], dict) else json.loads(refs[".zattrs"])
    axes = dims["_ARRAY_DIMENSIONS"]
    if axes == ["Y", "X"]:
        return array[None]
    if axes == ["Y", "X", "S"]:
        return np.moveaxis(array, -1, 0)
    return array


# JPEG as tifffile writes it (imagecodecs' libjpeg-turbo): the tables in every tile (no JPEGTables
# tag), YCbCr at each subsampling, RGB without the transform, grey, and CMYK (photometric separated).
# name -> (bands, photometric, subsampling)
JPEG_TIFFFILE = {
    "jpeg_tifffile_ycbcr444": (3, "ycbcr", (1, 1)),
    "jpeg_tifffile_ycbcr422": (3, "ycbcr", (2, 1)),
    "jpeg_tifffile_ycbcr420": (3, "ycbcr", (2, 2)),
    "jpeg_tifffile_rgb": (3, "rgb", None),
    "jpeg_tifffile_gray": (1, "minisblack", None),
    "jpeg_tifffile_cmyk": (4, "separated", None),
}


def jpeg_progressive(path, seed):
    """A progressive JPEG TIFF (`jpeg_progressive`): no TIFF writer makes one, so Pillow encodes each
    tile progressively (JFIF, YCbCr 4:2:0, quality 90) and tifffile writes the tiles as they are,
    photometric RGB (libjpeg converts JFIF's YCbCr). Returns rasterio's values, which make.py checks
    against imagecodecs' before keeping them."""
    import io

    import tifffile
    from PIL import Image

    data = values(np.dtype("uint8"), 3, seed)
    interleaved = np.ascontiguousarray(np.moveaxis(data, 0, -1))
    tiles = []
    for y in range(0, HEIGHT, 32):
        for x in range(0, WIDTH, 32):
            tile = np.zeros((32, 32, 3), "u1")
            part = interleaved[y:y + 32, x:x + 32]
            tile[:part.shape[0], :part.shape[1]] = part
            out = io.BytesIO()
            Image.fromarray(tile).save(out, "JPEG", quality=90, progressive=True)
            assert b"\xff\xc2" in out.getvalue(), "not progressive"
            tiles.append(out.getvalue())
    with tifffile.TiffWriter(path) as tif:
        tif.write(iter(tiles), shape=interleaved.shape, dtype="u1", tile=(32, 32), compression="jpeg",
                  photometric="rgb", metadata=None)
    with rasterio.open(path) as src:
        return src.read()


def band_first_tifffile(values):
    """tifffile's (Y, X) or (Y, X, S) as rasterio's (band, y, x)."""
    return values[None] if values.ndim == 2 else np.moveaxis(values, -1, 0)


def jpeg_with_tifffile():
    """The JPEG_TIFFFILE cases: NAME.tif, kerchunk's references, and NAME.npy, rasterio's values
    (GDAL, within TOLERANCE of imagecodecs', checked here; for CMYK, which GDAL reads as RGBA,
    tifffile's); imagecodecs_truth() then adds imagecodecs' own."""
    import tifffile

    for seed, (name, (bands, photometric, subsampling)) in enumerate(JPEG_TIFFFILE.items(), start=300):
        data = values(np.dtype("uint8"), bands, seed)
        interleaved = data[0] if bands == 1 else np.moveaxis(data, 0, -1)
        extra = {"subsampling": subsampling} if subsampling else {}
        path = HERE / f"{name}.tif"
        tifffile.imwrite(path, interleaved, compression="jpeg", compressionargs={"level": 90}, tile=(32, 32),
                         metadata=None, photometric=photometric, **extra)
        refs = tiff_to_zarr(str(path), inline_threshold=0)
        theirs = kerchunk_reads(refs)
        if photometric == "separated":
            # GDAL reads CMYK JPEG as RGBA; tifffile (imagecodecs) returns the CMYK stored, the truth here.
            truth = band_first_tifffile(tifffile.imread(path))
        else:
            with rasterio.open(path) as src:
                truth = src.read()
        assert theirs.shape == truth.shape, (name, theirs.shape, truth.shape)
        assert np.abs(theirs.astype(int) - truth.astype(int)).max() <= TOLERANCE, name
        np.save(HERE / f"{name}.npy", truth)
        text = json.dumps(refs, indent=0, sort_keys=True).replace(str(path), path.name)
        (HERE / f"{name}.kerchunk.json").write_text(text + "\n")
    path = HERE / "jpeg_progressive.tif"
    truth = jpeg_progressive(path, 320)
    refs = tiff_to_zarr(str(path), inline_threshold=0)
    assert np.abs(kerchunk_reads(refs).astype(int) - truth.astype(int)).max() <= TOLERANCE, "jpeg_progressive"
    np.save(HERE / "jpeg_progressive.npy", truth)
    text = json.dumps(refs, indent=0, sort_keys=True).replace(str(path), path.name)
    (HERE / "jpeg_progressive.kerchunk.json").write_text(text + "\n")


def imagecodecs_truth():
    """For each JPEG case, NAME.imagecodecs.npy: the files as they are, read through kerchunk's
    references by imagecodecs (libjpeg-turbo), band first: the values a JPEG decoder must give."""
    for name in sorted(LOSSY) + sorted(JPEG_TIFFFILE) + ["jpeg_progressive"]:
        if not name.startswith("jpeg_"):
            continue
        refs = json.loads((HERE / f"{name}.kerchunk.json").read_text())
        os.chdir(HERE)
        np.save(HERE / f"{name}.imagecodecs.npy", kerchunk_reads(refs))


def main():
    import imagecodecs.numcodecs

    imagecodecs.numcodecs.register_codecs()
    if sys.argv[1:] == ["imagecodecs"]:
        imagecodecs_truth()
        return
    if sys.argv[1:] == ["jpeg"]:
        jpeg_with_tifffile()
        imagecodecs_truth()
        return
    lerc = {name: (seed, case) for seed, (name, case) in enumerate(LERC.items(), start=200)}
    numbered = {name: (seed, case) for seed, (name, case) in enumerate({**CASES, **LOSSY}.items())}
    for name, (seed, (dtype, bands, options)) in {**numbered, **lerc}.items():
        path = HERE / f"{name}.tif"
        write(path, dtype, bands, options, seed)
        with rasterio.open(path) as src:
            truth = src.read()
        np.save(HERE / f"{name}.npy", truth)
        refs = tiff_to_zarr(str(path), inline_threshold=0)
        # Two independent readers agree before either is taken as the truth (lossy
        # decoders differ by a few units: README.md).
        theirs = kerchunk_reads(refs)
        if name in LOSSY:
            assert np.abs(theirs.astype(int) - truth.astype(int)).max() <= TOLERANCE, name
        else:
            assert np.array_equal(theirs, truth), name
        text = json.dumps(refs, indent=0, sort_keys=True).replace(str(path), path.name)
        (HERE / f"{name}.kerchunk.json").write_text(text + "\n")
    for seed, (name, (dtype, bands, compression, arguments)) in enumerate(TIFFFILE.items(), start=100):
        path = HERE / f"{name}.tif"
        truth = write_with_tifffile(path, dtype, bands, compression, arguments, seed)
        np.save(HERE / f"{name}.npy", truth)
        refs = tiff_to_zarr(str(path), inline_threshold=0)
        assert np.array_equal(kerchunk_reads(refs), truth), name
        text = json.dumps(refs, indent=0, sort_keys=True).replace(str(path), path.name)
        (HERE / f"{name}.kerchunk.json").write_text(text + "\n")


if __name__ == "__main__":
    main()
