#!/usr/bin/env bash
# Appending ten files to a set of N (default 10 000) small NetCDF-4 files written as a parquet
# root at kerchunk's record size (10 000 references a record file): in place, where only the
# record files that change are written, and to another root, written whole. Three runs of each,
# each from a fresh copy of the set.
#
#   benches/scan/append.sh PYTHON [N] [FOLDER]
#
# PYTHON has netCDF4 (make_many.py); FOLDER (default /tmp/scan-append-N) receives the files.
# ZK_BINARY=debug takes the test build's binary (tests/binary.sh: dependencies optimised, the
# workspace's crates not) instead of building a release one: slower, so an upper bound.
# ZK_ROWS=R makes the files with R latitude rows, a chunk each (make_many.py's third argument:
# 125 gives 1 000 chunks a file, so 10^7 references at 10 000 files). ZK_BEFORE=PATH appends
# with that binary too, in place, before each run of ours, and compares the two roots.
set -euo pipefail
python="$1"
count="${2:-10000}"
folder="${3:-/tmp/scan-append-$count}"
here="$(cd "$(dirname "$0")" && pwd)"
last="$(printf 'f%05d.nc' $((count + 9)))"
if [ ! -e "$folder/new/$last" ]; then
    "$python" "$here/make_many.py" "$folder" $((count + 10)) ${ZK_ROWS:+"$ZK_ROWS"}
    mkdir -p "$folder/new"
    for n in $(seq "$count" $((count + 9))); do mv "$folder/$(printf 'f%05d.nc' "$n")" "$folder/new/"; done
fi
if [ "${ZK_BINARY:-release}" = debug ]; then
    bin="$(bash "$here/../../tests/binary.sh")"
else
    cargo build --quiet --release --bin zarrs-kerchunk
    bin="$(cargo metadata --format-version 1 --no-deps | python3 -c 'import json, sys; print(json.load(sys.stdin)["target_directory"])')/release/zarrs-kerchunk"
fi
rm -rf "$folder/set.parq"
"$bin" scan "$folder/f*.nc" --concat time --record-size 10000 -o "$folder/set.parq"
uptime
for run in 1 2 3; do
    rm -rf "$folder/copy.parq" "$folder/whole.parq" "$folder/before.parq"
    if [ -n "${ZK_BEFORE:-}" ]; then
        cp -r "$folder/set.parq" "$folder/before.parq"
        /usr/bin/time -f "before, in place: %e s wall, %M KiB peak" \
            "$ZK_BEFORE" scan "$folder/new/f*.nc" --append-to "$folder/before.parq" 2>&1 | grep -v "^$"
    fi
    cp -r "$folder/set.parq" "$folder/copy.parq"
    /usr/bin/time -f "in place: %e s wall, %M KiB peak" \
        "$bin" scan "$folder/new/f*.nc" --append-to "$folder/copy.parq" 2>&1 | grep -v "^$"
    /usr/bin/time -f "written whole: %e s wall, %M KiB peak" \
        "$bin" scan "$folder/new/f*.nc" --append-to "$folder/set.parq" --record-size 10000 -o "$folder/whole.parq" 2>&1 | grep -v "^$"
done
# Both roots hold the same references.
"$bin" convert "$folder/copy.parq" "$folder/copy.json"
"$bin" convert "$folder/whole.parq" "$folder/whole.json"
cmp "$folder/copy.json" "$folder/whole.json" && echo "the same references in both roots"
if [ -n "${ZK_BEFORE:-}" ]; then
    "$bin" convert "$folder/before.parq" "$folder/before.json"
    cmp "$folder/copy.json" "$folder/before.json" && echo "the same references as before's"
fi
