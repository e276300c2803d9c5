//! Read-ahead: the store watches which chunks zarrs asks for, and while an
//! array is read in C order it reads the next chunks before they are asked for.
//!
//! zarrs' sync API asks for one chunk per rayon thread at a time, so over a
//! network each thread waits a round trip per chunk and the link idles. The
//! store sees the access pattern: a run of chunk reads at consecutive C-order
//! positions is a *stream*, and each read of a stream asks for the chunks
//! after it, in a few large coalesced reads that run in the background. The
//! window grows with the run: it holds as many chunks as the run has read
//! (at least a megabyte's worth), up to the memory budget. A run that stops
//! has so fetched at most as much again as it read, or a megabyte, that is
//! never asked for; since the run reads faster as the window grows, the
//! window still about doubles with every round trip. A read that continues
//! no stream starts a new one and reads nothing ahead, so random access costs
//! one hash lookup.
//!
//! A stream may only read ahead to the end of the block of the grid it has
//! been seen to cross: to the end of its row until it steps from one row into
//! the next, then to the end of its plane, and so on. A region read that
//! takes a few chunks of each row so wastes at most the rest of the window at
//! each row's end, never whole rows.
//!
//! A run never reads ahead into the chunks of a run that started further on
//! in the same array: rayon splits a read among threads, each taking a
//! stretch, and each stretch's chunks are read ahead by its own run, once.
//!
//! Only remote targets are read ahead (a local read is a positioned read on
//! the calling thread, which read-ahead would only add copies to), and only
//! chunks whose references are in memory. A failed read-ahead is forgotten:
//! the chunk is then read as if it had not been, and its error is reported then.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex, PoisonError};

use bytes::Bytes;
use futures::FutureExt;
use futures::channel::oneshot;
use futures::future::{BoxFuture, Shared};

use crate::fetch::{self, BatchOptions, Coalescing, FileRequests};
use kerchunk::zarr::grid::ChunkGrid;
use kerchunk::zarr::metadata;
use kerchunk::{Lookup, OwnedReference, ReferenceSource};

/// Streams followed at once; the least recently used one is dropped for a new one.
const MAX_STREAMS: usize = 8;
/// Folders whose `.zarray` was looked for, remembered (an array or not).
const MAX_FOLDERS: usize = 4096;
/// At most this many levels of groups above an array are searched for its `.zarray`.
const MAX_DEPTH: usize = 32;
/// Read-ahead reads are split into blocks of at most this size, read
/// concurrently: big enough for an object store's per-request latency, small
/// enough that the first chunks of a window arrive early and that several
/// connections share the receiving (on loopback nginx, 256 KiB to 8 MiB blocks
/// read 1 GiB within 10% of each other).
const BLOCK_BYTES: u64 = 4 << 20;
/// The window of a run that has read little: enough to hide a round trip
/// on a fast link from the start (a 4 KiB chunk's run reads 240 chunks
/// ahead), small enough that a short region wastes little (as fsspec's
/// read-ahead cache, whose blocks are 5 MB).
const MIN_WINDOW_BYTES: u64 = 1 << 20;
/// What holding one chunk costs besides its bytes (its key, its map entry,
/// its place in the batch), charged to the budget: a reference set of
/// one-byte chunks must not hold millions of entries under a 64 MiB budget.
const ENTRY_COST: u64 = 256;

/// What holding a chunk of `length` bytes is charged to the budget.
fn cost(length: u64) -> u64 {
    length.saturating_add(ENTRY_COST)
}

/// The chunks of one read-ahead, once read: per file, the value of each chunk (`None`: the read failed).
type Values = Arc<Vec<Option<Vec<Bytes>>>>;

/// A chunk read ahead: where its bytes will be, and what holding it costs.
struct Ahead {
    values: Shared<BoxFuture<'static, Option<Values>>>,
    file: usize,
    index: usize,
    cost: u64,
    stream: u64,
}

/// A chunk read ahead and taken by a read: its bytes, once they arrive.
pub(crate) struct Taken {
    values: Shared<BoxFuture<'static, Option<Values>>>,
    file: usize,
    index: usize,
}

impl Taken {
    /// The chunk's bytes, or `None` if the read-ahead failed (the caller reads it again).
    pub(crate) async fn bytes(self) -> Option<Bytes> {
        let values = self.values.await?;
        values.get(self.file)?.as_ref()?.get(self.index).cloned()
    }
}

/// A run of reads at consecutive C-order positions of one array.
struct Stream {
    id: u64,
    array: Arc<ArrayGrid>,
    /// The position of the stream's first read.
    start: u64,
    /// The position the stream's next read is expected at.
    next: u64,
    /// Positions below this have been read ahead (or read).
    ahead_until: u64,
    /// The number of trailing grid dimensions the stream was seen to cross
    /// a boundary of: it may read ahead to the end of that block.
    level: usize,
    /// When the stream was last read from (a counter of reads).
    used: u64,
}

/// An array's folder and grid.
struct ArrayGrid {
    /// The keys of its chunks start with this (`""` or `path/`).
    prefix: String,
    grid: ChunkGrid,
    /// `blocks[l]`: chunks in one block of the last `l + 1` dimensions.
    blocks: Vec<u64>,
}

impl ArrayGrid {
    fn new(folder: &str, grid: ChunkGrid) -> Self {
        let mut blocks = Vec::with_capacity(grid.dims().len());
        let mut size = 1u64;
        for &n in grid.dims().iter().rev() {
            size = size.saturating_mul(n);
            blocks.push(size);
        }
        let prefix = if folder.is_empty() { String::new() } else { format!("{folder}/") };
        Self { prefix, grid, blocks }
    }

    /// The end (exclusive) of the block at `level` that holds `position`.
    fn block_end(&self, level: usize, position: u64) -> u64 {
        match self.blocks.get(level) {
            Some(&block) if block > 0 => (position / block + 1).saturating_mul(block).min(self.grid.count()),
            _ => self.grid.count(),
        }
    }

    fn key(&self, position: u64) -> Option<String> {
        Some(format!("{}{}", self.prefix, self.grid.chunk_name(position)?))
    }
}

/// What a read-ahead must fetch: the reads to make, and the slots to fill with their result.
pub(crate) struct Issue {
    files: Vec<FileRequests>,
    options: BatchOptions,
    done: oneshot::Sender<Values>,
}

impl Issue {
    /// Make the reads, and hand their result to the chunks waiting for it.
    pub(crate) async fn run(self) {
        let fetched = fetch::read_batch(self.files, self.options).await;
        let values = fetched.into_iter().map(Result::ok).collect();
        // Nobody waits any more if every chunk was dropped: nothing to do.
        let _ = self.done.send(Arc::new(values));
    }
}

#[derive(Default)]
struct State {
    /// Folders looked at, with the array they hold (`None`: not an array).
    folders: HashMap<Box<str>, Option<Arc<ArrayGrid>>>,
    streams: Vec<Stream>,
    ahead: HashMap<Box<str>, Ahead>,
    /// The cost of the chunks read ahead and not taken.
    held: u64,
    /// The cost of the chunks chosen to be read ahead and not yet held:
    /// between the two, other threads choose too, and must see it spent.
    reserved: u64,
    /// The chunks chosen to be read ahead and not yet held: a run that
    /// chooses meanwhile (another thread's, started after this choice was
    /// made) must not choose them again.
    chosen: HashSet<Box<str>>,
    reads: u64,
    streams_started: u64,
}

/// The read-ahead of one store.
pub(crate) struct ReadAhead {
    /// The cost of the chunks read ahead and not yet taken, at most (their
    /// bytes and [`ENTRY_COST`] each); 0 turns read-ahead off.
    budget: u64,
    options: BatchOptions,
    state: Mutex<State>,
}

impl std::fmt::Debug for ReadAhead {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ReadAhead").field("budget", &self.budget).finish_non_exhaustive()
    }
}

/// Where the chunks of a read-ahead are: by key, the file and the index among its wanted ranges.
pub(crate) type Placed = Vec<(String, usize, usize, u64)>;

impl ReadAhead {
    pub(crate) fn new(budget: u64, batch: BatchOptions) -> Self {
        let coalescing = Coalescing { max_block: BLOCK_BYTES.min(batch.coalescing.max_block), ..batch.coalescing };
        Self { budget, options: BatchOptions { coalescing, ..batch }, state: Mutex::default() }
    }

    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The chunk `key` if it was read ahead; it is no longer held here.
    pub(crate) fn take(&self, key: &str) -> Option<Taken> {
        if self.budget == 0 {
            return None;
        }
        let mut state = self.state();
        let ahead = state.ahead.remove(key)?;
        state.held -= ahead.cost;
        Some(Taken { values: ahead.values, file: ahead.file, index: ahead.index })
    }

    /// Drop everything read ahead (the reads in flight finish, unread).
    pub(crate) fn clear(&self) {
        let mut state = self.state();
        // Chosen chunks stay chosen: their reservations give them back.
        state.ahead.clear();
        state.streams.clear();
        state.held = 0;
    }

    /// Record a whole read of `key` (a remote chunk of `length` bytes) and
    /// choose the chunks to read ahead of it, in C order.
    pub(crate) fn follow(&self, key: &str, length: u64, source: &dyn ReferenceSource) -> Option<Wanted<'_>> {
        if self.budget == 0 || metadata::is_metadata_key(key) {
            return None;
        }
        let mut state = self.state();
        let (array, position) = locate(&mut state, key, source)?;
        state.reads += 1;
        let (now, room) = (state.reads, self.budget.saturating_sub(state.held.saturating_add(state.reserved)));
        let Some(index) = state.streams.iter().position(|s| Arc::ptr_eq(&s.array, &array) && s.next == position) else {
            start_stream(&mut state, array, position, now);
            return None;
        };
        // Another run that started further on (another thread's share of
        // the same read, as rayon splits it) reads its chunks itself: this
        // run reads ahead only up to there.
        let next_run = state
            .streams
            .iter()
            .filter(|s| Arc::ptr_eq(&s.array, &array) && s.start > position)
            .map(|s| s.start)
            .min()
            .unwrap_or(u64::MAX);
        let stream = &mut state.streams[index];
        stream.used = now;
        stream.next = position + 1;
        while stream.level + 1 < stream.array.blocks.len() && position % stream.array.blocks[stream.level] == 0 {
            stream.level += 1;
        }
        // As many chunks as the run has read (this one included), at least
        // MIN_WINDOW_BYTES' worth, and never more than the budget's worth of
        // chunks like this one.
        let run = position + 1 - stream.start;
        let window = run.max(MIN_WINDOW_BYTES / cost(length)).clamp(2, (self.budget / cost(length)).max(2));
        let end = stream
            .array
            .block_end(stream.level, position)
            .min(position.saturating_add(1).saturating_add(window))
            .min(next_run);
        let from = stream.ahead_until.max(position + 1);
        // Not a chunk at a time: a read-ahead is worth its request once it is
        // at least a quarter of what will then be ahead. Estimated from this
        // chunk's length before any reference is looked up.
        let count = (end.saturating_sub(from)).min(room / cost(length));
        if count == 0 || count.saturating_mul(4) < from - position - 1 + count {
            return None;
        }
        let (id, array) = (stream.id, Arc::clone(&stream.array));
        let mut chunks = Vec::new();
        let (mut charged, mut until) = (0u64, from);
        for position in from..from + count {
            let Some(key) = array.key(position) else { break };
            let Ok(Lookup::Ready(Some(value))) = source.lookup(&key) else { break };
            let OwnedReference::Range { length, .. } = &value else { break };
            // Lengths come from the document: summed without overflow.
            let charged_with = charged.saturating_add(cost(*length));
            if charged_with > room {
                break;
            }
            charged = charged_with;
            until = position + 1;
            if !state.ahead.contains_key(key.as_str()) && !state.chosen.contains(key.as_str()) {
                chunks.push((key, value));
            }
        }
        if let Some(stream) = state.streams.iter_mut().find(|s| s.id == id) {
            stream.ahead_until = until;
        }
        if chunks.is_empty() {
            return None;
        }
        state.reserved += charged;
        let keys: Vec<Box<str>> = chunks.iter().map(|(key, _)| key.as_str().into()).collect();
        state.chosen.extend(keys.iter().cloned());
        Some(Wanted { reservation: Reservation { ahead: self, stream: id, cost: charged, keys }, chunks })
    }

    /// Hold the chunks of a read-ahead until they are taken; returns what to
    /// fetch for them. `placed` are some of the chunks `follow` chose.
    pub(crate) fn hold(
        &self,
        mut reservation: Reservation<'_>,
        placed: Placed,
        files: Vec<FileRequests>,
    ) -> Option<Issue> {
        let (done, arrived) = oneshot::channel::<Values>();
        let values = arrived.map(Result::ok).boxed().shared();
        let mut state = self.state();
        state.reserved -= std::mem::take(&mut reservation.cost);
        // Held below, or (not placed) read when asked for: chosen no longer.
        for key in std::mem::take(&mut reservation.keys) {
            state.chosen.remove(&key);
        }
        // The stream may have been dropped meanwhile: then nothing is held.
        let stream = reservation.stream;
        if placed.is_empty() || !state.streams.iter().any(|s| s.id == stream) {
            return None;
        }
        for (key, file, index, length) in placed {
            let ahead = Ahead { values: values.clone(), file, index, cost: cost(length), stream };
            // Within the reservation: a sum of costs that fits the budget.
            state.held = state.held.saturating_add(ahead.cost);
            if let Some(old) = state.ahead.insert(key.into(), ahead) {
                state.held -= old.cost;
            }
        }
        Some(Issue { files, options: self.options, done })
    }
}

/// Chunks a stream wants read ahead: their keys and references, in C order.
pub(crate) struct Wanted<'a> {
    pub(crate) reservation: Reservation<'a>,
    pub(crate) chunks: Vec<(String, OwnedReference)>,
}

/// The part of the budget set aside for a read-ahead until it is held
/// ([`ReadAhead::hold`]); given back if it never is.
pub(crate) struct Reservation<'a> {
    ahead: &'a ReadAhead,
    stream: u64,
    cost: u64,
    /// The chunks chosen, kept from other runs' choices until held.
    keys: Vec<Box<str>>,
}

impl Drop for Reservation<'_> {
    fn drop(&mut self) {
        if self.cost > 0 || !self.keys.is_empty() {
            let mut state = self.ahead.state();
            state.reserved -= self.cost;
            for key in &self.keys {
                state.chosen.remove(key);
            }
        }
    }
}

/// A new stream at `position`, in place of the least recently used one,
/// whose chunks read ahead are dropped.
fn start_stream(state: &mut State, array: Arc<ArrayGrid>, position: u64, now: u64) {
    state.streams_started += 1;
    let stream = Stream {
        id: state.streams_started,
        array,
        start: position,
        next: position + 1,
        ahead_until: position + 1,
        level: 0,
        used: now,
    };
    if state.streams.len() < MAX_STREAMS {
        state.streams.push(stream);
        return;
    }
    let oldest = (0..state.streams.len()).min_by_key(|&i| state.streams[i].used).unwrap_or(0);
    let dropped = std::mem::replace(&mut state.streams[oldest], stream).id;
    let State { ahead, held, .. } = state;
    ahead.retain(|_, a| {
        let keep = a.stream != dropped;
        if !keep {
            *held -= a.cost;
        }
        keep
    });
}

/// The array holding the chunk `key`, and the chunk's C-order position in it.
fn locate(state: &mut State, key: &str, source: &dyn ReferenceSource) -> Option<(Arc<ArrayGrid>, u64)> {
    // Folders from the root down: the first that holds an array is the
    // chunk's (an array holds no other nodes).
    let ends = std::iter::once(0).chain(key.match_indices('/').map(|(i, _)| i)).take(MAX_DEPTH);
    for end in ends {
        let folder = &key[..end];
        let array = if let Some(array) = state.folders.get(folder) {
            array.clone()
        } else {
            let array = array_at(folder, source).map(Arc::new);
            if state.folders.len() >= MAX_FOLDERS {
                state.folders.clear();
            }
            state.folders.insert(folder.into(), array.clone());
            array
        };
        if let Some(array) = array {
            let chunk = key.strip_prefix(array.prefix.as_str())?;
            return Some((Arc::clone(&array), array.grid.position(chunk, false)?));
        }
    }
    None
}

/// The grid of the array in `folder`, if the source knows it without a read and it is valid.
fn array_at(folder: &str, source: &dyn ReferenceSource) -> Option<ArrayGrid> {
    Some(ArrayGrid::new(folder, source.chunk_grid(folder)?.ok()?))
}

#[cfg(test)]
mod tests {
    use super::*;
    use kerchunk::ParseOptions;
    use kerchunk::ReferenceSet;

    /// 256 KiB: a run's smallest window (`MIN_WINDOW_BYTES`) is three of these.
    const CHUNK: u64 = 1 << 18;

    /// An array `a` of `rows` x `cols` chunks of `CHUNK` bytes each, in one remote file, and a group above it.
    fn references(rows: u64, cols: u64) -> ReferenceSet {
        let mut refs = serde_json::Map::new();
        refs.insert(".zgroup".into(), r#"{"zarr_format":2}"#.into());
        let zarray = format!(
            r#"{{"zarr_format":2,"shape":[{},{}],"chunks":[10,10],"dtype":"<f8","compressor":null,"filters":null,"fill_value":0,"order":"C"}}"#,
            rows * 10,
            cols * 10
        );
        refs.insert("g/a/.zarray".into(), zarray.into());
        for r in 0..rows {
            for c in 0..cols {
                let offset = (r * cols + c) * CHUNK;
                refs.insert(format!("g/a/{r}.{c}"), serde_json::json!(["https://host/a.bin", offset, CHUNK]));
            }
        }
        let document = serde_json::json!({"version": 1, "refs": refs}).to_string();
        ReferenceSet::from_json(document.as_bytes(), &ParseOptions::default()).unwrap()
    }

    /// Read `chunks` in order, as whole reads, taking what was read ahead;
    /// returns the positions read ahead after each read.
    fn read(ahead: &ReadAhead, set: &ReferenceSet, cols: u64, chunks: &[(u64, u64)]) -> Vec<Vec<u64>> {
        chunks
            .iter()
            .map(|&(r, c)| {
                let key = format!("g/a/{r}.{c}");
                drop(ahead.take(&key));
                let Some(wanted) = ahead.follow(&key, CHUNK, set) else { return Vec::new() };
                let positions = wanted
                    .chunks
                    .iter()
                    .map(|(key, _)| {
                        let (r, c) = key.trim_start_matches("g/a/").split_once('.').unwrap();
                        r.parse::<u64>().unwrap() * cols + c.parse::<u64>().unwrap()
                    })
                    .collect();
                let placed = wanted.chunks.iter().enumerate().map(|(i, (key, _))| (key.clone(), 0, i, CHUNK)).collect();
                drop(ahead.hold(wanted.reservation, placed, Vec::new()));
                positions
            })
            .collect()
    }

    #[test]
    fn sequential_reads_read_further_and_further_ahead() {
        let set = references(1, 100);
        let ahead = ReadAhead::new(64 * CHUNK, BatchOptions::default());
        let row: Vec<_> = (0..20).map(|c| (0, c)).collect();
        let got = read(&ahead, &set, 100, &row);
        assert!(got[0].is_empty(), "one read is no run yet");
        assert_eq!(got[1], [2, 3, 4], "a run of two reads a megabyte's worth ahead");
        // The window is three (the run's length): one chunk is missing from
        // it, and one is worth a request: at least a quarter of the three then ahead.
        assert_eq!(got[2], [5]);
        for (position, ahead_of_it) in got.iter().enumerate() {
            let window = (position as u64 + 1).max(3);
            assert!(ahead_of_it.iter().all(|&p| p <= position as u64 + window), "{position}: {ahead_of_it:?}");
        }
        let mut all: Vec<u64> = got.concat();
        let n = all.len();
        all.dedup();
        assert_eq!(all.len(), n, "no chunk is read ahead twice");
        assert!(all.windows(2).all(|w| w[1] == w[0] + 1), "in C order: {all:?}");
        // After 20 reads the window is 20: read ahead to within a quarter of it.
        assert!(all.last().is_some_and(|&last| last >= 35), "the window grew: {all:?}");
        assert!(ahead.state().held <= 64 * CHUNK);
    }

    #[test]
    fn a_run_that_stops_has_read_ahead_at_most_as_much_as_it_read_or_a_megabyte() {
        let set = references(1, 1000);
        for k in 1..200 {
            let ahead = ReadAhead::new(1000 * CHUNK, BatchOptions::default());
            let region: Vec<_> = (0..k).map(|c| (0, c)).collect();
            let wasted = read(&ahead, &set, 1000, &region).concat().iter().filter(|&&p| p >= k).count() as u64;
            assert!(wasted <= k.max(MIN_WINDOW_BYTES / cost(CHUNK)), "{k} read, {wasted} wasted");
        }
    }

    #[test]
    fn random_reads_read_nothing_ahead() {
        let set = references(10, 10);
        let ahead = ReadAhead::new(64 * CHUNK, BatchOptions::default());
        let scattered = [(3, 1), (7, 7), (0, 4), (5, 0), (9, 9), (2, 2), (3, 3), (8, 1), (1, 6), (4, 4)];
        assert!(read(&ahead, &set, 10, &scattered).iter().all(Vec::is_empty));
    }

    #[test]
    fn a_run_reads_past_its_row_only_once_it_has_crossed_a_row() {
        let set = references(10, 10);
        let ahead = ReadAhead::new(1000 * CHUNK, BatchOptions::default());
        // A region of whole rows: the first row's read-ahead stops at its end.
        let rows: Vec<_> = (0..3).flat_map(|r| (0..10).map(move |c| (r, c))).collect();
        let got = read(&ahead, &set, 10, &rows);
        assert!(got[..10].concat().iter().all(|&p| p < 10), "{got:?}");
        assert!(got[10..].concat().iter().any(|&p| p >= 20), "once across a row, across rows: {got:?}");
        // A region of four chunks a row: each row is a run of four, which
        // reads ahead three, then one, then two chunks: four past the region,
        // as many as it read, never the rest of its row or the next rows.
        let set = references(10, 100);
        let ahead = ReadAhead::new(1000 * CHUNK, BatchOptions::default());
        let narrow: Vec<_> = (0..5).flat_map(|r| (0..4).map(move |c| (r, c))).collect();
        let got = read(&ahead, &set, 100, &narrow).concat();
        assert_eq!(got.len(), 5 * (3 + 1 + 2), "{got:?}");
        assert!(got.iter().all(|&p| p % 100 < 8 && p / 100 < 5), "{got:?}");
    }

    #[test]
    fn a_run_stops_reading_ahead_where_a_later_run_started() {
        let set = references(1, 1000);
        let ahead = ReadAhead::new(1000 * CHUNK, BatchOptions::default());
        // Two threads, each reading its half, as rayon splits a read: interleaved.
        let both: Vec<_> = (0..200).flat_map(|c| [(0, c), (0, 500 + c)]).collect();
        let got = read(&ahead, &set, 1000, &both).concat();
        assert!(got.iter().any(|&p| p < 500) && got.iter().any(|&p| p > 500), "{got:?}");
        assert!(!got.contains(&500), "the first run never reads the second's chunks");
        let mut sorted = got.clone();
        sorted.sort_unstable();
        sorted.dedup();
        assert_eq!(sorted.len(), got.len(), "no chunk read ahead twice");
    }

    #[test]
    fn the_budget_bounds_what_is_held_and_taking_frees_it() {
        let set = references(1, 1000);
        let ahead = ReadAhead::new(10 * CHUNK, BatchOptions::default());
        let row: Vec<_> = (0..200).map(|c| (0, c)).collect();
        // Each step checks the bound, not only the end.
        for step in row.chunks(1) {
            read(&ahead, &set, 1000, step);
            assert!(ahead.state().held <= 10 * CHUNK);
        }
        assert!(ahead.state().held > 0, "still reading ahead at the end of the run");
        ahead.clear();
        assert_eq!(ahead.state().held, 0);
        assert!(ahead.state().ahead.is_empty());
    }

    #[test]
    fn runs_choosing_at_once_share_the_budget_before_either_holds() {
        // Two threads each follow a run, and plan their reads outside the
        // lock: the second must not choose from room the first has chosen.
        // Each run of two alone would read three chunks ahead (a megabyte).
        let set = references(1, 1000);
        let budget = 4 * cost(CHUNK);
        let ahead = ReadAhead::new(budget, BatchOptions::default());
        drop(ahead.follow("g/a/0.0", CHUNK, &set));
        drop(ahead.follow("g/a/0.500", CHUNK, &set));
        let (first, second) = (
            ahead.follow("g/a/0.1", CHUNK, &set).expect("the first run reads ahead"),
            ahead.follow("g/a/0.501", CHUNK, &set),
        );
        assert_eq!(first.chunks.len(), 3);
        let chosen = |wanted: &Wanted<'_>| wanted.chunks.len() as u64 * cost(CHUNK);
        let reserved = chosen(&first) + second.as_ref().map_or(0, chosen);
        assert!(reserved <= budget, "{reserved} chosen for a budget of {budget}");
        assert_eq!(ahead.state().reserved, reserved);
        for wanted in [Some(first), second].into_iter().flatten() {
            let placed = wanted.chunks.iter().enumerate().map(|(i, (key, _))| (key.clone(), 0, i, CHUNK)).collect();
            drop(ahead.hold(wanted.reservation, placed, Vec::new()));
        }
        let state = ahead.state();
        assert!(state.held <= budget && state.reserved == 0, "{} held", state.held);
        drop(state);
        // A reservation dropped unheld (its reads could not be planned) is given back.
        let ahead = ReadAhead::new(budget, BatchOptions::default());
        drop(ahead.follow("g/a/0.0", CHUNK, &set));
        let wanted = ahead.follow("g/a/0.1", CHUNK, &set).expect("a run of two reads ahead");
        assert!(ahead.state().reserved > 0 && !ahead.state().chosen.is_empty());
        drop(wanted);
        assert_eq!(ahead.state().reserved, 0);
        assert!(ahead.state().chosen.is_empty());
    }

    #[test]
    fn a_run_started_while_another_holds_no_choice_yet_does_not_choose_the_same_chunks() {
        // Thread A's run chooses the rest of the row before thread B's run
        // (rayon's second half) has started; B starts and continues before
        // A's choice is held. B must not read A's chunks again (found in CI:
        // half an array read twice).
        let set = references(1, 40);
        let ahead = ReadAhead::new(u64::MAX / 4, BatchOptions::default());
        drop(ahead.follow("g/a/0.0", 100, &set));
        let first = ahead.follow("g/a/0.1", 100, &set).expect("A reads ahead");
        assert_eq!(first.chunks.len(), 38, "A chooses the rest of the row");
        drop(ahead.follow("g/a/0.20", 100, &set));
        let second = ahead.follow("g/a/0.21", 100, &set);
        assert!(second.is_none(), "B chose {:?}", second.map(|w| w.chunks.len()));
        // Once A's choice is held, or given back unheld, its chunks may be chosen again.
        let placed = first.chunks.iter().enumerate().map(|(i, (key, _))| (key.clone(), 0, i, 100)).collect();
        drop(ahead.hold(first.reservation, placed, Vec::new()));
        assert!(ahead.state().chosen.is_empty());
    }

    /// A set whose chunks `a/0` .. `a/n-1` have the lengths `length(i)`.
    fn one_dimensional(n: u64, length: impl Fn(u64) -> u64) -> ReferenceSet {
        let mut refs = serde_json::Map::new();
        let zarray = format!(
            r#"{{"zarr_format":2,"shape":[{n}],"chunks":[1],"dtype":"|u1","compressor":null,"filters":null,"fill_value":0,"order":"C"}}"#
        );
        refs.insert("a/.zarray".into(), zarray.into());
        for i in 0..n {
            refs.insert(format!("a/{i}"), serde_json::json!(["https://host/a.bin", i, length(i)]));
        }
        let document = serde_json::json!({"version": 1, "refs": refs}).to_string();
        ReferenceSet::from_json(document.as_bytes(), &ParseOptions::default()).unwrap()
    }

    #[test]
    fn tiny_chunks_are_charged_for_their_entries_and_huge_ones_do_not_overflow() {
        // One-byte chunks: the budget bounds the entries held, not only their bytes.
        let set = one_dimensional(20_000, |_| 1);
        let budget = 64 * ENTRY_COST;
        let ahead = ReadAhead::new(budget, BatchOptions::default());
        for i in 0..5000 {
            let key = format!("a/{i}");
            drop(ahead.take(&key));
            if let Some(wanted) = ahead.follow(&key, 1, &set) {
                let placed = wanted.chunks.iter().enumerate().map(|(j, (key, _))| (key.clone(), 0, j, 1)).collect();
                drop(ahead.hold(wanted.reservation, placed, Vec::new()));
            }
            let state = ahead.state();
            assert!(state.held <= budget && state.ahead.len() <= 64, "{} entries held", state.ahead.len());
        }
        // Lengths near u64::MAX (as a document may write them) neither overflow nor are read ahead.
        let set = one_dimensional(10, |i| if i == 0 { 1 } else { u64::MAX - i });
        let ahead = ReadAhead::new(u64::MAX, BatchOptions::default());
        for i in 0..10 {
            let key = format!("a/{i}");
            let length = if i == 0 { 1 } else { u64::MAX - i };
            if let Some(wanted) = ahead.follow(&key, length, &set) {
                let placed = wanted.chunks.iter().enumerate().map(|(j, (key, _))| (key.clone(), 0, j, 1)).collect();
                drop(ahead.hold(wanted.reservation, placed, Vec::new()));
            }
        }
    }

    #[test]
    fn abandoned_runs_release_their_chunks() {
        let set = references(20, 100);
        let ahead = ReadAhead::new(100 * CHUNK, BatchOptions::default());
        read(&ahead, &set, 100, &[(0, 0), (0, 1), (0, 2), (0, 3)]);
        let held = ahead.state().held;
        assert!(held > 0);
        // Eight new runs (reads that continue none) push the first out.
        let scattered: Vec<_> = (1..=8).map(|r| (r * 2, 50)).collect();
        read(&ahead, &set, 100, &scattered);
        assert_eq!(ahead.state().held, 0, "the first run's chunks were dropped");
        assert!(ahead.state().ahead.is_empty());
    }

    #[test]
    fn off_when_the_budget_is_zero_and_for_metadata_and_unknown_keys() {
        let set = references(1, 100);
        let off = ReadAhead::new(0, BatchOptions::default());
        let row: Vec<_> = (0..10).map(|c| (0, c)).collect();
        assert!(read(&off, &set, 100, &row).iter().all(Vec::is_empty));
        let on = ReadAhead::new(64 * CHUNK, BatchOptions::default());
        for key in ["g/a/.zarray", ".zgroup", "g/nothing/0.0", "g/a/0.500", "g/a/x.y", "g/a/0.0.0"] {
            for _ in 0..3 {
                assert!(on.follow(key, CHUNK, &set).is_none(), "{key}");
            }
        }
    }

    #[test]
    fn taken_chunks_are_handed_their_bytes_or_none_if_the_read_failed() {
        let set = references(1, 100);
        let ahead = ReadAhead::new(64 * CHUNK, BatchOptions::default());
        drop(ahead.follow("g/a/0.0", CHUNK, &set));
        let wanted = ahead.follow("g/a/0.1", CHUNK, &set).unwrap();
        let placed = vec![("g/a/0.2".to_owned(), 0, 0, CHUNK), ("g/a/0.3".to_owned(), 1, 0, CHUNK)];
        let issue = ahead.hold(wanted.reservation, placed, Vec::new()).unwrap();
        let (two, three) = (ahead.take("g/a/0.2").unwrap(), ahead.take("g/a/0.3").unwrap());
        assert!(ahead.take("g/a/0.2").is_none(), "taken once");
        let values: Values = Arc::new(vec![Some(vec![Bytes::from_static(b"two")]), None]);
        issue.done.send(values).unwrap();
        assert_eq!(futures::executor::block_on(two.bytes()).as_deref(), Some(&b"two"[..]));
        assert_eq!(futures::executor::block_on(three.bytes()), None);
        // A read-ahead whose reads were dropped hands nothing either.
        let wanted = ahead.follow("g/a/0.2", CHUNK, &set).unwrap();
        let issue = ahead.hold(wanted.reservation, vec![("g/a/0.9".to_owned(), 0, 0, CHUNK)], Vec::new()).unwrap();
        drop(issue);
        assert_eq!(futures::executor::block_on(ahead.take("g/a/0.9").unwrap().bytes()), None);
    }
}
