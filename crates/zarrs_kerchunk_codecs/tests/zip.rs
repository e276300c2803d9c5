//! Chunks in a zip archive's DEFLATE members, as kerchunk's `dereference_archives` references
//! them (`tests/codecs/zip`, made by its `make.py`, which checks kerchunk's own Python path reads
//! them): each reference holds the member's local file header, which the `deflate` codec skips.

use std::path::Path;
use std::sync::Arc;

use zarrs::array::Array;
use zarrs_kerchunk::ReferenceStoreBuilder;

#[test]
fn zip_members_read_the_values_written() {
    let _codecs = zarrs_kerchunk_codecs::register_codecs();
    let folder = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/codecs/zip");
    let builder = ReferenceStoreBuilder::new().with_codec_check(zarrs_kerchunk_codecs::is_decodable);
    let store = Arc::new(builder.open(folder.join("refs.kerchunk.json").to_str().unwrap()).unwrap());
    let bytes = std::fs::read(folder.join("values.npy")).unwrap();
    let header = usize::from(u16::from_le_bytes([bytes[8], bytes[9]]));
    let truth: Vec<i32> =
        bytes[10 + header..].chunks_exact(4).map(|b| i32::from_le_bytes(b.try_into().unwrap())).collect();
    // Two DEFLATE members (one with an extra field), through the codec.
    let array = Array::open(store.clone(), "/a").unwrap();
    assert_eq!(array.retrieve_array_subset::<Vec<i32>>(&array.subset_all()).unwrap(), truth);
    // A stored member: a plain range, no codec.
    let array = Array::open(store, "/b").unwrap();
    assert_eq!(array.retrieve_array_subset::<Vec<i32>>(&array.subset_all()).unwrap(), truth[..4]);
}
