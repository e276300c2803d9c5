//! Reference sets written into icechunk repositories read back through `zarrs_icechunk` as they
//! read through the references; inline chunks are stored and empty ones refused; a pinned target
//! that changes fails its read in icechunk. (`tests/icechunk/check.py` reads such repositories
//! with icechunk-python against the conformance corpus's ground truth.)

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use icechunk::config::Credentials;
use icechunk::repository::VersionInfo;
use icechunk::{Repository, RepositoryConfig};
use kerchunk_icechunk::{ExportOptions, IcechunkLocation, export};
use zarrs::array::Array;
use zarrs_icechunk::AsyncIcechunkStore;
use zarrs_kerchunk::{AsyncReferenceStore, Pin, Pins, ReferenceStoreBuilder};

mod common;
use common::bytes_of;

fn data() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/data")
}

/// Every reference file of the conformance corpus: a name for it (`case-file`), its path, and
/// its case's manifest.
fn reference_files() -> Vec<(String, PathBuf, serde_json::Value)> {
    let mut files = Vec::new();
    for case in std::fs::read_dir(data()).unwrap().map(|e| e.unwrap().path()) {
        let Ok(manifest) = std::fs::read(case.join("case.json")) else { continue };
        let manifest: serde_json::Value = serde_json::from_slice(&manifest).unwrap();
        for reference in manifest["references"].as_array().unwrap() {
            let file = reference["file"].as_str().unwrap();
            let name = format!("{}-{file}", case.file_name().unwrap().to_string_lossy());
            files.push((name, case.join(file), manifest.clone()));
        }
    }
    files
}

/// The repository at `folder`, opened with every container it names authorised.
async fn reopened(folder: &Path) -> Repository {
    let storage = icechunk::new_local_filesystem_storage(folder).await.unwrap();
    let repository = Repository::open(Arc::clone(&storage)).execute().await.unwrap();
    let config: &RepositoryConfig = repository.config();
    let authorised: HashMap<String, Option<Credentials>> = config
        .virtual_chunk_containers
        .iter()
        .flatten()
        .map(|(prefix, _)| (prefix.clone(), Some(Credentials::LocalFileSystemAccess)))
        .collect();
    Repository::open(storage).authorize_virtual_chunk_access(authorised).execute().await.unwrap()
}

async fn icechunk_store(folder: &Path) -> Arc<AsyncIcechunkStore> {
    let repository = reopened(folder).await;
    let session = repository.readonly_session(&VersionInfo::BranchTipRef("main".into())).await.unwrap();
    Arc::new(AsyncIcechunkStore::new(session))
}

async fn export_to(references: &AsyncReferenceStore, folder: &Path) -> kerchunk_icechunk::Exported {
    export_with(references, folder, &ExportOptions::default()).await
}

async fn export_with(
    references: &AsyncReferenceStore,
    folder: &Path,
    options: &ExportOptions,
) -> kerchunk_icechunk::Exported {
    let location = IcechunkLocation::parse(&format!("icechunk://{}", folder.display())).unwrap();
    let repository = location.open_or_create().await.unwrap();
    export(references, &repository, &location.storage, options).await.unwrap()
}

/// Every array of every JSON and parquet reference file of the conformance corpus reads the same
/// bytes through zarrs from the repository as from the references (which the store's own
/// conformance tests hold to the corpus's ground truth).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_conformance_case_reads_back_the_same() {
    let _codecs = zarrs_kerchunk_codecs::register_codecs();
    let scratch = tempfile::tempdir().unwrap();
    let (mut checked, mut unread) = (0, Vec::new());
    for (name, file, manifest) in reference_files() {
        let references = Arc::new(AsyncReferenceStore::open(file.to_str().unwrap()).await.unwrap());
        let exported = export_to(&references, &scratch.path().join(&name)).await;
        let repository = icechunk_store(&scratch.path().join(&name)).await;
        assert_eq!(exported.arrays, manifest["arrays"].as_array().unwrap().len(), "{name}");
        for entry in manifest["arrays"].as_array().unwrap() {
            let path = format!("/{}", entry["path"].as_str().unwrap());
            let theirs = match Array::async_open(Arc::clone(&repository), &path).await {
                Ok(array) => array,
                // zarrs reads no `null_terminated_bytes` (numpy's `|S5`), which zarr-python
                // writes and reads (tests/icechunk/check.py reads it there).
                Err(e) if e.to_string().contains("null_terminated_bytes") => {
                    unread.push(format!("{name}{path}"));
                    continue;
                }
                Err(e) => panic!("{name}{path}: {e}"),
            };
            let ours = Array::async_open(Arc::clone(&references), &path).await.unwrap();
            assert!(bytes_of(&theirs).await == bytes_of(&ours).await, "{name}{path}: the bytes differ");
            checked += 1;
        }
    }
    assert!(checked >= 60, "{checked}");
    assert_eq!(unread, ["exotic_dtypes-refs.json/fixed_S5"]);
}

/// Every JSON and parquet reference file of the conformance corpus, exported with every chunk in
/// a manifest of its own, committed in parts of one chunk, and imported back: the same arrays, their `.zarray` the same but for the
/// documented changes (a `null` fill value written as NaN, false or 0; chunk keys with `.`;
/// numcodecs' defaults written out), and every array read through the imported references the
/// same bytes as through the originals.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_conformance_case_comes_back_as_references() {
    let _codecs = zarrs_kerchunk_codecs::register_codecs();
    let scratch = tempfile::tempdir().unwrap();
    let mut checked = 0;
    let one_a_manifest = ExportOptions::default().with_manifest_split(1).with_commit_every(Some(1));
    for (name, file, manifest) in reference_files() {
        let folder = scratch.path().join(&name);
        let references = Arc::new(AsyncReferenceStore::open(file.to_str().unwrap()).await.unwrap());
        export_with(&references, &folder, &one_a_manifest).await;
        let location = IcechunkLocation::parse(&format!("icechunk://{}", folder.display())).unwrap();
        let repository = location.open().await.unwrap();
        let version = kerchunk_icechunk::version_of(&repository, "main", &name).await.unwrap();
        let storage = location.storage_url().unwrap();
        let imported = kerchunk_icechunk::import(&repository, &version, &name, &storage).await.unwrap();
        let imported = Arc::new(ReferenceStoreBuilder::new().build_async(imported, &storage).unwrap());
        for entry in manifest["arrays"].as_array().unwrap() {
            let path = entry["path"].as_str().unwrap();
            let (before, after) = (zarray(&references, path).await, zarray(&imported, path).await);
            for field in ["shape", "dtype", "order"] {
                assert_eq!(before[field], after[field], "{name}/{path}: {field}");
            }
            let chunks = |v: &serde_json::Value| {
                let shape = v["shape"].as_array().unwrap().iter().map(|n| n.as_u64().unwrap());
                let chunks = v["chunks"].as_array().unwrap().iter().map(|n| n.as_u64().unwrap());
                shape.zip(chunks).map(|(n, c)| if n == 0 { 1 } else { c }).collect::<Vec<_>>()
            };
            assert_eq!(chunks(&before), chunks(&after), "{name}/{path}: chunks");
            if !before["fill_value"].is_null() {
                assert_eq!(before["fill_value"], after["fill_value"], "{name}/{path}: fill_value");
            }
            let path = format!("/{path}");
            let ours = Array::async_open(Arc::clone(&references), &path).await.unwrap();
            let theirs = Array::async_open(Arc::clone(&imported), &path).await;
            let theirs = theirs.unwrap_or_else(|e| panic!("{name}{path}: {e}"));
            assert!(bytes_of(&theirs).await == bytes_of(&ours).await, "{name}{path}: the bytes differ");
            checked += 1;
        }
    }
    assert!(checked >= 60, "{checked}");
}

/// The `.zarray` of the array at `path`, as the references hold it.
async fn zarray(store: &AsyncReferenceStore, path: &str) -> serde_json::Value {
    let key = format!("{path}/.zarray");
    let found = match store.source().lookup(&key).unwrap() {
        kerchunk::Lookup::Ready(found) => found,
        kerchunk::Lookup::Pending(pending) => pending.await.unwrap(),
    };
    let Some(kerchunk::OwnedReference::Inline(bytes)) = found else { panic!("{key} is not inline") };
    serde_json::from_slice(&bytes).unwrap()
}

/// `refs` written as a JSON version 1 file at `file`, and opened.
async fn opened(file: &Path, refs: &serde_json::Value) -> AsyncReferenceStore {
    std::fs::write(file, serde_json::json!({"version": 1, "refs": refs}).to_string()).unwrap();
    AsyncReferenceStore::open(file.to_str().unwrap()).await.unwrap()
}

/// The array at `path` of the repository at `folder`, read whole through `zarrs_icechunk`.
async fn read_u16(folder: &Path, path: &str) -> Vec<u16> {
    let array = Array::async_open(icechunk_store(folder).await, path).await.unwrap();
    array.async_retrieve_array_subset::<Vec<u16>>(&array.subset_all()).await.unwrap()
}

/// The messages of the commits on `main` of the repository at `folder`, newest first.
async fn history(folder: &Path) -> Vec<String> {
    use futures::TryStreamExt;
    let main = VersionInfo::BranchTipRef("main".into());
    let ancestry = reopened(folder).await.ancestry(&main).await.unwrap();
    ancestry.map_ok(|info| info.message).try_collect().await.unwrap()
}

/// `values` (24) written to `data.bin` in `folder`, and references to them as the chunks of a
/// 6 x 4 array `a` of one value a chunk: the target and the references.
fn six_by_four(folder: &Path, values: &[u16]) -> (PathBuf, serde_json::Value) {
    let target = folder.join("data.bin");
    std::fs::write(&target, values.iter().flat_map(|v| v.to_le_bytes()).collect::<Vec<u8>>()).unwrap();
    let mut refs = serde_json::json!({
        ".zgroup": "{\"zarr_format\": 2}",
        "a/.zarray": "{\"zarr_format\": 2, \"shape\": [6, 4], \"chunks\": [1, 1], \"dtype\": \"<u2\", \"compressor\": null, \"fill_value\": 0, \"order\": \"C\", \"filters\": null}",
    });
    for i in 0..24 {
        refs[format!("a/{}.{}", i / 4, i % 4)] = serde_json::json!([target.to_str().unwrap(), i * 2, 2]);
    }
    (target, refs)
}

/// An array of more chunks than the split is written in several manifests, along its outer axis,
/// which read back as the values of the target file; the split is not saved in the repository's
/// configuration, and a repository whose configuration splits manifests is split its way.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn big_arrays_are_split_into_several_manifests() {
    let scratch = tempfile::tempdir().unwrap();
    let values: Vec<u16> = (0..24).map(|i| i * 3 + 1).collect();
    let (target, mut refs) = six_by_four(scratch.path(), &values);
    refs["small/.zarray"] = serde_json::json!(
        "{\"zarr_format\": 2, \"shape\": [4], \"chunks\": [1], \"dtype\": \"<u2\", \"compressor\": null, \"fill_value\": 0, \"order\": \"C\", \"filters\": null}"
    );
    for i in 0..4 {
        refs[format!("small/{i}")] = serde_json::json!([target.to_str().unwrap(), i * 2, 2]);
    }
    let references = opened(&scratch.path().join("refs.json"), &refs).await;
    let manifests = |folder: &Path| std::fs::read_dir(folder.join("manifests")).unwrap().count();

    // Five chunks a manifest at most: `a` in six rows of four; `small` whole.
    let split = scratch.path().join("split");
    let exported = export_with(&references, &split, &ExportOptions::default().with_manifest_split(5)).await;
    assert_eq!(exported.virtual_chunks, 28);
    assert_eq!(manifests(&split), 7);
    assert_eq!(read_u16(&split, "/a").await, values);
    assert_eq!(read_u16(&split, "/small").await, values[..4]);
    assert!(reopened(&split).await.config().manifest.is_none(), "the split was saved");

    // The default split: one manifest an array.
    let whole = scratch.path().join("whole");
    export_to(&references, &whole).await;
    assert_eq!(manifests(&whole), 2);

    // A repository that says how to split manifests: every two chunks along each axis.
    let configured = scratch.path().join("configured");
    let storage = icechunk::new_local_filesystem_storage(&configured).await.unwrap();
    let splitting = icechunk::config::ManifestSplittingConfig::with_size(2);
    let manifest = icechunk::config::ManifestConfig { splitting: Some(splitting), ..Default::default() };
    let config = RepositoryConfig { manifest: Some(manifest), ..RepositoryConfig::default() };
    Repository::create(storage).config(config).execute().await.unwrap();
    export_with(&references, &configured, &ExportOptions::default().with_manifest_split(5)).await;
    // `a` in three by two parts, `small` in two.
    assert_eq!(manifests(&configured), 8);
}

/// Committed in parts: the values read back the same; the branch's history is the parts, the last
/// with the message; no working branch is left. An export that fails after some parts leaves the
/// branch where it was, and no working branch either.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn references_committed_in_parts_read_back_the_same() {
    let scratch = tempfile::tempdir().unwrap();
    let values: Vec<u16> = (0..24).map(|i| i * 5 + 2).collect();
    let (target, refs) = six_by_four(scratch.path(), &values);
    let file = scratch.path().join("refs.json");
    let references = opened(&file, &refs).await;
    // Parts of three chunks: the references are handed to icechunk an array's batch at a time, so
    // the first part holds all 24; what makes more parts is the inline chunks below.
    let folder = scratch.path().join("parts");
    let options = ExportOptions::default().with_message("in parts").with_commit_every(Some(3));
    let exported = export_with(&references, &folder, &options).await;
    assert_eq!(exported.virtual_chunks, 24);
    assert_eq!(read_u16(&folder, "/a").await, values);
    let messages = history(&folder).await;
    assert_eq!(messages[..2], ["in parts", "in parts (part 1)"], "{messages:?}");
    let branches = reopened(&folder).await.list_branches().await.unwrap();
    assert_eq!(branches.into_iter().collect::<Vec<_>>(), ["main"]);

    // Inline chunks count one each: parts of two, then an empty chunk, which fails the export.
    let mut inline = serde_json::json!({
        ".zgroup": "{\"zarr_format\": 2}",
        "b/.zarray": "{\"zarr_format\": 2, \"shape\": [8], \"chunks\": [1], \"dtype\": \"<u2\", \"compressor\": null, \"fill_value\": 0, \"order\": \"C\", \"filters\": null}",
    });
    for i in 0..7 {
        inline[format!("b/{i}")] =
            serde_json::json!(format!("base64:{}", ["AQA=", "AgA=", "AwA=", "BAA=", "BQA=", "BgA=", "BwA="][i]));
    }
    let references = opened(&file, &inline).await;
    let folder = scratch.path().join("inline");
    let options = ExportOptions::default().with_message("inline").with_commit_every(Some(2));
    let exported = export_with(&references, &folder, &options).await;
    assert_eq!(exported.inline_chunks, 7);
    let messages = history(&folder).await;
    assert_eq!(messages[..4], ["inline", "inline (part 3)", "inline (part 2)", "inline (part 1)"], "{messages:?}");
    assert_eq!(read_u16(&folder, "/b").await, [1, 2, 3, 4, 5, 6, 7, 0]);

    inline["b/7"] = serde_json::json!([target.to_str().unwrap(), 0, 0]);
    let references = opened(&file, &inline).await;
    let location = IcechunkLocation::parse(&format!("icechunk://{}", folder.display())).unwrap();
    let repository = location.open_or_create().await.unwrap();
    let before = repository.lookup_branch("main").await.unwrap();
    let error = export(&references, &repository, "inline", &options).await.unwrap_err().to_string();
    assert!(error.contains("\"b/7\"") && error.contains("empty chunk"), "{error}");
    let repository = reopened(&folder).await;
    assert_eq!(repository.lookup_branch("main").await.unwrap(), before);
    assert_eq!(repository.list_branches().await.unwrap().into_iter().collect::<Vec<_>>(), ["main"]);
}

/// Inline values become chunks in the repository; an empty chunk (`[url, 0, 0]`) is an error
/// naming its key: icechunk stores no chunk of no bytes, and a missing one would read as the fill
/// value.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn inline_chunks_are_stored_and_empty_ones_refused() {
    let scratch = tempfile::tempdir().unwrap();
    let target = scratch.path().join("data.bin");
    std::fs::write(&target, [1u8, 0, 2, 0, 3, 0, 4, 0]).unwrap();
    let mut refs = serde_json::json!({
        ".zgroup": "{\"zarr_format\": 2}",
        "a/.zarray": "{\"zarr_format\": 2, \"shape\": [6], \"chunks\": [2], \"dtype\": \"<u2\", \"compressor\": null, \"fill_value\": 9, \"order\": \"C\", \"filters\": null}",
        "a/0": [target.to_str().unwrap(), 0, 4],
        "a/2": "base64:BQAGAA==",
    });
    let file = scratch.path().join("refs.json");
    std::fs::write(&file, serde_json::json!({"version": 1, "refs": refs}).to_string()).unwrap();
    let references = AsyncReferenceStore::open(file.to_str().unwrap()).await.unwrap();
    let exported = export_to(&references, &scratch.path().join("repo")).await;
    assert_eq!((exported.virtual_chunks, exported.inline_chunks), (1, 1));
    let store = icechunk_store(&scratch.path().join("repo")).await;
    let array = Array::async_open(store, "/a").await.unwrap();
    let values = array.async_retrieve_array_subset::<Vec<u16>>(&array.subset_all()).await.unwrap();
    assert_eq!(values, [1, 2, 9, 9, 5, 6]);

    refs["a/1"] = serde_json::json!([target.to_str().unwrap(), 0, 0]);
    std::fs::write(&file, serde_json::json!({"version": 1, "refs": refs}).to_string()).unwrap();
    let references = AsyncReferenceStore::open(file.to_str().unwrap()).await.unwrap();
    let location = IcechunkLocation::parse(&format!("icechunk://{}", scratch.path().join("empty").display())).unwrap();
    let repository = location.open_or_create().await.unwrap();
    let error = export(&references, &repository, "empty", &ExportOptions::default()).await.unwrap_err().to_string();
    assert!(error.contains("\"a/1\"") && error.contains("empty chunk"), "{error}");
}

/// A target pinned when the references were exported, then changed, fails its read in icechunk
/// (its checksum), where an unpinned export reads the new bytes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pinned_target_that_changes_fails_in_icechunk() {
    let scratch = tempfile::tempdir().unwrap();
    let target = scratch.path().join("data.bin");
    std::fs::write(&target, [1u8, 0, 2, 0]).unwrap();
    let references = serde_json::json!({"version": 1, "refs": {
        ".zgroup": "{\"zarr_format\": 2}",
        "a/.zarray": "{\"zarr_format\": 2, \"shape\": [2], \"chunks\": [2], \"dtype\": \"<u2\", \"compressor\": null, \"fill_value\": 0, \"order\": \"C\", \"filters\": null}",
        "a/0": [target.to_str().unwrap()],
    }});
    let file = scratch.path().join("refs.json");
    std::fs::write(&file, references.to_string()).unwrap();
    let plain = AsyncReferenceStore::open(file.to_str().unwrap()).await.unwrap();
    let url = plain.target(Some(target.to_str().unwrap())).unwrap().url().to_owned();
    let observed: Pin = plain.target(Some(target.to_str().unwrap())).unwrap().observe().await.unwrap();
    let mut pins = Pins::default();
    pins.insert(url, observed);
    let pinned = ReferenceStoreBuilder::new().with_pins(pins).open_async(file.to_str().unwrap()).await.unwrap();
    export_to(&pinned, &scratch.path().join("pinned")).await;
    export_to(&plain, &scratch.path().join("plain")).await;
    let read = |folder: PathBuf| async move {
        let store = icechunk_store(&folder).await;
        let array = Array::async_open(store, "/a").await.unwrap();
        array.async_retrieve_array_subset::<Vec<u16>>(&array.subset_all()).await
    };
    assert_eq!(read(scratch.path().join("pinned")).await.unwrap(), [1, 2]);
    // The same size, other bytes, a later time.
    std::thread::sleep(std::time::Duration::from_millis(1100));
    std::fs::write(&target, [3u8, 0, 4, 0]).unwrap();
    let error = read(scratch.path().join("pinned")).await.unwrap_err().to_string();
    assert!(error.to_lowercase().contains("modified") || error.contains("checksum"), "{error}");
    assert_eq!(read(scratch.path().join("plain")).await.unwrap(), [3, 4]);
}

/// A Zarr v3 set of files of uneven length (`kerchunk_v3::set_v3`: a rectilinear grid along the
/// first axis, the first file's last chunk stored whole and cropped) is exported as it is, its
/// chunks virtual, and reads back through `zarrs_icechunk` as the files hold it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_uneven_v3_set_is_exported_as_it_is() {
    let _codecs = zarrs_kerchunk_codecs::register_codecs();
    let dir = tempfile::tempdir().unwrap();
    // Three stored chunks of 2 x 2: rows 0-1, row 2 and its padding (99), rows 3-4.
    let stored: Vec<u16> = vec![0, 1, 2, 3, 4, 5, 99, 99, 6, 7, 8, 9];
    std::fs::write(dir.path().join("data.bin"), stored.iter().flat_map(|v| v.to_le_bytes()).collect::<Vec<u8>>())
        .unwrap();
    let mut builder = kerchunk::ReferenceSetBuilder::new();
    builder.insert_inline(".zgroup", br#"{"zarr_format":2}"#);
    let zarray = r#"{"shape":[5,2],"chunks":[2,2],"dtype":"<u2","fill_value":0,"compressor":null,"filters":null,"order":"C","zarr_format":2}"#;
    builder.insert_inline("g/t/.zarray", zarray.as_bytes());
    builder.insert_inline("g/t/.zattrs", br#"{"_ARRAY_DIMENSIONS":["time","x"]}"#);
    for (chunk, key) in ["g/t/0.0", "g/t/1.0", "g/t/2.0"].iter().enumerate() {
        builder.insert_range(key, Some("data.bin"), 8 * chunk as u64, 8);
    }
    let uneven = kerchunk_v3::Uneven { axis: 0, edges: vec![2, 1, 2], stored: Some(2) };
    let set =
        kerchunk_v3::set_v3(&builder.build(), &std::collections::BTreeMap::from([("g/t".to_owned(), uneven)])).unwrap();
    let file = dir.path().join("uneven.json");
    set.write_json(std::fs::File::create(&file).unwrap(), &kerchunk::JsonWriteOptions::default()).unwrap();
    let references = AsyncReferenceStore::open(file.to_str().unwrap()).await.unwrap();
    let folder = dir.path().join("repo");
    let exported = export_to(&references, &folder).await;
    assert_eq!((exported.groups, exported.arrays, exported.virtual_chunks), (2, 1, 3));
    assert_eq!(read_u16(&folder, "/g/t").await, (0..10).collect::<Vec<u16>>());
    // Imported as references, its uneven chunks would have no v2 form a reader reads: refused.
    let location = IcechunkLocation::parse(&format!("icechunk://{}", folder.display())).unwrap();
    let repository = location.open().await.unwrap();
    let version = kerchunk_icechunk::version_of(&repository, "main", "uneven").await.unwrap();
    let storage = location.storage_url().unwrap();
    let error = kerchunk_icechunk::import(&repository, &version, "uneven", &storage).await.unwrap_err().to_string();
    assert!(error.contains("\"g/t\"") && error.contains("its chunks are uneven (a rectilinear grid)"), "{error}");
}
