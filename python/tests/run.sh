#!/usr/bin/env bash
# Build the Python package into a virtualenv (made from requirements.txt if missing or
# stale) and run its tests. Needs the Rust toolchain and Python >= 3.11.
#
#   python/tests/run.sh [PYTEST ARGS...]     (virtualenv: target/python-venv; ZK_PYTHON picks the interpreter)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
package="$(cd "$here/.." && pwd)"
root="$(cd "$package/.." && pwd)"
venv="$root/target/python-venv"
if [ ! -x "$venv/bin/python" ] || ! cmp -s "$package/requirements.txt" "$venv/requirements.txt"; then
    "${ZK_PYTHON:-python3}" -m venv --clear "$venv"
    "$venv/bin/pip" install --quiet --disable-pip-version-check -r "$package/requirements.txt"
    cp "$package/requirements.txt" "$venv/requirements.txt"
fi
# An editable install of the package, built in the workspace's target folder.
VIRTUAL_ENV="$venv" "$venv/bin/maturin" develop --quiet --manifest-path "$package/Cargo.toml"
cd "$package"
exec "$venv/bin/python" -m pytest -q "$@"
