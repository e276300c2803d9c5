#!/usr/bin/env bash
# Every test of every crate, then the Python package's, then the icechunk readers': the README's
# test command.
# Everything is built first, untimed (a cold build on a busy 2-core machine can take
# most of an hour); then the tests run under a time limit, so a hung test fails in
# minutes, by name, instead of holding CI to its limit.
set -euo pipefail
cd "$(dirname "$0")/.."
step() { echo "tests: [$1/5] $2 ($(date +%H:%M:%S))" >&2; }

step 1 "building every crate's tests (cargo test --no-run; the longest step on a cold machine)"
cargo test --no-run --workspace --all-features
step 2 "building the Python package into target/python-venv (virtualenv, then maturin develop)"
bash python/tests/build.sh
step 3 "running the Rust tests (at most 15 minutes)"
if ! timeout --kill-after=10 900 cargo test --workspace --all-features; then
    echo "tests: cargo test --workspace --all-features failed or ran for more than 15 minutes" >&2
    exit 1
fi
step 4 "running the Python tests (at most 15 minutes)"
if ! timeout --kill-after=10 900 bash python/tests/run.sh --no-build; then
    echo "tests: the Python package's tests failed or ran for more than 15 minutes" >&2
    exit 1
fi
step 5 "Python 3.12: icechunk repositories read back by icechunk-python, the VirtualiZarr parsers (at most 10 minutes)"
if ! timeout --kill-after=10 600 bash tests/icechunk/run.sh; then
    echo "tests: the icechunk check failed or ran for more than 10 minutes" >&2
    exit 1
fi
echo "tests: all passed ($(date +%H:%M:%S))" >&2
