#!/usr/bin/env bash
# Scan one HDF5 file of 10^5 chunks, ours and kerchunk's SingleHdf5ToZarr,
# locally and over HTTP through the 20 ms proxy (as http.sh).
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
        echo "ours, $file, proxy: $("$python" "$here/../tools/small_chunks.py" run -- "$bin" scan "http://127.0.0.1:8766/$file" -o "$work/ours_http.json")"
        echo "kerchunk, $file, proxy: $("$python" "$here/../tools/small_chunks.py" run -- bash -c "kerchunk http://127.0.0.1:8766/$file $work/kerchunk_http.json")"
    done
    python3 - "$work" <<'PY'
import json, os, sys
ours = json.load(open(os.path.join(sys.argv[1], "ours.json")))["refs"]
theirs = json.load(open(os.path.join(sys.argv[1], "kerchunk.json")))["refs"]
ranges = [k for k, v in theirs.items() if isinstance(v, list)]
same = sum(isinstance(ours.get(k), list) and ours[k][1:] == theirs[k][1:] for k in ranges)
print(f"keys: {len(ours)} ours, {len(theirs)} kerchunk's, {len(set(ours) ^ set(theirs))} not in both; "
      f"{same} of {len(ranges)} ranges with kerchunk's offset and length")
PY
done
