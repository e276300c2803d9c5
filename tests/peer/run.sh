#!/usr/bin/env bash
# Write every conformance case with our converter (JSON v1, JSON v0 zstd, parquet
# with plain and dictionary paths), then check with the real Python fsspec + zarr
# that every written file reads exactly. Needs the Rust toolchain and python3.
#
#   tests/peer/run.sh [VENV]    (VENV default: target/peer-venv, created with the pinned requirements)
#
# Given a VENV (CI passes the Python package's test virtualenv, whose pins include these), the
# pins are installed into it if missing, and nothing else in it is touched: one virtualenv, made once.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
if [ -n "${1:-}" ]; then
    venv="$1"
    # The test virtualenv's pins must be the peer's, or installing these would change its versions.
    grep -v '^#' "$here/requirements.txt" | while read -r pin; do
        grep -Fxq "$pin" "$root/python/requirements.txt" || { echo "peer: $pin is not pinned in python/requirements.txt" >&2; exit 1; }
    done
    "$venv/bin/pip" install --quiet --disable-pip-version-check -r "$here/requirements.txt"
else
    venv="$root/target/peer-venv"
    if [ ! -x "$venv/bin/python" ] || ! cmp -s "$here/requirements.txt" "$venv/requirements.txt"; then
        python3 -m venv --clear "$venv"
        "$venv/bin/pip" install --quiet --disable-pip-version-check -r "$here/requirements.txt"
        cp "$here/requirements.txt" "$venv/requirements.txt"
    fi
fi

out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT
# The test build's binary (tests/binary.sh): a binary of its own would compile most of the
# workspace's dependencies again.
binary="$(bash "$root/tests/binary.sh")"
convert=("$binary" convert)
for case in "$root"/tests/data/*/; do
    name="$(basename "$case")"
    dest="$out/$name"
    mkdir -p "$dest"
    # The source files and the manifest; not the case's own reference files.
    (cd "$case" && find . -mindepth 1 -maxdepth 1 ! -name 'refs*' ! -name '*.py' -exec cp -r {} "$dest/" \;)
    chmod -R u+w "$dest"
    for input in "$case"refs.json "$case"refs.parq; do
        [ -e "$input" ] || continue
        kind="$(basename "$input" | tr . _)"
        "${convert[@]}" "$input" "$dest/written_${kind}.v1.json" 2>/dev/null
        "${convert[@]}" "$input" "$dest/written_${kind}.templated.json" --url-templates 2>/dev/null
        "${convert[@]}" "$input" "$dest/written_${kind}.v0.json.zst" --v0 2>/dev/null
        "${convert[@]}" "$input" "$dest/written_${kind}_plain.parq" --record-size 7 --paths plain 2>/dev/null
        "${convert[@]}" "$input" "$dest/written_${kind}_dict.parq" --paths dictionary 2>/dev/null
    done
done
# What `scan` makes of each FILE in DEST, as JSON and as parquet (nothing inline), named
# `written_scan_<name>` after the file's name without SUFFIX.
scan_each() {
    local dest="$1" suffix="$2" file name
    shift 2
    for file in "$@"; do
        name="$(basename "$file" "$suffix")"
        "$binary" scan "$file" -o "$dest/written_scan_${name}.json" 2>/dev/null
        "$binary" scan "$file" -o "$dest/written_scan_${name}.parq" --inline-threshold 0 2>/dev/null
    done
}
# What `scan` makes from the NetCDF-3 test files, beside their ground truth.
dest="$out/scan_netcdf3"
mkdir -p "$dest"
cp "$root"/tests/scan/netcdf3/*.nc "$root"/tests/scan/netcdf3/*.npy "$dest/"
chmod -R u+w "$dest"
scan_each "$dest" .nc "$dest"/*.nc
# What `scan` makes from the HDF5 and NetCDF-4 test files, the same way.
dest="$out/scan_hdf5"
mkdir -p "$dest"
cp "$root"/tests/scan/hdf5/earliest.h5* "$root"/tests/scan/hdf5/latest.h5* "$root"/tests/scan/hdf5/netcdf4.nc* "$dest/"
rm -f "$dest"/*.kerchunk.json
chmod -R u+w "$dest"
scan_each "$dest" "" "$dest"/earliest.h5 "$dest"/latest.h5 "$dest"/netcdf4.nc
# HDF5's LZ4 and bitshuffle plugins as `scan` references them (imagecodecs' lz4h5 and bitshuffle
# ids), read with imagecodecs' own codecs; and chunks stored under other filter masks than their
# array's, held written again under the array's filters.
dest="$out/scan_hdf5_plugins"
mkdir -p "$dest"
for file in plugin_filters.h5 hdf5_compression_lz4.h5 filter_masks.h5 hdf5_mali_chunk2.h5; do
    cp "$root/tests/scan/hdf5/$file" "$root/tests/scan/hdf5/$file".*.npy "$dest/"
done
# Arrays no codec reads are held decoded when small (LZF, bitshuffle without LZ4 or with elements
# left over), else left out, which the scan's own tests check: only the referenced ones are read.
rm -f "$dest"/*.kerchunk.json "$dest"/plugin_filters.h5.lzf_* "$dest"/plugin_filters.h5.bitshuffle_{i4,large_i4,lz4_i2,lz4_f4,lz4_odd_f8}.npy
chmod -R u+w "$dest"
scan_each "$dest" "" "$dest"/*.h5
# kerchunk's references to GRIB2 and TIFF files (tests/codecs), written again by `convert`, read
# with kerchunk's and imagecodecs' own codecs (eccodes, libtiff's codecs) beside the truth.
for kind in grib tiff; do
    dest="$out/codecs_$kind"
    mkdir -p "$dest"
    cp "$root"/tests/codecs/$kind/*.npy "$root"/tests/codecs/$kind/*.kerchunk.json "$dest/"
    cp "$root"/tests/codecs/$kind/*.grib* "$root"/tests/codecs/$kind/*.tif "$dest/" 2>/dev/null || true
    chmod -R u+w "$dest"
    for refs in "$dest"/*.kerchunk.json; do
        stem="$(basename "$refs" .kerchunk.json)"
        "${convert[@]}" "$refs" "$dest/written_${stem}.v1.json" 2>/dev/null
        "${convert[@]}" "$refs" "$dest/written_${stem}.v0.json.zst" --v0 2>/dev/null
        # No parquet: fsspec's layout keeps chunks as `<array>/<chunk>` records, and these sets
        # have chunks outside it (a TIFF's root array `0.0`; kerchunk 0.2.10 keys a GRIB scalar's
        # one chunk `step/`, zarr-python 3's key for a 0-d array). convert refuses them, naming the key.
    done
done
"$venv/bin/python" "$here/check_written.py" "$out"
