#!/usr/bin/env bash
# GRIB2 decoding side by side: the `grib` codec of zarrs_kerchunk_codecs against eccodes, through
# kerchunk's codec and through cfgrib, on HRRR-sized messages (1799 x 1059) that eccodes writes.
# Needs python/tests/run.sh's virtualenv with eccodes and cfgrib added.
#
#   bash benches/codecs/run.sh [RUNS]
set -euo pipefail
cd "$(dirname "$0")/../.."
runs="${1:-15}"
python="${ZK_BENCH_PYTHON:-target/python-venv/bin/python}"
out=target/bench-grib
"$python" benches/codecs/make_messages.py "$out"
cargo build --release -q -p zarrs_kerchunk_codecs --example grib_decode
echo "# $(date -u +%FT%TZ), load $(cut -d' ' -f1-3 /proc/loadavg); <file> <decoder> <median ms> <min ms>"
files=("$out"/complex_sd2.grib2 "$out"/simple.grib2 "$out"/png.grib2 "$out"/jpeg.grib2)
# One core each, one after the other.
taskset -c 0 target/release/examples/grib_decode "$runs" "${files[@]}"
taskset -c 0 "$python" benches/codecs/eccodes_decode.py "$runs" "${files[@]}"
# The same values as eccodes', through the Python package's build of the codec (python/tests/build.sh).
"$python" benches/codecs/check_equal.py "${files[@]}"
