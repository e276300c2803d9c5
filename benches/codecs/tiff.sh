#!/usr/bin/env bash
# TIFF decoding side by side: the codecs of zarrs_kerchunk_codecs (and zarrs_zlib_sized for
# DEFLATE) against imagecodecs (kerchunk's Python path), every tile of 2048 x 2048 GeoTIFFs that
# GDAL writes in LZW, DEFLATE and ZSTD with predictors, one core each, the tiles in memory.
# Needs python/tests/run.sh's virtualenv with rasterio and imagecodecs added.
#
#   bash benches/codecs/tiff.sh [RUNS]
set -euo pipefail
cd "$(dirname "$0")/../.."
runs="${1:-15}"
python="${ZK_BENCH_PYTHON:-target/python-venv/bin/python}"
out=target/bench-tiff
"$python" benches/codecs/make_tiffs.py "$out"
# Both Zstandard decoders: ruzstd (the crate's default, pure Rust) and the C library (zstd-c,
# as the command line and the Python package build it).
cargo build --release -q -p zarrs_kerchunk_codecs --example tiff_decode
cp target/release/examples/tiff_decode target/release/examples/tiff_decode_ruzstd
cargo build --release -q -p zarrs_kerchunk_codecs --example tiff_decode --features zstd-c
echo "# $(date -u +%FT%TZ), load $(cut -d' ' -f1-3 /proc/loadavg); <refs> <decoder> <median ms> <min ms>"
files=("$out"/lzw_u16_pred2.kerchunk.json "$out"/deflate_u16_pred2.kerchunk.json "$out"/zstd_f32_pred3.kerchunk.json)
taskset -c 0 target/release/examples/tiff_decode_ruzstd "$runs" "$out"/zstd_f32_pred3.kerchunk.json | sed 's/zarrs_kerchunk_codecs/zarrs_kerchunk_codecs(ruzstd)/'
taskset -c 0 target/release/examples/tiff_decode "$runs" "${files[@]}"
taskset -c 0 "$python" benches/codecs/imagecodecs_decode.py "$runs" "${files[@]}"
