//! A GRIB file's messages from its inventory: where each is, and which need
//! no header read of their own.
//!
//! A NOAA inventory's lines name each message's variable, level and
//! forecast (`d=2024010212:TMP:500 mb:1 hour fcst:`). Lines that differ only
//! in the numbers of their level (`500 mb`, `850 mb`) are one variable at
//! several levels of one kind: the first one's header is read, and each of
//! the others is that header with its fixed surfaces set to the numbers of
//! its line, in the units the first one's line and header agree on. So a
//! scan reads one header per distinct variable, as wgrib2's inventory allows,
//! instead of one per message; [`ScanOptions::with_grib_levels_from_inventory`]
//! turns this off. Lines whose numbers do not give their header's surfaces
//! (`0C isotherm`, `PV=2e-06 (Km^2/kg/s) surface`), or that repeat another
//! line's, have their headers read.
//!
//! [`ScanOptions::with_grib_levels_from_inventory`]: crate::ScanOptions::with_grib_levels_from_inventory

use std::collections::{HashMap, HashSet};

use bytes::Bytes;

use crate::error::ScanError;
use crate::grib::inventory::IndexEntry;
use crate::grib::keys::{self, MessageKeys};
use crate::grib::locate::{self, GribMessage};
use crate::grib::tables::MISSING;
use crate::read::BlockReader;

/// The bytes read of a message's start, in one request with the others.
const PREFIX: u64 = 4096;

/// What a message listed in an inventory brings to its description.
pub(crate) enum Header {
    /// Its first bytes, read (which hold its header, mostly).
    Read(Bytes),
    /// Its header, made from another message's and its inventory line.
    Made(Vec<u8>),
}

/// A decimal number as an inventory writes it, exactly: `mantissa × 10^exponent`,
/// the mantissa without trailing zeros.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
struct Decimal {
    mantissa: i64,
    exponent: i32,
}

impl Decimal {
    fn new(mut mantissa: i64, mut exponent: i32) -> Self {
        if mantissa == 0 {
            return Self { mantissa, exponent: 0 };
        }
        while mantissa % 10 == 0 {
            mantissa /= 10;
            exponent += 1;
        }
        Self { mantissa, exponent }
    }

    /// The number at the start of `text` (`-0.5`, `2e-06`, `1000`) and its length in bytes.
    fn parse_prefix(text: &str) -> Option<(Self, usize)> {
        let bytes = text.as_bytes();
        let mut at = usize::from(matches!(bytes.first(), Some(b'-' | b'+')));
        let (mut mantissa, mut exponent, mut digits) = (0i64, 0i32, 0u32);
        let mut fraction = false;
        while let Some(&b) = bytes.get(at) {
            match b {
                b'0'..=b'9' => {
                    digits += 1;
                    mantissa = mantissa.checked_mul(10)?.checked_add(i64::from(b - b'0'))?;
                    exponent -= i32::from(fraction);
                }
                b'.' if !fraction && bytes.get(at + 1).is_some_and(u8::is_ascii_digit) => fraction = true,
                _ => break,
            }
            at += 1;
        }
        if digits == 0 || digits > 18 {
            return None;
        }
        // An exponent only where digits follow the `e` (`2e-06`, not `2 entire`).
        if matches!(bytes.get(at), Some(b'e' | b'E')) {
            let signed = usize::from(matches!(bytes.get(at + 1), Some(b'-' | b'+')));
            let start = at + 1 + signed;
            let end = start + bytes[start.min(bytes.len())..].iter().take_while(|b| b.is_ascii_digit()).count();
            if end > start {
                let power: i32 = text[at + 1..end].parse().ok().filter(|p: &i32| p.abs() < 100)?;
                exponent += power;
                at = end;
            }
        }
        if bytes[0] == b'-' {
            mantissa = -mantissa;
        }
        Some((Self::new(mantissa, exponent), at))
    }
}

/// A NOAA inventory line's group (the line with its level's numbers masked)
/// and those numbers; `None` for a line not in wgrib2's form.
fn level_numbers(description: &str) -> Option<(String, Vec<Decimal>)> {
    let fields: Vec<&str> = description.split(':').collect();
    if fields.len() < 3 || !fields[0].starts_with("d=") {
        return None;
    }
    let (level, mut masked, mut numbers) = (fields[2], String::new(), Vec::new());
    let mut at = 0;
    while at < level.len() {
        let rest = &level[at..];
        // A sign only where a number starts, not between two (`0-0.1 m below ground`).
        let starts = rest.as_bytes()[0].is_ascii_digit()
            || (rest.starts_with('-')
                && rest.as_bytes().get(1).is_some_and(u8::is_ascii_digit)
                && (at == 0 || level.as_bytes()[at - 1] == b' '));
        if starts {
            // A number past 18 digits is no level wgrib2 writes: the line is left ungrouped.
            let (number, length) = Decimal::parse_prefix(rest)?;
            numbers.push(number);
            masked.push('#');
            at += length;
        } else {
            let c = rest.chars().next()?;
            masked.push(c);
            at += c.len_utf8();
        }
    }
    let mut group = fields.clone();
    group[2] = &masked;
    Some((group.join(":"), numbers))
}

/// The fixed surfaces (scale factor, scaled value) a message of the level
/// `numbers` has, where `read`'s header and its inventory line's
/// `read_numbers` say in which units the numbers are (`500 mb` and 50 000 Pa:
/// hundreds); `None` where they do not say, or the level cannot be written.
fn surfaces(read: &MessageKeys, read_numbers: &[Decimal], numbers: &[Decimal]) -> Option<Vec<(i64, i64)>> {
    let mut present = Vec::new();
    for (factor, value) in [
        ("scaleFactorOfFirstFixedSurface", "scaledValueOfFirstFixedSurface"),
        ("scaleFactorOfSecondFixedSurface", "scaledValueOfSecondFixedSurface"),
    ] {
        match (read.get(factor)?, read.get(value)?) {
            (_, MISSING) => {}
            (MISSING, _) => return None,
            (factor, value) => present.push(Decimal::new(value, i32::try_from(-factor).ok()?)),
        }
    }
    // The numbers must be the surfaces, in order, the first of them present.
    if present.is_empty()
        || present.len() != read_numbers.len()
        || read.get("scaledValueOfFirstFixedSurface")? == MISSING
    {
        return None;
    }
    // The power of ten from the line's numbers to the header's values, the same for both surfaces.
    let mut power = None;
    for (value, number) in present.iter().zip(read_numbers) {
        if number.mantissa == 0 {
            if value.mantissa != 0 {
                return None;
            }
            continue;
        }
        if value.mantissa != number.mantissa || power.is_some_and(|p| p != value.exponent - number.exponent) {
            return None;
        }
        power = Some(value.exponent - number.exponent);
    }
    let power = power?;
    numbers
        .iter()
        .map(|number| {
            let value = Decimal::new(number.mantissa, number.exponent.checked_add(power)?);
            if value.mantissa < 0 {
                return None;
            }
            if value.exponent >= 0 {
                let scale = 10i64.checked_pow(u32::try_from(value.exponent).ok()?)?;
                Some((0, value.mantissa.checked_mul(scale)?))
            } else {
                Some((i64::from(-value.exponent), value.mantissa))
            }
        })
        .collect()
}

/// One message an inventory lists: its range and its line's group and numbers.
struct Line {
    offset: u64,
    length: u64,
    level: Option<(String, Vec<Decimal>)>,
}

/// The messages an inventory (at `inventory`) lists, in order, each with its
/// header read (checked against the file) or made: see the module's docs.
/// `levels` says whether headers may be made.
///
/// # Errors
/// [`ScanError::Read`] if the file cannot be read; [`ScanError::Grib`] naming
/// the inventory and the byte where a message it lists is not in the file.
pub(crate) async fn from_inventory(
    reader: &mut BlockReader<'_>,
    url: &str,
    (inventory, entries): (&str, &[IndexEntry]),
    levels: bool,
) -> Result<Vec<(GribMessage, Header)>, ScanError> {
    let mut lines: Vec<Line> = entries
        .iter()
        .map(|e| Line {
            offset: e.offset,
            length: e.length,
            level: levels.then(|| level_numbers(&e.description)).flatten(),
        })
        .collect();
    // Fields of one message (`N.1`, `N.2`) share its range; the first one's line stands for it.
    lines.sort_by_key(|line| line.offset);
    lines.dedup_by_key(|line| line.offset);
    // The lines of each group; a group whose numbers repeat has every header read.
    let mut groups: HashMap<&str, Vec<usize>> = HashMap::new();
    for (n, line) in lines.iter().enumerate() {
        if let Some((group, numbers)) = &line.level
            && !numbers.is_empty()
        {
            groups.entry(group.as_str()).or_default().push(n);
        }
    }
    let mut like: Vec<Option<usize>> = vec![None; lines.len()];
    for members in groups.values() {
        let mut seen = HashSet::new();
        let distinct = members.iter().all(|&n| seen.insert(lines[n].level.as_ref().map(|(_, numbers)| numbers)));
        if distinct {
            for &member in &members[1..] {
                like[member] = Some(members[0]);
            }
        }
    }
    let first: Vec<usize> = (0..lines.len()).filter(|&n| like[n].is_none()).collect();
    let mut headers: Vec<Option<Header>> = (0..lines.len()).map(|_| None).collect();
    let mut messages: Vec<Option<GribMessage>> = vec![None; lines.len()];
    read_checked(reader, url, inventory, &lines, &first, &mut messages, &mut headers).await?;
    // Each line like another: that one's header with its own surfaces, else its own read.
    let mut unmade = Vec::new();
    for n in 0..lines.len() {
        let Some(read) = like[n] else { continue };
        let made = made_header(&lines, read, n, messages[read].as_ref(), headers[read].as_ref());
        match made {
            Some(header) => {
                messages[n] = Some(GribMessage { offset: lines[n].offset, length: lines[n].length, edition: 2 });
                headers[n] = Some(Header::Made(header));
            }
            None => unmade.push(n),
        }
    }
    read_checked(reader, url, inventory, &lines, &unmade, &mut messages, &mut headers).await?;
    Ok(messages.into_iter().zip(headers).filter_map(|(message, header)| Some((message?, header?))).collect())
}

/// The header of line `n`, made from line `read`'s message and header; `None`
/// where it cannot be (GRIB1, a header longer than what was read, numbers
/// that do not give its surfaces).
fn made_header(
    lines: &[Line],
    read: usize,
    n: usize,
    message: Option<&GribMessage>,
    header: Option<&Header>,
) -> Option<Vec<u8>> {
    let (message, Some(Header::Read(prefix))) = (message?, header) else { return None };
    if message.edition != 2 || lines[n].length < 16 {
        return None;
    }
    let header = &prefix[..super::header_end(prefix, message.length)?];
    let keys = MessageKeys::read(header).ok()?;
    let (_, read_numbers) = lines[read].level.as_ref()?;
    let (_, numbers) = lines[n].level.as_ref()?;
    keys::with_surfaces(header, &surfaces(&keys, read_numbers, numbers)?).ok()
}

/// The first bytes of each of `lines[chosen]`, read at once, each checked to
/// be the message its line says, into `messages` and `headers`.
async fn read_checked(
    reader: &mut BlockReader<'_>,
    url: &str,
    inventory: &str,
    lines: &[Line],
    chosen: &[usize],
    messages: &mut [Option<GribMessage>],
    headers: &mut [Option<Header>],
) -> Result<(), ScanError> {
    let ranges: Vec<std::ops::Range<u64>> =
        chosen.iter().map(|&n| lines[n].offset..lines[n].offset + lines[n].length.min(PREFIX)).collect();
    let prefixes = reader.read_exact_ranges(&ranges).await?;
    for (&n, prefix) in chosen.iter().zip(prefixes) {
        let Line { offset, length: listed_length, .. } = lines[n];
        let wrong = |what: String| {
            locate::malformed(url, format!("its inventory {inventory} lists a message at byte {offset}, where {what}"))
        };
        if prefix.len() < 16 || &prefix[..4] != b"GRIB" {
            return Err(wrong("no message starts".into()));
        }
        let (length, edition) = match locate::indicator_length(&prefix) {
            Ok(Some(found)) => found,
            Ok(None) => return Err(wrong(format!("a message of GRIB edition {} starts", prefix[7]))),
            Err(reason) => return Err(wrong(format!("the GRIB1 message {reason}"))),
        };
        if length < 16 || length > listed_length {
            return Err(wrong(format!("the message is {length} bytes long, not the {listed_length} it lists")));
        }
        // NOAA's ranges run to the next listed message: a message in between
        // that the inventory leaves out would be lost, so where there is
        // room for one, its first bytes are looked at.
        let after = offset + length;
        if listed_length - length >= 16 && &reader.read(after..after + 4).await?[..] == b"GRIB" {
            return Err(locate::malformed(
                url,
                format!("its inventory {inventory} lists no message at byte {after}, where one starts"),
            ));
        }
        messages[n] = Some(GribMessage { offset, length, edition });
        headers[n] = Some(Header::Read(prefix));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn numbers(texts: &[&str]) -> Vec<Decimal> {
        texts.iter().map(|t| Decimal::parse_prefix(t).unwrap().0).collect()
    }

    /// wgrib2's level texts, from the inventories of HRRR and GFS files in kerchunk's tests
    /// (`tests/grib_idx_fixtures`, 2023-11-04), masked and their numbers read.
    #[test]
    fn a_lines_level_numbers_are_read_and_masked() {
        for (level, group, expected) in [
            ("500 mb", "# mb", vec!["500"]),
            ("2 m above ground", "# m above ground", vec!["2"]),
            ("0-0.1 m below ground", "#-# m below ground", vec!["0", "0.1"]),
            ("3000-0 m above ground", "#-# m above ground", vec!["3000", "0"]),
            ("180-0 mb above ground", "#-# mb above ground", vec!["180", "0"]),
            ("263 K level", "# K level", vec!["263"]),
            ("0C isotherm", "#C isotherm", vec!["0"]),
            ("-10C isotherm", "#C isotherm", vec!["-10"]),
            ("0.995 sigma level", "# sigma level", vec!["0.995"]),
            ("PV=2e-06 (Km^2/kg/s) surface", "PV=# (Km^#/kg/s) surface", vec!["2e-06", "2"]),
            ("surface", "surface", vec![]),
            (
                "entire atmosphere (considered as a single layer)",
                "entire atmosphere (considered as a single layer)",
                vec![],
            ),
        ] {
            let (masked, found) = level_numbers(&format!("d=2023110401:TMP:{level}:anl:")).unwrap();
            assert_eq!(masked, format!("d=2023110401:TMP:{group}:anl:"), "{level}");
            assert_eq!(found, numbers(&expected), "{level}");
        }
        assert_eq!(Decimal::parse_prefix("2e-06").unwrap().0, Decimal { mantissa: 2, exponent: -6 });
        assert_eq!(Decimal::parse_prefix("1000").unwrap().0, Decimal { mantissa: 1, exponent: 3 });
        assert!(level_numbers("{\"param\": \"2t\"}").is_none());
        assert!(level_numbers("d=2023110401:TMP:1234567890123456789 m above ground:anl:").is_none());
        assert_eq!(level_numbers("d=1:TMP:- 5 m:anl:").unwrap().0, "d=1:TMP:- # m:anl:");
    }
}
