#!/usr/bin/env bash
# Print the path of the command line the workspace's test build makes (`cargo test --workspace
# --all-features` builds it for the tests that run it), building it first if need be (nothing
# to do after tests/all.sh's first step). Scripts that run the binary take this one: `cargo
# build`'s leaves out dev-dependencies, so its crates' features differ, and it would compile
# most of the workspace's dependencies a second time (minutes on a fresh machine).
set -euo pipefail
cd "$(dirname "$0")/.."
cargo test --quiet --no-run --workspace --all-features >&2
target="$(cargo metadata --format-version 1 --no-deps | python3 -c 'import json, sys; print(json.load(sys.stdin)["target_directory"])')"
echo "$target/debug/zarrs-kerchunk"
