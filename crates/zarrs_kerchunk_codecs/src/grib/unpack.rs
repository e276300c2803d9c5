//! GRIB2's data representation templates (section 5) and their data
//! (section 7), decoded to the values eccodes gives, bit for bit: integers
//! unpacked, then `((X * 2^E) + R) * 10^-D` in f64, the powers computed by
//! repeated multiplication or division as eccodes' `codes_power` computes
//! them (`1 / 10 / 10 / 10 / 10 / 10 / 10` is not `1e-6`).

use crate::error::DecodeError;
use crate::grib::bits::Bits;
use crate::grib::message::{Field, octets, signed, unsigned};

fn layout(reason: impl Into<String>) -> DecodeError {
    DecodeError::Layout(reason.into())
}

/// The packed values of a field (missing ones NaN), in the order of the
/// points the bitmap marks present, each given to `emit`; returns how many.
pub(crate) fn packed_values(field: &Field<'_>, limit: usize, emit: &mut impl FnMut(f64)) -> Result<usize, DecodeError> {
    let section = field.representation;
    let count = usize::try_from(unsigned(section, 6, 9)?).unwrap_or(usize::MAX);
    if count > limit {
        return Err(DecodeError::TooLong { size: limit });
    }
    let data = field.data.get(5..).unwrap_or_default();
    let mut all = |values: Vec<f64>| {
        let count = values.len();
        values.into_iter().for_each(&mut *emit);
        count
    };
    match unsigned(section, 10, 11)? {
        0 => simple(section, data, count, emit).map(|()| count),
        2 => complex(section, data, count, None, emit),
        3 => complex(section, data, count, Some(octets(section, 48, 49)?), emit),
        4 => Ok(all(ieee(section, data, count)?)),
        41 => png(section, data, count, emit),
        40 => jpeg2000(section, data, count, emit),
        42 => Ok(all(ccsds(section, data, count)?)),
        other => Err(layout(format!("data representation template 5.{other} is not decoded"))),
    }
}

/// `n` raised to `exponent` by repeated multiplication or division from 1,
/// as eccodes' `codes_power` computes it.
pub(crate) fn codes_power(exponent: i64, n: f64) -> f64 {
    let mut value = 1.0;
    for _ in 0..exponent.unsigned_abs().min(100_000) {
        if exponent < 0 {
            value /= n;
        } else {
            value *= n;
        }
    }
    value
}

/// The scaling of simple packing and the templates built on it (5.0, 5.2,
/// 5.3, 5.40 to 5.42): octets 12-20 of section 5.
struct Scaling {
    reference: f64,
    binary: f64,
    decimal: f64,
    /// Bits per packed value (for complex packing, per group reference).
    bits: u32,
}

impl Scaling {
    fn read(section: &[u8]) -> Result<Self, DecodeError> {
        let reference = f64::from(f32::from_bits(u32::try_from(unsigned(section, 12, 15)?).unwrap_or(0)));
        let binary = codes_power(signed(section, 16, 17)?, 2.0);
        let decimal = codes_power(-signed(section, 18, 19)?, 10.0);
        let bits = u32::try_from(unsigned(section, 20, 20)?).unwrap_or(0);
        Ok(Self { reference, binary, decimal, bits })
    }

    /// The value an unpacked integer stands for.
    fn value(&self, x: u64) -> f64 {
        #[expect(clippy::cast_precision_loss, reason = "packed integers are at most 32 bits, or sums of them")]
        let x = x as f64;
        (x * self.binary + self.reference) * self.decimal
    }

    /// The value a (possibly negative) integer of spatial differencing stands for.
    fn signed_value(&self, x: i64) -> f64 {
        #[expect(clippy::cast_precision_loss, reason = "rebuilt integers are far below 2^53")]
        let x = x as f64;
        (x * self.binary + self.reference) * self.decimal
    }
}

/// Template 5.0: `count` integers of `bits` bits each.
fn simple(section: &[u8], data: &[u8], count: usize, emit: &mut impl FnMut(f64)) -> Result<(), DecodeError> {
    let scaling = Scaling::read(section)?;
    // A field of one value: every point is the reference value, unscaled (as eccodes gives it).
    if scaling.bits == 0 {
        (0..count).for_each(|_| emit(scaling.reference));
        return Ok(());
    }
    if scaling.bits > 32 {
        return Err(layout(format!("{} bits per value (at most 32 are decoded)", scaling.bits)));
    }
    if (data.len() as u128) * 8 < count as u128 * u128::from(scaling.bits) {
        return Err(layout(format!("section 7 holds fewer than the {count} values of {} bits", scaling.bits)));
    }
    let mut bits = Bits::new(data);
    // Checked above: every read is inside the section.
    (0..count).for_each(|_| emit(scaling.value(u64::from(bits.read(scaling.bits).unwrap_or(0)))));
    Ok(())
}

/// Template 5.4: IEEE floats, 32 or 64 bits, big-endian.
fn ieee(section: &[u8], data: &[u8], count: usize) -> Result<Vec<f64>, DecodeError> {
    let size = match unsigned(section, 12, 12)? {
        1 => 4,
        2 => 8,
        other => return Err(layout(format!("IEEE precision {other} (1 and 2 are decoded)"))),
    };
    let bytes = data
        .get(..count.saturating_mul(size))
        .ok_or_else(|| layout(format!("section 7 holds fewer than the {count} values of {size} octets")))?;
    Ok(bytes
        .chunks_exact(size)
        .map(|b| match b {
            [a, b, c, d] => f64::from(f32::from_be_bytes([*a, *b, *c, *d])),
            _ => f64::from_be_bytes(b.try_into().unwrap_or([0; 8])),
        })
        .collect())
}

/// Template 5.41: the integers are the pixels of a PNG image, each the
/// big-endian integer of its octets (grey of 8 or 16 bits, RGB or RGBA of
/// 8 bits for 24 or 32 bits per value, as eccodes writes them), decoded by
/// the `png` crate.
fn png(section: &[u8], data: &[u8], count: usize, emit: &mut impl FnMut(f64)) -> Result<usize, DecodeError> {
    let scaling = Scaling::read(section)?;
    if scaling.bits == 0 {
        (0..count).for_each(|_| emit(scaling.reference));
        return Ok(count);
    }
    if scaling.bits > 32 {
        return Err(layout(format!("a PNG of {} bits per value (at most 32 are decoded)", scaling.bits)));
    }
    // At most four octets a value: a larger image is not this field's.
    let mut decoder = png::Decoder::new_with_limits(
        std::io::Cursor::new(data),
        png::Limits { bytes: count.saturating_mul(4).saturating_add(1 << 16) },
    );
    decoder.set_transformations(png::Transformations::IDENTITY);
    let mut reader = decoder.read_info().map_err(DecodeError::corrupt)?;
    // The image's size is the header's word: at most four octets a value, or it is not this field's.
    let bytes = reader.output_buffer_size().ok_or_else(|| layout("a PNG too large"))?;
    if bytes > count.saturating_mul(4).saturating_add(1 << 16) {
        let (width, height) = (reader.info().width, reader.info().height);
        return Err(layout(format!("a PNG of {width} x {height} pixels for {count} values")));
    }
    let mut pixels = vec![0; bytes];
    let frame = reader.next_frame(&mut pixels).map_err(DecodeError::corrupt)?;
    let width = usize::try_from(frame.width).unwrap_or(usize::MAX);
    if !(frame.bit_depth as u8).is_multiple_of(8) || width == 0 || !frame.line_size.is_multiple_of(width) {
        return Err(layout(format!("a PNG of {:?} {:?} pixels", frame.bit_depth, frame.color_type)));
    }
    let depth = frame.line_size / width;
    let available = frame.buffer_size() / depth;
    if available < count {
        return Err(layout(format!("the PNG holds {available} values, where section 5 says {count}")));
    }
    pixels[..frame.buffer_size()]
        .chunks_exact(frame.line_size)
        .flat_map(|row| row.chunks_exact(depth))
        .take(count)
        .for_each(|pixel| emit(scaling.value(pixel.iter().fold(0u64, |x, &b| (x << 8) | u64::from(b)))));
    Ok(count)
}

/// Template 5.40: the integers are the samples of a JPEG 2000 codestream
/// of one component (lossless as eccodes writes it by default, or lossy
/// when octet 22 says so), decoded by `hayro-jpeg2000`.
fn jpeg2000(section: &[u8], data: &[u8], count: usize, emit: &mut impl FnMut(f64)) -> Result<usize, DecodeError> {
    let scaling = Scaling::read(section)?;
    if scaling.bits == 0 {
        (0..count).for_each(|_| emit(scaling.reference));
        return Ok(count);
    }
    // The decoder's samples are f32, whole numbers exactly only below 2^24.
    if scaling.bits > 24 {
        return Err(layout(format!("JPEG 2000 of {} bits per value (at most 24 are decoded exactly)", scaling.bits)));
    }
    let settings = hayro_jpeg2000::DecodeSettings { resolve_palette_indices: false, ..Default::default() };
    let image = hayro_jpeg2000::Image::new(data, &settings).map_err(|e| DecodeError::in_format("JPEG 2000", e))?;
    // The image's size is the header's word: one sample a value, or it is not this field's.
    let (width, height) = (image.width(), image.height());
    let samples = u64::from(width) * u64::from(height);
    if samples < count as u64 || samples > (count as u64).saturating_mul(2).saturating_add(1 << 16) {
        return Err(layout(format!("a JPEG 2000 image of {width} x {height} samples for {count} values")));
    }
    // One component: more would each cost the image's memory, and are not a GRIB field's.
    let components = usize::from(image.color_space().num_channels()) + usize::from(image.has_alpha());
    if components != 1 {
        return Err(layout(format!("a JPEG 2000 image of {components} components (a GRIB field has one)")));
    }
    let mut context = hayro_jpeg2000::DecoderContext::default();
    let decoded = image.decode(&mut context).map_err(|e| DecodeError::in_format("JPEG 2000", e))?;
    let [component, ..] = decoded.components() else {
        return Err(layout("a JPEG 2000 image without components"));
    };
    let samples = component.samples();
    if samples.len() < count {
        return Err(layout(format!(
            "the JPEG 2000 image holds {} values, where section 5 says {count}",
            samples.len()
        )));
    }
    // Samples are whole numbers held in f32 (exact below 2^24); a lossy image's are rounded as OpenJPEG rounds them.
    for &sample in &samples[..count] {
        #[expect(clippy::cast_possible_truncation, clippy::cast_sign_loss, reason = "rounded and clamped to u32 first")]
        let x = f64::from(sample).round().clamp(0.0, f64::from(u32::MAX)) as u64;
        emit(scaling.value(x));
    }
    Ok(count)
}

/// Template 5.42: the integers are CCSDS 121.0 adaptive entropy coding
/// (octets 22-25: its flags, block size and reference sample interval),
/// decoded by `rust-aec`.
fn ccsds(section: &[u8], data: &[u8], count: usize) -> Result<Vec<f64>, DecodeError> {
    let scaling = Scaling::read(section)?;
    if scaling.bits == 0 {
        return Ok(vec![scaling.reference; count]);
    }
    if scaling.bits > 32 {
        return Err(layout(format!("CCSDS of {} bits per value (at most 32 are decoded)", scaling.bits)));
    }
    let flags = rust_aec::flags_from_grib2_ccsds_flags(u8::try_from(unsigned(section, 22, 22)?).unwrap_or(0));
    let block = u32::try_from(unsigned(section, 23, 23)?).unwrap_or(0);
    let interval = u32::try_from(unsigned(section, 24, 25)?).unwrap_or(0);
    #[expect(clippy::cast_possible_truncation, reason = "at most 32, checked above")]
    let params = rust_aec::AecParams::new(scaling.bits as u8, block, interval, flags);
    let samples = rust_aec::decode(data, params, count).map_err(DecodeError::corrupt)?;
    let size = match scaling.bits {
        1..=8 => 1,
        9..=16 => 2,
        17..=24 if flags.contains(rust_aec::AecFlags::DATA_3BYTE) => 3,
        _ => 4,
    };
    if samples.len() != count * size {
        return Err(layout(format!("CCSDS gave {} octets for {count} values of {size}", samples.len())));
    }
    let big_endian = flags.contains(rust_aec::AecFlags::MSB);
    Ok(samples
        .chunks_exact(size)
        .map(|sample| {
            let x = if big_endian {
                sample.iter().fold(0u64, |x, &b| (x << 8) | u64::from(b))
            } else {
                sample.iter().rev().fold(0u64, |x, &b| (x << 8) | u64::from(b))
            };
            scaling.value(x)
        })
        .collect())
}

/// Spatial differencing of order `ORDER` (0: none) undone one value at a
/// time: the first `ORDER` values are given, each later one is its
/// difference plus the overall minimum plus the extrapolation of the one or
/// two before it.
struct Undifferencing<'a, const ORDER: u8> {
    firsts: &'a [i64],
    minimum: i64,
    seen: usize,
    previous: i64,
    before: i64,
}

impl<'a, const ORDER: u8> Undifferencing<'a, ORDER> {
    fn new(firsts: &'a [i64], minimum: i64) -> Self {
        Self { firsts, minimum, seen: 0, previous: 0, before: 0 }
    }

    #[inline]
    fn next(&mut self, raw: i64) -> i64 {
        let value = if self.seen < usize::from(ORDER) {
            self.seen += 1;
            self.firsts.get(self.seen - 1).copied().unwrap_or(raw)
        } else {
            match ORDER {
                0 => raw,
                1 => raw.wrapping_add(self.minimum).wrapping_add(self.previous),
                _ => {
                    raw.wrapping_add(self.minimum).wrapping_add(self.previous.wrapping_mul(2)).wrapping_sub(self.before)
                }
            }
        };
        self.before = self.previous;
        self.previous = value;
        value
    }

    /// Every group's values (`references`, `widths`, `lengths`), unpacked from
    /// `bits`, undifferenced and scaled, each given to `emit`.
    fn stream(
        mut self,
        (references, widths, lengths): (&[u64], &[u64], &[u64]),
        bits: &mut Bits<'_>,
        scaling: &Scaling,
        emit: &mut impl FnMut(f64),
    ) -> Result<(), DecodeError> {
        for ((&reference, &width), &length) in references.iter().zip(widths).zip(lengths) {
            let reference = i64::try_from(reference).unwrap_or(i64::MAX);
            #[expect(clippy::cast_possible_truncation, reason = "checked by the caller: at most 32")]
            let width = width as u32;
            for _ in 0..length {
                let raw = if width == 0 {
                    reference
                } else {
                    let packed = bits
                        .read(width)
                        .ok_or_else(|| layout("section 7 ends before the groups of complex packing do"))?;
                    i64::from(packed) + reference
                };
                emit(scaling.signed_value(self.next(raw)));
            }
        }
        Ok(())
    }
}

/// Templates 5.2 and 5.3 (with `differencing`, octets 48-49: its order and
/// the octets of its extra descriptors): groups of integers, each a group
/// reference plus values of the group's width, missing values marked by the
/// largest integers (octet 23); then spatial differencing undone.
#[expect(clippy::too_many_lines, reason = "one layout, read in the order the standard writes it")]
fn complex(
    section: &[u8],
    data: &[u8],
    count: usize,
    differencing: Option<&[u8]>,
    emit: &mut impl FnMut(f64),
) -> Result<usize, DecodeError> {
    let scaling = Scaling::read(section)?;
    let missing_management = unsigned(section, 23, 23)?;
    let groups = usize::try_from(unsigned(section, 32, 35)?).unwrap_or(usize::MAX);
    let width_reference = unsigned(section, 36, 36)?;
    let width_bits = u32::try_from(unsigned(section, 37, 37)?).unwrap_or(u32::MAX);
    let length_reference = unsigned(section, 38, 41)?;
    let length_increment = unsigned(section, 42, 42)?;
    let last_length = unsigned(section, 43, 46)?;
    let length_bits = u32::try_from(unsigned(section, 47, 47)?).unwrap_or(u32::MAX);
    // A constant field: every point is the reference value, unscaled (as eccodes gives it).
    if groups == 0 {
        (0..count).for_each(|_| emit(scaling.reference));
        return Ok(count);
    }
    if missing_management > 2 {
        return Err(layout(format!("missing value management {missing_management}")));
    }
    if groups > count {
        return Err(layout(format!("{groups} groups for {count} values")));
    }
    if [scaling.bits, width_bits, length_bits].iter().any(|&b| b > 32) {
        return Err(layout("a width of more than 32 bits in complex packing"));
    }
    let mut bits = Bits::new(data);
    let short = || layout("section 7 ends before the groups of complex packing do");
    // Spatial differencing: the first one or two values and the overall minimum, sign and magnitude.
    let (order, mut firsts, minimum) = match differencing {
        None => (0, Vec::new(), 0),
        Some(octets) => {
            let order = octets[0];
            let size = u32::from(octets[1]) * 8;
            if !(1..=2).contains(&order) || size == 0 || size > 32 {
                return Err(layout(format!("spatial differencing of order {order} with {} octets", octets[1])));
            }
            let mut descriptor = || -> Result<i64, DecodeError> {
                let raw = i64::from(bits.read(size).ok_or_else(short)?);
                let sign = 1i64 << (size - 1);
                Ok(if raw & sign == 0 { raw } else { -(raw & (sign - 1)) })
            };
            let firsts = (0..order).map(|_| descriptor()).collect::<Result<Vec<_>, _>>()?;
            (order, firsts, descriptor()?)
        }
    };
    let references: Vec<u64> =
        (0..groups).map(|_| bits.read(scaling.bits).map(u64::from).ok_or_else(short)).collect::<Result<_, _>>()?;
    bits.align();
    let widths: Vec<u64> = (0..groups)
        .map(|_| bits.read(width_bits).map(|w| u64::from(w) + width_reference).ok_or_else(short))
        .collect::<Result<_, _>>()?;
    bits.align();
    let mut lengths: Vec<u64> = (0..groups)
        .map(|_| bits.read(length_bits).map(|l| u64::from(l) * length_increment + length_reference).ok_or_else(short))
        .collect::<Result<_, _>>()?;
    bits.align();
    if let Some(last) = lengths.last_mut() {
        *last = last_length;
    }
    let total = lengths.iter().try_fold(0u64, |n, &l| n.checked_add(l));
    if total != Some(count as u64) {
        return Err(layout(format!("the groups' lengths add up to {total:?}, where section 5 says {count} values")));
    }
    if widths.iter().any(|&w| w > 32) {
        return Err(layout("a group of more than 32 bits per value"));
    }
    if missing_management == 0 {
        // The common case (GFS, HRRR): no point missing, so each value is
        // unpacked, undifferenced and scaled in one pass, straight to `emit`.
        let groups = (references.as_slice(), widths.as_slice(), lengths.as_slice());
        match order {
            0 => Undifferencing::<0>::new(&firsts, minimum).stream(groups, &mut bits, &scaling, emit)?,
            1 => Undifferencing::<1>::new(&firsts, minimum).stream(groups, &mut bits, &scaling, emit)?,
            _ => Undifferencing::<2>::new(&firsts, minimum).stream(groups, &mut bits, &scaling, emit)?,
        }
        return Ok(count);
    }
    // The integers of the points that are not missing, and where the missing ones are.
    let mut present: Vec<i64> = Vec::with_capacity(count);
    // Where the missing points are, if the packing marks any (none is the common case).
    let mut missing = if missing_management == 0 { Vec::new() } else { vec![false; count] };
    let mut point = 0;
    for ((&reference, &width), &length) in references.iter().zip(&widths).zip(&lengths) {
        #[expect(clippy::cast_possible_truncation, reason = "checked above: at most 32")]
        let width = width as u32;
        let largest = (1u64 << if width == 0 { scaling.bits } else { width }) - 1;
        let (primary, secondary) = (largest, largest.wrapping_sub(1));
        let is_missing = |x: u64| match missing_management {
            1 => x == primary,
            2 => x == primary || x == secondary,
            _ => false,
        };
        #[expect(clippy::cast_possible_truncation, reason = "lengths add up to `count`, checked above")]
        let length = length as usize;
        if width == 0 {
            // The whole group is its reference, or missing.
            if is_missing(reference) {
                missing[point..point + length].fill(true);
            } else {
                present.extend(std::iter::repeat_n(i64::try_from(reference).unwrap_or(i64::MAX), length));
            }
        } else if missing_management == 0 {
            let reference = i64::try_from(reference).unwrap_or(i64::MAX);
            for _ in 0..length {
                present.push(i64::from(bits.read(width).ok_or_else(short)?) + reference);
            }
        } else {
            for i in 0..length {
                let x = u64::from(bits.read(width).ok_or_else(short)?);
                if is_missing(x) {
                    missing[point + i] = true;
                } else {
                    present.push(i64::try_from(x + reference).unwrap_or(i64::MAX));
                }
            }
        }
        point += length;
    }
    // Spatial differencing undone over the values that are present.
    if order > 0 {
        for (value, first) in present.iter_mut().zip(firsts.drain(..)) {
            *value = first;
        }
        for i in usize::from(order)..present.len() {
            present[i] = match order {
                1 => present[i].wrapping_add(minimum).wrapping_add(present[i - 1]),
                _ => present[i]
                    .wrapping_add(minimum)
                    .wrapping_add(present[i - 1].wrapping_mul(2))
                    .wrapping_sub(present[i - 2]),
            };
        }
    }
    if missing.is_empty() {
        for x in present {
            emit(scaling.signed_value(x));
        }
        return Ok(count);
    }
    let mut present = present.into_iter();
    for missing in missing {
        emit(if missing { f64::NAN } else { present.next().map_or(f64::NAN, |x| scaling.signed_value(x)) });
    }
    Ok(count)
}
