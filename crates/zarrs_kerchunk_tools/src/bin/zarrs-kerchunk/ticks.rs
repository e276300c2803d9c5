//! Ticks on round numbers, placed as matplotlib's `MaxNLocator` places them:
//! a step of 1, 2 or 5 times a power of ten, the smallest that gives no more
//! ticks than fit, and each printed with the fewest decimals that tell the
//! ticks apart. A coordinate's round values are put where they fall between
//! its cells, so a 1/6-degree grid is ticked at 30, 40, 50 rather than at the
//! cell values 33.33329, 41.66664.

/// A tick: where it is on the axis, and what it says.
pub(crate) type Mark = (f64, String);

/// Round values from `low` to `high`, at most `most` of them, and the
/// decimals that print them. Without a span (one value, or none finite) the
/// answer is `low` alone, printed short.
pub(crate) fn round_values(low: f64, high: f64, most: usize) -> (Vec<f64>, usize) {
    let span = high - low;
    if !span.is_finite() || span <= 0.0 || most < 2 {
        return (if low.is_finite() { vec![low] } else { Vec::new() }, 0);
    }
    #[expect(clippy::cast_precision_loss, reason = "a handful of ticks")]
    let first = (span / most as f64).log10().floor();
    // The smallest step of 1, 2 or 5 times 10^e that leaves at most `most` ticks.
    for exponent in (0..4).map(|k| first + f64::from(k)) {
        for mantissa in [1.0, 2.0, 5.0] {
            let step = mantissa * 10f64.powf(exponent);
            // A tick a hair outside the range (from rounding) still counts as inside.
            let (start, end) = ((low / step - 1e-9).ceil(), (high / step + 1e-9).floor());
            if end - start + 1.0 <= f64::from(u32::try_from(most).unwrap_or(u32::MAX)) {
                #[expect(clippy::cast_possible_truncation, clippy::cast_sign_loss, reason = "at most `most` ticks")]
                let count = (end - start + 1.0).max(0.0) as usize;
                #[expect(clippy::cast_precision_loss, reason = "a handful of ticks")]
                let values = (0..count).map(|k| (start + k as f64) * step).collect();
                #[expect(clippy::cast_possible_truncation, clippy::cast_sign_loss, reason = "clamped to 0..=15")]
                let decimals = (-exponent).clamp(0.0, 15.0) as usize;
                return (values, decimals);
            }
        }
    }
    (vec![low, high], 0)
}

/// A round value printed with `decimals` decimals, never as `-0`.
pub(crate) fn print(value: f64, decimals: usize) -> String {
    let text = format!("{value:.decimals$}");
    if text.trim_start_matches('-').chars().all(|c| c == '0' || c == '.') { text.replace('-', "") } else { text }
}

/// Round values of the scale from `low` to `high`, placed at themselves.
pub(crate) fn scale(low: f64, high: f64, most: usize) -> Vec<Mark> {
    let (values, decimals) = round_values(low, high, most);
    values.into_iter().map(|v| (v, print(v, decimals))).collect()
}

/// Round values of a coordinate whose cell `i` holds `values[i]`, placed
/// where they fall between positions `from` and `to` (cell indices, with
/// fractions): the coordinate is taken as linear between cell centres and
/// beyond the end cells. `None` unless the values are finite and increase.
pub(crate) fn along(values: &[f64], from: f64, to: f64, most: usize) -> Option<Vec<Mark>> {
    if values.len() < 2 || values.iter().any(|v| !v.is_finite()) || values.windows(2).any(|w| w[0] >= w[1]) {
        return None;
    }
    let (low, high) = (value_at(values, from), value_at(values, to));
    let (ticks, decimals) = round_values(low, high, most);
    Some(ticks.into_iter().map(|v| (position_of(values, v), print(v, decimals))).collect())
}

/// Whole positions from `from` to `to` on a round step (of cells), each
/// labelled by `label`: for axes without round values of their own (dates,
/// indices, coordinates that do not increase).
pub(crate) fn cells(from: f64, to: f64, most: usize, label: impl Fn(usize) -> String) -> Vec<Mark> {
    let (values, _) = round_values(from.max(0.0).ceil(), to.floor(), most);
    values
        .into_iter()
        .filter(|v| v.fract() == 0.0)
        .map(|v| {
            #[expect(clippy::cast_possible_truncation, clippy::cast_sign_loss, reason = "a whole, non-negative index")]
            let index = v as usize;
            (v, label(index))
        })
        .collect()
}

/// The label of the mark at exactly `position` (plotters hands the marks
/// back as they were given); none elsewhere.
#[expect(clippy::float_cmp, reason = "the positions plotters hands back are the ones it was given")]
pub(crate) fn label_at(marks: &[Mark], position: f64) -> String {
    marks.iter().find(|(at, _)| *at == position).map(|(_, label)| label.clone()).unwrap_or_default()
}

/// The positions of the marks, to give plotters as its key points.
pub(crate) fn positions(marks: &[Mark]) -> Vec<f64> {
    marks.iter().map(|(at, _)| *at).collect()
}

/// The coordinate at fractional cell `position`, linear between cells.
#[expect(clippy::cast_precision_loss, reason = "cell counts are far below 2^52")]
fn value_at(values: &[f64], position: f64) -> f64 {
    let last = values.len() - 1;
    #[expect(clippy::cast_possible_truncation, clippy::cast_sign_loss, reason = "clamped to the cells")]
    let i = (position.floor().max(0.0) as usize).min(last - 1);
    values[i] + (position - i as f64) * (values[i + 1] - values[i])
}

/// The fractional cell where the increasing coordinate takes `value`.
#[expect(clippy::cast_precision_loss, reason = "cell counts are far below 2^52")]
fn position_of(values: &[f64], value: f64) -> f64 {
    let i = values.partition_point(|v| *v <= value).saturating_sub(1).min(values.len() - 2);
    i as f64 + (value - values[i]) / (values[i + 1] - values[i])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn labels(marks: &[Mark]) -> Vec<&str> {
        marks.iter().map(|(_, l)| l.as_str()).collect()
    }

    #[test]
    fn steps_are_one_two_or_five_times_a_power_of_ten() {
        assert_eq!(round_values(13.75, 76.25, 7), (vec![20.0, 30.0, 40.0, 50.0, 60.0, 70.0], 0));
        assert_eq!(labels(&scale(0.0, 1.0, 6)), ["0.0", "0.2", "0.4", "0.6", "0.8", "1.0"]);
        assert_eq!(round_values(-3.0, 3.0, 4), (vec![-2.0, 0.0, 2.0], 0));
        assert_eq!(round_values(258.2, 262.1, 5).0, [259.0, 260.0, 261.0, 262.0]);
        assert_eq!(
            labels(&scale(258.2, 262.1, 8)),
            ["258.5", "259.0", "259.5", "260.0", "260.5", "261.0", "261.5", "262.0"]
        );
        assert_eq!(labels(&scale(0.001_23, 0.001_71, 6)), ["0.0013", "0.0014", "0.0015", "0.0016", "0.0017"]);
        assert_eq!(round_values(5.0, 5.0, 6), (vec![5.0], 0));
        assert_eq!(round_values(f64::NAN, 1.0, 6), (vec![], 0));
    }

    #[test]
    fn printed_with_the_decimals_of_the_step() {
        let marks = scale(-0.27, 0.33, 7);
        assert_eq!(labels(&marks), ["-0.2", "-0.1", "0.0", "0.1", "0.2", "0.3"]);
        assert_eq!(
            labels(&scale(29_000.0, 32_200.0, 8)),
            ["29000", "29500", "30000", "30500", "31000", "31500", "32000"]
        );
    }

    /// A GFS wave grid: 1/6 degree, its latitudes float32 from 50 north down
    /// (49.99999, 41.66664, … as stored), here after they are turned to run up.
    #[test]
    fn a_sixth_of_a_degree_is_ticked_on_whole_degrees() {
        #[expect(clippy::cast_possible_truncation, reason = "stored as float32")]
        let latitudes: Vec<f64> = (0..=120).rev().map(|i| f64::from((50.0 - f64::from(i) / 6.0) as f32)).collect();
        let marks = along(&latitudes, -0.5, 120.5, 7).expect("the latitudes increase");
        assert_eq!(labels(&marks), ["30", "35", "40", "45", "50"]);
        for (at, label) in &marks {
            let value: f64 = label.parse().expect("a number");
            assert!((value_at(&latitudes, *at) - value).abs() < 1e-9, "{label} placed at {at}");
        }
        // 35 degrees lies 30 cells of 1/6 degree above 30, up to float32's rounding of the cells.
        assert!((marks[1].0 - 30.0).abs() < 1e-3, "{}", marks[1].0);
    }

    #[test]
    fn the_bundled_samples_latitudes_on_tens() {
        // 75 north to 15 north every 2.5 degrees, turned to run up.
        let latitudes: Vec<f64> = (0..25).map(|i| 15.0 + 2.5 * f64::from(i)).collect();
        let marks = along(&latitudes, -0.5, 24.5, 7).expect("the latitudes increase");
        assert_eq!(labels(&marks), ["20", "30", "40", "50", "60", "70"]);
        assert_eq!(positions(&marks), [2.0, 6.0, 10.0, 14.0, 18.0, 22.0]);
        assert_eq!(label_at(&marks, 6.0), "30");
        assert_eq!(label_at(&marks, 6.5), "");
    }

    /// HRRR's Lambert grid: 1799 columns 3 km apart, `x` in metres.
    #[test]
    fn a_projected_axis_in_metres() {
        let x: Vec<f64> = (0..1799).map(|i| -2_699_020.1 + 3000.0 * f64::from(i)).collect();
        let marks = along(&x, -0.5, 1798.5, 8).expect("x increases");
        assert_eq!(labels(&marks), ["-2000000", "-1000000", "0", "1000000", "2000000"]);
        assert!((marks[2].0 - 2_699_020.1 / 3000.0).abs() < 1e-9);
    }

    /// A rotated pole grid (EURO-CORDEX's 0.11 degrees): `rlon` from -28.375.
    #[test]
    fn a_rotated_axis() {
        let rlon: Vec<f64> = (0..=424).map(|i| -28.375 + 0.11 * f64::from(i)).collect();
        let marks = along(&rlon, -0.5, 424.5, 8).expect("rlon increases");
        assert_eq!(labels(&marks), ["-20", "-10", "0", "10"]);
        assert!((marks[0].0 - 8.375 / 0.11).abs() < 1e-9);
    }

    #[test]
    fn axes_that_do_not_increase_are_ticked_on_cells() {
        assert!(along(&[1.0, 3.0, 2.0], -0.5, 2.5, 6).is_none());
        assert!(along(&[1.0, f64::NAN, 2.0], -0.5, 2.5, 6).is_none());
        let marks = cells(-0.5, 30.5, 6, |i| format!("day {i}"));
        assert_eq!(labels(&marks), ["day 0", "day 10", "day 20", "day 30"]);
        assert_eq!(labels(&cells(-0.5, 2.5, 6, |i| i.to_string())), ["0", "1", "2"]);
    }
}
