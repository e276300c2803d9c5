"""Our scanners as VirtualiZarr parsers (issue 57, first part): `zarrs_kerchunk.virtualizarr`'s
`HDFParser` and `NetCDF3Parser`, called as VirtualiZarr calls its own, against VirtualiZarr 2.8's
own parsers on the same files and against the files' own library.

- for every NetCDF-4/HDF5 and NetCDF-3 case of the conformance corpus, the `ManifestStore` opens in
  xarray (Zarr 3) to a dataset identical to the one VirtualiZarr's own parser gives (values,
  coordinates, attributes), and each array equals the case's `.npy` (netCDF4's or h5py's values);
- `open_virtual_dataset` takes the parser, and `.vz.to_kerchunk()` writes references kerchunk's
  reader (fsspec) reads back to the same values;
- `inline_threshold` holds small chunks inline, which read the same; an array of inline and
  referenced chunks reads the file's values, each chunk inline or not as h5py's chunk sizes say;
- `group` and `drop_variables` work as VirtualiZarr's, and an unknown group is refused by name.

Runs in the Python 3.12 environment of `tests/icechunk/run.sh` (VirtualiZarr needs 3.12)."""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import pytest
import xarray as xr
from virtualizarr import open_virtual_dataset
from virtualizarr import parsers as theirs

from corpus import DATA, expected_arrays, local_registry, opened
from zarrs_kerchunk import virtualizarr as ours

HDF5_CASES = ["nc4_deflate_shuffle", "nc4_fill_missing", "nc4_scalar_coords_bigendian", "cf_air", "hdf5_contiguous"]
NETCDF3_CASES = ["netcdf3_classic"]

warnings.filterwarnings("ignore", category=UserWarning)

# netCDF's default fill values (netcdf.h's NC_FILL_*), from netCDF4 itself.
_NETCDF_FILL = __import__("netCDF4").default_fillvals


def _file(case: str) -> Path:
    found = [p for p in (DATA / case).iterdir() if p.suffix in (".nc", ".h5")]
    assert len(found) == 1, f"{case}: expected one data file, found {found}"
    return found[0]








@pytest.mark.parametrize(("case", "ours_parser", "their_parser"),
                         [(c, ours.HDFParser, theirs.HDFParser) for c in HDF5_CASES]
                         + [(c, ours.NetCDF3Parser, theirs.NetCDF3Parser) for c in NETCDF3_CASES])
def test_the_store_opens_to_what_virtualizarrs_own_parser_gives(case, ours_parser, their_parser) -> None:
    url = _file(case).as_uri()
    registry = local_registry()
    mine = ours_parser()(url=url, registry=registry)
    if case == "hdf5_contiguous":
        # Per-array phony dimensions of different lengths: xarray cannot make one dataset of
        # them, from either parser; the arrays are compared below.
        pass
    else:
        xr.testing.assert_identical(opened(mine), opened(their_parser()(url=url, registry=registry)))
    import zarr

    group = zarr.open_group(mine, mode="r", zarr_format=3)
    for path, values in expected_arrays(case).items():
        np.testing.assert_array_equal(group[path][...], values, err_msg=f"{case}/{path}")


def test_open_virtual_dataset_takes_the_parser_and_to_kerchunk_reads_back(tmp_path) -> None:
    path = _file("nc4_deflate_shuffle")
    written = {}
    for name, parser in [("ours", ours.HDFParser()), ("theirs", theirs.HDFParser())]:
        vds = open_virtual_dataset(path.as_uri(), registry=local_registry(), parser=parser, loadable_variables=[])
        refs = tmp_path / f"{name}.json"
        vds.vz.to_kerchunk(str(refs), format="json")
        with xr.open_dataset(str(refs), engine="kerchunk") as read:
            written[name] = read.load()
    # VirtualiZarr's Zarr 2 references carry the fill value, which xarray takes for `_FillValue`,
    # so values equal to it come back masked whichever parser made them (a VirtualiZarr writer's
    # limit: netCDF4 masks nothing here). The fill must be netCDF's default, as VirtualiZarr's
    # HDF parser takes it, so only values equal to that are masked, never a 0.
    xr.testing.assert_identical(written["ours"], written["theirs"])
    with xr.open_dataset(path, engine="netcdf4") as truth:
        truth = truth.load()
    for name, variable in written["ours"].data_vars.items():
        expected = truth[name].values
        default = np.array(_NETCDF_FILL[expected.dtype.str[1:]], dtype=expected.dtype)
        masked = np.isnan(variable.values)
        np.testing.assert_array_equal(masked, expected == default, err_msg=f"{name}: masked where not the fill")
        np.testing.assert_array_equal(variable.values[~masked], expected[~masked], err_msg=name)


def test_files_concatenate_along_an_unlimited_dimension_as_with_virtualizarrs_parser(tmp_path) -> None:
    # HDF5 chunks a coordinate along an unlimited dimension by 512 whatever its length; trimmed as
    # VirtualiZarr's parser trims them, two files concatenate on a regular grid.
    import netCDF4
    from virtualizarr import open_virtual_mfdataset

    paths = []
    for n in range(2):
        path = tmp_path / f"f{n}.nc"
        with netCDF4.Dataset(path, "w", format="NETCDF4") as ds:
            ds.createDimension("time", None)
            ds.createDimension("x", 3)
            time = ds.createVariable("time", "f8", ("time",))
            time.units = "hours since 2000-01-01"
            time[:] = np.arange(5) + 5 * n
            ds.createVariable("v", "f4", ("time", "x"))[:] = np.arange(15, dtype="f4").reshape(5, 3) + 100 * n
        paths.append(path)
    datasets = {}
    for name, parser in [("ours", ours.HDFParser), ("theirs", theirs.HDFParser)]:
        vds = open_virtual_mfdataset([p.as_uri() for p in paths], registry=local_registry(), parser=parser(),
                                     concat_dim="time", combine="nested", loadable_variables=[])
        datasets[name] = vds
    assert datasets["ours"]["time"].data.metadata.chunks == datasets["theirs"]["time"].data.metadata.chunks == (5,)
    refs = tmp_path / "ours.json"
    datasets["ours"].vz.to_kerchunk(str(refs), format="json")
    truth = xr.concat([xr.open_dataset(p, engine="netcdf4").load() for p in paths], dim="time")
    with xr.open_dataset(str(refs), engine="kerchunk") as read:
        np.testing.assert_array_equal(read["time"].values, truth["time"].values)
        np.testing.assert_array_equal(read["v"].values, truth["v"].values)


def test_inlined_chunks_read_the_same() -> None:
    url = _file("nc4_deflate_shuffle").as_uri()
    inlined = ours.HDFParser(inline_threshold=1 << 20)(url=url, registry=local_registry())
    plain = ours.HDFParser()(url=url, registry=local_registry())
    xr.testing.assert_identical(opened(inlined), opened(plain))


def test_an_array_of_inline_and_referenced_chunks_reads_the_files_values(tmp_path) -> None:
    # Rows of zeros compress under the threshold, rows of noise over it: one array's manifest
    # holds both kinds, each chunk where the file's own chunk index puts it.
    import h5py

    from virtualizarr.manifests.manifest import INLINED_CHUNK_PATH

    path = tmp_path / "mixed.h5"
    values = np.zeros((4, 100), dtype="<i4")
    values[1::2] = np.random.default_rng(57).integers(0, 2**31 - 1, (2, 100))
    with h5py.File(path, "w") as f:
        f.create_dataset("v", data=values, chunks=(1, 100), compression="gzip")
    threshold = 100
    with h5py.File(path) as f:
        dataset = f["v"]
        sizes = {dataset.id.get_chunk_info(i).chunk_offset[0]: dataset.id.get_chunk_info(i).size for i in range(4)}
    assert sorted(row for row, size in sizes.items() if size < threshold) == [0, 2], sizes

    url = path.as_uri()
    store = ours.HDFParser(inline_threshold=threshold)(url=url, registry=local_registry())
    manifest = store._group.arrays["v"].manifest
    # Each chunk's path as the manifest holds it (`dict()` reports inline chunks by their bytes).
    assert [manifest.get_entry((row, 0))["path"] for row in range(4)] == [
        INLINED_CHUNK_PATH if sizes[row] < threshold else url for row in range(4)
    ]
    assert {key: entry["length"] for key, entry in manifest.dict().items()} == {f"{row}.0": sizes[row] for row in range(4)}
    read = opened(store)
    np.testing.assert_array_equal(read["v"].values, values)
    xr.testing.assert_identical(read, opened(theirs.HDFParser()(url=url, registry=local_registry())))


def test_group_and_drop_variables() -> None:
    url = _file("hdf5_nested_groups").as_uri()
    registry = local_registry()
    for group in ["a", "a/b"]:
        xr.testing.assert_identical(opened(ours.HDFParser(group=group)(url=url, registry=registry)),
                                    opened(theirs.HDFParser(group=group)(url=url, registry=registry)))
    with pytest.raises(ValueError, match="group 'nope' is not in the file"):
        ours.HDFParser(group="nope")(url=url, registry=registry)
    url = _file("nc4_fill_missing").as_uri()
    dropped = opened(ours.HDFParser(drop_variables=["sparse"])(url=url, registry=registry))
    assert "sparse" not in dropped and "packed" in dropped


def test_a_grid_too_large_for_a_manifest_is_refused_by_name(tmp_path) -> None:
    # A file may declare any grid; the manifest's columns are dense over it.
    import h5py

    from zarrs_kerchunk.errors import InvalidReferencesError

    path = tmp_path / "huge.h5"
    with h5py.File(path, "w") as f:
        f.create_dataset("huge", shape=(10**9,), chunks=(1,), dtype="u1")
    with pytest.raises(InvalidReferencesError, match="huge/.zarray: a grid of 1000000000 chunks, more than the 10000000"):
        ours.HDFParser()(url=path.as_uri(), registry=local_registry())


def test_arrays_built_from_shared_metadata_keep_their_own_attributes() -> None:
    # The parser reuses the metadata a series' files repeat; each array must own its attributes.
    url = _file("nc4_deflate_shuffle").as_uri()
    first = ours.HDFParser()(url=url, registry=local_registry())._group.arrays["temp"]
    second = ours.HDFParser()(url=url, registry=local_registry())._group.arrays["temp"]
    first.metadata.attributes["changed"] = "here"
    assert "changed" not in second.metadata.attributes
    assert first.metadata.shape == second.metadata.shape and first.metadata.codecs == second.metadata.codecs
