//! Stats, audits, pins and URL rewrites (`zarrs_kerchunk_tools::inspect` and the
//! builder), checked against the conformance manifests, a local HTTP server
//! and targets changed on disk.

#[path = "../../zarrs_kerchunk/tests/common/mod.rs"]
mod common;

use std::path::Path;
use std::sync::Arc;

use common::{Case, check_sync, copy_case, copy_case_with_a_missing_and_a_short_target, server};
use zarrs::array::{Array, ArrayBytes};
use zarrs_kerchunk::{Pins, ReferenceStore, ReferenceStoreBuilder};
use zarrs_kerchunk_tools::inspect::{AuditOptions, TargetStatus, audit, pin, stats};

#[test]
fn stats_match_every_manifest_for_json_and_parquet() {
    let mut checked = 0;
    for case in Case::all() {
        let parquet = case.references(false);
        for file in case.references(true).into_iter().chain(parquet) {
            let store = ReferenceStore::open(case.dir.join(&file).to_str().unwrap()).unwrap();
            let stats = stats(&store).unwrap_or_else(|e| panic!("{}/{file}: {e}", case.name));
            for entry in case.arrays() {
                let path = entry["path"].as_str().unwrap();
                let what = format!("{}/{file}:{path}", case.name);
                let array = stats.arrays.iter().find(|a| a.path == path).unwrap_or_else(|| panic!("{what} missing"));
                assert_eq!(array.grid_chunks, entry["n_chunks_grid"].as_u64(), "{what}");
                assert_eq!(array.missing_chunks, entry["n_missing_chunks"].as_u64(), "{what}");
                assert_eq!(array.stray_keys, 0, "{what}");
                let kinds = &entry["chunk_ref_kinds"];
                let kind = |name: &str| kinds[name].as_u64().unwrap_or(0);
                assert_eq!(array.references.range, kind("url_range"), "{what}");
                assert_eq!(array.references.inline, kind("inline_base64") + kind("inline_text"), "{what}");
                assert_eq!(array.references.whole, 0, "{what}");
                let needed: u64 = array.targets.iter().map(|t| t.referenced_bytes).sum();
                assert_eq!(array.referenced_bytes, needed, "{what}");
                assert!(array.targets.iter().all(|t| t.references > 0 && t.needed_bytes > 0), "{what}");
                checked += 1;
            }
            assert_eq!(stats.memory_bytes.is_some(), store.references().is_some(), "{}/{file}", case.name);
            if let Some(set) = store.references() {
                assert_eq!(stats.references(), set.len() as u64, "{}/{file}", case.name);
            }
            // Every target is named by its resolved, absolute URL.
            for target in &stats.targets {
                assert!(target.url.starts_with("file:///"), "{}/{file}: {}", case.name, target.url);
            }
        }
    }
    assert!(checked > 50, "{checked}");
}

#[test]
fn stats_of_a_parquet_root_equal_those_of_its_json() {
    let dir = common::data_dir().join("parquet_fastparquet");
    let json = stats(&ReferenceStore::open(dir.join("refs.json").to_str().unwrap()).unwrap()).unwrap();
    let parquet = stats(&ReferenceStore::open(dir.join("refs.parq").to_str().unwrap()).unwrap()).unwrap();
    assert_eq!(json.arrays, parquet.arrays);
    assert_eq!(json.targets, parquet.targets);
    assert!(parquet.memory_bytes.is_none());
}

#[test]
fn an_audit_over_http_finds_the_missing_and_the_short_target() {
    let (_dir, root) = copy_case_with_a_missing_and_a_short_target();
    let base = server::serve_dir(root.clone());
    let store = ReferenceStore::open(&format!("{base}/refs.json")).unwrap();
    let checked = Arc::new(std::sync::atomic::AtomicU64::new(0));
    let seen = Arc::clone(&checked);
    let options = AuditOptions::default().with_progress(move |done, total| {
        assert!(done <= total);
        seen.store(done, std::sync::atomic::Ordering::Relaxed);
    });
    let audit = audit(&store, &options).unwrap();
    assert!(!audit.is_ok());
    assert_eq!(checked.load(std::sync::atomic::Ordering::Relaxed), audit.targets.len() as u64);
    let status = |name: &str| &audit.targets.iter().find(|t| t.url.ends_with(name)).unwrap().status;
    assert_eq!(status("/day2.nc"), &TargetStatus::Missing);
    assert!(
        matches!(status("/day3.nc"), TargetStatus::Short { size, needed } if *size == 64 && *needed > *size),
        "{:?}",
        status("/day3.nc")
    );
    assert_eq!(status("/day1.nc"), &TargetStatus::Ok);
    assert_eq!(status("/day4.nc"), &TargetStatus::Ok);
    let found = audit.targets.iter().find(|t| t.url.ends_with("/day1.nc")).unwrap().found.clone().unwrap();
    assert_eq!(found.size, std::fs::metadata(root.join("day1.nc")).unwrap().len());
    assert!(found.last_modified.is_some(), "ServeDir sends Last-Modified");
    let report = audit.to_string();
    assert!(report.contains("missing: ") && report.contains("short: ") && report.contains("2 ok"), "{report}");
    // The report serialises, with the verdict flattened beside the target.
    let json = serde_json::to_value(&audit).unwrap();
    assert!(json["targets"].as_array().unwrap().iter().any(|t| t["status"] == "missing"), "{json}");
}

/// Pin, rewrite one target in place (same size, other bytes, a later time),
/// and read: the read fails naming the key, the URL, the pin and what was found.
fn pinned_read_fails_after_a_rewrite(location: impl Fn(&Path) -> String) {
    let (_dir, root) = copy_case("hdf5_contiguous");
    let refs = location(&root);
    let (pins, first) = pin(&ReferenceStore::open(&refs).unwrap(), &AuditOptions::default()).unwrap();
    assert!(first.is_ok(), "{first}");
    assert_eq!(pins.len(), 1);
    let pins = Pins::from_json(&pins.to_json()).unwrap();
    let store = Arc::new(ReferenceStoreBuilder::new().with_pins(pins.clone()).open(&refs).unwrap());
    let case = Case::all().into_iter().find(|c| c.name == "hdf5_contiguous").unwrap();
    assert_eq!(check_sync(&case, &store), Vec::<String>::new(), "unchanged targets read as before");

    let data = root.join("data.h5");
    let inverted: Vec<u8> = std::fs::read(&data).unwrap().iter().map(|b| !b).collect();
    std::fs::write(&data, inverted).unwrap();
    let later = std::time::SystemTime::now() + std::time::Duration::from_secs(5);
    std::fs::File::options().write(true).open(&data).unwrap().set_modified(later).unwrap();

    let store = Arc::new(ReferenceStoreBuilder::new().with_pins(pins.clone()).open(&refs).unwrap());
    let path = format!("/{}", case.arrays()[0]["path"].as_str().unwrap());
    let array = Array::open(store.clone(), &path).unwrap();
    let err = array.retrieve_array_subset::<ArrayBytes>(&array.subset_all()).unwrap_err().to_string();
    let (url, pinned) = pins.iter().next().map(|(u, p)| (u.to_owned(), p.clone())).unwrap();
    for part in ["cannot read key", "data.h5", "changed since it was pinned", &pinned.to_string(), "found"] {
        assert!(err.contains(part), "{part:?} not in: {err}");
    }
    assert!(url.ends_with("/data.h5"), "{url}");
    // The audit with the same pins says so too.
    let again = audit(&store, &AuditOptions::default()).unwrap();
    assert!(matches!(again.targets[0].status, TargetStatus::Changed { .. }), "{again}");
    // Relaxed pins read the new bytes unchecked (here: wrong values, as the user chose).
    let mut relaxed = pins;
    relaxed.relax_under(&format!("{}/", url.rsplit_once('/').unwrap().0)).unwrap();
    let store = Arc::new(ReferenceStoreBuilder::new().with_pins(relaxed).open(&refs).unwrap());
    let array = Array::open(store, &path).unwrap();
    assert!(array.retrieve_array_subset::<ArrayBytes>(&array.subset_all()).is_ok());
}

#[test]
fn a_pinned_local_target_rewritten_in_place_is_an_error() {
    pinned_read_fails_after_a_rewrite(|root| root.join("refs.json").to_str().unwrap().to_owned());
}

#[test]
fn a_pinned_http_target_rewritten_in_place_is_an_error() {
    pinned_read_fails_after_a_rewrite(|root| format!("{}/refs.json", server::serve_dir(root.to_owned())));
}

#[test]
fn rewriting_onto_a_copied_folder_reads_exactly() {
    let (_dir, root) = copy_case("mzz_time_concat");
    let case = Case::all().into_iter().find(|c| c.name == "mzz_time_concat").unwrap();
    // The references point into `root`; the data moved to `moved`, and `root` keeps only the references.
    let moved = root.with_file_name("moved");
    std::fs::create_dir(&moved).unwrap();
    for day in ["day1.nc", "day2.nc", "day3.nc", "day4.nc"] {
        std::fs::rename(root.join(day), moved.join(day)).unwrap();
    }
    let refs = root.join("refs.json");
    let plain = Arc::new(ReferenceStore::open(refs.to_str().unwrap()).unwrap());
    assert!(!check_sync(&case, &plain).is_empty(), "without the rewrite the data is gone");
    let store = ReferenceStoreBuilder::new()
        .with_url_rewrite(format!("{}/", root.display()), format!("{}/", moved.display()))
        .open(refs.to_str().unwrap())
        .unwrap();
    assert_eq!(check_sync(&case, &Arc::new(store.clone())), Vec::<String>::new());
    let targets = stats(&store).unwrap().targets;
    let moved_url = url::Url::from_directory_path(&moved).unwrap();
    assert!(targets.iter().all(|t| t.url.starts_with(moved_url.as_str())), "{targets:?}");
    assert!(audit(&store, &AuditOptions::default()).unwrap().is_ok());
    // A folder maps to a folder.
    let err = ReferenceStoreBuilder::new().with_url_rewrite("s3://a/", "s3://b/file.nc").open(refs.to_str().unwrap());
    assert!(err.is_err());
}

/// Malformed references are counted by `stats` and named by `audit`, which
/// is then not ok; `pin` still pins the targets that are fine.
#[test]
fn stats_and_audit_count_malformed_references() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("data.bin"), [0u8; 100]).unwrap();
    let doc = r#"{".zgroup": {"zarr_format": 2},
        "x/.zarray": {"shape": [8], "chunks": [2], "dtype": "|u1", "compressor": null, "filters": null,
                      "fill_value": 0, "order": "C", "zarr_format": 2},
        "x/0": ["data.bin", 0, 2], "x/1": ["data.bin", 2], "x/2": ["data.bin", 18446744073709551615, 2],
        "stray": "base64:!!"}"#;
    let path = dir.path().join("refs.json");
    std::fs::write(&path, doc).unwrap();
    let store = ReferenceStore::open(path.to_str().unwrap()).unwrap();
    let stats = stats(&store).unwrap();
    assert_eq!(stats.malformed(), 3);
    assert_eq!(stats.arrays[0].references.malformed, 2);
    assert_eq!(stats.other.malformed, 1);
    assert!(stats.to_string().contains("3 malformed references"), "{stats}");
    let audit = audit(&store, &AuditOptions::default()).unwrap();
    assert!(!audit.is_ok());
    assert_eq!(audit.malformed_references, 3);
    let named: Vec<&str> = audit.malformed.iter().map(|m| m.key.as_str()).collect();
    assert_eq!(named, ["stray", "x/1", "x/2"]);
    let shown = audit.to_string();
    assert!(
        shown.contains("malformed: x/1: a reference array has 1 element") && shown.contains("overflows"),
        "{shown}"
    );
    assert_eq!(audit.problems().count(), 0, "data.bin itself is fine");
    let (pins, _) = pin(&store, &AuditOptions::default()).unwrap();
    assert_eq!(pins.len(), 1);
}
