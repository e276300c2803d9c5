//! Where an HDF5 dataset's bytes are: its layout message, its chunk index
//! (every kind HDF5 writes), and its filter pipeline as zarr v2 filters.

use hdf5_reader::chunk_index::{self, ChunkEntry};
use hdf5_reader::messages::HdfMessage;
use hdf5_reader::messages::filter_pipeline::FilterDescription;
use hdf5_reader::messages::layout::{ChunkIndexing, DataLayout};
use hdf5_reader::{Hdf5File, btree_v1, extensible_array, fixed_array};

/// What an object header says about a dataset's storage.
pub(crate) struct Storage {
    pub(crate) layout: DataLayout,
    pub(crate) filters: Vec<FilterDescription>,
    /// The raw data is in other files (an External Files message).
    pub(crate) external: bool,
    /// The dataspace is null (no elements, not even a shape).
    pub(crate) null_dataspace: bool,
    /// The fill value message's value, if it defines one.
    pub(crate) fill: Option<Vec<u8>>,
}

/// The storage messages of the object at `address`.
pub(crate) fn storage(file: &Hdf5File, address: u64) -> Result<Storage, String> {
    let header = file.get_or_parse_header(address).map_err(|e| e.to_string())?;
    let mut found = Storage {
        layout: DataLayout::Compact { data: Vec::new() },
        filters: Vec::new(),
        external: false,
        null_dataspace: false,
        fill: None,
    };
    let mut has_layout = false;
    for message in &header.messages {
        match message {
            HdfMessage::DataLayout(message) => {
                found.layout = message.layout.clone();
                has_layout = true;
            }
            HdfMessage::FilterPipeline(pipeline) => found.filters.clone_from(&pipeline.filters),
            HdfMessage::ExternalFiles(_) => found.external = true,
            HdfMessage::Dataspace(space) => {
                found.null_dataspace = space.dataspace_type == hdf5_reader::messages::dataspace::DataspaceType::Null;
            }
            HdfMessage::FillValue(message) if message.defined => found.fill.clone_from(&message.value),
            _ => {}
        }
    }
    if !has_layout {
        return Err("the dataset has no layout message".to_owned());
    }
    Ok(found)
}

/// Every allocated chunk of a chunked dataset whose index is at `address`,
/// with addresses relative to the superblock, as the index lists them.
pub(crate) fn chunk_entries(
    file: &Hdf5File,
    address: u64,
    indexing: Option<&ChunkIndexing>,
    shape: &[u64],
    max_dims: Option<&[u64]>,
    chunk: &[u32],
    itemsize: usize,
) -> hdf5_reader::error::Result<Vec<ChunkEntry>> {
    let storage = file.storage();
    let (offset_size, length_size) = (file.superblock().offset_size, file.superblock().length_size);
    let ndim = shape.len();
    match indexing {
        None => {
            let rank = u32::try_from(ndim).unwrap_or(u32::MAX);
            let leaves = btree_v1::collect_btree_v1_leaves_storage(
                storage,
                address,
                offset_size,
                length_size,
                Some(rank),
                chunk,
                None,
            )?;
            leaves
                .into_iter()
                .map(|(key, address)| match key {
                    btree_v1::BTreeV1Key::RawData { chunk_size, filter_mask, offsets } => Ok(ChunkEntry {
                        address,
                        size: u64::from(chunk_size),
                        filter_mask,
                        offsets: offsets.get(..ndim).map(<[u64]>::to_vec).unwrap_or_default(),
                    }),
                    btree_v1::BTreeV1Key::Group { .. } => Err(hdf5_reader::error::Error::InvalidData(
                        "a chunk B-tree holds a key that is not a chunk's".into(),
                    )),
                })
                .collect()
        }
        Some(ChunkIndexing::SingleChunk { filtered_size, filters }) => {
            Ok(vec![chunk_index::single_chunk_entry(address, *filtered_size, *filters, ndim)])
        }
        Some(ChunkIndexing::BTreeV2) => chunk_index::collect_v2_chunk_entries_storage(
            storage,
            address,
            offset_size,
            length_size,
            u32::try_from(ndim).unwrap_or(u32::MAX),
            chunk,
            None,
        ),
        Some(ChunkIndexing::Implicit) => {
            chunk_index::collect_implicit_chunk_entries(address, shape, chunk, itemsize, None, storage.len())
        }
        Some(ChunkIndexing::FixedArray { .. }) => fixed_array::collect_fixed_array_chunk_entries_storage(
            storage,
            address,
            offset_size,
            length_size,
            shape,
            chunk,
            None,
        ),
        Some(ChunkIndexing::ExtensibleArray { .. }) => {
            extensible_array::collect_extensible_array_chunk_entries_storage(
                storage,
                address,
                offset_size,
                length_size,
                shape,
                max_dims,
                chunk,
                None,
            )
        }
    }
}

/// HDF5 filter ids.
pub(crate) const DEFLATE: u16 = 1;
pub(crate) const SHUFFLE: u16 = 2;
const FLETCHER32: u16 = 3;
const BLOSC: u16 = 32001;
const LZ4: u16 = 32004;
const BITSHUFFLE: u16 = 32008;
pub(crate) const ZSTD: u16 = 32015;

/// The zarr v2 filters of a pipeline, in the order HDF5 applied them when
/// writing, leaving out those `mask` says were skipped (bit i for the i-th
/// filter of the pipeline), for chunks of `elements` elements of `itemsize`
/// bytes; or the name of the first filter zarr cannot decode.
pub(crate) fn zarr_filters(
    pipeline: &[FilterDescription],
    mask: u32,
    itemsize: u64,
    elements: u64,
) -> Result<Vec<String>, String> {
    let mut out = Vec::new();
    for (i, filter) in pipeline.iter().enumerate() {
        if i < 32 && mask >> i & 1 == 1 {
            continue;
        }
        let cd = &filter.client_data;
        out.push(match filter.id {
            DEFLATE => format!(r#"{{"id":"zlib","level":{}}}"#, cd.first().copied().unwrap_or(0)),
            SHUFFLE => format!(r#"{{"id":"shuffle","elementsize":{itemsize}}}"#),
            BLOSC => {
                // Blosc frames are self-describing: only `cname` and the levels
                // are metadata. HDF5's blosc filter stores 7 values.
                let cname = ["blosclz", "lz4", "lz4hc", "snappy", "zlib", "zstd"];
                match cd.as_slice() {
                    [_, _, _, blocksize, clevel, shuffle, compressor, ..] if (*compressor as usize) < cname.len() => {
                        format!(
                            r#"{{"id":"blosc","cname":"{}","clevel":{clevel},"shuffle":{shuffle},"blocksize":{blocksize}}}"#,
                            cname[*compressor as usize]
                        )
                    }
                    _ => return Err(format!("blosc (id 32001) with client data {cd:?}")),
                }
            }
            // HDF5's checksum, after the data: numcodecs' `fletcher32` is the same.
            FLETCHER32 => r#"{"id":"fletcher32"}"#.to_owned(),
            ZSTD => format!(r#"{{"id":"zstd","level":{},"checksum":false}}"#, cd.first().copied().unwrap_or(0)),
            // HDF5's LZ4 plugin writes what imagecodecs calls lz4h5.
            LZ4 => r#"{"id":"imagecodecs_lz4h5"}"#.to_owned(),
            BITSHUFFLE => {
                out.extend(bitshuffle(cd, itemsize, elements)?);
                continue;
            }
            id => return Err(filter_name(id, filter.name.as_deref())),
        });
    }
    Ok(out)
}

/// The bitshuffle plugin's codecs: its values are its version (two), the
/// element size, the block size in elements (0: the default) and the
/// compression (0 none, 2 LZ4). With LZ4, each transposed block is
/// compressed after a header as HDF5's LZ4 plugin writes one, so
/// imagecodecs' `lz4h5` then `bitshuffle` read it, but only when no elements
/// are left over past the last multiple of 8 (the plugin stores those as they
/// are, outside any block). Uncompressed, no codec zarr-python runs reads it:
/// imagecodecs' `bitshuffle` takes the element size from the array it is
/// handed, and zarr-python hands a chunk's bytes as one-byte elements (it
/// reads right only after a codec that returns bytes, as `lz4h5` does).
fn bitshuffle(cd: &[u32], itemsize: u64, elements: u64) -> Result<Vec<String>, String> {
    let (element, block) =
        (cd.get(2).copied().filter(|&e| e > 0).map_or(itemsize, u64::from), cd.get(3).copied().unwrap_or(0));
    let shuffle = format!(r#"{{"id":"imagecodecs_bitshuffle","itemsize":{element},"blocksize":{block}}}"#);
    match cd.get(4).copied().unwrap_or(0) {
        2 if elements.is_multiple_of(8) => Ok(vec![shuffle, r#"{"id":"imagecodecs_lz4h5"}"#.to_owned()]),
        2 => Err(format!(
            "the bitshuffle filter (id 32008) with LZ4 on chunks of {elements} elements, not a multiple of 8: \
             the plugin stores the last {} as they are, which no zarr codec reads",
            elements % 8
        )),
        0 => Err("the bitshuffle filter (id 32008) without compression, which zarr-python's imagecodecs_bitshuffle \
                  misreads (as one-byte elements) unless a codec that returns bytes runs before it"
            .to_owned()),
        other => Err(format!(
            "the bitshuffle filter (id 32008) with compression {other} (3 is zstd), which no zarr codec reads"
        )),
    }
}

fn filter_name(id: u16, name: Option<&str>) -> String {
    format!("the {} filter (id {id}), which zarr v2 has no codec for", known_name(id, name))
}

/// A filter's name: HDF5's and the registered plugins' own, else the one the file gives.
pub(crate) fn known_name(id: u16, name: Option<&str>) -> &str {
    match id {
        DEFLATE => "deflate",
        SHUFFLE => "shuffle",
        FLETCHER32 => "fletcher32",
        4 => "szip",
        5 => "nbit",
        6 => "scaleoffset",
        32000 => "lzf",
        BLOSC => "blosc",
        LZ4 => "lz4",
        BITSHUFFLE => "bitshuffle",
        ZSTD => "zstd",
        _ => name.unwrap_or("unknown"),
    }
}
