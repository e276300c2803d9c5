#!/usr/bin/env python3
"""Makes the GRIB2 scanner's test files and their truth, with eccodes 2.50,
cfgrib and kerchunk 0.2.10 (the test virtualenv: python/requirements.txt).

    python3 make.py

- CASE.grib2: messages written with eccodes from its sample `GRIB2`, several
  variables, levels, steps and ensemble members a file (see CASES).
- CASE.messages.json: for each message, as eccodes reads it back: its offset
  and length, the names cfgrib uses (cfVarName, shortName, paramId, name,
  units, cfName), typeOfLevel, stepType, `level:float`, the reference time
  (cfgrib's seconds since 1970), the end step in seconds, the ensemble
  member, dataType and gridDefinitionDescription.
- CASE.values.npy: every message's values (eccodes' `values`, NaN where
  missing), stacked in file order.
- CASE.grib_tree.json: `kerchunk.grib2.grib_tree(scan_grib(CASE.grib2))`,
  the path replaced by the file's name.
- hrrr_like.grib2.idx: a NOAA inventory (wgrib2's form, `N:offset:d=YYYYMMDDHH:VAR:level:forecast:`)
  of hrrr_like.grib2, and ecmwf_like.index an ECMWF one (a JSON object a message, with `_offset`
  and `_length`), from the messages' offsets as eccodes reads them.
- run_f0N.grib2: hrrr_like.grib2's messages split by their end step (0, 1 and 2 hours), as a
  forecast run's files are, and run.grib_tree.json kerchunk's grib_tree of the three.
- names.grib2 / names.json: one small message for every parameter of NCEP's
  local table, every 20th of the WMO's and ECMWF's, and every one of two
  time ranges (eccodes sets each by its paramId), and the keys eccodes reads
  back: the truth for the tables.
"""
import json
import pathlib

import eccodes
import numpy as np

HERE = pathlib.Path(__file__).resolve().parent
MISSING = 3.4028234663852886e38


def message(centre, grid, product, values_seed=0):
    h = eccodes.codes_grib_new_from_samples("GRIB2")
    eccodes.codes_set(h, "centre", centre)
    for key, value in grid.items():
        eccodes.codes_set(h, key, value)
    for key, value in product.items():
        if isinstance(value, list):
            eccodes.codes_set_long_array(h, key, value)
        else:
            eccodes.codes_set(h, key, value)
    n = grid.get("Nx", grid.get("Ni")) * grid.get("Ny", grid.get("Nj"))
    rng = np.random.default_rng(values_seed)
    eccodes.codes_set(h, "bitsPerValue", 16)
    eccodes.codes_set_values(h, 250 + 30 * rng.random(n))
    return h


LAMBERT = {
    "gridDefinitionTemplateNumber": 30, "jScansPositively": 1, "Nx": 12, "Ny": 9, "latitudeOfFirstGridPointInDegrees": 21.138123,
    "longitudeOfFirstGridPointInDegrees": 237.280472, "LaDInDegrees": 38.5, "LoVInDegrees": 262.5,
    "Latin1InDegrees": 38.5, "Latin2InDegrees": 38.5, "DxInMetres": 3000, "DyInMetres": 3000,
    "shapeOfTheEarth": 6,
}
REGULAR = {
    "Ni": 8, "Nj": 6, "latitudeOfFirstGridPointInDegrees": 50.0,
    "longitudeOfFirstGridPointInDegrees": 350.0, "latitudeOfLastGridPointInDegrees": 45.0,
    "longitudeOfLastGridPointInDegrees": 7.5, "iDirectionIncrementInDegrees": 2.5,
    "jDirectionIncrementInDegrees": 1.0,
}


def surface(kind, value=None, scale=0):
    keys = {"typeOfFirstFixedSurface": kind, "typeOfSecondFixedSurface": 255}
    if value is not None:
        keys.update(scaleFactorOfFirstFixedSurface=scale, scaledValueOfFirstFixedSurface=value)
    return keys


def param(discipline, category, number):
    return {"discipline": discipline, "parameterCategory": category, "parameterNumber": number}


def hrrr_like():
    """NCEP (tables version 2), a Lambert grid: 2 m temperature over three steps, 1.5 m
    temperature, winds at 10 m, temperature on three pressure levels, an accumulation,
    and a local NCEP parameter."""
    out = []
    base = {"tablesVersion": 2, "localTablesVersion": 1, "dataDate": 20240102, "dataTime": 1200}
    for step in (0, 1, 2):
        out.append({**base, **param(0, 0, 0), **surface(103, 2), "forecastTime": step})
    out.append({**base, **param(0, 0, 0), **surface(103, 15, 1), "forecastTime": 0})
    for number in (2, 3):
        out.append({**base, **param(0, 2, number), **surface(103, 10), "forecastTime": 1})
    for pressure in (50000, 70000, 85000):
        for step in (0, 1):
            out.append({**base, **param(0, 0, 0), **surface(100, pressure), "forecastTime": step})
    for step in (1, 2):
        out.append({**base, **param(0, 1, 8), **surface(1), "productDefinitionTemplateNumber": 8,
                    "typeOfStatisticalProcessing": 1, "forecastTime": 0, "lengthOfTimeRange": step})
    out.append({**base, **param(0, 16, 196), "typeOfFirstFixedSurface": 10, "typeOfSecondFixedSurface": 255, "forecastTime": 1})
    return [(7, LAMBERT, p) for p in out]


def gefs_like():
    """NCEP ensemble members (template 4.1) on a regular grid: 2 m temperature, three
    members and two steps, and mean sea level pressure."""
    out = []
    base = {"tablesVersion": 2, "localTablesVersion": 1, "dataDate": 20240102, "dataTime": 0,
            "productDefinitionTemplateNumber": 1, "typeOfEnsembleForecast": 3, "numberOfForecastsInEnsemble": 30}
    for step in (0, 6):
        for member in (0, 1, 2):
            out.append({**base, **param(0, 0, 0), **surface(103, 2), "forecastTime": step, "perturbationNumber": member})
            out.append({**base, **param(0, 3, 1), **surface(101), "forecastTime": step, "perturbationNumber": member})
    return [(7, REGULAR, p) for p in out]


def ecmwf_like():
    """ECMWF (tables version 30): steps in minutes (90 and 180), two runs, 2 m temperature
    and total precipitation (an accumulation)."""
    out = []
    for date, time in ((20240101, 0), (20240101, 1200)):
        base = {"tablesVersion": 30, "dataDate": date, "dataTime": time, "indicatorOfUnitOfTimeRange": 0}
        for step in (90, 180):
            out.append({**base, **param(0, 0, 0), **surface(103, 2), "forecastTime": step})
            out.append({**base, **param(0, 1, 52), **surface(1), "productDefinitionTemplateNumber": 8,
                        "typeOfStatisticalProcessing": 1, "forecastTime": 0, "indicatorOfUnitForTimeRange": 0,
                        "lengthOfTimeRange": step})
    return [(98, REGULAR, p) for p in out]


CASES = {"hrrr_like": hrrr_like, "gefs_like": gefs_like, "ecmwf_like": ecmwf_like}
KEYS = ["cfVarName", "shortName", "paramId", "name", "units", "cfName", "typeOfLevel", "stepType", "dataType",
        "gridDefinitionDescription"]


def read_back(path):
    import cfgrib.cfmessage as cfmessage

    described, values = [], []
    with open(path, "rb") as f:
        offset = 0
        while (h := eccodes.codes_grib_new_from_file(f)) is not None:
            length = eccodes.codes_get(h, "totalLength")
            one = {key: eccodes.codes_get(h, key) for key in KEYS}
            one["offset"], one["length"] = offset, length
            one["level"] = eccodes.codes_get(h, "level", ktype=float)
            message = {k: eccodes.codes_get(h, k) for k in ("dataDate", "dataTime")}
            one["time"] = cfmessage.from_grib_date_time(message)
            unit = {"m": 60, "h": 3600, "s": 1}[eccodes.codes_get(h, "stepUnits", ktype=str)]
            one["step_seconds"] = eccodes.codes_get(h, "endStep", ktype=int) * unit
            if eccodes.codes_is_defined(h, "perturbationNumber"):
                one["number"] = eccodes.codes_get(h, "perturbationNumber")
            v = eccodes.codes_get_values(h).astype("float64")
            v[v == eccodes.codes_get(h, "missingValue")] = np.nan
            values.append(v.reshape(eccodes.codes_get(h, "Ny"), eccodes.codes_get(h, "Nx")))
            described.append(one)
            offset += length
            eccodes.codes_release(h)
    return described, np.stack(values)


def kerchunk_tree(path):
    from kerchunk.grib2 import grib_tree, scan_grib

    tree = grib_tree(scan_grib(str(path)))
    return json.loads(json.dumps(tree, default=lambda b: b.decode()).replace(str(path), path.name))


def names():
    """One message a parameter, and what eccodes calls it."""
    import re

    import gzip

    text = gzip.open(HERE.parents[2] / "crates/kerchunk_scan/src/grib/tables/concepts.txt.gz", "rt").read()
    pool = text.split("%conditions\n", 1)[1].split("\n@", 1)[0].splitlines()
    # Parameters of two time ranges (`typeOfStatisticalProcessing=[102,2]`), which eccodes reads by the last.
    two_ranges = {n for n, conditions in enumerate(pool) if re.search(r"typeOfStatisticalProcessing=\d+,", conditions)}
    chosen = []
    for centre, table, every in ((7, "grib2/localConcepts/kwbc/paramId.def", 1), (7, "grib2/paramId.def", 20),
                                 (98, "grib2/localConcepts/ecmf/paramId.lte33.def", 20)):
        block = text.split(f"@{table}\n", 1)[1].split("\n@", 1)[0]
        entries = [line.split("|") for line in block.splitlines() if re.match(r"^\d+\|", line)]
        ids = sorted({int(value) for value, _ in entries})
        chosen += [(centre, i) for i in ids[::every]]
        chosen += sorted({(centre, int(value)) for value, n in entries if int(n) in two_ranges} - set(chosen))
    truth = []
    with open(HERE / "names.grib2", "wb") as out:
        for centre, param_id in chosen:
            h = eccodes.codes_grib_new_from_samples("GRIB2")
            eccodes.codes_set(h, "centre", centre)
            eccodes.codes_set(h, "tablesVersion", 30 if centre == 98 else 2)
            try:
                eccodes.codes_set(h, "paramId", param_id)
            except eccodes.CodesInternalError:
                eccodes.codes_release(h)
                continue
            eccodes.codes_set_values(h, np.zeros(eccodes.codes_get(h, "numberOfDataPoints")))
            keys = {key: eccodes.codes_get(h, key) for key in KEYS[:8]}
            keys["set_paramId"] = param_id
            truth.append(keys)
            eccodes.codes_write(h, out)
            eccodes.codes_release(h)
    (HERE / "names.json").write_text(json.dumps(truth, indent=0) + "\n")


def templates():
    """Each message of names.grib2's product definition template, as eccodes reads it."""
    numbers = []
    with open(HERE / "names.grib2", "rb") as f:
        while (h := eccodes.codes_grib_new_from_file(f)) is not None:
            numbers.append(eccodes.codes_get(h, "productDefinitionTemplateNumber"))
            eccodes.codes_release(h)
    (HERE / "names.templates.json").write_text(json.dumps(numbers) + "\n")


# wgrib2's names and level texts for hrrr_like's messages, in the forms of the HRRR and GFS
# inventories in kerchunk's tests (tests/grib_idx_fixtures: `TMP:2 m above ground:anl:`,
# `TMP:500 mb:1 hour fcst:`, `APCP:surface:0-1 hour acc fcst:`, `REFC:entire atmosphere:anl:`).
WGRIB2_NAMES = {"2t": "TMP", "t": "TMP", "10u": "UGRD", "10v": "VGRD", "tp": "APCP", "refc": "REFC"}
WGRIB2_LEVELS = {"heightAboveGround": "{:g} m above ground", "isobaricInhPa": "{:g} mb", "surface": "surface",
                 "atmosphere": "entire atmosphere"}


def wgrib2_line(m):
    """A message's inventory line as wgrib2 writes it, after its number and offset."""
    hours = m["step_seconds"] // 3600
    if m["stepType"] == "accum":
        forecast = f"0-{hours} hour acc fcst"
    else:
        forecast = f"{hours} hour fcst" if hours else "anl"
    level = WGRIB2_LEVELS[m["typeOfLevel"]].format(m["level"])
    return f"d=2024010212:{WGRIB2_NAMES[m['shortName']]}:{level}:{forecast}:"


def inventories():
    """The inventories beside hrrr_like.grib2 (NOAA's) and ecmwf_like.grib2 (ECMWF's)."""
    lines = []
    for n, m in enumerate(json.loads((HERE / "hrrr_like.messages.json").read_text()), 1):
        lines.append(f"{n}:{m['offset']}:{wgrib2_line(m)}")
    (HERE / "hrrr_like.grib2.idx").write_text("\n".join(lines) + "\n")
    lines = []
    for m in json.loads((HERE / "ecmwf_like.messages.json").read_text()):
        entry = {"param": m["shortName"], "levtype": "sfc", "step": str(m["step_seconds"] // 60),
                 "_offset": m["offset"], "_length": m["length"]}
        lines.append(json.dumps(entry))
    (HERE / "ecmwf_like.index").write_text("\n".join(lines) + "\n")


def forecast_run():
    """hrrr_like.grib2 split into a file an hour, and kerchunk's tree of the three."""
    data = (HERE / "hrrr_like.grib2").read_bytes()
    hours = {}
    for m in json.loads((HERE / "hrrr_like.messages.json").read_text()):
        hours.setdefault(m["step_seconds"] // 3600, []).append(data[m["offset"]:m["offset"] + m["length"]])
    paths = []
    for hour, messages in sorted(hours.items()):
        path = HERE / f"run_f{hour:02d}.grib2"
        path.write_bytes(b"".join(messages))
        paths.append(path)
    from kerchunk.grib2 import grib_tree, scan_grib

    tree = grib_tree([group for path in paths for group in scan_grib(str(path))])
    text = json.dumps(tree, default=lambda b: b.decode())
    for path in paths:
        text = text.replace(str(path), path.name)
    (HERE / "run.grib_tree.json").write_text(json.dumps(json.loads(text), indent=0, sort_keys=True) + "\n")


def main():
    for case, make in CASES.items():
        path = HERE / f"{case}.grib2"
        with open(path, "wb") as out:
            for i, (centre, grid, product) in enumerate(make()):
                h = message(centre, grid, product, i)
                eccodes.codes_write(h, out)
                eccodes.codes_release(h)
        described, values = read_back(path)
        (HERE / f"{case}.messages.json").write_text(json.dumps(described, indent=0) + "\n")
        np.save(HERE / f"{case}.values.npy", values)
        (HERE / f"{case}.grib_tree.json").write_text(json.dumps(kerchunk_tree(path), indent=0, sort_keys=True) + "\n")
    inventories()
    forecast_run()
    names()
    templates()


if __name__ == "__main__":
    main()
