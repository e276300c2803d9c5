//! Which array a kerchunk key is a chunk of, and at which chunk indices.

use std::collections::HashMap;

use zarrs::metadata::ChunkKeySeparator;
use zarrs::metadata::v2::ArrayMetadataV2;

/// What a key's array says about its chunk keys.
#[derive(Clone, Debug)]
pub(crate) struct ChunkLayout {
    /// `.` (`0.1`) or `/` (`0/1`).
    separator: ChunkKeySeparator,
    /// Chunks along each dimension.
    grid: Vec<u64>,
}

impl ChunkLayout {
    pub(crate) fn of(v2: &ArrayMetadataV2) -> Self {
        let grid = v2.shape.iter().zip(v2.chunks.iter()).map(|(&n, c)| n.div_ceil(c.get())).collect();
        Self { separator: v2.dimension_separator, grid }
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
}
