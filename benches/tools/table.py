#!/usr/bin/env python3
"""Turn the log of table.sh into the README's performance table (Markdown on stdout).

    python3 benches/tools/table.py table.log
    python3 benches/tools/table.py --all table.log   # every record with its load (the README's second table)

Each cell is the median whole-process wall time (and the median peak RSS where it says
something: loading references); the last column is ours against the fastest peer of the row.
Only the standard library is used.
"""
import json
import re
import sys

READERS = ["ours", "fsspec", "gdal", "icechunk", "virtualizarr", "zarrita"]
TITLES = {
    "ours": "`zarrs_kerchunk`",
    "fsspec": "fsspec + zarr",
    "gdal": "GDAL",
    "icechunk": "icechunk (\\*)",
    "virtualizarr": "VirtualiZarr",
    "zarrita": "zarrita.js",
}
ROWS = [
    ("load-json 1e6", "load a 10^6-reference v0 JSON (65 MB), read one key", True),
    ("open-parquet 1e6", "open a 10^6-reference parquet root, 100 random lookups", True),
    ("read-full", "read the whole 1 GiB array, local", False),
    ("read-full-zlib", "the same, zlib chunks", False),
    ("read-full --http", "read the whole array over HTTP (nginx, loopback)", False),
    ("read-full-zlib --http", "the same, zlib chunks", False),
    ("read-random 1000", "1000 random single-chunk reads, local", False),
    ("read-random 1000 --zlib", "the same, zlib chunks", False),
    ("read-random 1000 --http", "the same over HTTP", False),
]


def workload_of(reader, command):
    """The peer_bench.py workload a logged command runs (its subcommand and flags)."""
    words = command.split()
    for i, word in enumerate(words):
        if word in ("load-json", "load-v1", "open-parquet", "read-full", "read-full-zlib", "read-random"):
            rest = [w for w in words[i:] if w not in ("--mode", "slice", "--concurrency", "10")]
            return " ".join(rest)
    return command


def parse(path):
    records = {}
    header = None
    for line in open(path, encoding="utf-8"):
        m = re.match(r"== (\w+): (.*)", line)
        if m:
            header = (m.group(1), m.group(2).strip())
            continue
        if header and line.startswith("{"):
            reader, command = header
            # The row's own record comes first; later records of the same workload are the
            # log's extra rows (other settings, other environments) and must not replace it.
            records.setdefault((reader, workload_of(reader, command)), json.loads(line))
            header = None
    return records


def cell(record, memory):
    """A cell's text: the median wall time (and peak memory), or why there is none."""
    if record is None:
        return "n/a"
    if "error" in record or any(record.get("rc", [])):
        return "fails"
    text = f"{record['wall_median']:.2f} s"
    if memory:
        text += f", {record['peak_mib']} MiB"
    return text


def extras(path):
    """Every record of the log, in order, with its load: the README's second table is read from these."""
    header = None
    for line in open(path, encoding="utf-8"):
        m = re.match(r"== (\w+): (.*)", line)
        if m:
            header = (m.group(1), m.group(2).strip())
        elif header and line.startswith("{"):
            r = json.loads(line)
            if "wall_median" not in r and "error" not in r:
                print(f"{header[0]:12} {header[1][-90:]:90} {line.strip()}")
            elif "error" in r:
                print(f"{header[0]:12} {header[1][-90:]:90} error: {r['error'][-80:]}")
            else:
                lo, hi = r["wall_min_max"]
                print(f"{header[0]:12} {header[1][-90:]:90} {r['wall_median']:.2f} s ({lo:.2f}-{hi:.2f}), "
                      f"{r['peak_mib']} MiB, load {r['load']}")
            header = None


def main():
    if sys.argv[1] == "--all":
        extras(sys.argv[2])
        return
    records = parse(sys.argv[1])
    print("| workload | " + " | ".join(TITLES[r] for r in READERS) + " | ours vs the fastest peer |")
    print("|---" * (len(READERS) + 2) + "|")
    for workload, title, memory in ROWS:
        cells = [cell(records.get((r, workload)), memory) for r in READERS]
        ours = records.get(("ours", workload))
        peers = [(records[(r, workload)]["wall_median"], r) for r in READERS[1:]
                 if (r, workload) in records and cell(records[(r, workload)], False) not in ("fails", "n/a")]
        ratio = ""
        if ours and peers:
            best, who = min(peers)
            ratio = f"{best / ours['wall_median']:.1f}x faster than {TITLES[who]}"
        print(f"| {title} | " + " | ".join(cells) + f" | {ratio} |")


if __name__ == "__main__":
    main()
