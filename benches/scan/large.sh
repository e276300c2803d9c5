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
work="$(mktemp -d)"
mkdir -p "$work/tmp"
cat > "$work/nginx.conf" <<CONF
daemon off;
worker_processes 1;
error_log $work/error.log;
pid $work/nginx.pid;
events { worker_connections 1024; }
http {
    access_log off;
    client_body_temp_path $work/tmp; proxy_temp_path $work/tmp; fastcgi_temp_path $work/tmp;
    uwsgi_temp_path $work/tmp; scgi_temp_path $work/tmp;
    server { listen 127.0.0.1:8795; root $folder; }
}
CONF
nginx -c "$work/nginx.conf" -e "$work/error.log" &
nginx_pid=$!
"$python" "$here/../tools/small_chunks.py" proxy --port 8766 --upstream http://127.0.0.1:8795 --delay-ms 20 &
proxy_pid=$!
trap 'kill $proxy_pid $nginx_pid 2>/dev/null; rm -rf "$work"' EXIT
sleep 2
cargo build --quiet --release --bin zarrs-kerchunk
bin="$(cargo metadata --format-version 1 --no-deps | python3 -c 'import json, sys; print(json.load(sys.stdin)["target_directory"])')/release/zarrs-kerchunk"
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
