"""`open_virtual_mfdataset` over each multi-file series of the combine corpus (tests/scan/combine)
with our `HDFParser` and with VirtualiZarr's (issue 57): VirtualiZarr's own combining, given each
parser's manifests, makes the same virtual dataset.

- without inlining (`inline_threshold=0`), both written by `.vz.to_kerchunk()` are the same: the
  same keys, metadata equal as parsed JSON, ranges equal; where VirtualiZarr's combining refuses a
  series (uneven chunks, dtypes that differ), it refuses it with either parser, with the same error;
- with our default (kerchunk's: chunks under 500 bytes inline), each inlined chunk is the file's
  bytes at the range VirtualiZarr's parser gives it, and every other reference is the same."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from virtualizarr import open_virtual_mfdataset
from virtualizarr.parsers import HDFParser as TheirHDFParser

from corpus import local_registry, reference_value
from zarrs_kerchunk.virtualizarr import HDFParser as OurHDFParser

COMBINE = Path(__file__).resolve().parents[3] / "tests" / "scan" / "combine"
FILE = re.compile(r"(.+)_(\d+|m\d+(_\d+)?)\.nc$")


def _series() -> dict[str, list[Path]]:
    """The corpus's series of more than one file, by name (`noleap_0.nc`, `noleap_1.nc`...)."""
    series: dict[str, list[Path]] = {}
    for path in sorted(COMBINE.glob("*.nc")):
        if match := FILE.fullmatch(path.name):
            series.setdefault(match.group(1), []).append(path)
    return {name: paths for name, paths in series.items() if len(paths) > 1}


SERIES = _series()


def _combined(series: str, parser) -> dict | str:
    """The series combined along time by VirtualiZarr, as kerchunk references; or its error."""
    try:
        vds = open_virtual_mfdataset([p.as_uri() for p in SERIES[series]], registry=local_registry(), parser=parser,
                                     concat_dim="time", combine="nested", loadable_variables=[], coords="minimal",
                                     compat="override", data_vars="minimal")
    except ValueError as error:
        return f"{type(error).__name__}: {error}"
    return {key: reference_value(value) for key, value in vds.vz.to_kerchunk(format="dict")["refs"].items()}


def test_the_corpus_has_series_of_each_kind() -> None:
    assert {"noleap", "units_by_day", "mixed_units", "shorter_last", "bounds", "packed", "ens_m2", "refsets"} <= set(SERIES)


@pytest.mark.parametrize("series", sorted(SERIES))
def test_virtualizarr_combines_our_manifests_as_its_own(series) -> None:
    theirs = _combined(series, TheirHDFParser())
    assert _combined(series, OurHDFParser(inline_threshold=0)) == theirs
    inlined = _combined(series, OurHDFParser())
    if isinstance(theirs, str):
        assert inlined == theirs
        return
    assert sorted(inlined) == sorted(theirs)
    for key, value in theirs.items():
        if inlined[key][0] == "bytes" and value[0] == "range":
            url, offset, length = value[1]
            data = Path(url.removeprefix("file://")).read_bytes()[offset:offset + length]
            assert inlined[key][1] == data, key
        else:
            assert inlined[key] == value, key
