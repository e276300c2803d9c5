//! A target rewritten by someone else between two reads (a new ETag).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use futures::StreamExt;
use object_store::path::Path;
use object_store::{GetOptions, GetResult, GetResultPayload, ObjectStore, ObjectStoreExt, PutPayload, Result};
use tokio::sync::watch;

use super::Fault;

/// The second get of each object first rewrites it with every byte
/// inverted: the same size, a new version, other bytes. The store must
/// support writes and ETags (as memory, S3, Azure and GCS do).
///
/// The rewrite waits until the body of the first get is read (or dropped):
/// the reader has then seen and checked the first version. Without the wait,
/// concurrent first reads could all see the new version, which no reader
/// can tell from a set made against it.
#[derive(Debug, Default)]
pub(crate) struct Changing {
    objects: Mutex<HashMap<Path, Object>>,
}

/// The gets of one object so far, and the end of the first one's body.
#[derive(Debug)]
struct Object {
    gets: u64,
    first_read: watch::Receiver<()>,
}

#[async_trait]
impl Fault for Changing {
    async fn get(
        &self,
        _: u64,
        inner: &Arc<dyn ObjectStore>,
        location: &Path,
        options: GetOptions,
    ) -> Result<GetResult> {
        let (nth, first_read, sender) = {
            let mut objects = self.objects.lock().unwrap();
            if let Some(object) = objects.get_mut(location) {
                object.gets += 1;
                (object.gets, Some(object.first_read.clone()), None)
            } else {
                let (sender, receiver) = watch::channel(());
                objects.insert(location.clone(), Object { gets: 1, first_read: receiver });
                (1, None, Some(sender))
            }
        };
        if let Some(mut first_read) = first_read {
            // Ends when the first get's sender is dropped: its body was read, or it failed.
            while first_read.changed().await.is_ok() {}
        }
        if nth == 2 {
            let bytes = inner.get(location).await?.bytes().await?;
            let inverted: Vec<u8> = bytes.iter().map(|b| !b).collect();
            inner.put(location, PutPayload::from(inverted)).await?;
        }
        let mut got = inner.get_opts(location, options).await?;
        if let Some(sender) = sender {
            got.payload = match got.payload {
                // The sender lives as long as the body.
                GetResultPayload::Stream(body) => GetResultPayload::Stream(
                    body.map(move |part| {
                        let _first_read = &sender;
                        part
                    })
                    .boxed(),
                ),
                file @ GetResultPayload::File(..) => file,
            };
        }
        Ok(got)
    }
}
