#!/usr/bin/env python3
"""Writes the eccodes tables the GRIB scanner names parameters, levels and grids with.

    pip install eccodeslib==2.50.0.33
    python3 make.py            # writes concepts.txt.gz and codes.txt beside this file

Reads eccodes' definition files (Apache-2.0, (C) ECMWF) out of the library's
built-in file system with its own `codes_export_resource`, so the tables are
those of the eccodes kerchunk and cfgrib read with, and nothing is parsed
from eccodes' code. Only data is kept: each concept's values and their
conditions, and a few code tables' abbreviations and descriptions.

Only the files the scanner can select are kept, for GRIB2 and GRIB1: the WMO's (GRIB2's
current, pre-MTG2 `.lte33` and `.legacy`) and each centre's own local concepts (a directory named by a centre's abbreviation).
eccodes selects the others (`.chemsplit`, and datasets such as `era6` or `destine`) by MARS keys
the scanner does not read.

concepts.txt.gz (gzip, no timestamp; `zcat` shows it): first every distinct set of conditions, numbered from 0 in
order, then one block per concept file, its entries in eccodes' order (order
decides ties), each a value and the number of its conditions:

    %conditions
    discipline=0;parameterCategory=3;parameterNumber=1
    @grib2/localConcepts/kwbc/paramId.def
    260074|0

A condition's value is an integer, `M` (eccodes' `missing()`), a list
`102,2` (an array key) or a quoted string (`"accum"`). codes.txt: `@table`
then `code|abbreviation|description`.
"""
import pathlib
import re
import subprocess
import sys
import tempfile

import eccodeslib
import gzip

HERE = pathlib.Path(__file__).resolve().parent
LIB = pathlib.Path(eccodeslib.__file__).parent
EXPORT = LIB / "bin" / "codes_export_resource"
CONCEPTS = ("paramId", "shortName", "name", "units", "cfName", "cfVarName", "typeOfLevelConcept", "typeOfLevel", "stepType")
CONCEPT_FILE = re.compile(
    r"^grib[12]/(localConcepts/[A-Za-z0-9_]+/)?(" + "|".join(CONCEPTS) + r")(\.lte33|\.legacy|\.chemsplit)?\.def$"
)
CODE_TABLE = re.compile(
    r"^(grib2/tables/[0-9]+/(1\.4|3\.1)\.table|grib1/6\.table|common/c-11\.table|mars/type\.table)$"
)


def memfs_paths():
    """Every definition file the library holds, from its built-in file system's names."""
    memfs = next((LIB / "lib64").glob("libeccodes_memfs.so*"), None) or next((LIB / "lib").glob("libeccodes_memfs.so*"))
    data = memfs.read_bytes()
    return sorted({m.decode() for m in re.findall(rb"/MEMFS/definitions/([A-Za-z0-9_./-]+)", data)})


def export(path):
    with tempfile.NamedTemporaryFile(suffix=".def") as out:
        subprocess.run([EXPORT, "-d", path, out.name], check=True, capture_output=True)
        return pathlib.Path(out.name).read_text(encoding="utf-8", errors="replace")


# A value is quoted with ' (most files) or " (GRIB1's stepType.def).
ENTRY = re.compile(r"""(?:'([^']*)'|"([^"]*)")\s*=\s*\{(.*?)\}""", re.S)
CONDITION = re.compile(r"([A-Za-z_0-9]+)\s*=\s*([^;]+);")


def condition_value(text):
    text = text.strip()
    if text == "missing()":
        return "M"
    for quote in "\"'":
        if len(text) >= 2 and text[0] == text[-1] == quote and text.count(quote) == 2:
            return '"' + text[1:-1] + '"'  # a string key's value, kept quoted
    if text.startswith("["):
        return ",".join(str(int(v)) for v in text.strip("[]").split(","))
    return str(int(text))


def concept_lines(text):
    text = "\n".join(line.split("#", 1)[0] for line in text.splitlines())
    for single, double, body in ENTRY.findall(text):
        value = single or double
        conditions = ";".join(f"{k}={condition_value(v)}" for k, v in CONDITION.findall(body))
        if "|" in value or "\n" in value:
            sys.exit(f"a value make.py cannot write: {value!r}")
        yield f"{value}|{conditions}"


def table_lines(text):
    for line in text.splitlines():
        line = line.split("#", 1)[0].strip()
        parts = line.split(None, 2)
        if len(parts) >= 2 and parts[0].isdigit():
            description = parts[2] if len(parts) > 2 else ""
            yield f"{parts[0]}|{parts[1]}|{description.strip()}"


def centre_abbreviations(paths):
    """The abbreviations of code table C-11 (the centres), which name the centres' local concepts."""
    return {line.split("|")[1] for line in table_lines(export("common/c-11.table")) if "|" in line}


def main():
    paths = memfs_paths()
    version = eccodeslib.__version__ if hasattr(eccodeslib, "__version__") else "?"
    header = (
        f"# eccodes {version}'s definitions (Apache-2.0, (C) ECMWF), written by make.py; do not edit\n"
    )
    centres = centre_abbreviations(paths)
    pool, blocks = {}, []
    for path in paths:
        match = CONCEPT_FILE.match(path)
        if not match or match.group(3) == ".chemsplit":
            continue
        local = match.group(1)
        if local and local.split("/")[1] not in centres:
            continue
        blocks.append(f"@{path}")
        for line in concept_lines(export(path)):
            value, conditions = line.split("|", 1)
            number = pool.setdefault(conditions, len(pool))
            blocks.append(f"{value}|{number}")
    text = header + "%conditions\n" + "".join(c + "\n" for c in pool) + "".join(b + "\n" for b in blocks)
    with open(HERE / "concepts.txt.gz", "wb") as out:
        out.write(gzip.compress(text.encode(), compresslevel=9, mtime=0))
    with open(HERE / "codes.txt", "w") as out:
        out.write(header)
        for path in paths:
            if CODE_TABLE.match(path):
                out.write(f"@{path}\n")
                for line in table_lines(export(path)):
                    out.write(line + "\n")


if __name__ == "__main__":
    main()
