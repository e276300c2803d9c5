//! An HTTP store for the tests that read from nginx and the in-test servers
//! (included by those tests, which need the `http` feature; `common` is
//! shared with crates that have no such feature).
#![allow(dead_code, reason = "each test uses some of these")]

use std::sync::Arc;

use object_store::ObjectStore;
use object_store::http::HttpBuilder;

/// An HTTP store over plain `http://` for the folder at `prefix`.
pub(crate) fn http_store(prefix: &str) -> Arc<dyn ObjectStore> {
    let client = object_store::ClientOptions::new().with_allow_http(true);
    Arc::new(HttpBuilder::new().with_url(prefix).with_client_options(client).build().unwrap())
}

/// The JSON at `path` of the server whose URL is `server` (any URL on it: its path is dropped).
pub(crate) async fn get_json(server: &str, path: &str) -> serde_json::Value {
    use object_store::ObjectStoreExt;
    let url = url::Url::parse(server).unwrap();
    let body = http_store(&url[..url::Position::BeforePath]).get(&path.into()).await.unwrap().bytes().await.unwrap();
    serde_json::from_slice(&body).unwrap()
}
