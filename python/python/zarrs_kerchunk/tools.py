"""The tools of zarrs_kerchunk from Python: statistics, audits and pins of a reference set,
conversion between JSON and parquet, and references made from NetCDF and HDF5 files.

Each takes an opened :class:`~zarrs_kerchunk.ReferenceStore`, or a location and the store's
keyword options, and returns plain Python objects (dicts and lists, as the command line's
``--json`` prints them). Errors are those of :mod:`zarrs_kerchunk.errors`: a missing document or
file raises :class:`FileNotFoundError`, a refused one :class:`PermissionError`, malformed
references :class:`ValueError`, an unreachable place :class:`OSError`.
"""

from __future__ import annotations

import json
import os
from typing import TYPE_CHECKING, Any

from zarrs_kerchunk import _rs

if TYPE_CHECKING:
    from zarrs_kerchunk.store import ReferenceStore

__all__ = ["audit", "convert", "pin", "scan", "stats"]


def _store(references: ReferenceStore | str | os.PathLike[str], options: dict[str, Any]) -> ReferenceStore:
    # Imported here: the store imports zarr, which scan never needs (5 MiB and 0.2 s of a
    # spread scan's client).
    from zarrs_kerchunk.store import ReferenceStore

    if isinstance(references, ReferenceStore):
        if options:
            raise TypeError(f"options {sorted(options)} are for opening a location, not an opened ReferenceStore")
        return references
    return ReferenceStore(references, **options)


def stats(references: ReferenceStore | str | os.PathLike[str], **options: Any) -> dict[str, Any]:
    """What the set's references point at, without reading a chunk: per array (references by
    kind, chunks missing from the grid, bytes referenced) and per target file."""
    return json.loads(_rs.stats(_store(references, options)._handle))


def audit(
    references: ReferenceStore | str | os.PathLike[str],
    *,
    concurrency: int = 16,
    encodings: bool = False,
    **options: Any,
) -> dict[str, Any]:
    """Every target checked (one metadata request each, ``concurrency`` at once) against what its
    references need: ``{"targets": [{"url", "status", ...}], "malformed": [...]}``. A missing,
    short or changed target is a finding, not an exception.

    With ``encodings=True``, each target's own metadata is read instead (a header scan, no data,
    ``concurrency`` targets at once) and compared with the attributes the set gives the arrays
    whose chunks it holds (packing, fill values, valid ranges, ``_Unsigned``, units, calendars):
    ``{"targets": [{"url", "arrays", "status": "agrees" | "differs" | "unchecked",
    "differences": [{"array", "attribute", "target", "set"}], "error"}]}``. A set that kerchunk
    or VirtualiZarr combined from files packed each their own way decodes every target that
    ``differs`` wrong."""
    store = _store(references, options)
    if encodings:
        write = _write_options(1, False, None, 100_000, "auto", True, options)
        return json.loads(_rs.audit_encodings(store._handle, concurrency, write))
    return json.loads(_rs.audit(store._handle, concurrency))


def pin(
    references: ReferenceStore | str | os.PathLike[str], *, concurrency: int = 16, **options: Any
) -> tuple[dict[str, Any], dict[str, Any]]:
    """Pins (size, ETag, last modified) of every target that passes the audit, and the audit.
    Write ``json.dumps(pins)`` to a file and pass its path as ``ReferenceStore(..., pins=path)``
    to refuse targets that change."""
    pins, report = _rs.pin(_store(references, options)._handle, concurrency)
    return json.loads(pins), json.loads(report)


def _write_options(
    version: int,
    url_templates: bool,
    zstd: int | None,
    record_size: int,
    paths: str,
    compression: bool,
    options: dict[str, Any],
) -> dict[str, Any]:
    return {
        "version": version,
        "url_templates": url_templates,
        "zstd": zstd,
        "record_size": record_size,
        "paths": paths,
        "compression": compression,
        "storage_options": options.get("storage_options") or {},
        "anonymous": bool(options.get("anonymous", False)),
        "cache": _cache_folder(options.get("cache")),
        "cache_size": options.get("cache_size"),
        "credentials": options.get("credentials"),
        "http": {name: options.get(name) for name in ("bearer_token", "netrc")}
        | {"token_hosts": options.get("token_hosts") or [], "headers": options.get("headers") or {}},
    }


def _one_file(inline_threshold: int | None, fail_unsupported: bool, dmrpp: str = "never") -> dict[str, Any]:
    """:func:`scan`'s arguments for one file, scanned alone: nothing combined."""
    return {
        "concat": [], "coords": [], "units": None, "calendar": None, "jobs": 1, "combine_memory": 0,
        "identical": [], "merge": False, "append_to": None, "skip_existing": False,
        "inline_threshold": inline_threshold, "fail_unsupported": fail_unsupported,
        "grib_inventory": True, "grib_levels_from_inventory": True, "subchunk": [], "dmrpp": dmrpp,
    }


def _netrc(netrc: str | os.PathLike[str] | bool | None) -> str | bool | None:
    """``netrc=``: a file (as a str), or whether to look for one."""
    return netrc if netrc is None or isinstance(netrc, bool) else os.fspath(netrc)


def _cache_folder(cache: str | os.PathLike[str] | None) -> str | None:
    """The disk cache's folder: ``cache`` (``""``: none), else ``ZARRS_KERCHUNK_CACHE`` if set."""
    cache = cache if cache is not None else os.environ.get("ZARRS_KERCHUNK_CACHE") or None
    return None if cache is None else os.fspath(cache)


def convert(
    references: ReferenceStore | str | os.PathLike[str],
    output: str | os.PathLike[str],
    *,
    version: int = 1,
    url_templates: bool = False,
    zstd: int | None = None,
    record_size: int = 100_000,
    paths: str = "auto",
    compression: bool = True,
    message: str | None = None,
    manifest_split: int | None = None,
    commit_every: int | None = None,
    **options: Any,
) -> int | dict[str, Any]:
    """Write the references to ``output``, a path or URL: a parquet root if its name ends in
    ``.parq``, ``.parquet`` or ``/``, zstd JSON if in ``.zst``, JSON otherwise. Returns the number
    of references written. ``storage_options`` and ``anonymous`` also reach the output's store.

    ``icechunk://PATH`` (``@BRANCH`` after it; ``main`` by default), or
    ``icechunk+s3://bucket/prefix``, ``icechunk+gs://bucket/prefix`` or
    ``icechunk+az://container/prefix`` reached with ``storage_options``, is an icechunk repository,
    created if absent: the references are committed into it as virtual chunks, with ``message``,
    and what was committed is returned (``snapshot``, ``arrays``, ``virtual_chunks``,
    ``inline_chunks``, and the virtual chunk ``containers`` readers authorise). An array of more
    than ``manifest_split`` chunks (100 000 if ``None``) has its manifest split into manifests of
    at most that many, unless the repository's configuration splits them: icechunk builds each
    manifest whole in memory when it commits. With ``commit_every``, the references are
    committed in parts of that many chunks, so that icechunk holds one part at a time: on a
    working branch of their own, the branch then moved to the last part (its history shows every
    part)."""
    output = os.fspath(output)
    store = _store(references, options)
    if output.startswith("icechunk://") or output.startswith("icechunk+"):
        # As for a file output, `storage_options` and `anonymous` also reach the repository's store.
        repository = {k: options[k] for k in ("storage_options", "anonymous") if k in options}
        return json.loads(_rs.convert_icechunk(
            store._handle, output, message, repository, manifest_split, commit_every
        ))
    write = _write_options(version, url_templates, zstd, record_size, paths, compression, options)
    return _rs.convert(store._handle, output, write)


def scan(
    files: str | os.PathLike[str] | list[str | os.PathLike[str]],
    output: str | os.PathLike[str],
    *,
    concat: str | list[str] | None = None,
    coords: dict[str, str] | None = None,
    units: str | None = None,
    calendar: str | None = None,
    jobs: int = 16,
    combine_memory: int | None = None,
    merge: bool = False,
    identical: list[str] | None = None,
    append_to: str | os.PathLike[str] | None = None,
    skip_existing: bool = False,
    inline_threshold: int | None = None,
    fail_unsupported: bool = False,
    grib_inventory: bool = True,
    grib_levels_from_inventory: bool = True,
    dmrpp: str = "auto",
    subchunk: dict[str, int] | None = None,
    version: int = 1,
    url_templates: bool = False,
    zstd: int | None = None,
    record_size: int = 100_000,
    paths: str = "auto",
    compression: bool = True,
    storage_options: dict[str, str] | None = None,
    anonymous: bool = False,
    cache: str | os.PathLike[str] | None = None,
    cache_size: int | None = None,
    credentials: dict[str, dict[str, str]] | None = None,
    bearer_token: str | None = None,
    token_hosts: list[str] | None = None,
    headers: dict[str, dict[str, str]] | None = None,
    netrc: str | os.PathLike[str] | bool | None = None,
    executor: Any = None,
) -> dict[str, Any]:
    r"""References made from NetCDF-3, NetCDF-4, HDF5, GRIB2 and TIFF files, as kerchunk makes them, reading
    only their metadata, written to ``output`` (as :func:`convert` writes).

    ``files`` are paths or URLs, or patterns of them (``"s3://bucket/run/*.nc"``); several files
    are combined along the dimension ``concat`` (a list for several, innermost first, as the
    command line's repeated ``--concat``). ``coords`` says where a dimension's values come from,
    as the command line's ``--coord``: ``{"member": r"name:_m(\d+)\.nc$"}`` (a number in each
    file's name), ``{"time": r"name:_(\d{8})\.nc$:%Y%m%d"}`` (a date), ``{"time": "attr:date"}``
    (a global attribute), ``"data"`` or ``"cf"`` (the files' coordinate arrays); a dimension only
    there is combined along too, outside those of ``concat``; the files are grouped by their one
    value along an outer dimension (from their data by default: each file's coordinate must hold
    one value). ``units`` (``"hours since 2020-01-01"``) and ``calendar`` set the CF
    units the combined times are written in. ``jobs`` files are scanned at once. Concatenating
    (along one dimension or several), up to ``combine_memory`` MiB of the files' combined chunks
    wait in memory until they are written, the rest in a temporary file (under ``TMPDIR``; the
    command line's ``--combine-memory``): by default 64 MiB here, none with an ``executor``.
    ``identical`` names arrays the same in every file (kerchunk's ``identical_dims``): where the
    files gain a new dimension, they are taken once, checked in every file, rather than given it. ``merge=True``
    takes the union of the arrays of files that each hold some (one file per variable), those
    several hold checked to be the same. ``append_to`` adds the files to a set made by combining
    (JSON or parquet), combined as it records (along several dimensions, extending the one whose
    values the new files change: new times for every member, or a member with every time), and
    writes it to ``output`` (which may be the same set); ``skip_existing`` leaves out files it
    has already, which are otherwise an error.
    A GRIB file's inventory beside it (NOAA's ``FILE.idx``, ECMWF's ``.index``) says where its
    messages are unless ``grib_inventory`` is false; one that disagrees with the file is an error.
    With NOAA's, messages whose lines differ only in their level's numbers (``TMP:500 mb``,
    ``TMP:850 mb``) share one header read, their levels taken from their lines, unless
    ``grib_levels_from_inventory`` is false.
    A file's DMR++ sidecar beside it (``FILE.dmrpp``, OPeNDAP Hyrax's, as beside most of NASA
    Earthdata's granules) is read in place of its header where there is one (``dmrpp="auto"``: one
    small request, the header unread); ``"never"`` reads the file's header, ``"only"`` fails a
    file without one. A sidecar given itself (``"granule.nc.dmrpp"``) is scanned for the file it
    describes, and one a pattern also matches beside its file is left out.
    ``subchunk`` splits uncompressed arrays' chunks (``{"temp": 4}``: each into 4 along its first
    dimension), as kerchunk's ``utils.subchunk``.

    ``executor`` spreads the scanning: a Dask ``distributed.Client`` or any
    ``concurrent.futures.Executor`` (anything with ``submit(fn, *args)`` whose futures have
    ``result()``). Each task scans a share of the files, ``jobs`` at once, and returns their
    references as compact JSON, compressed together (under half the size); they are combined
    here, in the order of the files, and written. A share is ``jobs`` files, or more where that
    would make more than four tasks a worker (a Dask client's threads; 16 workers assumed for
    other executors): each task costs the executor time of its own. Concatenating, each
    share's references are set aside as it comes back, on disk unless ``combine_memory`` is
    given, so memory here does not grow with the files' chunks; setting them aside overlaps the
    workers' scans, so it costs little time (``benches/README.md``). With ``append_to``, the set
    is read here to find the new files, which the tasks scan as it records it was combined.
    Written back to a parquet root it extends (``output`` is ``append_to``), only the record
    files that change are written, and ``records`` reports those written, unchanged and removed.
    A process pool must spawn its workers (``mp_context=multiprocessing.get_context("spawn")``):
    a child forked after this process started its I/O runtime refuses it, as Dask never forks.

    ``cache`` (``ZARRS_KERCHUNK_CACHE`` if not given) is a folder keeping the byte ranges read
    from remote files, as :class:`~zarrs_kerchunk.ReferenceStore`'s: a file scanned again costs
    one HEAD and no GET; ``cache_size`` bounds it (bytes, 10 GiB by default). ``credentials``,
    ``bearer_token``, ``token_hosts``, ``headers`` and ``netrc`` are
    :class:`~zarrs_kerchunk.ReferenceStore`'s.

    Returns what was made: the references written, the files, the requests made and bytes read,
    and the arrays left out (``skipped``)."""
    if isinstance(files, (str, os.PathLike)):
        files = [files]
    write = _write_options(
        version, url_templates, zstd, record_size, paths, compression,
        {"storage_options": storage_options, "anonymous": anonymous, "cache": cache, "cache_size": cache_size,
         "credentials": credentials, "bearer_token": bearer_token, "token_hosts": token_hosts, "headers": headers,
         "netrc": _netrc(netrc)},
    )
    arguments = _combining(concat, coords, units, calendar, _combine_memory(combine_memory, executor), merge,
                           identical, append_to, skip_existing)
    arguments |= {"jobs": jobs, "inline_threshold": inline_threshold, "fail_unsupported": fail_unsupported,
                  "grib_inventory": grib_inventory, "grib_levels_from_inventory": grib_levels_from_inventory,
                  "dmrpp": dmrpp, "subchunk": list((subchunk or {}).items())}
    files = [os.fspath(f) for f in files]
    if executor is None:
        return json.loads(_rs.scan(files, os.fspath(output), arguments, write))
    expanded = _rs.expand_files(files, write)
    if dmrpp != "never":
        # A file is read through its sidecar: one a pattern matched too is not scanned again.
        named = set(expanded)
        expanded = [f for f in expanded if not (f.endswith(".dmrpp") and f[: -len(".dmrpp")] in named)]
    if append_to is not None:
        # The set is read here, never on the workers: to plan (its new files, scanned as it records it
        # was combined) and again in combine_shares, which combines into it.
        expanded, record = _rs.plan_append(expanded, os.fspath(output), arguments, write)
        record = json.loads(record)
        arguments |= {"concat": record["concat"], "coords": list(record["coords"].items()),
                      "units": record["units"], "calendar": record["calendar"]}
    step = _share_size(executor, len(expanded), jobs)
    tasks = [executor.submit(_scan_share, expanded[i:i + step], os.fspath(output), arguments, write)
             for i in range(0, len(expanded), step)]
    # Concatenating, each share is set aside as it comes (memory does not grow with the files'
    # chunks); merging, appending or subchunking, the shares are combined whole.
    combiner = _rs.share_combiner(expanded, os.fspath(output), arguments, write)
    shares, report = [], {"requests": 0, "bytes": 0, "skipped": []}
    for i, task in enumerate(tasks):  # in the order of the files, whatever order they finish in
        share, share_report = task.result()
        tasks[i] = None  # a finished future holds its result
        if combiner is not None:
            combiner.add(share)
        else:
            shares.append(share)
        del share
        share_report = json.loads(share_report)
        for key in ("requests", "bytes"):
            report[key] += share_report[key]
        report["skipped"].extend(share_report["skipped"])
    if combiner is not None:
        return report | json.loads(combiner.finish())
    return report | json.loads(_rs.combine_shares(shares, expanded, os.fspath(output), arguments, write))


def combine(
    refs: str | os.PathLike[str] | list[str | os.PathLike[str]],
    output: str | os.PathLike[str],
    *,
    concat: str | list[str] | None = None,
    coords: dict[str, str] | None = None,
    units: str | None = None,
    calendar: str | None = None,
    combine_memory: int | None = None,
    merge: bool = False,
    identical: list[str] | None = None,
    append_to: str | os.PathLike[str] | None = None,
    skip_existing: bool = False,
    version: int = 1,
    url_templates: bool = False,
    zstd: int | None = None,
    record_size: int = 100_000,
    paths: str = "auto",
    compression: bool = True,
    storage_options: dict[str, str] | None = None,
    anonymous: bool = False,
    cache: str | os.PathLike[str] | None = None,
    cache_size: int | None = None,
    credentials: dict[str, dict[str, str]] | None = None,
    bearer_token: str | None = None,
    token_hosts: list[str] | None = None,
    headers: dict[str, dict[str, str]] | None = None,
    netrc: str | os.PathLike[str] | bool | None = None,
) -> dict[str, Any]:
    """Reference sets that exist combined into one, written to ``output`` (as :func:`convert`
    writes): kerchunk's per-file JSONs (``SingleHdf5ToZarr``, ``NetCDF3ToZarr``, ``scan_grib``),
    VirtualiZarr's ``to_kerchunk``, parquet roots, icechunk repositories (``icechunk://PATH``)
    or ours, as kerchunk's ``MultiZarrToZarr`` combines them, with the checks :func:`scan` makes.

    ``refs`` are paths or URLs, or patterns of them (``"refs/*.json"``). ``concat``, ``coords``,
    ``units``, ``calendar``, ``combine_memory`` (64 MiB by default), ``merge`` and ``identical``
    are :func:`scan`'s. Each set's relative URLs and templates are resolved as it reads them, so
    ``output`` reads the same targets from wherever it is written; coordinates are decoded as
    zarr decodes them (any chunking, compressor, filters and byte order, inline or a range).
    Sets whose arrays decode differently (another ``scale_factor``, ``add_offset``, fill value,
    valid range, ``_Unsigned``, ``units`` or ``calendar``) are refused with an error naming the
    set, the array, the attribute and both values; times along the dimension in units of each
    set's own (the coordinate, its ``bounds``) are written again in one unit. ``append_to``
    adds the sets to a set made by combining, as :func:`scan`'s adds files (``output`` may be
    that set; ``skip_existing`` leaves out sets it records already). ``cache`` and ``cache_size``
    are :func:`scan`'s: remote sets and their coordinates read through the disk cache. The
    credentials (``credentials``, ``bearer_token``, ``token_hosts``, ``headers``, ``netrc``) are
    :class:`~zarrs_kerchunk.ReferenceStore`'s.

    Returns the references written and the sets combined (or added), in order."""
    if isinstance(refs, (str, os.PathLike)):
        refs = [refs]
    write = _write_options(
        version, url_templates, zstd, record_size, paths, compression,
        {"storage_options": storage_options, "anonymous": anonymous, "cache": cache, "cache_size": cache_size,
         "credentials": credentials, "bearer_token": bearer_token, "token_hosts": token_hosts, "headers": headers,
         "netrc": _netrc(netrc)},
    )
    arguments = _combining(concat, coords, units, calendar, _combine_memory(combine_memory, None), merge,
                           identical, append_to, skip_existing)
    arguments |= _only_scanning_reads()
    return json.loads(_rs.combine([os.fspath(r) for r in refs], os.fspath(output), arguments, write))


def _combined_references(
    sets: list[tuple[str, dict[str, Any] | None]],
    base: str,
    output: str,
    *,
    concat: list[str],
    coords: dict[str, str],
    identical: list[str] | None,
    inline_below: int,
    not_inlined: list[str],
    storage_options: dict[str, str],
    anonymous: bool,
) -> dict[str, Any]:
    """:func:`combine`'s concatenation for kerchunk's ``MultiZarrToZarr``, kept in memory: ``sets``
    are ``(location, None)``, or ``(name, references)`` (a dict) whose relative URLs
    resolve against ``base``; the result names its targets as references written to ``output``
    would, and is returned as kerchunk's ``refs`` dict, its ranges shorter than ``inline_below``
    bytes held inline but for coordinates and ``not_inlined``."""
    write = _write_options(1, False, None, 100_000, "auto", True,
                           {"storage_options": storage_options, "anonymous": anonymous})
    arguments = _combining(concat, coords, None, None, _combine_memory(None, None), False, identical, None, False)
    arguments |= _only_scanning_reads()
    refs, _ = _rs.combine_references(sets, base, output, arguments, write, inline_below, not_inlined)
    return refs


def _only_scanning_reads() -> dict[str, Any]:
    """:func:`scan`'s arguments that only scanning reads, at their defaults: what the extension's
    combining functions take beside :func:`_combining`'s."""
    return {"jobs": 1, "inline_threshold": None, "fail_unsupported": False, "grib_inventory": True,
            "grib_levels_from_inventory": True, "dmrpp": "never", "subchunk": []}


def _combining(
    concat: str | list[str] | None,
    coords: dict[str, str] | None,
    units: str | None,
    calendar: str | None,
    combine_memory: int,
    merge: bool,
    identical: list[str] | None,
    append_to: str | os.PathLike[str] | None,
    skip_existing: bool,
) -> dict[str, Any]:
    """The combining arguments :func:`scan` and :func:`combine` share, as the extension takes them."""
    return {
        "concat": [concat] if isinstance(concat, str) else list(concat or []),
        "coords": list((coords or {}).items()), "units": units, "calendar": calendar,
        "combine_memory": combine_memory, "merge": merge, "identical": list(identical or []),
        "append_to": os.fspath(append_to) if append_to is not None else None, "skip_existing": skip_existing,
    }


def _combine_memory(given: int | None, executor: Any) -> int:
    """The MiB of combined chunks held in memory: as ``given``, else 64 for a scan here and none
    for a spread one, whose client sets each share aside while the workers scan the next (10 000
    small files on two Dask workers: 3.57 s and 91 MiB set aside on disk, 3.04 s and 146 MiB
    with 64 MiB held; kerchunk's auto_dask took 148 s, VirtualiZarr 236 s and 465 MiB)."""
    if given is not None:
        return given
    return 64 if executor is None else 0


def _share_size(executor: Any, files: int, jobs: int) -> int:
    """How many of ``files`` files a task of a spread scan takes: ``jobs``, or more where that
    would make more than four tasks a worker, since every task has a cost of its own (10 000
    small files on two Dask workers: 8.2 s in tasks of 16, 4.8 s in tasks of 160)."""
    workers = 16
    nthreads = getattr(executor, "nthreads", None)  # a Dask client's: {worker: threads}
    if callable(nthreads):
        try:
            workers = max(1, sum(nthreads().values()))
        except (AttributeError, TypeError, ValueError):  # not a Dask client's: the assumption stands
            pass
    return max(1, jobs, -(-files // (4 * workers)))


def _scan_share(files: list[str], output: str, arguments: dict[str, Any], write: dict[str, Any]):
    """One task of a spread scan, on a worker: its files' references as JSON bytes, and a report.
    A module-level function, so that executors pickle it by name."""
    return _rs.scan_share(files, output, arguments, write)
