"""kerchunk's `MultiZarrToZarr` over our combining (issue 57): `zarrs_kerchunk.kerchunk.combine.
MultiZarrToZarr` against kerchunk 0.2.10's own, on the combine corpus (tests/scan/combine, made by
its make.py with netCDF4; xarray's `open_mfdataset` of the files is each case's truth there).

- the signature is kerchunk's;
- along times (`cf:time`), in files of one unit or each their own, noleap, and a shorter last
  file: the same references as kerchunk's, at inline thresholds 0 and 500 (kerchunk's default),
  from dicts and from JSON files;
- members from the file names (a regex) and from the data, outside times: the same, but for the
  arrays of `identical_dims`, which kerchunk takes from the first set given and we from the first
  in order (both checked the same: the same ranges of files that hold the same bytes);
- where kerchunk is wrong we differ, as the README lists: bounds and `obs_time` in each file's own
  units are written again in one unit (decoded as xarray decodes the files), and files packed each
  with their own `scale_factor`, or times in different units read as written (`data:time`), are
  refused where kerchunk gives wrong values;
- `preprocess`, `postprocess`, `out=` and `filename=` act as kerchunk's, and what cannot be honoured
  is refused by name."""

from __future__ import annotations

import inspect
import json
import re
from pathlib import Path

import kerchunk.combine
import numpy as np
import pytest
import xarray as xr
from kerchunk.hdf import SingleHdf5ToZarr

from corpus import reference_value
from zarrs_kerchunk import errors
from zarrs_kerchunk.kerchunk.combine import MultiZarrToZarr

COMBINE = Path(__file__).resolve().parents[3] / "tests" / "scan" / "combine"
TIMES = ["noleap", "units_by_day", "mixed_units", "shorter_last"]


def _paths(case: str) -> list[str]:
    pattern = re.compile(rf"{case}_(\d+|m\d+(_\d+)?)\.nc$")
    return sorted(str(p) for p in COMBINE.iterdir() if pattern.fullmatch(p.name))


def _singles(paths: list[str]) -> list[dict]:
    return [SingleHdf5ToZarr(p, inline_threshold=0).translate() for p in paths]




def _differing(ours: dict, theirs: dict, apart: frozenset[str] = frozenset()) -> set[str]:
    """The keys whose values differ; both sets must hold the same keys, but for the arrays `apart`,
    whose keys are only counted as differing."""
    assert ours["version"] == theirs["version"] == 1
    ours_keys = {key for key in ours["refs"] if key.split("/")[0] not in apart}
    assert sorted(ours_keys) == sorted(key for key in theirs["refs"] if key.split("/")[0] not in apart)
    different = {key for key in ours_keys if reference_value(ours["refs"][key]) != reference_value(theirs["refs"][key])}
    return different | {key for key in set(ours["refs"]) ^ set(theirs["refs"])}


def _both(paths: list[str], **kwargs) -> tuple[dict, dict]:
    """Ours and kerchunk's, each given its own copy of the per-file references."""
    singles = _singles(paths)
    theirs = kerchunk.combine.MultiZarrToZarr(json.loads(json.dumps(singles)), **kwargs).translate()
    ours = MultiZarrToZarr(json.loads(json.dumps(singles)), **kwargs).translate()
    return ours, theirs


def test_the_signature_is_kerchunks() -> None:
    for ours, theirs in [(MultiZarrToZarr.__init__, kerchunk.combine.MultiZarrToZarr.__init__),
                         (MultiZarrToZarr.translate, kerchunk.combine.MultiZarrToZarr.translate)]:
        mine = list(inspect.signature(ours).parameters.values())
        kerchunks = list(inspect.signature(theirs).parameters.values())
        assert [(p.name, p.default, p.kind) for p in mine] == [(p.name, p.default, p.kind) for p in kerchunks]


@pytest.mark.parametrize("inline_threshold", [0, 500])
@pytest.mark.parametrize("case", TIMES)
def test_times_give_kerchunks_references(case, inline_threshold) -> None:
    ours, theirs = _both(_paths(case), remote_protocol="file", concat_dims=["time"], coo_map={"time": "cf:time"},
                         inline_threshold=inline_threshold)
    assert _differing(ours, theirs) == set()
    # The chunks kerchunk inlines at 500 (each file's few bytes) are inline in ours too.
    inline = [key for key, value in theirs["refs"].items()
              if key.startswith("t/") and "/.z" not in key and not isinstance(value, list)]
    assert bool(inline) == (inline_threshold > 0)


def test_json_files_give_what_their_dicts_give(tmp_path) -> None:
    paths = _paths("mixed_units")
    files = []
    for path, single in zip(paths, _singles(paths), strict=True):
        files.append(tmp_path / (Path(path).stem + ".json"))
        files[-1].write_text(json.dumps(single))
    kwargs = {"concat_dims": ["time"], "coo_map": {"time": "cf:time"}}
    from_files = MultiZarrToZarr([str(f) for f in files], **kwargs).translate()
    theirs = kerchunk.combine.MultiZarrToZarr([str(f) for f in files], **kwargs).translate()
    assert _differing(from_files, theirs) == set()


@pytest.mark.parametrize("case", ["members", "ens", "ensdata"])
def test_named_members_give_kerchunks_references(case) -> None:
    paths = _paths(case)
    coo_map, identical = {
        "members": ({"member": re.compile(r"_m(\d+)\.nc$")}, ["x", "time"]),
        "ens": ({"member": re.compile(r"_m(\d+)_"), "time": "cf:time"}, ["x"]),
        "ensdata": ({"member": "data:member", "time": "cf:time"}, ["x"]),
    }[case]
    singles = _singles(paths)
    kwargs = {"concat_dims": list(coo_map), "coo_dtypes": {"member": "int64"}, "identical_dims": identical}
    theirs = kerchunk.combine.MultiZarrToZarr(paths, indicts=json.loads(json.dumps(singles)), coo_map=dict(coo_map),
                                              **kwargs).translate()
    ours = MultiZarrToZarr(paths, indicts=json.loads(json.dumps(singles)), coo_map=dict(coo_map), **kwargs).translate()
    differing = _differing(ours, theirs)
    # Only identical_dims' ranges may name another file, at the same place, holding the same bytes.
    assert {key.split("/")[0] for key in differing} <= set(identical)
    for key in differing:
        (our_url, *ours_at), (their_url, *theirs_at) = ours["refs"][key], theirs["refs"][key]
        assert ours_at == theirs_at and our_url in paths and their_url in paths, key
        offset, length = ours_at
        assert _read(our_url, offset, length) == _read(their_url, offset, length), key
    if case == "members":
        assert differing, "kerchunk takes identical_dims from the first given, members_m11.nc"


def _read(path: str, offset: int, length: int) -> bytes:
    with open(path, "rb") as f:
        f.seek(offset)
        return f.read(length)


def test_bounds_in_each_files_units_are_written_again_in_one(tmp_path) -> None:
    ours, theirs = _both(_paths("bounds"), concat_dims=["time"], coo_map={"time": "cf:time"})
    apart = frozenset({"time_bnds", "obs_time"})
    assert {key.split("/")[0] for key in _differing(ours, theirs, apart)} == apart
    # kerchunk takes each file's bounds as written, in that file's units (hours since its own day),
    # under the first file's: the second file's first bounds read as the first file's first.
    assert reference_value(theirs["refs"]["time_bnds/4.0"]) == reference_value(theirs["refs"]["time_bnds/0.0"]) \
        == ("bytes", np.array([0.0, 6.0], "<f8").tobytes())
    output = tmp_path / "combined.json"
    output.write_text(json.dumps(ours))
    expected = json.loads((COMBINE / "bounds.expected.json").read_text())
    with xr.open_dataset(str(output), engine="zarrs_kerchunk") as ds:
        assert _iso(ds.time_bnds.values) == expected["time_bnds"]
        assert _iso(ds.obs_time.values) == expected["obs_time"]
        assert _iso(ds.time.values) == expected["time"]
        assert ds.t.values.tolist() == expected["t"]


def _iso(values: np.ndarray) -> list:
    return np.datetime_as_string(values, unit="s").tolist()


def test_files_packed_each_their_own_way_are_refused() -> None:
    singles = _singles(_paths("packed"))
    with pytest.raises(errors.InvalidReferencesError,
                       match=r"path\[1\]: \"t\": its scale_factor 0.02 differs from path\[0\]'s 0.01"):
        MultiZarrToZarr(singles, concat_dims=["time"], coo_map={"time": "cf:time"}).translate()
    # kerchunk keeps the first file's scale_factor for all three.
    theirs = kerchunk.combine.MultiZarrToZarr(singles, concat_dims=["time"], coo_map={"time": "cf:time"}).translate()
    assert json.loads(theirs["refs"]["t/.zattrs"])["scale_factor"] == 0.01


def test_times_in_other_units_read_as_written_are_refused() -> None:
    singles = _singles(_paths("units_by_day"))
    with pytest.raises(errors.InvalidReferencesError, match=r'"time": its units "hours since 2020-01-02".*\(use cf\)'):
        MultiZarrToZarr(singles, concat_dims=["time"]).translate()
    # kerchunk concatenates the numbers as written: each file's 0, 6, 12, 18 hours, one time each.
    theirs = kerchunk.combine.MultiZarrToZarr(singles, concat_dims=["time"]).translate()
    expected = json.loads((COMBINE / "units_by_day.expected.json").read_text())
    assert json.loads(theirs["refs"]["time/.zarray"])["shape"] == [4] != [len(expected["time"])]


def test_preprocess_postprocess_out_and_filename(tmp_path) -> None:
    singles = _singles(_paths("noleap"))

    def drop_t(refs: dict) -> None:
        for key in [key for key in refs if key.startswith("t/")]:
            del refs[key]

    def tag(refs: dict) -> dict:
        refs["extra"] = "added"
        return refs

    out: dict = {"kept": "before"}
    output = tmp_path / "combined.json"
    result = MultiZarrToZarr(json.loads(json.dumps(singles)), concat_dims=["time"], coo_map={"time": "cf:time"},
                             preprocess=drop_t, postprocess=tag, out=out).translate(filename=str(output))
    theirs = kerchunk.combine.MultiZarrToZarr(json.loads(json.dumps(singles)), concat_dims=["time"],
                                              coo_map={"time": "cf:time"}, preprocess=drop_t, postprocess=tag,
                                              out={"kept": "before"}).translate()
    assert _differing(result, theirs) == set()
    assert not any(key.startswith("t/") for key in result["refs"])
    assert out["extra"] == "added" and out["kept"] == "before"
    assert json.loads(output.read_text()) == result


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"coo_map": {"time": lambda index, fs, var, fn: index}}, r"coo_map\['time'\]=<function"),
    ({"coo_map": {"time": "INDEX"}}, r"coo_map\['time'\]='INDEX'"),
    ({"coo_map": {"time": "data:other"}}, r"coo_map\['time'\]='data:other'"),
    ({"concat_dims": ["var"]}, r'concat_dims: "var"'),
    ({"concat_dims": ["time"], "coo_dtypes": {"time": "M8[s]"}}, r"coo_dtypes\['time'\]"),
])
def test_what_cannot_be_honoured_is_refused_by_name(kwargs, message) -> None:
    with pytest.raises(NotImplementedError, match=message):
        MultiZarrToZarr(_singles(_paths("noleap")), **kwargs)


def test_a_url_without_a_protocol_under_another_remote_protocol_is_refused() -> None:
    singles = _singles(_paths("noleap"))
    with pytest.raises(NotImplementedError, match=r"path\[0\]: t/0.0 points at '/.*/noleap_0.nc', a URL without a protocol"):
        MultiZarrToZarr(singles, concat_dims=["time"], remote_protocol="s3").translate()


def test_relative_targets_of_given_dicts_are_read_from_the_working_folder(monkeypatch) -> None:
    """kerchunk keeps a target as given (`noleap_0.nc`), which fsspec reads from the working
    folder; ours names the same file, absolute."""
    monkeypatch.chdir(COMBINE)
    singles = [SingleHdf5ToZarr(Path(p).name, inline_threshold=0).translate() for p in _paths("noleap")]
    kwargs = {"concat_dims": ["time"], "coo_map": {"time": "cf:time"}, "inline_threshold": 0}
    ours = MultiZarrToZarr(json.loads(json.dumps(singles)), **kwargs).translate()
    theirs = kerchunk.combine.MultiZarrToZarr(json.loads(json.dumps(singles)), **kwargs).translate()
    assert sorted(ours["refs"]) == sorted(theirs["refs"])
    ranges = 0
    for key, value in theirs["refs"].items():
        if isinstance(value, list):
            ranges += 1
            assert ours["refs"][key] == [str(COMBINE / value[0]), *value[1:]], key
        else:
            assert reference_value(ours["refs"][key]) == reference_value(value), key
    assert ranges >= 6


def test_sets_in_every_form_a_document_takes_give_kerchunks_references() -> None:
    """Sets given with templates, with tuples for lists, with a `.zgroup` as an object or as
    version 0 are read as their JSON text is (the plain ones are read without it): what kerchunk
    gives for the plain sets."""
    singles = _singles(_paths("mixed_units"))
    assert len(singles) >= 3
    kwargs = {"concat_dims": ["time"], "coo_map": {"time": "cf:time"}}
    theirs = kerchunk.combine.MultiZarrToZarr(json.loads(json.dumps(singles)), **kwargs).translate()
    templated, tupled, objects = json.loads(json.dumps(singles[:3]))
    url = next(value[0] for value in templated["refs"].values() if isinstance(value, list))
    templated["templates"] = {"u": url}
    templated["refs"] = {key: ["{{u}}", *value[1:]] if isinstance(value, list) and value[0] == url else value
                         for key, value in templated["refs"].items()}
    tupled["refs"] = {key: tuple(value) if isinstance(value, list) else value for key, value in tupled["refs"].items()}
    objects["refs"][".zgroup"] = json.loads(objects["refs"][".zgroup"])
    given = [templated, tupled, objects] + [single["refs"] for single in json.loads(json.dumps(singles[3:]))]
    ours = MultiZarrToZarr(given, **kwargs).translate()
    assert _differing(ours, theirs) == set()


@pytest.mark.parametrize(
    ("malformed", "reason"),
    [
        (lambda reference: reference[:2], "[url, offset, length], not 2"),
        # Read as a range where a dict is read directly: refused all the same.
        (lambda reference: [reference[0], 2**64 - 1, 2], f"offset {2**64 - 1} + length 2 overflows"),
    ],
    ids=["two elements", "a range past 2^64"],
)
def test_a_malformed_reference_is_refused_naming_the_set_and_its_key(tmp_path, malformed, reason) -> None:
    """A chunk reference of two elements, or one whose range ends past 2^64 bytes, in a dict read
    directly, in one read as its JSON text (it has templates), and in a JSON file: refused naming
    the set and its own key (not the key combining would give it)."""
    singles = _singles(_paths("noleap"))
    key = next(key for key, value in singles[1]["refs"].items() if key.startswith("t/") and isinstance(value, list))
    singles[1]["refs"][key] = malformed(singles[1]["refs"][key])
    templated = [dict(single, templates={"unused": "file.nc"}) for single in singles]
    files = [tmp_path / f"{n}.json" for n in range(len(singles))]
    for file, single in zip(files, singles, strict=True):
        file.write_text(json.dumps(single))
    for given, name in ((singles, "path[1]"), (templated, "path[1]"), ([str(f) for f in files], str(files[1]))):
        with pytest.raises(errors.InvalidReferencesError) as raised:
            MultiZarrToZarr(given, concat_dims=["time"], coo_map={"time": "cf:time"}).translate()
        message = str(raised.value)
        assert name in message and f'key "{key}" has a malformed reference' in message, message
        assert reason in message, message
