"""Small-chunk, high-latency workload: 10^5 chunks of 4 KiB over HTTP, each
request delayed by a loopback proxy, read by zarrs_kerchunk and by
fsspec + zarr 3 side by side. HDF5 files are often chunked this small, and
remote stores add tens of milliseconds to every request.

The array `small` (100000 x 1024 float32, chunks 1 x 1024 = 4 KiB) maps each
chunk to a range of the corpus' data.bin (make_synthetic.py), so no new data
is written; the references go through the proxy, which forwards to the nginx
of `peer_bench.py serve-start` after a fixed delay and counts requests.

    python small_chunks.py make  [--root /tmp/refbench] [--port 8766]
    python small_chunks.py proxy [--port 8766] [--upstream http://127.0.0.1:8765] [--delay-ms 20] &
    python small_chunks.py run -- <command ...>   # reset the proxy's counters, run, print requests + wall time
    python small_chunks.py peer [--root /tmp/refbench] [--k 100000] [--concurrency N]

`run` prints one JSON line: the command's own JSON line (if any) with
`requests`, `bytes_served` and `wall_s` added. For example:

    python small_chunks.py run -- target/release/examples/refbench read-small 100000
    python small_chunks.py run -- python small_chunks.py peer --k 100000

Needs aiohttp (and for `peer`, fsspec, zarr, numpy): tests/peer/requirements.txt.
"""

import argparse
import asyncio
import json
import os
import subprocess
import sys
import time
import urllib.request

ROWS, COLS = 100_000, 1024
CHUNK_BYTES = COLS * 4
NAME = "refs_small_http.json"


def cmd_make(a):
    zarray = {"chunks": [1, COLS], "compressor": None, "dtype": "<f4", "fill_value": None, "filters": None,
              "order": "C", "shape": [ROWS, COLS], "zarr_format": 2}
    url = f"http://127.0.0.1:{a.port}/data.bin"
    size = os.path.getsize(os.path.join(a.root, "data.bin"))
    assert size >= ROWS * CHUNK_BYTES, f"data.bin has {size} bytes, fewer than {ROWS * CHUNK_BYTES}"
    refs = {".zgroup": json.dumps({"zarr_format": 2}), "small/.zarray": json.dumps(zarray),
            "small/.zattrs": json.dumps({"_ARRAY_DIMENSIONS": ["row", "col"]})}
    for i in range(ROWS):
        refs[f"small/{i}.0"] = [url, i * CHUNK_BYTES, CHUNK_BYTES]
    path = os.path.join(a.root, NAME)
    with open(path, "w") as f:
        json.dump(refs, f, separators=(",", ":"))
    print(f"wrote {path}: {ROWS} chunks of {CHUNK_BYTES} bytes via {url}")


def cmd_proxy(a):
    from aiohttp import ClientSession, TCPConnector, web

    stats = {"requests": 0, "bytes_served": 0}

    async def handle(request):
        if request.path == "/__stats":
            return web.json_response(stats)
        if request.path == "/__reset":
            stats.update(requests=0, bytes_served=0)
            return web.json_response(stats)
        stats["requests"] += 1
        await asyncio.sleep(a.delay_ms / 1000)
        headers = {k: v for k, v in request.headers.items() if k.lower() in ("range", "if-none-match", "if-match")}
        session = request.app["session"]
        async with session.request(request.method, a.upstream + request.path_qs, headers=headers) as upstream:
            body = await upstream.read()
            stats["bytes_served"] += len(body)
            keep = ("content-range", "content-type", "accept-ranges", "etag", "last-modified")
            out = {k: v for k, v in upstream.headers.items() if k.lower() in keep}
            if request.method == "HEAD" and "Content-Length" in upstream.headers:
                # A size query: object_store's HTTP client reads the size from it.
                out["Content-Length"] = upstream.headers["Content-Length"]
                return web.Response(status=upstream.status, headers=out)
            return web.Response(status=upstream.status, body=body, headers=out)

    async def start(app):
        app["session"] = ClientSession(connector=TCPConnector(limit=256))

    async def stop(app):
        await app["session"].close()

    app = web.Application()
    app.on_startup.append(start)
    app.on_cleanup.append(stop)
    app.router.add_route("*", "/{tail:.*}", handle)
    print(f"proxy on 127.0.0.1:{a.port} -> {a.upstream}, +{a.delay_ms} ms a request", file=sys.stderr)
    web.run_app(app, host="127.0.0.1", port=a.port, print=None)


def proxy_call(port, what):
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/__{what}") as r:
        return json.load(r)


def cmd_run(a):
    command = a.command[1:] if a.command[:1] == ["--"] else a.command
    proxy_call(a.port, "reset")
    t0 = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True)
    wall = time.perf_counter() - t0
    stats = proxy_call(a.port, "stats")
    if done.returncode != 0:
        sys.exit(f"{command} failed ({done.returncode}): {done.stderr.strip()}")
    lines = [line for line in done.stdout.splitlines() if line.startswith("{")]
    line = json.loads(lines[-1]) if lines else {}
    line.update(requests=stats["requests"], bytes_served=stats["bytes_served"], wall_s=round(wall, 3))
    print(json.dumps(line))


def cmd_peer(a):
    import numpy as np
    import zarr
    from fsspec.implementations.reference import ReferenceFileSystem

    if a.concurrency:
        zarr.config.set({"async.concurrency": a.concurrency})
    t0 = time.perf_counter()
    fs = ReferenceFileSystem(os.path.join(a.root, NAME), remote_protocol="http",
                             remote_options={"asynchronous": True}, asynchronous=True)
    store = zarr.storage.FsspecStore(fs, read_only=True, path="")
    arr = zarr.open_array(store=store, path="small", mode="r", zarr_format=2)
    t1 = time.perf_counter()
    out = arr[: a.k]
    t2 = time.perf_counter()
    want = np.fromfile(os.path.join(a.root, "data.bin"), dtype="<f4", count=a.k * COLS).reshape(a.k, COLS)
    print(json.dumps({"workload": "read-small", "engine": "fsspec+zarr", "k": a.k, "open_s": round(t1 - t0, 4),
                      "read_s": round(t2 - t1, 4), "concurrency": zarr.config.get("async.concurrency"),
                      "zarr": zarr.__version__, "ok": bool(np.array_equal(out, want))}))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("make"); p.add_argument("--root", default="/tmp/refbench"); p.add_argument("--port", type=int, default=8766)
    p = sub.add_parser("proxy"); p.add_argument("--port", type=int, default=8766)
    p.add_argument("--upstream", default="http://127.0.0.1:8765"); p.add_argument("--delay-ms", type=float, default=20)
    p = sub.add_parser("run"); p.add_argument("--port", type=int, default=8766); p.add_argument("command", nargs=argparse.REMAINDER)
    p = sub.add_parser("peer"); p.add_argument("--root", default="/tmp/refbench"); p.add_argument("--k", type=int, default=ROWS)
    p.add_argument("--concurrency", type=int, default=0)
    a = ap.parse_args()
    {"make": cmd_make, "proxy": cmd_proxy, "run": cmd_run, "peer": cmd_peer}[a.cmd](a)


if __name__ == "__main__":
    main()
