//! Which array a kerchunk key is a chunk of, and at which chunk indices.

use std::collections::HashMap;

use zarrs::metadata::ChunkKeySeparator;
use zarrs::metadata::v2::ArrayMetadataV2;

/// What a key's array says about its chunk keys.
#[derive(Clone, Debug)]
pub(crate) struct ChunkLayout {
    /// `.` (`0.1`) or `/` (`0/1`).
    separator: ChunkKeySeparator,
    /// Whether its keys are Zarr v3's default ones, the indices after `c` (`t/c/0/1`).
    v3: bool,
    /// Chunks along each dimension.
    grid: Vec<u64>,
}

impl ChunkLayout {
    pub(crate) fn of(v2: &ArrayMetadataV2) -> Self {
        let grid = v2.shape.iter().zip(v2.chunks.iter()).map(|(&n, c)| n.div_ceil(c.get())).collect();
        Self { separator: v2.dimension_separator, v3: false, grid }
    }

    /// The layout of a Zarr v3 array whose `zarr.json` is `node`: its default chunk keys (or v2's,
    /// where its chunk key encoding says so), and its chunks along each dimension, on a regular
    /// or a rectilinear grid (each run-length encoded edge counted).
    pub(crate) fn of_v3(node: &serde_json::Value) -> Result<Self, String> {
        let shape: Vec<u64> = serde_json::from_value(node["shape"].clone()).map_err(|e| format!("its shape: {e}"))?;
        let encoding = &node["chunk_key_encoding"];
        let (v3, default) = match encoding["name"].as_str() {
            Some("default") => (true, ChunkKeySeparator::Slash),
            Some("v2") => (false, ChunkKeySeparator::Dot),
            other => return Err(format!("its chunk key encoding {other:?} is not one icechunk's keys are read from")),
        };
        let separator = match encoding["configuration"]["separator"].as_str() {
            Some(".") => ChunkKeySeparator::Dot,
            Some("/") => ChunkKeySeparator::Slash,
            _ => default,
        };
        let grid = &node["chunk_grid"];
        let configuration = &grid["configuration"];
        let counts = |extents: &serde_json::Value, length: u64| -> Option<u64> {
            match extents {
                serde_json::Value::Number(chunk) => Some(length.div_ceil(chunk.as_u64().filter(|&c| c > 0)?)),
                serde_json::Value::Array(runs) => runs.iter().try_fold(0u64, |sum, run| match run {
                    serde_json::Value::Array(pair) => sum.checked_add(pair.get(1)?.as_u64()?),
                    _ => sum.checked_add(1),
                }),
                _ => None,
            }
        };
        let extents = match grid["name"].as_str() {
            Some("regular") => &configuration["chunk_shape"],
            Some("rectilinear") => &configuration["chunk_shapes"],
            other => return Err(format!("its chunk grid {other:?} is neither regular nor rectilinear")),
        };
        let extents =
            extents.as_array().filter(|e| e.len() == shape.len()).ok_or("its chunks do not match its shape")?;
        let grid = extents
            .iter()
            .zip(&shape)
            .map(|(extent, &length)| counts(extent, length))
            .collect::<Option<Vec<u64>>>()
            .ok_or("its chunk grid is not whole numbers")?;
        Ok(Self { separator, v3, grid })
    }

    /// Chunks along each dimension.
    pub(crate) fn grid(&self) -> &[u64] {
        &self.grid
    }

    /// The indices the chunk key part `part` (`0.1`, `0/1`; `0` for a 0-d array) names.
    fn indices(&self, part: &str) -> Result<Vec<u32>, String> {
        if self.grid.is_empty() {
            return if part == "0" { Ok(Vec::new()) } else { Err("not the one chunk key (0) of a 0-d array".into()) };
        }
        let separator = match self.separator {
            ChunkKeySeparator::Dot => '.',
            ChunkKeySeparator::Slash => '/',
        };
        let parts: Vec<&str> = part.split(separator).collect();
        if parts.len() != self.grid.len() {
            return Err(format!("{} chunk indices for an array of {} dimensions", parts.len(), self.grid.len()));
        }
        parts
            .iter()
            .zip(&self.grid)
            .map(|(text, &chunks)| {
                let index: u64 = text.parse().map_err(|_| format!("the chunk index {text:?} is not a number"))?;
                if index >= chunks {
                    return Err(format!("the chunk index {index} is past the array's {chunks} chunks"));
                }
                u32::try_from(index).map_err(|_| format!("the chunk index {index} is past icechunk's 2^32"))
            })
            .collect()
    }
}

/// The array (its path, `""` at the root) a key is a chunk of, and the
/// chunk's indices; `Err` naming why where it is none.
pub(crate) fn locate<'a>(arrays: &'a HashMap<String, ChunkLayout>, key: &str) -> Result<(&'a str, Vec<u32>), String> {
    // Zarr v3's default keys: the array's path, `c`, then its indices (`c` alone for 0-d).
    let segments: Vec<&str> = key.split('/').collect();
    for (at, _) in segments.iter().enumerate().filter(|(_, segment)| **segment == "c") {
        let path = segments[..at].join("/");
        if let Some((path, layout)) = arrays.get_key_value(path.as_str())
            && layout.v3
        {
            let rest = segments[at + 1..].join("/");
            if layout.grid.is_empty() && rest.is_empty() {
                return Ok((path.as_str(), Vec::new()));
            }
            return Ok((path.as_str(), layout.indices(&rest)?));
        }
    }
    // `a/b/0.1`: the array is the folder; `a/b/0/1`: it is as many folders up as it has dimensions.
    let (folder, last) = key.rsplit_once('/').unwrap_or(("", key));
    if let Some((path, layout)) = arrays.get_key_value(folder)
        && layout.separator == ChunkKeySeparator::Dot
    {
        return Ok((path.as_str(), layout.indices(last)?));
    }
    let segments: Vec<&str> = key.split('/').collect();
    for taken in 1..=segments.len() {
        let path = segments[..segments.len() - taken].join("/");
        if let Some((path, layout)) = arrays.get_key_value(path.as_str())
            && layout.separator == ChunkKeySeparator::Slash
            && (layout.grid.len() == taken || (layout.grid.is_empty() && taken == 1))
        {
            return Ok((path.as_str(), layout.indices(&segments[segments.len() - taken..].join("/"))?));
        }
    }
    Err("it is no chunk of an array in the references".into())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn layout(zarray: &str) -> ChunkLayout {
        ChunkLayout::of(&kerchunk_v3::parse_v2(zarray.as_bytes()).unwrap())
    }

    #[test]
    fn keys_are_found_in_their_arrays() {
        let mut arrays = HashMap::new();
        let v2 = |shape: &str, chunks: &str, separator: &str| {
            format!(
                r#"{{"zarr_format": 2, "shape": {shape}, "chunks": {chunks}, "dtype": "<f4", "compressor": null,
                "fill_value": null, "order": "C", "filters": null, "dimension_separator": "{separator}"}}"#
            )
        };
        arrays.insert("t".to_owned(), layout(&v2("[4, 6]", "[2, 3]", ".")));
        arrays.insert("g/u".to_owned(), layout(&v2("[4, 6]", "[2, 3]", "/")));
        arrays.insert("s".to_owned(), layout(&v2("[]", "[]", ".")));
        arrays.insert(String::new(), layout(&v2("[5]", "[5]", ".")));
        assert_eq!(locate(&arrays, "t/1.1").unwrap(), ("t", vec![1, 1]));
        assert_eq!(locate(&arrays, "g/u/1/0").unwrap(), ("g/u", vec![1, 0]));
        assert_eq!(locate(&arrays, "s/0").unwrap(), ("s", vec![]));
        assert_eq!(locate(&arrays, "0").unwrap(), ("", vec![0]));
        assert!(locate(&arrays, "t/2.0").unwrap_err().contains("past the array's 2 chunks"));
        assert!(locate(&arrays, "t/0.0.0").unwrap_err().contains("3 chunk indices"));
        assert!(locate(&arrays, "t/x.0").unwrap_err().contains("not a number"));
        assert!(locate(&arrays, "other/0.0").is_err());
    }

    /// Zarr v3's default keys, on a rectilinear grid whose edges are counted, run-length encoded.
    #[test]
    fn v3_keys_are_found_in_their_arrays() {
        let node = |grid: serde_json::Value| {
            serde_json::json!({"shape": [90, 4], "chunk_grid": grid,
                "chunk_key_encoding": {"name": "default", "configuration": {"separator": "/"}}})
        };
        let rectilinear = node(serde_json::json!({"name": "rectilinear",
            "configuration": {"kind": "inline", "chunk_shapes": [[[10, 3], 1, [10, 2], 8, [10, 4]], 4]}}));
        let layout = ChunkLayout::of_v3(&rectilinear).unwrap();
        assert_eq!(layout.grid(), [11, 1]);
        let regular = node(serde_json::json!({"name": "regular", "configuration": {"chunk_shape": [10, 4]}}));
        assert_eq!(ChunkLayout::of_v3(&regular).unwrap().grid(), [9, 1]);
        let mut arrays = HashMap::new();
        arrays.insert("g/t".to_owned(), layout);
        assert_eq!(locate(&arrays, "g/t/c/10/0").unwrap(), ("g/t", vec![10, 0]));
        assert!(locate(&arrays, "g/t/c/11/0").unwrap_err().contains("past the array's 11 chunks"));
        assert!(locate(&arrays, "g/t/0.0").is_err());
    }
}
