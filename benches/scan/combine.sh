#!/usr/bin/env bash
# Combine N per-file reference sets (kerchunk's SingleHdf5ToZarr JSONs of make_many.py's small
# NetCDF-4 files) along time: ours (`zarrs-kerchunk combine`) against kerchunk's
# MultiZarrToZarr, side by side on one machine, with the coordinates inline (kerchunk's
# default threshold) and as ranges (inline_threshold=0, which both must read from the files).
#
#   benches/scan/combine.sh PYTHON N [FOLDER]
#
# PYTHON has netCDF4 and kerchunk 0.2.10 (with zarr 3.1); FOLDER (default /tmp/combine-N)
# receives the files and their references on the first run (not timed).
set -euo pipefail
python="$1"
count="$2"
folder="${3:-/tmp/combine-$count}"
here="$(cd "$(dirname "$0")" && pwd)"
last="$(printf 'f%05d' $((count - 1)))"
[ -e "$folder/$last.nc" ] || "$python" "$here/make_many.py" "$folder" "$count"
for threshold in 500 0; do
    [ -e "$folder/refs-$threshold/$last.json" ] || "$python" "$here/kerchunk_per_file.py" "$folder" "$threshold"
done
cargo build --quiet --release --bin zarrs-kerchunk
bin="$(cargo metadata --format-version 1 --no-deps | python3 -c 'import json, sys; print(json.load(sys.stdin)["target_directory"])')/release/zarrs-kerchunk"
uptime
for threshold in 500 0; do
    refs="$folder/refs-$threshold"
    echo "== inline_threshold $threshold"
    for run in 1 2 3; do
        /usr/bin/time -f "ours: %e s wall, %M KiB peak" \
            "$bin" combine "$refs/f*.json" --concat time -o "$folder/ours-$threshold.json"
    done
    /usr/bin/time -f "kerchunk: %e s wall, %M KiB peak" \
        "$python" "$here/kerchunk_combine.py" "$refs" "$folder/kerchunk-$threshold.json"
    # The same references: every key of kerchunk's in ours, ranges equal, and the same times.
    "$python" - "$folder/ours-$threshold.json" "$folder/kerchunk-$threshold.json" <<'PY'
import json, os, sys
import numpy as np
import xarray as xr
ours, theirs = (json.load(open(path))["refs"] for path in sys.argv[1:3])
# Ours names the files relative to the references (they lie beside them); fsspec reads a relative
# path from the working folder.
os.chdir(os.path.dirname(sys.argv[1]))
ours = {k: ([os.path.abspath(v[0])] + v[1:] if isinstance(v, list) else v) for k, v in ours.items()}
ranges = [k for k, v in theirs.items() if isinstance(v, list)]
same = sum(ours.get(k) == theirs[k] for k in ranges)
opened = [xr.open_dataset("reference://", engine="zarr", backend_kwargs={
    "consolidated": False, "storage_options": {"fo": path, "remote_protocol": "file"}}) for path in sys.argv[1:3]]
equal = all(np.array_equal(opened[0][v].values, opened[1][v].values) for v in ["time", "lat", "lon", "tas"])
print(f"keys: {len(ours)} ours, {len(theirs)} kerchunk's; {same} of {len(ranges)} of kerchunk's ranges the same in ours; "
      f"time, lat, lon and tas read equal through fsspec: {equal}")
PY
done
