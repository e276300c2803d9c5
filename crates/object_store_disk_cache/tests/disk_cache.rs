//! The cache's promises, against `object_store`'s in-memory store (ETags
//! that change with every write, `If-Match` honoured) and a store without
//! ETags, each behind a counter of the requests that reach it. A "process"
//! is a `DiskCache` opened anew on the same folder: it knows nothing the
//! last one checked. The truth is the bytes written to the store.

use std::fmt;
use std::ops::Range;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use futures::stream::BoxStream;
use object_store::memory::InMemory;
use object_store::path::Path;
use object_store::{
    CopyOptions, GetOptions, GetResult, ListResult, MultipartUpload, ObjectMeta, ObjectStore, ObjectStoreExt,
    PutMultipartOptions, PutOptions, PutPayload, PutResult, Result,
};
use object_store_disk_cache::DiskCache;

/// The requests that reached a store: data gets and metadata requests.
#[derive(Debug, Default)]
struct Counts {
    gets: AtomicU64,
    heads: AtomicU64,
    /// The `If-Match` of every data get.
    if_match: Mutex<Vec<Option<String>>>,
}

/// A store that counts what reaches it, and can hide its ETags.
#[derive(Debug)]
struct Counting {
    inner: Arc<dyn ObjectStore>,
    counts: Arc<Counts>,
    without_etags: bool,
}

impl fmt::Display for Counting {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Counting({})", self.inner)
    }
}

#[async_trait]
impl ObjectStore for Counting {
    async fn get_opts(&self, location: &Path, options: GetOptions) -> Result<GetResult> {
        if options.head {
            self.counts.heads.fetch_add(1, Ordering::SeqCst);
        } else {
            self.counts.gets.fetch_add(1, Ordering::SeqCst);
            self.counts.if_match.lock().unwrap().push(options.if_match.clone());
        }
        let mut got = self.inner.get_opts(location, options).await?;
        if self.without_etags {
            got.meta.e_tag = None;
        }
        Ok(got)
    }
    async fn put_opts(&self, location: &Path, payload: PutPayload, opts: PutOptions) -> Result<PutResult> {
        self.inner.put_opts(location, payload, opts).await
    }
    async fn put_multipart_opts(&self, location: &Path, opts: PutMultipartOptions) -> Result<Box<dyn MultipartUpload>> {
        self.inner.put_multipart_opts(location, opts).await
    }
    fn delete_stream(&self, locations: BoxStream<'static, Result<Path>>) -> BoxStream<'static, Result<Path>> {
        self.inner.delete_stream(locations)
    }
    fn list(&self, prefix: Option<&Path>) -> BoxStream<'static, Result<ObjectMeta>> {
        self.inner.list(prefix)
    }
    async fn list_with_delimiter(&self, prefix: Option<&Path>) -> Result<ListResult> {
        self.inner.list_with_delimiter(prefix).await
    }
    async fn copy_opts(&self, from: &Path, to: &Path, options: CopyOptions) -> Result<()> {
        self.inner.copy_opts(from, to, options).await
    }
}

struct Remote {
    memory: Arc<InMemory>,
    counted: Arc<dyn ObjectStore>,
    counts: Arc<Counts>,
}

impl Remote {
    fn new(without_etags: bool) -> Self {
        let memory = Arc::new(InMemory::new());
        let counts = Arc::new(Counts::default());
        let counted = Arc::new(Counting { inner: memory.clone(), counts: Arc::clone(&counts), without_etags })
            as Arc<dyn ObjectStore>;
        Self { memory, counted, counts }
    }

    fn gets(&self) -> u64 {
        self.counts.gets.load(Ordering::SeqCst)
    }

    fn heads(&self) -> u64 {
        self.counts.heads.load(Ordering::SeqCst)
    }

    /// A new process's view: the folder `dir` opened afresh.
    fn through(&self, dir: &std::path::Path) -> (Arc<DiskCache>, Arc<dyn ObjectStore>) {
        let cache = Arc::new(DiskCache::new(dir).unwrap());
        let store = cache.wrap("memory://remote/", Arc::clone(&self.counted));
        (cache, store)
    }
}

fn object(n: usize, seed: u8) -> Vec<u8> {
    (0..n).map(|i| u8::try_from(i % 256).unwrap().wrapping_mul(31).wrapping_add(seed)).collect()
}

/// A way to damage a cached file's bytes.
type Damage<'a> = &'a dyn Fn(&mut Vec<u8>);

/// The bytes of `range` of `bytes`.
fn at<'a>(bytes: &'a [u8], range: &Range<u64>) -> &'a [u8] {
    &bytes[usize::try_from(range.start).unwrap()..usize::try_from(range.end).unwrap()]
}

fn cached_files(dir: &std::path::Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    let mut stack = vec![dir.join("v1/objects")];
    while let Some(folder) = stack.pop() {
        for entry in std::fs::read_dir(folder).unwrap().flatten() {
            if entry.file_type().unwrap().is_dir() {
                stack.push(entry.path());
            } else {
                files.push(entry.path());
            }
        }
    }
    files
}

const RANGES: [Range<u64>; 4] = [0..100, 5000..9000, 9000..9100, 65_000..65_536];

#[tokio::test]
async fn a_warm_read_makes_one_metadata_request_and_no_get() {
    let dir = tempfile::tempdir().unwrap();
    let remote = Remote::new(false);
    let path = Path::from("data/a.bin");
    let bytes = object(65_536, 1);
    remote.memory.put(&path, bytes.clone().into()).await.unwrap();

    let (_, cold) = remote.through(dir.path());
    for range in RANGES {
        assert_eq!(cold.get_range(&path, range.clone()).await.unwrap(), at(&bytes, &range));
    }
    assert_eq!((remote.heads(), remote.gets()), (1, 4));

    let (cache, warm) = remote.through(dir.path());
    for range in RANGES {
        assert_eq!(warm.get_range(&path, range.clone()).await.unwrap(), at(&bytes, &range));
    }
    // Inside a cached range, a suffix, a whole object (in pieces it spans and gaps it fetches).
    assert_eq!(warm.get_range(&path, 5100..5200).await.unwrap(), bytes[5100..5200]);
    assert_eq!((remote.heads(), remote.gets()), (2, 4), "the warm process: one HEAD, no GET");
    let whole = warm.get(&path).await.unwrap().bytes().await.unwrap();
    assert_eq!(whole, bytes);
    assert_eq!(remote.gets(), 4 + 2, "the whole object: only its two gaps fetched");
    assert_eq!(warm.head(&path).await.unwrap().size, 65_536);
    assert_eq!(remote.heads(), 2, "a HEAD in a process that checked the object is answered from memory");
    let stats = cache.stats();
    assert_eq!((stats.metadata_requests, stats.served_reads, stats.fetched_ranges), (1, 5, 2));
}

#[tokio::test]
async fn an_object_rewritten_in_place_with_the_same_size_is_read_again() {
    for without_etags in [false, true] {
        let dir = tempfile::tempdir().unwrap();
        let remote = Remote::new(without_etags);
        let path = Path::from("a.bin");
        remote.memory.put(&path, object(4096, 1).into()).await.unwrap();
        let (_, first) = remote.through(dir.path());
        assert_eq!(first.get_range(&path, 0..4096).await.unwrap(), object(4096, 1));
        // Without ETags a version is its size and time: the rewrite must be at least a millisecond later.
        std::thread::sleep(std::time::Duration::from_millis(5));
        remote.memory.put(&path, object(4096, 2).into()).await.unwrap();
        let gets = remote.gets();
        let (_, second) = remote.through(dir.path());
        assert_eq!(second.get_range(&path, 0..4096).await.unwrap(), object(4096, 2), "etags hidden: {without_etags}");
        assert_eq!(remote.gets(), gets + 1);
        // The old version's ranges are gone: one version of the object is kept.
        assert_eq!(cached_files(dir.path()).len(), 1);
    }
}

#[tokio::test]
async fn a_process_that_checked_a_version_refuses_a_changed_object_rather_than_mixing_versions() {
    let dir = tempfile::tempdir().unwrap();
    let remote = Remote::new(false);
    let path = Path::from("a.bin");
    remote.memory.put(&path, object(4096, 1).into()).await.unwrap();
    let (_, store) = remote.through(dir.path());
    assert_eq!(store.get_range(&path, 0..10).await.unwrap(), object(4096, 1)[..10]);
    remote.memory.put(&path, object(4096, 2).into()).await.unwrap();
    // Cached: the version checked. Not cached: refused, as the store refuses the If-Match.
    assert_eq!(store.get_range(&path, 0..10).await.unwrap(), object(4096, 1)[..10]);
    let error = store.get_range(&path, 100..200).await.unwrap_err();
    assert!(matches!(error, object_store::Error::Precondition { .. }), "{error}");
}

#[tokio::test]
async fn every_damaged_file_is_discarded_and_its_range_read_again() {
    let dir = tempfile::tempdir().unwrap();
    let remote = Remote::new(false);
    let path = Path::from("a.bin");
    let bytes = object(65_536, 3);
    remote.memory.put(&path, bytes.clone().into()).await.unwrap();
    let (_, cold) = remote.through(dir.path());
    for range in RANGES {
        cold.get_range(&path, range).await.unwrap();
    }
    let files = cached_files(dir.path());
    assert_eq!(files.len(), RANGES.len());
    // One byte flipped in the body, the file cut short, emptied, and a header byte altered.
    let damage: [Damage; 4] = [
        &|b| {
            let at = b.len() - 20;
            b[at] ^= 1;
        },
        &|b| b.truncate(b.len() / 2),
        &|b| b.clear(),
        &|b| b[12] ^= 0x40,
    ];
    for (file, damage) in files.iter().zip(damage) {
        let mut content = std::fs::read(file).unwrap();
        damage(&mut content);
        std::fs::write(file, content).unwrap();
    }
    let gets = remote.gets();
    let (cache, warm) = remote.through(dir.path());
    for range in RANGES {
        assert_eq!(warm.get_range(&path, range.clone()).await.unwrap(), at(&bytes, &range));
    }
    assert_eq!(cache.stats().discarded, 4);
    assert_eq!(remote.gets(), gets + 4, "each damaged range fetched again");
    // And cached again, whole.
    let (_, again) = remote.through(dir.path());
    for range in RANGES {
        again.get_range(&path, range).await.unwrap();
    }
    assert_eq!(remote.gets(), gets + 4);
}

#[tokio::test]
async fn a_writer_killed_midway_leaves_nothing_that_is_read() {
    let dir = tempfile::tempdir().unwrap();
    let remote = Remote::new(false);
    let path = Path::from("a.bin");
    let bytes = object(8192, 4);
    remote.memory.put(&path, bytes.clone().into()).await.unwrap();
    let (_, cold) = remote.through(dir.path());
    cold.get_range(&path, 0..4096).await.unwrap();
    // What a killed writer leaves: a partial file in the temporary folder,
    // never renamed; and, were writes not atomic, a short file in place.
    let file = &cached_files(dir.path())[0];
    let content = std::fs::read(file).unwrap();
    std::fs::write(dir.path().join("v1/tmp/1234-0-0.part"), &content[..content.len() / 3]).unwrap();
    std::fs::write(file.with_file_name("4096-8192"), &content[..content.len() / 3]).unwrap();
    let (_, warm) = remote.through(dir.path());
    assert_eq!(warm.get_range(&path, 0..8192).await.unwrap(), bytes);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn processes_racing_on_an_empty_folder_all_read_right() {
    let dir = tempfile::tempdir().unwrap();
    let remote = Arc::new(Remote::new(false));
    let path = Path::from("a.bin");
    let bytes = Arc::new(object(1 << 20, 5));
    remote.memory.put(&path, bytes.to_vec().into()).await.unwrap();
    let ranges: Vec<Range<u64>> = (0..64).map(|i| i * 16_384..(i + 1) * 16_384).collect();
    let tasks = (0..8).map(|p| {
        let (remote, bytes, path, ranges) = (Arc::clone(&remote), Arc::clone(&bytes), path.clone(), ranges.clone());
        let dir = dir.path().to_path_buf();
        tokio::spawn(async move {
            let (_, store) = remote.through(&dir);
            // Each process in its own order, overlapping the others' ranges.
            for i in 0..ranges.len() {
                let range = &ranges[(i * (p + 1) * 7) % ranges.len()];
                let wide = range.start.saturating_sub(100)..(range.end + 100).min(1 << 20);
                let got = store.get_range(&path, wide.clone()).await.unwrap();
                assert_eq!(got, at(&bytes, &wide));
            }
        })
    });
    for task in futures::future::join_all(tasks).await {
        task.unwrap();
    }
    let gets = remote.gets();
    let (_, next) = remote.through(dir.path());
    for range in &ranges {
        assert_eq!(next.get_range(&path, range.clone()).await.unwrap(), at(&bytes, range));
    }
    assert_eq!(remote.gets(), gets, "the next process makes no GET");
}

#[tokio::test]
async fn a_pinned_read_needs_no_request_at_all() {
    let dir = tempfile::tempdir().unwrap();
    let remote = Remote::new(false);
    let path = Path::from("a.bin");
    let bytes = object(4096, 6);
    remote.memory.put(&path, bytes.clone().into()).await.unwrap();
    let (_, cold) = remote.through(dir.path());
    let etag = cold.head(&path).await.unwrap().e_tag.unwrap();
    let pinned = GetOptions::new().with_range(Some(10..20)).with_if_match(Some(etag.clone()));
    cold.get_opts(&path, pinned.clone()).await.unwrap();
    let (heads, gets) = (remote.heads(), remote.gets());
    let (_, warm) = remote.through(dir.path());
    let got = warm.get_opts(&path, pinned.clone()).await.unwrap();
    assert_eq!(got.meta.e_tag.as_deref(), Some(etag.as_str()));
    assert_eq!(got.bytes().await.unwrap(), bytes[10..20]);
    assert_eq!((remote.heads(), remote.gets()), (heads, gets), "no request");
    // Asked to check pinned reads too: one HEAD.
    let checking = Arc::new(DiskCache::new(dir.path()).unwrap().with_pinned_revalidation(true));
    let store = checking.wrap("memory://remote/", Arc::clone(&remote.counted));
    store.get_opts(&path, pinned).await.unwrap();
    assert_eq!((remote.heads(), remote.gets()), (heads + 1, gets));
    // A pin of another version is the store's to refuse.
    let stale = GetOptions::new().with_range(Some(10..20)).with_if_match(Some("\"other\"".to_owned()));
    let error = warm.get_opts(&path, stale).await.unwrap_err();
    assert!(matches!(error, object_store::Error::Precondition { .. }), "{error}");
}

#[tokio::test]
async fn the_cache_keeps_under_its_size_evicting_the_least_recently_read() {
    let dir = tempfile::tempdir().unwrap();
    let remote = Remote::new(false);
    let path = Path::from("a.bin");
    let bytes = object(1 << 20, 7);
    remote.memory.put(&path, bytes.clone().into()).await.unwrap();
    let limit = 200_000;
    let cache = Arc::new(DiskCache::new(dir.path()).unwrap().with_max_bytes(limit));
    let store = cache.wrap("memory://remote/", Arc::clone(&remote.counted));
    for i in 0..64u64 {
        let range = i * 16_384..(i + 1) * 16_384;
        assert_eq!(store.get_range(&path, range.clone()).await.unwrap(), at(&bytes, &range));
    }
    let held: u64 = cached_files(dir.path()).iter().map(|f| f.metadata().unwrap().len()).sum();
    assert!(held <= limit, "{held} bytes held, limit {limit}");
    assert!(cache.stats().evicted > 0);
    // The last range read is still there; the first is gone.
    let gets = remote.gets();
    store.get_range(&path, 63 * 16_384..64 * 16_384).await.unwrap();
    assert_eq!(remote.gets(), gets);
    assert_eq!(store.get_range(&path, 0..16_384).await.unwrap(), bytes[..16_384]);
    assert_eq!(remote.gets(), gets + 1);
}

#[tokio::test]
async fn a_folder_that_cannot_be_written_serves_from_the_store() {
    let dir = tempfile::tempdir().unwrap();
    let remote = Remote::new(false);
    let path = Path::from("a.bin");
    remote.memory.put(&path, object(4096, 8).into()).await.unwrap();
    let (cache, store) = remote.through(dir.path());
    // The temporary folder replaced by a file: no write can succeed.
    std::fs::remove_dir_all(dir.path().join("v1/tmp")).unwrap();
    std::fs::write(dir.path().join("v1/tmp"), b"").unwrap();
    assert_eq!(store.get_range(&path, 0..4096).await.unwrap(), object(4096, 8));
    assert_eq!(cache.stats().write_failures, 1);
}

#[tokio::test]
async fn what_a_batch_lacks_is_merged_within_the_gap_and_the_bytes_between_are_kept() {
    let dir = tempfile::tempdir().unwrap();
    let remote = Remote::new(false);
    let path = Path::from("a.bin");
    let bytes = object(1 << 20, 9);
    remote.memory.put(&path, bytes.clone().into()).await.unwrap();
    let (_, store) = remote.through(dir.path());
    let ranges = [0..10, 100..110, 500_000..500_010];
    let got = store.get_ranges(&path, &ranges).await.unwrap();
    assert_eq!(got.len(), ranges.len());
    for (range, got) in ranges.iter().zip(&got) {
        assert_eq!(got, at(&bytes, range));
    }
    assert_eq!(remote.gets(), 2, "the first two, 90 bytes apart, in one request; the third alone");
    // The bytes between the first two were kept: a read of them, in another process, makes no GET.
    let (_, warm) = remote.through(dir.path());
    assert_eq!(warm.get_range(&path, 5..105).await.unwrap(), at(&bytes, &(5..105)));
    assert_eq!(remote.gets(), 2);
}

#[cfg(unix)]
#[test]
fn the_folders_it_makes_are_its_owners_alone() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("new");
    DiskCache::new(&root).unwrap();
    for folder in ["new", "new/v1", "new/v1/objects", "new/v1/tmp"] {
        let mode = std::fs::metadata(dir.path().join(folder)).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o700, "{folder}: {mode:o}");
    }
}
