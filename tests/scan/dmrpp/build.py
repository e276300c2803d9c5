"""DMR++ sidecars written from h5py's own view of an HDF5 file, in the form OPeNDAP's build_dmrpp
writes them (bes 3.21: `dmrpp:version`, `fillValue` where HDF5 defines one, `byteOrder`, the
filters in pipeline order with their deflate levels, `FixedLengthStringArray`), for the cases
bes's pairs lack; and the files they describe, with their values as h5py reads them.

Every offset, size and chunk position comes from h5py (the HDF5 library's chunk index), never
from this project's scanners.

    python build.py     (h5py, numpy; writes written/)
"""

import base64
import shutil
from pathlib import Path
from xml.sax.saxutils import escape, quoteattr

import h5py
import numpy as np

here = Path(__file__).parent
out = here / "written"
FILTERS = {h5py.h5z.FILTER_DEFLATE: "deflate", h5py.h5z.FILTER_SHUFFLE: "shuffle", h5py.h5z.FILTER_FLETCHER32: "fletcher32"}
TYPES = {"i1": "Int8", "u1": "Byte", "i2": "Int16", "u2": "UInt16", "i4": "Int32", "u4": "UInt32", "i8": "Int64",
         "u8": "UInt64", "f4": "Float32", "f8": "Float64"}


def dap_type(dtype) -> str:
    return "String" if dtype.kind == "S" else TYPES[f"{dtype.kind}{dtype.itemsize}"]


def attribute(name: str, value, indent: str) -> str:
    values = np.atleast_1d(value)
    if values.dtype.kind in "SOU":
        kind = "String"
        texts = [v.decode() if isinstance(v, bytes) else str(v) for v in values]
    else:
        kind = dap_type(values.dtype)
        texts = [repr(float(v)) if values.dtype.kind == "f" else str(int(v)) for v in values]
    lines = [f'{indent}<Attribute name={quoteattr(name)} type="{kind}">']
    lines += [f"{indent}    <Value>{escape(t)}</Value>" for t in texts]
    return "\n".join(lines + [f"{indent}</Attribute>"])


def chunks_element(dataset, indent: str) -> list[str]:
    plist = dataset.id.get_create_plist()
    names, levels = [], []
    for i in range(plist.get_nfilters()):
        code, _, values, _ = plist.get_filter(i)
        names.append(FILTERS[code])
        if code == h5py.h5z.FILTER_DEFLATE:
            levels.append(str(values[0]))
    attributes = []
    if names:
        attributes.append(f'compressionType="{" ".join(names)}"')
    if levels:
        attributes.append(f'deflateLevel="{" ".join(levels)}"')
    if plist.fill_value_defined() != h5py.h5d.FILL_VALUE_UNDEFINED:
        fill = np.zeros((), dataset.dtype)
        plist.get_fill_value(fill)
        text = fill.item().decode() if dataset.dtype.kind == "S" else repr(fill.item())
        attributes.append(f"fillValue={quoteattr(text)}")
    kind = dataset.id.get_type()
    order = "BE" if hasattr(kind, "get_order") and kind.get_order() == h5py.h5t.ORDER_BE else "LE"
    attributes.append(f'byteOrder="{order}"')
    head = f"{indent}<dmrpp:chunks {' '.join(attributes)}"
    layout = plist.get_layout()
    if layout == h5py.h5d.COMPACT:
        data = base64.b64encode(dataset[()].tobytes()).decode()
        return [head + "/>", f"{indent}<dmrpp:compact>{data}</dmrpp:compact>"]
    lines = [head + ">"]
    if layout == h5py.h5d.CHUNKED:
        lines.append(f"{indent}    <dmrpp:chunkDimensionSizes>{' '.join(map(str, dataset.chunks))}</dmrpp:chunkDimensionSizes>")
        for i in range(dataset.id.get_num_chunks()):
            info = dataset.id.get_chunk_info(i)
            position = ",".join(map(str, info.chunk_offset))
            lines.append(f'{indent}    <dmrpp:chunk offset="{info.byte_offset}" nBytes="{info.size}" '
                         f'chunkPositionInArray="[{position}]"/>')
    elif dataset.id.get_offset() is not None:
        lines.append(f'{indent}    <dmrpp:chunk offset="{dataset.id.get_offset()}" nBytes="{dataset.id.get_storage_size()}"/>')
    return lines + [f"{indent}</dmrpp:chunks>"]


def variable(f, dataset, indent: str) -> str:
    lines = [f'{indent}<{dap_type(dataset.dtype)} name={quoteattr(dataset.name.rsplit("/", 1)[-1])}>']
    scales = [list(d.values()) for d in dataset.dims] if dataset.ndim else []
    for axis, size in enumerate(dataset.shape):
        attached = scales[axis] if axis < len(scales) else []
        if dataset.attrs.get("CLASS") == b"DIMENSION_SCALE":
            lines.append(f"{indent}    <Dim name={quoteattr(dataset.name)}/>")
        elif len(attached) == 1:
            lines.append(f"{indent}    <Dim name={quoteattr(attached[0].name)}/>")
        else:
            lines.append(f'{indent}    <Dim size="{size}"/>')
    for name, value in dataset.attrs.items():
        if name not in ("DIMENSION_LIST", "REFERENCE_LIST"):
            lines.append(attribute(name, value, indent + "    "))
    lines += chunks_element(dataset, indent + "    ")
    if dataset.dtype.kind == "S":
        lines.append(f'{indent}    <dmrpp:FixedLengthStringArray string_length="{dataset.dtype.itemsize}" pad="null_pad"/>')
    return "\n".join(lines + [f"{indent}</{dap_type(dataset.dtype)}>"])


def group(f, node, indent: str) -> list[str]:
    lines = []
    for name, child in node.items():
        if isinstance(child, h5py.Dataset) and child.attrs.get("CLASS") == b"DIMENSION_SCALE":
            lines.append(f'{indent}<Dimension name={quoteattr(name)} size="{child.shape[0]}"/>')
    for name, child in node.items():
        if isinstance(child, h5py.Dataset):
            lines.append(variable(f, child, indent))
        else:
            lines.append(f"{indent}<Group name={quoteattr(name)}>")
            lines += group(f, child, indent + "    ")
            lines.append(f"{indent}</Group>")
    lines += [attribute(name, value, indent) for name, value in node.attrs.items()]
    return lines


def sidecar(path: Path) -> None:
    with h5py.File(path, "r") as f:
        body = "\n".join(group(f, f, "    "))
    path.with_name(path.name + ".dmrpp").write_text(
        '<?xml version="1.0" encoding="ISO-8859-1"?>\n'
        '<Dataset xmlns="http://xml.opendap.org/ns/DAP/4.0#" xmlns:dmrpp="http://xml.opendap.org/dap/dmrpp/1.0.0#" '
        f'dapVersion="4.0" dmrVersion="1.0" name="{path.name}" dmrpp:href="OPeNDAP_DMRpp_DATA_ACCESS_URL" '
        f'dmrpp:version="3.21.1">\n{body}\n</Dataset>\n'
    )


def features(path: Path) -> None:
    """What bes's pairs lack: big-endian chunks with partial edges, fletcher32 alone on an odd
    count of bytes, compact and contiguous data, a group with its own dimension, chunks never
    written (read as the fill value), fixed-length strings."""
    with h5py.File(path, "w", libver="earliest") as f:
        big = np.arange(48, dtype=">f8").reshape(6, 8) / 7
        f.create_dataset("big_endian", data=big, dtype=">f8", chunks=(4, 5), compression="gzip", compression_opts=3)
        f.create_dataset("odd_checked", data=np.arange(-3, 4, dtype="i1"), chunks=(7,), fletcher32=True)
        f.create_dataset("contiguous", data=np.linspace(0, 1, 10, dtype="f4"))
        sparse = f.create_dataset("sparse", shape=(8, 8), dtype="i4", chunks=(4, 4), fillvalue=-7,
                                  compression="gzip", shuffle=True)
        sparse[:4, 4:] = np.arange(16).reshape(4, 4)
        space = h5py.h5s.create_simple((5,))
        plist = h5py.h5p.create(h5py.h5p.DATASET_CREATE)
        plist.set_layout(h5py.h5d.COMPACT)
        h5py.h5d.create(f.id, b"compact", h5py.h5t.STD_I16BE, space, plist).write(
            h5py.h5s.ALL, h5py.h5s.ALL, np.array([5, -4, 3, -2, 1], dtype=">i2"))
        f.create_dataset("strings", data=np.array([b"ab", b"cde", b""], dtype="S3"), chunks=(2,))
        g = f.create_group("g")
        x = g.create_dataset("x", data=np.array([10, 20, 30], dtype="u2"))
        x.make_scale("x")
        inner = g.create_dataset("inner", data=np.arange(6, dtype="<u2").reshape(2, 3), chunks=(1, 3))
        inner.dims[1].attach_scale(x)
        inner.attrs["units"] = "m"
        f.attrs["title"] = "features"


def truth(path: Path) -> None:
    with h5py.File(path, "r") as f:
        def save(name, obj):
            if isinstance(obj, h5py.Dataset):
                values = np.asarray(obj[()])
                if values.dtype.kind in "iuf":
                    values = values.astype(values.dtype.newbyteorder("<"))
                np.save(out / f"{path.name}.{name.replace('/', '~')}.npy", values.copy(order="C"))
        f.visititems(save)


if __name__ == "__main__":
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir()
    features(out / "features.h5")
    for n in range(3):
        shutil.copy(here / f"../hdf5/series{n}.nc", out / f"series{n}.nc")
    for file in sorted(out.iterdir()):
        if file.suffix in (".h5", ".nc"):
            sidecar(file)
            truth(file)
            print(file.name)
