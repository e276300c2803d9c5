#!/usr/bin/env bash
# Two builds of refbench side by side, in one run: each workload timed for the
# "before" binary, then the "after" one, by peer_bench.py repeat (median of N
# after a warm-up, whole processes, peak RSS). For before/after claims.
#
#   PY=/path/to/venv/bin/python benches/tools/compare.sh BEFORE_REFBENCH AFTER_REFBENCH [N] > compare.log
#
# WORKLOADS (';'-separated, such as 'read-full --http;read-random 1000 --http') picks some.
#
# Needs the corpus (make_synthetic.py --sizes 4,5,6 in /tmp/refbench) and, for
# --http, nginx from `peer_bench.py serve-start`.
set -euo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
before=$1
after=$2
n=${3:-5}
root=${ROOT:-/tmp/refbench}
PY=${PY:-python3}
PEER="$repo/../shared/bench/peer_bench.py"
default="load-json 1e6;load-v1 1e6;open-parquet 1e6;read-full;read-full-zlib;read-full --http;read-random 1000"
default="$default;read-random 1000 --zlib;read-random 1000 --http"
IFS=';' read -ra workloads <<< "${WORKLOADS:-$default}"
for w in "${workloads[@]}"; do
  for side in before after; do
    bin=$before
    [ "$side" = after ] && bin=$after
    printf '%-28s %-6s ' "$w" "$side"
    # shellcheck disable=SC2086
    "$PY" "$PEER" --root "$root" repeat -n "$n" --warmup 1 -- "$bin" --root "$root" $w 2>&1 | "$PY" -c '
import json, sys
j = json.load(sys.stdin)
w, m = j["wall_s"], j["peak_mib"]
print("wall %.3f s (min %.3f, max %.3f)  peak %.0f MiB  rc %s" % (w[1], w[0], w[2], m[1], j["rc"]))'
  done
done
