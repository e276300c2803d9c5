//! The format crate's list of codecs nothing decodes (what a store without
//! a registry to ask refuses) agrees with zarrs (built with the codecs the
//! command line and the Python package build it with) and these codecs.

use kerchunk::zarr::metadata::UNDECODABLE_CODECS;
use zarrs_kerchunk_codecs::{IDS, is_decodable, register_codecs};

#[test]
fn the_format_crates_list_is_what_nothing_decodes() {
    let registration = register_codecs();
    for id in UNDECODABLE_CODECS {
        assert!(!is_decodable(id), "{id} is on the list, yet zarrs has a decoder for it");
    }
    for id in IDS {
        assert!(!UNDECODABLE_CODECS.contains(id), "{id} is decoded here, yet on the list");
    }
    // zarrs' own, as the workspace README's table of codecs says, and ids it says nothing decodes yet.
    for id in ["zlib", "gzip", "bz2", "zstd", "blosc", "shuffle", "fletcher32", "fixedscaleoffset"] {
        assert!(is_decodable(id), "{id}");
    }
    for id in ["imagecodecs_jpegxr", "FITSAscii"] {
        assert!(!is_decodable(id), "{id}");
    }
    assert!(!is_decodable("no_such_codec"));
    registration.unregister();
}
