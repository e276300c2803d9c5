//! A target rewritten by someone else between two reads (a new ETag).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use object_store::path::Path;
use object_store::{GetOptions, GetResult, ObjectStore, ObjectStoreExt, PutPayload, Result};

use super::Fault;

/// The second get of each object first rewrites it with every byte
/// inverted: the same size, a new version, other bytes. The store must
/// support writes and ETags (as memory, S3, Azure and GCS do).
#[derive(Debug, Default)]
pub(crate) struct Changing {
    gets: Mutex<HashMap<Path, u64>>,
}

#[async_trait]
impl Fault for Changing {
    async fn get(
        &self,
        _: u64,
        inner: &Arc<dyn ObjectStore>,
        location: &Path,
        options: GetOptions,
    ) -> Result<GetResult> {
        let nth = {
            let mut gets = self.gets.lock().unwrap();
            let count = gets.entry(location.clone()).or_default();
            *count += 1;
            *count
        };
        if nth == 2 {
            let bytes = inner.get(location).await?.bytes().await?;
            let inverted: Vec<u8> = bytes.iter().map(|b| !b).collect();
            inner.put(location, PutPayload::from(inverted)).await?;
        }
        inner.get_opts(location, options).await
    }
}
