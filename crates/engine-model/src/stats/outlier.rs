//! Outliers by the modified z-score (Iglewicz and Hoaglin):
//! M = 0.6745 · (x − median) / MAD, an outlier when |M| > 3.5.

use super::summary::median;

/// The threshold on |M| above which a value is an outlier.
pub const THRESHOLD: f64 = 3.5;

/// Modified z-scores of `values`. When the MAD is zero (more than half the
/// values equal), the mean absolute deviation scaled by 1.253314 stands in for
/// it; when that is zero too, every score is zero.
pub fn modified_z_scores(values: &[f64]) -> Vec<f64> {
    if values.is_empty() {
        return Vec::new();
    }
    let med = median(values);
    let dev: Vec<f64> = values.iter().map(|v| (v - med).abs()).collect();
    let mad = median(&dev);
    if mad > 0.0 {
        return values.iter().map(|v| 0.6745 * (v - med) / mad).collect();
    }
    let meanad = dev.iter().sum::<f64>() / dev.len() as f64;
    if meanad > 0.0 {
        values.iter().map(|v| (v - med) / (1.253314 * meanad)).collect()
    } else {
        vec![0.0; values.len()]
    }
}

/// Indexes and scores of the outliers in `values`.
pub fn outliers(values: &[f64]) -> Vec<(usize, f64)> {
    modified_z_scores(values).into_iter().enumerate().filter(|(_, z)| z.abs() > THRESHOLD).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hand_computed_scores() {
        // median 11, deviations 1,0,2,1,39 → MAD 1; 50 scores 0.6745·39 = 26.3055.
        let v = [10.0, 11.0, 9.0, 12.0, 50.0];
        let z = modified_z_scores(&v);
        assert!((z[4] - 26.3055).abs() < 1e-9);
        assert!((z[3] - 0.6745).abs() < 1e-9);
        assert!((z[2] + 1.349).abs() < 1e-9);
        assert_eq!(outliers(&v).iter().map(|o| o.0).collect::<Vec<_>>(), vec![4]);
    }

    #[test]
    fn no_outliers_in_tight_data() {
        assert!(outliers(&[100.0, 101.0, 99.0, 100.5]).is_empty());
        assert!(outliers(&[5.0, 5.0, 5.0]).is_empty());
    }

    #[test]
    fn zero_mad_falls_back_to_mean_deviation() {
        // median 5, deviations 0,0,0,5 → MAD 0, mean AD 1.25 → (10−5)/(1.253314·1.25) = 3.19.
        let z = modified_z_scores(&[5.0, 5.0, 5.0, 10.0]);
        assert!((z[3] - 5.0 / (1.253314 * 1.25)).abs() < 1e-9);
        assert!(outliers(&[5.0, 5.0, 5.0, 10.0]).is_empty());
        // With more equal values the lone one stands out.
        assert_eq!(outliers(&[5.0, 5.0, 5.0, 5.0, 5.0, 5.0, 10.0]).len(), 1);
    }
}
