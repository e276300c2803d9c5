#!/usr/bin/env bash
# Write every conformance case into icechunk repositories with the command line, and read each
# back through icechunk-python and zarr-python against the case's ground truth (check.py); then
# read the uneven sets of tests/scan/uneven with zarr-python 3.4 and the package (uneven.py); then
# the package's Python 3.12 suite (python/tests/py312: VirtualiZarr's and kerchunk's APIs).
# icechunk-python 2.3 needs Python >= 3.12: ZK_PYTHON312 names one, else python3.12 on the
# PATH or in pyenv's versions. Without one this fails: the check is never skipped.
#
#   tests/icechunk/run.sh    (virtualenv: target/icechunk-venv, from requirements.txt)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
venv="$root/target/icechunk-venv"
find_python() {
    if [ -n "${ZK_PYTHON312:-}" ]; then echo "$ZK_PYTHON312"; return; fi
    for candidate in python3.12 "$(pyenv root 2>/dev/null)"/versions/3.12*/bin/python3.12; do
        if "$candidate" -c 'import sys; assert sys.version_info >= (3, 12)' 2>/dev/null; then
            command -v "$candidate" || echo "$candidate"
            return
        fi
    done
    echo "icechunk: no Python 3.12 for icechunk-python (set ZK_PYTHON312)" >&2
    exit 1
}
if [ ! -x "$venv/bin/python" ] || ! cmp -s "$here/requirements.txt" "$venv/requirements.txt"; then
    python="$(find_python)"
    echo "icechunk: making $venv with $python" >&2
    "$python" -m venv --clear "$venv"
    "$venv/bin/pip" install --quiet --disable-pip-version-check -r "$here/requirements.txt"
    cp "$here/requirements.txt" "$venv/requirements.txt"
fi
# The package, built into this virtualenv too: zarr-python 3.4 reads uneven sets' crop codec
# through its entry point (uneven.py).
echo "icechunk: building the package into $venv (maturin develop)" >&2
VIRTUAL_ENV="$venv" "$venv/bin/maturin" develop --quiet --manifest-path "$root/python/Cargo.toml"
# The binary the workspace's test build made (tests/binary.sh).
binary="$(bash "$root/tests/binary.sh")"
# icechunk-python logs each local repository's warning that it is not for concurrent commits.
# xarray warns of every phony dimension name VirtualiZarr's datasets repeat.
ICECHUNK_LOG=error RUST_LOG=error "$venv/bin/python" -W ignore "$here/check.py" "$binary"
# Files of uneven length combined, read by zarr-python 3.4 (rectilinear grids) and the engine.
ICECHUNK_LOG=error RUST_LOG=error "$venv/bin/python" -W ignore "$here/uneven.py" "$binary"
# Our scanners as VirtualiZarr parsers, against VirtualiZarr's own and the files' own library.
(cd "$root/python" && "$venv/bin/python" -m pytest -q -p no:cacheprovider -W ignore tests/py312)
