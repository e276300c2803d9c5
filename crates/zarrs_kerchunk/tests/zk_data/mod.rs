//! The S3 bucket zk-data of `.ci/servers.sh` (moto), reached with its own user's keys, for the
//! tests that put files there (included by the tests that have the `aws` feature; `common` is
//! shared with crates that have no such feature).

use std::sync::Arc;

use object_store::ObjectStore;
use object_store::aws::AmazonS3Builder;

/// zk-data on the S3 server at `endpoint`, with `ZK_S3_DATA_KEY` and `ZK_S3_DATA_SECRET`.
pub(crate) fn zk_data(endpoint: &str) -> Arc<dyn ObjectStore> {
    let key = |part: &str| std::env::var(format!("ZK_S3_DATA_{part}")).expect("keys are printed with ZK_S3");
    Arc::new(
        AmazonS3Builder::new()
            .with_endpoint(endpoint)
            .with_allow_http(true)
            .with_region("us-east-1")
            .with_bucket_name("zk-data")
            .with_access_key_id(key("KEY"))
            .with_secret_access_key(key("SECRET"))
            .build()
            .unwrap(),
    )
}
