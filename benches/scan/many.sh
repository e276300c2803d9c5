#!/usr/bin/env bash
# Scan and combine N small NetCDF-4 files along time, ours and kerchunk's
# (SingleHdf5ToZarr per file, then MultiZarrToZarr), side by side, on one machine.
#
#   benches/scan/many.sh PYTHON N [FOLDER]
#
# PYTHON has netCDF4 and kerchunk 0.2.10 (with zarr 3.1); FOLDER (default
# /tmp/scan-many-N) receives the files on the first run.
set -euo pipefail
python="$1"
count="$2"
folder="${3:-/tmp/scan-many-$count}"
here="$(cd "$(dirname "$0")" && pwd)"
last="$(printf 'f%05d.nc' $((count - 1)))"
[ -e "$folder/$last" ] || "$python" "$here/make_many.py" "$folder" "$count"
cargo build --quiet --release --bin zarrs-kerchunk
bin="$(cargo metadata --format-version 1 --no-deps | python3 -c 'import json, sys; print(json.load(sys.stdin)["target_directory"])')/release/zarrs-kerchunk"
uptime
for run in 1 2; do
    /usr/bin/time -f "ours: %e s wall, %M KiB peak" "$bin" scan "$folder/f*.nc" --concat time -o "$folder/ours.json"
done
/usr/bin/time -f "kerchunk: %e s wall, %M KiB peak" "$python" "$here/kerchunk_series.py" "$folder" "$folder/kerchunk.json"
python3 - "$folder" <<'PY'
import json, os, sys
ours = json.load(open(os.path.join(sys.argv[1], "ours.json")))["refs"]
theirs = json.load(open(os.path.join(sys.argv[1], "kerchunk.json")))["refs"]
ranges = [k for k, v in theirs.items() if isinstance(v, list)]
same = sum(isinstance(ours.get(k), list) and ours[k][1:] == theirs[k][1:] for k in ranges)
print(f"keys: {len(ours)} ours, {len(theirs)} kerchunk's; {same} of {len(ranges)} ranges with kerchunk's offset and length")
PY
