#!/usr/bin/env bash
# Every publishable crate of the workspace packaged as crates.io would take it (path
# dependencies resolved to their versions, as Cargo's workspace packaging does; no
# recompiling), and any file over 1 MiB in a package listed: test data belongs in the
# repository, not in what users download. The Python package's crate and the examples'
# are not published.
set -euo pipefail
cd "$(dirname "$0")/.."
log=$(mktemp)
if ! cargo package --workspace --no-verify --allow-dirty --exclude zarrs_kerchunk_python --exclude zarrs_kerchunk_examples >"$log" 2>&1; then
    cat "$log" >&2
    echo "ci: cargo package failed" >&2
    exit 1
fi
grep -E "Packaged|warning" "$log" || true
large=0
for crate in target/package/*.crate; do
    while read -r size name; do
        echo "ci: $(basename "$crate"): $name is $size bytes, over 1 MiB" >&2
        large=1
    done < <(tar -tvzf "$crate" | awk '$3 > 1048576 { print $3, $6 }')
done
test "$large" = 0
