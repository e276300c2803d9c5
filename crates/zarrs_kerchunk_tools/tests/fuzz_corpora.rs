//! The fuzz targets' saved corpora and every crash they found, replayed on
//! stable: what once crashed stays fixed, and `cargo test` needs no nightly.
//! The targets are in `fuzz/src/lib.rs`; `cargo +nightly fuzz run <target>`
//! runs them under libFuzzer.

use std::path::Path;

#[path = "../../../fuzz/src/lib.rs"]
#[allow(unreachable_pub)]
mod targets;

/// Run `target` on every input saved for it; return the sum of what it
/// returned (references parsed or arrays read).
fn replay(name: &str, target: fn(&[u8]) -> usize) -> usize {
    let fuzz = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fuzz");
    let (mut inputs, mut read) = (0, 0);
    for folder in ["corpus", "regressions"] {
        let Ok(entries) = std::fs::read_dir(fuzz.join(folder).join(name)) else { continue };
        for entry in entries {
            let path = entry.unwrap().path();
            eprintln!("{}", path.display());
            read += target(&std::fs::read(&path).unwrap());
            inputs += 1;
        }
    }
    assert!(inputs > 0, "no saved inputs for fuzz target {name}");
    read
}

#[test]
fn json_document() {
    assert!(replay("json_document", targets::json_document) > 0, "the seeds parse to nothing");
}

#[test]
fn templates() {
    assert!(replay("templates", targets::templates) > 0, "the seeds parse to nothing");
}

#[test]
fn parquet_root() {
    assert!(replay("parquet_root", targets::parquet_root) > 0, "the seeds read no array");
}

#[test]
fn metadata() {
    assert!(replay("metadata", targets::metadata) > 0, "the seeds read no array");
}

#[test]
fn end_to_end() {
    assert!(replay("end_to_end", targets::end_to_end) > 0, "the seeds read no array");
}

#[test]
fn grib_codec() {
    assert!(replay("grib_codec", targets::grib_codec) > 0, "the seeds decode nothing");
}

#[test]
fn tiff_codecs() {
    assert!(replay("tiff_codecs", targets::tiff_codecs) > 0, "the seeds decode nothing");
}

#[test]
fn zlib_inflate() {
    assert!(replay("zlib_inflate", targets::zlib_inflate) > 0, "the seeds decode nothing");
}

#[test]
fn netcdf3_scan() {
    assert!(replay("netcdf3_scan", targets::netcdf3_scan) > 0, "the seeds scan to nothing");
}

#[test]
fn grib_index() {
    assert!(replay("grib_index", targets::grib_index) > 0, "the seeds find nothing");
}

#[test]
fn grib_scan() {
    assert!(replay("grib_scan", targets::grib_scan) > 0, "the seeds scan to nothing");
}

#[test]
fn tiff_scan() {
    assert!(replay("tiff_scan", targets::tiff_scan) > 0, "the seeds scan to nothing");
}

#[test]
fn dmrpp_scan() {
    assert!(replay("dmrpp_scan", targets::dmrpp_scan) > 0, "the seeds scan to nothing");
}

#[test]
fn hdf5_scan() {
    assert!(replay("hdf5_scan", targets::hdf5_scan) > 0, "the seeds scan to nothing");
}

#[test]
fn cf_view() {
    assert!(replay("cf_view", targets::cf_view) > 0, "the seeds read nothing");
}
