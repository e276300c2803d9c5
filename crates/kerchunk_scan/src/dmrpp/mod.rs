//! DMR++ sidecars (`GRANULE.dmrpp`, written by OPeNDAP Hyrax's `build_dmrpp` beside most of
//! NASA Earthdata's HDF5 and NetCDF-4 granules): the file's DAP4 metadata and its whole chunk
//! index in one small XML document, made references to the file it describes without reading
//! the file's header, as the HDF5 scanner would make them from the file.
//!
//! What is read, as OPeNDAP's `dmrpp` namespace and bes's own reader (`modules/dmrpp_module`)
//! define it:
//! - DAP4 groups, variables of the atomic types and of enumerations (their base type's values,
//!   h5py's bool for FALSE and TRUE), named (fully qualified or relative) and
//!   anonymous dimensions, typed attributes (containers as JSON objects);
//! - `dmrpp:chunks`: `compressionType` (deflate, shuffle and fletcher32, in pipeline order),
//!   `deflateLevel`, `fillValue`, `byteOrder`, `dmrpp:chunkDimensionSizes`, and each chunk's
//!   `offset`, `nBytes`, `chunkPositionInArray` and `href`; chunks absent from the index are
//!   read as the fill value;
//! - contiguous data (one chunk without a position, also directly under the variable, as older
//!   sidecars write it), `dmrpp:compact` and `dmrpp:missingdata` (held in the references),
//!   fixed-length strings (`dmrpp:FixedLengthStringArray`).
//!
//! An absent `byteOrder` is little-endian: bes's reader swaps bytes only for `BE`, and the
//! sidecars that leave it out describe little-endian files.

mod attributes;
mod variable;
mod whole;

use std::collections::HashMap;

use hdf5_reader::ByteOrder;
use kerchunk::{ReferenceSet, ReferenceSetBuilder};
use roxmltree::Node;

use self::variable::{Chunk, Layout, element, fill_of_text, layout};
pub(crate) use self::whole::Whole;
use crate::error::ScanError;
use crate::hdf5::dtype::{Dtype, Kind, kerchunk_fill};
use crate::hdf5::{whole_chunks, zero_key};
use crate::options::{ScanOptions, Skipped, UnsupportedArrays};
use crate::zarr::{AttrValue, Fill, zarray_with_filters, zattrs};

/// How deep groups may nest (HDF5 files nest a few levels; HDF-EOS5 four).
const MAX_GROUP_DEPTH: usize = 256;

/// The `dmrpp:href` Hyrax writes where the data's URL is filled in when the sidecar is served.
const PLACEHOLDER: &str = "OPeNDAP_DMRpp_DATA_ACCESS_URL";

/// Whether a file's first bytes are a DMR++ document's: XML whose root is DAP4's `Dataset`,
/// with the `dmrpp` namespace.
pub(crate) fn is_dmrpp(first: &[u8]) -> bool {
    let text = String::from_utf8_lossy(first);
    let start = text.trim_start_matches('\u{feff}').trim_start();
    (start.starts_with("<?xml") || start.starts_with("<Dataset")) && text.contains("<Dataset") && text.contains("dmrpp")
}

/// What a sidecar describes: the references, the chunks small enough to hold in them (key,
/// offset and length in the data file, fetched by the caller), and what was left out.
pub(crate) struct Described {
    pub(crate) builder: ReferenceSetBuilder,
    /// The data file's URL, as the references name it.
    pub(crate) data_url: String,
    pub(crate) to_inline: Vec<(String, u64, u64)>,
    /// The arrays to hold whole and decoded ([`ScanOptions::with_inlined_variables`]).
    pub(crate) to_decode: Vec<Whole>,
    pub(crate) skipped: Vec<Skipped>,
}

impl Described {
    /// The references, with `inlined` (the bytes of [`Described::to_inline`], and of each of
    /// [`Described::to_decode`] assembled, in order) held; without them (a data file this scan
    /// does not read), the small chunks referenced.
    pub(crate) fn finish(mut self, inlined: Option<(&[bytes::Bytes], &[Vec<u8>])>) -> (ReferenceSet, Vec<Skipped>) {
        match inlined {
            Some((inlined, wholes)) => {
                for ((key, ..), bytes) in self.to_inline.iter().zip(inlined) {
                    self.builder.insert_inline(key, bytes);
                }
                for (whole, bytes) in self.to_decode.iter().zip(wholes) {
                    self.builder.insert_inline(&whole.key, bytes);
                }
            }
            None => {
                for (key, offset, length) in &self.to_inline {
                    self.builder.insert_range(key, Some(&self.data_url), *offset, *length);
                }
            }
        }
        (self.builder.build(), self.skipped)
    }
}

/// The sidecar `document` (named `sidecar_url`) as references to the file it describes.
///
/// # Errors
/// [`ScanError::Dmrpp`] for a document that is not DMR++ XML or names no data file it can be
/// resolved to; [`ScanError::Variable`] for a variable references cannot express under
/// [`UnsupportedArrays::Fail`], or one over the reference limit.
pub(crate) fn describe(document: &[u8], sidecar_url: &str, options: &ScanOptions) -> Result<Described, ScanError> {
    let fail = |reason: String| ScanError::Dmrpp { url: sidecar_url.to_owned(), reason };
    let text = text_of(document).map_err(fail)?;
    let parsing = roxmltree::ParsingOptions { allow_dtd: false, ..roxmltree::ParsingOptions::default() };
    let document =
        roxmltree::Document::parse_with_options(&text, parsing).map_err(|e| fail(format!("not XML: {e}")))?;
    let root = document.root_element();
    if root.tag_name().name() != "Dataset" || !is_dap(root) {
        return Err(fail(format!("its root element is {:?}, not DAP4's Dataset", root.tag_name().name())));
    }
    let data_url = data_url(attribute_of(root, "href"), sidecar_url).map_err(fail)?;
    let mut describer = Describer {
        url: sidecar_url,
        states_fill_values: attribute_of(root, "version").is_some(),
        data_url,
        options,
        dimensions: HashMap::new(),
        enumerations: HashMap::new(),
        builder: ReferenceSetBuilder::new(),
        to_inline: Vec::new(),
        to_decode: Vec::new(),
        skipped: Vec::new(),
        references: 0,
    };
    describer.group(root, "", "/", 0)?;
    Ok(Described {
        builder: describer.builder,
        data_url: describer.data_url,
        to_inline: describer.to_inline,
        to_decode: describer.to_decode,
        skipped: describer.skipped,
    })
}

/// The document as text: UTF-8, or ISO-8859-1 where it says so (bes writes both).
fn text_of(document: &[u8]) -> Result<String, String> {
    let head = String::from_utf8_lossy(&document[..document.len().min(100)]).to_ascii_lowercase();
    if head.contains("encoding=\"iso-8859-1\"") || head.contains("encoding='iso-8859-1'") {
        return Ok(document.iter().map(|&b| char::from(b)).collect());
    }
    String::from_utf8(document.to_vec()).map_err(|e| format!("not UTF-8 text: {e}"))
}

/// The URL of the data file: `href` where it is one, else the sidecar's own without `.dmrpp`.
/// A relative `href` is a path under the Hyrax catalog that made the sidecar: it is taken to be
/// the file beside the sidecar only where it names that file.
fn data_url(href: Option<&str>, sidecar_url: &str) -> Result<String, String> {
    let beside = || {
        sidecar_url
            .strip_suffix(".dmrpp")
            .filter(|s| !s.is_empty() && !s.ends_with('/'))
            .map(str::to_owned)
            .ok_or_else(|| "its name does not end in .dmrpp and it names no data URL (dmrpp:href)".to_owned())
    };
    match href.map(str::trim) {
        None | Some("" | PLACEHOLDER) => beside(),
        Some(href) if href.contains("://") => Ok(href.to_owned()),
        Some(href) => {
            let file = beside()?;
            let name = |path: &str| path.rsplit('/').next().unwrap_or(path).to_owned();
            if name(href) == name(&file) {
                Ok(file)
            } else {
                Err(format!(
                    "its dmrpp:href {href:?} is relative (a path under the Hyrax catalog that made it) and names \
                     another file than the one beside it ({file})"
                ))
            }
        }
    }
}

/// Why a variable was not written: left out (or failing the scan, as asked), or a stop.
enum Trouble {
    Skip(String),
    Stop(ScanError),
}

struct Describer<'a> {
    url: &'a str,
    /// Whether the sidecar is of a `build_dmrpp` that writes `fillValue` wherever HDF5 defines
    /// one (those that write `dmrpp:version`, 3.20.10 on): without one, a variable's fill value
    /// is then undefined. Older ones wrote none at all.
    states_fill_values: bool,
    data_url: String,
    options: &'a ScanOptions,
    /// Each declared dimension's size, by its fully qualified name.
    dimensions: HashMap<String, u64>,
    /// Each declared enumeration's base type, and whether it is h5py's bool (FALSE 0, TRUE 1),
    /// by its fully qualified name.
    enumerations: HashMap<String, (String, bool)>,
    builder: ReferenceSetBuilder,
    to_inline: Vec<(String, u64, u64)>,
    to_decode: Vec<Whole>,
    skipped: Vec<Skipped>,
    references: u64,
}

impl Describer<'_> {
    fn key(path: &str, name: &str) -> String {
        if path.is_empty() { name.to_owned() } else { format!("{path}/{name}") }
    }

    /// The group `node` at `path` (`""` for the root; `fqn` its DAP4 name, `/` or `/g/`), its
    /// variables and its groups.
    fn group(&mut self, node: Node<'_, '_>, path: &str, fqn: &str, depth: usize) -> Result<(), ScanError> {
        // Groups are walked recursively: a hostile document's nesting must not exhaust the stack.
        if depth > MAX_GROUP_DEPTH {
            return Err(ScanError::Dmrpp {
                url: self.url.to_owned(),
                reason: format!("its groups are nested deeper than {MAX_GROUP_DEPTH}"),
            });
        }
        for enumeration in dap_children(node, "Enumeration") {
            let (Some(name), Some(base)) = (enumeration.attribute("name"), enumeration.attribute("basetype")) else {
                continue;
            };
            let constants: Vec<(&str, &str)> = dap_children(enumeration, "EnumConst")
                .filter_map(|c| Some((c.attribute("name")?, c.attribute("value")?.trim())))
                .collect();
            let one_byte = matches!(base, "Byte" | "UInt8" | "Int8");
            let bool = one_byte
                && constants.len() == 2
                && constants.contains(&("FALSE", "0"))
                && constants.contains(&("TRUE", "1"));
            self.enumerations.insert(format!("{fqn}{name}"), (base.to_owned(), bool));
        }
        for dimension in dap_children(node, "Dimension") {
            let (Some(name), Some(size)) = (dimension.attribute("name"), dimension.attribute("size")) else { continue };
            if let Ok(size) = size.trim().parse() {
                self.dimensions.insert(format!("{fqn}{name}"), size);
            }
        }
        let (attributes, left_out) = attributes::transfer(node, self.options.fill_value_attribute);
        self.note(path, left_out);
        self.builder.insert_inline(&Self::key(path, ".zgroup"), br#"{"zarr_format":2}"#);
        self.builder.insert_inline(&Self::key(path, ".zattrs"), zattrs(&attributes).as_bytes());
        for child in node.children().filter(|c| c.is_element() && is_dap(*c)) {
            let name = child.attribute("name").unwrap_or_default();
            match child.tag_name().name() {
                "Group" => {
                    let path = hdf5_path(child).unwrap_or_else(|| Self::key(path, name));
                    self.group(child, &path, &format!("{fqn}{name}/"), depth + 1)?;
                }
                other if NOT_VARIABLES.contains(&other) => {}
                _ => {
                    let variable = hdf5_path(child).unwrap_or_else(|| Self::key(path, name));
                    match (self.variable(child, &variable, fqn), self.options.unsupported) {
                        (Ok(()), _) => {}
                        (Err(Trouble::Skip(reason)), UnsupportedArrays::Skip) => {
                            self.skipped.push(Skipped { path: variable, reason });
                        }
                        (Err(Trouble::Skip(reason)), UnsupportedArrays::Fail) => {
                            return Err(ScanError::Variable { url: self.url.to_owned(), variable, reason });
                        }
                        (Err(Trouble::Stop(error)), _) => return Err(error),
                    }
                }
            }
        }
        Ok(())
    }

    fn note(&mut self, path: &str, left_out: Vec<String>) {
        self.skipped.extend(left_out.into_iter().map(|reason| Skipped { path: path.to_owned(), reason }));
    }

    /// The variable `node` at `path`, in the group named `fqn`.
    fn variable(&mut self, node: Node<'_, '_>, path: &str, fqn: &str) -> Result<(), Trouble> {
        let chunks = dmrpp_child(node, "chunks");
        let order = match chunks.and_then(|c| c.attribute("byteOrder")).map(str::trim) {
            None | Some("LE") => ByteOrder::LittleEndian,
            Some("BE") => ByteOrder::BigEndian,
            Some(other) => return Err(Trouble::Skip(format!("byteOrder {other:?}, neither LE nor BE"))),
        };
        // A string's length: what `FixedLengthStringArray` says, or a compact scalar's own (the
        // sidecar holds its text, fixed or variable in the file).
        let scalar = dap_children(node, "Dim").next().is_none();
        let fixed = dmrpp_child(node, "FixedLengthStringArray")
            .and_then(|f| f.attribute("string_length"))
            .and_then(|n| n.trim().parse().ok())
            .or_else(|| {
                let compact = variable::compact(node)?.ok()?;
                (scalar && node.tag_name().name() == "String").then(|| u32::try_from(compact.len()).ok())?
            });
        let element = match node.tag_name().name() {
            // An enumeration's values are its base type's, as the HDF5 scanner writes them (h5py's
            // bool, FALSE and TRUE of one byte, as bool).
            "Enum" => match self.enumeration(node, fqn).map_err(Trouble::Skip)? {
                (_, true) => Dtype { numpy: "|b1".to_owned(), itemsize: 1, kind: Kind::Bool },
                (base, false) => element(&base, order, None).map_err(Trouble::Skip)?,
            },
            dap => element(dap, order, fixed).map_err(Trouble::Skip)?,
        };
        let (shape, names) = self.shape(node, fqn).map_err(Trouble::Skip)?;
        let nbytes = shape
            .iter()
            .try_fold(element.itemsize, |n, &d| n.checked_mul(d))
            .ok_or_else(|| Trouble::Skip(format!("shape {shape:?} holds more bytes than u64 counts")))?;
        let Layout { chunks: chunk_shape, pipeline, filters, data } =
            layout(node, &element, &shape, nbytes, self.options.max_header_bytes).map_err(Trouble::Skip)?;

        let fill = self.fill(node, &element, &shape, &chunk_shape, nbytes, data.len())?;
        let (attributes, left_out) = attributes::transfer(node, self.options.fill_value_attribute);

        self.options
            .count_references(&mut self.references, data.len() as u64, self.url, path)
            .map_err(Trouble::Stop)?;
        let threshold = self.options.inline_threshold.unwrap_or(crate::hdf5::HDF5_INLINE_THRESHOLD);
        let mut all_attributes = vec![("_ARRAY_DIMENSIONS".to_owned(), AttrValue::Texts(names))];
        all_attributes.extend(attributes);
        self.note(path, left_out);
        let zattrs = zattrs(&all_attributes);
        // Held whole and decoded (as `combine` reads a coordinate), from the data file's chunks.
        let held_whole = self.options.inline_variables.iter().any(|v| v == path);
        if held_whole && nbytes > 0 && !matches!(data.as_slice(), [(_, Chunk::Inline(_))]) {
            let grid: u64 = shape.iter().zip(&chunk_shape).map(|(&s, &c)| s.div_ceil(c.max(1))).product();
            // A chunk is decoded whole: at most the metadata budget too (a chunk shape far larger
            // than the array's would otherwise let a stream inflate that far).
            let chunk_bytes =
                chunk_shape.iter().try_fold(element.itemsize, |n, &c| n.checked_mul(c)).unwrap_or(u64::MAX);
            let most = self.options.max_header_bytes;
            if (data.len() as u64) < grid || nbytes > most || chunk_bytes > most {
                return Err(Trouble::Skip(format!(
                    "held whole to combine, it needs all its {grid} chunks ({} indexed) and at most \
                     ScanOptions::with_max_header_bytes of values ({nbytes} bytes)",
                    data.len()
                )));
            }
            let mut chunks = Vec::with_capacity(data.len());
            for (key, chunk) in data {
                let index: Vec<u64> = key.split('.').filter_map(|i| i.parse().ok()).collect();
                match chunk {
                    Chunk::Range { href: None, offset, length } => chunks.push((index, offset, length)),
                    _ => return Err(Trouble::Skip("held whole, its chunks must all be in the data file".to_owned())),
                }
            }
            let zarray = zarray_with_filters(&shape, &whole_chunks(&shape), &element.numpy, &fill, &[]);
            self.builder.insert_inline(&Self::key(path, ".zarray"), zarray.as_bytes());
            self.builder.insert_inline(&Self::key(path, ".zattrs"), zattrs.as_bytes());
            let key = Self::key(path, &zero_key(shape.len()));
            self.to_decode.push(Whole { key, shape, chunk_shape, itemsize: element.itemsize, pipeline, chunks });
            return Ok(());
        }
        let zarray = zarray_with_filters(&shape, &chunk_shape, &element.numpy, &fill, &filters);
        self.builder.insert_inline(&Self::key(path, ".zarray"), zarray.as_bytes());
        self.builder.insert_inline(&Self::key(path, ".zattrs"), zattrs.as_bytes());
        for (key, chunk) in data {
            let key = Self::key(path, &key);
            match chunk {
                Chunk::Inline(bytes) => self.builder.insert_inline(&key, &bytes),
                // Small chunks of the data file are fetched and held, as the HDF5 scanner holds them.
                Chunk::Range { href: None, offset, length } if length < threshold => {
                    self.to_inline.push((key, offset, length));
                }
                Chunk::Range { href, offset, length } => {
                    let url = href.as_deref().unwrap_or(&self.data_url);
                    self.builder.insert_range(&key, Some(url), offset, length);
                }
            }
        }
        Ok(())
    }

    /// A variable's fill value: `fillValue`, else `_FillValue`, else HDF5's undefined fill (0), by
    /// the HDF5 scanner's rules (`kerchunk_fill`); `None` where the sidecar cannot say.
    fn fill(
        &self,
        node: Node<'_, '_>,
        element: &Dtype,
        shape: &[u64],
        chunk_shape: &[u64],
        nbytes: u64,
        indexed: usize,
    ) -> Result<Fill, Trouble> {
        let chunks = dmrpp_child(node, "chunks");
        let attribute = |name: &str| attributes::first_value(node, name);
        let stated = chunks.and_then(|c| c.attribute("fillValue"));
        let stored = stated.and_then(|t| fill_of_text(element.kind, t));
        let netcdf =
            dap_children(node, "Attribute").any(|a| a.attribute("name").is_some_and(|n| n.contains("_Netcdf4")));
        let time = attribute("units").is_some_and(|(_, units)| units.contains("since"));
        let fill_attribute = attribute("_FillValue").and_then(|(_, text)| fill_of_text(element.kind, &text));
        let unknown = stated.is_none() && fill_attribute.is_none() && !self.states_fill_values;
        Ok(match element.kind {
            // An older sidecar's variable: the file's fill value is unknown. With every chunk
            // indexed no value is a fill, and none is masked; with chunks absent, what they hold is
            // unknown, and a guess would be a silent wrong value.
            Kind::Int { .. } | Kind::Float { .. } if unknown => {
                let grid: u64 = shape.iter().zip(chunk_shape).map(|(&s, &c)| s.div_ceil(c.max(1))).product();
                if nbytes > 0 && (indexed as u64) < grid {
                    return Err(Trouble::Skip(format!(
                        "{} of its {grid} chunks are absent from the index, and the sidecar states no fill value \
                         for them (fillValue, which build_dmrpp writes from 3.20.10)",
                        grid - indexed as u64
                    )));
                }
                Fill::Null
            }
            kind => kerchunk_fill(kind, stored, netcdf, time, fill_attribute),
        })
    }

    /// A variable's shape and its dimensions' names (`_ARRAY_DIMENSIONS`): a named dimension's
    /// name without its leading `/` (the path the HDF5 scanner gives its dimension scale), an
    /// anonymous one's `phony_dim_<axis>`.
    fn shape(&self, node: Node<'_, '_>, fqn: &str) -> Result<(Vec<u64>, Vec<String>), String> {
        let mut shape = Vec::new();
        let mut names = Vec::new();
        for (axis, dim) in dap_children(node, "Dim").enumerate() {
            let size = dim.attribute("size").map(|s| s.trim().parse::<u64>());
            match (dim.attribute("name"), size) {
                (_, Some(Err(_))) => {
                    return Err(format!("dimension {axis}'s size {:?} is not a size", dim.attribute("size")));
                }
                (None, Some(Ok(size))) => {
                    shape.push(size);
                    names.push(format!("phony_dim_{axis}"));
                }
                (Some(name), size) => {
                    let full =
                        self.resolve(name, fqn).ok_or_else(|| format!("dimension {name:?} is declared nowhere"))?;
                    shape.push(match size {
                        Some(Ok(size)) => size,
                        _ => self.dimensions[&full],
                    });
                    names.push(full.trim_start_matches('/').to_owned());
                }
                (None, None) => return Err(format!("dimension {axis} has neither a name nor a size")),
            }
        }
        Ok((shape, names))
    }

    /// The base type of an `Enum` variable's enumeration (named fully, or from the group `fqn`
    /// outwards), and whether it is h5py's bool.
    fn enumeration(&self, node: Node<'_, '_>, fqn: &str) -> Result<(String, bool), String> {
        let name = node.attribute("enum").ok_or("an Enum without its enumeration (enum)")?;
        let mut scope = if name.starts_with('/') { String::new() } else { fqn.to_owned() };
        loop {
            if let Some(found) = self.enumerations.get(&format!("{scope}{name}")) {
                return Ok(found.clone());
            }
            if scope.is_empty() || scope == "/" {
                return Err(format!("its enumeration {name:?} is declared nowhere"));
            }
            let parent = scope.trim_end_matches('/').rsplit_once('/').map_or("", |(p, _)| p);
            scope = format!("{parent}/");
        }
    }

    /// The fully qualified name of dimension `name` seen from the group `fqn`: itself if it is
    /// one, else the nearest enclosing group's declaration.
    fn resolve(&self, name: &str, fqn: &str) -> Option<String> {
        if name.starts_with('/') {
            return self.dimensions.contains_key(name).then(|| name.to_owned());
        }
        let mut scope = fqn.to_owned();
        loop {
            let full = format!("{scope}{name}");
            if self.dimensions.contains_key(&full) {
                return Some(full);
            }
            if scope == "/" {
                return None;
            }
            let parent = scope.trim_end_matches('/').rsplit_once('/').map_or("", |(p, _)| p);
            scope = format!("{parent}/");
        }
    }
}

/// The HDF5 path of a variable, or of a group (its variables' parent), where bes renamed it for
/// DAP (`Data Fields` to `Data_Fields`) and kept the name in a `fullnamepath` attribute: the
/// references name objects as the file does, as the HDF5 scanner names them.
fn hdf5_path(node: Node<'_, '_>) -> Option<String> {
    let own = |n: Node<'_, '_>| {
        attributes::first_value(n, "fullnamepath")
            .map(|(_, path)| path.trim().trim_matches('/').to_owned())
            .filter(|p| !p.is_empty())
    };
    if node.tag_name().name() != "Group" {
        return own(node);
    }
    let variables =
        node.children().filter(|c| c.is_element() && is_dap(*c) && !NOT_VARIABLES.contains(&c.tag_name().name()));
    variables.filter_map(own).find_map(|path| path.rsplit_once('/').map(|(group, _)| group.to_owned()))
}

/// The DAP4 elements of a group that are not variables.
const NOT_VARIABLES: [&str; 6] = ["Group", "Attribute", "Dimension", "Enumeration", "Map", "Dim"];

/// Whether `node` is in DAP4's namespace (or in none, as some sidecars write it).
fn is_dap(node: Node<'_, '_>) -> bool {
    node.tag_name().namespace().is_none_or(|ns| ns.contains("/DAP/4.0"))
}

/// Whether `node` is in the `dmrpp` namespace (`http` or `https`).
fn is_dmrpp_element(node: Node<'_, '_>) -> bool {
    node.tag_name().namespace().is_some_and(|ns| ns.contains("/dmrpp/"))
}

/// `node`'s DAP4 children named `name`.
pub(crate) fn dap_children<'a, 'input: 'a>(
    node: Node<'a, 'input>,
    name: &'a str,
) -> impl Iterator<Item = Node<'a, 'input>> + 'a {
    node.children().filter(move |c| c.is_element() && is_dap(*c) && c.tag_name().name() == name)
}

/// `node`'s `dmrpp:` children named `name`.
pub(crate) fn dmrpp_children<'a, 'input: 'a>(
    node: Node<'a, 'input>,
    name: &'a str,
) -> impl Iterator<Item = Node<'a, 'input>> + 'a {
    node.children().filter(move |c| c.is_element() && is_dmrpp_element(*c) && c.tag_name().name() == name)
}

/// `node`'s first `dmrpp:` child named `name`.
pub(crate) fn dmrpp_child<'a, 'input>(node: Node<'a, 'input>, name: &str) -> Option<Node<'a, 'input>> {
    node.children().find(|c| c.is_element() && is_dmrpp_element(*c) && c.tag_name().name() == name)
}

/// `node`'s attribute `name`, with or without the `dmrpp:` prefix.
pub(crate) fn attribute_of<'a>(node: Node<'a, '_>, name: &str) -> Option<&'a str> {
    node.attributes().find(|a| a.name() == name).map(|a| a.value())
}

/// The values of a DAP4 attribute: its `Value` children's text (or `value` attributes).
pub(crate) fn value_texts(attribute: Node<'_, '_>) -> Vec<String> {
    dap_children(attribute, "Value")
        .map(|v| v.attribute("value").map_or_else(|| v.text().unwrap_or_default().to_owned(), str::to_owned))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    const HEAD: &str = r#"<?xml version="1.0" encoding="ISO-8859-1"?>
<Dataset xmlns="http://xml.opendap.org/ns/DAP/4.0#" xmlns:dmrpp="http://xml.opendap.org/dap/dmrpp/1.0.0#" name="f.h5" dmrpp:version="3.21.1""#;

    /// A sidecar `f.h5.dmrpp` whose root holds `body`, with `href` (an attribute, or nothing).
    fn sidecar(href: &str, body: &str) -> String {
        format!("{HEAD} {href}>{body}</Dataset>")
    }

    fn described(document: &str) -> Result<(ReferenceSet, Vec<Skipped>), ScanError> {
        describe(document.as_bytes(), "data/f.h5.dmrpp", &ScanOptions::default().with_inline_threshold(0))
            .map(|d| d.finish(None))
    }

    /// The one skipped variable's reason.
    fn refused(body: &str) -> String {
        let (_, skipped) = described(&sidecar("", body)).unwrap();
        assert_eq!(skipped.len(), 1, "{skipped:?}");
        skipped[0].reason.clone()
    }

    const CHUNKED: &str = r#"<Int16 name="v"><Dim size="4"/>
        <dmrpp:chunks compressionType="COMPRESSION" fillValue="-1" byteOrder="BE">
          <dmrpp:chunkDimensionSizes>2</dmrpp:chunkDimensionSizes>
          <dmrpp:chunk offset="100" nBytes="7" chunkPositionInArray="[2]"/>
        </dmrpp:chunks></Int16>"#;

    #[test]
    fn the_data_file_is_the_href_or_the_file_beside() {
        let url = |href: &str| {
            let (references, _) = described(&sidecar(href, &CHUNKED.replace("COMPRESSION", "deflate"))).unwrap();
            match references.get("v/1") {
                Some(kerchunk::Reference::Range { url, offset: 100, length: 7 }) => url.map(str::to_owned),
                other => panic!("{other:?}"),
            }
        };
        assert_eq!(url("").as_deref(), Some("data/f.h5"));
        assert_eq!(url(r#"dmrpp:href="OPeNDAP_DMRpp_DATA_ACCESS_URL""#).as_deref(), Some("data/f.h5"));
        assert_eq!(url(r#"dmrpp:href="https://host/x/f.h5""#).as_deref(), Some("https://host/x/f.h5"));
        // A relative href (a path in bes's catalog) naming the file beside.
        assert_eq!(url(r#"dmrpp:href="data/dmrpp/f.h5""#).as_deref(), Some("data/f.h5"));
        let error = described(&sidecar(r#"dmrpp:href="data/other.h5""#, "")).unwrap_err().to_string();
        assert!(error.contains("data/f.h5.dmrpp") && error.contains("\"data/other.h5\" is relative"), "{error}");
        let error = describe(sidecar("", "").as_bytes(), "f.xml", &ScanOptions::default()).err().unwrap().to_string();
        assert!(error.contains("does not end in .dmrpp"), "{error}");
    }

    #[test]
    fn big_endian_data_keeps_its_order_and_absent_chunks_the_fill() {
        let (references, skipped) =
            described(&sidecar("", &CHUNKED.replace("COMPRESSION", "shuffle deflate"))).unwrap();
        assert!(skipped.is_empty(), "{skipped:?}");
        let Some(kerchunk::Reference::Inline(zarray)) = references.get("v/.zarray") else { panic!() };
        let zarray: serde_json::Value = serde_json::from_slice(zarray).unwrap();
        assert_eq!(zarray["dtype"], ">i2");
        assert_eq!(zarray["fill_value"], -1);
        assert_eq!(
            zarray["filters"],
            serde_json::json!([{"id": "shuffle", "elementsize": 2}, {"id": "zlib", "level": 1}])
        );
        assert!(references.get("v/0").is_none());
    }

    #[test]
    fn what_references_cannot_say_is_refused_naming_it() {
        let reason = refused(&CHUNKED.replace("COMPRESSION", "szip"));
        assert!(reason.contains("the szip filter") && reason.contains("no codec"), "{reason}");
        let blocks = CHUNKED.replace("COMPRESSION", "deflate").replace(
            r#"chunkPositionInArray="[2]"/>"#,
            r#"chunkPositionInArray="[2]"><dmrpp:block offset="1" nBytes="2"/></dmrpp:chunk>"#,
        );
        assert!(refused(&blocks).contains("HDF4 linked blocks"));
        let relative =
            CHUNKED.replace("COMPRESSION", "deflate").replace(r#"offset="100""#, r#"href="x.h5" offset="100""#);
        assert!(refused(&relative).contains(r#"href "x.h5" is relative"#));
        let off_grid = CHUNKED.replace("COMPRESSION", "deflate").replace("[2]", "[1]");
        assert!(refused(&off_grid).contains("not on the chunk grid"));
        let order = CHUNKED.replace("COMPRESSION", "deflate").replace(r#"byteOrder="BE""#, r#"byteOrder="XE""#);
        assert!(refused(&order).contains("neither LE nor BE"));
        assert!(refused(r#"<Structure name="s"/>"#).contains("a Structure"));
        // An empty zlib stream for 8 bytes of values.
        let missing = r#"<Int16 name="v"><Dim size="4"/><dmrpp:missingdata>eJwDAAAAAAE=</dmrpp:missingdata></Int16>"#;
        assert!(refused(missing).contains("its dmrpp:missingdata holds 0 bytes for 8 bytes of values"));
        assert!(refused(r#"<Int16 name="v"><Dim name="/nowhere"/></Int16>"#).contains("declared nowhere"));
    }

    #[test]
    fn dimensions_resolve_through_enclosing_groups() {
        let body = r#"<Dimension name="x" size="3"/><Group name="g"><Dimension name="y" size="2"/>
            <Float32 name="v"><Dim name="y"/><Dim name="x"/><dmrpp:chunks fillValue="0"/></Float32></Group>"#;
        let (references, skipped) = described(&sidecar("", body)).unwrap();
        assert!(skipped.is_empty(), "{skipped:?}");
        let Some(kerchunk::Reference::Inline(attributes)) = references.get("g/v/.zattrs") else { panic!() };
        let attributes: serde_json::Value = serde_json::from_slice(attributes).unwrap();
        assert_eq!(attributes["_ARRAY_DIMENSIONS"], serde_json::json!(["g/y", "x"]));
    }

    #[test]
    fn documents_that_are_not_sidecars_are_errors() {
        for (document, why) in [
            ("<Dataset", "not XML"),
            ("<?xml version='1.0'?><html/>", "not DAP4's Dataset"),
            ("<!DOCTYPE x [<!ENTITY a 'b'>]><Dataset/>", "not XML"),
        ] {
            let error = described(document).err().unwrap();
            assert!(matches!(&error, ScanError::Dmrpp { reason, .. } if reason.contains(why)), "{error}");
        }
    }

    /// Hostile documents are errors or refusals, never a panic, an overflow or an allocation of
    /// what they claim.
    #[test]
    fn hostile_sidecars_are_refused() {
        let huge_chunks = r#"<Int32 name="v"><Dim size="1"/><Dim size="1"/><Dim size="1"/><dmrpp:chunks fillValue="0">
            <dmrpp:chunkDimensionSizes>4294967296 4294967296 4294967296</dmrpp:chunkDimensionSizes>
            <dmrpp:chunk offset="0" nBytes="4" chunkPositionInArray="[0,0,0]"/></dmrpp:chunks></Int32>"#;
        assert!(refused(huge_chunks).contains("hold more bytes than u64 counts"));
        let huge_shape =
            r#"<Int32 name="v"><Dim size="4294967296"/><Dim size="4294967296"/><dmrpp:chunks fillValue="0"/></Int32>"#;
        assert!(refused(huge_shape).contains("more bytes than u64 counts"));
        // 4 TiB of values claimed, held in the sidecar: refused before any is inflated.
        let claimed =
            r#"<Int32 name="v"><Dim size="1099511627776"/><dmrpp:missingdata>eJwDAAAAAAE=</dmrpp:missingdata></Int32>"#;
        assert!(refused(claimed).contains("more than the limit of"));
        let deep = format!("{}{}", "<Group name=\"g\">".repeat(5000), "</Group>".repeat(5000));
        let error = described(&sidecar("", &deep)).err().unwrap().to_string();
        assert!(error.contains("nested deeper than 256"), "{error}");
        let entities = r#"<?xml version="1.0"?><!DOCTYPE d [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;">]><Dataset>&b;</Dataset>"#;
        assert!(matches!(described(entities), Err(ScanError::Dmrpp { .. })));
    }
}
