#!/usr/bin/env python3
"""Seed the fuzz corpora from the conformance cases in tests/data.

Run once from the repository root: python3 fuzz/seed.py. Files are named by
their SHA-1, as libFuzzer names what it adds, so seeding twice adds nothing.
"""
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
print({p.name: len(list(p.iterdir())) for p in sorted(CORPUS.iterdir())})
