"""``kerchunk.grib2.scan_grib`` and ``grib_tree``, scanned in Rust (see :mod:`zarrs_kerchunk.kerchunk`).

kerchunk opens every message with eccodes and cfgrib; the scan here reads each message's sections 1
to 5 in Rust (never its data) and names it from eccodes' tables, as cfgrib does. The file's
hierarchy (``tools.scan``'s, as ``grib_tree`` makes it) is then cut into kerchunk's one reference
set per message: the variable, its level, grid and times, each message's chunk a range of the file.
``grib_tree`` scans the files of the messages it is given again, together, and keeps those messages.
"""

from __future__ import annotations

import json
import os
import tempfile
import warnings
from collections.abc import Iterable
from typing import Any

import numpy as np

from . import _access, _bytes, _inline, _scan

__all__ = ["grib_tree", "scan_grib"]

#: cfgrib's coordinates, in the order kerchunk writes them (``cfgrib.dataset.COORD_ATTRS``).
_COORDINATE_ORDER = [
    "latitude", "longitude", "depthBelowLand", "depthBelowLandLayer", "hybrid", "heightAboveGround",
    "isobaricInhPa", "isobaricInPa", "isobaricLayer", "number", "step", "time", "indexing_time",
    "valid_time", "valid_month", "verifying_time", "forecastMonth",
]

#: The attributes kerchunk gives a message's ``step`` (cfgrib's, with the unit the value counts).
_STEP_ATTRIBUTES = {"standard_name": "forecast_period", "long_name": "time since forecast_reference_time",
                    "dtype": "timedelta64[ns]"}

#: The root attributes of a message's set: cfgrib's global attributes.
_GLOBAL = ("GRIB_edition", "GRIB_centre", "GRIB_centreDescription", "GRIB_subCentre", "institution")


def scan_grib(
    url: str,
    common: Any = None,
    storage_options: dict[str, Any] | None = None,
    inline_threshold: int = 100,
    skip: int = 0,
    filter: dict[str, Any] | None = None,  # noqa: A002 (kerchunk's name)
) -> list[dict]:
    """kerchunk 0.2.10's ``scan_grib(url, common=None, storage_options=None, inline_threshold=100,
    skip=0, filter={})``: one ``{"version": 1, "refs": ..., "templates": {"u": url}}`` per message
    of the GRIB file at ``url``, in the file's order.

    ``storage_options`` are fsspec's (``anon``, s3fs's ``key``, ``secret``, ``token``,
    ``client_kwargs``) or object_store's keys. ``skip`` stops after that many messages.
    ``filter`` keeps the messages whose keys have the value given (or one of the values of a list,
    tuple or set); its keys are those the message's variable carries as ``GRIB_<key>`` attributes
    (``typeOfLevel``, ``shortName``, ``stepType``, ``paramId`` ...) and ``level``. Another key is
    refused by name, where kerchunk would ask eccodes. ``common`` is ignored, as kerchunk ignores it.

    Where the result differs from kerchunk's, the README lists it; the values are the file's: a
    level is eccodes' ``level:float`` (1.5 m, where kerchunk writes 2), and ``step`` counts the unit
    its ``units`` names (kerchunk names hours whatever the unit). A message whose grid the scan
    does not describe (reduced and unstructured grids, which kerchunk cannot shape either) is refused.

    Raises ``ValueError`` for a filter key or a grid that cannot be given as kerchunk gives it, and
    the scan's own errors (the file's name and the cause) for a file that cannot be read."""
    del common
    if skip < 0:
        raise ValueError(f"skip={skip}: a count of messages, 0 for all")
    access = _access(storage_options)
    with tempfile.TemporaryDirectory() as folder:
        tree = _scan([url], None, True, access, refuse_skipped=True)
        refs = tree["refs"]
        messages = sorted(_messages(refs, url), key=lambda m: m["range"][1])
        # As kerchunk: the file's first `skip` messages, then those the filter keeps.
        messages = [m for m in messages[: skip or None] if _kept(m, filter or {})]
        decoded = _Decoded(refs, folder, access)
        _message_globals(url, messages, decoded)
        return [_message_set(m, url, inline_threshold, decoded) for m in messages]


def grib_tree(message_groups: Iterable[dict], remote_options: dict[str, Any] | None = None) -> dict:
    """kerchunk 0.2.10's ``grib_tree(message_groups, remote_options=None)``: the messages of
    ``message_groups`` (``scan_grib``'s sets, ours or kerchunk's, of one file or many) as one
    hierarchy, ``VARIABLE/STEP_TYPE/TYPE_OF_LEVEL/VARIABLE``, each message a chunk at its time,
    step and level, as ``{"version": 1, "refs": ...}``.

    The files the messages are in are scanned again in Rust, together (``tools.scan``'s combining
    of GRIB files: a run's hours one ``step`` axis, several runs one ``time`` axis, an ensemble's
    members one ``number`` axis), and only the messages given are kept: each axis holds only the
    values they take. ``remote_options`` are the files' storage options, as ``scan_grib``'s.
    Messages of an ``unknown`` variable are left out, as kerchunk leaves them out, with a warning.

    Where the result differs from kerchunk's, the README lists it: ensemble members are a
    ``number`` axis (kerchunk keeps one member's chunk of each), levels are eccodes'
    ``level:float``, ``step`` counts the unit its ``units`` names, the data's fill value is NaN,
    and messages are referenced, never inlined.

    Raises ``ValueError`` naming the set for a set that is not one message's (no data variable,
    or its values inline rather than a range of its file), and the scan's errors for a file."""
    wanted: dict[str, set[int]] = {}
    for n, group in enumerate(message_groups):
        if group.get("version") != 1 or "refs" not in group:
            raise ValueError(f"message_groups[{n}]: not a version 1 reference set (scan_grib's)")
        try:
            found = _message_range(group)
        except ValueError as error:
            raise ValueError(f"message_groups[{n}]: {error}") from None
        if found is None:
            warnings.warn(f"message_groups[{n}]: an unknown variable, left out as kerchunk leaves it out", stacklevel=2)
            continue
        url, offset = found
        if url is None:
            raise ValueError(
                f"message_groups[{n}]: its values are inline, not a range of its file; grib_tree here "
                "reads each message's place in its file (scan_grib with inline_threshold=0)"
            )
        wanted.setdefault(url, set()).add(offset)
    if not wanted:
        raise ValueError("message_groups: no message to build a tree of")
    access = _access(remote_options, "remote_options")
    tree = _scan(list(wanted), None, True, access, refuse_skipped=True)
    _check_all_placed(tree["refs"], wanted)
    return {"version": 1, "refs": _kept_messages(tree["refs"], wanted)}


def _message_range(group: dict) -> tuple[str | None, int] | None:
    """The (file, offset) of a set's one message, as kerchunk finds its data variable: the first
    key that is not a coordinate; ``None`` for an ``unknown`` variable, and no file for values
    held inline."""
    refs = group["refs"]
    coordinates = _json(refs.get(".zattrs", "{}")).get("coordinates", "").split(" ")
    variable = next((key.split("/")[0] for key in refs
                     if key.split("/")[0] not in (".zattrs", ".zgroup", *coordinates)), None)
    if variable is None:
        raise ValueError(f"no data variable among {sorted(refs)}")
    if variable == "unknown":
        return None
    for key, value in refs.items():
        if key.startswith(variable + "/") and not key.rsplit("/", 1)[-1].startswith(".z"):
            if not isinstance(value, list):
                return None, 0
            url = value[0]
            for name, template in group.get("templates", {}).items():
                url = url.replace("{{" + name + "}}", template)
            return url, int(value[1])
    raise ValueError(f"{variable} has no chunk")


def _kept_messages(refs: dict[str, Any], wanted: dict[str, set[int]]) -> dict[str, Any]:
    """The tree ``refs`` with only the messages ``wanted`` (offsets by file): each leaf group's
    axes cut to the values its kept messages take, groups with none left out."""
    out = dict(refs)
    for path in [key[: -len("/.zarray")] for key in refs if key.endswith("/.zarray")]:
        parts = path.split("/")
        if len(parts) != 4 or parts[0] != parts[3]:
            continue
        group = "/".join(parts[:3])
        chunks = {key: value for key, value in refs.items()
                  if key.startswith(path + "/") and isinstance(value, list)}
        kept = {key: value for key, value in chunks.items() if int(value[1]) in wanted.get(value[0], ())}
        if len(kept) == len(chunks):
            continue
        if not kept:
            for key in [key for key in out if key.startswith(group + "/")]:
                del out[key]
            continue
        for key in chunks:
            del out[key]
        dimensions = _json(refs[f"{path}/.zattrs"])["_ARRAY_DIMENSIONS"]
        header = [d for d in dimensions if d not in ("latitude", "longitude", "y", "x", "values")]
        indices = {key: [int(i) for i in key[len(path) + 1:].split(".")] for key in kept}
        used = {d: sorted({at[i] for at in indices.values()}) for i, d in enumerate(header)}
        for key, at in indices.items():
            renumbered = [used[d].index(i) for d, i in zip(header, at)] + at[len(header):]
            out[f"{path}/" + ".".join(map(str, renumbered))] = kept[key]
        for name in [key[len(group) + 1: -len("/.zarray")] for key in refs
                     if key.startswith(group + "/") and key.endswith("/.zarray")]:
            if "/" not in name:
                _cut(out, f"{group}/{name}", used)
    # Variables and step types none of whose groups are left.
    leaves = {key.rsplit("/", 2)[0] for key in out if key.count("/") == 4}
    for prefix in [key[: -len("/.zgroup")] for key in refs if key.endswith("/.zgroup") and 0 < key.count("/") < 3]:
        if not any(leaf.startswith(prefix + "/") for leaf in leaves):
            for key in [key for key in out if key.startswith(prefix + "/")]:
                del out[key]
    return out


def _cut(refs: dict[str, Any], path: str, used: dict[str, list[int]]) -> None:
    """The array at ``path`` (the data's ``.zarray``'s shape, or an inline coordinate's values)
    cut along each dimension of ``used`` to the indices it lists."""
    zarray = _json(refs[f"{path}/.zarray"])
    dimensions = _json(refs[f"{path}/.zattrs"]).get("_ARRAY_DIMENSIONS", [])
    cut = [(axis, used[d]) for axis, d in enumerate(dimensions) if d in used and len(used[d]) < zarray["shape"][axis]]
    if not cut:
        return
    if zarray["filters"] and zarray["filters"][0].get("id") == "grib":
        # The data: one chunk a message, already renumbered.
        for axis, indices in cut:
            zarray["shape"][axis] = len(indices)
    else:
        values, _ = _coordinate(refs, path)
        chunk = ".".join("0" for _ in zarray["shape"]) or "0"
        del refs[f"{path}/{chunk}"]
        for axis, indices in cut:
            values = np.take(values, indices, axis=axis)
        zarray["shape"] = list(values.shape)
        zarray["chunks"] = list(values.shape)
        refs[f"{path}/{chunk}"] = _inline(values.tobytes())
    refs[f"{path}/.zarray"] = json.dumps(zarray)


def _check_all_placed(refs: dict[str, Any], wanted: dict[str, set[int]]) -> None:
    """Every message given is a chunk of the tree: one the scan left out (on another grid than
    its group's first) is an error naming it, never a message silently missing."""
    placed = {(value[0], int(value[1])) for key, value in refs.items() if isinstance(value, list)
              and key.count("/") == 4 and key.split("/")[0] == key.split("/")[3]}
    for url, offsets in wanted.items():
        for offset in sorted(offsets):
            if (url, offset) not in placed:
                raise ValueError(f"{url}: the message at byte {offset} is not in the scan's tree "
                                 "(a message on another grid than its group's first is left out)")


def _message_globals(url: str, messages: list[dict], decoded: _Decoded) -> None:
    """Each message's own edition (a file may mix GRIB1 and GRIB2), read from its first bytes.
    The scan's root attributes are its first message's; a message of another centre or
    sub-centre is refused by name rather than given the first's."""
    if not messages:
        return
    heads = decoded.heads([m["key"] for m in messages])
    first = min(heads.items(), key=lambda item: next(m["range"][1] for m in messages if m["key"] == item[0]))[1]
    for m in messages:
        edition, centre = heads[m["key"]]
        if centre != first[1]:
            raise ValueError(
                f"{url}: the message at byte {m['range'][1]} is from another centre or sub-centre than the "
                "file's first; scan_grib here gives one centre a file (use tools.scan)"
            )
        m["global"] = dict(m["global"], GRIB_edition=edition)


def _messages(refs: dict[str, Any], url: str) -> list[dict]:
    """Every message of the tree ``refs``: its variable, group, attributes, coordinates' values
    and range."""
    root = _json(refs[".zattrs"]) if ".zattrs" in refs else {}
    global_attributes = {k: root[k] for k in _GLOBAL if k in root}
    out = []
    for key, value in refs.items():
        if not key.endswith("/.zarray"):
            continue
        path = key[: -len("/.zarray")]
        parts = path.split("/")
        # A data array: VARIABLE/STEP_TYPE/LEVEL_TYPE/VARIABLE.
        if len(parts) != 4 or parts[0] != parts[3]:
            continue
        variable, _, level_type, _ = parts
        group = "/".join(parts[:3])
        attributes = _json(refs[f"{path}/.zattrs"])
        dimensions = attributes.pop("_ARRAY_DIMENSIONS")
        spatial = [d for d in dimensions if d in ("latitude", "longitude", "y", "x", "values")]
        if "values" in spatial:
            raise ValueError(
                f"{url}: {variable} is on a {attributes.get('GRIB_gridType')} grid, one dimension of "
                "points; kerchunk's scan_grib shapes messages as rows and columns (use tools.scan)"
            )
        header = dimensions[: len(dimensions) - len(spatial)]
        names = _group_coordinates(refs, group, variable)
        coordinates = {name: _coordinate(refs, f"{group}/{name}") for name in names}
        coordinate_attributes = {name: _attributes(refs, f"{group}/{name}") for name in names}
        for chunk_key, target in refs.items():
            if not chunk_key.startswith(path + "/") or not isinstance(target, list):
                continue
            indices = [int(i) for i in chunk_key[len(path) + 1:].split(".")][: len(header)]
            at = dict(zip(header, indices, strict=True))
            values = {}
            for name, (array, dims) in coordinates.items():
                if not dims:
                    values[name] = array[()]
                elif name == "valid_time":
                    values[name] = array[at.get("time", 0), at.get("step", 0)]
                else:
                    values[name] = array[at.get(dims[0], 0)]
            out.append({
                "variable": variable, "group": group, "level_type": level_type, "path": path,
                "attributes": attributes, "spatial": spatial, "values": values, "range": target,
                "index": indices, "coordinate_attributes": coordinate_attributes, "global": global_attributes,
                "key": chunk_key,
            })
    return out


def _group_coordinates(refs: dict[str, Any], group: str, variable: str) -> list[str]:
    """The header coordinates of ``group`` (time, step, level ...), not the grid's or the data."""
    names = []
    for key in refs:
        if key.startswith(group + "/") and key.endswith("/.zarray"):
            name = key[len(group) + 1: -len("/.zarray")]
            if "/" not in name and name not in ("latitude", "longitude", variable):
                names.append(name)
    return names


def _attributes(refs: dict[str, Any], path: str) -> dict:
    attributes = _json(refs[f"{path}/.zattrs"])
    attributes.pop("_ARRAY_DIMENSIONS", None)
    return attributes


def _coordinate(refs: dict[str, Any], path: str) -> tuple[np.ndarray, list[str]]:
    """An inline coordinate's values and dimensions."""
    zarray = _json(refs[f"{path}/.zarray"])
    dims = _json(refs[f"{path}/.zattrs"]).get("_ARRAY_DIMENSIONS", [])
    chunk = ".".join("0" for _ in zarray["shape"]) or "0"
    data = _bytes(refs[f"{path}/{chunk}"])
    if not isinstance(data, bytes) or zarray["compressor"] or zarray["filters"]:
        raise ValueError(f"{path}: the scan's coordinate is not inline")
    return np.frombuffer(data, dtype=zarray["dtype"]).reshape(zarray["shape"]), dims


def _kept(message: dict, wanted: dict[str, Any]) -> bool:
    """kerchunk's filter: every key present and equal to the value, or in the values given."""
    for key, value in wanted.items():
        if key == "level":
            have = float(message["values"][message["level_type"]]) if message["level_type"] in message["values"] else None
        elif f"GRIB_{key}" in message["attributes"]:
            have = message["attributes"][f"GRIB_{key}"]
        else:
            raise ValueError(
                f"filter: {key!r} is not a key the scan gives each message; give one of level, "
                + ", ".join(sorted(k[5:] for k in message["attributes"] if k.startswith("GRIB_")))
            )
        if isinstance(value, (list, tuple, set)):
            if have not in value:
                return False
        elif have != value:
            return False
    return True


class _Decoded:
    """Arrays the tree holds as references (a projected grid's latitudes and longitudes, a tiny
    message's values), read through the package's store and codecs."""

    def __init__(self, refs: dict[str, Any], folder: str, access: dict[str, Any]) -> None:
        self.refs, self._folder, self._access = refs, folder, access
        self._opened = None
        self._cache: dict[str, np.ndarray] = {}

    def _store(self):
        if self._opened is None:
            from ..store import ReferenceStore

            location = os.path.join(self._folder, "tree.json")
            # The scan names the file as given (kerchunk's `u`); this copy is read from another
            # folder, so a relative path is made absolute against the working folder.
            refs = {key: [_absolute(value[0]), *value[1:]] if isinstance(value, list) else value
                    for key, value in self.refs.items()}
            with open(location, "w") as f:
                json.dump({"version": 1, "refs": refs}, f)
            self._opened = ReferenceStore(location, **self._access)
        return self._opened

    def __call__(self, path: str) -> np.ndarray:
        if path not in self._cache:
            import zarr

            group = zarr.open_group(self._store(), mode="r", zarr_format=2)
            self._cache[path] = np.asarray(group[path][...])
        return self._cache[path]

    def heads(self, keys: list[str]) -> dict[str, tuple[int, tuple[int, int]]]:
        """Each message's (edition, (centre, sub-centre)), from its first 40 bytes, read together."""
        from zarr.abc.store import RangeByteRequest
        from zarr.core.buffer import default_buffer_prototype
        from zarr.core.sync import sync

        store = self._store()
        read = sync(store.get_partial_values(default_buffer_prototype(), [(k, RangeByteRequest(0, 40)) for k in keys]))
        heads = {}
        for key, value in zip(keys, read, strict=True):
            head = value.to_bytes() if value is not None else b""
            if len(head) < 40 or head[:4] != b"GRIB" or head[7] not in (1, 2):
                raise ValueError(f"{key}: its message does not begin as a GRIB message does")
            if head[7] == 2:
                centre = (int.from_bytes(head[21:23], "big"), int.from_bytes(head[23:25], "big"))
            else:
                centre = (head[12], head[33])
            heads[key] = (head[7], centre)
        return heads


def _message_set(m: dict, url: str, inline_threshold: int, decoded: _Decoded) -> dict:
    """One message as kerchunk's ``scan_grib`` writes it."""
    refs: dict[str, Any] = {".zgroup": json.dumps({"zarr_format": 2})}
    variable, attributes = m["variable"], m["attributes"]
    projected = m["spatial"] == ["y", "x"]
    shape = tuple(_json(decoded.refs[f"{m['path']}/.zarray"])["shape"][-2:])
    names = []
    # The variable: a range of the file, or its values where they are fewer bytes than the threshold.
    dimensions = ["y", "x"] if projected else ["latitude", "longitude"]
    if 8 * shape[0] * shape[1] < inline_threshold:
        values = decoded(m["path"])[tuple(m["index"])]
        _array(refs, variable, values.reshape(shape), {**attributes, "_ARRAY_DIMENSIONS": dimensions})
    else:
        refs[f"{variable}/.zarray"] = _zarray(shape, "<f8", [{"id": "grib", "var": variable, "dtype": "float64"}])
        refs[f"{variable}/.zattrs"] = json.dumps({**attributes, "_ARRAY_DIMENSIONS": dimensions})
        refs[f"{variable}/0.0"] = ["{{u}}", m["range"][1], m["range"][2]]
    level_type = m["level_type"]
    if level_type in m["values"]:
        names.append(level_type)
        _array(refs, level_type, np.array(float(m["values"][level_type])), _level_attributes(m, level_type))
    for name in _COORDINATE_ORDER:
        if name in ("latitude", "longitude"):
            names.append(name)
            attributes = {**_grid_attributes(name), "_ARRAY_DIMENSIONS": dimensions if projected else [name]}
            if projected and 8 * shape[0] * shape[1] >= inline_threshold:
                # kerchunk leaves a projected grid's points to the codec, computed from the message.
                filters = [{"id": "grib", "var": name, "dtype": "float64"}]
                refs[f"{name}/.zarray"] = _zarray(shape, "<f8", filters)
                refs[f"{name}/.zattrs"] = json.dumps(attributes)
                refs[f"{name}/0.0"] = ["{{u}}", m["range"][1], m["range"][2]]
            else:
                _array(refs, name, _grid(m, name, decoded), attributes)
        elif name in m["values"] and name != level_type:
            names.append(name)
            attributes = dict(m["coordinate_attributes"][name])
            if name == "step":
                attributes.update(_STEP_ATTRIBUTES, units=attributes["units"])
            _array(refs, name, np.array(m["values"][name]), {**attributes, "_ARRAY_DIMENSIONS": []})
    refs[".zattrs"] = json.dumps({**m["global"], "coordinates": " ".join(names)})
    return {"version": 1, "refs": refs, "templates": {"u": url}}


def _grid(m: dict, name: str, decoded: _Decoded) -> np.ndarray:
    """A message's latitudes or longitudes: inline in the scan (a regular grid's rows or
    columns), else computed by the codec (a small projected grid's points, which kerchunk
    computes with eccodes and inlines)."""
    path = f"{m['group']}/{name}"
    refs = decoded.refs
    chunk = refs.get(f"{path}/0")
    if isinstance(chunk, (str, bytes)):
        return _coordinate(refs, path)[0]
    return decoded(path)


def _grid_attributes(name: str) -> dict:
    return {
        "latitude": {"units": "degrees_north", "standard_name": "latitude", "long_name": "latitude"},
        "longitude": {"units": "degrees_east", "standard_name": "longitude", "long_name": "longitude"},
    }[name]


def _level_attributes(m: dict, level_type: str) -> dict:
    attributes = dict(m["coordinate_attributes"].get(level_type, {}))
    attributes["_ARRAY_DIMENSIONS"] = []
    return attributes


def _array(refs: dict[str, Any], name: str, values: np.ndarray, attributes: dict) -> None:
    """An inline array as kerchunk writes one: raw bytes, as text where they are ASCII."""
    refs[f"{name}/.zarray"] = _zarray(values.shape, values.dtype.str, None)
    refs[f"{name}/.zattrs"] = json.dumps(attributes)
    refs[f"{name}/" + (".".join("0" for _ in values.shape) or "0")] = _inline(values.tobytes())


def _zarray(shape: tuple, dtype: str, filters: list | None) -> str:
    return json.dumps({
        "shape": list(shape), "chunks": list(shape), "dtype": dtype, "fill_value": None, "order": "C",
        "filters": filters, "dimension_separator": ".", "compressor": None, "zarr_format": 2,
    })


def _absolute(url: str) -> str:
    return url if "://" in url or os.path.isabs(url) else os.path.abspath(url)


def _json(value: Any) -> Any:
    return json.loads(value if isinstance(value, str) else bytes(value))

