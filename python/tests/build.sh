#!/usr/bin/env bash
# Make the test virtualenv (from requirements.txt, if missing or stale) and build the
# package into it, with nothing timed: on a slow or busy machine this alone can take
# longer than the tests' limit, so tests/all.sh runs it before any limit starts.
# Needs the Rust toolchain and Python >= 3.11.
#
#   python/tests/build.sh     (virtualenv: target/python-venv; ZK_PYTHON picks the interpreter)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
package="$(cd "$here/.." && pwd)"
root="$(cd "$package/.." && pwd)"
venv="$root/target/python-venv"
if [ ! -x "$venv/bin/python" ] || ! cmp -s "$package/requirements.txt" "$venv/requirements.txt"; then
    echo "python: making the test virtualenv $venv from python/requirements.txt" >&2
    "${ZK_PYTHON:-python3}" -m venv --clear "$venv"
    "$venv/bin/pip" install --quiet --disable-pip-version-check -r "$package/requirements.txt"
    cp "$package/requirements.txt" "$venv/requirements.txt"
fi
# An editable install of the package, built in the workspace's target folder.
echo "python: building the extension into the virtualenv (maturin develop)" >&2
VIRTUAL_ENV="$venv" "$venv/bin/maturin" develop --quiet --manifest-path "$package/Cargo.toml"
