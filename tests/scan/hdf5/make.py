#!/usr/bin/env python3
"""HDF5 and NetCDF-4 files for the scan's tests, with what kerchunk makes of
each and the ground truth read by h5py.

Run from the repository root with h5py 3.16 (HDF5 2.0), hdf5plugin 7.1,
netCDF4 1.7.5, kerchunk 0.2.10 and zarr 3.1 installed (any virtualenv; not
needed by the tests themselves):

    python tests/scan/hdf5/make.py              # every file made again
    python tests/scan/hdf5/make.py references   # only kerchunk's references, of the files as they are
    python tests/scan/hdf5/make.py plugins      # only plugin_filters.h5 (lzf, LZ4, bitshuffle) and its truth

hdf5_compression_lz4.h5, hdf5_compression_bitshuffle.h5 (100 int64 values through HDF5's LZ4
plugin and the bitshuffle plugin with LZ4) and hdf5_mali_chunk2.h5 (chunks stored under three
filter masks) are kerchunk's own test files (fsspec/kerchunk at 3cd5ddc, tests/, MIT, made by its
tests/gen_hdf5.py with hdf5plugin), copied; only their truth is made here (`plugins`).

air_linked.nc is kerchunk's own test file (fsspec/kerchunk, tests/air_linked.nc, MIT): a NetCDF-4
file whose lat and time have hard links (lat_hard, time_hard) and soft links (lat_soft,
time_soft) beside them. It is copied, not made.

For each FILE it writes FILE.kerchunk.json (kerchunk's SingleHdf5ToZarr with
inline_threshold=0 and preserve_linked_dsets=True, so datasets reached through
hard and soft links are there too; datasets kerchunk skips are absent) and, for every
dataset, FILE.<path>.npy (its values as h5py reads them, little-endian, with
"/" in the path written "~"), or FILE.<path>.json for variable-length
strings.
"""
import json
import pathlib
import sys
import warnings

import h5py
import hdf5plugin
import netCDF4
import numpy as np

HERE = pathlib.Path(__file__).resolve().parent


def datasets(group, earliest):
    """One dataset per layout, chunk index, filter and type the scan handles or refuses."""
    group.create_dataset("contiguous", data=np.arange(12, dtype="f8").reshape(3, 4))
    edges = group.create_dataset("edges", data=np.arange(70, dtype="i4").reshape(10, 7), chunks=(4, 3),
                                 compression="gzip", compression_opts=4, shuffle=True)
    edges.attrs["note"] = "gzip and shuffle, edge chunks"
    partial = group.create_dataset("partial", shape=(8, 6), dtype="i2", chunks=(4, 3), fillvalue=-1)
    partial[0:4, 3:6] = 5
    group.create_dataset("wide_chunk", data=np.arange(5, dtype="u2"), chunks=(8,), maxshape=(None,))
    group.create_dataset("unwritten", shape=(4,), dtype="i8", fillvalue=7)
    group.create_dataset("unwritten_chunked", shape=(4, 4), dtype="f4", chunks=(2, 2), fillvalue=np.float32(0.5))
    for name, data in [("compact_small", np.arange(10, dtype="i2")), ("compact_large", np.arange(250, dtype="f8")),
                       ("compact_scalar", np.array(3.5, dtype="f4"))]:
        space = h5py.h5s.create_simple(data.shape) if data.shape else h5py.h5s.create(h5py.h5s.SCALAR)
        plist = h5py.h5p.create(h5py.h5p.DATASET_CREATE)
        plist.set_layout(h5py.h5d.COMPACT)
        dsid = h5py.h5d.create(group.id, name.encode(), h5py.h5t.py_create(data.dtype), space, plist)
        dsid.write(h5py.h5s.ALL, h5py.h5s.ALL, data)
    group.create_dataset("scalar", data=np.float32(2.25))
    group.create_dataset("empty", shape=(0,), dtype="f8", chunks=(4,), maxshape=(None,))
    group.create_dataset("big_endian", data=np.arange(6, dtype=">i4").reshape(2, 3))
    group.create_dataset("half", data=np.array([0.5, -2, 65504, np.inf], dtype="f2"))
    group.create_dataset("flags", data=np.array([True, False, True]))
    group.create_dataset("enum", data=np.array([0, 2, 1], dtype="u1"), dtype=h5py.enum_dtype({"a": 0, "b": 1, "c": 2}, basetype="u1"))
    group.create_dataset("complex", data=np.array([1 + 2j, -3.5 - 1j], dtype="c8"))
    group.create_dataset("fixed_strings", data=np.array([b"ab", b"cde", b""], dtype="S5"), fillvalue=b"zz")
    group.create_dataset("more_strings", data=np.array([b"x", b"yz"], dtype="S3"))
    group.create_dataset("vlen_strings", data=["one", "two", "three"], dtype=h5py.string_dtype())
    unlimited = group.create_dataset("grows", data=np.arange(20, dtype="f8"), chunks=(6,), maxshape=(None,),
                                     compression="gzip")
    unlimited.resize((22,))
    unlimited[20:] = [20, 21]
    group.create_dataset("grows_2d", data=np.arange(30, dtype="i4").reshape(5, 6), chunks=(2, 4), maxshape=(None, None))
    group.create_dataset("single_chunk", data=np.arange(16, dtype="f4").reshape(4, 4), chunks=(4, 4), compression="gzip")
    group.create_dataset("zstd", data=np.arange(100, dtype="i8"), chunks=(30,), **hdf5plugin.Zstd(clevel=3))
    group.create_dataset("blosc", data=np.arange(100, dtype="f4"), chunks=(40,),
                         **hdf5plugin.Blosc(cname="lz4", clevel=5, shuffle=hdf5plugin.Blosc.SHUFFLE))
    group.create_dataset("fletcher32", data=np.arange(8, dtype="i4"), chunks=(4,), fletcher32=True)
    group.create_dataset("scaleoffset", data=np.arange(8, dtype="i4"), chunks=(4,), scaleoffset=0)
    group.create_dataset("lzf", data=np.arange(8, dtype="i4"), chunks=(4,), compression="lzf")
    group.create_dataset("compound", data=np.array([(1, 2.0)], dtype=[("a", "i4"), ("b", "f8")]))
    group.create_dataset("null", data=h5py.Empty("f4"))


def scales(group):
    """Dimension scales: attached, in a subgroup, and a dataset using them."""
    x = group.create_dataset("x", data=np.arange(3, dtype="f8"))
    sub = group.create_group("sub")
    y = sub.create_dataset("y", data=np.arange(4, dtype="i4"))
    x.make_scale("x")
    y.make_scale("the y")
    field = group.create_dataset("field", data=np.arange(12, dtype="f4").reshape(3, 4))
    field.dims[0].attach_scale(x)
    field.dims[1].attach_scale(y)
    group.create_dataset("unattached", data=np.zeros((2, 2), dtype="u1"))


def attributes(obj):
    obj.attrs["text"] = "hello"
    obj.attrs["fixed"] = np.bytes_(b"fixed bytes")
    obj.attrs["empty_fixed"] = np.bytes_(b"")
    obj.attrs["int"] = np.int32(-7)
    obj.attrs["one_float"] = np.array([0.25], dtype="f8")
    obj.attrs["floats"] = np.array([1.5, np.nan, np.inf], dtype="f4")
    obj.attrs["matrix"] = np.arange(4, dtype="i2").reshape(2, 2)
    obj.attrs["texts"] = np.array([b"a", b"bc"], dtype="S2")
    obj.attrs["u64"] = np.uint64(2**63 + 1)
    obj.attrs["empty"] = h5py.Empty("f4")


def content(f, earliest):
    """What every HDF5 test file holds."""
    attributes(f)
    datasets(f, earliest)
    scales(f)
    g = f.create_group("g")
    attributes(g)
    g.create_dataset("inner", data=np.arange(6, dtype="u4").reshape(2, 3), chunks=(1, 3))
    f["g/hard_alias"] = f["contiguous"]
    f["soft"] = h5py.SoftLink("/edges")
    f["dangling"] = h5py.SoftLink("/nowhere")
    f.create_group("empty_group")


def hdf5_file(path, libver):
    with h5py.File(path, "w", libver=libver) as f:
        content(f, libver == "earliest")


def superblock_v1_file(path):
    """The same content as earliest.h5 in a version-1 superblock: HDF5 writes one
    when the chunk B-tree's K is not the default (the superblock then stores it).
    h5py has no binding for H5Pset_istore_k: it is called in the HDF5 library
    h5py loaded (its own wheel's copy), on the property list h5py made."""
    import ctypes
    libs = pathlib.Path(h5py.__file__).parent.parent / "h5py.libs"
    library = next((ctypes.CDLL(str(lib)) for lib in libs.glob("libhdf5-*.so*")), None) or ctypes.CDLL("libhdf5.so")
    fcpl = h5py.h5p.create(h5py.h5p.FILE_CREATE)
    assert library.H5Pset_istore_k(ctypes.c_int64(fcpl.id), ctypes.c_uint(64)) >= 0
    fapl = h5py.h5p.create(h5py.h5p.FILE_ACCESS)
    fapl.set_libver_bounds(h5py.h5f.LIBVER_EARLIEST, h5py.h5f.LIBVER_LATEST)
    fid = h5py.h5f.create(str(path).encode(), h5py.h5f.ACC_TRUNC, fcpl=fcpl, fapl=fapl)
    with h5py.File(fid) as f:
        content(f, True)
    assert path.read_bytes()[8] == 1, "not a version-1 superblock"


def filter_masks_file(path):
    """Chunks stored with different filters: HDF5 skips a filter on a chunk it
    did not shrink, and records that in the chunk's filter mask. `small` and
    `large` have one chunk with deflate skipped (kerchunk holds it written again
    in `small`, and fails on `large`); `all_raw` has it skipped on every chunk (then the array
    simply has no filter)."""
    with h5py.File(path, "w", libver="earliest") as f:
        for name, dtype, n in [("small", "i4", 8), ("large", "f8", 100), ("all_raw", "i2", 8)]:
            data = np.arange(n, dtype=dtype) * 3
            chunk = n // 2
            ds = f.create_dataset(name, shape=(n,), dtype=dtype, chunks=(chunk,), compression="gzip")
            if name != "all_raw":
                ds[:chunk] = data[:chunk]
            else:
                ds.id.write_direct_chunk((0,), data[:chunk].tobytes(), filter_mask=1)
            ds.id.write_direct_chunk((chunk,), data[chunk:].tobytes(), filter_mask=1)


def fletcher_masks_file(path):
    """`checked`: deflate then fletcher32, its second chunk written with both skipped (mask
    0x3). Described in one array it needs that chunk checksummed again, which the scanner does
    not write, so it is left out; kerchunk fails on it too (not in its references)."""
    with h5py.File(path, "w", libver="earliest") as f:
        data = np.arange(64, dtype="i4")
        ds = f.create_dataset("checked", shape=(64,), dtype="i4", chunks=(32,), compression="gzip", fletcher32=True)
        ds[:32] = data[:32]
        ds.id.write_direct_chunk((32,), data[32:].tobytes(), filter_mask=3)


def netcdf4_file(path):
    with netCDF4.Dataset(path, "w", format="NETCDF4") as ds:
        ds.title = "netCDF-4 test"
        ds.history = ""
        ds.createDimension("time", None)
        ds.createDimension("lat", 3)
        ds.createDimension("lon", 4)
        ds.createDimension("nov", 2)
        time = ds.createVariable("time", "f8", ("time",))
        time.units = "days since 2000-01-01"
        time[:] = [0.0, 1.0]
        lat = ds.createVariable("lat", "f4", ("lat",))
        lat[:] = [10, 20, 30]
        lon = ds.createVariable("lon", "f8", ("lon",), fill_value=-999.0)
        lon[:] = [0, 90, 180, 270]
        temp = ds.createVariable("temp", "f4", ("time", "lat", "lon"), zlib=True, shuffle=True, chunksizes=(1, 3, 4))
        temp.units = "K"
        temp.scale_factor = 0.5
        temp.valid_range = np.array([0.0, 100.0], dtype="f4")
        temp[:] = np.arange(24, dtype="f4").reshape(2, 3, 4)
        scal = ds.createVariable("scal", "i4")
        scal.assignValue(42)
        strs = ds.createVariable("strs", str, ("lat",))
        strs[:] = np.array(["a", "bb", "ccc"], dtype=object)
        chars = ds.createVariable("chars", "S1", ("lat",))
        chars[:] = np.array([b"x", b"y", b"z"])
        sub = ds.createGroup("sub")
        sub.createDimension("x", 2)
        gv = sub.createVariable("gv", "i2", ("time", "x"))
        gv[:] = np.array([[1, 2], [3, 4]], dtype="i2")
        big = ds.createVariable("many", "i4", ("lat", "lon"), zlib=True, complevel=1)
        big[:] = np.arange(12, dtype="i4").reshape(3, 4)


def series(folder):
    """Three netCDF-4 files of two times each, for combining along time; and the whole series."""
    temps = []
    for i in range(3):
        with netCDF4.Dataset(folder / f"series{i}.nc", "w", format="NETCDF4") as ds:
            ds.createDimension("time", None)
            ds.createDimension("lat", 3)
            time = ds.createVariable("time", "f8", ("time",))
            time.units = "hours since 2000-01-01"
            time[:] = [2.0 * i, 2.0 * i + 1]
            lat = ds.createVariable("lat", "f4", ("lat",))
            lat[:] = [10, 20, 30]
            temp = ds.createVariable("temp", "f4", ("time", "lat"), zlib=True, chunksizes=(1, 3))
            temp[:] = np.arange(6, dtype="f4").reshape(2, 3) + 100 * i
            temps.append(temp[:].data)
    np.save(folder / "series.temp.npy", np.concatenate(temps))


KERCHUNK_FILES = ["hdf5_compression_lz4.h5", "hdf5_compression_bitshuffle.h5", "hdf5_mali_chunk2.h5"]


def plugin_filters_file(path):
    """Datasets compressed by filters outside HDF5 (h5py's lzf, hdf5plugin's LZ4 and
    bitshuffle): small ones, which kerchunk holds decoded, and one too large to hold."""
    rng = np.random.default_rng(7)
    smooth = np.cumsum(rng.integers(-3, 4, size=(6, 7)), axis=1).astype("i4")
    with h5py.File(path, "w", libver="latest") as f:
        f.create_dataset("lzf_i4", data=np.repeat(np.arange(20, dtype="i4"), 3), chunks=(30,), compression="lzf")
        f.create_dataset("lzf_f8", data=np.tile(np.linspace(0, 1, 4), 5).reshape(4, 5), chunks=(2, 5), compression="lzf")
        f.create_dataset("lz4_i4", data=smooth, chunks=(3, 7), **hdf5plugin.LZ4())
        f.create_dataset("lz4_u1", data=np.repeat(np.arange(10, dtype="u1"), 4), chunks=(40,), **hdf5plugin.LZ4(nbytes=16))
        f.create_dataset("bitshuffle_i4", data=smooth, chunks=(6, 7), **hdf5plugin.Bitshuffle(cname="none"))
        f.create_dataset("bitshuffle_lz4_i2", data=np.arange(45, dtype="i2").reshape(9, 5), chunks=(9, 5), **hdf5plugin.Bitshuffle(cname="lz4"))
        f.create_dataset("bitshuffle_lz4_f4", data=np.linspace(-1, 1, 20, dtype="f4"), chunks=(20,), **hdf5plugin.Bitshuffle(cname="lz4"))
        f.create_dataset("large_lz4", data=np.arange(4000, dtype="f8"), chunks=(1000,), **hdf5plugin.LZ4())
        # Too large to hold: referenced through imagecodecs' lz4h5 and bitshuffle. Noise, so that
        # LZ4 blocks of many sizes and blocks it did not shrink (stored as they are) are there;
        # chunks of several bitshuffle blocks (2048 elements of 4 bytes), an edge chunk.
        noise = rng.normal(size=(6000,)).astype("f4")
        f.create_dataset("lz4_noise_f4", data=noise, chunks=(2500,), **hdf5plugin.LZ4(nbytes=4096))
        f.create_dataset("bitshuffle_large_i4", data=np.cumsum(rng.integers(-9, 10, size=5000)).astype("i4"),
                         chunks=(2500,), **hdf5plugin.Bitshuffle(cname="none"))
        f.create_dataset("bitshuffle_lz4_large_f4", data=noise.reshape(60, 100), chunks=(40, 60),
                         **hdf5plugin.Bitshuffle(cname="lz4"))
        # Chunks of 1003 elements: the last 3 of each are stored as they are, which no codec reads.
        f.create_dataset("bitshuffle_lz4_odd_f8", data=rng.normal(size=1003), chunks=(1003,),
                         **hdf5plugin.Bitshuffle(cname="lz4"))


def truth(path):
    """Every dataset's values as h5py reads them."""
    with h5py.File(path, "r") as f:
        def visit(name, obj):
            if not isinstance(obj, h5py.Dataset) or obj.shape is None:
                return
            # netCDF-4's dimensions without a variable have no values (kerchunk and the scan drop them).
            if str(obj.attrs.get("NAME", b"")).find("This is a netCDF dimension but not a netCDF variable") >= 0:
                return
            stem = f"{path.name}.{name.replace('/', '~')}"
            if h5py.check_string_dtype(obj.dtype) and obj.dtype.kind == "O":
                values = [v.decode() if isinstance(v, bytes) else v for v in obj[()].ravel().tolist()]
                (HERE / f"{stem}.json").write_text(json.dumps(values))
                return
            if obj.dtype.kind in "OV" or obj.dtype.names:
                return
            data = obj[()]
            data = np.asarray(data)
            if data.dtype.byteorder == ">":
                data = data.astype(data.dtype.newbyteorder("<"))
            np.save(HERE / f"{stem}.npy", data)
        f.visititems(visit)


# Datasets kerchunk 0.2.10 cannot translate with zarr 3.1.6 and after which
# its translate() hangs (zarr's dtype resolution of numpy "O"): left out of
# its walk here, and compared with h5py's values only.
KERCHUNK_HANGS_ON = {"vlen_strings", "strs", "compound"}


def kerchunk_refs(path):
    """kerchunk's references, with the datasets reached through hard and soft links
    (`preserve_linked_dsets`), which the scanner writes by default."""
    from kerchunk.hdf import SingleHdf5ToZarr
    visititems, visititems_links = h5py.Group.visititems, h5py.Group.visititems_links

    def without_hangs(self, callback):
        return visititems(self, lambda name, obj: None if name in KERCHUNK_HANGS_ON else callback(name, obj))

    def links_without_hangs(self, callback):
        return visititems_links(self, lambda name, link: None if name in KERCHUNK_HANGS_ON else callback(name, link))

    h5py.Group.visititems, h5py.Group.visititems_links = without_hangs, links_without_hangs
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            refs = SingleHdf5ToZarr(str(path), url=path.name, inline_threshold=0).translate(
                preserve_linked_dsets=True
            )
    finally:
        h5py.Group.visititems, h5py.Group.visititems_links = visititems, visititems_links
    (HERE / f"{path.name}.kerchunk.json").write_text(json.dumps(refs, indent=0, sort_keys=True))


# Arrays of earliest.h5 split by kerchunk.utils.subchunk, and the factors.
SUBCHUNKS = {"contiguous": 3, "wide_chunk": 4}


def kerchunk_subchunks():
    """What kerchunk's subchunk makes of earliest.h5's uncompressed arrays."""
    from kerchunk.utils import subchunk
    refs = json.loads((HERE / "earliest.h5.kerchunk.json").read_text())["refs"]
    out = {}
    for array, factor in SUBCHUNKS.items():
        split = subchunk(refs, array, factor)
        mine = {k: v for k, v in split.items() if k.startswith(f"{array}/")}
        # The URL as this folder names the file (kerchunk's references hold the path make.py gave).
        mine = {k: [pathlib.Path(v[0]).name, *v[1:]] if isinstance(v, list) else v for k, v in mine.items()}
        out[array] = {"factor": factor, "refs": mine}
    (HERE / "earliest.h5.subchunk.kerchunk.json").write_text(json.dumps(out, indent=0, sort_keys=True))


def main():
    if sys.argv[1:] == ["plugins"]:
        # The plugin filters' file alone, with its truth and kerchunk's references.
        path = HERE / "plugin_filters.h5"
        plugin_filters_file(path)
        truth(path)
        kerchunk_refs(path)
        for name in KERCHUNK_FILES:
            truth(HERE / name)
        fletcher_masks_file(HERE / "fletcher_masks.h5")
        truth(HERE / "fletcher_masks.h5")
        return
    if sys.argv[1:] == ["references"]:
        # kerchunk's references again, for the files as they are (h5py writes times into a
        # file, so making the files again moves every offset).
        for path in [HERE / "earliest.h5", HERE / "latest.h5", HERE / "netcdf4.nc", HERE / "superblock_v1.h5",
                     HERE / "filter_masks.h5", HERE / "air_linked.nc", HERE / "plugin_filters.h5"]:
            kerchunk_refs(path)
        kerchunk_subchunks()
        return
    for old in list(HERE.glob("*.npy")) + list(HERE.glob("*.json")):
        old.unlink()
    files = [HERE / "earliest.h5", HERE / "latest.h5", HERE / "netcdf4.nc", HERE / "superblock_v1.h5",
             HERE / "filter_masks.h5"]
    hdf5_file(files[0], "earliest")
    hdf5_file(files[1], "latest")
    netcdf4_file(files[2])
    superblock_v1_file(files[3])
    filter_masks_file(files[4])
    series(HERE)
    plugin_filters_file(HERE / "plugin_filters.h5")
    files += [HERE / "air_linked.nc", HERE / "plugin_filters.h5"]
    for path in files:
        truth(path)
        try:
            kerchunk_refs(path)
        except Exception as error:  # kerchunk fails on some forms; the test says which
            print(f"kerchunk failed on {path.name}: {error!r}")
    kerchunk_subchunks()


if __name__ == "__main__":
    main()
