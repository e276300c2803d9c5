#!/usr/bin/env bash
# The disk cache (issue 55): 1 000 random chunks of 4 KiB read one after another over HTTP,
# through a proxy that adds 20 ms to every request and counts them, cold (an empty cache) and
# then warm (a new process on the same cache), one after another and all at once: ours (`ReferenceStore(cache=DIR)`) and fsspec's
# `blockcache` and `simplecache` (ReferenceFileSystem, at their defaults), side by side.
#
#   benches/cache/run.sh PYTHON [RUNS]
#
# Then data.bin is rewritten in place, and each warm cache read again: which serve stale chunks.
#
# PYTHON has zarrs_kerchunk, fsspec, aiohttp and numpy (target/python-venv has them). nginx
# serves the workload (make.py) on 127.0.0.1:8795 behind the proxy on 127.0.0.1:8766.
set -euo pipefail
python="$1"
runs="${2:-2}"
here="$(cd "$(dirname "$0")" && pwd)"
folder=/tmp/cache-bench
[ -e "$folder/keys.json" ] || "$python" "$here/make.py" "$folder" http://127.0.0.1:8766
serve_python_only=1
. "$here/../scan/serve.sh"
proxy() { "$python" "$here/../tools/small_chunks.py" run -- "$@"; }
uptime
for run in $(seq "$runs"); do
    for mode in one batch; do
        for engine in ours blockcache simplecache; do
            cache="$work/$engine-$mode-$run"
            echo "$engine $mode cold: $(proxy "$python" "$here/read.py" "$engine" "$cache" "$folder" "$mode")"
            echo "$engine $mode warm: $(proxy "$python" "$here/read.py" "$engine" "$cache" "$folder" "$mode")"
            echo "$engine $mode cache: $(du -sb "$cache" | cut -f1) bytes on disk"
        done
    done
done
# Stale reads: data.bin rewritten in place with other values (the same size, a later time, so
# nginx's ETag changes), then each warm cache of the last run read again ("wrong" counts the
# chunks that are not the new file's).
"$python" -c "import numpy as np, sys; np.random.default_rng(56).standard_normal(20_000 * 1024, dtype=np.float32).tofile(sys.argv[1])" "$folder/data.bin"
touch -d '+2 seconds' "$folder/data.bin"
for engine in ours blockcache simplecache; do
    echo "$engine batch after a rewrite: $(proxy "$python" "$here/read.py" "$engine" "$work/$engine-batch-$runs" "$folder" batch)"
done
