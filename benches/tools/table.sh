#!/usr/bin/env bash
# The README's performance table: every workload run by this crate, then by each peer that
# can run it, as whole processes timed by peer_bench.py repeat (median after a warm-up), in
# one run. One record per (reader, workload) goes to the log as a `== reader: command` line
# followed by one JSON line; `table.py` turns the log into the README's table.
#
#   PY=... PEERS_PY=... benches/tools/table.sh [--root /tmp/refbench] > table.log
#   python3 benches/tools/table.py table.log
#
# Readers: ours (crates/zarrs_kerchunk_tools/examples/refbench.rs), fsspec + zarr-python (../shared/bench/peer_bench.py,
# venv from benches/tools/requirements.txt), and the peers of ../shared/bench/peers/: GDAL
# (rasterio's libgdal), icechunk (repositories converted once by `icechunk_peer.py prepare`),
# VirtualiZarr and zarrita.js (PEERS_PY: a Python 3.12 venv from requirements-peers.txt;
# PEERS_NODE_MODULES: `npm ci` of their package.json).
#
# Needs the corpus (make_synthetic.py --sizes 4,5,6,7; small_chunks.py make), nginx from
# `peer_bench.py serve-start` and the proxy from `small_chunks.py proxy` running, and
# `cargo build --release --example refbench`. N (5) runs for ours and fsspec, PEER_N (3) for
# the other peers, whose runs are long (VirtualiZarr parses 10^6 references in ~25 s).
set -euo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
root=/tmp/refbench
[ "${1:-}" = --root ] && root=$2
PY=${PY:-python3}
PEERS_PY=${PEERS_PY:-$repo/target/peers-venv/bin/python}
NODE=${NODE:-node}
export PEERS_NODE_MODULES=${PEERS_NODE_MODULES:-$repo/target/peers-node/node_modules}
N=${N:-5}
PEER_N=${PEER_N:-3}
RB="$repo/target/release/examples/refbench --root $root"
PEER="$repo/../shared/bench/peer_bench.py"
PEERS="$repo/../shared/bench/peers"
SMALL="$repo/benches/tools/small_chunks.py"
AT_1E7="$repo/benches/tools/at_1e7.py"

# shellcheck source=record.sh
source "$repo/benches/tools/record.sh"

# Every reader on one workload (the arguments of peer_bench.py's subcommand).
row() {
  local name=$1
  # shellcheck disable=SC2086
  run ours "$N" $RB "$@"
  # shellcheck disable=SC2086
  run fsspec "$N" "$@"
  local gdal_extra=() zarrita_extra=()
  [ "$name" = read-random ] && gdal_extra=(--mode slice)
  [ "${name#read-full}" != "$name" ] && zarrita_extra=(--concurrency 10)
  if [ "$name" != open-parquet ]; then
    run gdal "$PEER_N" "$PEERS_PY" "$PEERS/gdal_peer.py" --root "$root" "$@" "${gdal_extra[@]}"
    run zarrita "$PEER_N" "$NODE" "$PEERS/zarrita_peer.mjs" --root "$root" "$@" "${zarrita_extra[@]}"
  fi
  run icechunk "$PEER_N" "$PEERS_PY" "$PEERS/icechunk_peer.py" --root "$root" "$@"
  run virtualizarr "$PEER_N" "$PEERS_PY" "$PEERS/vz_peer.py" --root "$root" "$@"
}

for w in "load-json 1e6" "open-parquet 1e6" "read-full" "read-full-zlib" "read-full --http" \
         "read-full-zlib --http" "read-random 1000" "read-random 1000 --zlib" "read-random 1000 --http"; do
  # shellcheck disable=SC2086
  row $w
done
# 10^7 references: ours, fsspec (JSON and parquet) and GDAL (JSON), whose drivers stop at 10^6
# unless run through at_1e7.py (icechunk would first need a conversion of 10^7 references,
# VirtualiZarr parses 10^6 in ~25 s). Then rows that only this crate runs, and the physical limits.
run ours "$N" $RB load-v1 1e6
run ours 3 $RB load-json 1e7
run fsspec "$PEER_N" "$PY" "$AT_1E7" "$PEER" --root "$root" load-json 1e7
run gdal "$PEER_N" "$PEERS_PY" "$AT_1E7" "$PEERS/gdal_peer.py" --root "$root" load-json 1e7
run ours 3 $RB load-v1 1e7
run ours 3 $RB open-parquet 1e7
run fsspec 3 "$PY" "$AT_1E7" "$PEER" --root "$root" open-parquet 1e7
run ours "$N" $RB read-full --http --async
run ours "$N" $RB read-full --http --read-ahead 0
run ours "$N" $RB read-full-zlib --http --read-ahead 0
run ours "$N" $RB read-full --http --prefetch
# The sized zlib codec (codec::register_zlib_codec) with its default inflater (libdeflate)
# and with zlib-rs, and glibc's malloc asked for transparent huge pages (fewer first-touch
# faults of the 1 GiB output).
run ours "$N" $RB read-full-zlib --zlib-codec
run ours "$N" $RB read-full-zlib --zlib-codec --inflater zlib-rs
run ours "$N" $RB read-full-zlib --http --zlib-codec
run ours "$N" $RB read-random 1000 --zlib --zlib-codec
run ours "$N" env GLIBC_TUNABLES=glibc.malloc.hugetlb=1 $RB read-full
run ours "$N" env GLIBC_TUNABLES=glibc.malloc.hugetlb=1 $RB read-full-zlib --zlib-codec
# The inflate limit: one process, whose JSON line holds each inflater's best of three passes.
echo "== ours: $RB inflate-limit"
$RB inflate-limit
run numpy "$N" read-numpy
# curl and our HTTP read next to each other, for their ratio.
run curl "$N" curl -s -o /dev/null http://127.0.0.1:8765/data.bin
run ours "$N" $RB read-full --http
echo "== small chunks through the 20 ms proxy (requests counted by the proxy)"
for i in 1 2 3; do "$PY" "$SMALL" run -- $RB read-small 100000; done
"$PY" "$SMALL" run -- "$PY" "$SMALL" peer --root "$root" --k 100000 --concurrency 100
"$PY" "$SMALL" run -- "$PY" "$SMALL" peer --root "$root" --k 100000
