#!/usr/bin/env bash
# Build the Python package into the test virtualenv (build.sh) and run its tests.
# With --no-build first, only run them (tests/all.sh builds first, untimed).
#
#   python/tests/run.sh [--no-build] [PYTEST ARGS...]
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
if [ "${1:-}" = "--no-build" ]; then
    shift
else
    bash "$here/build.sh"
fi
venv="$(cd "$here/../.." && pwd)/target/python-venv"
cd "$here/.."
exec "$venv/bin/python" -m pytest -q "$@"
