//! `codec::register_zlib_codec`: with the sized zlib codec in zarrs' registry, with each
//! inflater built in, every case of the conformance corpus still reads exactly, and a zlib
//! chunk that inflates to more or fewer bytes than its chunk is an error. The registration
//! is global to the process: each test registers the codec while it holds `REGISTRY`, so
//! that one test's unregistration cannot change another's arrays.

#[path = "../../zarrs_kerchunk/tests/common/mod.rs"]
mod common;

use std::io::Write;
use std::sync::{Arc, Mutex};

use common::Case;
use kerchunk::ReferenceSetBuilder;
use zarrs::array::{Array, ArrayBytes};
use zarrs_kerchunk::{AsyncReferenceStore, ReferenceStore, ReferenceStoreBuilder};
use zarrs_zlib_sized::{Inflater, SizedZlibCodec, ZlibCodecRegistration, register_zlib_codec_with};

static REGISTRY: Mutex<()> = Mutex::new(());

/// Runs `test` once for each inflater built in, with the sized codec registered with it, and no
/// other test's registration.
fn registered(test: impl Fn(Inflater)) {
    /// Unregisters when the test ends, also by a panic.
    struct Registration(Option<ZlibCodecRegistration>);
    impl Drop for Registration {
        fn drop(&mut self) {
            if let Some(registration) = self.0.take() {
                registration.unregister();
            }
        }
    }
    let _only_us = REGISTRY.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    for &inflater in Inflater::ALL {
        let _registration = Registration(Some(register_zlib_codec_with(inflater)));
        test(inflater);
    }
}

/// Whether `array` decodes zlib with the sized codec, and with `inflater`.
fn uses_sized_codec<T: ?Sized>(array: &Array<T>, inflater: Inflater) -> bool {
    array
        .codecs()
        .bytes_to_bytes_codecs()
        .iter()
        .any(|codec| codec.as_any().downcast_ref::<SizedZlibCodec>().is_some_and(|codec| codec.inflater() == inflater))
}

fn uses_zarrs_zlib_codec<T: ?Sized>(array: &Array<T>) -> bool {
    array.codecs().bytes_to_bytes_codecs().iter().any(|codec| codec.as_any().is::<zarrs::array::codec::ZlibCodec>())
}

#[test]
fn every_case_reads_exactly_through_the_sized_codec() {
    registered(|inflater| {
        let mut failures = Vec::new();
        let mut zlib_arrays = 0;
        for case in Case::all() {
            for file in case.references(true) {
                let store = Arc::new(ReferenceStore::open(case.dir.join(&file).to_str().unwrap()).unwrap());
                for entry in case.arrays() {
                    let path = format!("/{}", entry["path"].as_str().unwrap());
                    // zlib as the compressor or (as kerchunk writes HDF5's deflate) a filter.
                    let Ok(array) = Array::open(store.clone(), &path) else { continue };
                    assert!(!uses_zarrs_zlib_codec(&array), "{}/{file}{path}: zarrs' own codec", case.name);
                    zlib_arrays += usize::from(uses_sized_codec(&array, inflater));
                }
                failures.extend(
                    common::check_sync(&case, &store)
                        .into_iter()
                        .map(|f| format!("{inflater:?}: {}/{file}: {f}", case.name)),
                );
            }
        }
        assert!(zlib_arrays >= 10, "{inflater:?}: only {zlib_arrays} zlib arrays in the corpus");
        assert!(failures.is_empty(), "{} failures:\n{}", failures.len(), failures.join("\n"));
    });
}

#[test]
fn every_case_reads_exactly_through_the_sized_codec_async() {
    registered(|inflater| {
        let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
        let mut failures = Vec::new();
        for case in Case::all() {
            for file in case.references(true) {
                let location = case.dir.join(&file);
                let found = runtime.block_on(async {
                    let store = Arc::new(AsyncReferenceStore::open(location.to_str().unwrap()).await.unwrap());
                    common::check_async(&case, store).await
                });
                failures.extend(found.into_iter().map(|f| format!("{inflater:?}: {}/{file}: {f}", case.name)));
            }
        }
        assert!(failures.is_empty(), "{} failures:\n{}", failures.len(), failures.join("\n"));
    });
}

/// A one-array reference set of 100 `<u2` in chunks of 10, zlib-compressed, whose chunk 0 is `chunk`.
fn array_with_chunk(chunk: &[u8]) -> Array<ReferenceStore> {
    let mut set = ReferenceSetBuilder::new();
    set.insert_inline(".zgroup", br#"{"zarr_format": 2}"#);
    set.insert_inline(
        "a/.zarray",
        br#"{"zarr_format": 2, "shape": [100], "chunks": [10], "dtype": "<u2", "order": "C",
             "compressor": {"id": "zlib", "level": 1}, "filters": null, "fill_value": 0}"#,
    );
    set.insert_inline("a/0", chunk);
    let store = ReferenceStoreBuilder::new().build(set.build(), "memory://refs.json").unwrap();
    Array::open(Arc::new(store), "/a").unwrap()
}

fn zlib(data: &[u8]) -> Vec<u8> {
    let mut encoder = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::new(1));
    encoder.write_all(data).unwrap();
    encoder.finish().unwrap()
}

fn read_chunk_0(array: &Array<ReferenceStore>) -> Result<Vec<u8>, String> {
    array
        .retrieve_chunk::<ArrayBytes>(&[0])
        .map_err(|e| e.to_string())
        .map(|bytes| bytes.into_fixed().unwrap().into_owned())
}

#[test]
fn a_chunk_of_its_size_decodes() {
    registered(|inflater| {
        let data: Vec<u8> = (0..20).collect();
        let array = array_with_chunk(&zlib(&data));
        assert!(uses_sized_codec(&array, inflater));
        assert_eq!(read_chunk_0(&array).unwrap(), data);
    });
}

#[test]
fn a_chunk_that_inflates_past_its_size_is_an_error() {
    registered(|inflater| {
        // A zlib bomb: 64 MiB of zeros for a chunk of 20 bytes.
        let array = array_with_chunk(&zlib(&vec![0u8; 64 << 20]));
        let error = read_chunk_0(&array).unwrap_err();
        assert!(error.contains("inflates to more than the chunk's 20 bytes"), "{inflater:?}: {error}");
    });
}

#[test]
fn a_chunk_that_inflates_short_is_an_error_not_a_padded_chunk() {
    registered(|inflater| {
        let array = array_with_chunk(&zlib(&[1u8; 12]));
        let error = read_chunk_0(&array).unwrap_err();
        assert!(error.contains("12") && error.contains("20"), "{inflater:?}: {error}");
    });
}

#[test]
fn a_chunk_cut_short_is_an_error() {
    registered(|inflater| {
        let encoded = zlib(&[5u8; 20]);
        let array = array_with_chunk(&encoded[..encoded.len() - 3]);
        let error = read_chunk_0(&array).unwrap_err();
        assert!(error.contains("cut short"), "{inflater:?}: {error}");
    });
}

#[test]
fn unregistered_the_codec_leaves_arrays_to_zarrs() {
    let data: Vec<u8> = (0..20).collect();
    registered(|inflater| assert!(uses_sized_codec(&array_with_chunk(&zlib(&data)), inflater)));
    let _only_us = REGISTRY.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    let array = array_with_chunk(&zlib(&data));
    assert!(Inflater::ALL.iter().all(|&i| !uses_sized_codec(&array, i)) && uses_zarrs_zlib_codec(&array));
    assert_eq!(read_chunk_0(&array).unwrap(), data);
}
