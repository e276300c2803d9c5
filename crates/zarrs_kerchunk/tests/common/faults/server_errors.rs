//! Bursts of server errors (a 503 from a busy server).

use std::sync::Arc;

use async_trait::async_trait;
use object_store::path::Path;
use object_store::{GetOptions, GetResult, ObjectStore, Result};

use super::{Fault, transport_error};

/// Of every `every` gets, the last `burst` fail as a busy server's would.
#[derive(Debug)]
pub(crate) struct ServerErrors {
    pub(crate) every: u64,
    pub(crate) burst: u64,
}

#[async_trait]
impl Fault for ServerErrors {
    async fn get(
        &self,
        n: u64,
        inner: &Arc<dyn ObjectStore>,
        location: &Path,
        options: GetOptions,
    ) -> Result<GetResult> {
        if n % self.every >= self.every - self.burst {
            return Err(transport_error("Server returned non-2xx status code: 503 Service Unavailable"));
        }
        inner.get_opts(location, options).await
    }
}
