# Sourced by the benchmark drivers (table.sh, ../python/run.sh): `run READER N COMMAND...`
# times COMMAND as N whole processes after a warm-up with peer_bench.py repeat and prints one
# record, a `== READER: COMMAND` line and one JSON line (median wall time, min/max, peak RSS,
# the load, and the medians of the in-process figures the command printed).
# Needs PY (a Python with the peer's stack), PEER (peer_bench.py) and root (the corpus).
run() {
  local reader=$1 n=$2; shift 2
  echo "== $reader: $*"
  echo "   load $(cut -d' ' -f1-3 /proc/loadavg)" >&2
  "$PY" "$PEER" --root "$root" repeat -n "$n" --warmup 1 -- "$@" 2>&1 | "$PY" -c '
import json, sys
text = sys.stdin.read()
try:
    j = json.loads(text)
except ValueError:
    print(json.dumps({"error": text.strip()[-300:]}))
    sys.exit()
i = j.get("inner_min_median_max", {})
keys = ("open_s", "read_s", "lookup_s", "prefetch_s", "bytes_per_ref", "table_mib", "worker_peak_mib", "maxrss_mib")
pick = {k: i[k][1] for k in keys if k in i}
print(json.dumps({"wall_median": j["wall_s"][1], "wall_min_max": [j["wall_s"][0], j["wall_s"][2]],
                  "peak_mib": round(j["peak_mib"][1]), "rc": j["rc"], "load": open("/proc/loadavg").read().split()[0], **pick}))'
}
