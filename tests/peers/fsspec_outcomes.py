"""Add to tests/peers/gdal_kerchunk_json.json what fsspec does with each document, the
independent column that crates/zarrs_kerchunk/tests/peers.rs compares this crate with.

Run from the repository root in the test virtualenv (python/tests/build.sh makes it; fsspec
2026.9.0 pinned in python/requirements.txt):

    target/python-venv/bin/python tests/peers/fsspec_outcomes.py

For each case, "fsspec" is one of:
- "reject": the document is not JSON, or fsspec's ReferenceFileSystem refuses it;
- "error": the filesystem opens, and reading the key "foo" raises;
- "bytes": reading "foo" returns bytes (recorded in "fsspec_bytes", base64), with a 16-byte file
  named "ok" as the target a range may name;
- "object": reading "foo" returns a Python object that is not bytes (its repr in "fsspec_value"):
  fsspec hands some JSON values through as they are.
"""

from __future__ import annotations

import base64
import json
import os
import tempfile
from pathlib import Path

import fsspec

TABLE = Path(__file__).with_name("gdal_kerchunk_json.json")


def outcome(doc: str, folder: str) -> tuple[str, object]:
    try:
        parsed = json.loads(doc)
        fs = fsspec.filesystem("reference", fo=parsed, remote_protocol="file", skip_instance_cache=True)
    except Exception:
        return "reject", None
    if '"foo"' not in doc:
        return "bytes", None
    cwd = os.getcwd()
    os.chdir(folder)
    try:
        return "bytes", fs.cat("foo")
    except Exception:
        return "error", None
    finally:
        os.chdir(cwd)


def main() -> None:
    table = json.loads(TABLE.read_text())
    with tempfile.TemporaryDirectory() as folder:
        Path(folder, "ok").write_bytes(bytes(range(16)))
        for case in table["cases"]:
            case["fsspec"], got = outcome(case["doc"], folder)
            case.pop("fsspec_bytes", None)
            case.pop("fsspec_value", None)
            if isinstance(got, bytes):
                case["fsspec_bytes"] = base64.b64encode(got).decode()
            elif got is not None:
                case["fsspec"], case["fsspec_value"] = "object", repr(got)
    table["fsspec_version"] = fsspec.__version__
    TABLE.write_text(json.dumps(table, indent=1, ensure_ascii=False) + "\n")


if __name__ == "__main__":
    main()
