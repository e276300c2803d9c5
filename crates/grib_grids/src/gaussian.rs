//! The latitudes of Gaussian grids: the roots of the Legendre polynomial
//! `P_2N` as latitudes, north to south, as eccodes computes them (Newton's
//! iteration on the polynomial's recurrence until a step is below 1e-14),
//! and the rows a grid takes from them.

use crate::error::GridError;
use crate::section::layout;

/// The largest Gaussian number computed: O8000 and N8000 are the finest
/// grids in use; past it the roots would take seconds.
pub(crate) const MOST_N: usize = 8000;

/// The 2N Gaussian latitudes of Gaussian number `n`, in degrees, north to south.
///
/// # Errors
///
/// [`GridError::Layout`] for `n` of 0 or above 8000, or a root that does not converge.
pub fn gaussian_latitudes(n: usize) -> Result<Vec<f64>, GridError> {
    if n == 0 || n > MOST_N {
        return Err(layout(format!("a Gaussian number {n} (from 1 to {MOST_N} are computed)")));
    }
    let count = 2 * n;
    #[expect(clippy::cast_precision_loss, reason = "at most 16000 latitudes")]
    let degree = count as f64;
    let mut latitudes = vec![0.0; count];
    for k in 0..n {
        // The k-th root from the north, first guessed as Numerical Recipes' gauleg does.
        #[expect(clippy::cast_precision_loss, reason = "at most 8000 roots")]
        let mut root = (std::f64::consts::PI * (k as f64 + 0.75) / (degree + 0.5)).cos();
        let mut converged = false;
        for _ in 0..=20 {
            let (mut before, mut value) = (1.0, root);
            for i in 1..count {
                #[expect(clippy::cast_precision_loss, reason = "at most 16000 terms")]
                let i = i as f64;
                let next = ((2.0 * i + 1.0) * root * value - i * before) / (i + 1.0);
                before = value;
                value = next;
            }
            let step = value / ((degree * (before - root * value)) / (1.0 - root * root));
            root -= step;
            if step.abs() < 1e-14 {
                converged = true;
                break;
            }
        }
        if !converged {
            return Err(layout(format!("Gaussian latitude {k} of N{n} does not converge")));
        }
        latitudes[k] = root.asin().to_degrees();
        latitudes[count - 1 - k] = -latitudes[k];
    }
    Ok(latitudes)
}

/// The latitudes of a Gaussian grid's `rows`: from the Gaussian latitude
/// within 1e-3 degrees of `first` (found as eccodes finds it, by bisection),
/// stepping south, or north where `j_positive`, round from one pole to the
/// other as eccodes does.
///
/// # Errors
///
/// As [`gaussian_latitudes`], and [`GridError::Layout`] when `first` is no
/// Gaussian latitude of N`n`.
pub fn gaussian_rows(n: usize, first: f64, rows: usize, j_positive: bool) -> Result<Vec<f64>, GridError> {
    let latitudes = gaussian_latitudes(n)?;
    let (mut low, mut high) = (0usize, latitudes.len() - 1);
    let start = loop {
        if low > high {
            return Err(layout(format!("the first latitude {first} is no Gaussian latitude of N{n}")));
        }
        let middle = usize::midpoint(low, high);
        if (first - latitudes[middle]).abs() < 1e-3 {
            break middle;
        }
        if first < latitudes[middle] {
            low = middle + 1;
        } else if middle == 0 {
            return Err(layout(format!("the first latitude {first} is no Gaussian latitude of N{n}")));
        } else {
            high = middle - 1;
        }
    };
    let count = latitudes.len();
    Ok((0..rows)
        .map(|row| {
            let at = if j_positive { (start + count - row % count) % count } else { (start + row) % count };
            latitudes[at]
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// N1: the roots of P2 are ±1/√3; N2 those of P4, known in closed form.
    #[test]
    fn the_roots_of_small_polynomials() {
        let n1 = gaussian_latitudes(1).unwrap();
        let root = (1.0f64 / 3.0).sqrt().asin().to_degrees();
        assert!((n1[0] - root).abs() < 1e-12 && (n1[1] + root).abs() < 1e-12, "{n1:?}");
        let n2 = gaussian_latitudes(2).unwrap();
        let outer = ((3.0 + 2.0 * (6.0f64 / 5.0).sqrt()) / 7.0).sqrt().asin().to_degrees();
        let inner = ((3.0 - 2.0 * (6.0f64 / 5.0).sqrt()) / 7.0).sqrt().asin().to_degrees();
        assert!((n2[0] - outer).abs() < 1e-12 && (n2[1] - inner).abs() < 1e-12, "{n2:?}");
        assert!(gaussian_latitudes(0).is_err() && gaussian_latitudes(8001).is_err());
    }

    #[test]
    fn rows_go_south_or_north_from_the_first() {
        let all = gaussian_latitudes(4).unwrap();
        assert_eq!(gaussian_rows(4, all[2], 3, false).unwrap(), all[2..5]);
        assert_eq!(gaussian_rows(4, all[2], 3, true).unwrap(), [all[2], all[1], all[0]]);
        assert!(gaussian_rows(4, 5.0, 3, false).is_err());
    }
}
