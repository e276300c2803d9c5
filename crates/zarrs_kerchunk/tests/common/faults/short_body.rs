//! A body that ends early, while its headers claim the whole range.

use std::sync::Arc;

use async_trait::async_trait;
use bytes::Bytes;
use futures::StreamExt;
use object_store::path::Path;
use object_store::{GetOptions, GetResult, ObjectStore, Result};

use super::{Fault, spoil_body};

/// Every other get's body is one byte short, and ends cleanly.
#[derive(Debug)]
pub(crate) struct ShortBody;

#[async_trait]
impl Fault for ShortBody {
    async fn get(
        &self,
        n: u64,
        inner: &Arc<dyn ObjectStore>,
        location: &Path,
        options: GetOptions,
    ) -> Result<GetResult> {
        let result = inner.get_opts(location, options).await?;
        if n.is_multiple_of(2) || options_asked_for_nothing(&result) {
            return Ok(result);
        }
        spoil_body(result, |bytes: Bytes| {
            futures::stream::iter([Ok(bytes.slice(..bytes.len().saturating_sub(1)))]).boxed()
        })
        .await
    }
}

/// An empty body cannot be shortened.
fn options_asked_for_nothing(result: &GetResult) -> bool {
    result.range.is_empty()
}
