"""Every reference file of the conformance corpus, JSON and parquet, read through the store
with zarr, exactly equal to the ground truth: locally, over HTTP (nginx), from S3 (moto) and
from Azure (azurite)."""

from __future__ import annotations

import numpy as np
import pytest
import zarr
from conftest import Case, cases, compare

from zarrs_kerchunk import ReferenceStore

CASES = cases()
FILES = [pytest.param(case, file, id=f"{case.name}/{file}") for case in CASES for file in case.references()]


def check(case: Case, store: ReferenceStore) -> list[str]:
    """Read every array of `case` from `store`; the problems found."""
    group = zarr.open_group(store, mode="r", zarr_format=2)
    problems = []
    # The corpus lets a reader refuse its `optional` arrays (bool, complex, fixed bytes, vlen
    # strings) with a clear error; this package reads all four, so any exception is a problem.
    for entry in case.arrays:
        try:
            got = np.asarray(group[entry["path"]][...])
        except Exception as e:
            problems.append(f"{entry['path']}: {type(e).__name__}: {e}")
            continue
        problem = compare(entry, got, case.folder)
        if problem:
            problems.append(f"{entry['path']}: {problem}")
    return problems


@pytest.mark.parametrize(("case", "file"), FILES)
def test_reads_exactly(case: Case, file: str) -> None:
    assert check(case, ReferenceStore(case.folder / file)) == []


@pytest.mark.parametrize(("case", "file"), FILES)
def test_reads_exactly_over_http(case: Case, file: str, nginx: str) -> None:
    assert check(case, ReferenceStore(f"{nginx}/data/{case.name}/{file}")) == []


def test_lists_what_the_manifest_says() -> None:
    for case in CASES:
        listing = case.manifest["store_listing"]
        for file in case.references():
            store = ReferenceStore(case.folder / file)
            for group, children in listing["children"].items():
                names = zarr.core.sync.sync(_names(store, group))
                assert {child.rsplit("/", 1)[-1] for child in children} <= names, f"{case.name}/{file}: {group!r} lists {sorted(names)}"
            for array in listing["arrays"]:
                assert zarr.core.sync.sync(store.exists(f"{array}/.zarray")), f"{case.name}/{file}: {array}"


async def _names(store: ReferenceStore, prefix: str) -> set[str]:
    return {name async for name in store.list_dir(prefix)}
