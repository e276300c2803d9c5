//! A GRIB2 message's keys, as eccodes names them, read from its sections 0
//! to 5 (never the bitmap or the data): what names its parameter and level,
//! when it is valid, and its grid.
//!
//! Product definition templates 4.0, 4.1, 4.2, 4.8, 4.11 and 4.12 (every
//! HRRR, GFS, GEFS and ECMWF open-data field), the probabilities 4.5 and 4.9
//! (NBM, ECMWF's ensemble products) and the chemical 4.40 to 4.43 (CAMS) are
//! read. A message in another template is left out, named, because where its
//! level and time are is not known; a message that breaks GRIB's layout is an error.

use std::collections::HashMap;

use crate::grib::tables::{Keys, MISSING};

/// The first field's sections of a GRIB2 message, read: every key the
/// concepts, the coordinates and the attributes use.
#[derive(Debug, Default)]
pub(crate) struct MessageKeys {
    longs: HashMap<&'static str, i64>,
    /// `typeOfStatisticalProcessing` and the other keys of the statistical
    /// loop, one value per time range.
    lists: HashMap<&'static str, Vec<i64>>,
    /// The grid definition section, for the coordinates and the grid's attributes.
    pub(crate) grid: Vec<u8>,
    /// `stepType`, from the statistical process.
    pub(crate) step_type: &'static str,
}

/// Why a message's keys were not read.
#[derive(Debug)]
pub(crate) enum Unread {
    /// The message breaks GRIB's layout (a section past its end, one numbered
    /// wrong): the file is damaged, and scanning it stops.
    Malformed(String),
    /// The message is well formed in a form not read yet (a product template,
    /// a GRIB1 predefined grid): it is left out, named, as
    /// [`UnsupportedArrays`](crate::UnsupportedArrays) says.
    NotScanned(String),
}

impl From<String> for Unread {
    fn from(reason: String) -> Self {
        Self::Malformed(reason)
    }
}

impl From<&str> for Unread {
    fn from(reason: &str) -> Self {
        Self::Malformed(reason.to_owned())
    }
}

/// Octets `from..=to` of `section` (numbered from 1, as the standard numbers
/// them) as an unsigned integer. All ones is a value here (code 255 of a
/// code table); only the keys eccodes lets be missing read it as missing.
fn octets(section: &[u8], from: usize, to: usize) -> Result<i64, String> {
    let bytes = section.get(from - 1..to).ok_or_else(|| {
        format!("section {} is {} octets, short of octet {to}", section.get(4).unwrap_or(&0), section.len())
    })?;
    Ok(bytes.iter().fold(0i64, |n, &b| (n << 8) | i64::from(b)))
}

/// An unsigned key eccodes lets be missing (a surface's scaled value): all ones is [`MISSING`].
fn missable(section: &[u8], from: usize, to: usize) -> Result<i64, String> {
    let raw = octets(section, from, to)?;
    Ok(if raw == (1i64 << (8 * (to + 1 - from))) - 1 { MISSING } else { raw })
}

/// A GRIB2 signed integer (sign and magnitude) eccodes lets be missing: all ones is [`MISSING`].
fn signed(section: &[u8], from: usize, to: usize) -> Result<i64, String> {
    let raw = octets(section, from, to)?;
    if raw == (1i64 << (8 * (to + 1 - from))) - 1 {
        return Ok(MISSING);
    }
    let sign = 1i64 << (8 * (to + 1 - from) - 1);
    Ok(if raw & sign == 0 { raw } else { -(raw & (sign - 1)) })
}

/// How far a product definition template read here moves the octets after
/// the parameter: the chemical templates put a constituent type (2 octets)
/// there. `None` for a template not read.
fn template_shift(template: i64) -> Option<usize> {
    match template {
        0 | 1 | 2 | 5 | 8 | 9 | 11 | 12 => Some(0),
        40..=43 => Some(2),
        _ => None,
    }
}

/// A copy of the GRIB2 message header `message` whose fixed surfaces (the
/// first, then the second) are `surfaces`, each a scale factor and a scaled
/// value: a message an inventory says differs from this one only in its
/// level. Surfaces not given are kept.
///
/// # Errors
/// Why the surfaces cannot be written there: the header is malformed, in a
/// template not read, or a value does not fit its octets.
pub(crate) fn with_surfaces(message: &[u8], surfaces: &[(i64, i64)]) -> Result<Vec<u8>, String> {
    let at = sections(message)?.product_at;
    let template = octets(&message[at..], 8, 9)?;
    let shift = template_shift(template).ok_or("a product definition template not read")?;
    let mut copy = message.to_vec();
    for (&(factor, value), factor_octet) in surfaces.iter().zip([24, 30]) {
        let factor_octet = at + shift + factor_octet - 1;
        // All ones is "missing" in both octets' forms.
        let magnitude = u8::try_from(factor.unsigned_abs()).ok().filter(|m| *m < 0x7f);
        let scaled = u32::try_from(value).ok().filter(|v| *v != u32::MAX);
        let (Some(magnitude), Some(scaled)) = (magnitude, scaled) else {
            return Err(format!(
                "a level of scale factor {factor} and scaled value {value} does not fit GRIB2's octets"
            ));
        };
        let target = copy.get_mut(factor_octet..factor_octet + 5).ok_or("the product definition section is short")?;
        target[0] = if factor < 0 { magnitude | 0x80 } else { magnitude };
        target[1..].copy_from_slice(&scaled.to_be_bytes());
    }
    Ok(copy)
}

/// The sections of the message's first field: 1, the last 2 before the
/// data (if any), 3, 4 and 5, each from its first octet.
struct Sections<'a> {
    identification: &'a [u8],
    local: Option<&'a [u8]>,
    grid: &'a [u8],
    product: &'a [u8],
    /// Where the product definition section starts in the message.
    product_at: usize,
    representation: &'a [u8],
}

fn sections(message: &[u8]) -> Result<Sections<'_>, String> {
    let mut found: [Option<&[u8]>; 6] = [None; 6];
    let mut product_at = 0;
    let mut at = 16;
    while at + 5 <= message.len() && &message[at..at + 4] != b"7777" {
        let length = usize::try_from(octets(&message[at..], 1, 4)?).unwrap_or(usize::MAX);
        let section = message
            .get(at..at.saturating_add(length))
            .filter(|s| s.len() >= 5)
            .ok_or_else(|| format!("a section at octet {} of {length} octets runs past the message", at + 1))?;
        match section[4] {
            number @ 1..=5 => {
                found[usize::from(number)] = Some(section);
                if number == 4 {
                    product_at = at;
                }
            }
            6 | 7 => break,
            number => return Err(format!("a section numbered {number} at octet {}", at + 1)),
        }
        at += length;
    }
    let need = |number: usize, name: &str| found[number].ok_or_else(|| format!("no {name} section ({number})"));
    Ok(Sections {
        identification: need(1, "identification")?,
        local: found[2],
        grid: need(3, "grid definition")?,
        product: need(4, "product definition")?,
        product_at,
        representation: need(5, "data representation")?,
    })
}

impl MessageKeys {
    /// The keys of the GRIB2 message `message` (its bytes from `GRIB` up to
    /// at least its data representation section).
    ///
    /// # Errors
    /// [`Unread::Malformed`] for a section past the message's end,
    /// [`Unread::NotScanned`] for a product definition template not read.
    pub(crate) fn read(message: &[u8]) -> Result<Self, Unread> {
        if message.len() < 16 || &message[..4] != b"GRIB" || message[7] != 2 {
            return Err("not a GRIB2 message".into());
        }
        let s = sections(message)?;
        let mut keys = Self { step_type: "instant", grid: s.grid.to_vec(), ..Self::default() };
        keys.set("discipline", i64::from(message[6]));
        keys.identification(s.identification)?;
        keys.local(s.local)?;
        keys.grid(s.grid)?;
        keys.product(s.product)?;
        keys.set("numberOfValues", octets(s.representation, 6, 9)?);
        keys.set("dataRepresentationTemplateNumber", octets(s.representation, 10, 11)?);
        Ok(keys)
    }

    fn set(&mut self, key: &'static str, value: i64) {
        self.longs.insert(key, value);
    }

    fn read_into(&mut self, section: &[u8], fields: &[(&'static str, usize, usize)]) -> Result<(), String> {
        for &(key, from, to) in fields {
            self.set(key, octets(section, from, to)?);
        }
        Ok(())
    }

    fn identification(&mut self, s: &[u8]) -> Result<(), String> {
        self.read_into(
            s,
            &[
                ("centre", 6, 7),
                ("subCentre", 8, 9),
                ("tablesVersion", 10, 10),
                ("localTablesVersion", 11, 11),
                ("significanceOfReferenceTime", 12, 12),
                ("year", 13, 14),
                ("month", 15, 15),
                ("day", 16, 16),
                ("hour", 17, 17),
                ("minute", 18, 18),
                ("second", 19, 19),
                ("productionStatusOfProcessedData", 20, 20),
                ("typeOfProcessedData", 21, 21),
            ],
        )
    }

    /// ECMWF's local section starts with the MARS labelling: class, type and stream, two octets each.
    fn local(&mut self, section: Option<&[u8]>) -> Result<(), String> {
        if let Some(s) = section
            && self.long("centre") == Some(98)
            && s.len() >= 11
        {
            self.read_into(s, &[("marsClass", 8, 9), ("marsType", 10, 11), ("marsStream", 12, 13)])?;
        }
        Ok(())
    }

    fn grid(&mut self, s: &[u8]) -> Result<(), String> {
        self.read_into(s, &[("numberOfDataPoints", 7, 10), ("gridDefinitionTemplateNumber", 13, 14)])?;
        self.set("shapeOfEarth", octets(s, 15, 15)?);
        // An unstructured grid (3.101, ICON's) names which of its grids it is.
        if self.long("gridDefinitionTemplateNumber") == Some(101) {
            self.read_into(s, &[("numberOfGridUsed", 16, 18), ("numberOfGridInReference", 19, 19)])?;
        }
        Ok(())
    }

    fn product(&mut self, s: &[u8]) -> Result<(), Unread> {
        let template = octets(s, 8, 9)?;
        self.read_into(
            s,
            &[
                ("NV", 6, 7),
                ("productDefinitionTemplateNumber", 8, 9),
                ("parameterCategory", 10, 10),
                ("parameterNumber", 11, 11),
            ],
        )?;
        let Some(shift) = template_shift(template) else {
            return Err(Unread::NotScanned(format!("product definition template 4.{template} is not scanned yet")));
        };
        if shift > 0 {
            self.set("constituentType", octets(s, 12, 13)?);
            self.set("is_chemical", 1);
        } else {
            self.set("is_chemical", 0);
        }
        self.set("is_chemical_srcsink", 0);
        self.set("is_chemical_distfn", 0);
        self.set("is_aerosol", 0);
        self.set("is_aerosol_optical", 0);
        let at = |octet: usize| octet + shift;
        self.read_into(
            s,
            &[
                ("typeOfGeneratingProcess", at(12), at(12)),
                ("backgroundProcess", at(13), at(13)),
                ("generatingProcessIdentifier", at(14), at(14)),
                ("indicatorOfUnitOfTimeRange", at(18), at(18)),
                ("typeOfFirstFixedSurface", at(23), at(23)),
                ("typeOfSecondFixedSurface", at(29), at(29)),
            ],
        )?;
        self.set("scaledValueOfFirstFixedSurface", missable(s, at(25), at(28))?);
        self.set("scaledValueOfSecondFixedSurface", missable(s, at(31), at(34))?);
        self.set("forecastTime", signed(s, at(19), at(22))?);
        self.set("scaleFactorOfFirstFixedSurface", signed(s, at(24), at(24))?);
        self.set("scaleFactorOfSecondFixedSurface", signed(s, at(30), at(30))?);
        // After the horizontal part (octet 34): an ensemble member, a derived
        // forecast, then the statistical processing.
        let mut next = at(35);
        match template {
            1 | 11 | 41 | 43 => {
                self.read_into(
                    s,
                    &[
                        ("typeOfEnsembleForecast", next, next),
                        ("perturbationNumber", next + 1, next + 1),
                        ("numberOfForecastsInEnsemble", next + 2, next + 2),
                    ],
                )?;
                next += 3;
            }
            2 | 12 => {
                self.read_into(
                    s,
                    &[("derivedForecast", next, next), ("numberOfForecastsInEnsemble", next + 1, next + 1)],
                )?;
                next += 2;
            }
            5 | 9 => {
                // A probability forecast: which probability, of how many, its type and limits.
                self.read_into(
                    s,
                    &[
                        ("forecastProbabilityNumber", next, next),
                        ("totalNumberOfForecastProbabilities", next + 1, next + 1),
                        ("probabilityType", next + 2, next + 2),
                    ],
                )?;
                self.set("scaleFactorOfLowerLimit", signed(s, next + 3, next + 3)?);
                self.set("scaledValueOfLowerLimit", signed(s, next + 4, next + 7)?);
                self.set("scaleFactorOfUpperLimit", signed(s, next + 8, next + 8)?);
                self.set("scaledValueOfUpperLimit", signed(s, next + 9, next + 12)?);
                next += 13;
            }
            _ => {}
        }
        if matches!(template, 8 | 9 | 11 | 12 | 42 | 43) {
            self.statistics(s, next)?;
        }
        Ok(())
    }

    /// The statistical processing of templates 4.8 and others, from `at`: the
    /// end of the overall interval, then one 12-octet range each.
    fn statistics(&mut self, s: &[u8], at: usize) -> Result<(), String> {
        self.read_into(
            s,
            &[
                ("yearOfEndOfOverallTimeInterval", at, at + 1),
                ("monthOfEndOfOverallTimeInterval", at + 2, at + 2),
                ("dayOfEndOfOverallTimeInterval", at + 3, at + 3),
                ("hourOfEndOfOverallTimeInterval", at + 4, at + 4),
                ("minuteOfEndOfOverallTimeInterval", at + 5, at + 5),
                ("secondOfEndOfOverallTimeInterval", at + 6, at + 6),
                ("numberOfTimeRanges", at + 7, at + 7),
            ],
        )?;
        let ranges = usize::try_from(octets(s, at + 7, at + 7)?).unwrap_or(0);
        let names =
            ["typeOfStatisticalProcessing", "typeOfTimeIncrement", "indicatorOfUnitForTimeRange", "lengthOfTimeRange"];
        for range in 0..ranges {
            let first = at + 12 + 12 * range;
            let values = [
                octets(s, first, first)?,
                octets(s, first + 1, first + 1)?,
                octets(s, first + 2, first + 2)?,
                octets(s, first + 3, first + 6)?,
            ];
            for (name, value) in names.into_iter().zip(values) {
                self.lists.entry(name).or_default().push(value);
            }
        }
        // eccodes' stepType concept of the statistical templates (one or two ranges).
        // Read as one value, a key of the loop is its last range's (eccodes' accessors by name).
        let process = self.lists.get("typeOfStatisticalProcessing").and_then(|l| l.last().copied());
        self.step_type = match (ranges, process) {
            (1 | 2, Some(0)) => "avg",
            (1 | 2, Some(1)) => "accum",
            (1 | 2, Some(2)) => "max",
            (1 | 2, Some(3)) => "min",
            (1 | 2, Some(4)) => "diff",
            (1 | 2, Some(5)) => "rms",
            (1 | 2, Some(6)) => "sd",
            (1 | 2, Some(7)) => "cov",
            (1 | 2, Some(8)) => "sdiff",
            (1 | 2, Some(9)) => "ratio",
            (1 | 2, Some(10)) => "stdanom",
            (1 | 2, Some(11)) => "sum",
            (1 | 2, Some(100)) => "severity",
            (1 | 2, Some(101)) => "mode",
            (1 | 2, Some(102)) => "index",
            (_, Some(255)) => "instant",
            _ => "unknown",
        };
        Ok(())
    }

    /// An integer key, `None` where the message has none.
    pub(crate) fn get(&self, key: &str) -> Option<i64> {
        self.long(key)
    }

    /// An array key (the statistical loop's), `None` where the message has none.
    pub(crate) fn values(&self, key: &str) -> Option<&[i64]> {
        self.lists.get(key).map(Vec::as_slice)
    }
}

impl Keys for MessageKeys {
    fn long(&self, key: &str) -> Option<i64> {
        match self.longs.get(key) {
            Some(value) => Some(*value),
            // A key of the statistical loop read as one value: the last range's, as eccodes
            // reads a key defined in each pass of a loop (`stepType` of [102, 2] is "max").
            None => self.lists.get(key).and_then(|values| values.last().copied()),
        }
    }

    fn list(&self, key: &str) -> Option<Vec<i64>> {
        match self.lists.get(key) {
            Some(values) => Some(values.clone()),
            None => self.longs.get(key).map(|v| vec![*v]),
        }
    }

    fn text(&self, key: &str) -> Option<&str> {
        match key {
            "stepType" => Some(self.step_type),
            // eccodes' default: pressure levels in hectopascals.
            "pressureUnits" => Some("hPa"),
            _ => None,
        }
    }
}
