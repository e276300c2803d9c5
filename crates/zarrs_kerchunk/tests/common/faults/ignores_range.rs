//! A server that ignores Range and sends the whole object.

use std::sync::Arc;

use async_trait::async_trait;
use object_store::path::Path;
use object_store::{GetOptions, GetResult, ObjectStore, Result};

use super::Fault;

/// Every get answers with the whole object, whatever range was asked for
/// (and says so, as a `200 OK` would).
#[derive(Debug)]
pub(crate) struct IgnoresRange;

#[async_trait]
impl Fault for IgnoresRange {
    async fn get(
        &self,
        _: u64,
        inner: &Arc<dyn ObjectStore>,
        location: &Path,
        options: GetOptions,
    ) -> Result<GetResult> {
        inner.get_opts(location, GetOptions { range: None, ..options }).await
    }
}
