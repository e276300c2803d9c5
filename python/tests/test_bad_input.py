"""Hostile input from Python: every document of the fuzzers' JSON corpus (fuzz/corpus, found by
cargo fuzz from the conformance corpus and malformed documents) either opens, lists and reads
through zarr, or raises one of zarrs_kerchunk's exceptions; nothing else escapes and nothing
crashes the interpreter. Targets are confined to an empty folder, so no read leaves the test."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import zarr

from zarrs_kerchunk import InvalidReferencesError, KerchunkError, ReferenceStore
from conftest import ROOT

CORPUS = sorted((ROOT / "fuzz" / "corpus" / "json_document").iterdir())
# Small limits: a document that would expand to millions of references stops at once.
LIMITS = {"max_generated_references": 10_000, "max_generated_bytes": 1 << 24, "max_template_fuel": 1_000_000}


def test_every_fuzzed_document_opens_or_raises_a_kerchunk_error(tmp_path: Path) -> None:
    assert len(CORPUS) > 100, "the fuzz corpus is missing"
    allowed = tmp_path.as_uri() + "/"
    outcomes = {"opened": 0, "refused": 0, "read": 0, "read_refused": 0}
    for number, document in enumerate(CORPUS):
        path = tmp_path / f"{number}.json"
        path.write_bytes(document.read_bytes())
        try:
            store = ReferenceStore(path, allowed_prefixes=[allowed], limits=LIMITS)
        except KerchunkError:
            outcomes["refused"] += 1
            continue
        outcomes["opened"] += 1
        keys = zarr.core.sync.sync(_keys(store))
        for key in keys[:50]:
            try:
                store.get_sync(key)
                outcomes["read"] += 1
            except KerchunkError:
                outcomes["read_refused"] += 1
        try:
            group = zarr.open_group(store, mode="r", zarr_format=2)
            for _, array in list(group.arrays())[:5]:
                array[...]
        except KerchunkError:
            pass
        except Exception as e:  # noqa: BLE001 - zarr's own errors on bad metadata are fine; ours are not
            assert not type(e).__module__.startswith("zarrs_kerchunk"), e
    assert outcomes["opened"] > 0 and outcomes["refused"] > 0, outcomes


async def _keys(store: ReferenceStore) -> list[str]:
    return [key async for key in store.list()]


@pytest.mark.parametrize(
    ("document", "cause"),
    [
        ('{"version": 1, "refs": [', "line 1"),
        ('{"version": 2, "refs": {}}', "version 2"),
        ('[1, 2]', "JSON object"),
        ('{"version": 1, "refs": {}, "gen": [{"key": "x/{{i}}", "url": "a", "dimensions": {"i": {"stop": 1e12}}}]}', ""),
    ],
)
def test_malformed_documents_raise_value_errors_naming_the_document(tmp_path: Path, document: str, cause: str) -> None:
    path = tmp_path / "refs.json"
    path.write_text(document)
    with pytest.raises(InvalidReferencesError) as raised:
        ReferenceStore(path, limits=LIMITS)
    assert isinstance(raised.value, ValueError)
    assert str(path) in str(raised.value) and cause in str(raised.value), raised.value


def test_a_malformed_reference_fails_only_its_key(tmp_path: Path) -> None:
    (tmp_path / "data.bin").write_bytes(bytes(range(100)))
    zarray = {"shape": [4], "chunks": [2], "dtype": "|u1", "compressor": None, "filters": None,
              "fill_value": 0, "order": "C", "zarr_format": 2}
    refs = {".zgroup": '{"zarr_format": 2}', "x/.zarray": json.dumps(zarray),
            "x/0": ["data.bin", 10, 2], "x/1": ["data.bin", 2**64 - 1, 1]}
    (tmp_path / "refs.json").write_text(json.dumps({"version": 1, "refs": refs}))
    store = ReferenceStore(tmp_path / "refs.json")
    assert store.get_sync("x/0").to_bytes() == bytes([10, 11])
    with pytest.raises(KerchunkError, match='"x/1"'):
        store.get_sync("x/1")
