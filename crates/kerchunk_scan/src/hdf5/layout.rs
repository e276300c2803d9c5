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
const DEFLATE: u16 = 1;
const SHUFFLE: u16 = 2;
const FLETCHER32: u16 = 3;
const BLOSC: u16 = 32001;
const ZSTD: u16 = 32015;

/// The zarr v2 filters of a pipeline, in the order HDF5 applied them when
/// writing, leaving out those `mask` says were skipped (bit i for the i-th
/// filter of the pipeline); or the name of the first filter zarr cannot
/// decode.
pub(crate) fn zarr_filters(pipeline: &[FilterDescription], mask: u32, itemsize: u64) -> Result<Vec<String>, String> {
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
            id => return Err(filter_name(id, filter.name.as_deref())),
        });
    }
    Ok(out)
}

fn filter_name(id: u16, name: Option<&str>) -> String {
    let known = match id {
        4 => "szip",
        5 => "nbit",
        6 => "scaleoffset",
        32000 => "lzf",
        32004 => "lz4",
        32008 => "bitshuffle",
        _ => name.unwrap_or("unknown"),
    };
    format!("the {known} filter (id {id}), which zarr v2 has no codec for")
}
