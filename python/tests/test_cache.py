"""The disk cache from Python (``cache=`` of ReferenceStore, the xarray engine's backend_kwargs and
tools.scan, ``ZARRS_KERCHUNK_CACHE``), over an in-test HTTP server that gives content ETags (an
MD5 of the bytes, as S3 gives) and logs every request, and over S3 (moto). Values are netCDF4's,
read from the same files; the requests are the server's own log.

- a warm read, in this process or another, makes no GET;
- a file rewritten in place with the same size gives the new file's values;
- Dask workers (processes) read through one folder, and a read after them makes no GET;
- a folder that cannot be made is an error naming it."""

from __future__ import annotations

import hashlib
import http.server
import json
import os
import subprocess
import sys
import threading
from pathlib import Path

import netCDF4
import numpy as np
import pytest
import xarray as xr
from conftest import ROOT, s3_user

from zarrs_kerchunk import ReferenceStore, tools

FILES = ["bounds_0.nc", "bounds_1.nc", "bounds_2.nc"]
COMBINE = ROOT / "tests" / "scan" / "combine"


class _Handler(http.server.BaseHTTPRequestHandler):
    """Files of one folder, with Range, HEAD, a content ETag and If-Match, each request logged."""

    def _answer(self, body: bool) -> None:
        self.server.log.append((self.command, self.path, self.headers.get("Range")))
        path = Path(self.server.folder) / self.path.lstrip("/")
        if not path.is_file():
            self.send_error(404)
            return
        data = path.read_bytes()
        etag = '"' + hashlib.md5(data).hexdigest() + '"'
        if self.headers.get("If-Match") not in (None, etag):
            self.send_error(412)
            return
        status, start, end = 200, 0, len(data)
        wanted = self.headers.get("Range")
        if wanted and wanted.startswith("bytes="):
            first, _, last = wanted[len("bytes="):].partition("-")
            start, end = int(first), min(int(last) + 1, len(data)) if last else len(data)
            status = 206
        self.send_response(status)
        self.send_header("ETag", etag)
        self.send_header("Last-Modified", self.date_time_string(int(path.stat().st_mtime)))
        self.send_header("Content-Length", str(end - start))
        if status == 206:
            self.send_header("Content-Range", f"bytes {start}-{end - 1}/{len(data)}")
        self.end_headers()
        if body:
            self.wfile.write(data[start:end])

    def do_GET(self) -> None:  # noqa: N802 (http.server's name)
        self._answer(True)

    def do_HEAD(self) -> None:  # noqa: N802
        self._answer(False)

    def log_message(self, *args) -> None:
        pass


@pytest.fixture
def served(tmp_path):
    """The three files in a served folder, scanned (every chunk a range) through no cache."""
    folder = tmp_path / "served"
    folder.mkdir()
    for name in FILES:
        (folder / name).write_bytes((COMBINE / name).read_bytes())
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    httpd.folder, httpd.log = str(folder), []
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{httpd.server_address[1]}"
    refs = str(tmp_path / "refs.json")
    tools.scan([f"{base}/{name}" for name in FILES], refs, concat="time", inline_threshold=0)
    yield folder, refs, httpd.log
    httpd.shutdown()


def _truth(folder: Path) -> np.ndarray:
    """netCDF4's `t` of the served files, concatenated along time."""
    parts = []
    for name in FILES:
        with netCDF4.Dataset(folder / name) as ds:
            parts.append(np.asarray(ds["t"][:]))
    return np.concatenate(parts)


def _gets(log, since: int) -> list:
    return [entry for entry in log[since:] if entry[0] == "GET"]


def test_a_warm_read_in_another_process_makes_no_get(served, tmp_path) -> None:
    folder, refs, log = served
    cache = tmp_path / "cache"
    before = len(log)
    with xr.open_dataset(refs, engine="zarrs_kerchunk", backend_kwargs={"cache_dir": str(cache)}) as ds:
        np.testing.assert_array_equal(ds["t"].values, _truth(folder))
    assert _gets(log, before), "the cold read fetched the chunks"
    # Another process, the cache named by the variable.
    before = len(log)
    script = (
        "import json, sys, numpy as np; from zarrs_kerchunk import ReferenceStore; import zarr;"
        "g = zarr.open_group(ReferenceStore(sys.argv[1]), mode='r', zarr_format=2);"
        "json.dump(np.asarray(g['t'][:]).tolist(), sys.stdout)"
    )
    env = {**os.environ, "ZARRS_KERCHUNK_CACHE": str(cache)}
    out = subprocess.run([sys.executable, "-c", script, refs], env=env, capture_output=True, text=True, check=True)
    np.testing.assert_array_equal(np.array(json.loads(out.stdout)), _truth(folder))
    assert _gets(log, before) == [], log[before:]
    assert sum(1 for entry in log[before:] if entry[0] == "HEAD") == len(FILES)


def test_a_file_rewritten_in_place_gives_its_new_values(served, tmp_path) -> None:
    folder, refs, _ = served
    cache = str(tmp_path / "cache")
    store = ReferenceStore(refs, cache=cache)
    with xr.open_zarr(store, consolidated=False, zarr_format=2) as ds:
        np.testing.assert_array_equal(ds["t"].values, _truth(folder))
    # bounds_1.nc's bytes over bounds_0.nc: the same size and layout, other values, another ETag.
    (folder / FILES[0]).write_bytes((folder / FILES[1]).read_bytes())
    assert (folder / FILES[0]).stat().st_size == (COMBINE / FILES[0]).stat().st_size
    with xr.open_dataset(refs, engine="zarrs_kerchunk", backend_kwargs={"cache_dir": cache}) as ds:
        np.testing.assert_array_equal(ds["t"].values, _truth(folder))
        assert not np.array_equal(ds["t"].values[:4], np.asarray(netCDF4.Dataset(COMBINE / FILES[0])["t"][:]))


def test_a_scan_of_files_scanned_before_makes_no_get(served, tmp_path) -> None:
    _, refs, log = served
    cache = tmp_path / "cache"
    urls = [f"{_base(refs)}/{name}" for name in FILES]
    first = tools.scan(urls, str(tmp_path / "a.json"), concat="time", inline_threshold=0, cache=cache)
    before = len(log)
    again = tools.scan(urls, str(tmp_path / "b.json"), concat="time", inline_threshold=0, cache=cache)
    assert _gets(log, before) == [], log[before:]
    assert json.loads(Path(tmp_path / "a.json").read_text()) == json.loads(Path(tmp_path / "b.json").read_text())
    assert first["references"] == again["references"]


def _base(refs: str) -> str:
    """The served folder's URL, as the references name its files."""
    text = Path(refs).read_text()
    start = text.index("http://127.0.0.1:")
    return text[start:text.index("/", start + len("http://"))]


def test_dask_workers_share_one_cache(served, tmp_path) -> None:
    distributed = pytest.importorskip("distributed")
    folder, refs, log = served
    cache = str(tmp_path / "cache")
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster:
        with distributed.Client(cluster):
            with xr.open_dataset(refs, engine="zarrs_kerchunk", chunks={}, backend_kwargs={"cache_dir": cache}) as ds:
                np.testing.assert_array_equal(ds["t"].compute().values, _truth(folder))
    before = len(log)
    with xr.open_dataset(refs, engine="zarrs_kerchunk", backend_kwargs={"cache_dir": cache}) as ds:
        np.testing.assert_array_equal(ds["t"].values, _truth(folder))
    assert _gets(log, before) == [], log[before:]


def test_s3_a_rewrite_with_the_same_size_is_read_again(tmp_path) -> None:
    client, options = s3_user("DATA")
    prefix = f"python-cache-{os.getpid()}"
    client.put_object(Bucket="zk-data", Key=f"{prefix}/x.nc", Body=(COMBINE / FILES[0]).read_bytes())
    refs = str(tmp_path / "x.json")
    tools.scan(f"s3://zk-data/{prefix}/x.nc", refs, inline_threshold=0, storage_options=options)
    cache = str(tmp_path / "cache")

    def t() -> np.ndarray:
        with xr.open_dataset(refs, engine="zarrs_kerchunk",
                             backend_kwargs={"storage_options": options, "cache_dir": cache}) as ds:
            return ds["t"].values

    with netCDF4.Dataset(COMBINE / FILES[0]) as ds:
        np.testing.assert_array_equal(t(), np.asarray(ds["t"][:]))
    client.put_object(Bucket="zk-data", Key=f"{prefix}/x.nc", Body=(COMBINE / FILES[1]).read_bytes())
    with netCDF4.Dataset(COMBINE / FILES[1]) as ds:
        np.testing.assert_array_equal(t(), np.asarray(ds["t"][:]))


def test_a_cache_folder_that_cannot_be_made_is_an_error_naming_it(tmp_path) -> None:
    blocker = tmp_path / "file"
    blocker.write_bytes(b"")
    refs = str(ROOT / "tests" / "data" / "netcdf3_classic" / "refs.json")
    with pytest.raises(OSError, match=f"cannot use the cache folder {blocker / 'cache'}"):
        ReferenceStore(refs, cache=str(blocker / "cache"))


def test_the_variable_names_the_cache_and_an_empty_name_turns_it_off(tmp_path, monkeypatch) -> None:
    refs = str(ROOT / "tests" / "data" / "netcdf3_classic" / "refs.json")
    folder = tmp_path / "from-the-variable"
    monkeypatch.setenv("ZARRS_KERCHUNK_CACHE", str(folder))
    ReferenceStore(refs, cache="")
    tools.scan(str(COMBINE / FILES[0]), str(tmp_path / "a.json"), cache="")
    assert not folder.exists()
    ReferenceStore(refs)
    assert (folder / "v1" / "objects").is_dir()
