//! What the tests of this crate share.

use std::path::Path;
use std::sync::Arc;

use kerchunk_icechunk::{ExportOptions, IcechunkLocation, export, import, version_of};
use zarrs::array::{Array, ArrayBytes};
use zarrs::storage::AsyncReadableStorageTraits;
use zarrs_kerchunk::{AsyncReferenceStore, ReferenceStoreBuilder};

/// Every byte of `array`, decoded (fixed-size values, or variable-length ones' bytes).
pub(crate) async fn bytes_of<S: ?Sized + AsyncReadableStorageTraits + 'static>(array: &Array<S>) -> Vec<u8> {
    match array.async_retrieve_array_subset(&array.subset_all()).await.unwrap() {
        ArrayBytes::Fixed(bytes) => bytes.to_vec(),
        ArrayBytes::Variable(variable) => variable.bytes().to_vec(),
        ArrayBytes::Optional(..) => panic!("{}: optional values", array.path()),
    }
}

/// The server variable `name`, if `.ci/servers.sh` set it; else `None`, said, and a failure
/// where `ZK_REQUIRE_SERVERS` is set, as in CI.
#[allow(dead_code, reason = "used by the tests that need a server")]
pub(crate) fn var(name: &str) -> Option<String> {
    if let Ok(value) = std::env::var(name) {
        return Some(value);
    }
    assert!(std::env::var_os("ZK_REQUIRE_SERVERS").is_none(), "{name} is not set but ZK_REQUIRE_SERVERS is");
    eprintln!("{name} not set: this test needs `eval \"$(bash .ci/servers.sh start)\"` first; not run");
    None
}

/// `nc4_deflate_shuffle` exported into the repository at `location` (created), imported back
/// from its storage, whose URL must be `storage`: every array reads the same bytes as from
/// the references.
#[allow(dead_code, reason = "used by the tests that need a server")]
pub(crate) async fn round_trip(location: &IcechunkLocation, storage: &str) {
    let refs = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/data/nc4_deflate_shuffle/refs.json");
    let references = Arc::new(AsyncReferenceStore::open(refs.to_str().unwrap()).await.unwrap());
    let repository = location.open_or_create().await.unwrap();
    let exported = export(&references, &repository, &location.storage, &ExportOptions::default()).await.unwrap();
    assert_eq!((exported.arrays, exported.virtual_chunks), (5, 45));

    let repository = location.open().await.unwrap();
    let version = version_of(&repository, "main", &location.storage).await.unwrap();
    assert_eq!(location.storage_url().unwrap(), storage);
    let set = import(&repository, &version, &location.storage, storage).await.unwrap();
    // A repository in object storage whose chunks are local files: allowed here on purpose.
    let builder = ReferenceStoreBuilder::new().allow_local_files_from_remote_references(true);
    let imported = Arc::new(builder.build_async(set, storage).unwrap());
    for path in ["/count", "/idx", "/mask", "/pres", "/temp"] {
        let (ours, theirs) = (
            Array::async_open(Arc::clone(&references), path).await.unwrap(),
            Array::async_open(Arc::clone(&imported), path).await.unwrap(),
        );
        assert!(bytes_of(&ours).await == bytes_of(&theirs).await, "{path}: the bytes differ");
    }
}
