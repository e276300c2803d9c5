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
# ZK_MEMBERS=M combines along two dimensions instead: M members from the names (a new first
# axis) outside time, each member the first N/M files linked as mK_fNNNNN.nc (N files in all).
set -euo pipefail
python="$1"
count="${2:-10000}"
folder="${3:-/tmp/scan-dense-$count}"
here="$(cd "$(dirname "$0")" && pwd)"
[ -e "$folder/$(printf 'f%05d.nc' $((count - 1)))" ] || "$python" "$here/make_many.py" "$folder" "$count" 125
members="${ZK_MEMBERS:-}"
combine=(--concat time)
[ -z "$members" ] || combine+=(--coord 'member=name:^m(\d+)_f')
# The files of FOLDER: N (each member N/M), or a tenth of them, linked.
link() {
    local into="$1" total="$2" k n
    [ ! -d "$into" ] || return 0
    mkdir -p "$into"
    for k in $(seq 0 $((${members:-1} - 1))); do
        local prefix=""
        [ -z "$members" ] || prefix="m${k}_"
        for n in $(seq 0 $((total / ${members:-1} - 1))); do
            local file
            file="$(printf 'f%05d.nc' "$n")"
            ln -s "$folder/$file" "$into/$prefix$file"
        done
    done
}
sets="$folder/set${members:+-members-$members}"
link "$sets" "$count"
tenth="$sets/tenth"
link "$tenth" $((count / 10))
if [ "${ZK_BINARY:-release}" = debug ]; then
    bin="$(bash "$here/../../tests/binary.sh")"
else
    cargo build --quiet --release --bin zarrs-kerchunk
    bin="$(cargo metadata --format-version 1 --no-deps | python3 -c 'import json, sys; print(json.load(sys.stdin)["target_directory"])')/release/zarrs-kerchunk"
fi
# timed LABEL LINES COMMAND...: run COMMAND under /usr/bin/time, show its last LINES lines (the
# report and the time); if it fails, all it printed, and stop.
timed() {
    local label="$1" lines="$2" log="$folder/run.log"
    shift 2
    if ! /usr/bin/time -f "$label: %e s wall, %M KiB peak" "$@" > "$log" 2>&1; then
        cat "$log"
        exit 1
    fi
    tail -"$lines" "$log"
}
uptime
for files in "$sets" "$tenth"; do
    n="$(find "$files" -maxdepth 1 -name '*f*.nc' | wc -l)"
    rm -rf "$folder"/out-*.parq
    if [ -n "${ZK_BEFORE:-}" ]; then
        timed "$n files, before" 1 "$ZK_BEFORE" scan "$files/*f*.nc" "${combine[@]}" -o "$folder/out-before.parq"
    fi
    for memory in 64 0; do
        timed "$n files, --combine-memory $memory" 2 \
            "$bin" scan "$files/*f*.nc" "${combine[@]}" --combine-memory "$memory" -o "$folder/out-$memory.parq"
    done
    for other in "$folder"/out-*.parq; do diff -r "$folder/out-0.parq" "$other" > /dev/null; done
    echo "$n files: every root the same"
done
uptime
