#!/usr/bin/env bash
# Scan and combine 100 NetCDF files, ours and kerchunk's, side by side.
#
#   benches/scan/run.sh PYTHON [FOLDER] [FORMAT]
#
# PYTHON has netCDF4 and kerchunk 0.2.10 (with zarr 3.1), and for netcdf4
# VirtualiZarr 2.5 with obstore; FOLDER (default
# /tmp/scan-series-FORMAT) receives the files on the first run; FORMAT is
# netcdf3 (the default, 2.9 GB) or netcdf4 (compressed chunks).
set -euo pipefail
python="$1"
format="${3:-netcdf3}"
folder="${2:-/tmp/scan-series-$format}"
here="$(cd "$(dirname "$0")" && pwd)"
[ -e "$folder/f099.nc" ] || "$python" "$here/make_series.py" "$folder" "$format"
cargo build --quiet --release --bin zarrs-kerchunk
bin="$(cargo metadata --format-version 1 --no-deps | python3 -c 'import json, sys; print(json.load(sys.stdin)["target_directory"])')/release/zarrs-kerchunk"
uptime
for run in 1 2 3; do
    /usr/bin/time -f "ours: %e s wall, %M KiB peak" "$bin" scan "$folder"/f*.nc --concat time -o "$folder/ours.json"
    /usr/bin/time -f "kerchunk: %e s wall, %M KiB peak" "$python" "$here/kerchunk_series.py" "$folder" "$folder/kerchunk.json"
    if [ "$format" = netcdf4 ]; then
        /usr/bin/time -f "virtualizarr: %e s wall, %M KiB peak" "$python" "$here/virtualizarr_series.py" "$folder" "$folder/virtualizarr.json"
    fi
done
python3 - "$folder" <<'PY'
import json, os, sys
ours = json.load(open(os.path.join(sys.argv[1], "ours.json")))["refs"]
theirs = json.load(open(os.path.join(sys.argv[1], "kerchunk.json")))["refs"]
ranges = [k for k, v in theirs.items() if isinstance(v, list)]
same = sum(isinstance(ours.get(k), list) and ours[k][1:] == theirs[k][1:] for k in ranges)
print(f"keys: {len(ours)} ours, {len(theirs)} kerchunk's, {len(set(ours) ^ set(theirs))} not in both; "
      f"{same} of {len(ranges)} ranges with kerchunk's offset and length")
vz_path = os.path.join(sys.argv[1], "virtualizarr.json")
if os.path.exists(vz_path):
    vz = json.load(open(vz_path))["refs"]
    ranges = [k for k, v in vz.items() if isinstance(v, list)]
    same = sum(isinstance(ours.get(k), list) and ours[k][1:] == vz[k][1:] for k in ranges)
    print(f"keys: {len(vz)} VirtualiZarr's, {len(set(ours) ^ set(vz))} not in ours or not in its; "
          f"{same} of {len(ranges)} ranges with VirtualiZarr's offset and length")
PY
