#!/usr/bin/env bash
# Scan one HDF5 file of 10^5 chunks, ours, kerchunk's SingleHdf5ToZarr and
# VirtualiZarr's HDFParser, locally and over HTTP through the 20 ms proxy (as
# http.sh). VirtualiZarr inlines nothing: ours with --inline-threshold 0 is its row's match.
#
#   benches/scan/large.sh PYTHON [FOLDER]
set -euo pipefail
python="$1"
folder="${2:-/tmp/scan-large}"
here="$(cd "$(dirname "$0")" && pwd)"
[ -e "$folder/large_latest.h5" ] || "$python" "$here/make_large.py" "$folder"
# The servers (nginx behind the proxy), a scratch folder and the release binary.
. "$here/serve.sh"
kerchunk() { # FILE-OR-URL OUT
    "$python" -c '
import json, sys, warnings
warnings.simplefilter("ignore")
from kerchunk.hdf import SingleHdf5ToZarr
json.dump(SingleHdf5ToZarr(sys.argv[1], inline_threshold=500).translate(), open(sys.argv[2], "w"))' "$1" "$2"
}
export -f kerchunk
export python
uptime
for file in large.h5 large_latest.h5; do
    for run in 1 2; do
        /usr/bin/time -f "ours, $file, local: %e s wall, %M KiB peak" "$bin" scan "$folder/$file" -o "$work/ours.json" 2>&1 | grep -v "references to"
        /usr/bin/time -f "kerchunk, $file, local: %e s wall, %M KiB peak" bash -c "kerchunk $folder/$file $work/kerchunk.json"
        /usr/bin/time -f "ours, nothing inline, $file, local: %e s wall, %M KiB peak" "$bin" scan "$folder/$file" --inline-threshold 0 -o "$work/ours0.json" 2>&1 | grep -v "references to"
        /usr/bin/time -f "virtualizarr, $file, local: %e s wall, %M KiB peak" "$python" "$here/virtualizarr_one.py" "$folder/$file" "$work/virtualizarr.json" 2>&1 | grep -v "^virtualizarr: open"
        echo "ours, $file, proxy: $("$python" "$here/../tools/small_chunks.py" run -- "$bin" scan "http://127.0.0.1:8766/$file" -o "$work/ours_http.json")"
        echo "ours, nothing inline, $file, proxy: $("$python" "$here/../tools/small_chunks.py" run -- "$bin" scan "http://127.0.0.1:8766/$file" --inline-threshold 0 -o "$work/ours0_http.json")"
        echo "kerchunk, $file, proxy: $("$python" "$here/../tools/small_chunks.py" run -- bash -c "kerchunk http://127.0.0.1:8766/$file $work/kerchunk_http.json")"
        echo "virtualizarr, $file, proxy: $("$python" "$here/../tools/small_chunks.py" run -- "$python" "$here/virtualizarr_one.py" "http://127.0.0.1:8766/$file" "$work/virtualizarr_http.json" 2>/dev/null)"
    done
    python3 - "$work" <<'PY'
import json, os, sys
ours = json.load(open(os.path.join(sys.argv[1], "ours.json")))["refs"]
theirs = json.load(open(os.path.join(sys.argv[1], "kerchunk.json")))["refs"]
ranges = [k for k, v in theirs.items() if isinstance(v, list)]
same = sum(isinstance(ours.get(k), list) and ours[k][1:] == theirs[k][1:] for k in ranges)
print(f"keys: {len(ours)} ours, {len(theirs)} kerchunk's, {len(set(ours) ^ set(theirs))} not in both; "
      f"{same} of {len(ranges)} ranges with kerchunk's offset and length")
ours0 = json.load(open(os.path.join(sys.argv[1], "ours0.json")))["refs"]
vz = json.load(open(os.path.join(sys.argv[1], "virtualizarr.json")))["refs"]
chunk_keys = [k for k in vz if isinstance(vz[k], list)]
same = sum(isinstance(ours0.get(k), list) and ours0[k][1:] == vz[k][1:] for k in chunk_keys)
print(f"virtualizarr: {len(chunk_keys)} ranges, {same} with our offset and length (nothing inline)")
PY
done
