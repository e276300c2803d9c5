"""kerchunk's API over this package's Rust scanners: only the import's first word changes.

    from zarrs_kerchunk.kerchunk.hdf import SingleHdf5ToZarr     # was: from kerchunk.hdf import ...
    from zarrs_kerchunk.kerchunk.netCDF3 import NetCDF3ToZarr    # was: from kerchunk.netCDF3 import ...
    from zarrs_kerchunk.kerchunk.combine import MultiZarrToZarr  # was: from kerchunk.combine import ...
    from zarrs_kerchunk.kerchunk.grib2 import scan_grib, grib_tree  # was: from kerchunk.grib2 import ...
    from zarrs_kerchunk.kerchunk.tiff import tiff_to_zarr           # was: from kerchunk.tiff import ...

Each class takes kerchunk 0.2.10's arguments and its ``translate()`` returns the same
``{"version": 1, "refs": {...}}``, made in Rust by scanning the file or combining the sets;
``scan_grib`` returns kerchunk's list of one such set per message, and ``grib_tree`` their tree;
``tiff_to_zarr`` returns kerchunk's version 0 references. An
argument that cannot be honoured is refused with an error naming it, never ignored. Where the
output differs from kerchunk's, the difference is listed in the README with its reason.
"""

from __future__ import annotations

import base64
import json
import os
import tempfile
import warnings
from typing import Any, Callable

from .. import _rs
from ..tools import _one_file, _write_options

# fsspec's storage options as object_store's configuration keys (s3fs's words first).
_FSSPEC_KEYS = {
    "key": "aws_access_key_id",
    "secret": "aws_secret_access_key",
    "token": "aws_session_token",
    "endpoint_url": "aws_endpoint",
    "region_name": "aws_region",
}


def _access(storage_options: dict[str, Any] | None, argument: str = "storage_options") -> dict[str, Any]:
    """fsspec-style ``storage_options`` as the store's options: ``anon`` is ``anonymous``;
    s3fs's ``key``, ``secret``, ``token`` and ``client_kwargs={"endpoint_url", "region_name"}``
    are object_store's keys; any other string value is passed on as an object_store key."""
    options: dict[str, str] = {}
    anonymous = False
    for key, value in (storage_options or {}).items():
        if key == "anon":
            anonymous = bool(value)
        elif key == "client_kwargs" and isinstance(value, dict):
            for inner, inner_value in value.items():
                if inner not in _FSSPEC_KEYS or not isinstance(inner_value, str):
                    raise TypeError(f"{argument}: client_kwargs[{inner!r}] is not supported (endpoint_url, region_name)")
                options[_FSSPEC_KEYS[inner]] = inner_value
        elif isinstance(value, str):
            options[_FSSPEC_KEYS.get(key, key)] = value
        else:
            raise TypeError(f"{argument}: {key!r} takes a str here (object_store's configuration keys)")
    return {"storage_options": options, "anonymous": anonymous}


def _scan_one(url: str, inline_threshold: int | None, fail_unsupported: bool, access: dict[str, Any],
              warn_skipped: bool = True) -> dict:
    """The references of the one file at ``url``, as our scan writes them, with the file named
    as ``url`` names it (kerchunk writes the URL it was given); what the scan left out is a
    warning each (kerchunk's ``error="warn"``) if ``warn_skipped``."""
    return _scan([url], inline_threshold, fail_unsupported, access, warn_skipped=warn_skipped)


def _scan(urls: list[str], inline_threshold: int | None, fail_unsupported: bool, access: dict[str, Any],
          refuse_skipped: bool | Callable[[dict], bool] = False, warn_skipped: bool = False) -> dict:
    """The references of the files at ``urls`` (one file's, or several GRIB files' as one tree),
    as our scan writes them, with each file named as given. With ``refuse_skipped``, anything the
    scan left out (a GRIB message on another grid than its group's first) is an error naming it;
    given as a function, only what it is true of (an entry of the scan's ``skipped``). With
    ``warn_skipped``, what is left out and not refused is a ``UserWarning`` each."""
    arguments = _one_file(inline_threshold, fail_unsupported)
    write = _write_options(1, False, None, 100_000, "plain", True, access)
    with tempfile.TemporaryDirectory() as folder:
        output = os.path.join(folder, "refs.json")
        report = json.loads(_rs.scan(list(urls), output, arguments, write))
        refused = [s for s in report["skipped"] if refuse_skipped is True or (refuse_skipped and refuse_skipped(s))]
        if refused:
            left = "; ".join(f"{s['file']}: {s['path']}: {s['reason']}" for s in refused[:3])
            raise ValueError(f"the scan left out {len(refused)} of what kerchunk would give: {left}")
        for skipped in report["skipped"] if warn_skipped else []:
            warnings.warn(f"{skipped['file']}: {skipped['path']} is left out: {skipped['reason']}", stacklevel=4)
        with open(output) as f:
            references = json.load(f)
    given = {url if "://" in url else os.path.abspath(url): url for url in urls}
    for key, value in references["refs"].items():
        if isinstance(value, list) and value and value[0] in given:
            references["refs"][key] = [given[value[0]], *value[1:]]
    return references


def _bytes(value: Any) -> Any:
    """A reference as kerchunk holds it: inline values (text, or ``base64:``) as bytes, ranges
    (and None) as they are."""
    if isinstance(value, str):
        return base64.b64decode(value[7:]) if value.startswith("base64:") else value.encode()
    return value


def _inline(data: bytes) -> str:
    """Bytes held inline as kerchunk holds them (its ``consolidate``): as text where they are
    ASCII, else base64."""
    try:
        return data.decode("ascii")
    except UnicodeDecodeError:
        return "base64:" + base64.b64encode(data).decode()


def _url_of(h5f: Any, url: str | None, argument: str) -> str:
    """The URL of ``h5f`` (a path or URL, or an open file whose ``url`` is given)."""
    if isinstance(h5f, (str, os.PathLike)):
        return os.fspath(h5f)
    if url is not None:
        return url
    raise TypeError(f"{argument} is an open file: give its url= (the scan reads the file itself, in Rust)")
