#!/usr/bin/env python3
"""Seed the fuzz corpora from the conformance cases in tests/data.

Run once from the repository root: python3 fuzz/seed.py. Files are named by
their SHA-1, as libFuzzer names what it adds, so seeding twice adds nothing.
"""
import base64
import hashlib
import json
import pathlib
import struct

ROOT = pathlib.Path(__file__).resolve().parent.parent
DATA = ROOT / "tests" / "data"
CORPUS = ROOT / "fuzz" / "corpus"


def add(target, data):
    folder = CORPUS / target
    folder.mkdir(parents=True, exist_ok=True)
    (folder / hashlib.sha1(data).hexdigest()).write_bytes(data)


documents = sorted(p for p in DATA.glob("*/refs*") if p.is_file())
for path in documents:
    data = path.read_bytes()
    add("json_document", data)
    add("end_to_end", data)
    if path.suffix == ".json":
        refs = json.loads(data).get("refs", json.loads(data))
        for key, value in refs.items():
            if key.endswith(".zarray") and isinstance(value, str):
                add("metadata", value.encode())

# Templates: the target's lines are template a, template b, a URL, a gen key,
# a gen URL, then start, stop, step and a length.
add("templates", b"s3://bucket/data\nfile_{{a}}.nc\n{{a}}/x.bin\nx/{{i}}.{{j}}\n{{b}}\n0\n10\n1\n8")
add("templates", b"{{ 'x' * 3 }}\n{% for k in [1,2] %}{{k}}{% endfor %}\n{{b}}\nk/{{i}}\nu\n-5\n5\n2\n4")
v1 = json.loads((DATA / "v1_templates_gen" / "refs.v1.json").read_text())
gen = v1.get("gen", [{}])[0]
templates = list(v1.get("templates", {}).values()) + ["", ""]
dims = list(gen.get("dimensions", {}).values())
first = dims[0] if dims and isinstance(dims[0], dict) else {}
add("templates", "\n".join(map(str, [
    templates[0], templates[1], "{{a}}", gen.get("key", ""), gen.get("url", ""),
    first.get("start", 0), first.get("stop", 4), first.get("step", 1), gen.get("length", 8),
])).encode())

# Parquet roots: .zmetadata (length-prefixed) and one record file.
for root in sorted(DATA.glob("*/refs*.parq")):
    zmetadata = (root / ".zmetadata").read_bytes()
    for record in sorted(root.glob("*/refs.0.parq"))[:3]:
        add("parquet_root", struct.pack("<H", len(zmetadata)) + zmetadata + record.read_bytes())
# zlib chunks: the chunk's size (2 bytes, little endian) then its zlib stream, from every
# chunk of a zlib array that the conformance cases point at in a file of their own.
for path in documents:
    if path.suffix != ".json":
        continue
    refs = json.loads(path.read_bytes()).get("refs", json.loads(path.read_bytes()))
    for key, value in refs.items():
        if not (isinstance(value, list) and len(value) == 3 and isinstance(value[0], str)):
            continue
        meta = refs.get(key.rsplit("/", 1)[0] + "/.zarray") if "/" in key else None
        if not isinstance(meta, str):
            continue
        meta = json.loads(meta)
        codecs = [meta.get("compressor")] + (meta.get("filters") or [])
        target = path.parent / value[0].rsplit("/", 1)[-1]
        if not any(c and c.get("id") == "zlib" for c in codecs) or not target.is_file():
            continue
        size = int(meta["dtype"][2:] or 1) if meta["dtype"][1] in "iufc" else 1
        for n in meta["chunks"]:
            size *= n
        if size < 1 << 16:
            stream = target.read_bytes()[value[1]:value[1] + value[2]]
            add("zlib_inflate", struct.pack("<H", size) + stream)
# And streams made here: dense, empty, trailing bytes, cut short, longer than the chunk.
import zlib  # noqa: E402
field = bytes((i * 7 + i // 300) % 251 for i in range(3000))
for data, level, size in [(field, 1, 3000), (field, 9, 3000), (bytes(60000), 9, 60000), (b"", 1, 0),
                          (field, 1, 1500), (field[:100], 6, 4096)]:
    add("zlib_inflate", struct.pack("<H", size) + zlib.compress(data, level))
add("zlib_inflate", struct.pack("<H", 3000) + zlib.compress(field, 1) + b"trailing")
add("zlib_inflate", struct.pack("<H", 3000) + zlib.compress(field, 1)[:-3])
# netcdf3_scan: every NetCDF-3 file of the cases and of the scan's tests.
scan_files = sorted((ROOT / "tests" / "scan" / "netcdf3").glob("*.nc"))
for path in sorted(DATA.glob("*/*.nc")) + scan_files:
    data = path.read_bytes()
    if data[:3] == b"CDF":
        add("netcdf3_scan", data)
print({p.name: len(list(p.iterdir())) for p in sorted(CORPUS.iterdir())})

# The codecs: GRIB2 messages (tests/codecs/grib, 496 values, float64 then float32) and
# the first chunk of each TIFF case (tests/codecs/tiff), with the byte that picks its codec.
CODECS = ROOT / "tests" / "codecs"
for path in sorted((CODECS / "grib").glob("*.grib2")):
    message = path.read_bytes()
    add("grib_codec", struct.pack("<H", 496) + message)
    add("grib_codec", struct.pack("<H", 496 | 0x8000) + message)
PICK = {"imagecodecs_lzw": 0, "imagecodecs_packbits": 1, "imagecodecs_zstd": 2, "lzma": 3, "deflate": 4,
        "imagecodecs_jpeg": 8, "imagecodecs_webp": 9, "imagecodecs_png": 11}
DTYPES = ["|u1", "<u2", ">i2", "<u4", ">f4", "<f4", "<f8", ">f8"]
for path in sorted((CODECS / "tiff").glob("*.kerchunk.json")):
    refs = json.loads(path.read_text())
    zarray = json.loads(refs[".zarray"])
    compressor = (zarray.get("compressor") or {}).get("id")
    if compressor not in PICK:
        continue
    _, offset, length = refs["0.0"] if "0.0" in refs else refs["0.0.0"]
    chunk = (CODECS / "tiff" / path.name.replace(".kerchunk.json", ".tif")).read_bytes()[offset:offset + length]
    tables = (zarray.get("compressor") or {}).get("tables")
    if tables:  # the target gives no tables: the seed is the whole stream
        chunk = base64.b64decode(tables)[:-2] + chunk[2:]
    dtype = zarray["dtype"] if zarray["dtype"] in DTYPES else "|u1"
    size = 1
    for n in zarray["chunks"]:
        size *= n
    size *= int(dtype[2:])
    add("tiff_codecs", bytes([PICK[compressor] | (DTYPES.index(dtype) << 5)]) + struct.pack("<H", min(size, 65535)) + chunk)
    for f in zarray.get("filters") or []:
        pick = 5 if f["id"] == "imagecodecs_delta" else 6
        add("tiff_codecs", bytes([pick | (DTYPES.index(dtype) << 5)]) + struct.pack("<H", 256 * int(dtype[2:])) + bytes(range(256)) * int(dtype[2:]))

# DMR++ sidecars: bes's pairs' and those tests/scan/dmrpp/build.py writes (the smaller ones).
for path in sorted((ROOT / "tests" / "scan" / "dmrpp").glob("*/*.dmrpp")):
    data = path.read_bytes()
    if len(data) <= 16_384:
        add("dmrpp_scan", data)
