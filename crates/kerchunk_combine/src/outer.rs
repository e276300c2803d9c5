//! Combining along several dimensions: the files grouped by their value
//! along the outermost, each group combined along the inner ones, then the
//! groups along the outermost as files are along one.

use std::collections::{BTreeMap, HashMap};

use kerchunk::ReferenceSet;
use kerchunk_v3::Uneven;
use serde_json::Value;

use super::{
    CombineOptions, CoordinateSource, Holder, Input, Placement, attributes, combine_error, combine_placing, coordinate,
    source,
};
use crate::error::CombineError;

/// `inputs` grouped by the value `source` gives each along the outermost
/// `dimension`, each group combined along the `inner` ones (and the options'
/// own dimension), then the groups along `dimension`; each group is named
/// after its first file, which gives the group's value again.
///
/// With `placements`, each array renumbered along every dimension is pushed
/// there, its holders the groups, each holding its files: the arrays
/// renumbered along the outermost only were held whole (their chunks are in
/// the result), and those renumbered along the inner ones only are taken once.
pub(super) fn combine_outer(
    inputs: Vec<Input>,
    options: &CombineOptions,
    inner: &[(String, CoordinateSource)],
    (dimension, source): (&str, &CoordinateSource),
    placements: Option<&mut Vec<Placement>>,
) -> Result<(ReferenceSet, BTreeMap<String, Uneven>), CombineError> {
    let mut groups: Vec<(GroupKey, Vec<Input>)> = Vec::new();
    for input in inputs {
        let value = group_key(source, dimension, &input)
            .map_err(|reason| combine_error(&input.name, dimension, format!("{reason} ({dimension} from {source})")))?;
        match groups.iter_mut().find(|(v, _)| *v == value) {
            Some((_, group)) => group.push(input),
            None => groups.push((value, vec![input])),
        }
    }
    let inner_options = CombineOptions { outer: inner.to_vec(), ..options.clone() };
    let placing = placements.is_some();
    let mut combined = Vec::with_capacity(groups.len());
    // Each group's placements, by the group's name.
    let mut inner_placements: HashMap<String, Vec<Placement>> = HashMap::new();
    for (_, group) in groups {
        let name = group[0].name.clone();
        let mut placed = Vec::new();
        let (set, uneven) = combine_placing(group, &inner_options, placing.then_some(&mut placed))?;
        refuse_uneven(&name, &uneven, &inner_options.dimension)?;
        if placing {
            inner_placements.insert(name.clone(), placed);
        }
        combined.push(Input { name, references: set.into() });
    }
    // Along the outer dimension: its own source, and the rest of the options as given.
    let outer = CombineOptions {
        dimension: dimension.to_owned(),
        coordinate: source.clone(),
        outer: Vec::new(),
        ..options.clone()
    };
    let first = combined.first().map(|input| input.name.clone()).unwrap_or_default();
    let Some(placements) = placements else {
        let (set, uneven) = combine_placing(combined, &outer, None)?;
        refuse_uneven(&first, &uneven, dimension)?;
        return Ok((set, uneven));
    };
    let mut outer_placements = Vec::new();
    let (set, uneven) = combine_placing(combined, &outer, Some(&mut outer_placements))?;
    refuse_uneven(&first, &uneven, dimension)?;
    for Placement { path, ndim, holders, contiguous, uneven: _ } in outer_placements {
        let mut grouped = false;
        let holders = holders
            .into_iter()
            .map(|(holder, renumber)| {
                let group = match &holder {
                    Holder::File(group) => inner_placements.get_mut(group).and_then(|placed| {
                        let at = placed.iter().position(|p| p.path == path)?;
                        Some(placed.swap_remove(at))
                    }),
                    Holder::Group(_) => None,
                };
                grouped |= group.is_some();
                (group.map_or(holder, Holder::Group), renumber)
            })
            .collect();
        // A group without the array's placement kept its chunks, which a check of the
        // result finds; with none, they were all held, and are in `set`.
        if grouped {
            placements.push(Placement { path, ndim, holders, contiguous, uneven: None });
        }
    }
    Ok((set, uneven))
}

/// What the files of one group along an outer dimension share.
#[derive(PartialEq)]
enum GroupKey {
    /// The value their names or an attribute give.
    Value(source::FileValue),
    /// Their coordinate along it, one value as written: its dtype, its
    /// bytes, and its `units` and `calendar` (values in other units are
    /// other groups, which combining the groups orders as it orders files).
    Written(Value, Vec<u8>, Option<Value>, Option<Value>),
}

/// The group of `input` along the outer `dimension`, by `source`: one value
/// from its name or an attribute, or its own coordinate, which must then
/// hold one value, inline.
fn group_key(source: &CoordinateSource, dimension: &str, input: &Input) -> Result<GroupKey, String> {
    if matches!(source, CoordinateSource::Name { .. } | CoordinateSource::Attribute(_)) {
        return source::file_value(source, &input.name, &input.references).map(GroupKey::Value);
    }
    let (meta, bytes) = coordinate::inline_coordinate(input, dimension)?;
    let dtype = meta["dtype"].as_str().unwrap_or_default();
    match coordinate::numbers(dtype, &bytes).map(|numbers| numbers.len()) {
        Some(1) => {}
        Some(count) => {
            return Err(format!(
                "its coordinate holds {count} values, where a dimension outside another takes one a file"
            ));
        }
        None => return Err(format!("no values of a numeric dtype ({dtype})")),
    }
    let attrs = attributes(&input.references, dimension);
    let attribute = |name: &str| attrs.as_ref().and_then(|attrs| attrs.get(name)).cloned();
    Ok(GroupKey::Written(meta["dtype"].clone(), bytes, attribute("units"), attribute("calendar")))
}

/// Combining along several dimensions keeps regular grids: files of uneven length along one of
/// them (`uneven`, from the files of `group`) are refused, for now, naming the array.
fn refuse_uneven(group: &str, uneven: &BTreeMap<String, Uneven>, dimension: &str) -> Result<(), CombineError> {
    match uneven.keys().next() {
        Some(path) => Err(combine_error(
            group,
            path,
            format!(
                "its files' lengths along {dimension} make uneven chunks, which are combined along one dimension \
                 only (not yet along several)"
            ),
        )),
        None => Ok(()),
    }
}
