"""Reference sets as VirtualiZarr parsers (issue 57): `zarrs_kerchunk.virtualizarr`'s
`KerchunkJSONParser` and `KerchunkParquetParser`, read in Rust, against VirtualiZarr 2.8's own on
the conformance corpus (tests/data: reference sets made by kerchunk, with each array's values as
the file's own library reads them).

- every JSON set (version 0 and 1) and every parquet root of the corpus opens in xarray (Zarr 3) to
  the dataset VirtualiZarr's own parser gives, given the same `fs_root`, and every array equals the
  case's `.npy`;
- sets VirtualiZarr's parsers cannot read (zstd-compressed JSON, templates) read to the `.npy`;
- without `fs_root`, relative URLs resolve against the set's folder (VirtualiZarr refuses them);
- `group` and `skip_variables` act as VirtualiZarr's; whole-file references, Zarr v3 sets and
  fsspec's `reader_options` are refused by name."""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import numpy as np
import pytest
import xarray as xr
import zarr
from virtualizarr import open_virtual_dataset
from virtualizarr import parsers as theirs

from corpus import DATA, expected_arrays, local_registry, opened
from zarrs_kerchunk import errors
from zarrs_kerchunk import virtualizarr as ours


warnings.filterwarnings("ignore", category=UserWarning)


def _sets(suffixes: tuple[str, ...]) -> list[tuple[str, str]]:
    """(case, reference file) for each reference file of the corpus ending in one of `suffixes`."""
    found = []
    for case in sorted(p for p in DATA.iterdir() if (p / "case.json").exists()):
        for refs in sorted(case.iterdir()):
            if refs.name.startswith("refs") and refs.name.endswith(suffixes):
                found.append((case.name, refs.name))
    return found


JSON_SETS = _sets((".json",))
PARQUET_SETS = _sets((".parq",))








def _check_values(store, case: str) -> None:
    group = zarr.open_group(store, mode="r", zarr_format=3)
    expected = expected_arrays(case)
    assert expected, case
    for path, values in expected.items():
        np.testing.assert_array_equal(group[path][...], values, err_msg=f"{case}/{path}")


# What VirtualiZarr 2.8's kerchunk parsers cannot read in the corpus (besides version 0 documents,
# which have no `refs`), and why; each fails loudly there.
VIRTUALIZARR_CANNOT = {
    ("nc4_deflate_shuffle", "refs.v1.json"): "templates ({{root}}), taken as part of the path",
    ("v1_templates_gen", "refs.v1.json"): "templates and generated keys",
    ("v1_templates_gen", "refs.expanded.json"): "metadata held as JSON objects rather than text",
    ("exotic_dtypes", "refs.json"): "a complex fill value, written [real, imaginary]",
    ("parquet_writers", "refs.pyarrow.parq"): "pyarrow's null `raw` column, read as NaN",
}

# Sets whose arrays make no one xarray dataset, from either parser (phony dimensions of different
# lengths, types xarray does not decode): their arrays are compared with the file's values only.
NO_DATASET = {"hdf5_contiguous", "exotic_dtypes", "inline_mixed", "zstd_json_v1"}


def _theirs_opened(parser, url: str, case: str) -> xr.Dataset | dict[str, np.ndarray] | Exception:
    """VirtualiZarr's parser's store opened in xarray (or, for NO_DATASET, its arrays read by
    zarr), or what it raised."""
    try:
        store = parser(url=url, registry=local_registry())
        return _arrays(store) if case in NO_DATASET else opened(store)
    except Exception as error:  # checked against VIRTUALIZARR_CANNOT by the caller
        return error


def _arrays(store) -> dict[str, np.ndarray]:
    group = zarr.open_group(store, mode="r", zarr_format=3)
    return {name: array[...] for name, array in group.arrays()}


def _compare_with_theirs(mine, case: str, refs: str, parser) -> None:
    url = str(DATA / case / refs)
    theirs_opened = _theirs_opened(parser, url if refs.endswith(".parq") else Path(url).as_uri(), case)
    version_0 = refs.endswith(".json") and "refs" not in json.loads((DATA / case / refs).read_text())
    if version_0 or (case, refs) in VIRTUALIZARR_CANNOT:
        assert isinstance(theirs_opened, Exception), f"{case}/{refs}: VirtualiZarr reads it now"
        return
    assert not isinstance(theirs_opened, Exception), f"{case}/{refs}: {theirs_opened!r}"
    if case not in NO_DATASET:
        xr.testing.assert_identical(opened(mine), theirs_opened)
        return
    mine_arrays = _arrays(mine)
    assert sorted(mine_arrays) == sorted(theirs_opened)
    for name, values in theirs_opened.items():
        np.testing.assert_array_equal(mine_arrays[name], values, err_msg=f"{case}/{refs}: {name}")


@pytest.mark.parametrize(("case", "refs"), JSON_SETS)
def test_json_sets_open_to_what_virtualizarrs_parser_gives(case, refs) -> None:
    url = (DATA / case / refs).as_uri()
    root = str(DATA / case)
    mine = ours.KerchunkJSONParser(fs_root=root)(url=url, registry=local_registry())
    _check_values(mine, case)
    _compare_with_theirs(mine, case, refs, theirs.KerchunkJSONParser(fs_root=root))


@pytest.mark.parametrize(("case", "refs"), PARQUET_SETS)
def test_parquet_roots_open_to_what_virtualizarrs_parser_gives(case, refs) -> None:
    url = str(DATA / case / refs)
    root = str(DATA / case)
    mine = ours.KerchunkParquetParser(fs_root=root)(url=url, registry=local_registry())
    _check_values(mine, case)
    _compare_with_theirs(mine, case, refs, theirs.KerchunkParquetParser(fs_root=root))


def test_compressed_json_reads_to_the_files_values() -> None:
    mine = ours.KerchunkJSONParser()(url=str(DATA / "zstd_json_v1" / "refs.json.zst"), registry=local_registry())
    _check_values(mine, "zstd_json_v1")


def test_relative_urls_resolve_against_the_sets_folder() -> None:
    url = (DATA / "cf_air" / "refs.json").as_uri()
    mine = ours.KerchunkJSONParser()(url=url, registry=local_registry())
    with_root = ours.KerchunkJSONParser(fs_root=str(DATA / "cf_air"))(url=url, registry=local_registry())
    xr.testing.assert_identical(opened(mine), opened(with_root))
    with pytest.raises(ValueError, match="fs_root was not specified"):
        theirs.KerchunkJSONParser()(url=url, registry=local_registry())


def test_open_virtual_dataset_takes_the_parser_and_to_kerchunk_reads_back(tmp_path) -> None:
    url = (DATA / "nc4_deflate_shuffle" / "refs.json").as_uri()
    vds = open_virtual_dataset(url, registry=local_registry(), parser=ours.KerchunkJSONParser(), loadable_variables=[])
    written = tmp_path / "again.json"
    vds.vz.to_kerchunk(str(written), format="json")
    # Read back by kerchunk's reader (fsspec), against the file's own values. Unmasked: `to_kerchunk`
    # writes each array's Zarr 3 fill value as its `fill_value`, which xarray takes as `_FillValue`
    # (the README: an integer array without one gets 0, and `count` holds zeros).
    with xr.open_dataset(str(written), engine="kerchunk", mask_and_scale=False) as again:
        for path, values in expected_arrays("nc4_deflate_shuffle").items():
            np.testing.assert_array_equal(again[path].values, values, err_msg=path)


def test_group_and_skip_variables() -> None:
    url = (DATA / "hdf5_nested_groups" / "refs.json").as_uri()
    root = str(DATA / "hdf5_nested_groups")
    groups = json.loads((DATA / "hdf5_nested_groups" / "case.json").read_text())["store_listing"]["groups"]
    inner = next(g for g in groups if g)
    for parser in (ours.KerchunkJSONParser, theirs.KerchunkJSONParser):
        store = parser(group=inner, fs_root=root)(url=url, registry=local_registry())
        names = sorted(zarr.open_group(store, mode="r", zarr_format=3).array_keys())
        assert names, inner
        skipped = parser(group=inner, fs_root=root, skip_variables=names[:1])(url=url, registry=local_registry())
        assert sorted(zarr.open_group(skipped, mode="r", zarr_format=3).array_keys()) == names[1:]
    with pytest.raises(ValueError, match=r"group '/nowhere' is not in the file; its groups are \["):
        ours.KerchunkJSONParser(group="/nowhere")(url=url, registry=local_registry())


def test_what_a_manifest_cannot_hold_is_refused_by_name(tmp_path) -> None:
    (tmp_path / "data.bin").write_bytes(np.arange(4, dtype="<i4").tobytes())
    zarray = {"shape": [4], "chunks": [4], "dtype": "<i4", "fill_value": None, "compressor": None, "filters": None,
              "order": "C", "zarr_format": 2}
    refs = {".zgroup": '{"zarr_format":2}', "a/.zarray": json.dumps(zarray), "a/0": [str(tmp_path / "data.bin")]}
    whole = tmp_path / "whole.json"
    whole.write_text(json.dumps({"version": 1, "refs": refs}))
    with pytest.raises(errors.InvalidReferencesError, match=r"a/0: a whole-file reference, which VirtualiZarr"):
        ours.KerchunkJSONParser()(url=str(whole), registry=local_registry())
    v3 = tmp_path / "v3.json"
    v3.write_text(json.dumps({"version": 1, "refs": {"zarr.json": '{"zarr_format":3,"node_type":"group"}'}}))
    with pytest.raises(errors.InvalidReferencesError, match=r"Zarr v3 references \(zarr.json\) are not read here"):
        ours.KerchunkJSONParser()(url=str(v3), registry=local_registry())
    with pytest.raises(NotImplementedError, match="reader_options: fsspec's options do not reach object_store"):
        ours.KerchunkParquetParser(reader_options={"anon": True})
