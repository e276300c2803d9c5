//! The connection is reset part-way through a body.

use std::sync::Arc;

use async_trait::async_trait;
use bytes::Bytes;
use futures::StreamExt;
use object_store::path::Path;
use object_store::{GetOptions, GetResult, ObjectStore, Result};

use super::{Fault, spoil_body, transport_error};

/// Every other get's body stops after half its bytes with a reset.
#[derive(Debug)]
pub(crate) struct Reset;

#[async_trait]
impl Fault for Reset {
    async fn get(
        &self,
        n: u64,
        inner: &Arc<dyn ObjectStore>,
        location: &Path,
        options: GetOptions,
    ) -> Result<GetResult> {
        let result = inner.get_opts(location, options).await?;
        if n.is_multiple_of(2) {
            return Ok(result);
        }
        spoil_body(result, |bytes: Bytes| {
            let half = bytes.slice(..bytes.len() / 2);
            futures::stream::iter([Ok(half), Err(transport_error("connection reset by peer"))]).boxed()
        })
        .await
    }
}
