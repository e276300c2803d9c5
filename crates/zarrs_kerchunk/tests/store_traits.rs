//! The stores follow the `zarrs_storage` conventions (`zarrs_storage::store_test`).

use kerchunk::ReferenceSetBuilder;
use zarrs_kerchunk::ReferenceStoreBuilder;

/// What `store_test::store_write` would leave in a writable store.
fn fixture() -> kerchunk::ReferenceSet {
    let mut set = ReferenceSetBuilder::new();
    for (key, value) in [
        ("a/b", &[0u8, 1, 2, 3][..]),
        ("a/c", &[0]),
        ("a/d/e", &[]),
        ("a/f/g", &[]),
        ("a/f/h", &[]),
        ("i/j/k", &[0, 1]),
    ] {
        set.insert_inline(key, value);
    }
    set.build()
}

#[test]
fn sync_store_conventions() -> Result<(), Box<dyn std::error::Error>> {
    let store = ReferenceStoreBuilder::new().build(fixture(), "refs.json")?;
    zarrs_storage::store_test::store_read(&store)?;
    zarrs_storage::store_test::store_list(&store)?;
    zarrs_storage::store_test::store_list_size(&store)?;
    Ok(())
}

#[tokio::test]
async fn async_store_conventions() -> Result<(), Box<dyn std::error::Error>> {
    let store = ReferenceStoreBuilder::new().build_async(fixture(), "refs.json")?;
    zarrs_storage::store_test::async_store_read(&store).await?;
    zarrs_storage::store_test::async_store_list(&store).await?;
    zarrs_storage::store_test::async_store_list_size(&store).await?;
    Ok(())
}
