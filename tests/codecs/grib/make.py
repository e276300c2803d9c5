#!/usr/bin/env python3
"""GRIB2 messages in every packing eccodes writes, with kerchunk's references
to each and the values eccodes decodes.

Run from the repository root in python/tests/run.sh's virtualenv with eccodes,
cfgrib and kerchunk's GRIB dependencies added (versions in README.md beside
this file; not needed by the tests themselves):

    python tests/codecs/grib/make.py                # every case made again
    python tests/codecs/grib/make.py CASE [CASE...]  # only these projected cases (cases.json updated for them)
    python tests/codecs/grib/make.py reduced         # only the reduced Gaussian grids (REDUCED)
    python tests/codecs/grib/make.py healpix         # only the HEALPix grids (HEALPIX)

For each CASE it writes CASE.grib2 (one message, from eccodes' samples), and:
- CASE.kerchunk.json: kerchunk.grib2.scan_grib(CASE.grib2)[0] (the message's
  reference set), the path replaced by the file's name;
- CASE.npy: the values eccodes gives (`codes_get_values`), float64, NaN where
  the bitmap says missing and nowhere else, in the grid's shape (Nj, Ni).
- cases.json: each case's keys as eccodes reads them back (packingType,
  bitsPerValue, decimal and binary scale factors, bitmap), so a test can say
  what it covers.
"""
import json
import pathlib
import sys

import eccodes
import numpy as np

HERE = pathlib.Path(__file__).resolve().parent
MISSING = 9999.0


def field(nj, ni, scale, offset, seed):
    rng = np.random.default_rng(seed)
    y, x = np.mgrid[0:nj, 0:ni]
    return offset + scale * (np.sin(x / 3.0 + seed) + np.cos(y / 5.0)) + scale * 0.01 * rng.normal(size=(nj, ni))


# name -> (sample, keys set before the values, scale, offset, bitmap)
CASES = {
    "simple_bpv16": ("regular_ll_sfc_grib2", {"packingType": "grid_simple", "bitsPerValue": 16}, 30, 250, False),
    "simple_bpv12": ("regular_ll_sfc_grib2", {"packingType": "grid_simple", "bitsPerValue": 12}, 30, 250, False),
    "simple_d2": (
        "regular_ll_sfc_grib2",
        {"packingType": "grid_simple", "decimalScaleFactor": 2, "bitsPerValue": 0, "changeDecimalPrecision": 2},
        30,
        250,
        False,
    ),
    "simple_d6": (
        "regular_ll_sfc_grib2",
        {"packingType": "grid_simple", "changeDecimalPrecision": 6},
        0.5,
        1.2,
        False,
    ),
    "simple_d7": (
        "regular_ll_sfc_grib2",
        {"packingType": "grid_simple", "changeDecimalPrecision": 7},
        0.05,
        0.12,
        False,
    ),
    "simple_negative_d": (
        "regular_ll_sfc_grib2",
        {"packingType": "grid_simple", "changeDecimalPrecision": -1},
        3000,
        101325,
        False,
    ),
    "simple_bitmap": ("regular_ll_sfc_grib2", {"packingType": "grid_simple", "bitsPerValue": 16}, 30, 250, True),
    "simple_constant": ("regular_ll_sfc_grib2", {"packingType": "grid_simple", "bitsPerValue": 16}, 0, 273.15, False),
    "simple_south_first": (
        "regular_ll_sfc_grib2",
        {
            "packingType": "grid_simple",
            "bitsPerValue": 16,
            "latitudeOfFirstGridPointInDegrees": 0,
            "latitudeOfLastGridPointInDegrees": 60,
            "jScansPositively": 1,
        },
        30,
        250,
        False,
    ),
    "complex": ("regular_ll_sfc_grib2", {"packingType": "grid_complex", "bitsPerValue": 16}, 30, 250, False),
    "complex_sd1": (
        "regular_ll_sfc_grib2",
        {"packingType": "grid_complex_spatial_differencing", "orderOfSpatialDifferencing": 1, "bitsPerValue": 16},
        30,
        250,
        False,
    ),
    "complex_sd2": (
        "regular_ll_sfc_grib2",
        {"packingType": "grid_complex_spatial_differencing", "orderOfSpatialDifferencing": 2, "bitsPerValue": 16},
        30,
        250,
        False,
    ),
    "complex_sd2_d1": (
        "regular_ll_sfc_grib2",
        {"packingType": "grid_complex_spatial_differencing", "orderOfSpatialDifferencing": 2, "changeDecimalPrecision": 1},
        30,
        250,
        False,
    ),
    "complex_sd2_bitmap": (
        "regular_ll_sfc_grib2",
        {"packingType": "grid_complex_spatial_differencing", "orderOfSpatialDifferencing": 2, "bitsPerValue": 16},
        30,
        250,
        True,
    ),
    "complex_sd2_constant": (
        "regular_ll_sfc_grib2",
        {"packingType": "grid_complex_spatial_differencing", "orderOfSpatialDifferencing": 2, "bitsPerValue": 16},
        0,
        280.5,
        False,
    ),
    "ieee32": ("regular_ll_sfc_grib2", {"packingType": "grid_ieee", "precision": 1}, 30, 250, False),
    "ieee64": ("regular_ll_sfc_grib2", {"packingType": "grid_ieee", "precision": 2}, 30, 250, False),
    "ieee32_bitmap": ("regular_ll_sfc_grib2", {"packingType": "grid_ieee", "precision": 1}, 30, 250, True),
    # eccodes 2.50's PNG writer fails ("Failed to write PNG data") on this noisy field at 16 bits.
    "png": ("regular_ll_sfc_grib2", {"packingType": "grid_png", "bitsPerValue": 12}, 30, 250, False),
    "png_bitmap": ("regular_ll_sfc_grib2", {"packingType": "grid_png", "bitsPerValue": 12}, 30, 250, True),
    "png_bpv8": ("regular_ll_sfc_grib2", {"packingType": "grid_png", "bitsPerValue": 8}, 30, 250, False),
    "ccsds": ("regular_ll_sfc_grib2", {"packingType": "grid_ccsds", "bitsPerValue": 16}, 30, 250, False),
    "ccsds_bitmap": ("regular_ll_sfc_grib2", {"packingType": "grid_ccsds", "bitsPerValue": 16}, 30, 250, True),
    "jpeg": ("regular_ll_sfc_grib2", {"packingType": "grid_jpeg", "bitsPerValue": 16}, 30, 250, False),
    "jpeg_bitmap": ("regular_ll_sfc_grib2", {"packingType": "grid_jpeg", "bitsPerValue": 16}, 30, 250, True),
    "jpeg_bpv24": ("regular_ll_sfc_grib2", {"packingType": "grid_jpeg", "bitsPerValue": 24}, 30, 250, False),
    "jpeg_bpv8": ("regular_ll_sfc_grib2", {"packingType": "grid_jpeg", "bitsPerValue": 8}, 30, 250, False),
    "jpeg_d2": (
        "regular_ll_sfc_grib2",
        {"packingType": "grid_jpeg", "decimalScaleFactor": 2, "bitsPerValue": 0, "changeDecimalPrecision": 2},
        30,
        250,
        False,
    ),
    "jpeg_constant": ("regular_ll_sfc_grib2", {"packingType": "grid_jpeg", "bitsPerValue": 16}, 0, 273.15, False),
    # Lossy: the irreversible 9/7 wavelet, at eccodes' compression ratio 10.
    "jpeg_lossy": (
        "regular_ll_sfc_grib2",
        {"packingType": "grid_jpeg", "bitsPerValue": 16, "typeOfCompressionUsed": 1, "targetCompressionRatio": 10},
        30,
        250,
        False,
    ),
}

# GRIB edition 1, simple packing, from eccodes' GRIB1 sample (temperature,
# paramId 130, so that cfgrib names it t). name -> (keys, scale, offset, bitmap)
EDITION1 = {
    "grib1_simple": ({"bitsPerValue": 16}, 30, 250, False),
    "grib1_bpv12": ({"bitsPerValue": 12}, 30, 250, False),
    "grib1_d2": ({"decimalScaleFactor": 2, "bitsPerValue": 0, "changeDecimalPrecision": 2}, 30, 250, False),
    "grib1_negative_d": ({"changeDecimalPrecision": -1}, 3000, 101325, False),
    "grib1_bitmap": ({"bitsPerValue": 16}, 30, 250, True),
    "grib1_constant": ({"bitsPerValue": 16}, 0, 273.15, False),
}

# Projected grids: kerchunk references their 2-D latitude and longitude to the message, through
# the codec (`var: latitude`). name -> (grid keys, keys of the packing)
PROJECTED = {
    # HRRR's Lambert conformal grid (a sphere of radius 6371229 m, 3 km cells), a corner of it.
    "lambert_hrrr": {
        "gridDefinitionTemplateNumber": 30,
        "shapeOfTheEarth": 6,
        "Nx": 50,
        "Ny": 40,
        "latitudeOfFirstGridPointInDegrees": 21.138123,
        "longitudeOfFirstGridPointInDegrees": 237.280472,
        "LaDInDegrees": 38.5,
        "LoVInDegrees": 262.5,
        "Latin1InDegrees": 38.5,
        "Latin2InDegrees": 38.5,
        "DxInMetres": 3000,
        "DyInMetres": 3000,
        "jScansPositively": 1,
    },
    # Two standard parallels, north first, on the sphere of radius 6367470 m.
    "lambert_two_parallels": {
        "gridDefinitionTemplateNumber": 30,
        "shapeOfTheEarth": 0,
        "Nx": 30,
        "Ny": 20,
        "latitudeOfFirstGridPointInDegrees": 55.0,
        "longitudeOfFirstGridPointInDegrees": 350.0,
        "LaDInDegrees": 45.0,
        "LoVInDegrees": 10.0,
        "Latin1InDegrees": 35.0,
        "Latin2InDegrees": 65.0,
        "DxInMetres": 20000,
        "DyInMetres": 20000,
        "jScansPositively": 0,
    },
    # A field large enough for several JPEG 2000 code blocks and wavelet levels (HRRR's grid, a corner).
    "lambert_jpeg": {
        "gridDefinitionTemplateNumber": 30,
        "shapeOfTheEarth": 6,
        "Nx": 160,
        "Ny": 120,
        "latitudeOfFirstGridPointInDegrees": 21.138123,
        "longitudeOfFirstGridPointInDegrees": 237.280472,
        "LaDInDegrees": 38.5,
        "LoVInDegrees": 262.5,
        "Latin1InDegrees": 38.5,
        "Latin2InDegrees": 38.5,
        "DxInMetres": 3000,
        "DyInMetres": 3000,
        "jScansPositively": 1,
        "packingType": "grid_jpeg",
    },
    # Polar stereographic (template 3.20, NCEP's Alaska and NDFD grids): true at 60N, north pole on the plane.
    "polar_stereographic_north": {
        "gridDefinitionTemplateNumber": 20,
        "shapeOfTheEarth": 6,
        "Nx": 40,
        "Ny": 30,
        "latitudeOfFirstGridPointInDegrees": 40.5,
        "longitudeOfFirstGridPointInDegrees": 185.0,
        "LaDInDegrees": 60.0,
        "orientationOfTheGridInDegrees": 210.0,
        "DxInMetres": 50000,
        "DyInMetres": 50000,
        "projectionCentreFlag": 0,
        "jScansPositively": 1,
    },
    # The south pole on the plane, true at 71S, on the sphere of radius 6367470 m.
    "polar_stereographic_south": {
        "gridDefinitionTemplateNumber": 20,
        "shapeOfTheEarth": 0,
        "Nx": 30,
        "Ny": 30,
        "latitudeOfFirstGridPointInDegrees": -55.0,
        "longitudeOfFirstGridPointInDegrees": 225.0,
        "LaDInDegrees": -71.0,
        "orientationOfTheGridInDegrees": 0.0,
        "DxInMetres": 100000,
        "DyInMetres": 100000,
        "projectionCentreFlag": 128,
        "jScansPositively": 1,
    },
    # Lambert azimuthal equal area (template 3.140), on a sphere and on GRS80 (EFAS' ETRS89-LAEA).
    "laea_sphere": {
        "gridDefinitionTemplateNumber": 140,
        "shapeOfTheEarth": 6,
        "Nx": 30,
        "Ny": 25,
        "latitudeOfFirstGridPointInDegrees": 35.0,
        "longitudeOfFirstGridPointInDegrees": 350.0,
        "standardParallelInDegrees": 52.0,
        "centralLongitudeInDegrees": 10.0,
        "xDirectionGridLengthInMillimetres": 100000000,
        "yDirectionGridLengthInMillimetres": 100000000,
        "jScansPositively": 1,
    },
    "laea_grs80": {
        "gridDefinitionTemplateNumber": 140,
        "shapeOfTheEarth": 4,
        "Nx": 30,
        "Ny": 25,
        "latitudeOfFirstGridPointInDegrees": 35.0,
        "longitudeOfFirstGridPointInDegrees": 350.0,
        "standardParallelInDegrees": 52.0,
        "centralLongitudeInDegrees": 10.0,
        "xDirectionGridLengthInMillimetres": 100000000,
        "yDirectionGridLengthInMillimetres": 100000000,
        "jScansPositively": 1,
    },
    # Lambert conformal on WGS84 (shape 5), two standard parallels.
    "lambert_wgs84": {
        "gridDefinitionTemplateNumber": 30,
        "shapeOfTheEarth": 5,
        "Nx": 30,
        "Ny": 20,
        "latitudeOfFirstGridPointInDegrees": 30.0,
        "longitudeOfFirstGridPointInDegrees": 250.0,
        "LaDInDegrees": 40.0,
        "LoVInDegrees": 265.0,
        "Latin1InDegrees": 33.0,
        "Latin2InDegrees": 45.0,
        "DxInMetres": 40000,
        "DyInMetres": 40000,
        "jScansPositively": 1,
    },
    # Rotated latitude/longitude (template 3.1, as COSMO and ICON-D2 write), the south pole at 40S 10E.
    "rotated_ll": {
        "gridDefinitionTemplateNumber": 1,
        "shapeOfTheEarth": 6,
        "Ni": 30,
        "Nj": 20,
        "latitudeOfFirstGridPointInDegrees": -5.0,
        "longitudeOfFirstGridPointInDegrees": 350.0,
        "latitudeOfLastGridPointInDegrees": 4.5,
        "longitudeOfLastGridPointInDegrees": 4.5,
        "iDirectionIncrementInDegrees": 0.5,
        "jDirectionIncrementInDegrees": 0.5,
        "jScansPositively": 1,
        "latitudeOfSouthernPoleInDegrees": -40.0,
        "longitudeOfSouthernPoleInDegrees": 10.0,
    },
}

# Mercator (template 3.10), as NOAA's air-quality model (AQM) writes its Hawaii grid: a sphere of
# radius 6371229 m, true at 20N, 2.5 km cells; and on WGS84, north first, true at 0 (the equator).
PROJECTED["mercator_sphere"] = {
    "gridDefinitionTemplateNumber": 10,
    "shapeOfTheEarth": 6,
    "Ni": 40,
    "Nj": 30,
    "latitudeOfFirstGridPointInDegrees": 15.0,
    "longitudeOfFirstGridPointInDegrees": 195.0,
    "LaDInDegrees": 20.0,
    "latitudeOfLastGridPointInDegrees": 15.68,
    "longitudeOfLastGridPointInDegrees": 195.95,
    "orientationOfTheGridInDegrees": 0.0,
    "DiInMetres": 2500.0,
    "DjInMetres": 2500.0,
    "jScansPositively": 1,
}
PROJECTED["mercator_wgs84"] = {
    "gridDefinitionTemplateNumber": 10,
    "shapeOfTheEarth": 5,
    "Ni": 30,
    "Nj": 25,
    "latitudeOfFirstGridPointInDegrees": -10.0,
    "longitudeOfFirstGridPointInDegrees": 350.0,
    "LaDInDegrees": 0.0,
    "latitudeOfLastGridPointInDegrees": 30.0,
    "longitudeOfLastGridPointInDegrees": 30.0,
    "orientationOfTheGridInDegrees": 0.0,
    "DiInMetres": 150000.0,
    "DjInMetres": 150000.0,
    "jScansPositively": 1,
}

# Regular Gaussian grids (template 3.40), whose 1-D latitude and longitude kerchunk holds inline:
# global N48 north first; a sub-area of N640 (eccodes' precomputed latitudes); a sub-area of N1280
# (its other table) scanned northwards from the southern hemisphere.
def gaussian(n, first_row, rows, columns, j_positive, first_longitude):
    latitudes = eccodes.codes_get_gaussian_latitudes(n)
    last_row = first_row - (rows - 1) if j_positive else first_row + rows - 1
    step = 90.0 / n
    return {
        "gridDefinitionTemplateNumber": 40,
        "shapeOfTheEarth": 6,
        "N": n,
        "Ni": columns,
        "Nj": rows,
        "latitudeOfFirstGridPointInDegrees": round(float(latitudes[first_row]), 6),
        "latitudeOfLastGridPointInDegrees": round(float(latitudes[last_row]), 6),
        "longitudeOfFirstGridPointInDegrees": first_longitude,
        "longitudeOfLastGridPointInDegrees": round(first_longitude + (columns - 1) * step, 6) % 360,
        "iDirectionIncrementInDegrees": step,
        "jScansPositively": int(j_positive),
    }


PROJECTED["gaussian_n48"] = gaussian(48, 0, 96, 192, False, 0.0)
PROJECTED["gaussian_n640_area"] = gaussian(640, 300, 10, 24, False, 10.0)
PROJECTED["gaussian_n1280_northwards"] = gaussian(1280, 2000, 8, 16, True, 350.0)

# Space view (template 3.90), a full disk as Meteosat's is coded, coarsened to 60 x 60 points:
# 56 grid lengths across the Earth, the camera 6.6107 Earth radii away, the satellite at 0E;
# on a sphere (eccodes computes no other), north first. Points past the disk: eccodes gives 0, 0.
PROJECTED["space_view"] = {
    "gridDefinitionTemplateNumber": 90,
    "shapeOfTheEarth": 6,
    "Nx": 60,
    "Ny": 60,
    "latitudeOfSubSatellitePoint": 0,
    "longitudeOfSubSatellitePoint": 0,
    "dx": 56,
    "dy": 56,
    "Xp": 30000,
    "Yp": 30000,
    "Nr": 6610700,
    "Xo": 0,
    "Yo": 0,
    "jScansPositively": 0,
}

# The gridType eccodes reports for each grid template.
GRID_TYPES = {1: "rotated_ll", 10: "mercator", 20: "polar_stereographic", 30: "lambert",
              40: "regular_gg", 90: "space_view", 140: "lambert_azimuthal_equal_area"}

READ_BACK = [
    "packingType",
    "bitsPerValue",
    "decimalScaleFactor",
    "binaryScaleFactor",
    "bitmapPresent",
    "dataRepresentationTemplateNumber",
    "Ni",
    "Nj",
    "jScansPositively",
]


def make(name, sample, keys, scale, offset, bitmap, seed):
    h = eccodes.codes_grib_new_from_samples(sample)
    values = field(31, 16, scale, offset, seed).ravel()
    for key, value in keys.items():
        eccodes.codes_set(h, key, value)
    if bitmap:
        eccodes.codes_set(h, "missingValue", MISSING)
        eccodes.codes_set(h, "bitmapPresent", 1)
        values[::7] = MISSING
    eccodes.codes_set_values(h, values)
    for key, value in keys.items():
        if key in ("packingType", "orderOfSpatialDifferencing", "jScansPositively"):
            assert str(eccodes.codes_get(h, key)) == str(value), (name, key, eccodes.codes_get(h, key))
    path = HERE / f"{name}.grib2"
    with open(path, "wb") as out:
        eccodes.codes_write(h, out)
    read_back = {key: eccodes.codes_get(h, key) for key in READ_BACK}
    eccodes.codes_release(h)
    return path, read_back


def make_projected(name, keys, seed):
    h = eccodes.codes_grib_new_from_samples("GRIB2")
    for key, value in keys.items():
        eccodes.codes_set(h, key, value)
    eccodes.codes_set(h, "bitsPerValue", 16)
    shape = (keys.get("Ny", keys.get("Nj")), keys.get("Nx", keys.get("Ni")))
    eccodes.codes_set_values(h, field(*shape, 30, 250, seed).ravel())
    if "packingType" in keys:
        assert eccodes.codes_get(h, "packingType") == keys["packingType"], name
    grid_type = GRID_TYPES[keys["gridDefinitionTemplateNumber"]]
    assert eccodes.codes_get(h, "gridType") == grid_type, (name, eccodes.codes_get(h, "gridType"))
    path = HERE / f"{name}.grib2"
    with open(path, "wb") as out:
        eccodes.codes_write(h, out)
    read_back = {key: eccodes.codes_get(h, key) for key in ["packingType", "bitsPerValue", "decimalScaleFactor",
                 "binaryScaleFactor", "bitmapPresent", "dataRepresentationTemplateNumber", "gridType",
                 "shapeOfTheEarth"]}
    read_back["Nx"], read_back["Ny"] = int(shape[1]), int(shape[0])
    eccodes.codes_release(h)
    # From the message as written: a handle that was edited keeps a spherical earth for its iterator.
    with open(path, "rb") as f:
        h = eccodes.codes_grib_new_from_file(f)
    for var in ("latitudes", "longitudes"):
        np.save(HERE / f"{name}.{var[:-1]}.npy", eccodes.codes_get_array(h, var).reshape(shape))
    eccodes.codes_release(h)
    return path, read_back


def make_edition1(name, keys, scale, offset, bitmap, seed):
    h = eccodes.codes_grib_new_from_samples("regular_ll_sfc_grib1")
    eccodes.codes_set(h, "paramId", 130)
    values = field(31, 16, scale, offset, seed).ravel()
    for key, value in keys.items():
        eccodes.codes_set(h, key, value)
    if bitmap:
        eccodes.codes_set(h, "missingValue", MISSING)
        eccodes.codes_set(h, "bitmapPresent", 1)
        values[::7] = MISSING
    eccodes.codes_set_values(h, values)
    assert eccodes.codes_get(h, "edition") == 1 and eccodes.codes_get(h, "packingType") == "grid_simple", name
    path = HERE / f"{name}.grib1"
    with open(path, "wb") as out:
        eccodes.codes_write(h, out)
    read_back = {key: eccodes.codes_get(h, key) for key in
                 ["edition", "packingType", "bitsPerValue", "decimalScaleFactor", "binaryScaleFactor", "bitmapPresent",
                  "Ni", "Nj", "jScansPositively", "shortName"]}
    eccodes.codes_release(h)
    return path, read_back


def edition1_references(path):
    """kerchunk's scan_grib of a GRIB1 file, its message's length corrected.

    kerchunk 0.2.10 reads every message's length from octets 13-16, where GRIB2 keeps it; in a
    GRIB1 message those octets are in the product definition, so the reference's length is
    garbage (1652621184 for these) and a file of several messages is seen as one. The codec's
    input is the message, so the test references give its real length; the rest is kerchunk's.
    """
    from kerchunk.grib2 import scan_grib

    refs = scan_grib(str(path), inline_threshold=0)[0]
    size = path.stat().st_size
    for key, value in refs["refs"].items():
        if isinstance(value, list) and len(value) == 3:
            assert value[1] == 0, (path, key, value)
            value[2] = size
    return refs


def truth(path):
    """eccodes' values of the file's message, NaN exactly where the bitmap says missing."""
    with open(path, "rb") as f:
        h = eccodes.codes_grib_new_from_file(f)
        values = eccodes.codes_get_values(h).astype("f8")
        if eccodes.codes_get(h, "bitmapPresent"):
            bitmap = eccodes.codes_get_array(h, "bitmap")
            values[bitmap == 0] = np.nan
        shape = (eccodes.codes_get(h, "Nj"), eccodes.codes_get(h, "Ni"))
        eccodes.codes_release(h)
    return values.reshape(shape)


# Reduced Gaussian grids (template 3.40 with points per row), global: eccodes' sample N32, and an
# octahedral O32 (20 + 4j points on the j-th row from each pole, as ECMWF's O1280); and a reduced
# latitude/longitude grid (3.0 with points per row). kerchunk 0.2.10 fails on them (it sizes the
# grid from Ni, missing); cfgrib reads them on one dimension, `values`.
# Not in cases.json: REDUCED.NAME.{grib2,npy,latitude.npy,longitude.npy,cfgrib.json}.
REDUCED = {"reduced_gg_n32": None, "reduced_gg_o32": [20 + 4 * j for j in range(32)], "reduced_ll": None}
# Sub-areas of the N32 sample, as MARS cuts them: rows (from, to) of the global grid, from and to
# longitudes (degrees east): within the globe, across longitude 0, and half the globe round 0 (points
# on 0 itself, reached as 360).
SUB_AREAS = {"reduced_gg_n32_area": (4, 20, 10.0, 100.0), "reduced_gg_n32_across": (30, 50, 300.0, 30.5),
             "reduced_gg_n32_half": (0, 12, 270.0, 90.0)}


def make_reduced():
    for seed, (name, half) in enumerate(REDUCED.items(), start=400):
        if name == "reduced_ll":
            # eccodes' reduced_ll sample (501 rows), made 21 rows 9 degrees apart, the poles' of no point.
            h = eccodes.codes_grib_new_from_samples("reduced_ll_sfc_grib2")
            rows = [90 - 9 * j for j in range(21)]
            pl = [0] + [max(1, round(40 * np.cos(np.radians(lat)))) for lat in rows[1:-1]] + [0]
            for key, value in [("Nj", 21), ("latitudeOfFirstGridPointInDegrees", 90.0),
                               ("latitudeOfLastGridPointInDegrees", -90.0), ("jDirectionIncrementInDegrees", 9.0),
                               ("longitudeOfFirstGridPointInDegrees", 0.0),
                               ("longitudeOfLastGridPointInDegrees", 351.0)]:
                eccodes.codes_set(h, key, value)
            eccodes.codes_set_array(h, "pl", pl)
            points = sum(pl)
        else:
            h = eccodes.codes_grib_new_from_samples("reduced_gg_pl_32_grib2")
            if half is not None:
                eccodes.codes_set_array(h, "pl", half + half[::-1])
            points = eccodes.codes_get(h, "numberOfDataPoints") if half is None else 2 * sum(half)
        assert eccodes.codes_get(h, "gridType") in ("reduced_gg", "reduced_ll"), name
        unstructured(h, name, seed, points)
    for seed, (name, (first, last, west, east)) in enumerate(SUB_AREAS.items(), start=420):
        h = eccodes.codes_grib_new_from_samples("reduced_gg_pl_32_grib2")
        pl = eccodes.codes_get_long_array(h, "pl")
        latitudes = np.array(list(eccodes.codes_get_gaussian_latitudes(32)))
        eccodes.codes_set(h, "Nj", last - first)
        eccodes.codes_set_array(h, "pl", pl[first:last])
        for key, value in [("latitudeOfFirstGridPointInDegrees", round(latitudes[first], 6)),
                           ("latitudeOfLastGridPointInDegrees", round(latitudes[last - 1], 6)),
                           ("longitudeOfFirstGridPointInDegrees", west), ("longitudeOfLastGridPointInDegrees", east)]:
            eccodes.codes_set(h, key, value)
        # eccodes' own count of the area's points (MIR's), not ours.
        unstructured(h, name, seed, eccodes.codes_get(h, "numberOfDataPointsExpected"))


# HEALPix grids (template 3.150), as ECMWF's H grids: ring order (Nside 8, and 3, not a power of 2,
# with the latest tables, which name the template) and nested order (Nside 16). kerchunk 0.2.10 fails
# on them (no Ny); cfgrib reads them on one dimension, `values`, with eccodes' iterator's latitudes
# and longitudes. Not in cases.json: the files as REDUCED's.
HEALPIX = {"healpix_h8_ring": (8, "ring", False), "healpix_h3_ring": (3, "ring", True),
           "healpix_h16_nested": (16, "nested", False)}


def make_healpix():
    for seed, (name, (nside, ordering, latest)) in enumerate(HEALPIX.items(), start=450):
        h = eccodes.codes_grib_new_from_samples("GRIB2")
        if latest:
            eccodes.codes_set(h, "tablesVersion", eccodes.codes_get(h, "tablesVersionLatest"))
        eccodes.codes_set(h, "gridDefinitionTemplateNumber", 150)
        eccodes.codes_set(h, "Nside", nside)
        eccodes.codes_set(h, "longitudeOfFirstGridPointInDegrees", 45)
        eccodes.codes_set(h, "orderingConvention", ordering)
        assert eccodes.codes_get(h, "gridType") == "healpix", name
        unstructured(h, name, seed, 12 * nside * nside)


def unstructured(h, name, seed, points):
    """The message `h` given random values at its `points`, written as NAME.grib2 with the values,
    latitudes and longitudes eccodes gives and cfgrib's reading of it."""
    import xarray as xr

    rng = np.random.default_rng(seed)
    eccodes.codes_set(h, "bitsPerValue", 16)
    eccodes.codes_set_values(h, 250 + 30 * rng.random(points))
    path = HERE / f"{name}.grib2"
    with open(path, "wb") as out:
        eccodes.codes_write(h, out)
    eccodes.codes_release(h)
    with open(path, "rb") as f:
        h = eccodes.codes_grib_new_from_file(f)
    np.save(HERE / f"{name}.npy", eccodes.codes_get_values(h).astype("f8"))
    for var in ("latitudes", "longitudes"):
        np.save(HERE / f"{name}.{var[:-1]}.npy", eccodes.codes_get_array(h, var))
    eccodes.codes_release(h)
    ds = xr.open_dataset(path, engine="cfgrib", backend_kwargs={"indexpath": ""})
    variable = list(ds.data_vars)[0]
    attrs = {k: (v.tolist() if hasattr(v, "tolist") else v) for k, v in ds[variable].attrs.items()}
    (HERE / f"{name}.cfgrib.json").write_text(json.dumps(
        {"variable": variable, "dims": list(ds[variable].dims), "attrs": attrs,
         "latitude_dims": list(ds["latitude"].dims)}, indent=1, sort_keys=True) + "\n")


def projected_only(names):
    """Only the projected cases `names` made again, their keys in cases.json replaced."""

    summary = json.loads((HERE / "cases.json").read_text())
    projected(summary, names)
    (HERE / "cases.json").write_text(json.dumps(summary, indent=1, sort_keys=True) + "\n")


def projected(summary, names=None):
    """The projected cases (`names`, or all), each with eccodes' values and kerchunk's references,
    their keys put in `summary`."""
    from kerchunk.grib2 import scan_grib

    for seed, (name, keys) in enumerate(PROJECTED.items(), start=100):
        if names is not None and name not in names:
            continue
        path, read_back = make_projected(name, keys, seed)
        summary[name] = read_back
        np.save(HERE / f"{name}.npy", truth(path))
        refs = scan_grib(str(path), inline_threshold=0)
        text = json.dumps(refs[0], indent=0, sort_keys=True).replace(str(path), path.name)
        (HERE / f"{name}.kerchunk.json").write_text(text + "\n")


def main():
    from kerchunk.grib2 import scan_grib

    if sys.argv[1:] == ["reduced"]:
        make_reduced()
        return
    if sys.argv[1:] == ["healpix"]:
        make_healpix()
        return
    if sys.argv[1:]:
        projected_only(sys.argv[1:])
        return
    summary = {}
    for seed, (name, (sample, keys, scale, offset, bitmap)) in enumerate(CASES.items()):
        path, read_back = make(name, sample, keys, scale, offset, bitmap, seed)
        summary[name] = read_back
        np.save(HERE / f"{name}.npy", truth(path))
        refs = scan_grib(str(path), inline_threshold=0)
        assert len(refs) == 1, name
        text = json.dumps(refs[0], indent=0, sort_keys=True).replace(str(path), path.name)
        (HERE / f"{name}.kerchunk.json").write_text(text + "\n")
    projected(summary)
    for seed, (name, (keys, scale, offset, bitmap)) in enumerate(EDITION1.items(), start=200):
        path, read_back = make_edition1(name, keys, scale, offset, bitmap, seed)
        summary[name] = read_back
        np.save(HERE / f"{name}.npy", truth(path))
        text = json.dumps(edition1_references(path), indent=0, sort_keys=True).replace(str(path), path.name)
        (HERE / f"{name}.kerchunk.json").write_text(text + "\n")
    (HERE / "cases.json").write_text(json.dumps(summary, indent=1, sort_keys=True) + "\n")


if __name__ == "__main__":
    main()
