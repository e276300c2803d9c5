#!/usr/bin/env bash
# Every test of every crate, then the Python package's: the README's test command.
# Tests are built first, then run with a time limit: a hung test fails in minutes,
# by name, instead of holding CI to its limit.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo test --no-run --workspace --all-features
if ! timeout --kill-after=10 900 cargo test --workspace --all-features; then
    echo "tests: cargo test --workspace --all-features failed or ran for more than 15 minutes" >&2
    exit 1
fi
if ! timeout --kill-after=10 900 bash python/tests/run.sh; then
    echo "tests: the Python package's tests failed or ran for more than 15 minutes" >&2
    exit 1
fi
