//! eccodes' concepts and code tables, as `tables/make.py` wrote them from
//! eccodes 2.50's definitions: what names a GRIB2 parameter (`paramId`,
//! `shortName`, `name`, `units`, `cfName`, `cfVarName`), a level
//! (`typeOfLevel`) and a grid, without eccodes.
//!
//! A concept is a list of values, each with conditions on a message's keys.
//! eccodes picks, among the values whose every condition holds, the one
//! with the most conditions, the later one on a tie; a list condition (an
//! array key) counts once per element. A centre's local file comes first
//! and the WMO file after it, so on a tie the WMO value wins.

use std::collections::HashMap;
use std::sync::{LazyLock, OnceLock};

/// eccodes' value for an octet field whose bits are all ones (`missing()`).
pub(crate) const MISSING: i64 = i64::MIN;

/// What a condition asks of a key.
#[derive(Debug)]
enum Expected {
    Long(i64),
    List(Vec<i64>),
    Text(&'static str),
}

#[derive(Debug)]
struct Condition {
    key: &'static str,
    expected: Expected,
}

/// A message's keys, as the conditions read them.
pub(crate) trait Keys {
    /// An integer key ([`MISSING`] for all ones); `None` where the message has no such key.
    fn long(&self, key: &str) -> Option<i64>;
    /// An array key's values (a scalar key is an array of one).
    fn list(&self, key: &str) -> Option<Vec<i64>>;
    /// A text key.
    fn text(&self, key: &str) -> Option<&str>;
}

/// One code table: each code's abbreviation and description.
pub(crate) type CodeTable = HashMap<u32, (&'static str, &'static str)>;

/// One concept file: its block of the inflated `concepts.txt.gz`, read when first needed.
struct Concept {
    text: &'static str,
    parsed: OnceLock<Entries>,
}

/// A concept file's entries in order, and which of them can match a
/// parameter, so that a message is checked against a few entries, not thousands.
#[derive(Default)]
struct Entries {
    /// Each entry's value and the number of its conditions.
    values: Vec<(&'static str, usize)>,
    /// The entries that condition on this parameter ([`parameter`]), in order.
    by_parameter: HashMap<(i64, i64, i64), Vec<usize>>,
    /// The entries that name no parameter whole, in order.
    others: Vec<usize>,
}

struct Tables {
    conditions: Vec<Vec<Condition>>,
    /// Every key a condition reads: a concept's value depends on these alone.
    keys: Vec<&'static str>,
    concepts: HashMap<&'static str, Concept>,
    codes: HashMap<&'static str, CodeTable>,
}

/// The parameter an entry's conditions ask for, if they name one whole:
/// GRIB2's (discipline, category, number), or GRIB1's (table version,
/// parameter, -1).
fn parameter(conditions: &[Condition]) -> Option<(i64, i64, i64)> {
    let get = |key: &str| {
        conditions.iter().find(|c| c.key == key).and_then(|c| match c.expected {
            Expected::Long(value) => Some(value),
            _ => None,
        })
    };
    match (get("discipline"), get("parameterCategory"), get("parameterNumber")) {
        (Some(d), Some(c), Some(n)) => Some((d, c, n)),
        _ => Some((get("table2Version")?, get("indicatorOfParameter")?, -1)),
    }
}

/// The parameter a message's keys name, in [`parameter`]'s terms.
fn parameter_of(keys: &impl Keys) -> Option<(i64, i64, i64)> {
    match (keys.long("discipline"), keys.long("parameterCategory"), keys.long("parameterNumber")) {
        (Some(d), Some(c), Some(n)) => Some((d, c, n)),
        _ => Some((keys.long("table2Version")?, keys.long("indicatorOfParameter")?, -1)),
    }
}

static CODES: &str = include_str!("tables/codes.txt");

/// `concepts.txt.gz` inflated, once: 2 MB of text kept compressed in the crate (0.4 MB).
static CONCEPTS: LazyLock<String> = LazyLock::new(|| {
    let mut text = String::new();
    let mut inflater = flate2::read::GzDecoder::new(&include_bytes!("tables/concepts.txt.gz")[..]);
    // make.py wrote it; a failure here is this crate's bug, and leaves the tables empty (every
    // parameter unnamed) rather than stopping a scan.
    if std::io::Read::read_to_string(&mut inflater, &mut text).is_err() {
        text.clear();
    }
    text
});

/// The tables are written by make.py and read once; a line make.py did not
/// write is a bug in this crate, not in a user's file, so it is skipped.
static TABLES: LazyLock<Tables> = LazyLock::new(|| {
    let text: &'static str = CONCEPTS.as_str();
    let mut conditions = Vec::new();
    let mut concepts: HashMap<&'static str, Concept> = HashMap::new();
    let mut lines = text.lines().filter(|l| !l.starts_with('#') && *l != "%conditions").peekable();
    while let Some(line) = lines.next_if(|l| !l.starts_with('@')) {
        conditions.push(line.split(';').filter(|c| !c.is_empty()).filter_map(condition).collect());
    }
    // Each file's block is kept as text and read when a message first needs it.
    let rest = lines.next().map_or("", |first| &text[text.find(first).unwrap_or(text.len())..]);
    for block in rest.split('@').filter(|b| !b.is_empty()) {
        let (path, entries) = block.split_once('\n').unwrap_or((block, ""));
        concepts.insert(path, Concept { text: entries, parsed: OnceLock::new() });
    }
    let mut codes: HashMap<&'static str, CodeTable> = HashMap::new();
    let mut table = "";
    for line in CODES.lines().filter(|l| !l.starts_with('#')) {
        if let Some(path) = line.strip_prefix('@') {
            table = path;
            continue;
        }
        let mut parts = line.splitn(3, '|');
        if let (Some(code), Some(abbreviation), Some(description)) = (parts.next(), parts.next(), parts.next())
            && let Ok(code) = code.parse()
        {
            // eccodes keeps the first of a code written twice.
            codes.entry(table).or_default().entry(code).or_insert((abbreviation, description));
        }
    }
    let mut keys: Vec<&'static str> = conditions.iter().flatten().map(|c: &Condition| c.key).collect();
    keys.sort_unstable();
    keys.dedup();
    Tables { conditions, keys, concepts, codes }
});

impl Concept {
    /// The file's entries, indexed by parameter, read on first use.
    fn entries(&self, conditions: &[Vec<Condition>]) -> &Entries {
        self.parsed.get_or_init(|| {
            let mut entries = Entries::default();
            for line in self.text.lines() {
                let Some((value, number)) = line.rsplit_once('|') else { continue };
                let Ok(number) = number.parse::<usize>() else { continue };
                let at = entries.values.len();
                entries.values.push((value, number));
                match conditions.get(number).and_then(|c| parameter(c)) {
                    Some(key) => entries.by_parameter.entry(key).or_default().push(at),
                    None => entries.others.push(at),
                }
            }
            entries
        })
    }
}

fn condition(text: &'static str) -> Option<Condition> {
    let (key, value) = text.split_once('=')?;
    let expected = if value == "M" {
        Expected::Long(MISSING)
    } else if let Some(text) = value.strip_prefix('"') {
        Expected::Text(text.strip_suffix('"')?)
    } else if value.contains(',') {
        Expected::List(value.split(',').map(str::parse).collect::<Result<_, _>>().ok()?)
    } else {
        Expected::Long(value.parse().ok()?)
    };
    Some(Condition { key, expected })
}

/// How many of `conditions` hold for `keys` (list conditions count each element), or `None` if one fails.
fn matches(conditions: &[Condition], keys: &impl Keys) -> Option<usize> {
    let mut count = 0;
    for condition in conditions {
        let held = match &condition.expected {
            Expected::Long(value) => (keys.long(condition.key) == Some(*value)).then_some(1),
            Expected::Text(value) => (keys.text(condition.key) == Some(*value)).then_some(1),
            Expected::List(values) => {
                (keys.list(condition.key).as_deref() == Some(values.as_slice())).then_some(values.len())
            }
        };
        count += held?;
    }
    Some(count)
}

/// The value of the concept held in `files` (in that order) for `keys`:
/// the matching value with the most conditions, the later on a tie.
pub(crate) fn evaluate(files: &[String], keys: &impl Keys) -> Option<&'static str> {
    let tables = &*TABLES;
    let parameter = parameter_of(keys);
    let mut best: Option<(usize, &'static str)> = None;
    let mut candidates: Vec<usize> = Vec::new();
    for file in files {
        let Some(concept) = tables.concepts.get(file.as_str()) else { continue };
        let concept = concept.entries(&tables.conditions);
        // Only entries for this parameter, or for none in particular, can match; in file order.
        candidates.clear();
        candidates.extend(parameter.and_then(|p| concept.by_parameter.get(&p)).into_iter().flatten());
        candidates.extend(&concept.others);
        candidates.sort_unstable();
        for &at in &candidates {
            let (value, number) = concept.values[at];
            let Some(conditions) = tables.conditions.get(number) else { continue };
            if let Some(count) = matches(conditions, keys)
                && best.is_none_or(|(most, _)| count >= most)
            {
                best = Some((count, value));
            }
        }
    }
    best.map(|(_, value)| value)
}

/// Every key a concept's condition reads, sorted.
pub(crate) fn condition_keys() -> &'static [&'static str] {
    &TABLES.keys
}

/// Code table `table` (`grib2/tables/4/3.1.table`, `common/c-11.table`), if the tables hold it.
pub(crate) fn code_table(table: &str) -> Option<&'static CodeTable> {
    TABLES.codes.get(table)
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Fixed(Vec<(&'static str, i64)>);

    impl Keys for Fixed {
        fn long(&self, key: &str) -> Option<i64> {
            self.0.iter().find(|(k, _)| *k == key).map(|(_, v)| *v)
        }
        fn list(&self, key: &str) -> Option<Vec<i64>> {
            self.long(key).map(|v| vec![v])
        }
        fn text(&self, _: &str) -> Option<&str> {
            None
        }
    }

    /// Temperature (0, 0, 0) is paramId 130; at 2 m above ground, 167 (more conditions win).
    #[test]
    fn the_value_with_most_conditions_wins() {
        let files = ["grib2/paramId.def".to_owned()];
        let mut keys = Fixed(vec![("discipline", 0), ("parameterCategory", 0), ("parameterNumber", 0)]);
        assert_eq!(evaluate(&files, &keys), Some("130"));
        keys.0.extend([
            ("typeOfFirstFixedSurface", 103),
            ("scaleFactorOfFirstFixedSurface", 0),
            ("scaledValueOfFirstFixedSurface", 2),
            ("typeOfSecondFixedSurface", 255),
            ("scaleFactorOfSecondFixedSurface", MISSING),
            ("scaledValueOfSecondFixedSurface", MISSING),
        ]);
        assert_eq!(evaluate(&files, &keys), Some("167"));
    }
}
