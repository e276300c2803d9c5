#!/usr/bin/env bash
# Issue 23's speed table: each workload of xr_bench.py through xarray, by our engine, by
# xarray's zarr engine over our store, and by fsspec's ReferenceFileSystem, and the same
# work through the Rust API (refbench), as whole processes timed side by side by
# peer_bench.py repeat (median after a warm-up), in one run. One record per (reader, workload):
# a `== reader: command` line, then one JSON line.
#
#   benches/python/run.sh [--root /tmp/refbench] > benches/python/table.log
#
# Needs the corpus (../shared/bench/make_synthetic.py --sizes 6), nginx from `peer_bench.py
# serve-start` for --http, the package built with `maturin develop --release` in PY's venv
# (default target/python-venv), `cargo build --release --example refbench`, and for the
# VirtualiZarr and icechunk rows PEERS_PY (default target/peers-venv: Python 3.12 with
# ../shared/bench/peers/requirements-peers.txt and dask/distributed) with the icechunk
# repositories made by `icechunk_peer.py prepare`.
set -euo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
root=/tmp/refbench
[ "${1:-}" = --root ] && root=$2
PY=${PY:-$repo/target/python-venv/bin/python}
PEERS_PY=${PEERS_PY:-$repo/target/peers-venv/bin/python}
PEER_N=${PEER_N:-3}
N=${N:-5}
PEER="$repo/../shared/bench/peer_bench.py"
XR="$repo/benches/python/xr_bench.py"
RB="$repo/target/release/examples/refbench --root $root"

# shellcheck source=../tools/record.sh
source "$repo/benches/tools/record.sh"

# xr_bench workload, then the Rust API's same work (refbench arguments; empty: none).
rows=(
  "open-json 1e6|load-json 1e6"
  "open-parquet 1e6|open-parquet 1e6"
  "mean|read-full"
  "mean --zlib|read-full-zlib"
  "mean --http|read-full --http"
  "mean --zlib --http|read-full-zlib --http"
  "points 1000|read-random 1000"
  "points 1000 --zlib|read-random 1000 --zlib"
  "cluster-mean|"
  "cluster-mean --zlib|"
  "cluster-1e6|"
  "cluster-1e6 --parquet|"
)
for row in "${rows[@]}"; do
  workload=${row%%|*} rust=${row#*|}
  for reader in engine store fsspec; do
    # shellcheck disable=SC2086
    run "$reader" "$N" "$PY" "$XR" --root "$root" --reader "$reader" $workload
  done
  for reader in virtualizarr icechunk; do
    # VirtualiZarr builds a parquet root's whole manifest first (minutes for 10^6 references,
    # as `icechunk_peer.py prepare` shows): left out of the parquet rows unless ALL_PEERS is set.
    [ "$reader" = virtualizarr ] && [ "${workload#*parquet}" != "$workload" ] && [ -z "${ALL_PEERS:-}" ] && continue
    # shellcheck disable=SC2086
    run "$reader" "$PEER_N" "$PEERS_PY" "$XR" --root "$root" --reader "$reader" $workload
  done
  if [ -n "$rust" ]; then
    # shellcheck disable=SC2086
    run rust "$N" $RB $rust
  fi
done
