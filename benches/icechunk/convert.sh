#!/usr/bin/env bash
# Converting the 10^6-reference JSON set and parquet root of ../shared/bench into icechunk
# repositories, side by side in one run: ours (`zarrs-kerchunk convert SRC icechunk://DIR`, the
# whole process, in one commit and in parts of 10^5 chunks with `--commit-every`) against
# VirtualiZarr (`icechunk_peer.py prepare --only SRC`: its kerchunk parser, `to_virtual_dataset`,
# `vz.to_icechunk`, commit), each timed with its peak memory (/usr/bin/time). Then each of our
# repositories and VirtualiZarr's are read, the same 200 random chunks through each, by
# icechunk-python, and must be equal.
#
#   PEERS_PY=target/peers-venv/bin/python benches/icechunk/convert.sh [ROOT]
#
# ROOT (default /tmp/refbench) holds make_synthetic.py's corpus (--sizes 6); PEERS_PY is the
# Python 3.12 virtualenv of ../shared/bench/peers/requirements-peers.txt.
set -euo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
root=${1:-/tmp/refbench}
peers_py=${PEERS_PY:-$repo/target/peers-venv/bin/python}
peers="$repo/../shared/bench/peers"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cargo build --quiet --release --bin zarrs-kerchunk
bin="$repo/target/release/zarrs-kerchunk"
uptime
for src in refs_1e6_v0.json refs_1e6.parq; do
    echo "== $src"
    for run in 1 2 3; do
        rm -rf "$work/ours" "$work/parts"
        /usr/bin/time -f "ours: {\"wall_s\": %e, \"peak_kib\": %M}" \
            "$bin" convert "$root/$src" "icechunk://$work/ours" 2>&1 | grep -E '^ours:|error' || true
        /usr/bin/time -f "ours, in parts: {\"wall_s\": %e, \"peak_kib\": %M}" \
            "$bin" convert "$root/$src" "icechunk://$work/parts" --commit-every 100000 2>&1 \
            | grep -E '^ours, in parts:|error' || true
    done
    /usr/bin/time -f "virtualizarr: {\"wall_s\": %e, \"peak_kib\": %M}" "$peers_py" "$peers/icechunk_peer.py" \
        --root "$root" --ic-dir "$work/vz" prepare --only "$src" --force 2>&1 | grep -E '^virtualizarr:|prepare'
    vz="$work/vz/$(echo "$src" | sed 's/\.json$//; s/\.parq$/_parq/')"
    ICECHUNK_LOG=error "$peers_py" "$repo/benches/icechunk/same_chunks.py" "$work/ours" "$vz" "$root"
    ICECHUNK_LOG=error "$peers_py" "$repo/benches/icechunk/same_chunks.py" "$work/parts" "$vz" "$root"
done
