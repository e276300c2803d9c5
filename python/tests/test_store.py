"""The store's contract with zarr-python 3 (``zarr.abc.store.Store``), on a small reference set
made for each test: ranges relative to a reference's window, missing keys versus failed reads,
listing with segment semantics, the read-only surface, pickling and tokenizing."""

from __future__ import annotations

import base64
import json
import pickle
from pathlib import Path

import numpy as np
import pytest
import zarr
from zarr.abc.store import OffsetByteRequest, RangeByteRequest, SuffixByteRequest
from zarr.core.buffer import default_buffer_prototype

from zarrs_kerchunk import KerchunkError, ReferenceReadError, ReferenceStore
from zarrs_kerchunk.store import _OPENED

ARRAY = {"shape": [10], "chunks": [2], "dtype": "|u1", "compressor": None, "filters": None,
         "fill_value": 7, "order": "C", "zarr_format": 2}


@pytest.fixture
def refs(tmp_path: Path) -> Path:
    """A set over data.bin (bytes 0..99): x has a range, an inline chunk, an unreachable target, a
    malformed reference and an absent chunk; x2 shares x's name as a prefix."""
    (tmp_path / "data.bin").write_bytes(bytes(range(100)))
    document = {
        "version": 1,
        "refs": {
            ".zgroup": json.dumps({"zarr_format": 2}),
            "x/.zarray": json.dumps(ARRAY),
            "x/.zattrs": json.dumps({"_ARRAY_DIMENSIONS": ["i"]}),
            "x/0": ["data.bin", 10, 2],
            "x/1": "base64:" + base64.b64encode(bytes([1, 2])).decode(),
            "x/2": ["gone.bin", 0, 2],
            "x/3": ["data.bin", -1, 2],
            "x2/.zarray": json.dumps(dict(ARRAY, shape=[2])),
            "x2/.zattrs": json.dumps({"_ARRAY_DIMENSIONS": ["j"]}),
            "x2/0": ["data.bin", 30, 2],
            "impossible/0": ["data.bin", 0, 2**64 - 1],
        },
    }
    path = tmp_path / "refs.json"
    path.write_text(json.dumps(document))
    return path


@pytest.fixture
def store(refs: Path) -> ReferenceStore:
    return ReferenceStore(refs)


async def values(store: ReferenceStore, key: str, byte_range=None) -> bytes | None:
    buffer = await store.get(key, default_buffer_prototype(), byte_range)
    sync = store.get_sync(key, byte_range=byte_range)
    assert (buffer is None) == (sync is None)
    if buffer is None:
        return None
    assert buffer.to_bytes() == sync.to_bytes(), "get and get_sync differ"
    return buffer.to_bytes()


async def test_ranges_are_relative_to_the_window(store: ReferenceStore) -> None:
    assert await values(store, "x/0") == bytes([10, 11])
    assert await values(store, "x/0", RangeByteRequest(1, 2)) == bytes([11])
    # An end past the window is clamped to it: never a neighbouring byte of the target.
    assert await values(store, "x/0", RangeByteRequest(0, 100)) == bytes([10, 11])
    assert await values(store, "x/0", OffsetByteRequest(1)) == bytes([11])
    assert await values(store, "x/0", SuffixByteRequest(1)) == bytes([11])
    assert await values(store, "x/0", SuffixByteRequest(50)) == bytes([10, 11])
    assert await values(store, "x/1", RangeByteRequest(1, 2)) == bytes([2])


async def test_prototype_is_optional(store: ReferenceStore) -> None:
    # xarray's NCZarr fallback calls get(key) with no prototype.
    assert (await store.get("x/0")).to_bytes() == bytes([10, 11])


async def test_a_missing_key_is_none_and_a_failed_read_raises(store: ReferenceStore) -> None:
    assert await values(store, "x/5") is None
    assert await values(store, "nothing/here") is None
    for key in ["x/2", "x/3"]:
        with pytest.raises(ReferenceReadError) as raised:
            await store.get(key)
        # Never an OSError: zarr reads FileNotFoundError as "missing, use the fill value".
        assert not isinstance(raised.value, OSError)
        assert f'"{key}"' in str(raised.value), raised.value
    with pytest.raises(ReferenceReadError, match="gone.bin"):
        store.get_sync("x/2")


async def test_an_impossible_reference_fails_every_read(store: ReferenceStore) -> None:
    for byte_range in [None, RangeByteRequest(10, 20), OffsetByteRequest(5), SuffixByteRequest(3)]:
        with pytest.raises(ReferenceReadError, match="impossible/0"):
            await store.get("impossible/0", byte_range=byte_range)
        with pytest.raises(ReferenceReadError, match="impossible/0"):
            store.get_sync("impossible/0", byte_range=byte_range)


def test_zarr_reads_fill_values_only_for_absent_chunks(store: ReferenceStore) -> None:
    group = zarr.open_group(store, mode="r", zarr_format=2)
    assert group["x"][0:4].tolist() == [10, 11, 1, 2]
    assert group["x"][8:10].tolist() == [7, 7]
    with pytest.raises(ReferenceReadError, match="gone.bin"):
        group["x"][4:6]
    with pytest.raises(ReferenceReadError, match="malformed"):
        group["x"][6:8]
    with pytest.raises(ReferenceReadError):
        group["x"][...]


async def test_get_partial_values_keeps_order_and_takes_a_generator(store: ReferenceStore) -> None:
    requests = ((key, byte_range) for key, byte_range in
                [("x/1", None), ("x/0", RangeByteRequest(1, 2)), ("x/9", None), ("x2/0", SuffixByteRequest(1))])
    got = await store.get_partial_values(default_buffer_prototype(), requests)
    assert [None if b is None else b.to_bytes() for b in got] == [bytes([1, 2]), bytes([11]), None, bytes([31])]


async def test_unexpected_byte_ranges_are_refused(store: ReferenceStore) -> None:
    for bad in [(0, 1), RangeByteRequest(5, 2), OffsetByteRequest(-1)]:
        with pytest.raises((TypeError, ValueError), match="Unexpected byte_range"):
            await store.get("x/0", byte_range=bad)


async def test_exists_is_for_keys_only(store: ReferenceStore) -> None:
    assert await store.exists("x/0")
    # From the references alone: an unreachable or malformed reference still exists.
    assert await store.exists("x/2") and await store.exists("x/3")
    assert await store.exists("x/.zarray")
    assert not await store.exists("x")
    assert not await store.exists("x/5")
    assert not await store.exists("")


async def test_listing_uses_whole_path_segments(store: ReferenceStore) -> None:
    everything = {key async for key in store.list()}
    assert {"x/0", "x2/0", ".zgroup", "impossible/0"} <= everything
    under_x = {key async for key in store.list_prefix("x")}
    assert under_x == {key async for key in store.list_prefix("x/")}
    assert under_x == {k for k in everything if k.startswith("x/")}
    assert {key async for key in store.list_prefix("")} == everything
    root = [name async for name in store.list_dir("")]
    assert sorted(root) == sorted(set(root)) == [".zgroup", "impossible", "x", "x2"]
    assert sorted([n async for n in store.list_dir("x")]) == [".zarray", ".zattrs", "0", "1", "2", "3"]
    assert [n async for n in store.list_dir("x/")] == [n async for n in store.list_dir("x")]
    assert [n async for n in store.list_dir("nowhere")] == []


async def test_sizes(store: ReferenceStore) -> None:
    assert await store.getsize("x/0") == 2
    assert await store.getsize("x/1") == 2
    with pytest.raises(FileNotFoundError):
        await store.getsize("x/5")
    assert await store.getsize_prefix("x2") == 2 + len(json.dumps(dict(ARRAY, shape=[2]))) + len(
        json.dumps({"_ARRAY_DIMENSIONS": ["j"]}))


async def test_is_read_only(store: ReferenceStore, refs: Path) -> None:
    from zarr.core.buffer.cpu import Buffer

    assert store.read_only and not store.supports_writes and not store.supports_deletes
    message = "store was opened in read-only mode and does not support writing"
    with pytest.raises(ValueError, match=message):
        await store.set("x/0", Buffer.from_bytes(b"ab"))
    with pytest.raises(ValueError, match=message):
        await store.delete("x/0")
    with pytest.raises(ValueError, match=message):
        store.set_sync("x/0", Buffer.from_bytes(b"ab"))
    with pytest.raises(ValueError, match="read-only"):
        ReferenceStore(refs, read_only=False)
    with pytest.raises(AttributeError):
        store.read_only = False  # type: ignore[misc]
    assert store.with_read_only(True) == store
    with pytest.raises(NotImplementedError):
        store.with_read_only(False)


def test_pickles_as_its_location_and_shares_the_opened_set(store: ReferenceStore, refs: Path) -> None:
    data = pickle.dumps(store)
    assert b"data.bin" not in data, "a pickle holds the location and options, never the references"
    copy = pickle.loads(data)
    assert copy == store and copy is not store
    assert copy._handle is store._handle, "unpickled in the process that opened it: the same opened set"
    assert pickle.loads(data)._handle is copy._handle
    assert copy.get_sync("x/0").to_bytes() == bytes([10, 11])
    # A relative path is made absolute: a worker may unpickle it in another directory.
    assert ReferenceStore(refs).location == str(refs.resolve())


def test_tokenizes_by_location_and_options(store: ReferenceStore, refs: Path) -> None:
    from dask.base import tokenize

    assert tokenize(store) == tokenize(ReferenceStore(refs)) == tokenize(pickle.loads(pickle.dumps(store)))
    assert tokenize(store) != tokenize(ReferenceStore(refs, read_ahead=0))
    assert store != ReferenceStore(refs, read_ahead=0)


def test_consolidated_metadata_only_with_zmetadata(store: ReferenceStore) -> None:
    root = Path(__file__).resolve().parents[2] / "tests/data/parquet_fastparquet/refs.parq"
    assert not store.supports_consolidated_metadata
    assert ReferenceStore(root).supports_consolidated_metadata


def test_options_are_checked(refs: Path) -> None:
    with pytest.raises(TypeError, match="unknown option"):
        ReferenceStore(refs, stroage_options={})
    with pytest.raises(TypeError, match="option anonymous"):
        ReferenceStore(refs, anonymous="yes")
    with pytest.raises(TypeError, match="unknown limit"):
        ReferenceStore(refs, limits={"max_everything": 1})


def test_allowed_prefixes_refuse_other_targets(refs: Path, tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    store = ReferenceStore(refs, allowed_prefixes=[elsewhere.as_uri() + "/"])
    with pytest.raises(ReferenceReadError, match="allowed prefixes"):
        store.get_sync("x/0")
    assert store.get_sync("x/1").to_bytes() == bytes([1, 2]), "inline values read whatever the prefixes"


def test_a_limit_refuses_a_large_document(refs: Path) -> None:
    with pytest.raises(KerchunkError, match="limit"):
        ReferenceStore(refs, limits={"max_document_bytes": 100})


def test_chunks_are_zero_copy_numpy_buffers(store: ReferenceStore) -> None:
    buffer = store.get_sync("x/0")
    array = buffer.as_numpy_array()
    assert isinstance(array, np.ndarray) and array.tolist() == [10, 11]
    assert not array.flags.owndata, "the chunk's bytes are Rust's, not a copy"
    assert _OPENED, "opened sets are remembered for unpickling"


def _read_in_child(store: ReferenceStore, queue) -> None:
    try:
        store.get_sync("x/0")
        queue.put("read")
    except RuntimeError as e:
        queue.put(f"refused: {e}")


def test_a_forked_child_refuses_instead_of_hanging(store: ReferenceStore) -> None:
    import multiprocessing

    store.get_sync("x/0")  # the runtime has started in this process
    context = multiprocessing.get_context("fork")
    queue = context.Queue()
    child = context.Process(target=_read_in_child, args=(store, queue))
    child.start()
    child.join(timeout=60)
    assert child.exitcode == 0, "the child hung or crashed"
    answer = queue.get(timeout=5)
    assert answer.startswith("refused") and "spawn" in answer, answer
