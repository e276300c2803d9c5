#!/usr/bin/env bash
# References from the DMR++ sidecars of 100 NetCDF-4 files, ours and VirtualiZarr's
# DMRPPParser, side by side, combined along time.
#
#   benches/scan/dmrpp.sh PYTHON [FOLDER]
#
# PYTHON has netCDF4, h5py and VirtualiZarr 2.8 with obstore; FOLDER (default
# /tmp/scan-series-netcdf4) receives make_series.py's NetCDF-4 series on the first run, and
# each file's sidecar (tests/scan/dmrpp/build.py, from h5py's chunk index).
set -euo pipefail
python="$1"
folder="${2:-/tmp/scan-series-netcdf4}"
here="$(cd "$(dirname "$0")" && pwd)"
[ -e "$folder/f099.nc" ] || "$python" "$here/make_series.py" "$folder" netcdf4
[ -e "$folder/f099.nc.dmrpp" ] || "$python" - "$folder" "$here/../../tests/scan/dmrpp" <<'PY'
import sys
from pathlib import Path
sys.path.insert(0, sys.argv[2])
import build
for n in range(100):
    build.sidecar(Path(sys.argv[1]) / f"f{n:03d}.nc")
PY
cargo build --quiet --release --bin zarrs-kerchunk
bin="$(cargo metadata --format-version 1 --no-deps | python3 -c 'import json, sys; print(json.load(sys.stdin)["target_directory"])')/release/zarrs-kerchunk"
uptime
for run in 1 2 3; do
    /usr/bin/time -f "ours: %e s wall, %M KiB peak" "$bin" scan "$folder"/f*.nc.dmrpp --concat time -o "$folder/ours-dmrpp.json"
    /usr/bin/time -f "virtualizarr: %e s wall, %M KiB peak" "$python" "$here/virtualizarr_dmrpp.py" "$folder" "$folder/virtualizarr-dmrpp.json"
done
uptime
python3 - "$folder" <<'PY'
import json, os, sys
ours = json.load(open(os.path.join(sys.argv[1], "ours-dmrpp.json")))["refs"]
vz = json.load(open(os.path.join(sys.argv[1], "virtualizarr-dmrpp.json")))["refs"]
ranges = [k for k, v in vz.items() if isinstance(v, list)]
same = sum(isinstance(ours.get(k), list) and ours[k][1:] == vz[k][1:] for k in ranges)
print(f"keys: {len(ours)} ours, {len(vz)} VirtualiZarr's, {len(set(ours) ^ set(vz))} not in both; "
      f"{same} of {len(ranges)} of VirtualiZarr's ranges with our offset and length")
PY
