//! Non-negative least squares (Lawson and Hanson's active-set method):
//! minimise |A x - b| subject to x >= 0, with a set of columns held at
//! fixed values.

use nalgebra::{DMatrix, DVector};

/// Solves min |A x - b|, x >= 0. Columns in `free` are fitted; the others stay 0.
pub fn nnls(a: &DMatrix<f64>, b: &DVector<f64>, free: &[bool]) -> DVector<f64> {
    let n = a.ncols();
    let mut x = DVector::zeros(n);
    let mut passive = vec![false; n];
    let tol = 1e-10 * a.norm().max(1.0) * b.norm().max(1.0);
    for _outer in 0..3 * n + 10 {
        let w = a.transpose() * (b - a * &x);
        let candidate = (0..n)
            .filter(|&j| free[j] && !passive[j] && w[j] > tol)
            .max_by(|&i, &j| w[i].total_cmp(&w[j]));
        let Some(j) = candidate else { break };
        passive[j] = true;
        for _inner in 0..3 * n + 10 {
            let idx: Vec<usize> = (0..n).filter(|&k| passive[k]).collect();
            let sub = a.select_columns(&idx);
            let z_sub = sub
                .clone()
                .svd(true, true)
                .solve(b, 1e-12)
                .unwrap_or_else(|_| DVector::zeros(idx.len()));
            if z_sub.iter().all(|v| *v > 0.0) {
                for (k, &c) in idx.iter().enumerate() {
                    x[c] = z_sub[k];
                }
                break;
            }
            // Step back to the boundary and drop the columns that hit zero.
            let mut alpha = f64::INFINITY;
            for (k, &c) in idx.iter().enumerate() {
                if z_sub[k] <= 0.0 {
                    let denom = x[c] - z_sub[k];
                    if denom > 0.0 {
                        alpha = alpha.min(x[c] / denom);
                    }
                }
            }
            if !alpha.is_finite() {
                alpha = 0.0;
            }
            for (k, &c) in idx.iter().enumerate() {
                x[c] += alpha * (z_sub[k] - x[c]);
                if x[c] <= 1e-12 {
                    x[c] = 0.0;
                    passive[c] = false;
                }
            }
        }
    }
    x
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn recovers_an_exact_nonnegative_solution_and_clamps() {
        let a = DMatrix::from_row_slice(4, 3, &[1.0, 0.0, 2.0, 0.0, 1.0, 1.0, 1.0, 1.0, 0.0, 3.0, 1.0, 1.0]);
        let x_true = DVector::from_vec(vec![2.0, 0.5, 3.0]);
        let b = &a * &x_true;
        let x = nnls(&a, &b, &[true, true, true]);
        assert!((x - x_true).norm() < 1e-8);
        // The unconstrained optimum is negative in x0: NNLS holds it at 0.
        let a = DMatrix::from_row_slice(2, 1, &[1.0, 1.0]);
        let b = DVector::from_vec(vec![-1.0, -2.0]);
        assert_eq!(nnls(&a, &b, &[true])[0], 0.0);
    }
}
