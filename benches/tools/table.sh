#!/usr/bin/env bash
# The README's performance table: every workload, ours then the peer's, as whole
# processes timed by peer_bench.py repeat (median of 5 after a warm-up), in one run.
#
#   PY=/path/to/venv/bin/python benches/tools/table.sh [--root /tmp/refbench] > table.log
#
# Needs the corpus (make_synthetic.py --sizes 4,5,6,7; small_chunks.py make), nginx from
# `peer_bench.py serve-start` and the proxy from `small_chunks.py proxy` running, and
# `cargo build --release --example refbench`.
set -euo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
root=${2:-/tmp/refbench}
PY=${PY:-python3}
RB="$repo/target/release/examples/refbench --root $root"
PEER="$repo/../shared/bench/peer_bench.py"
SMALL="$repo/benches/tools/small_chunks.py"
run() {
  local n=$1; shift
  echo "== $*"
  "$PY" "$PEER" --root "$root" repeat -n "$n" --warmup 1 -- "$@" 2>&1 | "$PY" -c '
import json, sys
j = json.load(sys.stdin); i = j["inner_min_median_max"]
pick = {k: i[k][1] for k in ("open_s", "read_s", "lookup_s", "prefetch_s", "bytes_per_ref", "table_mib") if k in i}
print(json.dumps({"wall_median": j["wall_s"][1], "wall_min_max": [j["wall_s"][0], j["wall_s"][2]],
                  "peak_mib": round(j["peak_mib"][1]), "rc": j["rc"], **pick}))'
}
for w in "load-json 1e6" "open-parquet 1e6" "read-full" "read-full-zlib" "read-full --http" \
         "read-full-zlib --http" "read-random 1000" "read-random 1000 --zlib" "read-random 1000 --http"; do
  run 5 $RB $w
  run 5 $w
done
run 5 $RB load-v1 1e6
run 3 $RB load-json 1e7
run 1 load-json 1e7
run 3 $RB load-v1 1e7
run 3 $RB open-parquet 1e7
run 3 open-parquet 1e7
run 5 $RB read-full --http --prefetch
run 5 $RB read-full-zlib --http --prefetch
run 5 env RAYON_NUM_THREADS=16 $RB read-full --http
# glibc hands each freed 256 KiB buffer back to the kernel; a raised mmap threshold keeps it.
run 5 env MALLOC_MMAP_THRESHOLD_=4194304 $RB read-random 1000
echo "== numpy.fromfile, curl"
run 5 read-numpy
run 5 curl -s -o /dev/null http://127.0.0.1:8765/data.bin
echo "== small chunks through the 20 ms proxy (requests counted by the proxy)"
for i in 1 2 3; do "$PY" "$SMALL" run -- $RB read-small 100000; done
"$PY" "$SMALL" run -- "$PY" "$SMALL" peer --root "$root" --k 100000 --concurrency 100
"$PY" "$SMALL" run -- "$PY" "$SMALL" peer --root "$root" --k 100000
