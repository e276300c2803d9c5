//! Zarr V2 chunk grids: how many chunks an array has along each dimension,
//! and where a chunk key sits in C order. Shared by the in-memory reference
//! table and fsspec's parquet layout; pure, no I/O. Zarr V3 arrays' grids too
//! (regular or rectilinear, default chunk keys `c/0/1`), for parquet roots of
//! Zarr V3 sets.

use std::ops::Range;

use serde_json::Value;

/// Why a `.zarray` has no usable chunk grid, or a region does not fit it.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum GridError {
    /// The field (`shape` or `chunks`) is not a list.
    #[error("\"{0}\" must be a list")]
    NotAList(&'static str),
    /// The field holds something other than non-negative integers.
    #[error("\"{0}\" must hold non-negative integers")]
    NotNonNegative(&'static str),
    /// `shape` and `chunks` have different numbers of dimensions.
    #[error("\"shape\" has {shape} dimensions but \"chunks\" {chunks}")]
    Dimensions {
        /// Dimensions of `shape`.
        shape: usize,
        /// Dimensions of `chunks`.
        chunks: usize,
    },
    /// `dimension_separator` is neither `.` nor `/`; what it is.
    #[error("\"dimension_separator\" must be \".\" or \"/\", found {0}")]
    Separator(Value),
    /// A chunk length of 0 for a dimension of non-zero length.
    #[error("a chunk length of 0 for a non-empty dimension")]
    EmptyChunk,
    /// The grid has more chunks than a `u64` counts.
    #[error("the chunk grid is too large")]
    TooLarge,
    /// A region with another number of dimensions than the array.
    #[error("the region has {region} dimensions but the array {array}")]
    RegionDimensions {
        /// Dimensions of the region.
        region: usize,
        /// Dimensions of the array.
        array: usize,
    },
    /// The `.zarray` is not JSON (bare `NaN` and `Infinity` accepted).
    #[error("the .zarray is not JSON: {0}")]
    NotJson(#[source] serde_json::Error),
    /// A Zarr V3 `zarr.json` whose grid is not one read here (a regular or a rectilinear one,
    /// with default chunk keys): why.
    #[error("the zarr.json's chunk grid is not read here: {0}")]
    V3Grid(String),
    /// A region of a rectilinear grid, whose chunks are not one length: not laid on it here.
    #[error("a rectilinear chunk grid's chunks are not one length to lay a region on")]
    Rectilinear,
    /// A region that reaches past the end of a dimension.
    #[error("the region {range:?} reaches past dimension {dimension}, of length {length}")]
    RegionPastEnd {
        /// The region's range in that dimension.
        range: Range<u64>,
        /// The dimension.
        dimension: usize,
        /// Its length.
        length: u64,
    },
}

/// What a `.zarray` says of its chunk grid.
#[derive(serde::Deserialize)]
struct GridFields {
    shape: Vec<u64>,
    chunks: Vec<u64>,
    #[serde(default)]
    dimension_separator: Option<String>,
}

/// The chunk grid of one array, read from its `.zarray`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ChunkGrid {
    /// The number of chunks along each dimension (`[]` for a scalar).
    dims: Vec<u64>,
    /// The array's shape and its chunks' shape, in elements.
    shape: Vec<u64>,
    chunk_shape: Vec<u64>,
    /// What joins the indices of a chunk key: `.` (`0.1.2`) or `/` (`0/1/2`).
    separator: char,
    /// The number of chunks; fits in a `u64` by construction.
    count: u64,
    /// Whether its chunk keys are Zarr V3's default ones (`c/0/1`, `c` for a 0-d array).
    v3: bool,
    /// Whether its chunks are of several lengths along an axis (a V3 rectilinear grid).
    rectilinear: bool,
}

impl ChunkGrid {
    /// The grid of a `.zarray` document: `shape`, `chunks` and `dimension_separator`.
    ///
    /// # Errors
    /// [`GridError`] naming the field that is missing or malformed.
    pub fn from_zarray(zarray: &Value) -> Result<Self, GridError> {
        Self::from_zarray_value(zarray)
    }

    /// The grid of the `.zarray` document `document`, as a reader finds it
    /// (bare `NaN` and `Infinity` accepted): the one parse of a `.zarray`
    /// that sources, stores and tools share.
    ///
    /// # Errors
    /// [`GridError::NotJson`] if it is not JSON; else as [`from_zarray`](Self::from_zarray).
    pub fn from_zarray_document(document: &[u8]) -> Result<Self, GridError> {
        // The three fields alone, skipping the rest unbuilt: a set's every array is read so. A
        // document this cannot take (bare NaN, a field of another type) is read whole, which
        // finds what is wrong with it.
        if let Ok(fields) = serde_json::from_slice::<GridFields>(document) {
            let separator = match fields.dimension_separator.as_deref() {
                None | Some(".") => Some('.'),
                Some("/") => Some('/'),
                Some(_) => None,
            };
            if let Some(separator) = separator {
                return Self::from_parts(fields.shape, fields.chunks, separator);
            }
        }
        Self::from_zarray_value(&super::lenient::parse_json_lenient(document).map_err(GridError::NotJson)?)
    }

    fn from_zarray_value(zarray: &Value) -> Result<Self, GridError> {
        let dims = |name: &'static str| -> Result<Vec<u64>, GridError> {
            zarray
                .get(name)
                .and_then(Value::as_array)
                .ok_or(GridError::NotAList(name))?
                .iter()
                .map(|v| v.as_u64().ok_or(GridError::NotNonNegative(name)))
                .collect()
        };
        let (shape, chunks) = (dims("shape")?, dims("chunks")?);
        let separator = match zarray.get("dimension_separator") {
            None | Some(Value::Null) => '.',
            Some(Value::String(s)) if s == "." => '.',
            Some(Value::String(s)) if s == "/" => '/',
            Some(other) => return Err(GridError::Separator(other.clone())),
        };
        Self::from_parts(shape, chunks, separator)
    }

    fn from_parts(shape: Vec<u64>, chunks: Vec<u64>, separator: char) -> Result<Self, GridError> {
        if shape.len() != chunks.len() {
            return Err(GridError::Dimensions { shape: shape.len(), chunks: chunks.len() });
        }
        let dims = shape
            .iter()
            .zip(&chunks)
            .map(|(&s, &c)| match (s, c) {
                (0, _) => Ok(0),
                (_, 0) => Err(GridError::EmptyChunk),
                _ => Ok(s.div_ceil(c)),
            })
            .collect::<Result<Vec<u64>, GridError>>()?;
        let count = dims.iter().try_fold(1u64, |n, &d| n.checked_mul(d)).ok_or(GridError::TooLarge)?;
        Ok(Self { dims, shape, chunk_shape: chunks, separator, count, v3: false, rectilinear: false })
    }

    /// The grid of a Zarr V3 array's `zarr.json`: a regular grid, or a rectilinear one (each
    /// axis one length, or a list of lengths and `[length, count]` runs), with V3's default
    /// chunk keys.
    ///
    /// # Errors
    /// [`GridError::V3Grid`] naming what is not read: another grid or chunk key encoding, a
    /// shape or chunk lengths that are not whole numbers; [`GridError::TooLarge`].
    pub fn from_zarr_json(node: &Value) -> Result<Self, GridError> {
        let fail = |reason: &str| GridError::V3Grid(reason.to_owned());
        let shape: Vec<u64> = serde_json::from_value(node["shape"].clone()).map_err(|_| fail("its shape"))?;
        if node["chunk_key_encoding"]["name"].as_str() != Some("default")
            || !matches!(node["chunk_key_encoding"]["configuration"]["separator"].as_str(), None | Some("/"))
        {
            return Err(fail("its chunk key encoding is not the default one with /"));
        }
        let configuration = &node["chunk_grid"]["configuration"];
        let (extents, rectilinear) = match node["chunk_grid"]["name"].as_str() {
            Some("regular") => (&configuration["chunk_shape"], false),
            Some("rectilinear") => (&configuration["chunk_shapes"], true),
            _ => return Err(fail("neither regular nor rectilinear")),
        };
        let extents = extents.as_array().filter(|e| e.len() == shape.len()).ok_or_else(|| fail("its chunks"))?;
        let mut dims = Vec::with_capacity(shape.len());
        let mut chunk_shape = Vec::with_capacity(shape.len());
        for (extent, &length) in extents.iter().zip(&shape) {
            let (count, first) = match extent {
                Value::Number(chunk) => {
                    let chunk = chunk.as_u64().filter(|&c| c > 0).ok_or_else(|| fail("a chunk length"))?;
                    (length.div_ceil(chunk), chunk)
                }
                Value::Array(runs) => {
                    let mut count = 0u64;
                    for run in runs {
                        count = count
                            .checked_add(match run {
                                Value::Array(pair) => {
                                    pair.get(1).and_then(Value::as_u64).ok_or_else(|| fail("a run"))?
                                }
                                _ => 1,
                            })
                            .ok_or(GridError::TooLarge)?;
                    }
                    let first = runs.first().and_then(|run| run.as_u64().or_else(|| run.get(0)?.as_u64()));
                    (count, first.unwrap_or(1))
                }
                _ => return Err(fail("its chunks")),
            };
            dims.push(count);
            chunk_shape.push(first);
        }
        let count = dims.iter().try_fold(1u64, |n, &d| n.checked_mul(d)).ok_or(GridError::TooLarge)?;
        Ok(Self { dims, shape, chunk_shape, separator: '/', count, v3: true, rectilinear })
    }

    /// The same grid with chunk keys joined by `.`, whatever the array declares:
    /// fsspec's parquet layout always splits chunk keys on `.`.
    #[cfg(feature = "parquet")]
    #[must_use]
    pub fn dotted(mut self) -> Self {
        if !self.v3 {
            self.separator = '.';
        }
        self
    }

    /// Whether its chunk keys are Zarr V3's default ones (`c/0/1`).
    #[must_use]
    pub fn is_v3(&self) -> bool {
        self.v3
    }

    /// The number of chunks along each dimension.
    #[must_use]
    pub fn dims(&self) -> &[u64] {
        &self.dims
    }

    /// The total number of chunks.
    #[must_use]
    pub fn count(&self) -> u64 {
        self.count
    }

    /// What joins the indices of a chunk key.
    #[must_use]
    pub fn separator(&self) -> char {
        self.separator
    }

    /// The C-order position of the chunk named `chunk` (the part of the key
    /// after `<array>/`), if it names a chunk inside the grid.
    ///
    /// `canonical` requires indices written as Zarr writes them (no sign, no
    /// leading zero), so that exactly one key names each position. Without it,
    /// any run of digits is read as Python's `int` would, as fsspec's parquet
    /// layout does.
    #[must_use]
    pub fn position(&self, chunk: &str, canonical: bool) -> Option<u64> {
        let chunk = if self.v3 {
            if self.dims.is_empty() {
                return (chunk == "c").then_some(0);
            }
            chunk.strip_prefix("c/")?
        } else {
            chunk
        };
        if self.dims.is_empty() {
            return (chunk == "0").then_some(0);
        }
        // One pass over the bytes: at a million keys a document's load time is
        // counted in instructions per key, and splitting and parsing each part
        // costs several times this.
        let separator = if self.separator == '/' { b'/' } else { b'.' };
        let mut rest = chunk.as_bytes();
        let mut linear = 0u64;
        for (dimension, &n) in self.dims.iter().enumerate() {
            if dimension > 0 {
                rest = rest.strip_prefix(&[separator])?;
            }
            let (mut i, mut digits) = (0u64, 0);
            for &b in rest {
                let digit = b.wrapping_sub(b'0');
                if digit > 9 {
                    break;
                }
                // An index that overflows is past every grid.
                i = i.checked_mul(10)?.checked_add(u64::from(digit))?;
                digits += 1;
            }
            if digits == 0 || (canonical && digits > 1 && rest[0] == b'0') || i >= n {
                return None;
            }
            linear = linear * n + i;
            rest = &rest[digits..];
        }
        rest.is_empty().then_some(linear)
    }

    /// The names of the chunks that hold part of `region` (a range of element
    /// indices along each dimension), in C order.
    ///
    /// # Errors
    /// [`GridError`] if `region` has the wrong number of dimensions or reaches past the array.
    pub fn chunk_names_in(&self, region: &[Range<u64>]) -> Result<Vec<String>, GridError> {
        if self.rectilinear {
            return Err(GridError::Rectilinear);
        }
        if region.len() != self.shape.len() {
            return Err(GridError::RegionDimensions { region: region.len(), array: self.shape.len() });
        }
        let mut spans = Vec::with_capacity(region.len());
        for (d, ((range, &length), &chunk)) in region.iter().zip(&self.shape).zip(&self.chunk_shape).enumerate() {
            if range.end > length {
                return Err(GridError::RegionPastEnd { range: range.clone(), dimension: d, length });
            }
            if range.start >= range.end {
                return Ok(Vec::new());
            }
            spans.push(range.start / chunk..(range.end - 1) / chunk + 1);
        }
        // An odometer over the chunk indices, the last dimension fastest.
        let mut index: Vec<u64> = spans.iter().map(|s| s.start).collect();
        let mut names = Vec::new();
        loop {
            let parts: Vec<String> = index.iter().map(u64::to_string).collect();
            let name = if parts.is_empty() { "0".to_owned() } else { parts.join(&self.separator.to_string()) };
            names.push(match (self.v3, parts.is_empty()) {
                (false, _) => name,
                (true, true) => "c".to_owned(),
                (true, false) => format!("c/{name}"),
            });
            let Some(d) = (0..index.len()).rev().find(|&d| index[d] + 1 < spans[d].end) else {
                return Ok(names);
            };
            index[d] += 1;
            for (i, span) in index.iter_mut().zip(&spans).skip(d + 1) {
                *i = span.start;
            }
        }
    }

    /// The indices of the chunk at C-order `position` (the inverse of
    /// [`position`](Self::position)), if it lies inside the grid: none for the
    /// one chunk of an array without dimensions.
    ///
    /// ```
    /// use kerchunk::zarr::ChunkGrid;
    ///
    /// let zarray = br#"{"shape":[4,6],"chunks":[2,2],"dtype":"<i2","fill_value":null,"compressor":null,"filters":null,"order":"C","zarr_format":2}"#;
    /// let grid = ChunkGrid::from_zarray_document(zarray)?;
    /// assert_eq!(grid.indices(4), Some(vec![1, 1]));
    /// assert_eq!(grid.position("1.1", true), Some(4));
    /// assert_eq!(grid.indices(6), None);
    /// # Ok::<(), kerchunk::zarr::GridError>(())
    /// ```
    #[must_use]
    pub fn indices(&self, position: u64) -> Option<Vec<u64>> {
        if position >= self.count {
            return None;
        }
        let mut indices = vec![0; self.dims.len()];
        let mut rest = position;
        // Inside the grid, no dimension has zero chunks.
        for (index, &n) in indices.iter_mut().zip(&self.dims).rev() {
            *index = rest % n;
            rest /= n;
        }
        Some(indices)
    }

    /// The chunk name (`i.j.k`) at C-order `position`, if it lies inside the grid.
    #[must_use]
    pub fn chunk_name(&self, position: u64) -> Option<String> {
        let mut name = String::with_capacity(self.dims.len() * 4);
        self.push_chunk_name(position, &mut name).then_some(name)
    }

    /// Append the chunk name at C-order `position` to `out`; `false` (and
    /// nothing appended) if it lies outside the grid. Writing 10^5 keys, the
    /// formatting machinery and allocations per name were a quarter of the
    /// time of writing a scanned file's references.
    pub fn push_chunk_name(&self, position: u64, out: &mut String) -> bool {
        if position >= self.count {
            return false;
        }
        if self.v3 {
            out.push('c');
            if self.dims.is_empty() {
                return true;
            }
            out.push('/');
        }
        if self.dims.is_empty() {
            out.push('0');
            return true;
        }
        // Digits and separators from the end of the name backwards, on the
        // stack unless the name could be longer (20 digits and a separator a dimension).
        let mut stack = [0u8; 256];
        let mut heap = Vec::new();
        let buffer: &mut [u8] = if self.dims.len() * 21 <= stack.len() {
            &mut stack
        } else {
            heap.resize(self.dims.len() * 21, 0);
            &mut heap
        };
        let separator = u8::try_from(self.separator).unwrap_or(b'.');
        let mut end = buffer.len();
        let mut rest = position;
        for (d, &n) in self.dims.iter().enumerate().rev() {
            let mut value = rest % n;
            rest /= n;
            loop {
                end -= 1;
                buffer[end] = b'0' + u8::try_from(value % 10).unwrap_or(0);
                value /= 10;
                if value == 0 {
                    break;
                }
            }
            if d > 0 {
                end -= 1;
                buffer[end] = separator;
            }
        }
        out.push_str(std::str::from_utf8(&buffer[end..]).unwrap_or_default());
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn grid(zarray: &Value) -> ChunkGrid {
        ChunkGrid::from_zarray(zarray).unwrap()
    }

    /// [`ChunkGrid::position`] as it was first written: split on the
    /// separator, then check and parse each part.
    fn position_by_splitting(g: &ChunkGrid, chunk: &str, canonical: bool) -> Option<u64> {
        if g.dims.is_empty() {
            return (chunk == "0").then_some(0);
        }
        let mut parts = chunk.split(g.separator);
        let mut linear = 0u64;
        for &n in &g.dims {
            let part = parts.next()?;
            let well_formed = !part.is_empty()
                && part.bytes().all(|b| b.is_ascii_digit())
                && !(canonical && part.len() > 1 && part.starts_with('0'));
            if !well_formed {
                return None;
            }
            let i: u64 = part.parse().ok()?;
            if i >= n {
                return None;
            }
            linear = linear * n + i;
        }
        parts.next().is_none().then_some(linear)
    }

    /// A V3 rectilinear grid: its chunks counted from the runs, its keys `c/i/j`, named back from
    /// their positions; a region is not laid on it.
    #[test]
    fn v3_grids_name_their_chunks_as_v3_does() {
        let node = json!({"shape": [90, 4], "chunk_key_encoding": {"name": "default", "configuration": {"separator": "/"}},
            "chunk_grid": {"name": "rectilinear", "configuration": {"kind": "inline",
            "chunk_shapes": [[[10, 3], 1, [10, 2], 8, [10, 4]], [4]]}}});
        let g = ChunkGrid::from_zarr_json(&node).unwrap();
        assert_eq!((g.dims(), g.count(), g.is_v3()), (&[11, 1][..], 11, true));
        assert_eq!(g.position("c/10/0", true), Some(10));
        assert_eq!((g.position("10.0", false), g.position("c/11/0", false)), (None, None));
        assert_eq!(g.chunk_name(10).as_deref(), Some("c/10/0"));
        assert!(matches!(g.chunk_names_in(&[0..5, 0..4]), Err(GridError::Rectilinear)));
        let scalar = json!({"shape": [], "chunk_key_encoding": {"name": "default"},
            "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": []}}});
        let g = ChunkGrid::from_zarr_json(&scalar).unwrap();
        assert_eq!((g.chunk_name(0).as_deref(), g.position("c", true)), (Some("c"), Some(0)));
        let v2_keys = json!({"shape": [4], "chunk_key_encoding": {"name": "v2"},
            "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [2]}}});
        assert!(matches!(ChunkGrid::from_zarr_json(&v2_keys), Err(GridError::V3Grid(_))));
    }

    #[test]
    fn position_agrees_with_splitting_on_the_separator() {
        let grids = [
            grid(&json!({"shape": [5, 6], "chunks": [2, 4]})),
            grid(&json!({"shape": [5, 6], "chunks": [2, 4], "dimension_separator": "/"})),
            grid(&json!({"shape": [100], "chunks": [1]})),
            grid(&json!({"shape": [], "chunks": []})),
            grid(&json!({"shape": [u64::MAX, 1, 1], "chunks": [1, 1, 1]})),
        ];
        let names = [
            "",
            "0",
            "1",
            "00",
            "01",
            "0.0",
            "2.1",
            "3.0",
            "0.2",
            "0/0",
            "2/1",
            "1.1.",
            ".1.1",
            "1..1",
            "1.1.1",
            "1/1/",
            "+1.1",
            "-0.1",
            "1 .1",
            "1.1 ",
            "a.1",
            "1.a",
            "٣.1",
            "99",
            "100",
            "18446744073709551614.2.0",
            "18446744073709551614.0.0",
            "18446744073709551615.0.0",
            "18446744073709551616.0.0",
            "99999999999999999999999.0.0",
            "0007.0.0",
        ];
        for g in &grids {
            for name in names {
                for canonical in [true, false] {
                    assert_eq!(
                        g.position(name, canonical),
                        position_by_splitting(g, name, canonical),
                        "{name} in {g:?}"
                    );
                }
            }
        }
    }

    #[test]
    fn positions_and_names_invert() {
        let g = grid(&json!({"shape": [5, 6], "chunks": [2, 4]}));
        assert_eq!((g.dims(), g.count(), g.separator()), (&[3, 2][..], 6, '.'));
        for position in 0..6 {
            let name = g.chunk_name(position).unwrap();
            assert_eq!(g.position(&name, true), Some(position), "{name}");
        }
        assert_eq!(g.chunk_name(6), None);
        let nested = grid(&json!({"shape": [5, 6], "chunks": [2, 4], "dimension_separator": "/"}));
        assert_eq!(nested.chunk_name(3).as_deref(), Some("1/1"));
        assert_eq!(nested.position("1/1", true), Some(3));
        assert_eq!(nested.position("1.1", true), None);
        let scalar = grid(&json!({"shape": [], "chunks": []}));
        assert_eq!((scalar.count(), scalar.chunk_name(0).as_deref()), (1, Some("0")));
        assert_eq!(scalar.position("0", true), Some(0));
    }

    /// Names with indices of many digits, in every dimension, each the
    /// index's decimal text; appended to what the string held.
    #[test]
    fn names_are_the_indices_in_decimal() {
        let g =
            grid(&json!({"shape": [12_345_678_901_u64, 17, 1000], "chunks": [1, 1, 7], "dimension_separator": "/"}));
        let mut name = String::from("var/");
        assert!(g.push_chunk_name(g.count() - 1, &mut name));
        assert_eq!(name, "var/12345678900/16/142");
        for position in [0, 1, 142, 143, 17 * 143, 17 * 143 * 9_999 + 5 * 143 + 77] {
            let (i, j, k) = (position / (17 * 143), position / 143 % 17, position % 143);
            assert_eq!(g.chunk_name(position), Some(format!("{i}/{j}/{k}")), "{position}");
        }
        let mut untouched = String::from("x");
        assert!(!g.push_chunk_name(g.count(), &mut untouched));
        assert_eq!(untouched, "x");
    }

    #[test]
    #[expect(clippy::single_range_in_vec_init, reason = "a one-dimensional region")]
    fn chunks_of_a_region() {
        let g = grid(&json!({"shape": [5, 6], "chunks": [2, 4], "dimension_separator": "/"}));
        assert_eq!(g.chunk_names_in(&[1..4, 3..5]).unwrap(), ["0/0", "0/1", "1/0", "1/1"]);
        assert_eq!(g.chunk_names_in(&[4..5, 0..6]).unwrap(), ["2/0", "2/1"]);
        assert_eq!(g.chunk_names_in(&[2..2, 0..6]).unwrap(), Vec::<String>::new());
        assert!(g.chunk_names_in(&[0..6, 0..1]).unwrap_err().to_string().contains("dimension 0, of length 5"));
        assert!(g.chunk_names_in(&[0..1]).unwrap_err().to_string().contains("1 dimensions but the array 2"));
        let scalar = grid(&json!({"shape": [], "chunks": []}));
        assert_eq!(scalar.chunk_names_in(&[]).unwrap(), ["0"]);
    }

    #[test]
    fn canonical_names_only_when_asked() {
        let g = grid(&json!({"shape": [20], "chunks": [1]}));
        assert_eq!(g.position("07", false), Some(7));
        assert_eq!(g.position("07", true), None);
        assert_eq!(g.position("0", true), Some(0));
        for outside in ["20", "-1", "+1", "x", "", "1.0", "1."] {
            assert_eq!(g.position(outside, false), None, "{outside}");
        }
    }

    #[test]
    fn bad_grids() {
        for (zarray, needle) in [
            (json!({"shape": [3], "chunks": [0]}), "chunk length"),
            (json!({"shape": [3, 3], "chunks": [1]}), "dimensions"),
            (json!({"chunks": [1]}), "\"shape\""),
            (json!({"shape": [3], "chunks": [1], "dimension_separator": "-"}), "dimension_separator"),
            (json!({"shape": [u64::MAX, u64::MAX], "chunks": [1, 1]}), "too large"),
        ] {
            let err = ChunkGrid::from_zarray(&zarray).unwrap_err().to_string();
            assert!(err.contains(needle), "{zarray}: {err}");
        }
        let empty = grid(&json!({"shape": [0, 9], "chunks": [0, 9]}));
        assert_eq!(empty.count(), 0);
    }

    /// `indices` reads a position back as the chunk's name writes it, in C order (the last
    /// dimension fastest), at every position of the grid, and nothing past it.
    #[test]
    fn indices_read_a_position_as_its_name_writes_it() {
        let g = grid(&json!({"shape": [5, 4, 3], "chunks": [2, 3, 3]}));
        assert_eq!(g.dims(), [3, 2, 1]);
        assert_eq!(g.indices(3), Some(vec![1, 1, 0]));
        for position in 0..g.count() {
            let indices = g.indices(position).unwrap();
            let name = indices.iter().map(u64::to_string).collect::<Vec<_>>().join(".");
            assert_eq!(g.chunk_name(position), Some(name), "{position}");
        }
        assert_eq!(g.indices(g.count()), None);
        let scalar = grid(&json!({"shape": [], "chunks": []}));
        assert_eq!((scalar.indices(0), scalar.indices(1)), (Some(Vec::new()), None));
    }
}
