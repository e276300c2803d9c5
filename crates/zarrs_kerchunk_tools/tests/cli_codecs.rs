//! The command line on references whose codecs zarrs lacks: kerchunk's
//! references to `GeoTIFF` files (`tests/codecs/tiff`, made by its `make.py`), a
//! single-level TIFF's array at the root, read as rasterio reads the file;
//! and an array whose codec nothing decodes, refused naming both.
#![cfg(feature = "cli")]

mod cli_support;
#[path = "../../zarrs_kerchunk/tests/common/mod.rs"]
mod common;

use cli_support::{assert_one_line_error, native_values, run};

#[test]
fn cat_reads_a_root_array_of_every_tiff_codec_as_rasterio_does() {
    let folder = common::workspace_root().join("tests/codecs/tiff");
    let dir = tempfile::tempdir().unwrap();
    let mut checked = 0;
    for entry in std::fs::read_dir(&folder).unwrap() {
        let name = entry.unwrap().file_name().into_string().unwrap();
        let Some(case) = name.strip_suffix(".kerchunk.json") else { continue };
        let refs = folder.join(&name);
        let text = std::fs::read_to_string(&refs).unwrap();
        // Pixel-interleaved samples are (Y, X, S), where rasterio's truth is band first; lossy
        // codecs are compared within a tolerance by zarrs_kerchunk_codecs' tests.
        if text.contains(r#"\"S\""#) || case.starts_with("jpeg") || case.starts_with("webp") {
            continue;
        }
        let out = dir.path().join(format!("{case}.npy"));
        let (code, _, stderr) = run(&["cat", refs.to_str().unwrap(), "/", "--raw", "--npy", out.to_str().unwrap()]);
        assert_eq!(code, 0, "{case}: {stderr}");
        let (_, size, ours) = native_values(&out);
        let (_, their_size, theirs) = native_values(&folder.join(format!("{case}.npy")));
        assert_eq!((size, ours), (their_size, theirs), "{case}");
        checked += 1;
    }
    assert!(checked >= 16, "{checked}");
}

#[test]
fn an_array_whose_codec_nothing_decodes_is_refused_naming_both() {
    let dir = tempfile::tempdir().unwrap();
    let refs = dir.path().join("refs.json");
    let zarray = r#"{"shape":[2,3],"chunks":[2,3],"dtype":"|u1","fill_value":null,"order":"C","filters":null,"compressor":{"id":"imagecodecs_jpegxr"},"zarr_format":2}"#;
    let doc = serde_json::json!({"version": 1, "refs": {".zgroup": "{\"zarr_format\":2}", "t/.zarray": zarray, "t/0.0": "base64:AAAA"}});
    std::fs::write(&refs, doc.to_string()).unwrap();
    let (code, _, stderr) = run(&["cat", refs.to_str().unwrap(), "t"]);
    assert_one_line_error(code, &stderr);
    assert!(stderr.contains(r#"array "t": codec "imagecodecs_jpegxr" has no decoder"#), "{stderr}");
}

/// kerchunk's HDF5 strings by heap id (`tests/codecs/hdf_strings`, made with kerchunk 0.2.6 and
/// zarr-python 2): `cat` prints each as a JSON string, the strings zarr-python 2 read.
#[test]
fn cat_prints_hdf5_strings() {
    let folder = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/codecs/hdf_strings");
    let expected: serde_json::Value =
        serde_json::from_slice(&std::fs::read(folder.join("encode.expected.json")).unwrap()).unwrap();
    let refs = folder.join("encode.kerchunk.json");
    for (name, values) in expected.as_object().unwrap() {
        let (code, stdout, stderr) = run(&["cat", refs.to_str().unwrap(), name]);
        assert_eq!(code, 0, "{name}: {stderr}");
        let printed: Vec<String> = values.as_array().unwrap().iter().map(ToString::to_string).collect();
        assert_eq!(stdout.lines().nth(1), Some(printed.join(" ").as_str()), "{name}: {stdout}");
    }
}
