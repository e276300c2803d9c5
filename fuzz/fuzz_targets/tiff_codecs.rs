#![no_main]
//! Fuzz target: see `zarrs_kerchunk_fuzz::tiff_codecs`.

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let _ = zarrs_kerchunk_fuzz::tiff_codecs(data);
});
