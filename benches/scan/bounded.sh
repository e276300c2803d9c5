#!/usr/bin/env bash
# Combining many files with bounded memory (issue 34): N NetCDF-4 files (default 10 000) of
# 1 000 chunks each (make_many.py with ROWS=125: 10^7 references at 10 000 files), scanned and
# combined along time into a parquet root, each file's references held in memory up to the
# default 64 MiB (--combine-memory) and all of them read back from disk (--combine-memory 0);
# then the same on a tenth of the files, to show what grows with the number of files. Every
# root must be the same, byte for byte.
#
#   benches/scan/bounded.sh PYTHON [N] [FOLDER]
#
# PYTHON has netCDF4 (make_many.py); FOLDER (default /tmp/scan-dense-N) receives the files.
# ZK_BINARY=debug takes the test build's binary, as append.sh does. ZK_BEFORE=PATH runs a
# binary of an earlier commit beside it (one that combines whole sets, without --combine-memory).
set -euo pipefail
python="$1"
count="${2:-10000}"
folder="${3:-/tmp/scan-dense-$count}"
here="$(cd "$(dirname "$0")" && pwd)"
[ -e "$folder/$(printf 'f%05d.nc' $((count - 1)))" ] || "$python" "$here/make_many.py" "$folder" "$count" 125
# A tenth of the files, linked.
tenth="$folder/tenth"
if [ ! -d "$tenth" ]; then
    mkdir -p "$tenth"
    for n in $(seq 0 $((count / 10 - 1))); do ln -s "$folder/$(printf 'f%05d.nc' "$n")" "$tenth/"; done
fi
if [ "${ZK_BINARY:-release}" = debug ]; then
    bin="$(bash "$here/../../tests/binary.sh")"
else
    cargo build --quiet --release --bin zarrs-kerchunk
    bin="$(cargo metadata --format-version 1 --no-deps | python3 -c 'import json, sys; print(json.load(sys.stdin)["target_directory"])')/release/zarrs-kerchunk"
fi
uptime
for files in "$folder" "$tenth"; do
    n="$(find "$files" -maxdepth 1 -name 'f*.nc' | wc -l)"
    rm -rf "$folder"/out-*.parq
    if [ -n "${ZK_BEFORE:-}" ]; then
        /usr/bin/time -f "$n files, before: %e s wall, %M KiB peak" \
            "$ZK_BEFORE" scan "$files/f*.nc" --concat time -o "$folder/out-before.parq" 2>&1 | tail -1
    fi
    for memory in 64 0; do
        /usr/bin/time -f "$n files, --combine-memory $memory: %e s wall, %M KiB peak" \
            "$bin" scan "$files/f*.nc" --concat time --combine-memory "$memory" -o "$folder/out-$memory.parq" 2>&1 | tail -2
    done
    for other in "$folder"/out-*.parq; do diff -r "$folder/out-0.parq" "$other" > /dev/null; done
    echo "$n files: every root the same"
done
uptime
