//! HTTP servers on 127.0.0.1 for tests, each on its own thread and runtime so
//! that sync tests can use them too.
//!
//! - `/files/...`: `tests/data` through tower-http's `ServeDir` (real `Range` support);
//! - `/status500/...`: every request fails with 500;
//! - `/loop/...`: a redirect to itself, for ever;
//! - `/norange/...`: the files of `tests/data`, ignoring `Range` (always 200, whole body);
//! - [`truncating`]: a raw socket that promises a body and closes early.

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

use axum::Router;
use axum::extract::Path as UrlPath;
use axum::extract::Request;
use axum::http::StatusCode;
use axum::http::header::RANGE;
use axum::middleware::Next;
use axum::routing::get;
use axum::serve::ListenerExt;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tower_http::services::ServeDir;

use super::data_dir;

/// Run `make` (which builds a server future) on a new thread; return its address.
fn spawn<F, Fut>(make: F) -> SocketAddr
where
    F: FnOnce(tokio::net::TcpListener) -> Fut + Send + 'static,
    Fut: std::future::Future<Output = ()>,
{
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        runtime.block_on(async move {
            let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
            tx.send(listener.local_addr().unwrap()).unwrap();
            make(listener).await;
        });
    });
    rx.recv().unwrap()
}

/// One request as the server saw it: method, path and `Range` header.
pub(crate) type Logged = (String, String, Option<String>);

/// The file server; returns `http://127.0.0.1:port`.
pub(crate) fn files() -> String {
    files_logged().0
}

/// The file server and the log of every request it answers.
pub(crate) fn files_logged() -> (String, Arc<Mutex<Vec<Logged>>>) {
    serve_logged(
        Router::new()
            .nest_service("/files", ServeDir::new(data_dir()))
            .route("/status500/{*path}", get(|| async { (StatusCode::INTERNAL_SERVER_ERROR, "boom") }))
            // Redirects to itself, with a signature in the query that must appear in no error.
            .route(
                "/loop/{*path}",
                get(|UrlPath(path): UrlPath<String>| async move {
                    (
                        StatusCode::FOUND,
                        [(axum::http::header::LOCATION, format!("/loop/{path}?X-Amz-Signature=sekrit"))],
                    )
                }),
            )
            .route(
                "/norange/{*path}",
                get(|UrlPath(path): UrlPath<String>| async move {
                    std::fs::read(data_dir().join(path)).map_err(|_| StatusCode::NOT_FOUND)
                }),
            ),
    )
}

/// Serve `app`, logging every request it answers; returns `http://127.0.0.1:port` and the log.
fn serve_logged(app: Router) -> (String, Arc<Mutex<Vec<Logged>>>) {
    let log = Arc::new(Mutex::new(Vec::new()));
    let app_log = Arc::clone(&log);
    let addr = spawn(|listener| async move {
        let record = move |request: Request, next: Next| {
            let log = Arc::clone(&app_log);
            async move {
                let range = request.headers().get(RANGE).and_then(|v| v.to_str().ok()).map(str::to_owned);
                log.lock().unwrap().push((request.method().to_string(), request.uri().path().to_owned(), range));
                next.run(request).await
            }
        };
        // Without TCP_NODELAY small responses stall ~40 ms on delayed ACKs.
        let listener = listener.tap_io(|tcp| {
            let _ = tcp.set_nodelay(true);
        });
        axum::serve(listener, app.layer(axum::middleware::from_fn(record))).await.unwrap();
    });
    (format!("http://{addr}"), log)
}

/// A server that answers every request with a 206 promising 1000 bytes, sends 10 and closes.
pub(crate) fn truncating() -> String {
    let addr = spawn(|listener| async move {
        loop {
            let (mut socket, _) = listener.accept().await.unwrap();
            tokio::spawn(async move {
                let mut buf = vec![0u8; 8192];
                let _ = socket.read(&mut buf).await;
                let head = "HTTP/1.1 206 Partial Content\r\nContent-Length: 1000\r\n\
                            Content-Range: bytes 0-999/5000\r\n\r\n";
                let _ = socket.write_all(head.as_bytes()).await;
                let _ = socket.write_all(&[7u8; 10]).await;
                let _ = socket.shutdown().await;
            });
        }
    });
    format!("http://{addr}")
}

/// A raw socket that accepts, reads the request, and never answers (the
/// connection stays open until the server thread ends with the test process).
pub(crate) fn stalling() -> String {
    let addr = spawn(|listener| async move {
        let mut held = Vec::new();
        loop {
            let (mut socket, _) = listener.accept().await.unwrap();
            let mut buf = vec![0u8; 8192];
            let _ = socket.read(&mut buf).await;
            held.push(socket);
        }
    });
    format!("http://{addr}")
}

/// A file server for `dir` (with `Range`, `HEAD`, `Last-Modified` and
/// conditional requests, as tower-http's `ServeDir` answers them); returns
/// `http://127.0.0.1:port`.
pub(crate) fn serve_dir(dir: std::path::PathBuf) -> String {
    serve_dir_logged(dir).0
}

/// [`serve_dir`], and the log of every request it answers.
pub(crate) fn serve_dir_logged(dir: std::path::PathBuf) -> (String, Arc<Mutex<Vec<Logged>>>) {
    serve_logged(Router::new().fallback_service(ServeDir::new(dir)))
}
