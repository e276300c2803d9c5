//! An HTTP store for the tests that read from nginx and the in-test servers
//! (included by those tests, which need the `http` feature; `common` is
//! shared with crates that have no such feature).

use std::sync::Arc;

use object_store::ObjectStore;
use object_store::http::HttpBuilder;

/// An HTTP store over plain `http://` for the folder at `prefix`.
pub(crate) fn http_store(prefix: &str) -> Arc<dyn ObjectStore> {
    let client = object_store::ClientOptions::new().with_allow_http(true);
    Arc::new(HttpBuilder::new().with_url(prefix).with_client_options(client).build().unwrap())
}
