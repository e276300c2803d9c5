//! Where each file's chunks of a combined array go: along one dimension, a
//! shift of their indices or a new first index; along several, the same
//! again for each group of files combined along the inner ones.

use super::chunk_indices;

/// Chunk indices joined by `.`, as a Zarr v2 chunk name writes them.
pub(super) fn dotted(indices: &[u64]) -> String {
    let mut name = String::with_capacity(indices.len() * 4);
    push_dotted(&mut name, indices);
    name
}

/// [`dotted`], appended to `out`.
pub(super) fn push_dotted(out: &mut String, indices: &[u64]) {
    let mut digits = itoa::Buffer::new();
    for (i, &index) in indices.iter().enumerate() {
        if i > 0 {
            out.push('.');
        }
        out.push_str(digits.format(index));
    }
}

/// Where one file's chunks of a combined array go: their indices shifted
/// along the dimension, or a new first index.
#[derive(Clone, Copy, Debug)]
pub(super) enum Renumber {
    /// Concatenated: `by` chunks added to the index along `axis`.
    Shift { axis: usize, by: u64 },
    /// Stacked on a new first axis, at `position` (`scalar`: the array had no dimensions).
    Stack { position: u64, scalar: bool },
}

/// A chunk key that cannot be renumbered.
#[derive(Clone, Copy, Debug)]
pub(super) enum Unplaced {
    /// It is not a chunk key of the array.
    NotAChunk,
    /// Its index would pass 2^64.
    Overflow,
}

impl Renumber {
    /// The combined name of the chunk `name` of an array of `ndim` dimensions.
    pub(super) fn name(self, name: &str, ndim: usize) -> Result<String, Unplaced> {
        self.placed(name, ndim).map(|(_, renamed)| renamed)
    }

    /// The combined indices and name of the chunk `name` of an array of `ndim` dimensions.
    pub(super) fn placed(self, name: &str, ndim: usize) -> Result<(Vec<u64>, String), Unplaced> {
        let (indices, renamed) = self.named(name, ndim)?;
        let renamed = renamed.unwrap_or_else(|| dotted(&indices));
        Ok((indices, renamed))
    }

    /// The combined indices of the chunk `name` of an array of `ndim` dimensions, and its
    /// combined name where that is not those indices joined by `.` ([`Renumber::renumber`]).
    pub(super) fn named(self, name: &str, ndim: usize) -> Result<(Vec<u64>, Option<String>), Unplaced> {
        let mut indices = chunk_indices(name, ndim).ok_or(Unplaced::NotAChunk)?;
        let renamed = self.renumber(&mut indices, Some(name), ndim)?;
        Ok((indices, renamed))
    }

    /// The chunk at `indices` (of an array of `ndim` dimensions, read as [`chunk_indices`]
    /// reads its name) given its combined indices in their place, and its combined name where
    /// that is not those indices joined by `.`: stacked, a chunk keeps its own name, `name`
    /// (`None`: its indices joined), after its new index. On an error, `indices` are as given.
    pub(super) fn renumber(
        self,
        indices: &mut Vec<u64>,
        name: Option<&str>,
        ndim: usize,
    ) -> Result<Option<String>, Unplaced> {
        if indices.len() != ndim.max(1) {
            return Err(Unplaced::NotAChunk);
        }
        match self {
            Self::Shift { axis, by } => {
                let index = indices.get_mut(axis).ok_or(Unplaced::NotAChunk)?;
                *index = index.checked_add(by).ok_or(Unplaced::Overflow)?;
                Ok(None)
            }
            // A 0-d array's one chunk is `0`; with the new axis it is the position alone.
            Self::Stack { position, scalar: true } => {
                *indices = vec![position];
                Ok(None)
            }
            Self::Stack { position, scalar: false } => {
                indices.insert(0, position);
                Ok(name.map(|name| format!("{position}.{name}")))
            }
        }
    }

    /// The name, before renumbering, of the combined chunk `indices`, if this holder has it.
    fn original(self, indices: &[u64]) -> Option<String> {
        let mut indices = indices.to_vec();
        match self {
            Self::Shift { axis, by } => indices[axis] = indices.get(axis)?.checked_sub(by)?,
            Self::Stack { scalar: true, .. } => return Some("0".into()),
            Self::Stack { .. } => {
                indices.remove(0);
            }
        }
        Some(dotted(&indices))
    }
}

/// What holds the chunks at one place along a combined array's dimension.
#[derive(Debug)]
pub(super) enum Holder {
    /// A file, by the name combining gives it.
    File(String),
    /// Along an outer dimension: a group of files, combined along the inner ones.
    Group(Placement),
}

/// A combined array whose chunks are renumbered from each file's: its holders
/// (files or groups of them) in the combined order, each with where its chunks go.
#[derive(Debug)]
pub(super) struct Placement {
    pub(super) path: String,
    /// Dimensions of each holder's array.
    pub(super) ndim: usize,
    pub(super) holders: Vec<(Holder, Renumber)>,
    /// Whether each holder's chunks come after the holder's before it in the combined grid
    /// order: stacked on a new first axis, or concatenated along an axis with one chunk along
    /// every axis before it (the first, or `time` in `t(member, time, x)` of one member).
    pub(super) contiguous: bool,
    /// Its chunks along the dimension, where the files' do not make a regular grid.
    pub(super) uneven: Option<kerchunk_v3::Uneven>,
}

impl Placement {
    /// The first file whose chunks it places, for errors.
    pub(super) fn first_file(&self) -> &str {
        match self.holders.first() {
            Some((Holder::File(name), _)) => name,
            Some((Holder::Group(group), _)) => group.first_file(),
            None => "",
        }
    }

    /// The file that holds the combined chunk `indices`, and its own name for it.
    pub(super) fn holder(&self, indices: &[u64]) -> Option<(&str, String)> {
        let at = match self.holders.first()?.1 {
            Renumber::Shift { axis, .. } => {
                let index = *indices.get(axis)?;
                let after =
                    self.holders.partition_point(|(_, r)| matches!(r, Renumber::Shift { by, .. } if *by <= index));
                after.checked_sub(1)?
            }
            Renumber::Stack { .. } => usize::try_from(*indices.first()?).ok()?,
        };
        let (holder, renumber) = self.holders.get(at)?;
        let original = renumber.original(indices)?;
        match holder {
            Holder::File(name) => Some((name, original)),
            Holder::Group(group) => {
                let indices = original.split('.').map(str::parse).collect::<Result<Vec<u64>, _>>().ok()?;
                group.holder(&indices)
            }
        }
    }

    /// Whether its chunks, walked holder after holder (and each group so),
    /// come in the combined array's grid order.
    pub(super) fn in_grid_order(&self) -> bool {
        self.contiguous
            && self.holders.iter().all(|(holder, _)| match holder {
                Holder::File(_) => true,
                Holder::Group(group) => group.in_grid_order(),
            })
    }
}
