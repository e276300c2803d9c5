//! A remote document larger than the memory the process may have is an error
//! naming it, not an abort: checked in a child process whose address space
//! is limited (`ulimit -v`), as a container's memory limit would, against a
//! server that sends 4 GB of one JSON member. (The JSON scanner's own buffer
//! is checked the same way in the `kerchunk` crate's `memory_limit.rs`.)

#![cfg(target_os = "linux")]

use std::io::{BufRead, BufReader, Write};
use std::net::TcpListener;
use std::process::Command;

use kerchunk::{Limits, ParseOptions};
use zarrs_kerchunk::ReferenceStoreBuilder;

const CHILD: &str = "ZK_REMOTE_MEMORY_LIMIT_CHILD";

/// The size the server states and streams: past the memory the child may have.
const SIZE: u64 = 4_000_000_000;

/// Serve `{"k": "aaaa...` (SIZE bytes) to every GET, and its headers to every HEAD.
fn serve_endless_member() -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            std::thread::spawn(move || {
                let mut request = String::new();
                let mut reader = BufReader::new(stream.try_clone().unwrap());
                while reader.read_line(&mut request).is_ok_and(|n| n > 2) {
                    if request.ends_with("\r\n\r\n") {
                        break;
                    }
                }
                let head = format!(
                    "HTTP/1.1 200 OK\r\nContent-Length: {SIZE}\r\nContent-Type: application/json\r\n\
                     Last-Modified: Wed, 25 Nov 2026 00:00:00 GMT\r\nETag: \"endless\"\r\nConnection: close\r\n\r\n"
                );
                if stream.write_all(head.as_bytes()).is_err() || request.starts_with("HEAD") {
                    return;
                }
                let _ = stream.write_all(br#"{"k": ""#);
                let block = vec![b'a'; 1 << 20];
                let mut sent = 7;
                while sent < SIZE && stream.write_all(&block).is_ok() {
                    sent += block.len() as u64;
                }
            });
        }
    });
    port
}

#[test]
fn a_remote_document_larger_than_the_memory_left_is_an_error_not_an_abort() {
    if std::env::var_os(CHILD).is_some() {
        let port = serve_endless_member();
        let url = format!("http://127.0.0.1:{port}/endless.json");
        // The document limit is above the body, so that memory is what runs out.
        let limits = Limits::default().with_max_document_bytes(8 << 30);
        let err = ReferenceStoreBuilder::new()
            .with_parse_options(ParseOptions::default().with_limits(limits))
            .with_option("allow_http", "true")
            .open(&url)
            .expect_err("4 GB cannot be held in 1.5 GiB");
        let text = kerchunk::error_chain(&err);
        assert!(text.contains(&url) && text.contains("allocate"), "{text}");
        return;
    }
    let test = std::env::current_exe().unwrap();
    let output = Command::new("sh")
        .arg("-c")
        .arg(r#"ulimit -v 1572864 && exec "$0" --exact a_remote_document_larger_than_the_memory_left_is_an_error_not_an_abort --test-threads 1"#)
        .arg(&test)
        .env(CHILD, "1")
        .output()
        .expect("sh runs");
    let printed = format!("{}\n{}", String::from_utf8_lossy(&output.stdout), String::from_utf8_lossy(&output.stderr));
    assert!(output.status.success(), "the child failed or aborted ({:?}):\n{printed}", output.status);
    assert!(printed.contains("1 passed"), "the child ran no test:\n{printed}");
}
