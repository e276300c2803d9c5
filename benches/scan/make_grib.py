#!/usr/bin/env python3
"""Writes a GRIB2 file the size of an HRRR surface file for the scan benchmarks: 120
messages on HRRR's full Lambert grid (1799 x 1059 points, 3 km), NCEP's tables, complex
packing with spatial differencing of order 2 (as NCEP packs), several variables on height,
pressure and surface levels, an accumulation (template 4.8) and NCEP's local composite
reflectivity; with its wgrib2-style inventory (FILE.idx).

    python3 make_grib.py OUT.grib2
"""
import sys

import eccodes
import numpy as np

NX, NY = 1799, 1059
GRID = {
    "gridDefinitionTemplateNumber": 30, "shapeOfTheEarth": 6, "Nx": NX, "Ny": NY,
    "latitudeOfFirstGridPointInDegrees": 21.138123, "longitudeOfFirstGridPointInDegrees": 237.280472,
    "LaDInDegrees": 38.5, "LoVInDegrees": 262.5, "Latin1InDegrees": 38.5, "Latin2InDegrees": 38.5,
    "DxInMetres": 3000, "DyInMetres": 3000, "jScansPositively": 1,
}
# (discipline, category, number, first fixed surface type, its value, idx name)
SURFACE = [
    (0, 0, 0, 103, 2, "TMP"), (0, 0, 6, 103, 2, "DPT"), (0, 1, 1, 103, 2, "RH"),
    (0, 2, 2, 103, 10, "UGRD"), (0, 2, 3, 103, 10, "VGRD"), (0, 2, 22, 1, None, "GUST"),
    (0, 3, 0, 1, None, "PRES"), (0, 3, 5, 1, None, "HGT"), (0, 7, 6, 1, None, "CAPE"),
    (0, 7, 7, 1, None, "CIN"), (0, 19, 0, 1, None, "VIS"), (0, 0, 0, 1, None, "TMP"),
    (0, 16, 196, 10, None, "REFC"), (0, 3, 1, 101, None, "PRMSL"),
]
LEVELS = [250, 300, 500, 700, 850, 925, 1000]
ALOFT = [(0, 3, 5, "HGT"), (0, 0, 0, "TMP"), (0, 1, 1, "RH"), (0, 2, 2, "UGRD"), (0, 2, 3, "VGRD"),
         (0, 0, 6, "DPT"), (0, 2, 8, "VVEL"), (0, 1, 0, "SPFH"), (0, 2, 10, "ABSV"), (0, 19, 21, "TCOND"),
         (0, 6, 1, "TCDC"), (0, 1, 22, "CLMR"), (0, 1, 23, "ICMR"), (0, 1, 24, "RWMR"), (0, 1, 25, "SNMR")]
LEVEL_TEXT = {103: "{} m above ground", 1: "surface", 10: "entire atmosphere", 101: "mean sea level"}


def messages():
    for d, c, n, kind, value, name in SURFACE:
        yield {"discipline": d, "parameterCategory": c, "parameterNumber": n, "typeOfFirstFixedSurface": kind,
               **({"scaledValueOfFirstFixedSurface": value, "scaleFactorOfFirstFixedSurface": 0} if value else {})}, \
            name, LEVEL_TEXT[kind].format(value)
    for d, c, n, name in ALOFT:
        for level in LEVELS:
            yield {"discipline": d, "parameterCategory": c, "parameterNumber": n, "typeOfFirstFixedSurface": 100,
                   "scaledValueOfFirstFixedSurface": level * 100, "scaleFactorOfFirstFixedSurface": 0}, \
                name, f"{level} mb"
    yield {"discipline": 0, "parameterCategory": 1, "parameterNumber": 8, "typeOfFirstFixedSurface": 1,
           "productDefinitionTemplateNumber": 8, "typeOfStatisticalProcessing": 1, "lengthOfTimeRange": 1}, \
        "APCP", "surface"


def main():
    out_path = sys.argv[1]
    rng = np.random.default_rng(0)
    y, x = np.mgrid[0:NY, 0:NX]
    base = np.sin(x / 150.0) * np.cos(y / 110.0)
    offset, lines = 0, []
    with open(out_path, "wb") as out:
        for i, (product, name, level) in enumerate(messages()):
            if i == 120:
                break
            h = eccodes.codes_grib_new_from_samples("GRIB2")
            eccodes.codes_set(h, "centre", 7)
            for key, value in {"tablesVersion": 2, "localTablesVersion": 1, "dataDate": 20240102, "dataTime": 1200,
                               "typeOfSecondFixedSurface": 255, **GRID}.items():
                eccodes.codes_set(h, key, value)
            for key, value in product.items():
                eccodes.codes_set(h, key, value)
            eccodes.codes_set(h, "forecastTime", 0 if product.get("productDefinitionTemplateNumber") == 8 else 1)
            eccodes.codes_set(h, "packingType", "grid_complex_spatial_differencing")
            eccodes.codes_set(h, "bitsPerValue", 12)
            values = 250 + 20 * base + rng.normal(0, 0.5, base.shape) + i
            eccodes.codes_set_values(h, values.ravel())
            data = eccodes.codes_get_message(h)
            eccodes.codes_release(h)
            out.write(data)
            lines.append(f"{i + 1}:{offset}:d=2024010212:{name}:{level}:1 hour fcst:")
            offset += len(data)
    with open(out_path + ".idx", "w") as idx:
        idx.write("\n".join(lines) + "\n")
    print(f"{len(lines)} messages, {offset} bytes")


if __name__ == "__main__":
    main()
