"""kerchunk's `tiff_to_zarr` over our TIFF scanner (issue 57): `zarrs_kerchunk.kerchunk.tiff` against
kerchunk 0.2.10's own (over tifffile 2026.11.8) on every TIFF of the test corpora.

- the signatures are kerchunk's (`tiff_to_zarr` and `TiffToZarr`);
- for each TIFF and COG of tests/codecs/tiff and tests/scan/tiff, at inline thresholds 0 and 1000,
  the same keys, metadata equal as parsed JSON, inline values equal as bytes, ranges equal; but for
  the differences the README lists, each checked against the file's own reading:
  - GDAL's items are unescaped as GDAL reads them (kerchunk keeps `&amp;`);
  - a band item whose bands differ is one value per band (kerchunk keeps the last band's);
  - the model tags of a file without GeoKeys are kept (tifffile reads none there);
  - a GDAL_NODATA tifffile cannot read as the data's type is the fill value as GDAL reads it
    (rasterio's nodata, tests/scan/tiff/georef.json), where kerchunk has 0;
- `target=` writes the references; an image tifffile might stack with the first, and
  `target_options`, are refused by name."""

from __future__ import annotations

import inspect
import json
from pathlib import Path
from xml.sax.saxutils import unescape

import kerchunk.tiff
import numpy as np
import pytest
import tifffile

from corpus import reference_value
from zarrs_kerchunk.kerchunk.tiff import TiffToZarr, tiff_to_zarr

ROOT = Path(__file__).resolve().parents[3]
TIFFS = sorted(str(p.relative_to(ROOT)) for folder in ("tests/codecs/tiff", "tests/scan/tiff")
               for p in (ROOT / folder).rglob("*.tif"))
GEOREF = json.loads((ROOT / "tests/scan/tiff/georef.json").read_text())
# The model tags, which tifffile reads only as part of GeoTIFF metadata (with the GeoKeys).
MODEL_TAGS = {"ModelPixelScale", "ModelTiepoint", "ModelTransformation"}


def test_the_signatures_are_kerchunks() -> None:
    for ours, theirs in [(tiff_to_zarr, kerchunk.tiff.tiff_to_zarr),
                         (TiffToZarr.__init__, kerchunk.tiff.TiffToZarr.__init__)]:
        mine = inspect.signature(ours).parameters.values()
        kerchunks = inspect.signature(theirs).parameters.values()
        assert [(p.name, p.default, p.kind) for p in mine] == [(p.name, p.default, p.kind) for p in kerchunks]


def _value(value):
    """kerchunk's inline chunks are bytes (``do_inline``), ``base64:`` where not ASCII."""
    if isinstance(value, bytes):
        return reference_value(value.decode("ascii"))
    return reference_value(value)


def _root_attributes_agree(ours: dict, theirs: dict) -> None:
    for name, value in theirs.items():
        mine = ours.pop(name)
        if isinstance(mine, list) and isinstance(value, str):
            # A band item: kerchunk's is the last band's.
            mine = mine[-1]
        if isinstance(value, str):
            # GDAL escapes an item's value before its XML writer does; kerchunk unescapes once.
            value = unescape(value)
        assert mine == value, name
    if ours:
        assert "KeyDirectoryVersion" not in theirs and set(ours) <= MODEL_TAGS, ours


@pytest.mark.parametrize("inline_threshold", [0, 1000])
@pytest.mark.parametrize("tiff", TIFFS)
def test_tiff_to_zarr_gives_kerchunks_references(tiff, inline_threshold) -> None:
    path = str(ROOT / tiff)
    ours = tiff_to_zarr(path, inline_threshold=inline_threshold)
    theirs = kerchunk.tiff.tiff_to_zarr(path, inline_threshold=inline_threshold)
    assert "version" not in ours
    assert sorted(ours) == sorted(theirs)
    inlined = 0
    for key in theirs:
        mine, kerchunks = _value(ours[key]), _value(theirs[key])
        inlined += kerchunks[0] == "bytes"
        if key.endswith(".zattrs"):
            assert mine[1].pop("multiscales", None) == kerchunks[1].pop("multiscales", None)
            _root_attributes_agree(mine[1], kerchunks[1])
        elif key.endswith(".zarray") and mine[1]["fill_value"] != kerchunks[1]["fill_value"]:
            nodata = GEOREF[tiff]["nodata"]
            assert kerchunks[1].pop("fill_value") == 0 and mine[1].pop("fill_value") == nodata
            assert mine == kerchunks
        else:
            assert mine == kerchunks, key
    if inline_threshold:
        assert inlined or all(v[2] >= inline_threshold for v in theirs.values() if isinstance(v, list))


def test_what_kerchunk_leaves_differently_is_what_the_readme_lists() -> None:
    """The differences the test above allows are exercised: each happens somewhere in the corpus."""
    described = tiff_to_zarr(str(ROOT / "tests/scan/tiff/described_bands.tif"))
    attributes = json.loads(described[".zattrs"])
    assert attributes["PRODUCT"] == "demo & test"
    assert attributes["DESCRIPTION"] == GEOREF["tests/scan/tiff/described_bands.tif"]["descriptions"]
    rotated = json.loads(tiff_to_zarr(str(ROOT / "tests/codecs/tiff/real/rotated.tif"))[".zattrs"])
    assert "ModelTransformation" in rotated and "KeyDirectoryVersion" not in rotated
    nodata = json.loads(tiff_to_zarr(str(ROOT / "tests/codecs/tiff/real/float_raster_with_nodata.tif"))[".zarray"])
    assert nodata["fill_value"] == GEOREF["tests/codecs/tiff/real/float_raster_with_nodata.tif"]["nodata"]


def test_pyramids_are_tifffiles_multiscales() -> None:
    for name in ("tests/scan/tiff/cog_utm.tif", "tests/codecs/tiff/real/cogeo.tif"):
        ours = json.loads(tiff_to_zarr(str(ROOT / name))[".zattrs"])["multiscales"]
        theirs = json.loads(kerchunk.tiff.tiff_to_zarr(str(ROOT / name))[".zattrs"])["multiscales"]
        assert len(ours[0]["datasets"]) > 1
        assert ours == theirs


def _pyramid(path: Path, factors: list[int], geokeys: bool) -> None:
    """A tiled uint16 image and its overviews (reduced images, NewSubfileType 1), written by
    tifffile; with ``geokeys``, georeferenced in feet by a tiepoint at pixel (2, 3)."""
    image = np.arange(96 * 72, dtype="u2").reshape(96, 72)
    tags = []
    if geokeys:
        # GTModelType projected, GTRasterType area, ProjectedCSType 32633, ProjLinearUnits foot.
        keys = [1, 1, 0, 4, 1024, 0, 1, 1, 1025, 0, 1, 1, 3072, 0, 1, 32633, 3076, 0, 1, 9002]
        tags = [(33550, "d", 3, (30.0, 20.0, 0.0), True), (33922, "d", 6, (2.0, 3.0, 0.0, 5e5, 4.5e6, 0.0), True),
                (34735, "H", len(keys), keys, True)]
    with tifffile.TiffWriter(path) as tiff:
        tiff.write(image, tile=(16, 16), metadata=None, extratags=tags)
        step = 1
        for factor in factors:
            step *= factor
            tiff.write(image[::step, ::step], tile=(16, 16), subfiletype=1, metadata=None)


def test_a_georeferenced_pyramids_multiscales_are_tifffiles(tmp_path) -> None:
    path = tmp_path / "feet.tif"
    _pyramid(path, [2, 2], geokeys=True)
    ours = json.loads(tiff_to_zarr(str(path))[".zattrs"])
    theirs = json.loads(kerchunk.tiff.tiff_to_zarr(str(path))[".zattrs"])
    assert ours["multiscales"] == theirs["multiscales"]
    assert ours["multiscales"][0]["axes"][0]["unit"] == "foot"
    # The corner of the first pixel, 2 columns left of and 3 rows above the tiepoint's.
    assert ours["multiscales"][0]["datasets"][0]["coordinateTransformations"][1]["translation"] == [4.5e6 + 60, 5e5 - 60]


def test_a_pyramid_without_geokeys_is_scaled_by_its_sizes(tmp_path) -> None:
    """tifffile gives every level the first's scale (its pixels' coordinates); ours are each
    level's size relative to the first, as OME-NGFF means them (README)."""
    path = tmp_path / "plain.tif"
    _pyramid(path, [2, 2], geokeys=False)
    ours = tiff_to_zarr(str(path))
    theirs = kerchunk.tiff.tiff_to_zarr(str(path))
    sizes = [json.loads(theirs[f"{n}/.zarray"])["shape"] for n in range(3)]
    scales = [d["coordinateTransformations"][0]["scale"] for d in json.loads(ours[".zattrs"])["multiscales"][0]["datasets"]]
    by_size = [[a / b for a, b in zip(sizes[0], size, strict=True)] for size in sizes]
    assert scales == by_size == [[1.0, 1.0], [2.0, 2.0], [4.0, 4.0]]
    theirs_scales = [d["coordinateTransformations"][0]["scale"]
                     for d in json.loads(theirs[".zattrs"])["multiscales"][0]["datasets"]]
    assert theirs_scales == [[1.0, 1.0]] * 3
    for key in theirs:
        if key != ".zattrs":
            assert reference_value(ours[key]) == reference_value(theirs[key]), key


def test_overviews_tifffile_would_not_stack_are_refused(tmp_path) -> None:
    path = tmp_path / "uneven.tif"
    _pyramid(path, [2, 3], geokeys=True)
    with pytest.raises(ValueError, match=r"overview 2 \(\[16, 12\]\) is not one step below \[48, 36\]"):
        tiff_to_zarr(str(path))


def test_target_is_written_and_the_class_translates(tmp_path) -> None:
    path = str(ROOT / "tests/scan/tiff/cog_utm.tif")
    target = tmp_path / "refs.json"
    returned = tiff_to_zarr(path, target=str(target))
    assert json.loads(target.read_text()) == returned
    assert TiffToZarr(path).translate() == tiff_to_zarr(path, inline_threshold=100)
    with pytest.raises(NotImplementedError, match="target_options"):
        tiff_to_zarr(path, target=str(target), target_options={"auto_mkdir": True})


def test_an_image_tifffile_might_stack_with_the_first_is_refused(tmp_path) -> None:
    path = tmp_path / "two.tif"
    with tifffile.TiffWriter(path) as tiff:
        tiff.write(np.arange(64, dtype="u1").reshape(8, 8), tile=(16, 16))
        tiff.write(np.arange(64, dtype="u1").reshape(8, 8), tile=(16, 16))
    with pytest.raises(ValueError, match=r"two\.tif: the IFD at byte \d+: another image than the first"):
        tiff_to_zarr(str(path))
