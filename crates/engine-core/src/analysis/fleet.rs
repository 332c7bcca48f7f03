//! A fleet in one result (many identifiers, one per host): per result the
//! distribution across hosts, in groups that share a system field or tag
//! (`--group-by disk-model`), and the odd hosts — those whose value is far
//! from their group's by a robust rule, with the multiple-testing correction
//! that a fleet of thousands of hosts needs.
//!
//! The rule: within a group of at least [`MIN_GROUP`] hosts, a host's
//! robust z-score is 0.6745 · (x − median) / MAD (Iglewicz & Hoaglin); its
//! p-value is two-sided from Student's t with 0.37 · (n − 1) degrees of
//! freedom (the MAD has about 37 % of the SD's efficiency for normal data,
//! so it is as uncertain as an SD from that many values — a plain normal
//! tail would call noise odd in small groups); Benjamini–Hochberg at 5 %
//! over every (host, result) of the fleet picks the odd ones. With no odd
//! host, that is the chance of any false alarm in the fleet.

use crate::model::facts::Identifier;
use crate::model::profile::Proportion;
use crate::model::result::{ResultFile, System};
use crate::stats::summary::median;
use statrs::distribution::{ContinuousCDF, StudentsT};
use std::collections::HashMap;

/// Fewest hosts in a group for its odd hosts to be judged.
pub const MIN_GROUP: usize = 10;
/// The false discovery rate the odd hosts are picked at.
const ALPHA: f64 = 0.05;
/// Bins of a group's histogram.
pub const BINS: usize = 20;

/// What to show of a fleet.
#[derive(Debug, Clone, Default)]
pub struct Select {
    /// A system field or tag the hosts are grouped by (`disk-model`, `kernel`, `tag:rack`).
    pub group_by: Option<String>,
    /// Only the identifiers matching this glob (`host-1*`).
    pub identifiers: Option<glob::Pattern>,
}

/// One result's values across one group of hosts.
#[derive(Debug, Clone, PartialEq)]
pub struct Distribution {
    pub group: String,
    pub count: usize,
    pub min: f64,
    pub p5: f64,
    pub p25: f64,
    pub median: f64,
    pub p75: f64,
    pub p95: f64,
    pub max: f64,
    /// Hosts per bin of [`BINS`] equal bins from min to max.
    pub histogram: Vec<u32>,
}

/// A host far from its group in one result.
#[derive(Debug, Clone, PartialEq)]
pub struct Odd {
    pub identifier: Identifier,
    /// Index of the result in the file.
    pub result: usize,
    pub group: String,
    pub group_size: usize,
    pub group_median: f64,
    pub value: f64,
    /// value / the group's median, and the host's own 95 % interval of its
    /// mean over that median (the median taken as known).
    pub ratio: f64,
    pub interval: Option<(f64, f64)>,
    /// Worse than its group (by the result's proportion), or better.
    pub worse: bool,
    pub z: f64,
    pub p: f64,
}

/// The fleet view of a result file.
#[derive(Debug, Clone)]
pub struct Fleet {
    /// The hosts shown, and what they are grouped by.
    pub hosts: usize,
    pub group_by: Option<String>,
    /// Per result (its index in the file): its distribution in each group, largest group first.
    pub results: Vec<(usize, Vec<Distribution>)>,
    /// Odd hosts, the furthest from their group first.
    pub odd: Vec<Odd>,
    /// (host, result) pairs judged.
    pub judged: usize,
    /// Hosts missing from a result that others have, per result index.
    pub gaps: Vec<(usize, usize)>,
}

/// How the odd hosts are picked, for the reports to say.
pub const RULE: &str = "robust z-score 0.6745·(x − median)/MAD within each group of 10 hosts or more, two-sided p from Student's t with 0.37·(n − 1) degrees of freedom, Benjamini–Hochberg at 5 % over every host and result";

/// The group of `s` by `key`: `disk-model` (or `disk`) is the disk field
/// without its size; any other key names a hardware or software field or a
/// tag (`tag:KEY` only a tag), spelled with `-`, `_` or spaces alike.
pub fn group_of(s: &System, key: &str) -> Option<String> {
    let norm = |k: &str| k.chars().filter(|c| c.is_alphanumeric()).collect::<String>().to_lowercase();
    if let Some(tag) = key.strip_prefix("tag:") {
        return s.tags.iter().find(|(k, _)| norm(k) == norm(tag)).map(|(_, v)| v.clone());
    }
    let k = norm(key);
    if k == "diskmodel" || k == "disk" {
        let disk = s.hardware.iter().find(|(n, _)| norm(n) == "disk")?.1;
        // `1000GB Samsung SSD 860`: the model is what follows the size.
        let model = match disk.split_once(' ') {
            Some((size, rest)) if size.starts_with(|c: char| c.is_ascii_digit()) && size.ends_with('B') => rest,
            _ => disk.as_str(),
        };
        return Some(model.to_string());
    }
    s.hardware.iter().chain(&s.software).chain(&s.tags).find(|(n, _)| norm(n) == k).map(|(_, v)| v.clone())
}

/// Percentile `q` (0–1) of sorted `v`, interpolated between ranks.
fn percentile(v: &[f64], q: f64) -> f64 {
    let at = q * (v.len() - 1) as f64;
    let (lo, hi) = (at.floor() as usize, at.ceil() as usize);
    v[lo] + (v[hi] - v[lo]) * (at - lo as f64)
}

fn distribution(group: &str, values: &[f64]) -> Distribution {
    let mut v = values.to_vec();
    v.sort_by(f64::total_cmp);
    let (min, max) = (v[0], v[v.len() - 1]);
    let mut histogram = vec![0u32; BINS];
    for x in &v {
        let b = if max > min { (((x - min) / (max - min)) * BINS as f64) as usize } else { 0 };
        histogram[b.min(BINS - 1)] += 1;
    }
    Distribution {
        group: group.to_string(),
        count: v.len(),
        min,
        p5: percentile(&v, 0.05),
        p25: percentile(&v, 0.25),
        median: percentile(&v, 0.5),
        p75: percentile(&v, 0.75),
        p95: percentile(&v, 0.95),
        max,
        histogram,
    }
}

/// A host's value in a result: its identifier, its mean, its own 95 % interval.
/// A host's value in one result, with its SE and the SE's degrees of freedom.
type HostValue<'a> = (&'a str, f64, Option<(f64, f64)>);

/// The fleet view of `f`.
pub fn analyse(f: &ResultFile, sel: &Select) -> Fleet {
    let shown = |id: &str| sel.identifiers.as_ref().is_none_or(|p| p.matches(id));
    // Each shown host's group, as an index into `names`.
    let mut names: Vec<String> = Vec::new();
    let mut name_at: HashMap<String, usize> = HashMap::new();
    let order: Vec<(&str, usize)> = f
        .systems
        .iter()
        .filter(|s| shown(&s.identifier))
        .map(|s| {
            let g = sel.group_by.as_deref().map(|k| group_of(s, k).unwrap_or_else(|| "(not recorded)".into()));
            let g = g.unwrap_or_else(|| "all hosts".into());
            let i = *name_at.entry(g).or_insert_with_key(|g| {
                names.push(g.clone());
                names.len() - 1
            });
            (s.identifier.as_str(), i)
        })
        .collect();
    let group: HashMap<&str, usize> = order.iter().copied().collect();
    let hosts = group.len();
    let mut results = Vec::new();
    let mut candidates: Vec<Odd> = Vec::new();
    let mut judged = 0;
    let mut gaps = Vec::new();
    for (ri, r) in f.results.iter().enumerate() {
        let mut in_group: Vec<Vec<HostValue>> = vec![Vec::new(); names.len()];
        for (k, e) in r.entries.iter().enumerate().filter(|(_, e)| e.value.is_finite()) {
            // A merged fleet's entries follow its systems: the k-th system
            // is checked before the map is asked.
            let g = match order.get(k) {
                Some(&(id, g)) if id == e.identifier => g,
                _ => match group.get(e.identifier.as_str()) {
                    Some(&g) => g,
                    None => continue,
                },
            };
            let se = e.se.map(|se| {
                // The SE's degrees of freedom: set-ups − 1 with set-ups, else trials − 1.
                let units = if e.setup_count() > 1 { e.setup_count() } else { e.n };
                (se, (units as f64 - 1.0).max(1.0))
            });
            in_group[g].push((e.identifier.as_str(), e.value, se));
        }
        let mut by: Vec<(String, Vec<HostValue>)> =
            names.iter().cloned().zip(in_group).filter(|(_, v)| !v.is_empty()).collect();
        let present: usize = by.iter().map(|(_, v)| v.len()).sum();
        if present == 0 {
            continue;
        }
        if present < hosts {
            gaps.push((ri, hosts - present));
        }
        by.sort_by(|a, b| b.1.len().cmp(&a.1.len()).then(a.0.cmp(&b.0)));
        let dists = by.iter().map(|(g, v)| distribution(g, &v.iter().map(|x| x.1).collect::<Vec<_>>())).collect();
        for (g, v) in &by {
            let (odd, n) = odd_in(ri, r.proportion, g, v);
            candidates.extend(odd);
            judged += n;
        }
        results.push((ri, dists));
    }
    let found = super::fdr::benjamini_hochberg_of(&candidates.iter().map(|c| c.p).collect::<Vec<_>>(), judged, ALPHA);
    let mut odd: Vec<Odd> = candidates.into_iter().zip(found).filter(|(_, f)| *f).map(|(c, _)| c).collect();
    odd.sort_by(|a, b| b.z.abs().total_cmp(&a.z.abs()));
    Fleet { hosts, group_by: sel.group_by.clone(), results, odd, judged, gaps }
}

/// The hosts of one group in one result that may be odd (two-sided p at
/// most [`ALPHA`]: no other can be a discovery), with their robust z, p and
/// interval, and how many hosts were judged (the correction counts them all).
fn odd_in(result: usize, p: Proportion, group: &str, v: &[HostValue]) -> (Vec<Odd>, usize) {
    let n = v.len();
    if n < MIN_GROUP {
        return (Vec::new(), 0);
    }
    let values: Vec<f64> = v.iter().map(|x| x.1).collect();
    let med = median(&values);
    let mad = median(&values.iter().map(|x| (x - med).abs()).collect::<Vec<_>>());
    if med == 0.0 {
        return (Vec::new(), 0);
    }
    // A fleet that agrees exactly (MAD 0) still judges: the scale is at
    // least the hosts' typical standard error and a thousandth of the
    // median (the resolution results are kept at), so the one host that
    // differs when all others agree is the clearest odd host there is.
    let ses: Vec<f64> = v.iter().filter_map(|x| x.2.map(|(se, _)| se)).filter(|se| se.is_finite()).collect();
    let floor = (if ses.is_empty() { 0.0 } else { median(&ses) }).max(med.abs() * 1e-3);
    let mad = mad.max(floor);
    let Ok(t) = StudentsT::new(0.0, 1.0, (0.37 * (n - 1) as f64).max(1.0)) else { return (Vec::new(), 0) };
    // One quantile per group instead of a CDF per host: 680,000 of those
    // were most of a 10,000-host report's time.
    let critical = t.inverse_cdf(1.0 - ALPHA / 2.0);
    // Hosts share their trials' degrees of freedom: one quantile for each.
    let mut t975: Vec<(f64, f64)> = Vec::new();
    let mut quantile = |df: f64| match t975.iter().find(|(d, _)| *d == df) {
        Some(&(_, q)) => q,
        None => {
            let q = crate::stats::adaptive::t975(df);
            t975.push((df, q));
            q
        }
    };
    let odd = v
        .iter()
        .filter_map(|(id, x, se)| {
            let z = 0.6745 * (x - med) / mad;
            if z.abs() < critical {
                return None;
            }
            let below = *x < med;
            let interval = se.map(|(se, df)| {
                let h = quantile(df) * se;
                ((x - h) / med, (x + h) / med)
            });
            Some(Odd {
                identifier: (*id).into(),
                result,
                group: group.to_string(),
                group_size: n,
                group_median: med,
                value: *x,
                ratio: x / med,
                interval,
                worse: match p {
                    Proportion::Hib => below,
                    Proportion::Lib => !below,
                },
                z,
                p: (2.0 * (1.0 - t.cdf(z.abs()))).clamp(0.0, 1.0),
            })
        })
        .collect();
    (odd, n)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::result::{ResultEntry, TestResult};
    use crate::stats::test_rng::Rng;

    /// A fleet of `hosts` hosts in `groups` disk models, `results` results;
    /// each host a level of its own (SD 2 %) and 5 trials (SD 1.5 %); the
    /// hosts in `slow` at 0.6× in the first result.
    pub(crate) fn fleet(rng: &mut Rng, hosts: usize, groups: usize, results: usize, slow: &[usize]) -> ResultFile {
        let normal = |rng: &mut Rng| rng.normal();
        let mut f = ResultFile::new("fleet");
        let levels: Vec<Vec<f64>> =
            (0..groups).map(|_| (0..results).map(|_| 100.0 + rng.uniform() * 900.0).collect()).collect();
        f.results = (0..results)
            .map(|k| TestResult {
                test: format!("io@1.0[case={k}]"),
                profile: "io".into(),
                profile_version: "1.0".into(),
                result: "iops".into(),
                title: "Engine I/O".into(),
                app_version: None,
                description: format!("Case {k}"),
                options: vec![],
                unit: "IOPS".into(),
                proportion: Proportion::Hib,
                entries: Vec::new(),
                pts: None,
                repository: None,
                about: String::new(),
            })
            .collect();
        for h in 0..hosts {
            let g = h % groups;
            let id = format!("host-{h}");
            let mut s = System { identifier: id.clone().into(), ..Default::default() };
            s.hardware.insert("Disk".into(), format!("1000GB Model {g}"));
            f.systems.push(s);
            let own = 1.0 + 0.02 * normal(rng);
            for (k, level) in levels[g].iter().enumerate() {
                let slowed = if k == 0 && slow.contains(&h) { 0.6 } else { 1.0 };
                let trials: Vec<f64> = (0..5).map(|_| level * own * slowed * (1.0 + 0.015 * normal(rng))).collect();
                let e = ResultEntry::from_trials(&id, trials, None, vec![], String::new().into()).unwrap();
                f.results[k].entries.push(e);
            }
        }
        f
    }

    fn by_disk() -> Select {
        Select { group_by: Some("disk-model".into()), identifiers: None }
    }

    #[test]
    fn groups_percentiles_and_histograms_by_hand() {
        let mut s = System::default();
        s.hardware.insert("Disk".into(), "1000GB Samsung SSD 860".into());
        s.software.insert("Kernel".into(), "6.1.0-26-amd64 (x86_64)".into());
        s.tags.insert("rack".into(), "r12".into());
        assert_eq!(group_of(&s, "disk-model").as_deref(), Some("Samsung SSD 860"));
        assert_eq!(group_of(&s, "kernel").as_deref(), Some("6.1.0-26-amd64 (x86_64)"));
        assert_eq!(group_of(&s, "tag:rack").as_deref(), Some("r12"));
        assert_eq!(group_of(&s, "Rack").as_deref(), Some("r12"));
        assert_eq!(group_of(&s, "firmware"), None);
        let d = distribution("g", &[5.0, 1.0, 4.0, 2.0, 3.0]);
        assert_eq!((d.min, d.p25, d.median, d.p75, d.max), (1.0, 2.0, 3.0, 4.0, 5.0));
        // p5 at rank 0.2 between 1 and 2.
        assert!((d.p5 - 1.2).abs() < 1e-12 && (d.p95 - 4.8).abs() < 1e-12);
        assert_eq!(d.histogram.iter().sum::<u32>(), 5);
        assert_eq!((d.histogram[0], d.histogram[BINS - 1]), (1, 1));
    }

    #[test]
    fn planted_slow_hosts_are_found_and_named_with_their_group() {
        let mut rng = Rng(7);
        let f = fleet(&mut rng, 300, 3, 10, &[17, 205]);
        let v = analyse(&f, &by_disk());
        assert_eq!(v.hosts, 300);
        assert_eq!(v.results.len(), 10);
        assert_eq!(v.results[0].1.len(), 3, "three disk models");
        assert_eq!(v.judged, 3000);
        let odd: Vec<&str> = v.odd.iter().map(|o| o.identifier.as_str()).collect();
        assert!(odd.contains(&"host-17") && odd.contains(&"host-205"), "{odd:?}");
        assert_eq!(odd.len(), 2, "nothing else: {:?}", v.odd);
        let o = &v.odd[0];
        assert!(o.worse && (o.ratio - 0.6).abs() < 0.05 && o.group_size == 100, "{o:?}");
        let (lo, hi) = o.interval.unwrap();
        assert!(lo < o.ratio && o.ratio < hi && hi < 0.7, "{o:?}");
        // Five trials: t(4) = 2.776 times the SE, over the group's median.
        let e = crate::analysis::entry(&f.results[o.result], &o.identifier).unwrap();
        let want = 2.7764451 * e.se.unwrap() / o.group_median;
        assert!(((hi - lo) / 2.0 - want).abs() < 1e-6, "{o:?}");
        assert!(o.group.starts_with("Model "));
        // A glob narrows the hosts.
        let sel = Select { identifiers: Some(glob::Pattern::new("host-1?").unwrap()), ..by_disk() };
        assert_eq!(analyse(&f, &sel).hosts, 10);
    }

    #[test]
    fn fleets_without_odd_hosts_raise_an_alarm_at_most_five_times_in_a_hundred() {
        let mut rng = Rng(41);
        let alarms =
            (0..100).filter(|_| !analyse(&fleet(&mut rng, 200, 2, 20, &[]), &by_disk()).odd.is_empty()).count();
        eprintln!("false alarms: {alarms} of 100 fleets of 200 hosts × 20 results");
        assert!(alarms <= 5, "{alarms} of 100 fleets");
    }

    /// 200 hosts reporting the same values and one at 0.6× on all 68
    /// results: a MAD of 0 used to judge nothing ("0 odd of 0 judged").
    #[test]
    fn the_odd_host_of_a_fleet_that_agrees_exactly_is_found() {
        let mut f = ResultFile::new("clean");
        f.results = (0..68)
            .map(|k| TestResult {
                test: format!("io@1.0[case={k}]"),
                profile: "io".into(),
                profile_version: "1.0".into(),
                result: "iops".into(),
                title: "Engine I/O".into(),
                app_version: None,
                description: format!("Case {k}"),
                options: vec![],
                unit: "IOPS".into(),
                proportion: Proportion::Hib,
                entries: Vec::new(),
                pts: None,
                repository: None,
                about: String::new(),
            })
            .collect();
        for h in 0..201 {
            let id = format!("host-{h}");
            f.systems.push(System { identifier: id.clone().into(), ..Default::default() });
            for r in f.results.iter_mut() {
                let v = if h == 200 { 600.0 } else { 1000.0 };
                r.entries.push(ResultEntry::from_trials(&id, vec![v; 3], None, vec![], String::new().into()).unwrap());
            }
        }
        let v = analyse(&f, &Select { group_by: None, identifiers: None });
        assert_eq!(v.judged, 68 * 201);
        assert_eq!(v.odd.len(), 68, "{:?}", v.odd.iter().map(|o| &o.identifier).collect::<Vec<_>>());
        assert!(v.odd.iter().all(|o| o.identifier == "host-200" && o.worse && (o.ratio - 0.6).abs() < 1e-9));
    }
}
