"""zarr-python's own store test-suite (zarr.testing.store.StoreTests), the read-only part.

The suite seeds a store through its `set` helper, "without store methods": here that writes the
value into the reference document as an inline reference and reopens the set, which is how a
reference store gets its keys. Tests that write through the store itself, or assert that it is
writable, are replaced by what a read-only store must do instead, or skipped with the reason."""

from __future__ import annotations

import base64
import json
from pathlib import Path

import pytest
from zarr.core.buffer import cpu
from zarr.testing.store import StoreTests

from zarrs_kerchunk import ReferenceStore
from zarrs_kerchunk._rs import StoreHandle
from zarrs_kerchunk.store import _remember


def _document(store: ReferenceStore) -> dict:
    return json.loads(Path(store.location).read_text())


class TestReferenceStore(StoreTests[ReferenceStore, cpu.Buffer]):
    store_cls = ReferenceStore
    buffer_cls = cpu.Buffer

    @pytest.fixture
    def store_kwargs(self, tmp_path: Path) -> dict[str, str]:
        path = tmp_path / "refs.json"
        path.write_text(json.dumps({"version": 1, "refs": {}}))
        return {"location": str(path)}

    async def set(self, store: ReferenceStore, key: str, value: cpu.Buffer) -> None:
        document = _document(store)
        document["refs"][key] = "base64:" + base64.b64encode(value.to_bytes()).decode()
        Path(store.location).write_text(json.dumps(document))
        # Reopened, and remembered as this process's opening of the set (what unpickling shares).
        store._handle = StoreHandle.open(store.location, store._options)
        _remember(store._spec, store._handle)

    async def get(self, store: ReferenceStore, key: str) -> cpu.Buffer:
        value = _document(store)["refs"][key]
        return cpu.Buffer.from_bytes(base64.b64decode(value.removeprefix("base64:")))

    def test_store_repr(self, store: ReferenceStore) -> None:
        assert repr(store) == f"ReferenceStore({store.location!r})"

    def test_store_supports_writes(self, store: ReferenceStore) -> None:
        assert not store.supports_writes

    def test_store_supports_listing(self, store: ReferenceStore) -> None:
        assert store.supports_listing

    def test_store_read_only(self, store: ReferenceStore) -> None:
        # The suite's version asserts a writable store; a reference store is read-only.
        assert store.read_only
        with pytest.raises(AttributeError):
            store.read_only = False  # type: ignore[misc]

    async def test_store_open_read_only(self, open_kwargs: dict) -> None:
        store = await self.store_cls.open(**open_kwargs, read_only=True)
        assert store._is_open and store.read_only
        with pytest.raises(ValueError, match="read-only"):
            await self.store_cls.open(**open_kwargs, read_only=False)

    async def test_serializable_store(self, store: ReferenceStore) -> None:
        import pickle

        await self.set(store, "foo", self.buffer_cls.from_bytes(b"\x01\x02\x03\x04"))
        copy = pickle.loads(pickle.dumps(store))
        assert copy == store and copy.read_only
        assert (await copy.get("foo")).to_bytes() == b"\x01\x02\x03\x04"


WRITES_THROUGH_THE_STORE = """
    test_set test_set_not_open test_set_many test_set_if_not_exists test_delete test_delete_dir
    test_delete_nonexistent_key_does_not_raise test_clear test_getsize_prefix test_exists
    test_list test_list_prefix test_list_empty_path test_list_dir
    test_set_sync test_delete_sync test_delete_sync_missing
""".split()

def _skipped(self) -> None:
    """Writes through the store (store.set, _set_many, delete), which a read-only store refuses."""


for _name in WRITES_THROUGH_THE_STORE:
    assert hasattr(TestReferenceStore, _name), _name
    _mark = pytest.mark.skip(reason="writes through the store (store.set, _set_many, delete): read-only")
    setattr(TestReferenceStore, _name, _mark(_skipped))
