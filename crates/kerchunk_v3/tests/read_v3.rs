//! A set written as v3 by `set_v3` reads, through the store and zarrs, as the v2 set it came from.

use std::collections::BTreeMap;
use std::sync::Arc;

use kerchunk::{ReferenceSet, ReferenceSetBuilder};
use kerchunk_v3::{Uneven, set_v3};
use zarrs::array::Array;
use zarrs_kerchunk::ReferenceStoreBuilder;

fn zarray(shape: &[u64], chunks: &[u64]) -> String {
    format!(
        r#"{{"shape":{shape:?},"chunks":{chunks:?},"dtype":"<i4","fill_value":-1,"compressor":{{"id":"zlib","level":1}},"filters":null,"order":"C","zarr_format":2}}"#
    )
}

fn zlib(values: &[i32]) -> Vec<u8> {
    use std::io::Write;
    let mut encoder = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::fast());
    encoder.write_all(&values.iter().flat_map(|v| v.to_le_bytes()).collect::<Vec<u8>>()).unwrap();
    encoder.finish().unwrap()
}

/// `t(time, x)` of files of 3 and 2 steps (one chunk each) and 2 columns, in chunks of 2 columns;
/// `g/n(x)` beside it, in a group.
fn uneven_set() -> ReferenceSet {
    let mut builder = ReferenceSetBuilder::new();
    builder.insert_inline(".zgroup", br#"{"zarr_format":2}"#);
    builder.insert_inline(".zattrs", br#"{"title":"two files"}"#);
    builder.insert_inline("t/.zarray", zarray(&[5, 2], &[3, 2]).as_bytes());
    builder.insert_inline("t/.zattrs", br#"{"_ARRAY_DIMENSIONS":["time","x"],"units":"K"}"#);
    builder.insert_inline("t/0.0", &zlib(&[0, 1, 2, 3, 4, 5]));
    builder.insert_inline("t/1.0", &zlib(&[6, 7, 8, 9]));
    builder.insert_inline("g/.zgroup", br#"{"zarr_format":2}"#);
    builder.insert_inline("g/n/.zarray", zarray(&[2], &[2]).as_bytes());
    builder.insert_inline("g/n/0", &zlib(&[10, 20]));
    builder.build()
}

#[test]
fn an_uneven_set_reads_through_the_store() {
    let uneven = BTreeMap::from([("t".to_owned(), Uneven { axis: 0, edges: vec![3, 2], stored: None })]);
    let v3 = set_v3(&uneven_set(), &uneven).unwrap();
    let store = Arc::new(ReferenceStoreBuilder::new().build(v3, "/tmp/").unwrap());
    let t = Array::open(store.clone(), "/t").unwrap();
    assert_eq!(t.shape(), [5, 2]);
    assert_eq!(t.retrieve_array_subset::<Vec<i32>>(&t.subset_all()).unwrap(), (0..10).collect::<Vec<i32>>());
    assert_eq!(t.retrieve_array_subset::<Vec<i32>>(&[2..4, 1..2]).unwrap(), [5, 7]);
    assert_eq!(t.dimension_names().as_ref().unwrap().iter().flatten().collect::<Vec<_>>(), ["time", "x"]);
    assert_eq!(t.attributes()["units"], "K");
    let n = Array::open(store, "/g/n").unwrap();
    assert_eq!(n.retrieve_array_subset::<Vec<i32>>(&n.subset_all()).unwrap(), [10, 20]);
}

#[test]
fn keys_that_are_no_chunk_are_refused_named() {
    let mut builder = ReferenceSetBuilder::new();
    builder.insert_inline("t/.zarray", zarray(&[5, 2], &[3, 2]).as_bytes());
    builder.insert_inline("t/0.0.0", b"x");
    let error = set_v3(&builder.build(), &BTreeMap::new()).unwrap_err();
    assert_eq!(
        (error.path.as_str(), error.reason.as_str()),
        ("t/0.0.0", "the key is neither metadata nor a chunk of an array")
    );
    let uneven = BTreeMap::from([("u".to_owned(), Uneven { axis: 0, edges: vec![3, 2], stored: None })]);
    let error = set_v3(&uneven_set(), &uneven).unwrap_err();
    assert_eq!((error.path.as_str(), error.reason.as_str()), ("u", "it has uneven chunks, and no .zarray"));
}

/// Files of 3 and 2 steps in chunks of 2: the first's last chunk is stored whole (padded, as HDF5
/// stores it) and cropped by the codec, in the middle of the combined array.
#[test]
fn a_padded_chunk_is_cropped_to_its_place() {
    let _codecs = zarrs_kerchunk_codecs::register_codecs();
    let mut builder = ReferenceSetBuilder::new();
    builder.insert_inline(".zgroup", br#"{"zarr_format":2}"#);
    builder.insert_inline("t/.zarray", zarray(&[5, 2], &[2, 2]).as_bytes());
    builder.insert_inline("t/0.0", &zlib(&[0, 1, 2, 3]));
    builder.insert_inline("t/1.0", &zlib(&[4, 5, 99, 99]));
    builder.insert_inline("t/2.0", &zlib(&[6, 7, 8, 9]));
    builder.insert_inline("t/3.0", &zlib(&[10, 11, 99, 99]));
    let uneven = BTreeMap::from([("t".to_owned(), Uneven { axis: 0, edges: vec![2, 1, 2, 2], stored: Some(2) })]);
    // The last chunk passes the array's end (the edges hold 7 rows of its 5), as a regular grid's may.
    let set = set_v3(&builder.build(), &uneven).unwrap();
    let store = Arc::new(ReferenceStoreBuilder::new().build(set, "/tmp/").unwrap());
    let t = Array::open(store, "/t").unwrap();
    assert_eq!(t.shape(), [5, 2]);
    assert_eq!(t.retrieve_array_subset::<Vec<i32>>(&t.subset_all()).unwrap(), (0..10).collect::<Vec<i32>>());
    assert_eq!(t.retrieve_array_subset::<Vec<i32>>(&[2..4, 0..2]).unwrap(), [4, 5, 6, 7]);
    // Within a cropped chunk's place (one of its columns): a partial read, as stored.
    assert_eq!(t.retrieve_array_subset::<Vec<i32>>(&[2..3, 1..2]).unwrap(), [5]);
    assert_eq!(t.retrieve_array_subset::<Vec<i32>>(&[0..5, 0..1]).unwrap(), [0, 2, 4, 6, 8]);
}

/// `set_v2` gives back the set `set_v3` took: the same chunk keys and references, the same
/// metadata (fill values `null` again), and the uneven array's chunks under `EDGES`.
#[test]
fn set_v2_inverts_set_v3() {
    let uneven = Uneven { axis: 0, edges: vec![2, 1, 2, 2], stored: Some(2) };
    let mut builder = ReferenceSetBuilder::new();
    builder.insert_inline(".zgroup", br#"{"zarr_format":2}"#);
    builder.insert_inline("t/.zarray", zarray(&[5, 2], &[2, 2]).replace("-1", "null").as_bytes());
    builder.insert_inline("t/.zattrs", br#"{"_ARRAY_DIMENSIONS":["time","x"]}"#);
    for (n, key) in ["t/0.0", "t/1.0", "t/2.0", "t/3.0"].iter().enumerate() {
        builder.insert_range(key, Some("f.nc"), 100 * n as u64, 10);
    }
    let v2 = builder.build();
    let back = kerchunk_v3::set_v2(&set_v3(&v2, &BTreeMap::from([("t".to_owned(), uneven.clone())])).unwrap()).unwrap();
    let keys = |set: &ReferenceSet| set.iter().map(|(k, _)| k.into_owned()).collect::<std::collections::BTreeSet<_>>();
    assert_eq!(keys(&back), keys(&v2));
    for key in ["t/0.0", "t/1.0", "t/2.0", "t/3.0"] {
        assert_eq!(back.get(key), v2.get(key), "{key}");
    }
    let Some(kerchunk::Reference::Inline(text)) = back.get("t/.zarray") else { panic!("t/.zarray") };
    let zarray: serde_json::Value = serde_json::from_slice(text).unwrap();
    assert_eq!(kerchunk_v3::edges_of(&zarray), Some(uneven));
    assert_eq!(
        (&zarray["fill_value"], &zarray["chunks"], &zarray["compressor"]["id"]),
        (&serde_json::Value::Null, &serde_json::json!([2, 2]), &serde_json::json!("zlib"))
    );
}
