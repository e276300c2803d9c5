//! A store serves metadata documents rewritten for zarrs by default, and byte
//! for byte as written when asked (`MetadataView::AsWritten`, for zarr-python),
//! inline or read from a target, sync and async, whole, in parts and by size.

use kerchunk::ReferenceSetBuilder;
use zarrs_kerchunk::{MetadataView, ReferenceStoreBuilder};
use zarrs_storage::byte_range::ByteRange;
use zarrs_storage::{AsyncReadableStorageTraits, ReadableStorageTraits, StorageError, StoreKey};

/// Fixed-length bytes, which zarrs reads as raw bytes.
const BYTES: &str = r#"{"shape": [2], "chunks": [2], "dtype": "|S5", "fill_value": "AAAAAAA=", "zarr_format": 2,
"compressor": null, "filters": null, "order": "C"}"#;
/// A numcodecs filter zarrs has no decoder for, and a bare `NaN` fill (Python's JSON).
const DELTA: &str = r#"{"shape": [4], "chunks": [4], "dtype": "<f4", "fill_value": NaN, "zarr_format": 2,
"compressor": null, "filters": [{"id": "categorize", "dtype": "<f4"}], "order": "C"}"#;
/// A chunk of 8 GB, over every limit.
const HUGE: &str = r#"{"shape": [1000000000], "chunks": [1000000000], "dtype": "<f8", "fill_value": 0,
"zarr_format": 2, "compressor": null, "filters": null, "order": "C"}"#;

/// `bytes` and `delta` inline, `far` the same document as `delta` read from a file, and `huge`.
fn fixture(folder: &std::path::Path) -> kerchunk::ReferenceSet {
    let file = folder.join("metadata.json");
    std::fs::write(&file, format!("padding{DELTA}")).expect("the scratch folder is writable");
    let mut set = ReferenceSetBuilder::new();
    set.insert_inline(".zgroup", br#"{"zarr_format": 2}"#);
    set.insert_inline("bytes/.zarray", BYTES.as_bytes());
    set.insert_inline("delta/.zarray", DELTA.as_bytes());
    set.insert_range("far/.zarray", Some(file.to_str().expect("a UTF-8 path")), 7, DELTA.len() as u64);
    set.insert_inline("huge/.zarray", HUGE.as_bytes());
    set.build()
}

fn key(key: &str) -> StoreKey {
    StoreKey::new(key).expect("a valid key")
}

#[test]
fn as_written_serves_the_documents_byte_for_byte() -> Result<(), Box<dyn std::error::Error>> {
    let folder = tempfile::tempdir()?;
    let builder = ReferenceStoreBuilder::new();
    let zarrs = builder.build(fixture(folder.path()), folder.path().join("refs.json").to_str().unwrap())?;
    let written = zarrs.with_metadata_view(MetadataView::AsWritten);
    assert_eq!((zarrs.metadata_view(), written.metadata_view()), (MetadataView::Zarrs, MetadataView::AsWritten));

    for (name, document) in [("bytes/.zarray", BYTES), ("delta/.zarray", DELTA), ("far/.zarray", DELTA)] {
        let key = key(name);
        assert_eq!(written.get(&key)?.as_deref(), Some(document.as_bytes()), "{name}");
        assert_eq!(written.size_key(&key)?, Some(document.len() as u64), "{name}");
        let part = written.get_partial(&key, ByteRange::FromStart(1, Some(8)))?;
        assert_eq!(part.as_deref(), Some(&document.as_bytes()[1..9]), "{name}");
        let part = written.get_partial(&key, ByteRange::Suffix(5))?;
        assert_eq!(part.as_deref(), Some(&document.as_bytes()[document.len() - 5..]), "{name}");
    }

    // The zarrs view, from the same core: `|S5` becomes raw bytes, `categorize` is refused by name.
    let rewritten = zarrs.get(&key("bytes/.zarray"))?.expect("present");
    assert!(String::from_utf8_lossy(&rewritten).contains("|V5"), "{}", String::from_utf8_lossy(&rewritten));
    for name in ["delta/.zarray", "far/.zarray"] {
        let err = zarrs.get(&key(name)).unwrap_err();
        assert!(
            matches!(&err, StorageError::InvalidMetadata(..)) && err.to_string().contains("\"categorize\""),
            "{err}"
        );
    }

    // No view serves a chunk no reader can hold.
    for store in [&zarrs, &written] {
        let err = store.get(&key("huge/.zarray")).unwrap_err().to_string();
        assert!(err.contains("8000000000 bytes") && err.contains("\"huge\""), "{err}");
        let err = store.size_key(&key("huge/.zarray")).unwrap_err().to_string();
        assert!(err.contains("8000000000 bytes") && err.contains("\"huge\""), "{err}");
    }
    // The view travels to the async store.
    assert_eq!(written.to_async().metadata_view(), MetadataView::AsWritten);
    Ok(())
}

#[tokio::test]
async fn the_async_store_serves_the_view_it_was_given() -> Result<(), Box<dyn std::error::Error>> {
    let folder = tempfile::tempdir()?;
    let builder = ReferenceStoreBuilder::new();
    let zarrs = builder.build_async(fixture(folder.path()), folder.path().join("refs.json").to_str().unwrap())?;
    let written = zarrs.with_metadata_view(MetadataView::AsWritten);
    for name in ["delta/.zarray", "far/.zarray"] {
        assert_eq!(written.get(&key(name)).await?.as_deref(), Some(DELTA.as_bytes()), "{name}");
        assert_eq!(written.size_key(&key(name)).await?, Some(DELTA.len() as u64), "{name}");
        let err = zarrs.get(&key(name)).await.unwrap_err();
        assert!(
            matches!(&err, StorageError::InvalidMetadata(..)) && err.to_string().contains("\"categorize\""),
            "{name}: {err}"
        );
    }
    let err = written.get(&key("huge/.zarray")).await.unwrap_err().to_string();
    assert!(err.contains("8000000000 bytes") && err.contains("\"huge\""), "{err}");
    Ok(())
}
