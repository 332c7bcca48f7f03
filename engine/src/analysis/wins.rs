//! Wins and losses: per result, the best identifier wins and the worst loses
//! (higher or lower is better as the result says); ties share.

use super::Matrix;
use crate::model::profile::Proportion;
use crate::model::result::ResultFile;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Tally {
    pub identifier: String,
    pub wins: usize,
    pub losses: usize,
}

pub fn tally(f: &ResultFile, m: &Matrix<'_>) -> Vec<Tally> {
    let mut t: Vec<Tally> = m.ids.iter().map(|id| Tally { identifier: id.clone(), wins: 0, losses: 0 }).collect();
    for (r, row) in f.results.iter().zip(&m.rows) {
        let vals: Vec<(usize, f64)> = row
            .iter()
            .enumerate()
            .filter_map(|(i, e)| e.map(|e| (i, e.value)))
            .filter(|(_, v)| v.is_finite())
            .collect();
        if vals.len() < 2 {
            continue;
        }
        let (best, worst) = match r.proportion {
            Proportion::Hib => {
                (vals.iter().map(|v| v.1).fold(f64::MIN, f64::max), vals.iter().map(|v| v.1).fold(f64::MAX, f64::min))
            }
            Proportion::Lib => {
                (vals.iter().map(|v| v.1).fold(f64::MAX, f64::min), vals.iter().map(|v| v.1).fold(f64::MIN, f64::max))
            }
        };
        if best == worst {
            continue;
        }
        for (i, v) in vals {
            if v == best {
                t[i].wins += 1;
            }
            if v == worst {
                t[i].losses += 1;
            }
        }
    }
    t
}
