#![no_main]
//! Fuzz target: see `zarrs_kerchunk_fuzz::parquet_root`.
//!
//! The parquet crate panics on some corrupt record files (tests/corrupt),
//! and the reader catches those panics and returns an error. libfuzzer-sys's
//! panic hook aborts at any panic, caught or not, so it is replaced by one
//! that only prints: a panic that escapes the target still aborts, because
//! libfuzzer-sys catches the unwinding and aborts itself.

libfuzzer_sys::fuzz_target!(
    init: {
        std::panic::set_hook(Box::new(|info| eprintln!("{info}")));
    },
    |data: &[u8]| {
        let _ = zarrs_kerchunk_fuzz::parquet_root(data);
    }
);
