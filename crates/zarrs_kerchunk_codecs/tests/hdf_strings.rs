//! HDF5 variable-length strings as kerchunk's HDF5 scanner references them
//! (`tests/codecs/hdf_strings`, made by its `make.py` with kerchunk 0.2.6 and
//! zarr-python 2, which read them as `<mode>.expected.json` says): each reads
//! those strings as text, `null` (`vlen_encode="null"`) as the empty string.

use std::path::Path;
use std::sync::Arc;

use zarrs::array::Array;
use zarrs_kerchunk::ReferenceStoreBuilder;

#[test]
fn heap_ids_read_their_strings() {
    let _codecs = zarrs_kerchunk_codecs::register_codecs();
    let folder = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/codecs/hdf_strings");
    for mode in ["encode", "null"] {
        let builder = ReferenceStoreBuilder::new().with_codec_check(zarrs_kerchunk_codecs::is_decodable);
        let store = Arc::new(builder.open(folder.join(format!("{mode}.kerchunk.json")).to_str().unwrap()).unwrap());
        let expected: serde_json::Map<String, serde_json::Value> =
            serde_json::from_slice(&std::fs::read(folder.join(format!("{mode}.expected.json"))).unwrap()).unwrap();
        for (name, values) in &expected {
            let array =
                Array::open(store.clone(), &format!("/{name}")).unwrap_or_else(|e| panic!("{mode} {name}: {e}"));
            let ours = array
                .retrieve_array_subset::<Vec<String>>(&array.subset_all())
                .unwrap_or_else(|e| panic!("{mode} {name}: {e}"));
            let theirs: Vec<String> =
                values.as_array().unwrap().iter().map(|v| v.as_str().unwrap_or_default().to_owned()).collect();
            assert_eq!(ours, theirs, "{mode} {name}");
        }
    }
}
