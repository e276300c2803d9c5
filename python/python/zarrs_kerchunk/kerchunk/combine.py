"""``kerchunk.combine.MultiZarrToZarr``, combined in Rust (see :mod:`zarrs_kerchunk.kerchunk`).

The combining is :func:`zarrs_kerchunk.tools.combine`'s, with its checks: files whose arrays decode
differently (another ``scale_factor``, ``add_offset``, fill value, ``units`` ...) are refused
instead of taking the first file's, and coordinates held as ranges in each file's own units
(``time_bnds``) are read and written again in one unit. What is left is shaped as kerchunk shapes
it: the concatenated coordinate written inline as kerchunk writes it (``cf:`` times as whole
numbers where they are whole, ``coo_dtypes`` applied, Zstd past 100 values), small chunks inlined
below ``inline_threshold``, and the result as ``{"version": 1, "refs": ...}``.
"""

from __future__ import annotations

import collections.abc
import json
import os
import re
import tempfile
from typing import Any

import numpy as np

from ..tools import _combined_references
from . import _access, _bytes, _inline

__all__ = ["MultiZarrToZarr"]

#: The fill value kerchunk gives the CF times it writes again.
_CF_FILL = 2**62

#: Where our combine records how a set was combined (a root attribute); kerchunk writes none.
_RECORD = "zarrs_kerchunk_combined_with"


class MultiZarrToZarr:
    """kerchunk's ``MultiZarrToZarr(path, indicts=None, coo_map=None, concat_dims=None,
    coo_dtypes=None, identical_dims=None, target_options=None, remote_protocol=None,
    remote_options=None, inline_threshold=500, preprocess=None, postprocess=None, out=None)``.

    ``path`` is a list of reference sets: dicts (``{"version": 1, "refs": ...}``), or paths or
    URLs of JSON files (patterns expanded), with ``indicts`` the dicts of files ``path`` names.
    ``coo_map`` takes, for each dimension of ``concat_dims``, ``"data:DIM"`` (the default),
    ``"cf:DIM"``, ``"attr:NAME"`` or a compiled regex searched in the last part of each file's
    path, whose first group is read as a number (kerchunk keeps its text unless ``coo_dtypes``
    makes it one); ``"INDEX"``, ``"VARNAME"``, ``"vattr:"``, lists, constants and callables are
    refused by name. ``identical_dims`` are checked the same in every set, and taken from the
    first in the coordinate's order (kerchunk: the first given). ``preprocess``
    is called with each set's references, ``postprocess`` with the result's, as kerchunk calls
    them. ``target_options`` (for the sets) and ``remote_options`` (for the files they point at)
    are fsspec's storage options, given to one store: where both name a key, its values must agree.
    A ``remote_protocol`` other than ``"file"`` is taken as each URL's own, and a target URL
    without a protocol is refused rather than read as a local path."""

    def __init__(
        self,
        path: Any,
        indicts: list[dict] | None = None,
        coo_map: dict[str, Any] | None = None,
        concat_dims: str | list[str] | None = None,
        coo_dtypes: dict[str, Any] | None = None,
        identical_dims: list[str] | None = None,
        target_options: dict[str, Any] | None = None,
        remote_protocol: str | None = None,
        remote_options: dict[str, Any] | None = None,
        inline_threshold: int = 500,
        preprocess: Any = None,
        postprocess: Any = None,
        out: Any = None,
    ) -> None:
        if concat_dims is None:
            concat_dims = list(coo_map or {})
        self.concat_dims = [concat_dims] if isinstance(concat_dims, str) else list(concat_dims)
        if "var" in self.concat_dims:
            raise NotImplementedError('concat_dims: "var" (merging variables) is not supported; use tools.combine(merge=True)')
        self.coo_map = dict(coo_map or {})
        for dim in self.concat_dims:
            self.coo_map.setdefault(dim, f"data:{dim}")
        self.identical_dims = list(identical_dims or [])
        if set(self.coo_map) & set(self.identical_dims):
            raise ValueError("Values being mapped cannot also be identical")
        self.coords = {dim: _source(dim, selector) for dim, selector in self.coo_map.items()}
        self.coo_dtypes = {dim: np.dtype(dtype) for dim, dtype in (coo_dtypes or {}).items()}
        for dim, dtype in self.coo_dtypes.items():
            if dtype.kind not in "iuf":
                raise NotImplementedError(f"coo_dtypes[{dim!r}]={dtype}: only numeric types are supported")
        if out is not None and not isinstance(out, dict):
            raise NotImplementedError(f"out: a {type(out).__name__}; only a dict is filled (write parquet with tools.convert)")
        self.path = path
        self.indicts = indicts
        self.target_options = target_options or {}
        self.remote_protocol = remote_protocol
        self.remote_options = remote_options or {}
        self.inline = inline_threshold
        self.preprocess = preprocess
        self.postprocess = postprocess
        # kerchunk's consolidate turns what `out` or postprocess hold as bytes into text; what
        # is made here is text already.
        self._consolidated = out is None and postprocess is None
        self.out = out if out is not None else {}

    @classmethod
    def append(cls, *args: Any, **kwargs: Any) -> MultiZarrToZarr:
        """Refused: add files to a combined set with ``tools.combine(..., append_to=SET)``, which
        records how the set was combined."""
        raise NotImplementedError("MultiZarrToZarr.append: use zarrs_kerchunk.tools.combine(refs, output, append_to=SET)")

    def translate(self, filename: str | None = None, storage_options: dict[str, Any] | None = None) -> dict:
        """The combined references, ``{"version": 1, "refs": {...}}``; also written to
        ``filename`` (as JSON) if given, with fsspec and ``storage_options`` where it is a URL."""
        # The folder names where the result would be written, so that its targets are named
        # absolute (nothing lies in it); nothing is written there.
        with tempfile.TemporaryDirectory() as folder:
            inputs, labels = self._inputs(folder)
            try:
                refs = _combined_references(
                    inputs, os.path.join(os.getcwd(), "refs.json"), os.path.join(folder, "combined.json"),
                    concat=list(reversed(self.concat_dims)), coords=self.coords, identical=self.identical_dims or None,
                    inline_below=max(self.inline, 0), not_inlined=self.identical_dims, **self._options(),
                )
            except Exception as error:
                # Errors name the sets as given (path[1]), not the names given to combine.
                message = str(error)
                for written, label in labels.items():
                    message = message.replace(written, label)
                error.args = (message, *error.args[1:])
                raise
        # As kerchunk holds them: text, "base64:" text or ranges; the coordinates are written
        # again as kerchunk writes them.
        self._kerchunk_coordinates(refs)
        _drop_record(refs)
        self.out.update(refs)
        if self.postprocess is not None:
            self.out = self.postprocess(self.out)
        result = {"version": 1, "refs": self.out} if self._consolidated else _consolidate(self.out)
        if filename is not None:
            _write(filename, result, storage_options)
        return result

    def _options(self) -> dict[str, Any]:
        """The store's options: ``target_options`` and ``remote_options`` as one."""
        sets, targets = _access(self.target_options, "target_options"), _access(self.remote_options, "remote_options")
        merged = dict(sets["storage_options"])
        for key, value in targets["storage_options"].items():
            if merged.get(key, value) != value:
                raise ValueError(f"target_options and remote_options give {key!r} different values: one store reads both")
            merged[key] = value
        return {"storage_options": merged, "anonymous": sets["anonymous"] or targets["anonymous"]}

    def _inputs(self, folder: str) -> tuple[list[tuple[str, dict | None]], dict[str, str]]:
        """The sets as combining takes them: paths as given where nothing must be changed, else
        each set's references, under a name of its own in ``folder`` (where a regex reads its last
        part); and what errors should call each name given."""
        if self.indicts is not None:
            names, sets = [os.fspath(p) for p in self.path], list(self.indicts)
        elif self.path and isinstance(self.path[0], collections.abc.Mapping):
            sets = list(self.path)
            names = [s.get("templates", {}).get("u") for s in sets]
        else:
            names = [os.fspath(p) for p in ([self.path] if isinstance(self.path, (str, os.PathLike)) else self.path)]
            if self.preprocess is None and self.remote_protocol in (None, "file", "local"):
                return [(name, None) for name in names], {}
            sets = [_load(name, self.target_options) for name in names]
        inputs, labels = [], {}
        given = "indicts" if self.indicts is not None else "path"
        named = any(source.startswith("name:") for source in self.coords.values())
        for i, (name, references) in enumerate(zip(names, sets, strict=True)):
            references = references if "refs" in references else {"version": 1, "refs": references}
            if self.preprocess is not None:
                references = dict(references, refs=dict(references["refs"]))
                self.preprocess(references["refs"])
            self._check_protocol(name or f"{given}[{i}]", references)
            if named:
                written = os.path.join(folder, str(i), os.path.basename((name or "").rstrip("/")) or "refs.json")
            else:
                written = os.path.join(folder, f"{i}.json")
            # Relative local targets resolve against the working folder, as fsspec reads a dict's.
            inputs.append((written, references))
            labels[written] = f"{given}[{i}]" + (f" ({name})" if name else "")
        return inputs, labels

    def _check_protocol(self, name: str, references: dict) -> None:
        if self.remote_protocol in (None, "file", "local"):
            return
        for key, value in references["refs"].items():
            if isinstance(value, list) and value and value[0] and "://" not in value[0] and "{{" not in value[0]:
                raise NotImplementedError(
                    f"{name}: {key} points at {value[0]!r}, a URL without a protocol: give it as "
                    f"{self.remote_protocol}://... (remote_protocol is not added to URLs here)"
                )

    def _kerchunk_coordinates(self, refs: dict[str, Any]) -> None:
        """The concatenated coordinates as kerchunk writes them: ``cf:`` times as whole numbers
        (``<i8``, fill 2**62) where every one is whole, ``coo_dtypes`` applied, Zstd-compressed
        past 100 values."""
        import numcodecs

        for dim in self.concat_dims:
            zarray = json.loads(refs[f"{dim}/.zarray"])
            chunk = _bytes(refs.get(f"{dim}/0"))
            if not isinstance(chunk, bytes) or zarray["compressor"] or zarray["filters"] or len(zarray["shape"]) != 1:
                raise ValueError(f"{dim}: the combined coordinate is not one raw inline chunk")
            values = np.frombuffer(chunk, dtype=zarray["dtype"], count=zarray["shape"][0])
            if dim in self.coo_dtypes:
                values = values.astype(self.coo_dtypes[dim])
                zarray["fill_value"] = None if values.dtype.kind in "iu" else zarray["fill_value"]
            elif _is_cf(self.coo_map[dim]) and values.dtype.kind == "f" and np.all(np.isfinite(values)) \
                    and np.all(values == np.round(values)) and np.all(np.abs(values) < 2**62):
                values = values.astype("<i8")
                zarray["fill_value"] = _CF_FILL
            zarray["dtype"] = values.dtype.str
            zarray.setdefault("dimension_separator", ".")
            if _is_cf(self.coo_map[dim]):
                # kerchunk names the calendar it encoded with, "standard" where the file named none.
                zattrs = json.loads(refs[f"{dim}/.zattrs"])
                zattrs.setdefault("calendar", "standard")
                refs[f"{dim}/.zattrs"] = json.dumps(zattrs)
            zarray["compressor"] = numcodecs.Zstd().get_config() if values.size > 100 else None
            data = values.tobytes()
            refs[f"{dim}/0"] = _inline(numcodecs.Zstd().encode(data) if values.size > 100 else data)
            refs[f"{dim}/.zarray"] = json.dumps(zarray)


def _source(dim: str, selector: Any) -> str:
    """A ``coo_map`` selector as ``tools.combine``'s ``coords``, or refused by name."""
    if isinstance(selector, re.Pattern):
        if selector.groups == 0:
            raise NotImplementedError(f"coo_map[{dim!r}]: a regex without a group")
        return f"name:{selector.pattern}"
    if isinstance(selector, str):
        kind, _, rest = selector.partition(":")
        if kind in ("data", "cf") and rest == dim:
            return kind
        if kind == "attr" and rest:
            return selector
    raise NotImplementedError(
        f"coo_map[{dim!r}]={selector!r}: supported are 'data:{dim}', 'cf:{dim}', 'attr:NAME' and compiled regexes"
    )


def _is_cf(selector: Any) -> bool:
    return isinstance(selector, str) and selector.startswith("cf:")


def _drop_record(refs: dict[str, Any]) -> None:
    attrs = refs.get(".zattrs")
    if attrs is not None:
        parsed = json.loads(attrs)
        if parsed.pop(_RECORD, None) is not None:
            refs[".zattrs"] = json.dumps(parsed)


def _consolidate(refs: dict[str, Any]) -> dict:
    """kerchunk's ``consolidate``: bytes as ASCII text where they are, else base64."""
    return {"version": 1, "refs": {key: _inline(value) if isinstance(value, bytes) else value
                                   for key, value in refs.items()}}


def _load(name: str, options: dict[str, Any]) -> dict:
    """The JSON references at ``name`` (a path, or a URL read with fsspec)."""
    if "://" not in name or name.startswith("file://"):
        with open(name.removeprefix("file://")) as f:
            return json.load(f)
    import fsspec

    with fsspec.open(name, "rt", **options) as f:
        return json.load(f)


def _write(filename: str, result: dict, storage_options: dict[str, Any] | None) -> None:
    if "://" in filename:
        import fsspec

        opened = fsspec.open(filename, "wt", **(storage_options or {}))
    else:
        opened = open(filename, "w")
    with opened as f:
        f.write(json.dumps(result))

