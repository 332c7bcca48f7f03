//! Two levels of repetition (Kalibera & Jones, "Rigorous benchmarking in
//! reasonable time", 2013): trials inside a set-up, set-ups (a fresh file
//! layout, a fresh file system) inside a run. What varies between set-ups
//! does not shrink with more trials of one set-up, so the interval of a
//! mean is taken from the set-ups' means (k − 1 degrees of freedom), and
//! the trials a set-up gets follow from the cost and variance of each level.

use super::adaptive::{AdaptivePlan, Stop, optimistic_sd, seconds, t975};
use super::summary::Summary;
use std::time::Duration;

/// The two-level picture of one result's trials.
#[derive(Debug, Clone, PartialEq)]
pub struct Levels {
    /// Set-ups.
    pub k: usize,
    /// The mean of the set-ups' means (each set-up weighs the same).
    pub mean: f64,
    /// Standard error of that mean: SD of the set-up means / √k.
    pub se: f64,
    /// Pooled variance between trials of one set-up (S²_w).
    pub within: f64,
    /// The set-up level's own variance component: var(set-up means) −
    /// S²_w / n̄ (n̄ the harmonic mean of the trials per set-up), at least 0.
    pub between: f64,
}

/// Each set-up's mean, in the order set-ups first appear; `setups[i]` is
/// trial `i`'s set-up.
pub fn means(values: &[f64], setups: &[u32]) -> Vec<f64> {
    groups(values, setups).iter().map(|g| g.iter().sum::<f64>() / g.len() as f64).collect()
}

fn groups(values: &[f64], setups: &[u32]) -> Vec<Vec<f64>> {
    let mut ids: Vec<u32> = Vec::new();
    let mut out: Vec<Vec<f64>> = Vec::new();
    for (v, s) in values.iter().zip(setups) {
        match ids.iter().position(|x| x == s) {
            Some(i) => out[i].push(*v),
            None => {
                ids.push(*s);
                out.push(vec![*v]);
            }
        }
    }
    out
}

impl Levels {
    /// `None` with fewer than two set-ups, or set-up indices that do not
    /// cover the values one to one.
    pub fn of(values: &[f64], setups: &[u32]) -> Option<Levels> {
        if values.len() != setups.len() {
            return None;
        }
        let g = groups(values, setups);
        let k = g.len();
        if k < 2 {
            return None;
        }
        let m: Vec<f64> = g.iter().map(|x| x.iter().sum::<f64>() / x.len() as f64).collect();
        let s = Summary::of(&m)?;
        let var_means = s.sd?.powi(2);
        let (mut ss, mut df) = (0.0, 0usize);
        for (x, mean) in g.iter().zip(&m) {
            ss += x.iter().map(|v| (v - mean).powi(2)).sum::<f64>();
            df += x.len() - 1;
        }
        let within = if df > 0 { ss / df as f64 } else { 0.0 };
        let n_bar = k as f64 / g.iter().map(|x| 1.0 / x.len() as f64).sum::<f64>();
        Some(Levels { k, mean: s.mean, se: s.se?, within, between: (var_means - within / n_bar).max(0.0) })
    }

    /// Half-width of the mean's 95 % interval, percent of the mean
    /// (t with k − 1 degrees of freedom).
    pub fn ci_half_pct(&self) -> f64 {
        if self.se == 0.0 {
            return 0.0;
        }
        if self.mean == 0.0 {
            return f64::INFINITY;
        }
        t975(self.k as f64 - 1.0) * self.se / self.mean.abs() * 100.0
    }

    /// The share of the set-up level in the variance of one trial, percent.
    pub fn setup_share_pct(&self) -> f64 {
        let total = self.between + self.within;
        if total == 0.0 { 0.0 } else { self.between / total * 100.0 }
    }

    /// Trials per set-up that buy the narrowest interval for the time
    /// (Kalibera & Jones, eq. for the optimal repetition count):
    /// ⌈√(c_setup · S²_w / (c_trial · τ²))⌉, at least 2 (the trial level
    /// must stay measured), at most `cap` — reached when the set-ups do
    /// not differ beyond what their trials explain (τ² = 0).
    pub fn trials_per_setup(&self, setup_cost: f64, trial_cost: f64, cap: u32) -> u32 {
        let cap = cap.max(2);
        if self.within == 0.0 {
            return 2;
        }
        if self.between == 0.0 || trial_cost <= 0.0 {
            return cap;
        }
        let r = (setup_cost.max(0.0) * self.within / (trial_cost * self.between)).sqrt().ceil();
        if r.is_finite() { (r as u32).clamp(2, cap) } else { cap }
    }

    /// Set-ups at which the interval would reach `target` percent with `r`
    /// trials each, the components staying what they are (`None` past 10,000).
    pub fn setups_needed(&self, target: f64, r: u32) -> Option<u32> {
        if self.mean == 0.0 {
            return None;
        }
        let sd_mean = (self.between + self.within / r.max(1) as f64).sqrt() / self.mean.abs() * 100.0;
        if sd_mean == 0.0 {
            return Some(self.k as u32);
        }
        (self.k.max(2) as u32..=10_000).find(|&k| t975(k as f64 - 1.0) * sd_mean / (k as f64).sqrt() <= target)
    }
}

/// What to do after a set-up's trials.
#[derive(Debug, Clone, PartialEq)]
pub enum Next {
    /// Another set-up of `per` trials; why, when it is one added beyond
    /// the scheduled set-ups.
    More { per: u32, why: Option<String> },
    /// Enough: why, with a warning when the target was not reached.
    Stop(Stop, Option<String>),
}

/// What a set-up and a trial cost, seconds (means so far).
#[derive(Debug, Clone, Copy)]
pub struct Costs {
    pub setup: f64,
    pub trial: f64,
}

/// The stopping rule over set-ups: the scheduled set-ups run, then more
/// while the two-level interval is wider than the target and the budget
/// can reach it; each set-up gets the trials the optimal-repetition rule
/// gives (more trials when the trial level dominates, more set-ups — fewer
/// trials each — when the set-up level does).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SetupPlan {
    /// Set-ups scheduled.
    pub setups: u32,
    /// Trials in each until the levels are known (`--runs N`: N / set-ups, always).
    pub per: u32,
}

impl SetupPlan {
    pub fn new(plan: &AdaptivePlan, setups: u32) -> Self {
        let s = setups.max(1);
        let per = plan.forced.map(|f| f.div_ceil(s)).unwrap_or_else(|| plan.times.div_ceil(s).max(2));
        SetupPlan { setups, per }
    }

    /// After a set-up: one result's `values` with each trial's set-up,
    /// `elapsed` on its trials and set-ups so far.
    pub fn decide(&self, plan: &AdaptivePlan, values: &[f64], setups: &[u32], elapsed: Duration, costs: Costs) -> Next {
        let Some(l) = Levels::of(values, setups) else {
            return Next::More { per: self.per, why: None };
        };
        let (k, n, target) = (l.k as u32, values.len() as u32, plan.target_ci);
        let half = l.ci_half_pct();
        if let Some(f) = plan.forced {
            if k < self.setups {
                return Next::More { per: self.per, why: None };
            }
            let wide = (half > target).then(|| {
                format!(
                    "--runs {f} in {k} set-ups: two-level 95 % CI ±{half:.2} % > target ±{target} %; without --runs set-ups would be added"
                )
            });
            return Next::Stop(Stop::Forced, wide);
        }
        let cap = (plan.max / self.setups.max(1)).clamp(2, 100);
        let per = l.trials_per_setup(costs.setup, costs.trial, cap);
        if k < self.setups {
            return Next::More { per, why: None };
        }
        if half <= target {
            return Next::Stop(Stop::Target, None);
        }
        let ci = format!(
            "two-level 95 % CI ±{half:.2} % > target ±{target} % (set-ups {:.0} % of the variance)",
            l.setup_share_pct()
        );
        if n + per > plan.max {
            return Next::Stop(Stop::Cap, Some(format!("stopped at the cap of {} trials: {ci}", plan.max)));
        }
        let next = costs.setup + per as f64 * costs.trial;
        let took = format!("{k} set-ups of {n} trials in {}", seconds(elapsed));
        let (spent, budget) = (elapsed.as_secs_f64(), plan.budget.as_secs_f64());
        if spent + next > budget {
            return Next::Stop(
                Stop::Budget,
                Some(format!("budget spent: {ci} after {took}; the budget is {}", seconds(plan.budget))),
            );
        }
        // As for trials, judged with an optimistic SD: a few set-ups' spread is rough.
        let hope = l.setups_needed(target / optimistic_sd(l.k), per);
        match hope {
            Some(m) if spent + m.saturating_sub(k) as f64 * next <= budget => {
                Next::More { per, why: Some(format!("set-up {}: {ci}", k + 1)) }
            }
            _ => {
                let would = match l.setups_needed(target, per) {
                    Some(m) => format!(
                        "about {m} set-ups of {per} trials / {}",
                        seconds(Duration::from_secs_f64(m as f64 * next))
                    ),
                    None => "over 10,000 set-ups".into(),
                };
                Next::Stop(
                    Stop::Projection,
                    Some(format!(
                        "noisy between set-ups: {ci} after {took}; ±{target} % would take {would}, more than the budget of {}",
                        seconds(plan.budget)
                    )),
                )
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_interval_comes_from_the_setups_means() {
        // Three set-ups of two trials: means 10, 12, 14 (SD 2, SE 2/√3);
        // within each the trials differ by 1 (S²_w = 0.5).
        let v = [9.5, 10.5, 11.5, 12.5, 13.5, 14.5];
        let s = [1, 1, 2, 2, 3, 3];
        let l = Levels::of(&v, &s).unwrap();
        assert_eq!(l.k, 3);
        assert!((l.mean - 12.0).abs() < 1e-12);
        assert!((l.se - 2.0 / 3f64.sqrt()).abs() < 1e-12);
        assert!((l.within - 0.5).abs() < 1e-12);
        // var(means) 4 − 0.5 / 2.
        assert!((l.between - 3.75).abs() < 1e-12);
        // t(0.975, 2) = 4.302653.
        let want = 4.302652729 * (2.0 / 3f64.sqrt()) / 12.0 * 100.0;
        assert!((l.ci_half_pct() - want).abs() < 1e-6, "{}", l.ci_half_pct());
        // The naive interval from six trials is far narrower: it ignores
        // that the set-ups differ.
        let naive = crate::stats::adaptive::ci_half_pct(&v).unwrap();
        assert!(naive < l.ci_half_pct() / 2.0, "{naive} vs {}", l.ci_half_pct());
        assert_eq!(means(&v, &s), [10.0, 12.0, 14.0]);
    }

    #[test]
    fn one_setup_or_misaligned_indices_are_not_two_levels() {
        assert!(Levels::of(&[1.0, 2.0], &[1, 1]).is_none());
        assert!(Levels::of(&[1.0, 2.0], &[1]).is_none());
    }

    #[test]
    fn trials_go_where_the_variance_is() {
        let l = |between: f64, within: f64| Levels { k: 3, mean: 100.0, se: 1.0, within, between };
        // Kalibera & Jones: √(c1·S²_w / (c2·τ²)). A set-up costing 10 trials,
        // the trial level 10× the set-up level: √(10·10) = 10 a set-up.
        assert_eq!(l(1.0, 10.0).trials_per_setup(10.0, 1.0, 100), 10);
        // The set-up level dominating: few trials, more set-ups.
        assert_eq!(l(10.0, 1.0).trials_per_setup(10.0, 1.0, 100), 2);
        // Set-ups that do not differ: as many as the cap allows.
        assert_eq!(l(0.0, 1.0).trials_per_setup(10.0, 1.0, 40), 40);
        // More set-ups narrow the interval; enough of them reach the target.
        let k = l(1.0, 10.0).setups_needed(1.0, 10).unwrap();
        let sd_mean = (1.0f64 + 10.0 / 10.0).sqrt();
        assert!(t975(k as f64 - 1.0) * sd_mean / (k as f64).sqrt() <= 1.0);
        assert!(t975(k as f64 - 2.0) * sd_mean / ((k - 1) as f64).sqrt() > 1.0);
    }

    /// 400 simulated runs of 5 set-ups × 4 trials around a true mean of 100:
    /// the two-level interval covers it at the nominal rate, the one-level
    /// interval (all 20 trials as one sample) far less when the set-ups
    /// differ; the optimal-repetition rule asks for more set-ups then (2
    /// trials each) and for more trials a set-up when the trials vary most.
    #[test]
    fn the_two_level_interval_covers_and_the_rule_follows_the_variance() {
        let mut rng = crate::stats::test_rng::Rng(0x5eed_1e7e15);
        let mut run = |setup_sd: f64, trial_sd: f64| {
            let (mut two, mut one, mut per) = (0, 0, Vec::new());
            for _ in 0..400 {
                let (mut v, mut s) = (Vec::new(), Vec::new());
                for j in 1..=5u32 {
                    let level = 100.0 + setup_sd * rng.normal();
                    for _ in 0..4 {
                        v.push(level + trial_sd * rng.normal());
                        s.push(j);
                    }
                }
                let l = Levels::of(&v, &s).unwrap();
                two += ((l.mean - 100.0).abs() / 100.0 * 100.0 <= l.ci_half_pct()) as u32;
                let mean = v.iter().sum::<f64>() / v.len() as f64;
                one += ((mean - 100.0).abs() <= crate::stats::adaptive::ci_half_pct(&v).unwrap()) as u32;
                // A set-up costing as much as 5 trials.
                per.push(l.trials_per_setup(5.0, 1.0, 50));
            }
            per.sort_unstable();
            (two as f64 / 400.0, one as f64 / 400.0, per[200])
        };
        let (two, one, per) = run(5.0, 1.0);
        eprintln!("set-ups dominate: two-level {two}, one-level {one}, median trials a set-up {per}");
        assert!(two >= 0.93 && one < 0.75, "two-level {two}, one-level {one}");
        assert_eq!(per, 2, "more set-ups, fewest trials each");
        let (two, one, per) = run(0.2, 3.0);
        eprintln!("trials dominate: two-level {two}, one-level {one}, median trials a set-up {per}");
        assert!(two >= 0.93 && one >= 0.93, "two-level {two}, one-level {one}");
        assert!(per >= 10, "more trials a set-up: {per}");
    }

    fn plan(budget: u64) -> AdaptivePlan {
        AdaptivePlan::new(6, None, None, 2.0, Some(Duration::from_secs(budget)), None)
    }

    #[test]
    fn the_scheduled_setups_run_then_more_while_the_budget_can_reach_the_target() {
        let p = plan(600);
        let sp = SetupPlan::new(&p, 3);
        assert_eq!(sp.per, 2, "6 trials over 3 set-ups");
        let costs = Costs { setup: 1.0, trial: 1.0 };
        let t = Duration::from_secs(10);
        // One set-up: the levels are unknown, the first plan holds.
        assert_eq!(sp.decide(&p, &[1.0, 1.1], &[1, 1], t, costs), Next::More { per: 2, why: None });
        // Set-ups differing by 10 % around 100 with tight trials: more set-ups, two trials each.
        let v = [99.0, 99.2, 110.0, 110.1, 101.0, 100.9];
        let s = [1, 1, 2, 2, 3, 3];
        match sp.decide(&p, &v, &s, t, costs) {
            Next::More { per, why: Some(why) } => {
                assert_eq!(per, 2);
                assert!(why.starts_with("set-up 4: two-level 95 % CI"), "{why}");
            }
            other => panic!("{other:?}"),
        }
        // Alike set-ups and tight trials: the target is reached.
        let v = [100.0, 100.2, 100.1, 100.3, 100.2, 100.0];
        assert_eq!(sp.decide(&p, &v, &s, t, costs), Next::Stop(Stop::Target, None));
        // No time left: the budget stops it, and says so.
        let v = [99.0, 99.2, 110.0, 110.1, 101.0, 100.9];
        match sp.decide(&plan(11), &v, &s, t, costs) {
            Next::Stop(Stop::Budget, Some(w)) => assert!(w.contains("after 3 set-ups of 6 trials"), "{w}"),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn runs_fix_the_trials_of_each_setup() {
        let p = AdaptivePlan::new(3, None, None, 5.0, None, Some(8));
        let sp = SetupPlan::new(&p, 2);
        assert_eq!(sp.per, 4, "--runs 8 in two set-ups");
        let c = Costs { setup: 1.0, trial: 1.0 };
        let v = [1.0, 1.0, 1.0, 1.0, 2.0, 2.0, 2.0, 2.0];
        let s = [1, 1, 1, 1, 2, 2, 2, 2];
        match sp.decide(&p, &v, &s, Duration::from_secs(8), c) {
            Next::Stop(Stop::Forced, Some(w)) => assert!(w.starts_with("--runs 8 in 2 set-ups: two-level"), "{w}"),
            other => panic!("{other:?}"),
        }
    }
}
