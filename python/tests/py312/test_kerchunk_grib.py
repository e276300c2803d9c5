"""``zarrs_kerchunk.kerchunk.grib2.scan_grib`` against kerchunk 0.2.10's own ``scan_grib`` (eccodes
and cfgrib) on the same files: one set per message, in the file's order, with the same keys,
metadata equal as parsed JSON, inline values equal as bytes and ranges equal; but for the
differences the README lists, each checked here to be the file's meaning, not dropped.

The files are cfgrib's (`tests/codecs/grib/real`) and eccodes' samples (`tests/codecs/grib`: a
Lambert grid, whose latitudes and longitudes both compute, and Mercator)."""

from __future__ import annotations

import base64
import copy
import json
from pathlib import Path

import numpy as np
import pytest

import kerchunk.grib2  # needs cfgrib and eccodes (tests/icechunk/requirements.txt)

from zarrs_kerchunk.kerchunk.grib2 import grib_tree, scan_grib

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
    # kerchunk stops after `skip` messages of the file, and filters those.
    assert [_ranges(m) for m in scan_grib(path, skip=1)] == [_ranges(m) for m in every[:1]]
    first = [_ranges(every[0])]
    for wanted in [{"typeOfLevel": "hybrid"}, {"typeOfLevel": "isobaricInhPa"}]:
        theirs = [_ranges(m) for m in _kerchunk_sets(path, tmp_path, filter=wanted) if _ranges(m) in first]
        assert [_ranges(m) for m in scan_grib(path, skip=1, filter=wanted)] == theirs, wanted


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


SCAN = Path(__file__).resolve().parents[3] / "tests" / "scan" / "grib"

#: The scanner's GRIB cases (tests/scan/grib/README.md): each a tree of one file, or of a run's files.
TREES = [["hrrr_like.grib2"], ["gefs_like.grib2"], ["ecmwf_like.grib2"], ["run_f00.grib2", "run_f01.grib2", "run_f02.grib2"]]


def _groups(refs: dict) -> list[str]:
    return sorted(key for key in refs if key.endswith("/.zgroup"))


def _truth(files: list[str]) -> dict[tuple[str, int], dict]:
    """Each message's eccodes keys (`CASE.messages.json`, made with eccodes and cfgrib), by file
    and offset; a run's files are `hrrr_like`'s messages split by their end step."""
    truth = {}
    for name in files:
        path = str(SCAN / name)
        if name.startswith("run_"):
            data, whole = Path(path).read_bytes(), (SCAN / "hrrr_like.grib2").read_bytes()
            for m in json.loads((SCAN / "hrrr_like.messages.json").read_text()):
                at = data.find(whole[m["offset"]:m["offset"] + m["length"]])
                if at >= 0:
                    truth[(path, at)] = m
        else:
            for m in json.loads((SCAN / name.replace(".grib2", ".messages.json")).read_text()):
                truth[(path, m["offset"])] = m
    return truth


def _placed(refs: dict, truth: dict) -> int:
    """Check each data chunk of the tree `refs` sits where its message's eccodes keys put it: its
    group, and the time, step, level and member its indices take. Returns how many."""
    count = 0
    for key, value in refs.items():
        parts = key.split("/")
        if not (isinstance(value, list) and len(parts) == 5 and parts[0] == parts[3]):
            continue
        m = truth[(value[0], value[1])]
        assert parts[:3] == [m["cfVarName"], m["stepType"], m["typeOfLevel"]], key
        group = "/".join(parts[:3])
        dims = json.loads(refs[f"{group}/{parts[0]}/.zattrs"])["_ARRAY_DIMENSIONS"]
        at = dict(zip(dims, map(int, parts[4].split(".")), strict=True))

        def coordinate(name):
            zarray = json.loads(refs[f"{group}/{name}/.zarray"])
            chunk = ".".join("0" for _ in zarray["shape"]) or "0"
            return np.frombuffer(_value(chunk, refs[f"{group}/{name}/{chunk}"]), zarray["dtype"]).reshape(zarray["shape"])

        assert coordinate("time")[at["time"]] == m["time"], key
        unit = {"days": 86400, "hours": 3600, "minutes": 60, "seconds": 1}[json.loads(refs[f"{group}/step/.zattrs"])["units"]]
        assert coordinate("step")[at["step"]] * unit == m["step_seconds"], key
        assert coordinate("valid_time")[at["time"], at["step"]] == m["time"] + m["step_seconds"], key
        levels = coordinate(m["typeOfLevel"])
        assert (levels[at[m["typeOfLevel"]]] if levels.ndim else levels[()]) == m["level"], key
        if "number" in m:
            numbers = coordinate("number")
            assert (numbers[at["number"]] if numbers.ndim else numbers[()]) == m["number"], key
        count += 1
    return count


@pytest.mark.parametrize("files", TREES, ids=lambda files: files[0])
def test_grib_tree_gives_kerchunks_groups_each_message_where_eccodes_puts_it(files):
    """From kerchunk's scan_grib sets and from ours: kerchunk's groups, and every message a chunk
    at the time, step, level and member eccodes gives it."""
    paths = [str(SCAN / name) for name in files]
    theirs_sets = [s for path in paths for s in kerchunk.grib2.scan_grib(path)]
    theirs = kerchunk.grib2.grib_tree(copy.deepcopy(theirs_sets))
    truth = _truth(files)
    for sets in (theirs_sets, [s for path in paths for s in scan_grib(path)]):
        ours = grib_tree(sets)
        assert ours["version"] == 1
        assert _groups(ours["refs"]) == _groups(theirs["refs"]), files
        assert _placed(ours["refs"], truth) == len(truth), files


def test_grib_tree_of_filtered_messages_holds_only_them(tmp_path):
    """Messages filtered by scan_grib: only their groups, each axis only the values they take."""
    path = str(SCAN / "hrrr_like.grib2")
    truth = _truth(["hrrr_like.grib2"])
    for kwargs in [{"filter": {"typeOfLevel": "isobaricInhPa"}}, {"filter": {"level": 500}}, {"filter": {"level": 850}},
                   {"filter": {"shortName": "2t"}}]:
        theirs = kerchunk.grib2.grib_tree(kerchunk.grib2.scan_grib(path, **kwargs))
        ours = grib_tree(scan_grib(path, **kwargs))
        assert _groups(ours["refs"]) == _groups(theirs["refs"]), kwargs
        kept = {k: m for k, m in truth.items() if all(m[f] == v for f, v in kwargs["filter"].items())}
        assert _placed(ours["refs"], truth) == len(kept) > 0, kwargs
        # Each axis holds the values the kept messages take, and only those.
        refs = ours["refs"]
        for key in [k for k in refs if k.endswith("/step/.zarray")]:
            group = key[: -len("/step/.zarray")]
            level_type = group.split("/")[2]
            messages = [m for m in kept.values() if "/".join([m["cfVarName"], m["stepType"], m["typeOfLevel"]]) == group]
            unit = {"hours": 3600, "minutes": 60}[json.loads(refs[f"{group}/step/.zattrs"])["units"]]
            for name, expected in [("time", {m["time"] for m in messages}),
                                   ("step", {m["step_seconds"] // unit for m in messages}),
                                   (level_type, {m["level"] for m in messages})]:
                zarray = json.loads(refs[f"{group}/{name}/.zarray"])
                chunk = ".".join("0" for _ in zarray["shape"]) or "0"
                values = np.frombuffer(_value(chunk, refs[f"{group}/{name}/{chunk}"]), zarray["dtype"])
                assert sorted(values.tolist()) == sorted(expected), (kwargs, group, name)


def test_grib_tree_refuses_a_set_without_its_messages_range():
    path = str(GRIB / "real" / "step_60m.grib")
    with pytest.raises(ValueError, match=r"message_groups\[0\]: its values are inline"):
        grib_tree(scan_grib(path))


def test_grib_tree_refuses_a_message_its_file_does_not_hold_there():
    """A set naming a range no message of the file starts at: an error naming the file and the
    byte, never a tree that silently lacks it."""
    path = str(SCAN / "hrrr_like.grib2")
    sets = scan_grib(path)
    key = next(k for k, v in sets[1]["refs"].items() if isinstance(v, list))
    sets[1]["refs"][key] = [sets[1]["refs"][key][0], 7, 100]
    with pytest.raises(ValueError, match=r"hrrr_like.grib2: the message at byte 7 is not in the scan's tree"):
        grib_tree(sets)


def test_a_message_the_scan_leaves_out_is_refused_naming_it(tmp_path):
    """Two messages of one variable and level on two grids: the scan's tree keeps the first grid's;
    kerchunk gives a set for each, so scan_grib and grib_tree refuse, naming the one left out,
    rather than give one set silently."""
    path = tmp_path / "two_grids.grib2"
    path.write_bytes((GRIB / "lambert_hrrr.grib2").read_bytes() + (GRIB / "lambert_wgs84.grib2").read_bytes())
    assert len(_kerchunk_sets(str(path), tmp_path)) == 2
    with pytest.raises(ValueError, match=r"two_grids.grib2: t/instant/surface/t: the message at byte 4188 is on another grid"):
        scan_grib(str(path))
    sets = scan_grib(str(GRIB / "lambert_hrrr.grib2"))
    with pytest.raises(ValueError, match="is on another grid"):
        grib_tree(sets + [dict(sets[0], templates={"u": str(path)})])
