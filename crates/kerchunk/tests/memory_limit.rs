//! A document whose one member is larger than the memory the process may
//! have is an error naming the document, not an abort: checked in a child
//! process whose address space is limited (`ulimit -v`), as a container's
//! memory limit would.

#![cfg(target_os = "linux")]

use std::io::Read;
use std::process::Command;

use kerchunk::{ParseError, ParseOptions, ReferenceSet};

/// `{"k": "aaaa...` without end: one member that never closes.
struct EndlessMember {
    /// Bytes read so far.
    at: usize,
}

impl Read for EndlessMember {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        const HEAD: &[u8] = br#"{"k": ""#;
        let head = HEAD.get(self.at..).unwrap_or_default();
        let n = head.len().min(buf.len());
        buf[..n].copy_from_slice(&head[..n]);
        buf[n..].fill(b'a');
        self.at += buf.len();
        Ok(buf.len())
    }
}

const CHILD: &str = "ZK_MEMORY_LIMIT_CHILD";

#[test]
fn a_member_larger_than_the_memory_left_is_an_error_not_an_abort() {
    if std::env::var_os(CHILD).is_some() {
        // In the limited child: the scanner's block doubles until an allocation fails.
        let err = ReferenceSet::from_json_reader(EndlessMember { at: 0 }, &ParseOptions::default(), "endless.json")
            .expect_err("an endless member cannot parse");
        assert!(matches!(err, ParseError::OutOfMemory { .. }), "{err}");
        assert!(err.to_string().contains("endless.json"), "{err}");
        return;
    }
    let test = std::env::current_exe().unwrap();
    // 1.5 GiB of address space: the block grows past 512 MiB before an allocation fails.
    let output = Command::new("sh")
        .arg("-c")
        .arg(r#"ulimit -v 1572864 && exec "$0" --exact a_member_larger_than_the_memory_left_is_an_error_not_an_abort --test-threads 1"#)
        .arg(&test)
        .env(CHILD, "1")
        .output()
        .expect("sh runs");
    let printed = format!("{}\n{}", String::from_utf8_lossy(&output.stdout), String::from_utf8_lossy(&output.stderr));
    assert!(output.status.success(), "the child failed or aborted ({:?}):\n{printed}", output.status);
    assert!(printed.contains("1 passed"), "the child ran no test:\n{printed}");
}
