//! The workspace's runnable examples (`examples/`), in a crate of their own:
//! `cargo run --release -p zarrs_kerchunk_examples --example open_virtual`
//! builds the store for local files, zarrs and ndarray: not the store's test
//! suite, and (with `-p`) not the features other members turn on.
