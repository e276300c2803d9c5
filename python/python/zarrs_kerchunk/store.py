"""``ReferenceStore``: a read-only zarr-python 3 store over a kerchunk reference set.

The references are opened, parsed and read by the Rust crate ``zarrs_kerchunk``: the store's
coroutines run on a tokio runtime without the GIL, and chunks come back as zero-copy buffers.
"""

from __future__ import annotations

import json
import os
import threading
from collections import OrderedDict
from collections.abc import AsyncIterator, Iterable
from typing import Any

from zarr.abc.store import ByteRequest, OffsetByteRequest, RangeByteRequest, Store, SuffixByteRequest
from zarr.core.buffer import Buffer, BufferPrototype, default_buffer_prototype

from zarrs_kerchunk._rs import StoreHandle

__all__ = ["ReferenceStore"]

#: Opened reference sets of this process, by their specification (location and options), so that
#: every unpickled copy of a store (one per Dask task) shares one open set.
_OPENED: OrderedDict[str, StoreHandle] = OrderedDict()
_OPENED_LOCK = threading.Lock()
#: How many reference sets a process keeps open for unpickled stores.
_MAX_OPENED = 16


def _forget_opened() -> None:
    # A forked child cannot use the parent's runtime: its stores must fail, not hang (see _rs).
    _OPENED.clear()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_opened)


def _insert(spec: str, handle: StoreHandle) -> None:
    """Remember `handle` as the newest opening of `spec`, forgetting the oldest past the bound.
    The caller holds the lock."""
    _OPENED[spec] = handle
    _OPENED.move_to_end(spec)
    while len(_OPENED) > _MAX_OPENED:
        _OPENED.popitem(last=False)


def _remember(spec: str, handle: StoreHandle) -> None:
    with _OPENED_LOCK:
        _insert(spec, handle)


def _opened(spec: str, location: str, options: dict[str, Any]) -> StoreHandle:
    """The handle of `spec`, opened once per process however many copies are unpickled."""
    with _OPENED_LOCK:
        handle = _OPENED.get(spec)
        if handle is not None:
            _OPENED.move_to_end(spec)
            return handle
        # Opened under the lock: the threads of a Dask worker unpickle tasks at once, and each
        # set must be parsed only once. The GIL is released while the Rust side reads.
        handle = StoreHandle.open(location, options)
        _insert(spec, handle)
        return handle


def _absolute(location: str | os.PathLike[str]) -> str:
    """A local path made absolute (a pickle may be opened in another directory); URLs as given."""
    text = os.fspath(location)
    if "://" in text:
        return text
    return os.path.abspath(text) + ("/" if text.endswith("/") else "")


def _request(byte_range: ByteRequest | None) -> tuple[str, int, int] | None:
    """A zarr byte request as the Rust handle takes it."""
    if byte_range is None:
        return None
    if isinstance(byte_range, RangeByteRequest):
        start, end = byte_range.start, byte_range.end
        if start < 0 or end < start:
            raise ValueError(f"Unexpected byte_range, got {byte_range}: start and end must satisfy 0 <= start <= end")
        return ("range", start, end)
    if isinstance(byte_range, OffsetByteRequest):
        if byte_range.offset < 0:
            raise ValueError(f"Unexpected byte_range, got {byte_range}: the offset must not be negative")
        return ("offset", byte_range.offset, 0)
    if isinstance(byte_range, SuffixByteRequest):
        if byte_range.suffix < 0:
            raise ValueError(f"Unexpected byte_range, got {byte_range}: the suffix must not be negative")
        return ("suffix", byte_range.suffix, 0)
    raise TypeError(f"Unexpected byte_range, got {byte_range}")


class ReferenceStore(Store):
    """A read-only zarr store over the kerchunk references at ``location``.

    ``location`` is a path or URL of a JSON reference document (version 0 or 1, plain, gzip or
    zstd) or of an fsspec parquet reference root, as the Rust ``ReferenceStore::open`` takes.
    The references are opened at once, so a missing or malformed document raises here:
    :class:`~zarrs_kerchunk.errors.ReferencesNotFoundError`,
    :class:`~zarrs_kerchunk.errors.InvalidReferencesError` and so on.

    Keyword options, as ``ReferenceStoreBuilder`` takes them:

    - ``storage_options``: ``object_store`` configuration keys, such as
      ``{"aws_region": "us-west-2", "aws_endpoint": "http://localhost:9000"}``;
    - ``anonymous``: read public data without credentials;
    - ``target``: where references with a ``null`` URL point;
    - ``templates``: version 1 template overrides, ``{"root": "s3://bucket/data"}``;
    - ``allowed_prefixes``: read only targets under these folder URLs;
    - ``allow_local``: let a remote reference set read local files;
    - ``url_rewrite``: read targets under each key from its value instead;
    - ``pins`` (a pins file written by ``zarrs-kerchunk pin``) and ``relax_pins``;
    - ``limits``: ``{"max_document_bytes": ..., "max_generated_references": ..., ...}``;
    - ``read_ahead`` (bytes), ``fetch_concurrency``, ``timeout`` (seconds);
    - ``cache``: a folder keeping the byte ranges read from remote files (and remote reference
      documents and parquet record files), shared by every process and Dask worker on the
      machine (``ZARRS_KERCHUNK_CACHE`` if not given; ``cache=""`` turns that off). Each range is
      served only for the version of the file it came from (ETag, else size and last-modified
      time), checked with one HEAD per file per process (none for a pinned file unless
      ``cache_check_pins``), and against its checksum on every read. ``cache_size`` (bytes, 10 GiB
      by default) bounds it, least recently read ranges removed first;
    - ``credentials``: where each URL prefix's credentials come from, as the command line's
      ``--credentials`` file says it: ``{"s3://bucket/": {"s3credentials": URL, "token_env":
      "EARTHDATA_TOKEN"}}`` reads the bucket with temporary keys from the endpoint (a NASA DAAC's
      ``/s3credentials``), asked with the bearer token in that variable and renewed before they
      expire. The store holds the variable's name, not the token: pickled to a Dask worker, it
      reads the worker's variable and fetches its own keys. An ``https://`` prefix may name the
      variable holding the bearer token for the URLs under it: ``{"https://data.example.org/": {"bearer_env":
      "MY_TOKEN"}}``;
    - ``bearer_token``: a bearer token (an Earthdata Login token) for ``token_hosts``, NASA
      Earthdata's (``*.earthdata.nasa.gov``, ``*.earthdatacloud.nasa.gov``) if not given. Without
      it, ``EARTHDATA_TOKEN`` is read, in each process: a store pickled to a Dask worker carries a
      token given here, and otherwise reads the worker's variable;
    - ``headers``: headers for a host each, ``{"tiles.example.org": {"X-Api-Key": "..."}}``;
    - ``netrc``: the ``.netrc`` file whose logins are sent (basic authentication) to the machines
      it names, as NASA Earthdata Login's redirects ask for them; by default ``NETRC``, else
      ``~/.netrc`` if there is one; ``False`` for none. Redirects are followed hop by hop and
      each host is sent only what is given for it: a data host's token never reaches the signed
      URL it redirects to. A refusal raises naming the host that refused; no error shows a token,
      a header's value or a password.

    The store pickles as its location and options, never as its references: a Dask worker
    opens each reference set once per process, whatever the number of tasks. A key's read that
    fails raises :class:`~zarrs_kerchunk.errors.ReferenceReadError` naming the key, the URL and
    the cause; only a key the set does not have reads as missing.

    Open groups with ``mode="r"`` (``zarr.open_group`` defaults to ``"a"``, which a read-only
    store refuses): ``zarr.open_group(store, mode="r", zarr_format=2)`` or
    ``xarray.open_zarr(store, consolidated=False, zarr_format=2)``.
    """

    supports_writes: bool = False
    supports_deletes: bool = False
    supports_listing: bool = True
    # zarr's FusedCodecPipeline reads chunks through get_sync when a store has all three.
    _supports_sync_io: bool = True

    _handle: StoreHandle
    _location: str
    _options: dict[str, Any]
    _spec: str

    def __init__(self, location: str | os.PathLike[str], *, read_only: bool = True, **options: Any) -> None:
        if not read_only:
            raise ValueError("ReferenceStore is read-only: kerchunk references cannot be written through it")
        super().__init__(read_only=True)
        self._location = _absolute(location)
        options = with_cache_from_environment(options)
        self._options = options
        self._spec = _spec(self._location, options)
        self._handle = StoreHandle.open(self._location, options)
        _remember(self._spec, self._handle)

    @classmethod
    def _from_handle(cls, location: str, options: dict[str, Any], handle: StoreHandle) -> ReferenceStore:
        store = cls.__new__(cls)
        Store.__init__(store, read_only=True)
        store._location, store._options, store._spec, store._handle = location, options, _spec(location, options), handle
        return store

    # --- identity, pickling, tokenizing -----------------------------------------------------

    @property
    def location(self) -> str:
        """Where the references were opened from (a local path made absolute)."""
        return self._location

    def __eq__(self, other: object) -> bool:
        return isinstance(other, ReferenceStore) and self._spec == other._spec

    def __hash__(self) -> int:
        return hash(self._spec)

    def __repr__(self) -> str:
        return f"ReferenceStore({self._location!r})"

    def __str__(self) -> str:
        return f"kerchunk://{self._location}"

    def __reduce__(self) -> tuple[Any, ...]:
        return (_rebuild, (self._location, self._options))

    def __dask_tokenize__(self) -> tuple[str, str]:
        return ("zarrs_kerchunk.ReferenceStore", self._spec)

    def with_read_only(self, read_only: bool = False) -> ReferenceStore:
        if not read_only:
            raise NotImplementedError(f"with_read_only is not implemented for the {type(self)} store type.")
        return ReferenceStore._from_handle(self._location, self._options, self._handle)

    @property
    def supports_consolidated_metadata(self) -> bool:
        # Only a set with .zmetadata: otherwise xarray tries it, and warns on every open.
        return self._handle.get_sync(".zmetadata", ("range", 0, 0)) is not None

    # --- reading ------------------------------------------------------------------------------

    async def get(
        self, key: str, prototype: BufferPrototype | None = None, byte_range: ByteRequest | None = None
    ) -> Buffer | None:
        prototype = default_buffer_prototype() if prototype is None else prototype
        value = await self._handle.get(key, _request(byte_range))
        return None if value is None else prototype.buffer.from_bytes(value)

    def get_sync(
        self, key: str, *, prototype: BufferPrototype | None = None, byte_range: ByteRequest | None = None
    ) -> Buffer | None:
        """:meth:`get`, blocking, with the GIL released: zarr's sync store protocol."""
        prototype = default_buffer_prototype() if prototype is None else prototype
        value = self._handle.get_sync(key, _request(byte_range))
        return None if value is None else prototype.buffer.from_bytes(value)

    async def get_partial_values(
        self, prototype: BufferPrototype, key_ranges: Iterable[tuple[str, ByteRequest | None]]
    ) -> list[Buffer | None]:
        requests = [(key, _request(byte_range)) for key, byte_range in key_ranges]
        values = await self._handle.get_many(requests)
        return [None if value is None else prototype.buffer.from_bytes(value) for value in values]

    async def exists(self, key: str) -> bool:
        return await self._handle.exists(key)

    async def getsize(self, key: str) -> int:
        size = await self._handle.size(key)
        if size is None:
            raise FileNotFoundError(key)
        return size

    # --- listing ------------------------------------------------------------------------------

    async def list(self) -> AsyncIterator[str]:
        for key in await self._handle.list_prefix(""):
            yield key

    async def list_prefix(self, prefix: str) -> AsyncIterator[str]:
        for key in await self._handle.list_prefix(prefix):
            yield key

    async def list_dir(self, prefix: str) -> AsyncIterator[str]:
        for name in await self._handle.list_dir(prefix):
            yield name

    # --- writing: refused ---------------------------------------------------------------------

    async def set(self, key: str, value: Buffer) -> None:
        self._check_writable()
        raise NotImplementedError("ReferenceStore is read-only")

    async def delete(self, key: str) -> None:
        self._check_writable()
        raise NotImplementedError("ReferenceStore is read-only")

    def set_sync(self, key: str, value: Buffer) -> None:
        self._check_writable()
        raise NotImplementedError("ReferenceStore is read-only")

    def delete_sync(self, key: str) -> None:
        self._check_writable()
        raise NotImplementedError("ReferenceStore is read-only")


def with_cache_from_environment(options: dict[str, Any]) -> dict[str, Any]:
    """``options`` with ``cache`` as a str: as given (``""``: none), else ``ZARRS_KERCHUNK_CACHE`` if set."""
    cache = options.get("cache")
    if cache is None:
        cache = os.environ.get("ZARRS_KERCHUNK_CACHE") or None
    if cache is None:
        return options
    return {**options, "cache": os.fspath(cache)}


def _spec(location: str, options: dict[str, Any]) -> str:
    """What identifies a store: its location and options, canonical."""
    try:
        return json.dumps([location, options], sort_keys=True)
    except TypeError as e:
        raise TypeError(f"ReferenceStore options must be str, bool, numbers, lists and dicts of them: {e}") from None


def _rebuild(location: str, options: dict[str, Any]) -> ReferenceStore:
    """Unpickle a store: the set opened by this process for the same location and options, if any."""
    handle = _opened(_spec(location, options), location, options)
    return ReferenceStore._from_handle(location, options, handle)
