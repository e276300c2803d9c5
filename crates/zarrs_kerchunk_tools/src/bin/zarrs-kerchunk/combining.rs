//! The combining options `scan` and `combine` share: along which dimensions, where their
//! values come from, the units times are written in, or a merge.

use clap::Args;
use kerchunk_combine::CoordinateSource;
use zarrs_kerchunk_tools::make::{Combining, SET_ASIDE_MEMORY, combine_options};

/// How several files' (or sets') references become one set.
#[derive(Args)]
pub(crate) struct CombineArgs {
    /// Combine the files along this dimension (required for more than one file), as kerchunk's
    /// `concat_dims`; every other array is taken from the first file, and must be the same in
    /// every file. Repeatable, innermost first
    /// (`--concat time --concat member`): the files are grouped by their one value along an
    /// outer dimension, from their data (each file's coordinate holding one value) or from
    /// `--coord DIM=name:...` or `DIM=attr:...`. GRIB files need none: their
    /// messages go where their own time, step, level and member put them.
    #[arg(long, value_name = "DIM")]
    concat: Vec<String>,
    /// Where the combined dimension's values come from: `data` (each file's coordinate as
    /// written), `cf` (CF times decoded and written in one unit; the default for times),
    /// `name:REGEX` (the first capture group in each file's name, a number), `name:REGEX:FORMAT`
    /// (a date, `%Y%m%d`), `attr:NAME` (a global attribute, a number or an ISO date). From a name
    /// or an attribute, a dimension the files lack is added first to every array that is not a
    /// coordinate. Repeatable; implies `--concat DIM` (outside those given).
    #[arg(long, value_name = "DIM=SOURCE", value_parser = coordinate_source)]
    coord: Vec<(String, CoordinateSource)>,
    /// Write the combined times in these CF units (`hours since 2020-01-01`) rather than the
    /// first file's (or, for dates from names or attributes, days since the first date).
    #[arg(long, value_name = "UNITS")]
    units: Option<String>,
    /// An array the same in every file (repeatable), as kerchunk's `identical_dims`: where the
    /// files gain a new dimension, it is taken once, checked in every file, rather than given it.
    #[arg(long, value_name = "ARRAY")]
    identical: Vec<String>,
    /// Merge files that each hold some of the arrays (one file per variable): the union of
    /// their arrays, those several hold (shared coordinates) checked to be the same.
    #[arg(long, conflicts_with_all = ["concat", "coord"])]
    merge: bool,
    /// The calendar of `--units` (default: the files'; `standard` for dates from names).
    #[arg(long, value_name = "CALENDAR", requires = "units")]
    calendar: Option<String>,
    /// Concatenating (--concat): how many MiB of the files' combined chunks to hold
    /// in memory; the rest wait in a temporary file (under `TMPDIR`, else the system's) until
    /// they are written, a file at a time.
    #[arg(long, value_name = "MIB", default_value_t = SET_ASIDE_MEMORY >> 20)]
    combine_memory: usize,
}

impl CombineArgs {
    /// How these options combine several files or sets: `None` for no dimension and no merge.
    pub(crate) fn combining(&self) -> Result<Option<Combining>, kerchunk_combine::CombineOptionError> {
        let concat = combine_options(
            &self.concat,
            &self.coord,
            &self.identical,
            self.units.as_deref(),
            self.calendar.as_deref(),
        )?;
        Ok(if self.merge { Some(Combining::Merge) } else { concat.map(Combining::Concat) })
    }

    /// `--combine-memory`, in bytes.
    pub(crate) fn memory(&self) -> usize {
        self.combine_memory.saturating_mul(1 << 20)
    }
}

/// `DIM=SOURCE`, as `--coord` takes it.
fn coordinate_source(text: &str) -> std::result::Result<(String, CoordinateSource), String> {
    let (dimension, source) = text.split_once('=').ok_or_else(|| format!("{text:?} is not DIM=SOURCE"))?;
    Ok((dimension.to_owned(), source.parse().map_err(|e: kerchunk_combine::CombineOptionError| e.to_string())?))
}
