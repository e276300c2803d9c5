//! How an export splits each array's manifest: icechunk builds a manifest
//! whole in memory when it commits, and a manifest of every chunk of a
//! 10^7-chunk array costs gigabytes; split, it costs one part at a time.

use std::collections::BTreeMap;

use icechunk::config::{ManifestSplitCondition, ManifestSplitDim, ManifestSplitDimCondition, ManifestSplittingConfig};

/// The split of one array: `(axis, chunks)` for each axis split, outermost first.
type AxisSplits = Vec<(usize, u32)>;

/// icechunk's splitting that puts at most `most` chunks in a manifest, for
/// arrays of the chunk grids `grids` (each array's path, `""` at the root,
/// and its chunks along each axis); `None` if no array has more.
///
/// An array of more chunks is split along its outer axes only, as far out as
/// needed, so that the chunks of one manifest are neighbours in the order
/// kerchunk writes them (the last axis fastest).
pub(crate) fn splitting<'a>(
    grids: impl IntoIterator<Item = (&'a str, &'a [u64])>,
    most: u32,
) -> Option<ManifestSplittingConfig> {
    let most = most.max(1);
    // Arrays split alike share one condition: icechunk compiles each condition's
    // expression whenever it looks up an array's splits.
    let mut alike: BTreeMap<AxisSplits, Vec<&str>> = BTreeMap::new();
    for (path, grid) in grids {
        let splits = axis_splits(grid, most);
        if !splits.is_empty() {
            alike.entry(splits).or_default().push(path);
        }
    }
    if alike.is_empty() {
        return None;
    }
    let split_sizes = alike
        .into_iter()
        .map(|(splits, paths)| {
            let names: Vec<String> = paths.iter().map(|path| regex::escape(&format!("/{path}"))).collect();
            let condition = ManifestSplitCondition::PathMatches { regex: format!("^(?:{})$", names.join("|")) };
            let dims = splits
                .into_iter()
                .map(|(axis, chunks)| ManifestSplitDim {
                    condition: ManifestSplitDimCondition::Axis(axis),
                    num_chunks: chunks,
                })
                .collect();
            (condition, dims)
        })
        .collect();
    Some(ManifestSplittingConfig { split_sizes: Some(split_sizes) })
}

/// The axes of `grid` to split, and into how many chunks, for at most
/// `most` chunks a part: none if the whole grid fits.
fn axis_splits(grid: &[u64], most: u32) -> AxisSplits {
    let most = u64::from(most);
    let mut inner: u64 = 1;
    for (axis, &chunks) in grid.iter().enumerate().rev() {
        let whole = inner.saturating_mul(chunks);
        if whole <= most {
            inner = whole;
            continue;
        }
        // This axis is split; every axis outside it goes one index at a time.
        let here = u32::try_from((most / inner).max(1)).unwrap_or(u32::MAX);
        let mut splits: AxisSplits = (0..axis).map(|outer| (outer, 1)).collect();
        splits.push((axis, here));
        return splits;
    }
    Vec::new()
}

#[cfg(test)]
mod tests {
    use icechunk::format::Path;
    use icechunk::format::manifest::ManifestSplits;

    use super::*;

    #[test]
    fn grids_that_fit_are_not_split() {
        assert!(axis_splits(&[10, 10], 100).is_empty());
        assert!(axis_splits(&[], 1).is_empty());
        assert!(splitting([("a", &[10u64, 10][..]), ("", &[5][..])], 100).is_none());
    }

    #[test]
    fn the_outer_axes_are_split_first() {
        assert_eq!(axis_splits(&[1000], 100), vec![(0, 100)]);
        assert_eq!(axis_splits(&[50, 10], 100), vec![(0, 10)]);
        assert_eq!(axis_splits(&[7, 3, 1000], 100), vec![(0, 1), (1, 1), (2, 100)]);
        assert_eq!(axis_splits(&[7, 30, 10], 100), vec![(0, 1), (1, 10)]);
        // An inner axis alone past the limit: one index of every other axis, and part of it.
        assert_eq!(axis_splits(&[2, 3], 1), vec![(0, 1), (1, 1)]);
    }

    /// The chunks of each manifest icechunk makes from the splitting.
    fn parts(config: &ManifestSplittingConfig, path: &str, grid: &[u32]) -> Vec<u64> {
        let shape = icechunk::format::snapshot::ArrayShape::new(grid.iter().map(|&n| (u64::from(n), n))).unwrap();
        let splits: ManifestSplits = config.get_split_sizes(&Path::try_from(path).unwrap(), &shape, &None);
        splits.iter().map(|extent| extent.iter().map(|range| u64::from(range.end - range.start)).product()).collect()
    }

    #[test]
    fn icechunk_splits_each_array_as_asked() {
        let config =
            splitting([("t", &[1000u64][..]), ("g/u.v", &[50, 10][..]), ("w", &[250][..]), ("small", &[10][..])], 100)
                .unwrap();
        assert_eq!(parts(&config, "/t", &[1000]), vec![100; 10]);
        assert_eq!(parts(&config, "/w", &[250]), vec![100, 100, 50]);
        assert_eq!(parts(&config, "/g/u.v", &[50, 10]), vec![100; 5]);
        // Arrays that fit, and paths that only look alike, are left whole.
        assert_eq!(parts(&config, "/small", &[10]), vec![10]);
        assert_eq!(parts(&config, "/g/uxv", &[50, 10]), vec![500]);
        assert_eq!(parts(&config, "/tt", &[1000]), vec![1000]);
    }
}
