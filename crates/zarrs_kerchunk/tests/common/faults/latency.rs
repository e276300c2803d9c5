//! Every get waits before it is answered.

use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use object_store::path::Path;
use object_store::{GetOptions, GetResult, ObjectStore, Result};

use super::Fault;

/// Every get waits `0` first (and an extra millisecond every seventh get,
/// so that concurrent answers arrive out of order).
#[derive(Debug)]
pub(crate) struct Latency(pub(crate) Duration);

#[async_trait]
impl Fault for Latency {
    async fn get(
        &self,
        n: u64,
        inner: &Arc<dyn ObjectStore>,
        location: &Path,
        options: GetOptions,
    ) -> Result<GetResult> {
        let jitter = if n.is_multiple_of(7) { Duration::from_millis(1) } else { Duration::ZERO };
        tokio::time::sleep(self.0 + jitter).await;
        inner.get_opts(location, options).await
    }
}
