#!/usr/bin/env python3
"""Whether the Python extension's build reuses the workspace's test build: every crate in
`maturin develop`'s graph (`-p zarrs_kerchunk_python`, normal and build dependencies) must have
the features `cargo test --workspace --all-features` gives it (dev-dependencies included), or
cargo compiles it, and every crate above it, a second time (14 minutes of CI on two cores).

    python3 .ci/features.py           list the crates whose features differ
    python3 .ci/features.py --check   and fail if there are any

The fix is in python/Cargo.toml: ask for the missing features there (its block of dependencies
"not used by the extension"), or stop asking for extra ones."""
import subprocess
import sys


def features(*args: str) -> dict[str, set[str]]:
    tree = subprocess.run(
        ["cargo", "tree", "--locked", "--prefix", "none", "-f", "{p}|{f}", *args],
        check=True, capture_output=True, text=True,
    ).stdout
    found: dict[str, set[str]] = {}
    for line in tree.splitlines():
        line = line.replace(" (*)", "")
        if "|" in line:
            package, names = line.split("|", 1)
            found.setdefault(package.strip(), set()).update(n.strip() for n in names.split(",") if n.strip())
    return found


tests = features("--workspace", "--all-features", "-e", "normal,build,dev")
extension = features("-p", "zarrs_kerchunk_python", "-e", "normal,build")
differ = {p: (tests.get(p, set()), f) for p, f in extension.items() if tests.get(p) != f}
for package, (test, python) in sorted(differ.items()):
    print(f"{package}: the test build's features {sorted(test - python)} are missing, "
          f"and {sorted(python - test)} are extra, in the extension's build")
print(f"features: {len(extension) - len(differ)} of the extension's {len(extension)} crates built once")
if differ and "--check" in sys.argv[1:]:
    sys.exit("features: the Python extension's build would compile these crates again: see python/Cargo.toml")
