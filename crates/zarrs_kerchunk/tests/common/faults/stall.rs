//! A server that stops sending part-way through a body, and never resumes.

use std::sync::Arc;

use async_trait::async_trait;
use bytes::Bytes;
use futures::StreamExt;
use object_store::path::Path;
use object_store::{GetOptions, GetResult, ObjectStore, Result};

use super::{Fault, spoil_body};

/// Every `every`th get sends half its body, then nothing, for ever.
#[derive(Debug)]
pub(crate) struct Stall {
    pub(crate) every: u64,
}

#[async_trait]
impl Fault for Stall {
    async fn get(
        &self,
        n: u64,
        inner: &Arc<dyn ObjectStore>,
        location: &Path,
        options: GetOptions,
    ) -> Result<GetResult> {
        let result = inner.get_opts(location, options).await?;
        if n % self.every != self.every - 1 {
            return Ok(result);
        }
        spoil_body(result, |bytes: Bytes| {
            let half = bytes.slice(..bytes.len() / 2);
            futures::stream::iter([Ok(half)]).chain(futures::stream::pending()).boxed()
        })
        .await
    }

    fn stalls(&self) -> bool {
        true
    }
}
