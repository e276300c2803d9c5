#!/usr/bin/env bash
# Scan an HRRR-sized GRIB2 file (make_grib.py: 120 messages, 1799 x 1059 points, 233 MB) with
# ours and with kerchunk's scan_grib + grib_tree, side by side: locally, then over HTTP
# through a proxy that adds 20 ms to every request and counts them (ours walking the
# messages, and ours from the .idx beside the file).
#
#   benches/scan/grib.sh PYTHON [FOLDER]
#
# PYTHON has eccodes, kerchunk 0.2.10, fsspec and aiohttp; FOLDER (default /tmp/scan-grib)
# gets hrrr.grib2 and hrrr.grib2.idx (made if missing), and f00..f23.grib2, links to it.
# With GRIBBERISH_PYTHON set (a Python with `pip install gribberish`), gribberish's metadata
# pass over the same file (gribberish_grib.py) runs beside them.
set -euo pipefail
python="$1"
folder="${2:-/tmp/scan-grib}"
here="$(cd "$(dirname "$0")" && pwd)"
mkdir -p "$folder"
[ -e "$folder/hrrr.grib2" ] || "$python" "$here/make_grib.py" "$folder/hrrr.grib2"
for n in $(seq -f "%02g" 0 23); do
    ln -sf hrrr.grib2 "$folder/f$n.grib2"
done
. "$here/serve.sh"
uptime
echo "== one file, local"
for run in 1 2 3; do
    /usr/bin/time -f '{"wall_s": %e, "peak_kib": %M}' "$bin" scan "$folder/hrrr.grib2" --no-idx -o "$work/ours.json" 2>&1 | tail -1
done
/usr/bin/time -f '{"wall_s": %e, "peak_kib": %M}' "$python" "$here/kerchunk_grib.py" "$work/kerchunk.json" "$folder/hrrr.grib2" 2>&1 | tail -2
if [ -n "${GRIBBERISH_PYTHON:-}" ]; then
    for run in 1 2 3; do
        /usr/bin/time -f '{"wall_s": %e, "peak_kib": %M}' "$GRIBBERISH_PYTHON" "$here/gribberish_grib.py" "$folder/hrrr.grib2" 2>&1 | tail -2
    done
fi
echo "== 24 files, local (ours: one process a file)"
/usr/bin/time -f '{"wall_s": %e}' bash -c "for n in \$(seq -f '%02g' 0 23); do '$bin' scan '$folder/f'\$n'.grib2' --no-idx -o '$work/f'\$n'.json' > /dev/null 2>&1; done" 2>&1 | tail -1
echo "== one file over the 20 ms proxy"
for run in 1 2 3; do
    echo "ours, walking: $("$python" "$here/../tools/small_chunks.py" run -- "$bin" scan http://127.0.0.1:8766/hrrr.grib2 --no-idx -o "$work/ours-http.json")"
    echo "ours, .idx: $("$python" "$here/../tools/small_chunks.py" run -- "$bin" scan http://127.0.0.1:8766/hrrr.grib2 -o "$work/ours-idx.json")"
done
echo "kerchunk: $("$python" "$here/../tools/small_chunks.py" run -- "$python" "$here/kerchunk_grib.py" "$work/kerchunk-http.json" http://127.0.0.1:8766/hrrr.grib2)"
python3 - "$work" <<'PY'
import json, os, sys
work = sys.argv[1]
ours = json.load(open(os.path.join(work, "ours.json")))["refs"]
theirs = json.load(open(os.path.join(work, "kerchunk.json")))["refs"]
def ranges(refs):
    return {tuple(v[1:]) for k, v in refs.items() if isinstance(v, list) and k.split("/")[0] == k.split("/")[-2]}
print(f"data ranges: {len(ranges(ours))} ours, {len(ranges(theirs))} kerchunk's, {len(ranges(ours) ^ ranges(theirs))} not in both")
idx = json.load(open(os.path.join(work, "ours-idx.json")))["refs"]
print("the .idx gives the walk's references:", json.load(open(os.path.join(work, "ours-http.json")))["refs"] == idx)
PY
