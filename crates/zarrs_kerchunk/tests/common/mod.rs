//! Shared by the conformance tests: the case manifests in `tests/data`,
//! a `.npy` reader, and exact (NaN-aware) comparison of what zarrs decodes.
#![allow(dead_code)]

pub(crate) mod faults;
pub(crate) mod remote;
pub(crate) mod server;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde_json::Value;
use zarrs::array::{Array, ArrayBytes};
use zarrs::node::{Node, NodeMetadata};
use zarrs_kerchunk::{AsyncReferenceStore, ReferenceStore};

/// The workspace's root: the test fixtures (`tests/data`, `tests/peers`,
/// `tests/corrupt`, `fuzz/`) are shared by the crates' tests.
pub(crate) fn workspace_root() -> &'static Path {
    // Each crate is `crates/<name>`, whichever includes this module.
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().and_then(Path::parent).expect("crates/<name> in a workspace")
}

pub(crate) fn data_dir() -> PathBuf {
    workspace_root().join("tests/data")
}

/// One conformance case: a folder with `case.json`.
pub(crate) struct Case {
    pub(crate) name: String,
    pub(crate) dir: PathBuf,
    pub(crate) manifest: Value,
}

impl Case {
    pub(crate) fn all() -> Vec<Case> {
        let mut cases: Vec<Case> = std::fs::read_dir(data_dir())
            .unwrap()
            .filter_map(|entry| {
                let dir = entry.unwrap().path();
                let manifest = std::fs::read(dir.join("case.json")).ok()?;
                Some(Case {
                    name: dir.file_name().unwrap().to_string_lossy().into_owned(),
                    manifest: serde_json::from_slice(&manifest).unwrap(),
                    dir,
                })
            })
            .collect();
        cases.sort_by(|a, b| a.name.cmp(&b.name));
        assert!(cases.len() >= 12, "conformance cases missing from {}", data_dir().display());
        cases
    }

    /// The reference files of this case in the given formats.
    pub(crate) fn references(&self, json: bool) -> Vec<String> {
        self.manifest["references"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|r| (r["format"] == "kerchunk-parquet") != json)
            .map(|r| r["file"].as_str().unwrap().to_owned())
            .collect()
    }

    pub(crate) fn arrays(&self) -> &Vec<Value> {
        self.manifest["arrays"].as_array().unwrap()
    }

    /// Put every file of this case under `<case>/` in `store`.
    pub(crate) async fn upload_to(&self, store: &dyn object_store::ObjectStore) {
        use object_store::ObjectStoreExt;
        for path in files_under(&self.dir) {
            let name = format!("{}/{}", self.name, path.strip_prefix(&self.dir).unwrap().display());
            let bytes = object_store::PutPayload::from(std::fs::read(&path).unwrap());
            store.put(&name.as_str().into(), bytes).await.unwrap();
        }
    }

    /// A new in-memory store holding this case's files under `<case>/`.
    pub(crate) async fn in_memory(&self) -> Arc<dyn object_store::ObjectStore> {
        let memory = object_store::memory::InMemory::new();
        self.upload_to(&memory).await;
        Arc::new(memory)
    }
}

/// A copy of the folder of the case `name` in a new temporary folder, for a
/// test that changes its files; returns the temporary folder and the copy.
pub(crate) fn copy_case(name: &str) -> (tempfile::TempDir, PathBuf) {
    let case = Case::all().into_iter().find(|c| c.name == name).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join(name);
    for file in files_under(&case.dir) {
        let to = root.join(file.strip_prefix(&case.dir).unwrap());
        std::fs::create_dir_all(to.parent().unwrap()).unwrap();
        std::fs::copy(&file, &to).unwrap();
    }
    (dir, root)
}

/// A copy of `mzz_time_concat` whose `day2.nc` is gone and whose `day3.nc`
/// is cut to its first 64 bytes: what an audit must find.
pub(crate) fn copy_case_with_a_missing_and_a_short_target() -> (tempfile::TempDir, PathBuf) {
    let (dir, root) = copy_case("mzz_time_concat");
    std::fs::remove_file(root.join("day2.nc")).unwrap();
    let day3 = std::fs::read(root.join("day3.nc")).unwrap();
    std::fs::write(root.join("day3.nc"), &day3[..64]).unwrap();
    (dir, root)
}

/// Every file below `dir`, recursively.
pub(crate) fn files_under(dir: &Path) -> Vec<PathBuf> {
    std::fs::read_dir(dir)
        .unwrap()
        .flat_map(|e| {
            let path = e.unwrap().path();
            if path.is_dir() { files_under(&path) } else { vec![path] }
        })
        .collect()
}

/// A `.npy` file: dtype descr, shape, raw data.
pub(crate) struct Npy {
    pub(crate) descr: String,
    pub(crate) shape: Vec<u64>,
    pub(crate) data: Vec<u8>,
}

pub(crate) fn read_npy(path: &Path) -> Npy {
    let bytes = std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    assert_eq!(&bytes[..6], b"\x93NUMPY", "{}", path.display());
    let (header_len, header_start) = match bytes[6] {
        1 => (u16::from_le_bytes([bytes[8], bytes[9]]) as usize, 10),
        _ => (u32::from_le_bytes(bytes[8..12].try_into().unwrap()) as usize, 12),
    };
    let header = std::str::from_utf8(&bytes[header_start..header_start + header_len]).unwrap();
    let field = |name: &str| {
        let start = header.find(&format!("'{name}':")).unwrap() + name.len() + 3;
        header[start..].trim_start()
    };
    let descr = field("descr").trim_start_matches('\'').split('\'').next().unwrap().to_owned();
    assert!(field("fortran_order").starts_with("False"));
    let shape_text = field("shape");
    let shape = shape_text[1..shape_text.find(')').unwrap()]
        .split(',')
        .filter(|s| !s.trim().is_empty())
        .map(|s| s.trim().parse().unwrap())
        .collect();
    Npy { descr, shape, data: bytes[header_start + header_len..].to_vec() }
}

/// Compare what zarrs decoded for one array entry of a case with its `.npy`.
pub(crate) fn compare(case: &Case, entry: &Value, decoded: ArrayBytes<'_>) -> Result<(), String> {
    let dtype = entry["dtype"].as_str().unwrap();
    if dtype == "|O" {
        let expected: Vec<String> = serde_json::from_value(entry["expected_values_json"].clone()).unwrap();
        let ArrayBytes::Variable(v) = decoded else { return Err("expected variable-length bytes".into()) };
        let (bytes, offsets) = (v.bytes(), v.offsets());
        let got: Vec<String> =
            offsets.windows(2).map(|w| String::from_utf8_lossy(&bytes[w[0]..w[1]]).into_owned()).collect();
        return if got == expected { Ok(()) } else { Err(format!("strings {got:?} != {expected:?}")) };
    }
    let npy = read_npy(&case.dir.join(entry["expected"].as_str().unwrap()));
    let ArrayBytes::Fixed(got) = decoded else { return Err("expected fixed-length bytes".into()) };
    let shape: Vec<u64> = serde_json::from_value(entry["shape"].clone()).unwrap();
    if npy.shape != shape {
        return Err(format!("npy shape {:?} != array shape {shape:?}", npy.shape));
    }
    let kind = &dtype[1..2];
    let size: usize = dtype[2..].parse().unwrap();
    // zarrs decodes to native (little-endian) order; the .npy keeps the stored order.
    let (component, components) = if kind == "c" { (size / 2, 2) } else { (size, 1) };
    let mut expected = npy.data.clone();
    if dtype.starts_with('>') && component > 1 {
        expected.chunks_mut(component).for_each(<[u8]>::reverse);
    }
    if got.len() != expected.len() {
        return Err(format!("decoded {} bytes, expected {}", got.len(), expected.len()));
    }
    let same = |a: &[u8], b: &[u8]| match (kind, component) {
        ("f" | "c", 4) => {
            let (x, y) = (f32::from_le_bytes(a.try_into().unwrap()), f32::from_le_bytes(b.try_into().unwrap()));
            x.to_bits() == y.to_bits() || (x.is_nan() && y.is_nan())
        }
        ("f" | "c", 8) => {
            let (x, y) = (f64::from_le_bytes(a.try_into().unwrap()), f64::from_le_bytes(b.try_into().unwrap()));
            x.to_bits() == y.to_bits() || (x.is_nan() && y.is_nan())
        }
        _ => a == b,
    };
    let width = if matches!(kind, "f" | "c") { component } else { size };
    let _ = components;
    match got.chunks(width).zip(expected.chunks(width)).position(|(a, b)| !same(a, b)) {
        None => Ok(()),
        Some(i) => Err(format!(
            "element {} differs: {:?} != {:?}",
            i / (size / width),
            &got[i * width..][..width],
            &expected[i * width..][..width]
        )),
    }
}

/// The listing a case's manifest expects: groups, arrays, and each group's children.
pub(crate) fn expected_listing(case: &Case) -> (Vec<String>, Vec<String>, BTreeMap<String, Vec<String>>) {
    let listing = &case.manifest["store_listing"];
    let strings = |v: &Value| -> Vec<String> { serde_json::from_value(v.clone()).unwrap() };
    let children = listing["children"].as_object().unwrap().iter().map(|(k, v)| (k.clone(), strings(v))).collect();
    (strings(&listing["groups"]), strings(&listing["arrays"]), children)
}

/// The same three things, as zarrs sees the hierarchy.
pub(crate) fn listing_of(node: &Node) -> (Vec<String>, Vec<String>, BTreeMap<String, Vec<String>>) {
    fn walk(node: &Node, out: &mut (Vec<String>, Vec<String>, BTreeMap<String, Vec<String>>)) {
        let path = node.path().as_str().trim_start_matches('/').to_owned();
        match node.metadata() {
            NodeMetadata::Array(_) => out.1.push(path),
            NodeMetadata::Group(_) => {
                let mut children: Vec<String> =
                    node.children().iter().map(|c| c.path().as_str().trim_start_matches('/').to_owned()).collect();
                children.sort();
                out.2.insert(path.clone(), children);
                out.0.push(path);
                node.children().iter().for_each(|c| walk(c, out));
            }
        }
    }
    let mut out = Default::default();
    walk(node, &mut out);
    out.0.sort();
    out.1.sort();
    out
}

/// How the arrays of a case read through a store: the reads that failed with an error, and
/// those that gave wrong values (or a wrong listing). Kept apart so that a test of faults can
/// require "an error or the exact values" without telling them apart by their messages.
#[derive(Debug, Default)]
pub(crate) struct Reads {
    pub(crate) errors: Vec<String>,
    pub(crate) wrong: Vec<String>,
}

impl Reads {
    /// Every failure, errors first.
    pub(crate) fn failures(self) -> Vec<String> {
        self.errors.into_iter().chain(self.wrong).collect()
    }

    /// The hierarchy zarrs opened must list exactly what the case expects.
    fn listing(&mut self, case: &Case, node: Result<Node, zarrs::node::NodeCreateError>) {
        match node {
            Ok(node) if listing_of(&node) != expected_listing(case) => {
                self.wrong.push(format!("listing {:?} != {:?}", listing_of(&node), expected_listing(case)));
            }
            Ok(_) => {}
            Err(e) => self.errors.push(format!("hierarchy: {e}")),
        }
    }

    /// One array's read, compared with what the case expects. The corpus lets a reader refuse
    /// its `optional` arrays (bool, complex, fixed bytes, variable-length strings) with a clear
    /// error, but zarrs decodes all four kinds, so here a refusal is a failure like any other:
    /// accepting "some error" let a decode of the wrong length pass.
    fn array(&mut self, case: &Case, entry: &Value, path: &str, read: Result<ArrayBytes<'_>, String>) {
        match read.map(|bytes| compare(case, entry, bytes)) {
            Ok(Ok(())) => {}
            Ok(Err(wrong)) => self.wrong.push(format!("{path}: {wrong}")),
            Err(error) => self.errors.push(format!("{path}: {error}")),
        }
    }
}

/// Read every array of a case through a sync store; return the failures.
pub(crate) fn check_sync(case: &Case, store: &Arc<ReferenceStore>) -> Vec<String> {
    read_sync(case, store).failures()
}

/// Read every array of a case through a sync store: the errors and the wrong values apart.
pub(crate) fn read_sync(case: &Case, store: &Arc<ReferenceStore>) -> Reads {
    let mut reads = Reads::default();
    reads.listing(case, Node::open(store, "/"));
    for entry in case.arrays() {
        let path = format!("/{}", entry["path"].as_str().unwrap());
        let read = Array::open(store.clone(), &path)
            .map_err(|e| e.to_string())
            .and_then(|a| a.retrieve_array_subset::<ArrayBytes>(&a.subset_all()).map_err(|e| e.to_string()));
        reads.array(case, entry, &path, read);
    }
    eprintln!("{}: checked {} arrays (sync)", case.name, case.arrays().len());
    reads
}

/// Read every array of a case through an async store; return the failures.
pub(crate) async fn check_async(case: &Case, store: Arc<AsyncReferenceStore>) -> Vec<String> {
    read_async(case, store).await.failures()
}

/// Read every array of a case through an async store: the errors and the wrong values apart.
pub(crate) async fn read_async(case: &Case, store: Arc<AsyncReferenceStore>) -> Reads {
    let mut reads = Reads::default();
    reads.listing(case, Node::async_open(store.clone(), "/").await);
    for entry in case.arrays() {
        let path = format!("/{}", entry["path"].as_str().unwrap());
        let read = match Array::async_open(store.clone(), &path).await {
            Ok(a) => a.async_retrieve_array_subset::<ArrayBytes>(&a.subset_all()).await.map_err(|e| e.to_string()),
            Err(e) => Err(e.to_string()),
        };
        reads.array(case, entry, &path, read);
    }
    reads
}
