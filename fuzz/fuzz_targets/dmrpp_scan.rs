#![no_main]
//! Fuzz target: see `zarrs_kerchunk_fuzz::dmrpp_scan`.

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let _ = zarrs_kerchunk_fuzz::dmrpp_scan(data);
});
