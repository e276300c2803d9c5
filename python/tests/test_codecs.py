"""kerchunk's references to GRIB2 and TIFF files (tests/codecs, made by the make.py scripts there
with eccodes and GDAL) through the xarray engine and through zarr-python, decoded in Rust: the
values eccodes and rasterio give, bit for bit, with no eccodes or imagecodecs codec involved."""

from __future__ import annotations

import json

import numcodecs.registry
import numpy as np
import pytest
import xarray as xr
import zarr

from conftest import ROOT, differs
from zarrs_kerchunk import ReferenceStore, codecs, tools
from zarrs_kerchunk.errors import InvalidReferencesError
from zarrs_kerchunk.xarray_backend import ROOT_ARRAY_NAME

GRIB = ROOT / "tests" / "codecs" / "grib"
TIFF = ROOT / "tests" / "codecs" / "tiff"
FITS = ROOT / "tests" / "codecs" / "fits"
GRIB_CASES = sorted(p.name.removesuffix(".kerchunk.json") for p in GRIB.glob("*.kerchunk.json"))
TIFF_CASES = sorted(p.name.removesuffix(".kerchunk.json") for p in TIFF.glob("*.kerchunk.json"))


@pytest.fixture
def only_rust_codecs():
    """The stand-ins registered for every id they decode, kerchunk's and imagecodecs' set aside."""
    saved = dict(numcodecs.registry.codec_registry)
    codecs.register(replace=True)
    yield
    numcodecs.registry.codec_registry.clear()
    numcodecs.registry.codec_registry.update(saved)


def band_first(values: np.ndarray, dims: tuple[str, ...]) -> np.ndarray:
    """tifffile's layout (Y, X), (Y, X, S) or (S, Y, X) as rasterio's (band, y, x)."""
    if dims == ("Y", "X"):
        return values[None]
    if dims == ("Y", "X", "S"):
        return np.moveaxis(values, -1, 0)
    return values


# Lossy codecs, and how far two decoders of them may be apart (tests/codecs/tiff/README.md).
TOLERANCE = 4


def lossy(name: str) -> bool:
    """JPEG (GDAL's and tifffile's) and lossy WebP: within TOLERANCE of rasterio's values."""
    return name.startswith("jpeg_") or name == "webp_lossy"


@pytest.mark.parametrize("name", TIFF_CASES)
def test_a_tiff_opens_in_the_engine_as_one_variable(name: str) -> None:
    ds = xr.open_dataset(TIFF / f"{name}.kerchunk.json", engine="zarrs_kerchunk", mask_and_scale=False)
    assert list(ds.data_vars) == [ROOT_ARRAY_NAME]
    data = ds[ROOT_ARRAY_NAME]
    ours, truth = band_first(data.values, data.dims), np.load(TIFF / f"{name}.npy")
    if lossy(name):
        assert ours.shape == truth.shape and np.abs(ours.astype(int) - truth.astype(int)).max() <= TOLERANCE
    else:
        assert differs(ours, truth) is None
    if name.startswith("jpeg_"):
        # The package decodes JPEG with libjpeg-turbo, as imagecodecs does: its values exactly.
        assert differs(ours, np.load(TIFF / f"{name}.imagecodecs.npy")) is None


@pytest.mark.parametrize("name", GRIB_CASES)
def test_a_grib_message_reads_eccodes_values_in_the_engine(name: str) -> None:
    ds = xr.open_dataset(GRIB / f"{name}.kerchunk.json", engine="zarrs_kerchunk")
    assert differs(ds["t"].values, np.load(GRIB / f"{name}.npy")) is None


REAL_GRIB = json.loads((GRIB / "real" / "cases.json").read_text())
REAL_TIFF = json.loads((TIFF / "real" / "cases.json").read_text())


@pytest.mark.parametrize("case", sorted(REAL_GRIB))
def test_real_grib_messages_read_eccodes_values_in_the_engine(case: str) -> None:
    """cfgrib's sample files (tests/codecs/grib/real), each message as kerchunk references it."""
    ds = xr.open_dataset(GRIB / "real" / f"{case}.kerchunk.json", engine="zarrs_kerchunk", mask_and_scale=False)
    assert differs(ds[REAL_GRIB[case]].values, np.load(GRIB / "real" / f"{case}.npy")) is None


@pytest.mark.parametrize("name", sorted(REAL_TIFF))
def test_real_tiffs_read_rasterio_values_in_the_engine(name: str) -> None:
    """rasterio's sample files (tests/codecs/tiff/real), every level, at every row and 7th column:
    exactly, or for JPEG no further from GDAL than kerchunk's own path and equal to imagecodecs'."""
    for level, entry in enumerate(REAL_TIFF[name]):
        location = TIFF / "real" / f"{name}.kerchunk.json"
        store = ReferenceStore(str(location))
        array = zarr.open_array(store, mode="r", zarr_format=2, path=entry["path"])
        values = band_first(array[...], tuple(a.rstrip("0123456789") for a in entry["axes"]))
        ours, truth = values[:, :, ::7], np.load(TIFF / "real" / f"{name}.{level}.npy")
        if entry["tolerance"]:
            assert np.abs(ours.astype(int) - truth.astype(int)).max() <= entry["tolerance"], (name, level)
            # JPEG: libjpeg-turbo in the package, as in imagecodecs: its values exactly.
            assert differs(ours, np.load(TIFF / "real" / f"{name}.{level}.imagecodecs.npy")) is None, (name, level)
        else:
            assert differs(ours, truth) is None, (name, level)


def test_zip_members_read_in_the_engine() -> None:
    """kerchunk's references into a zip archive's DEFLATE members (tests/codecs/zip), whose
    `deflate` codec reads each member's local file header first."""
    folder = ROOT / "tests" / "codecs" / "zip"
    ds = xr.open_dataset(folder / "refs.kerchunk.json", engine="zarrs_kerchunk", mask_and_scale=False)
    values = np.load(folder / "values.npy")
    assert differs(ds["a"].values, values) is None
    assert differs(ds["b"].values, values[0]) is None


@pytest.mark.parametrize("name", ["uint16", "uint32", "scaled_i2"])
def test_a_fits_image_reads_the_fits_values_in_the_engine(name: str) -> None:
    """kerchunk's FITS references (BZERO, BSCALE), which zarr-python alone cannot read, give the
    FITS standard's values (tests/codecs/fits/README.md): exactly, or within one rounding where
    BSCALE divides as its inverse. kerchunk writes a fill value of 0, which xarray would mask."""
    ds = xr.open_dataset(FITS / f"{name}.kerchunk.json", engine="zarrs_kerchunk", mask_and_scale=False)
    ours, truth = ds["PRIMARY"].values, np.load(FITS / f"{name}.npy")
    assert ours.dtype == np.float64
    np.testing.assert_allclose(ours, truth, rtol=0 if name != "scaled_i2" else np.finfo("f8").eps, atol=0)


@pytest.mark.parametrize("case", [("tiff", "lzw_f32_pred3"), ("tiff", "lzw_rgb_pred2_pixel"), ("grib", "complex_sd2_bitmap")])
def test_zarr_python_decodes_through_the_stand_ins(case: tuple[str, str], only_rust_codecs: None) -> None:
    kind, name = case
    folder = GRIB if kind == "grib" else TIFF
    store = ReferenceStore(str(folder / f"{name}.kerchunk.json"))
    if kind == "grib":
        array = zarr.open_group(store, mode="r", zarr_format=2)["t"]
        assert type(array.metadata.filters[0]).__name__ == "RustCodec_grib"
        assert differs(array[:], np.load(folder / f"{name}.npy")) is None
    else:
        array = zarr.open_array(store, mode="r", zarr_format=2)
        assert type(array.metadata.compressor).__name__ == "RustCodec_imagecodecs_lzw"
        dims = tuple(array.attrs["_ARRAY_DIMENSIONS"])
        assert differs(band_first(array[:], dims), np.load(folder / f"{name}.npy")) is None


def stand_in(codec_id: str, **configuration: object) -> codecs.RustCodec:
    return type(f"RustCodec_{codec_id}", (codecs.RustCodec,), {"codec_id": codec_id})(**configuration)


def test_a_chunk_that_does_not_decode_names_the_codec() -> None:
    with pytest.raises(InvalidReferencesError, match="imagecodecs_lzw"):
        stand_in("imagecodecs_lzw").decode(b"\xff" * 64)
    grib = stand_in("grib", var="t", dtype="float64")
    with pytest.raises(InvalidReferencesError, match="not a GRIB2 message"):
        grib.decode(b"GRIB but not really")
    with pytest.raises(NotImplementedError):
        grib.encode(b"")


@pytest.mark.parametrize("case", ["hrrr_like", "gefs_like", "ecmwf_like"])
def test_scanned_grib_reads_eccodes_values(case: str, tmp_path, only_rust_codecs: None) -> None:
    """`tools.scan` on a GRIB2 file (tests/scan/grib): every message, found where its time, step,
    level and member put it in grib_tree's hierarchy, reads eccodes' values through zarr-python."""
    folder = ROOT / "tests" / "scan" / "grib"
    for name in [f"{case}.grib2", f"{case}.grib2.idx", f"{case}.index"]:
        if (folder / name).exists():  # the inventory beside the file, where the case has one
            (tmp_path / name).write_bytes((folder / name).read_bytes())
    report = tools.scan(tmp_path / f"{case}.grib2", tmp_path / f"{case}.json")
    assert report["skipped"] == []
    group = zarr.open_group(ReferenceStore(str(tmp_path / f"{case}.json")), mode="r", zarr_format=2)
    messages = json.loads((folder / f"{case}.messages.json").read_text())
    values = np.load(folder / f"{case}.values.npy")
    for message, expected in zip(messages, values):
        name, level = message["cfVarName"], message["typeOfLevel"]
        leaf = group[f"{name}/{message['stepType']}/{level}"]
        data = leaf[name]
        unit = {"hours": 3600, "minutes": 60, "seconds": 1}[leaf["step"].attrs["units"]]
        along = {
            "number": lambda: list(leaf["number"][...].ravel()).index(message["number"]),
            "time": lambda: list(leaf["time"][...]).index(message["time"]),
            "step": lambda: list(leaf["step"][...] * unit).index(message["step_seconds"]),
            level: lambda: list(leaf[level][...].ravel()).index(message["level"]),
        }
        index = tuple(along[dim]() for dim in data.attrs["_ARRAY_DIMENSIONS"][:-2])
        assert differs(data[index], expected) is None, (case, message["offset"])


@pytest.mark.parametrize("case", ["cog_utm", "cog_geographic_bigtiff", "point_big_endian", "laea_strips"])
def test_scanned_tiff_opens_as_rioxarray_reads_it(case: str, tmp_path, only_rust_codecs: None) -> None:
    """`tools.scan` on a GeoTIFF or COG (tests/scan/tiff) opens in xarray as a dataset: every
    level's ``band_data`` reads rasterio's values, its ``x`` and ``y`` are rioxarray's, and
    ``spatial_ref`` names rasterio's EPSG code (truth from tests/scan/tiff/make.py)."""
    folder = ROOT / "tests" / "scan" / "tiff"
    (tmp_path / f"{case}.tif").write_bytes((folder / f"{case}.tif").read_bytes())
    report = tools.scan(tmp_path / f"{case}.tif", tmp_path / f"{case}.json")
    assert report["skipped"] == []
    truth = json.loads((folder / "georef.json").read_text())[f"tests/scan/tiff/{case}.tif"]
    for level, expected in enumerate(truth["levels"]):
        group = f"overview_{level}" if level else None
        ds = xr.open_dataset(
            ReferenceStore(str(tmp_path / f"{case}.json")), engine="zarr", consolidated=False, zarr_format=2,
            group=group, mask_and_scale=False,
        )
        data = ds["band_data"].transpose("band", "y", "x")
        values = np.load(folder / f"{case}.{level}.npy")
        assert differs(data.values[:, ::7, ::7], values) is None, (case, level)
        for axis in ("x", "y"):
            assert np.allclose(ds[axis].values[::7], expected[axis]["every7"], rtol=1e-12), (case, level, axis)
        assert list(ds["band"].values) == list(range(1, truth["bands"] + 1))
        code = ds["spatial_ref"].attrs.get("proj:code")
        assert code == (f"EPSG:{truth['epsg']}" if truth["epsg"] else None), (case, code)
        assert ds["band_data"].attrs["grid_mapping"] == "spatial_ref"
        assert "spatial_ref" in ds.coords  # as rioxarray has it


def test_a_scanned_grib_tree_opens_as_a_datatree(tmp_path, only_rust_codecs: None) -> None:
    """``xr.open_datatree(engine="zarrs_kerchunk")`` opens every group of a scanned GRIB file
    (grib_tree's hierarchy), each leaf as ``open_dataset`` opens it."""
    folder = ROOT / "tests" / "scan" / "grib"
    (tmp_path / "hrrr_like.grib2").write_bytes((folder / "hrrr_like.grib2").read_bytes())
    tools.scan(tmp_path / "hrrr_like.grib2", tmp_path / "refs.json")
    tree = xr.open_datatree(tmp_path / "refs.json", engine="zarrs_kerchunk")
    messages = json.loads((folder / "hrrr_like.messages.json").read_text())
    leaves = {f"/{m['cfVarName']}/{m['stepType']}/{m['typeOfLevel']}" for m in messages}
    assert leaves <= set(tree.groups)
    for leaf in leaves:
        alone = xr.open_dataset(tmp_path / "refs.json", engine="zarrs_kerchunk", group=leaf)
        xr.testing.assert_identical(tree[leaf].to_dataset(inherit=False), alone)


def test_zarr_python_finds_a_zarr_3_codec_for_every_id_decoded_in_rust() -> None:
    """Zarr 3 metadata names these ids `numcodecs.<id>` (VirtualiZarr's manifests of GRIB and
    TIFF files): zarr-python wraps some itself; the package's entry points give the others."""
    from zarr.registry import get_codec_class

    from zarrs_kerchunk.zarr_codecs import PREFIX, RustBytesCodec

    ours = []
    for codec_id in codecs.DECODED_IDS:
        found = get_codec_class(PREFIX + codec_id)
        if issubclass(found, RustBytesCodec):
            assert found.codec_id == codec_id
            ours.append(codec_id)
        else:
            assert found.__module__.startswith("zarr."), (codec_id, found)
    assert "grib" in ours and "imagecodecs_lzw" in ours
