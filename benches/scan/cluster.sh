#!/usr/bin/env bash
# Issue 34's cluster figures side by side: N small NetCDF-4 files (default 1 000; make_many.py)
# scanned and combined along time on a Dask LocalCluster of two worker processes, by ours
# (tools.scan(executor=client), and again with combine_memory=64: the same output), kerchunk's
# auto_dask and VirtualiZarr's open_virtual_mfdataset(parallel="dask"), each in a process of its
# own (benches/scan/cluster.py); then the three outputs' chunk references compared.
#
#   benches/scan/cluster.sh OURS_PYTHON PEERS_PYTHON [N] [FOLDER]
#
# OURS_PYTHON has zarrs_kerchunk, kerchunk 0.2.10, h5py, dask and distributed (target/python-venv,
# with h5py added: pip install h5py);
# PEERS_PYTHON has VirtualiZarr 2.x, dask and distributed (target/peers-venv). FOLDER (default
# /tmp/scan-many-N) receives the files on the first run.
set -euo pipefail
ours="$1"
peers="$2"
count="${3:-1000}"
folder="${4:-/tmp/scan-many-$count}"
here="$(cd "$(dirname "$0")" && pwd)"
[ -e "$folder/$(printf 'f%05d.nc' $((count - 1)))" ] || "$ours" "$here/make_many.py" "$folder" "$count"
uptime
"$ours" "$here/cluster.py" ours "$folder" "$count" "$folder/cluster-ours.json"
"$ours" "$here/cluster.py" ours-held "$folder" "$count" "$folder/cluster-ours-held.json"
cmp "$folder/cluster-ours.json" "$folder/cluster-ours-held.json"
"$ours" "$here/cluster.py" kerchunk "$folder" "$count" "$folder/cluster-kerchunk.json"
"$peers" "$here/cluster.py" virtualizarr "$folder" "$count" "$folder/cluster-virtualizarr.json"
uptime
python3 - "$folder" <<'PY'
import json, os, sys
refs = {tool: json.load(open(os.path.join(sys.argv[1], f"cluster-{tool}.json")))["refs"]
        for tool in ["ours", "kerchunk", "virtualizarr"]}
for tool in ["kerchunk", "virtualizarr"]:
    theirs = refs[tool]
    shared = [k for k in theirs if not k.split("/")[-1].startswith(".z") and k in refs["ours"]]
    ranges = [k for k in shared if isinstance(theirs[k], list) and isinstance(refs["ours"][k], list)]
    inline = [k for k in shared if isinstance(theirs[k], str) and isinstance(refs["ours"][k], str)]
    print(f"{tool}: {len(theirs)} keys, ours {len(refs['ours'])}; of the chunk keys both have, "
          f"{sum(refs['ours'][k][1:] == theirs[k][1:] for k in ranges)} of {len(ranges)} ranges both hold the same, "
          f"{sum(refs['ours'][k] == theirs[k] for k in inline)} of {len(inline)} inline both hold the same, "
          f"{len(shared) - len(ranges) - len(inline)} inline in one and a range in the other")
PY
