//! `scan` with DMR++ sidecars (`tests/scan/dmrpp/written`, written by `build.py` from h5py's
//! chunk index): a sidecar alone, a pattern of sidecars combined along time, files read through
//! the sidecars beside them (`--dmrpp auto`) or not (`never`), and `only` refusing a file without
//! one. Values come from h5py and netCDF4 (`.npy` files), never from these references.
#![cfg(feature = "cli")]

mod cli_support;
#[path = "../../zarrs_kerchunk/tests/common/mod.rs"]
mod common;

use std::path::{Path, PathBuf};

use cli_support::{assert_one_line_error, native_values, run};

fn written() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/scan/dmrpp/written")
}

/// A copy of the written pairs (not their values), each file's header destroyed: only its
/// sidecar can describe it.
fn headless_copy() -> tempfile::TempDir {
    let scratch = tempfile::tempdir().unwrap();
    for entry in std::fs::read_dir(written()).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_str().unwrap().to_owned();
        let extension = path.extension().and_then(|e| e.to_str()).unwrap_or_default();
        if extension == "npy" {
            continue;
        }
        let mut bytes = std::fs::read(&path).unwrap();
        if extension == "h5" || extension == "nc" {
            // Their first chunk starts past byte 800: the superblock and root group are gone.
            bytes[..800].fill(0xAA);
        }
        std::fs::write(scratch.path().join(&name), bytes).unwrap();
    }
    scratch
}

fn cat_npy(refs: &Path, array: &str, dir: &Path) -> (Vec<u64>, usize, Vec<u8>) {
    let out = dir.join(format!("{}.npy", array.replace('/', "~")));
    let (code, _, stderr) = run(&["cat", refs.to_str().unwrap(), array, "--raw", "--npy", out.to_str().unwrap()]);
    assert_eq!(code, 0, "{array}: {stderr}");
    native_values(&out)
}

#[test]
fn a_sidecar_alone_reads_h5pys_values() {
    let dir = headless_copy();
    let refs = dir.path().join("features.json");
    let sidecar = dir.path().join("features.h5.dmrpp");
    let (code, _, stderr) = run(&["scan", sidecar.to_str().unwrap(), "-o", refs.to_str().unwrap()]);
    assert_eq!(code, 0, "{stderr}");
    for array in ["big_endian", "odd_checked", "sparse", "compact", "g/inner"] {
        let truth = written().join(format!("features.h5.{}.npy", array.replace('/', "~")));
        assert_eq!(cat_npy(&refs, array, dir.path()), native_values(&truth), "{array}");
    }
}

/// Sidecars named by a pattern combine along time, their coordinates read from the data files
/// through the sidecars' chunk indexes (the files' headers destroyed); the files themselves,
/// named by a pattern that also matches their sidecars, are read through them.
#[test]
fn sidecars_combine_along_time() {
    let dir = headless_copy();
    let truth = native_values(&written().join("../../hdf5/series.temp.npy"));
    for pattern in ["series?.nc.dmrpp", "series?.nc*", "series?.nc"] {
        let refs = dir.path().join("series.json");
        let files = dir.path().join(pattern);
        let (code, _, stderr) =
            run(&["scan", files.to_str().unwrap(), "--concat", "time", "-o", refs.to_str().unwrap()]);
        assert_eq!(code, 0, "{pattern}: {stderr}");
        assert!(stderr.contains("references to 3 file(s) written"), "{pattern}: {stderr}");
        assert_eq!(cat_npy(&refs, "temp", dir.path()), truth, "{pattern}");
        let document = std::fs::read_to_string(&refs).unwrap();
        assert!(document.contains("series2.nc") && !document.contains(".nc.dmrpp\","), "{pattern}: {document}");
    }
}

#[test]
fn dmrpp_never_reads_the_header_and_only_needs_a_sidecar() {
    let dir = headless_copy();
    let refs = dir.path().join("x.json");
    let file = dir.path().join("features.h5");
    let (code, _, stderr) = run(&["scan", file.to_str().unwrap(), "--dmrpp", "never", "-o", refs.to_str().unwrap()]);
    assert_one_line_error(code, &stderr);
    assert!(stderr.contains("features.h5"), "{stderr}");
    let alone = dir.path().join("alone.nc");
    std::fs::copy(written().join("../../hdf5/series0.nc"), &alone).unwrap();
    let (code, _, stderr) = run(&["scan", alone.to_str().unwrap(), "--dmrpp", "only", "-o", refs.to_str().unwrap()]);
    assert_one_line_error(code, &stderr);
    assert!(stderr.contains("alone.nc.dmrpp") && stderr.contains("there is none beside the file"), "{stderr}");
}
