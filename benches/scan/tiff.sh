#!/usr/bin/env bash
# Scan a 10 000 x 10 000 COG with overviews (make_cog.py: uint16, DEFLATE, tiles of 512, five
# overview levels) with ours and with kerchunk's tiff_to_zarr, side by side: locally, then
# over HTTP through a proxy that adds 20 ms to every request and counts them.
#
#   benches/scan/tiff.sh PYTHON [FOLDER]
#
# PYTHON has rasterio, kerchunk 0.2.10, tifffile, fsspec and aiohttp; FOLDER (default
# /tmp/scan-tiff) gets cog.tif (made if missing).
set -euo pipefail
python="$1"
folder="${2:-/tmp/scan-tiff}"
here="$(cd "$(dirname "$0")" && pwd)"
mkdir -p "$folder"
[ -e "$folder/cog.tif" ] || "$python" "$here/make_cog.py" "$folder/cog.tif"
. "$here/serve.sh"
uptime
ls -la "$folder/cog.tif"
echo "== local"
for run in 1 2 3; do
    /usr/bin/time -f '{"wall_s": %e, "peak_kib": %M}' "$bin" scan "$folder/cog.tif" -o "$work/ours.json" 2>&1 | tail -2
    /usr/bin/time -f '{"wall_s": %e, "peak_kib": %M}' "$python" "$here/kerchunk_tiff.py" "$work/kerchunk.json" "$folder/cog.tif" 2>&1 | tail -2
done
echo "== over the 20 ms proxy"
for run in 1 2 3; do
    echo "ours: $("$python" "$here/../tools/small_chunks.py" run -- "$bin" scan http://127.0.0.1:8766/cog.tif -o "$work/ours-http.json")"
    echo "kerchunk: $("$python" "$here/../tools/small_chunks.py" run -- "$python" "$here/kerchunk_tiff.py" "$work/kerchunk-http.json" http://127.0.0.1:8766/cog.tif)"
done
python3 - "$work" <<'PY'
import json, os, sys
work = sys.argv[1]
ours = json.load(open(os.path.join(work, "ours.json")))["refs"]
theirs = json.load(open(os.path.join(work, "kerchunk.json")))
def ranges(refs):
    return {tuple(v[1:]) for k, v in refs.items() if isinstance(v, list) and len(v) == 3}
print(f"tile ranges: {len(ranges(ours))} ours, {len(ranges(theirs))} kerchunk's, {len(ranges(ours) ^ ranges(theirs))} not in both")
PY
