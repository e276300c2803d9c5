#!/usr/bin/env bash
# Scan and combine the 100 NetCDF files of run.sh over HTTP, through a proxy
# that adds 20 ms to every request and counts them: ours, kerchunk's and
# VirtualiZarr's side by side.
#
#   benches/scan/http.sh PYTHON [FOLDER]
#
# PYTHON has netCDF4, kerchunk 0.2.10 (with zarr 3.1), fsspec, aiohttp, and
# VirtualiZarr 2.5 with obstore;
# FOLDER (default /tmp/scan-series-netcdf4) holds f000.nc..f099.nc (run.sh
# makes them). nginx serves the folder on 127.0.0.1:8795; the proxy
# (benches/tools/small_chunks.py) listens on 127.0.0.1:8766.
set -euo pipefail
python="$1"
folder="${2:-/tmp/scan-series-netcdf4}"
here="$(cd "$(dirname "$0")" && pwd)"
[ -e "$folder/f099.nc" ] || "$python" "$here/make_series.py" "$folder" netcdf4
# The servers (nginx behind the proxy), a scratch folder and the release binary.
. "$here/serve.sh"
urls=()
for n in $(seq -f "%03g" 0 99); do urls+=("http://127.0.0.1:8766/f$n.nc"); done
uptime
for run in 1 2 3; do
    echo "ours: $("$python" "$here/../tools/small_chunks.py" run -- /usr/bin/time -f '{"peak_kib": %M}' -o "$work/ours.time" \
        "$bin" scan "${urls[@]}" --concat time -o "$work/ours.json") $(cat "$work/ours.time")"
    echo "kerchunk: $("$python" "$here/../tools/small_chunks.py" run -- /usr/bin/time -f '{"peak_kib": %M}' -o "$work/kerchunk.time" \
        "$python" "$here/kerchunk_series.py" http://127.0.0.1:8766/ "$work/kerchunk.json") $(cat "$work/kerchunk.time")"
    echo "virtualizarr: $("$python" "$here/../tools/small_chunks.py" run -- /usr/bin/time -f '{"peak_kib": %M}' -o "$work/vz.time" \
        "$python" "$here/virtualizarr_series.py" http://127.0.0.1:8766/ "$work/virtualizarr.json") $(cat "$work/vz.time")"
done
python3 - "$work" <<'PY'
import json, os, sys
ours = json.load(open(os.path.join(sys.argv[1], "ours.json")))["refs"]
theirs = json.load(open(os.path.join(sys.argv[1], "kerchunk.json")))["refs"]
ranges = [k for k, v in theirs.items() if isinstance(v, list)]
same = sum(isinstance(ours.get(k), list) and ours[k][1:] == theirs[k][1:] and ours[k][0] == theirs[k][0] for k in ranges)
print(f"keys: {len(ours)} ours, {len(theirs)} kerchunk's, {len(set(ours) ^ set(theirs))} not in both; "
      f"{same} of {len(ranges)} ranges with kerchunk's URL, offset and length")
PY
