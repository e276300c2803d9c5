//! A TIFF's image file directories (IFDs), classic or BigTIFF, in either
//! byte order: the tags a scan uses, read from the file without reading any
//! image data.
//!
//! Written here rather than taken from a crate: `async-tiff` (the async
//! reader made for COGs) panics on an entry of an unknown type and sizes a
//! map by a BigTIFF's declared entry count before reading any, so one
//! hostile file aborts the process; `tiff` (image-rs) reads through a
//! blocking `Read + Seek`, where a scan reads blocks of a remote object.
//! The format is a few dozen lines; every count and offset is checked
//! against the file and the header limit before it is used.

use std::collections::{BTreeMap, HashSet};

use bytes::Bytes;

use crate::read::BlockReader;

/// Tags a scan reads; the others are skipped without reading their values.
pub(crate) mod tag {
    pub(crate) const NEW_SUBFILE_TYPE: u16 = 254;
    pub(crate) const IMAGE_WIDTH: u16 = 256;
    pub(crate) const IMAGE_LENGTH: u16 = 257;
    pub(crate) const BITS_PER_SAMPLE: u16 = 258;
    pub(crate) const COMPRESSION: u16 = 259;
    pub(crate) const PHOTOMETRIC: u16 = 262;
    pub(crate) const FILL_ORDER: u16 = 266;
    pub(crate) const STRIP_OFFSETS: u16 = 273;
    pub(crate) const SAMPLES_PER_PIXEL: u16 = 277;
    pub(crate) const ROWS_PER_STRIP: u16 = 278;
    pub(crate) const STRIP_BYTE_COUNTS: u16 = 279;
    pub(crate) const PLANAR_CONFIGURATION: u16 = 284;
    pub(crate) const PREDICTOR: u16 = 317;
    pub(crate) const TILE_WIDTH: u16 = 322;
    pub(crate) const TILE_LENGTH: u16 = 323;
    pub(crate) const TILE_OFFSETS: u16 = 324;
    pub(crate) const TILE_BYTE_COUNTS: u16 = 325;
    pub(crate) const EXTRA_SAMPLES: u16 = 338;
    pub(crate) const SAMPLE_FORMAT: u16 = 339;
    pub(crate) const JPEG_TABLES: u16 = 347;
    pub(crate) const YCBCR_SUBSAMPLING: u16 = 530;
    pub(crate) const MODEL_PIXEL_SCALE: u16 = 33550;
    pub(crate) const MODEL_TIEPOINT: u16 = 33922;
    pub(crate) const MODEL_TRANSFORMATION: u16 = 34264;
    pub(crate) const GEO_KEY_DIRECTORY: u16 = 34735;
    pub(crate) const GEO_DOUBLE_PARAMS: u16 = 34736;
    pub(crate) const GEO_ASCII_PARAMS: u16 = 34737;
    pub(crate) const GDAL_METADATA: u16 = 42112;
    pub(crate) const GDAL_NODATA: u16 = 42113;

    /// Every tag above.
    pub(crate) const READ: [u16; 29] = [
        NEW_SUBFILE_TYPE,
        IMAGE_WIDTH,
        IMAGE_LENGTH,
        BITS_PER_SAMPLE,
        COMPRESSION,
        PHOTOMETRIC,
        FILL_ORDER,
        STRIP_OFFSETS,
        SAMPLES_PER_PIXEL,
        ROWS_PER_STRIP,
        STRIP_BYTE_COUNTS,
        PLANAR_CONFIGURATION,
        PREDICTOR,
        TILE_WIDTH,
        TILE_LENGTH,
        TILE_OFFSETS,
        TILE_BYTE_COUNTS,
        EXTRA_SAMPLES,
        SAMPLE_FORMAT,
        JPEG_TABLES,
        YCBCR_SUBSAMPLING,
        MODEL_PIXEL_SCALE,
        MODEL_TIEPOINT,
        MODEL_TRANSFORMATION,
        GEO_KEY_DIRECTORY,
        GEO_DOUBLE_PARAMS,
        GEO_ASCII_PARAMS,
        GDAL_METADATA,
        GDAL_NODATA,
    ];
}

/// At most this many IFDs are followed: a chain longer than any pyramid
/// (a 2^64-pixel image has 64 levels) is taken for a damaged file.
const MOST_IFDS: usize = 4096;

/// A TIFF's byte order, its kind, and its IFDs in file order.
#[derive(Debug)]
pub(crate) struct Tiff {
    /// Motorola (`MM`) byte order.
    pub(crate) big_endian: bool,
    /// 64-bit offsets (BigTIFF): its header is 16 bytes, not 8.
    pub(crate) wide_offsets: bool,
    /// The directories, in the order the chain links them.
    pub(crate) ifds: Vec<Ifd>,
}

/// One IFD: the values of the tags a scan reads.
#[derive(Debug)]
pub(crate) struct Ifd {
    /// Where it starts in the file.
    pub(crate) offset: u64,
    values: BTreeMap<u16, Value>,
}

/// A tag's value, by the kind of its TIFF type.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Value {
    /// BYTE, SHORT, LONG, LONG8, IFD, IFD8.
    Unsigned(Vec<u64>),
    /// SBYTE, SSHORT, SLONG, SLONG8.
    Signed(Vec<i64>),
    /// FLOAT, DOUBLE, RATIONAL, SRATIONAL.
    Float(Vec<f64>),
    /// ASCII, up to its first NUL.
    Ascii(String),
    /// UNDEFINED: bytes (JPEG tables).
    Bytes(Bytes),
}

impl Ifd {
    /// The tag's unsigned integers, if it has them (`None` for another kind).
    pub(crate) fn unsigned(&self, tag: u16) -> Option<&[u64]> {
        match self.values.get(&tag)? {
            Value::Unsigned(values) => Some(values),
            _ => None,
        }
    }

    /// The tag's first unsigned integer, or `default` where the tag is absent.
    pub(crate) fn first(&self, tag: u16, default: u64) -> u64 {
        self.unsigned(tag).and_then(|v| v.first().copied()).unwrap_or(default)
    }

    /// The tag's numbers as floats (integers converted), if any.
    pub(crate) fn floats(&self, tag: u16) -> Option<Vec<f64>> {
        match self.values.get(&tag)? {
            Value::Float(values) => Some(values.clone()),
            #[allow(clippy::cast_precision_loss)] // Tags of this kind hold small counts, not data.
            Value::Unsigned(values) => Some(values.iter().map(|&v| v as f64).collect()),
            #[allow(clippy::cast_precision_loss)]
            Value::Signed(values) => Some(values.iter().map(|&v| v as f64).collect()),
            _ => None,
        }
    }

    /// The tag's text, if it is ASCII.
    pub(crate) fn text(&self, tag: u16) -> Option<&str> {
        match self.values.get(&tag)? {
            Value::Ascii(text) => Some(text),
            _ => None,
        }
    }

    /// The tag's bytes (UNDEFINED, or BYTE values).
    pub(crate) fn bytes(&self, tag: u16) -> Option<Bytes> {
        match self.values.get(&tag)? {
            Value::Bytes(bytes) => Some(bytes.clone()),
            Value::Unsigned(values) => {
                values.iter().map(|&v| u8::try_from(v).ok()).collect::<Option<Vec<u8>>>().map(Bytes::from)
            }
            _ => None,
        }
    }
}

/// What [`read`] found wrong, or the read error that stopped it.
#[derive(Debug)]
pub(crate) enum IfdError {
    /// Not a TIFF, or a damaged one: what and where.
    Malformed(String),
    /// The IFDs and their values pass the header limit.
    TooLarge,
    /// The file could not be read.
    Read(crate::ScanError),
}

impl From<crate::ScanError> for IfdError {
    fn from(error: crate::ScanError) -> Self {
        Self::Read(error)
    }
}

/// Whether `first` (a file's first bytes) starts a TIFF or BigTIFF.
pub(crate) fn is_tiff(first: &[u8]) -> bool {
    matches!(first.get(..4), Some(b"II*\0" | b"MM\0*" | b"II+\0" | b"MM\0+"))
}

/// Reads the header and every IFD of the chain, reading at most
/// `most_bytes` of directories and out-of-line values.
pub(crate) async fn read(reader: &mut BlockReader<'_>, most_bytes: u64) -> Result<Tiff, IfdError> {
    let size = reader.size();
    let malformed = |reason: String| IfdError::Malformed(reason);
    if size < 8 {
        return Err(malformed(format!("{size} bytes is too short for a TIFF header")));
    }
    let head = reader.read(0..size.min(16)).await?;
    let big_endian = match &head[..2] {
        b"II" => false,
        b"MM" => true,
        _ => return Err(malformed("it starts with neither II nor MM".into())),
    };
    let order = Order { big_endian };
    let (big_tiff, first) = match order.u16(&head[2..4]) {
        42 => (false, u64::from(order.u32(&head[4..8]))),
        43 => {
            if head.len() < 16 || order.u16(&head[4..6]) != 8 {
                return Err(malformed("a BigTIFF header whose offsets are not 8 bytes".into()));
            }
            (true, order.u64(&head[8..16]))
        }
        other => return Err(malformed(format!("version {other} in its header (42 is TIFF, 43 BigTIFF)"))),
    };
    let layout = Layout { order, big_tiff };
    let mut budget = Budget { left: most_bytes };
    let mut seen = HashSet::new();
    let mut ifds = Vec::new();
    let mut next = first;
    while next != 0 {
        if !seen.insert(next) {
            return Err(malformed(format!("the IFD chain loops back to the IFD at byte {next}")));
        }
        if ifds.len() == MOST_IFDS {
            return Err(malformed(format!("more than {MOST_IFDS} IFDs")));
        }
        let (ifd, after) = read_ifd(reader, &layout, next, &mut budget).await?;
        ifds.push(ifd);
        next = after;
    }
    if ifds.is_empty() {
        return Err(malformed("it has no IFD".into()));
    }
    Ok(Tiff { big_endian, wide_offsets: big_tiff, ifds })
}

/// The bytes left to read of directories and values.
struct Budget {
    left: u64,
}

impl Budget {
    fn take(&mut self, bytes: u64) -> Result<(), IfdError> {
        self.left = self.left.checked_sub(bytes).ok_or(IfdError::TooLarge)?;
        Ok(())
    }
}

#[derive(Clone, Copy)]
struct Order {
    big_endian: bool,
}

impl Order {
    fn u16(self, b: &[u8]) -> u16 {
        let b = [b[0], b[1]];
        if self.big_endian { u16::from_be_bytes(b) } else { u16::from_le_bytes(b) }
    }

    fn u32(self, b: &[u8]) -> u32 {
        let b = [b[0], b[1], b[2], b[3]];
        if self.big_endian { u32::from_be_bytes(b) } else { u32::from_le_bytes(b) }
    }

    fn u64(self, b: &[u8]) -> u64 {
        let b: [u8; 8] = b[..8].try_into().unwrap_or_default();
        if self.big_endian { u64::from_be_bytes(b) } else { u64::from_le_bytes(b) }
    }
}

struct Layout {
    order: Order,
    big_tiff: bool,
}

impl Layout {
    /// Bytes of the entry count, of one entry, and of an offset.
    fn sizes(&self) -> (usize, usize, usize) {
        if self.big_tiff { (8, 20, 8) } else { (2, 12, 4) }
    }

    fn offset(&self, b: &[u8]) -> u64 {
        if self.big_tiff { self.order.u64(b) } else { u64::from(self.order.u32(b)) }
    }
}

/// One IFD at `at`, and the offset of the next (0 for none).
async fn read_ifd(
    reader: &mut BlockReader<'_>,
    layout: &Layout,
    at: u64,
    budget: &mut Budget,
) -> Result<(Ifd, u64), IfdError> {
    let size = reader.size();
    let (count_width, entry_width, offset_width) = layout.sizes();
    let (count_bytes, entry_bytes, offset_bytes) = (count_width as u64, entry_width as u64, offset_width as u64);
    let past = |what: &str| IfdError::Malformed(format!("{what} at byte {at} runs past the end of the file ({size})"));
    if at.checked_add(count_bytes).is_none_or(|end| end > size) {
        return Err(past("an IFD"));
    }
    let count_raw = reader.read(at..at + count_bytes).await?;
    let count = if layout.big_tiff { layout.order.u64(&count_raw) } else { u64::from(layout.order.u16(&count_raw)) };
    let length = count.checked_mul(entry_bytes).and_then(|n| n.checked_add(count_bytes + offset_bytes));
    let Some(end) = length.and_then(|n| at.checked_add(n)).filter(|&end| end <= size) else {
        return Err(past(&format!("an IFD of {count} entries")));
    };
    budget.take(end - at)?;
    let table = reader.read(at + count_bytes..end).await?;
    let mut values = BTreeMap::new();
    for entry in table[..table.len() - offset_width].chunks_exact(entry_width) {
        let tag = layout.order.u16(&entry[0..2]);
        if !tag::READ.contains(&tag) {
            continue;
        }
        let kind = layout.order.u16(&entry[2..4]);
        let Some(width) = type_width(kind) else { continue };
        let (count, inline) = if layout.big_tiff {
            (layout.order.u64(&entry[4..12]), &entry[12..20])
        } else {
            (u64::from(layout.order.u32(&entry[4..8])), &entry[8..12])
        };
        let Some(bytes) = count.checked_mul(width) else {
            return Err(IfdError::Malformed(format!("tag {tag} of the IFD at byte {at} declares {count} values")));
        };
        let raw = if bytes <= offset_bytes {
            Bytes::copy_from_slice(&inline[..usize::try_from(bytes).unwrap_or(0)])
        } else {
            let from = layout.offset(inline);
            if from.checked_add(bytes).is_none_or(|end| end > size) {
                return Err(IfdError::Malformed(format!(
                    "tag {tag} of the IFD at byte {at}: its {bytes} bytes at byte {from} run past the end of the file ({size})"
                )));
            }
            budget.take(bytes)?;
            reader.read(from..from + bytes).await?
        };
        values.insert(tag, decode(layout.order, kind, &raw));
    }
    let next = layout.offset(&table[table.len() - offset_width..]);
    Ok((Ifd { offset: at, values }, next))
}

/// Bytes of one value of TIFF type `kind`; `None` for a type TIFF does not define.
fn type_width(kind: u16) -> Option<u64> {
    Some(match kind {
        1 | 2 | 6 | 7 => 1,
        3 | 8 => 2,
        4 | 9 | 11 | 13 => 4,
        5 | 10 | 12 | 16 | 17 | 18 => 8,
        _ => return None,
    })
}

fn decode(order: Order, kind: u16, raw: &[u8]) -> Value {
    match kind {
        1 => Value::Unsigned(raw.iter().map(|&b| u64::from(b)).collect()),
        3 => Value::Unsigned(raw.chunks_exact(2).map(|b| u64::from(order.u16(b))).collect()),
        4 | 13 => Value::Unsigned(raw.chunks_exact(4).map(|b| u64::from(order.u32(b))).collect()),
        16 | 18 => Value::Unsigned(raw.chunks_exact(8).map(|b| order.u64(b)).collect()),
        6 => Value::Signed(raw.iter().map(|&b| i64::from(b.cast_signed())).collect()),
        8 => Value::Signed(raw.chunks_exact(2).map(|b| i64::from(order.u16(b).cast_signed())).collect()),
        9 => Value::Signed(raw.chunks_exact(4).map(|b| i64::from(order.u32(b).cast_signed())).collect()),
        17 => Value::Signed(raw.chunks_exact(8).map(|b| order.u64(b).cast_signed()).collect()),
        11 => Value::Float(raw.chunks_exact(4).map(|b| f64::from(f32::from_bits(order.u32(b)))).collect()),
        12 => Value::Float(raw.chunks_exact(8).map(|b| f64::from_bits(order.u64(b))).collect()),
        5 => Value::Float(
            raw.chunks_exact(8).map(|b| f64::from(order.u32(&b[..4])) / f64::from(order.u32(&b[4..]))).collect(),
        ),
        10 => Value::Float(
            raw.chunks_exact(8)
                .map(|b| f64::from(order.u32(&b[..4]).cast_signed()) / f64::from(order.u32(&b[4..]).cast_signed()))
                .collect(),
        ),
        2 => {
            let text = raw.split(|&b| b == 0).next().unwrap_or_default();
            Value::Ascii(String::from_utf8_lossy(text).into_owned())
        }
        _ => Value::Bytes(Bytes::copy_from_slice(raw)),
    }
}
