//! What the tests that read from servers share: the servers' variables, and
//! a case read from a reference file at a URL, sync and async.

use std::sync::Arc;

use zarrs_kerchunk::ReferenceStoreBuilder;

use super::{Case, Reads};

/// A server's variable, or `None` (and a note) if the servers are not running.
pub(crate) fn var(name: &str) -> Option<String> {
    if let Ok(value) = std::env::var(name) {
        return Some(value);
    }
    assert!(
        std::env::var_os("ZK_REQUIRE_SERVERS").is_none(),
        "{name} is not set but ZK_REQUIRE_SERVERS is: start the servers with .ci/servers.sh"
    );
    eprintln!("{name} not set: this test needs `eval \"$(bash .ci/servers.sh start)\"` first; not run");
    None
}

/// Read every array of `case` from the reference file at `location`, sync or async: the
/// errors and the wrong values apart (a set that cannot be opened is an error).
pub(crate) async fn read_one(builder: &ReferenceStoreBuilder, case: &Case, location: &str, sync: bool) -> Reads {
    let failed = |e: &dyn std::fmt::Display| Reads { errors: vec![format!("{location}: {e}")], wrong: Vec::new() };
    if sync {
        let (builder, owned) = (builder.clone(), location.to_owned());
        let case = Case::all().into_iter().find(|c| c.name == case.name).unwrap();
        let opened = tokio::task::spawn_blocking(move || {
            builder.open(&owned).map(|store| super::read_sync(&case, &Arc::new(store)))
        });
        return match opened.await.unwrap() {
            Ok(reads) => reads,
            Err(e) => failed(&e),
        };
    }
    match builder.open_async(location).await {
        Ok(store) => super::read_async(case, Arc::new(store)).await,
        Err(e) => failed(&e),
    }
}

/// [`read_one`], sync and async.
pub(crate) async fn read_case(builder: &ReferenceStoreBuilder, case: &Case, location: &str) -> Reads {
    let mut reads = read_one(builder, case, location, true).await;
    let more = read_one(builder, case, location, false).await;
    reads.errors.extend(more.errors);
    reads.wrong.extend(more.wrong);
    reads
}
