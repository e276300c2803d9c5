//! HDF5 and NetCDF-4 files as kerchunk's `SingleHdf5ToZarr` describes them:
//! a zarr group per HDF5 group, an array per dataset, a chunk reference per
//! allocated HDF5 chunk (its address and stored size), HDF5 filters as zarr
//! filters. Only metadata is read: object headers, chunk indexes, heaps,
//! and the chunks small enough to inline.

pub(crate) mod attrs;
pub(crate) mod dtype;
pub(crate) mod layout;
mod plugins;
mod reencode;
pub(crate) mod storage;

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use hdf5_reader::group::Group;
use hdf5_reader::messages::HdfMessage;
use hdf5_reader::messages::layout::DataLayout;
use hdf5_reader::{Attribute, Dataset, Hdf5File, OpenOptions};
use kerchunk::{ReferenceSet, ReferenceSetBuilder};

use self::dtype::{Kind, dtype, fill_of, float_at, int_at};
use self::storage::StoreStorage;
use crate::error::ScanError;
use crate::options::{ScanOptions, Skipped, UnsupportedArrays};
use crate::zarr::{AttrValue, Fill, zarray_with_filters, zattrs};

/// kerchunk's `SingleHdf5ToZarr` default `inline_threshold`.
pub(crate) const HDF5_INLINE_THRESHOLD: u64 = 500;

/// The HDF5 file of `storage` as references naming it `url`, and what was
/// left out. Blocks: run it where blocking is allowed.
pub(crate) fn scan(
    storage: &Arc<StoreStorage>,
    url: &str,
    options: &ScanOptions,
) -> Result<(ReferenceSet, Vec<Skipped>), ScanError> {
    let fail = |source| storage.take_failure().unwrap_or_else(|| ScanError::Hdf5 { url: url.to_owned(), source });
    let dyn_storage: hdf5_reader::storage::DynStorage = storage.clone();
    let open = OpenOptions { filter_registry: Some(plugins::registry()), ..OpenOptions::default() };
    let file = Hdf5File::from_storage_with_options(dyn_storage, open).map_err(fail)?;
    let root = file.root_group().map_err(fail)?;
    let objects = walk(&file, &root).map_err(fail)?;
    // An object's name is the first path that reaches it (a linked dataset's other names come later).
    let mut paths: HashMap<u64, String> = HashMap::with_capacity(objects.len());
    for (path, object) in &objects {
        paths.entry(object.address()).or_insert_with(|| path.clone());
    }

    let mut scanner = Scanner {
        file: &file,
        storage,
        url,
        options,
        paths: &paths,
        builder: ReferenceSetBuilder::new(),
        skipped: Vec::new(),
        references: 0,
    };
    scanner.group("", &root).map_err(|trouble| scanner.stop(trouble))?;
    for (path, object) in &objects {
        let result = match object {
            Object::Group(group) => scanner.group(path, group),
            Object::Dataset(dataset) => scanner.dataset(path, dataset),
        };
        if let Err(trouble) = result {
            match (trouble, options.unsupported) {
                (Trouble::Skip(reason), UnsupportedArrays::Skip) => {
                    scanner.skipped.push(Skipped { path: path.clone(), reason });
                }
                (trouble, _) => {
                    let error = scanner.stop(trouble);
                    return Err(match error {
                        ScanError::Variable { url, reason, .. } => {
                            ScanError::Variable { url, variable: path.clone(), reason }
                        }
                        other => other,
                    });
                }
            }
        }
    }
    Ok((scanner.builder.build(), scanner.skipped))
}

/// A group or a dataset met in the walk.
#[derive(Clone)]
enum Object {
    Group(Group),
    Dataset(Box<Dataset>),
}

impl Object {
    fn address(&self) -> u64 {
        match self {
            Object::Group(group) => group.address(),
            Object::Dataset(dataset) => dataset.address(),
        }
    }
}

/// Every object under `root`, named by the first path that reaches it, as
/// HDF5's `H5Ovisit` (and so kerchunk) lists them: depth first, children in
/// byte order of their names. A dataset reached again, through another hard
/// link or a soft one, is listed under that name too, as kerchunk's
/// `translate(preserve_linked_dsets=True)` lists it; a group is walked once.
fn walk(file: &Hdf5File, root: &Group) -> hdf5_reader::error::Result<Vec<(String, Object)>> {
    let mut seen = HashSet::from([root.address()]);
    let mut out = Vec::new();
    // An explicit stack: a file may nest groups deeper than the thread's stack.
    let mut stack = children(file, root, "")?;
    stack.reverse();
    while let Some((path, object)) = stack.pop() {
        if !seen.insert(object.address()) {
            if matches!(object, Object::Dataset(_)) {
                out.push((path, object));
            }
            continue;
        }
        if let Object::Group(group) = &object {
            let mut below = children(file, group, &path)?;
            below.reverse();
            stack.extend(below);
        }
        out.push((path, object));
    }
    Ok(out)
}

/// The members of `group`, sorted by name: through hard links, and through
/// soft links to datasets (kerchunk's `preserve_linked_dsets`); not through
/// soft links to groups (HDF5's link walk does not follow them) nor external
/// links (another file).
fn children(file: &Hdf5File, group: &Group, prefix: &str) -> hdf5_reader::error::Result<Vec<(String, Object)>> {
    use hdf5_reader::messages::link::LinkTarget;
    let header = file.get_or_parse_header(group.address())?;
    let (mut soft, mut external) = (HashSet::new(), HashSet::new());
    for message in &header.messages {
        if let HdfMessage::Link(link) = message {
            match link.target {
                LinkTarget::Soft { .. } => soft.insert(link.name.as_str()),
                LinkTarget::External { .. } => external.insert(link.name.as_str()),
                LinkTarget::Hard { .. } => false,
            };
        }
    }
    let (groups, datasets) = group.members()?;
    let mut out: Vec<(String, Object)> = groups
        .into_iter()
        .map(|g| (g.name().to_owned(), Object::Group(g)))
        .filter(|(name, _)| !soft.contains(name.as_str()))
        .chain(datasets.into_iter().map(|d| (d.name().to_owned(), Object::Dataset(Box::new(d)))))
        .filter(|(name, _)| !external.contains(name.as_str()))
        .collect();
    out.sort_by(|a, b| a.0.as_bytes().cmp(b.0.as_bytes()));
    for (name, _) in &mut out {
        if !prefix.is_empty() {
            *name = format!("{prefix}/{name}");
        }
    }
    Ok(out)
}

/// Why an object was not translated.
enum Trouble {
    /// References cannot express it, or its own metadata is malformed: the
    /// object is skipped or the scan fails, by [`UnsupportedArrays`].
    Skip(String),
    /// The scan cannot go on (the store failed, a limit was passed).
    Stop(ScanError),
}

/// A chunk's reference before it is written.
enum Chunk {
    Inline(Vec<u8>),
    Range { offset: u64, length: u64 },
}

struct Scanner<'a> {
    file: &'a Hdf5File,
    storage: &'a StoreStorage,
    url: &'a str,
    options: &'a ScanOptions,
    /// Each object's path, by address: how dimension scales are named.
    paths: &'a HashMap<u64, String>,
    builder: ReferenceSetBuilder,
    skipped: Vec<Skipped>,
    references: u64,
}

impl Scanner<'_> {
    /// The error that ends the scan for `trouble`: the store's failure if
    /// one caused it.
    fn stop(&self, trouble: Trouble) -> ScanError {
        if let Some(failure) = self.storage.take_failure() {
            return failure;
        }
        match trouble {
            Trouble::Stop(error) => error,
            Trouble::Skip(reason) => ScanError::Variable { url: self.url.to_owned(), variable: String::new(), reason },
        }
    }

    /// An error of the HDF5 parser while reading one object.
    fn trouble(&self, error: &hdf5_reader::error::Error) -> Trouble {
        match self.storage.take_failure() {
            Some(failure) => Trouble::Stop(failure),
            None => Trouble::Skip(format!("malformed HDF5 metadata: {error}")),
        }
    }

    /// Below this many bytes, an array references cannot point at is held
    /// decoded: kerchunk's `unsupported_inline_threshold`, which is its
    /// `inline_threshold`, or 100 when that is 0.
    fn unsupported_threshold(&self) -> u64 {
        match self.options.inline_threshold.unwrap_or(HDF5_INLINE_THRESHOLD) {
            0 => 100,
            threshold => threshold,
        }
    }

    fn key(path: &str, name: &str) -> String {
        if path.is_empty() { name.to_owned() } else { format!("{path}/{name}") }
    }

    fn group(&mut self, path: &str, group: &Group) -> Result<(), Trouble> {
        let attributes = group.attributes().map_err(|e| self.trouble(&e))?;
        let (attributes, left_out) = attrs::transfer(&attributes, self.options.fill_value_attribute);
        self.note(path, left_out);
        self.builder.insert_inline(&Self::key(path, ".zgroup"), br#"{"zarr_format":2}"#);
        self.builder.insert_inline(&Self::key(path, ".zattrs"), zattrs(&attributes).as_bytes());
        Ok(())
    }

    fn note(&mut self, path: &str, left_out: Vec<String>) {
        self.skipped.extend(left_out.into_iter().map(|reason| Skipped { path: path.to_owned(), reason }));
    }

    fn dataset(&mut self, path: &str, dataset: &Dataset) -> Result<(), Trouble> {
        let storage = layout::storage(self.file, dataset.address()).map_err(|reason| {
            self.storage
                .take_failure()
                .map_or(Trouble::Skip(format!("malformed HDF5 metadata: {reason}")), Trouble::Stop)
        })?;
        if storage.null_dataspace {
            return Err(Trouble::Skip("a null dataspace (no shape, no values)".to_owned()));
        }
        let element = dtype::dtype(dataset.dtype()).map_err(Trouble::Skip)?;
        let attributes = dataset.attributes();
        let is_scale = attrs::is_dimension_scale(&attributes);
        let shape = dataset.shape().to_vec();
        let elements = shape.iter().try_fold(1u64, |n, &d| n.checked_mul(d));
        let nbytes = elements
            .and_then(|n| n.checked_mul(element.itemsize))
            .ok_or_else(|| Trouble::Skip(format!("shape {shape:?} holds more bytes than u64 counts")))?;

        let held_whole = self.options.inline_variables.iter().any(|v| v == path);
        let (chunks, filters, data) = if element.kind == Kind::VlenString {
            self.vlen_strings(dataset, &shape)?
        } else if held_whole {
            // Held whole and decoded, as `combine` reads a coordinate.
            self.decoded(dataset, &shape, nbytes, None)?
        } else {
            match self.data(dataset, &storage, &element, &shape, nbytes) {
                // What references cannot point at, the parser may still
                // decode: a small array is held decoded, as kerchunk does
                // under its `unsupported_inline_threshold`.
                Err(Trouble::Skip(reason)) if nbytes < self.unsupported_threshold() => {
                    self.decoded(dataset, &shape, nbytes, Some(reason))?
                }
                other => other?,
            }
        };
        // kerchunk drops a dimension scale with no data: netCDF-4's
        // dimensions without a variable.
        if is_scale && data.is_empty() && !matches!(storage.layout, DataLayout::Compact { .. }) {
            return Ok(());
        }
        let dimensions = self.dimensions(dataset, &attributes, path, is_scale)?;
        let fill = fill_value(&element, &storage, &attributes);
        let (attributes, left_out) = attrs::transfer(&attributes, self.options.fill_value_attribute);

        self.options
            .count_references(&mut self.references, data.len() as u64, self.url, path)
            .map_err(Trouble::Stop)?;
        let threshold = self.options.inline_threshold.unwrap_or(HDF5_INLINE_THRESHOLD);
        // The chunks to inline, fetched together first: runs of missing
        // blocks, several at once, rather than one block at a time.
        let to_inline: Vec<std::ops::Range<u64>> = data
            .iter()
            .filter_map(|(_, chunk)| match chunk {
                Chunk::Range { offset, length } if *length < threshold => Some(*offset..offset + length),
                _ => None,
            })
            .collect();
        self.storage.prefetch(&to_inline).map_err(Trouble::Stop)?;
        let mut written = Vec::with_capacity(data.len());
        for (key, chunk) in data {
            let chunk = match chunk {
                Chunk::Range { offset, length } if length < threshold => {
                    Chunk::Inline(self.storage.bytes(offset..offset + length).map_err(Trouble::Stop)?.to_vec())
                }
                chunk => chunk,
            };
            written.push((key, chunk));
        }

        let mut all_attributes = vec![("_ARRAY_DIMENSIONS".to_owned(), AttrValue::Texts(dimensions))];
        all_attributes.extend(attributes);
        self.note(path, left_out);
        let zarray = zarray_with_filters(&shape, &chunks, &element.numpy, &fill, &filters);
        self.builder.insert_inline(&Self::key(path, ".zarray"), zarray.as_bytes());
        self.builder.insert_inline(&Self::key(path, ".zattrs"), zattrs(&all_attributes).as_bytes());
        // Each chunk's full key written into one buffer.
        let mut key = if path.is_empty() { String::new() } else { format!("{path}/") };
        let folder = key.len();
        for (name, chunk) in written {
            key.truncate(folder);
            key.push_str(&name);
            match chunk {
                Chunk::Inline(bytes) => self.builder.insert_inline(&key, &bytes),
                Chunk::Range { offset, length } => self.builder.insert_range(&key, Some(self.url), offset, length),
            }
        }
        Ok(())
    }

    /// The chunk shape, the zarr filters and the chunks of a dataset of
    /// fixed-size elements.
    #[expect(clippy::type_complexity, reason = "three results of one walk over the layout")]
    fn data(
        &self,
        dataset: &Dataset,
        storage: &layout::Storage,
        element: &dtype::Dtype,
        shape: &[u64],
        nbytes: u64,
    ) -> Result<(Vec<u64>, Vec<String>, Vec<(String, Chunk)>), Trouble> {
        let base = self.file.superblock().base_address;
        let size = hdf5_reader::Storage::len(self.storage);
        let offset_size = self.file.superblock().offset_size;
        let undefined = |address: u64| hdf5_reader::io::Cursor::is_undefined_offset(address, offset_size);
        let whole = |chunk: Chunk| if nbytes == 0 { Vec::new() } else { vec![(zero_key(shape.len()), chunk)] };
        match &storage.layout {
            DataLayout::Compact { data } => {
                // The data is in the object header: held in the references
                // whatever its size (kerchunk loses it above its threshold).
                let data = usize::try_from(nbytes).ok().and_then(|n| data.get(..n)).ok_or_else(|| {
                    Trouble::Skip(format!("compact data of {} bytes for {nbytes} bytes of values", data.len()))
                })?;
                Ok((whole_chunks(shape), Vec::new(), whole(Chunk::Inline(data.to_vec()))))
            }
            DataLayout::Contiguous { .. } if storage.external => {
                Err(Trouble::Skip("its raw data is in external files".to_owned()))
            }
            DataLayout::Contiguous { address, .. } if undefined(*address) => {
                Ok((whole_chunks(shape), Vec::new(), Vec::new()))
            }
            DataLayout::Contiguous { address, size: stored } => {
                if *stored < nbytes {
                    return Err(Trouble::Skip(format!(
                        "contiguous storage of {stored} bytes for {nbytes} bytes of values"
                    )));
                }
                let offset = within_file(base, *address, nbytes, size)?;
                Ok((whole_chunks(shape), Vec::new(), whole(Chunk::Range { offset, length: nbytes })))
            }
            DataLayout::Chunked { address, chunk_indexing, .. } => {
                let chunk: Vec<u32> = dataset.chunks().unwrap_or_default();
                if chunk.len() != shape.len() || chunk.contains(&0) {
                    return Err(Trouble::Skip(format!("chunks {chunk:?} for shape {shape:?}")));
                }
                let chunk64: Vec<u64> = chunk.iter().map(|&c| u64::from(c)).collect();
                let unfiltered =
                    chunk64.iter().try_fold(element.itemsize, |n, &c| n.checked_mul(c)).unwrap_or(u64::MAX);
                let mut out = Vec::new();
                let mut filters = Vec::new();
                if !undefined(*address) {
                    let itemsize = usize::try_from(element.itemsize).unwrap_or(usize::MAX);
                    let entries = layout::chunk_entries(
                        self.file,
                        *address,
                        chunk_indexing.as_ref(),
                        shape,
                        dataset.max_dims(),
                        &chunk,
                        itemsize,
                    )
                    .map_err(|e| self.trouble(&e))?;
                    let masks: Vec<u32> = entries.iter().map(|e| e.filter_mask).collect();
                    let mask = reencode::array_mask(&masks);
                    let elements = chunk64.iter().product();
                    filters = layout::zarr_filters(&storage.filters, mask, element.itemsize, elements)
                        .map_err(Trouble::Skip)?;
                    // Chunks under another mask are written again under the array's, and held.
                    let odd = entries.iter().filter(|e| e.filter_mask != mask).count() as u64;
                    self.holdable(odd.saturating_mul(unfiltered))?;
                    for entry in entries {
                        // A chunk wholly outside the extent is stale (the
                        // dataset shrank): HDF5 keeps it, readers ignore it.
                        if entry.offsets.iter().zip(shape).any(|(&o, &s)| o >= s) {
                            continue;
                        }
                        let key = chunk_name(&entry.offsets, &chunk64).ok_or_else(|| {
                            Trouble::Skip(format!("a chunk at {:?}, not on the chunk grid", entry.offsets))
                        })?;
                        let length = if storage.filters.is_empty() { unfiltered } else { entry.size };
                        let offset = within_file(base, entry.address, length, size)?;
                        if entry.filter_mask == mask {
                            out.push((key, Chunk::Range { offset, length }));
                            continue;
                        }
                        let stored = self.storage.bytes(offset..offset + length).map_err(Trouble::Stop)?;
                        let unfiltered = usize::try_from(unfiltered).unwrap_or(usize::MAX);
                        let encoded = reencode::reencode(
                            &storage.filters,
                            &stored,
                            entry.filter_mask,
                            mask,
                            itemsize,
                            unfiltered,
                        )
                        .map_err(|reason| {
                            Trouble::Skip(format!(
                                "its chunks were stored with different filters (masks {mask:#x} and {:#x}), \
                                         and {reason}",
                                entry.filter_mask
                            ))
                        })?;
                        out.push((key, Chunk::Inline(encoded)));
                    }
                }
                Ok((chunk64, filters, out))
            }
        }
    }

    /// Whether `bytes` of data may be read to hold them in the references:
    /// no more than the metadata budget, whatever the file claims.
    fn holdable(&self, bytes: u64) -> Result<(), Trouble> {
        if bytes > self.options.max_header_bytes {
            return Err(Trouble::Skip(format!(
                "its {bytes} bytes would be held in the references, more than the limit of {} (ScanOptions::with_max_header_bytes)",
                self.options.max_header_bytes
            )));
        }
        Ok(())
    }

    /// The whole dataset decoded by the parser, as one chunk with no
    /// filters; `why` is the reason it cannot be referenced, if that is why.
    #[expect(clippy::type_complexity, reason = "the same shape as `data`")]
    fn decoded(
        &self,
        dataset: &Dataset,
        shape: &[u64],
        nbytes: u64,
        why: Option<String>,
    ) -> Result<(Vec<u64>, Vec<String>, Vec<(String, Chunk)>), Trouble> {
        self.holdable(nbytes)?;
        let decoded = dataset.read_raw_bytes().map_err(|error| match (self.trouble(&error), why) {
            (Trouble::Skip(_), Some(reason)) => Trouble::Skip(format!("{reason}; decoding it failed too: {error}")),
            (trouble, _) => trouble,
        })?;
        let data = if nbytes == 0 { Vec::new() } else { vec![(zero_key(shape.len()), Chunk::Inline(decoded))] };
        Ok((whole_chunks(shape), Vec::new(), data))
    }

    /// A variable-length string dataset, read and held in the references as
    /// one chunk of zarr's `vlen-utf8` encoding (kerchunk's default "embed").
    #[expect(clippy::type_complexity, reason = "the same shape as `data`")]
    fn vlen_strings(
        &self,
        dataset: &Dataset,
        shape: &[u64],
    ) -> Result<(Vec<u64>, Vec<String>, Vec<(String, Chunk)>), Trouble> {
        // Each string is read through its 16-byte heap reference, at least.
        let references = shape.iter().try_fold(16u64, |n, &d| n.checked_mul(d)).unwrap_or(u64::MAX);
        self.holdable(references)?;
        let strings = dataset.read_strings().map_err(|e| self.trouble(&e))?;
        let mut chunk = Vec::new();
        let count = u32::try_from(strings.len()).map_err(|_| Trouble::Skip("more than 2^32 strings".to_owned()))?;
        chunk.extend_from_slice(&count.to_le_bytes());
        for s in &strings {
            let length = u32::try_from(s.len()).map_err(|_| Trouble::Skip("a string of 4 GiB".to_owned()))?;
            chunk.extend_from_slice(&length.to_le_bytes());
            chunk.extend_from_slice(s.as_bytes());
        }
        let chunks = whole_chunks(shape);
        let data = if strings.is_empty() { Vec::new() } else { vec![(zero_key(shape.len()), Chunk::Inline(chunk))] };
        Ok((chunks, vec![r#"{"id":"vlen-utf8"}"#.to_owned()], data))
    }

    /// `_ARRAY_DIMENSIONS`, kerchunk's way: the path of the one dimension
    /// scale attached to an axis, the dataset's own path if it is a scale,
    /// else `phony_dim_<axis>`.
    fn dimensions(
        &self,
        dataset: &Dataset,
        attributes: &[Attribute],
        path: &str,
        is_scale: bool,
    ) -> Result<Vec<String>, Trouble> {
        let offset_size = self.file.superblock().offset_size;
        let attached: Vec<Vec<u64>> = match attributes.iter().find(|a| a.name == "DIMENSION_LIST") {
            None => Vec::new(),
            Some(list) => {
                let width = dataset.vlen_reference_size();
                list.raw_data
                    .chunks(width)
                    .map(|entry| {
                        let bytes = dataset
                            .resolve_vlen_reference_bytes(entry, usize::from(offset_size))
                            .map_err(|e| self.trouble(&e))?;
                        hdf5_reader::reference::read_object_references(&bytes, offset_size)
                            .map_err(|e| self.trouble(&e))
                    })
                    .collect::<Result<_, _>>()?
            }
        };
        (0..dataset.ndim())
            .map(|axis| match attached.get(axis).map(Vec::as_slice) {
                Some([scale]) => self.paths.get(scale).cloned().ok_or_else(|| {
                    Trouble::Skip(format!(
                        "axis {axis} names a dimension scale at address {scale}, which no group holds"
                    ))
                }),
                _ if is_scale => Ok(path.to_owned()),
                Some(scales) if scales.len() > 1 => Err(Trouble::Skip(format!(
                    "axis {axis} has {} dimension scales; zarr has one name per axis",
                    scales.len()
                ))),
                _ => Ok(format!("phony_dim_{axis}")),
            })
            .collect()
    }
}

/// The file offset of `length` bytes at HDF5 `address`, which must lie
/// inside the file.
fn within_file(base: u64, address: u64, length: u64, size: u64) -> Result<u64, Trouble> {
    base.checked_add(address)
        .filter(|offset| offset.checked_add(length).is_some_and(|end| end <= size))
        .ok_or_else(|| {
            Trouble::Skip(format!(
                "{length} bytes at address {address} lie past the end of the file ({size} bytes): it is truncated or corrupt"
            ))
        })
}

/// The chunk shape of an array held as one chunk: its shape, with a zero
/// length as 1 (zarr has no empty chunks).
pub(crate) fn whole_chunks(shape: &[u64]) -> Vec<u64> {
    shape.iter().map(|&d| d.max(1)).collect()
}

/// The name (`i.j.k`) of the chunk whose first element is at `offsets`, in a grid of chunks of
/// `chunk` elements; `None` if it is not on the grid. Written without the formatting machinery:
/// an HDF5 file's chunks, hundreds of thousands in a large one, are named one by one.
fn chunk_name(offsets: &[u64], chunk: &[u64]) -> Option<String> {
    let mut name = String::with_capacity(4 * chunk.len());
    for (axis, (&o, &c)) in offsets.iter().zip(chunk).enumerate() {
        if o % c != 0 {
            return None;
        }
        if axis > 0 {
            name.push('.');
        }
        name.push_str(itoa::Buffer::new().format(o / c));
    }
    Some(name)
}

/// The key of a dataset's only chunk: `0.0...` (`0` for a scalar).
pub(crate) fn zero_key(ndim: usize) -> String {
    vec!["0"; ndim.max(1)].join(".")
}

/// kerchunk's fill value ([`dtype::kerchunk_fill`]): HDF5's, netCDF-4's rules, `_FillValue`.
fn fill_value(element: &dtype::Dtype, storage: &layout::Storage, attributes: &[Attribute]) -> Fill {
    let itemsize = usize::try_from(element.itemsize).unwrap_or(usize::MAX);
    let stored =
        storage.fill.as_ref().and_then(|bytes| bytes.get(..itemsize)).map(|bytes| fill_of(element.kind, bytes));
    let netcdf = attributes.iter().any(|a| a.name.contains("_Netcdf4"));
    let time = attributes.iter().any(|a| a.name == "units" && a.read_string().is_ok_and(|u| u.contains("since")));
    let attribute = attributes.iter().find(|a| a.name == "_FillValue").and_then(|a| fill_attribute(element.kind, a));
    dtype::kerchunk_fill(element.kind, stored, netcdf, time, attribute)
}

/// A `_FillValue` attribute's first value in the array's type.
fn fill_attribute(kind: Kind, attribute: &Attribute) -> Option<Fill> {
    let own = dtype(&attribute.datatype).ok()?;
    let first = attribute.raw_data.get(..usize::try_from(own.itemsize).ok()?)?;
    let (integer, float) = match own.kind {
        Kind::Int { signed, order, .. } => {
            let n = int_at(first, signed, order);
            #[expect(clippy::cast_precision_loss, reason = "as numpy converts")]
            (Some(n), n as f64)
        }
        Kind::Float { order, .. } => {
            let f = float_at(first, order);
            #[expect(clippy::cast_possible_truncation, reason = "as numpy converts, truncating")]
            (f.is_finite().then_some(f as i128), f)
        }
        Kind::Bytes(_) => return matches!(kind, Kind::Bytes(_)).then(|| Fill::Bytes(first.to_vec())),
        _ => return None,
    };
    dtype::number_in(kind, integer, float)
}
