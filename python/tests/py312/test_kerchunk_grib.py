"""``zarrs_kerchunk.kerchunk.grib2.scan_grib`` against kerchunk 0.2.10's own ``scan_grib`` (eccodes
and cfgrib) on the same files: one set per message, in the file's order, with the same keys,
metadata equal as parsed JSON, inline values equal as bytes and ranges equal; but for the
differences the README lists, each checked here to be the file's meaning, not dropped.

The files are cfgrib's (`tests/codecs/grib/real`) and eccodes' samples (`tests/codecs/grib`: a
Lambert grid, whose latitudes and longitudes both compute, and Mercator)."""

from __future__ import annotations

import base64
import json
from pathlib import Path

import numpy as np
import pytest

import kerchunk.grib2  # needs cfgrib and eccodes (tests/icechunk/requirements.txt)

from zarrs_kerchunk.kerchunk.grib2 import scan_grib

GRIB = Path(__file__).resolve().parents[3] / "tests" / "codecs" / "grib"

FILES = [
    "real/regular_ll_msl.grib",
    "real/regular_gg_sfc.grib",
    "real/step_60m.grib",
    "real/t_on_different_level_types.grib",
    "real/fields_with_missing_values.grib",
    "lambert_hrrr.grib2",
    "mercator_wgs84.grib2",
]


def _value(key: str, value):
    """A reference as compared: metadata parsed, inline values as bytes, ranges as lists."""
    if isinstance(value, list):
        return list(value)
    if key.rsplit("/", 1)[-1].startswith(".z"):
        return json.loads(value)
    return base64.b64decode(value[7:]) if value.startswith("base64:") else value.encode()


def _differences(ours: dict, theirs: dict) -> list[str]:
    """Where the two sets of one message differ, but for the README's listed differences, each
    checked: `step` counts the unit its `units` names (kerchunk writes the message's count with
    "hours" whatever its unit)."""
    found = []
    ours, theirs = dict(ours), dict(theirs)
    for key in [k for k in theirs if k.count("/") == 1 and k.endswith("/0")]:
        two = key + ".0"
        if two in ours and json.loads(theirs[key[:-2] + "/.zarray"])["shape"].__len__() == 2:
            # Listed: kerchunk writes a small 2-D message's values at VAR/0, which zarr never
            # reads (the chunk is VAR/0.0); ours are at VAR/0.0, the same bytes.
            theirs[two] = theirs.pop(key)
    if set(ours) != set(theirs):
        found.append(f"keys: ours only {sorted(set(ours) - set(theirs))}, theirs only {sorted(set(theirs) - set(ours))}")
    for key in sorted(set(ours) & set(theirs)):
        a, b = _value(key, ours[key]), _value(key, theirs[key])
        if key == "step/.zattrs" and a != b:
            # Listed: kerchunk names hours whatever unit the message counts; checked below.
            a, b = dict(a, units=None), dict(b, units=None)
        if key == "step/0" and a != b:
            continue
        variable = next(k.split("/")[0] for k, v in ours.items() if isinstance(v, list) or k.endswith("/0.0"))
        if key == f"{variable}/0.0" and isinstance(a, bytes) and a != b:
            # Listed: a small message's values inline, its bitmap's missing points NaN, where
            # kerchunk writes eccodes' missingValue as if it were a value.
            missing = json.loads(ours[f"{variable}/.zattrs"])["GRIB_missingValue"]
            mine, eccodes = np.frombuffer(a, "<f8"), np.frombuffer(b, "<f8")
            if np.array_equal(np.isnan(mine), eccodes == missing) and np.array_equal(mine[~np.isnan(mine)], eccodes[eccodes != missing]):
                continue
        gaussian = any(json.loads(v).get("GRIB_gridType") == "regular_gg" for k, v in ours.items() if k.endswith("/.zattrs"))
        if key == "latitude/0" and a != b and gaussian:
            # Listed: a Gaussian grid's latitudes are computed within 5e-14 degrees of eccodes'.
            difference = np.abs(np.frombuffer(a, "<f8") - np.frombuffer(b, "<f8"))
            if difference.max() <= 5e-14:
                continue
        if a != b:
            found.append(f"{key}: ours {str(a)[:200]} theirs {str(b)[:200]}")
    return found


def _step_seconds(refs: dict) -> int:
    units = json.loads(refs["step/.zattrs"])["units"]
    value = int(np.frombuffer(_value("step/0", refs["step/0"]), "<i8")[0])
    return value * {"days": 86400, "hours": 3600, "minutes": 60, "seconds": 1}[units]


def _kerchunk_sets(path: str, tmp_path: Path, **kwargs) -> list[dict]:
    """kerchunk's `scan_grib` of each message of `path`, found by eccodes, scanned from a file of
    its own and pointed back at `path` (as `tests/codecs/grib/real/make.py` does): kerchunk 0.2.10
    reads a GRIB1 message's length from the wrong octets, and never returns on some files."""
    import eccodes

    found = []
    with open(path, "rb") as f:
        while (handle := eccodes.codes_grib_new_from_file(f)) is not None:
            found.append((int(eccodes.codes_get(handle, "offset")), int(eccodes.codes_get(handle, "totalLength"))))
            eccodes.codes_release(handle)
    data = Path(path).read_bytes()
    sets = []
    for n, (offset, length) in enumerate(found):
        one = tmp_path / f"message{n}.grib"
        one.write_bytes(data[offset:offset + length])
        for references in kerchunk.grib2.scan_grib(str(one), **kwargs):
            for value in references["refs"].values():
                if isinstance(value, list):
                    value[1:] = [offset, length]
            references["templates"]["u"] = path
            sets.append(references)
    return sets


@pytest.mark.parametrize("name", FILES)
def test_scan_grib_gives_kerchunks_sets(name, tmp_path):
    path = str(GRIB / name)
    theirs = _kerchunk_sets(path, tmp_path)
    ours = scan_grib(path)
    assert len(ours) == len(theirs), name
    for n, (a, b) in enumerate(zip(ours, theirs, strict=True)):
        assert a["templates"] == b["templates"] == {"u": path}
        assert a["version"] == b["version"] == 1
        assert _differences(a["refs"], b["refs"]) == [], f"{name}: message {n}"
        # The step is the time the file says, as valid_time minus time is.
        valid = int(np.frombuffer(_value("valid_time/0", a["refs"]["valid_time/0"]), "<i8")[0])
        start = int(np.frombuffer(_value("time/0", a["refs"]["time/0"]), "<i8")[0])
        assert _step_seconds(a["refs"]) == valid - start, f"{name}: message {n}"


def test_filter_and_skip_keep_the_messages_kerchunk_keeps(tmp_path):
    """One GRIB1 and one GRIB2 message, filtered as kerchunk filters each message."""
    path = str(GRIB / "real" / "t_on_different_level_types.grib")
    every = _kerchunk_sets(path, tmp_path)
    for kwargs in [{"filter": {"typeOfLevel": "isobaricInhPa"}}, {"filter": {"typeOfLevel": ["hybrid", "surface"]}},
                   {"filter": {"level": 100}}, {"filter": {"shortName": "t", "stepType": "instant"}}]:
        theirs = _kerchunk_sets(path, tmp_path, **kwargs)
        ours = scan_grib(path, **kwargs)
        assert 0 < len(theirs) and [_ranges(m) for m in ours] == [_ranges(m) for m in theirs], kwargs
    # kerchunk stops after `skip` messages of the file.
    assert [_ranges(m) for m in scan_grib(path, skip=1)] == [_ranges(m) for m in every[:1]]


def _ranges(references: dict) -> list:
    return sorted(v[1:] for v in references["refs"].values() if isinstance(v, list))


def test_a_grid_the_scan_does_not_compute_is_refused_naming_it():
    """cfgrib's file scanned in alternating rows: refused by name, never given wrong coordinates."""
    from zarrs_kerchunk.errors import InvalidReferencesError

    with pytest.raises(InvalidReferencesError, match="scanning mode 0x10 .* is not computed"):
        scan_grib(str(GRIB / "real" / "alternate-scanning.grib"))


def test_a_filter_key_the_scan_does_not_give_is_refused_by_name():
    path = str(GRIB / "real" / "regular_ll_msl.grib")
    with pytest.raises(ValueError, match="filter: 'bitsPerValue' is not a key"):
        scan_grib(path, filter={"bitsPerValue": 16})
