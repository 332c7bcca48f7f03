//! History: each result's value over many saved results, in time order (or
//! a tag's), with the change points E-Divisive finds in it
//! ([`crate::stats::changepoint`]) and, for each, the means on either side
//! and their ratio with its 95 % interval.
//!
//! The axis is made of rows. When an identifier recurs across the results
//! (nightly runs of one host, a scheduler sweep repeated) each identifier is
//! a line of its own and a row is one saved result; when every identifier
//! occurs once (one result others appended their runs to) the identifiers
//! are the points of a single line.
//!
//! A change is kept only when the means on either side differ by the
//! minimum magnitude; the weakest one under it is dropped and its
//! neighbours' sides recomputed until every one left passes (as Apache
//! Otava does), so a change of spread alone is not reported as a step.

use super::significance::{self, Comparison};
use crate::model::facts::{Identifier, Timestamp, Unit};
use crate::model::profile::Proportion;
use crate::model::result::{ResultFile, System, TestResult};
use crate::stats::changepoint::{self, Settings};
use indexmap::IndexMap;
use std::cmp::Ordering;

/// Default minimum magnitude of a reported change, percent.
pub const MIN_MAGNITUDE_PCT: f64 = significance::NOISE_PCT;

/// What the axis is ordered by.
#[derive(Debug, Clone, PartialEq)]
pub enum Order {
    /// The runs' start times.
    Time,
    /// A tag's values, in natural order (`6.9` before `6.10`).
    Tag(String),
}

/// What a history is made of.
#[derive(Debug, Clone)]
pub struct Query {
    /// Identifiers with all these tags only.
    pub tags: Vec<(String, String)>,
    /// Results matching any of these only (test identity, profile id, description).
    pub tests: Vec<String>,
    pub order: Order,
    pub settings: Settings,
    pub min_magnitude_pct: f64,
}

impl Default for Query {
    fn default() -> Self {
        Query {
            tags: Vec::new(),
            tests: Vec::new(),
            order: Order::Time,
            settings: Settings::default(),
            min_magnitude_pct: MIN_MAGNITUDE_PCT,
        }
    }
}

/// One place on the axis.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Row {
    /// The saved result.
    pub result: String,
    /// Its identifiers on this row.
    pub identifiers: Vec<Identifier>,
    /// When the run started (the earliest of its identifiers).
    pub time: Timestamp,
    /// What the row is ordered by: the time, or the tag's value.
    pub key: String,
    /// The tags of its (first) identifier.
    pub tags: IndexMap<String, String>,
}

/// A change point of one series.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Change {
    /// The first row after the change.
    pub row: usize,
    /// Its position among the series' points.
    #[serde(skip)]
    pub at: usize,
    /// The permutation test's p-value.
    pub p: f64,
    /// Mean of the points since the previous change.
    pub before: f64,
    /// Mean of the points up to the next change.
    pub after: f64,
    /// after / before, with its 95 % interval (Fieller).
    pub ratio: f64,
    pub ratio_ci: Option<(f64, f64)>,
    pub change_pct: f64,
    /// `better by 8.1 %`, `worse by 3.0 %`, `equivalent within ±2 %` or `undecided`.
    pub verdict: String,
    #[serde(skip)]
    pub comparison: Comparison,
}

/// One result's values over the rows, for one line.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Series {
    pub test: String,
    pub result: String,
    pub profile: String,
    pub title: String,
    pub description: String,
    pub unit: Unit,
    pub proportion: Proportion,
    /// The identifier, when each identifier is a line.
    pub line: Option<Identifier>,
    /// (row, value), by row.
    pub points: Vec<(usize, f64)>,
    /// False when the series is too short to look for change points.
    pub analysed: bool,
    pub changes: Vec<Change>,
    /// Rows whose value was set aside as a single outlier (its neighbours'
    /// median stood in for it in the search).
    pub outliers: Vec<usize>,
    /// Points left out of the search: only the newest [`MAX_SEARCHED`] are
    /// searched for change points (0 when all are).
    pub unsearched: usize,
}

/// The most points of one series searched for change points: the search
/// (a permutation test per change) grows faster than the points, and a
/// history is read for its recent steps; older points stay in the table.
pub const MAX_SEARCHED: usize = 2000;

impl Series {
    pub(crate) fn values(&self) -> Vec<f64> {
        self.points.iter().map(|p| p.1).collect()
    }
}

/// A history.
#[derive(Debug, Clone, serde::Serialize)]
pub struct History {
    pub rows: Vec<Row>,
    /// Each identifier a line of its own (else one line, identifiers as points).
    pub per_identifier: bool,
    /// `time`, or ``tag `kernel` ``.
    pub order: String,
    /// The tag the rows are ordered by, if any.
    pub by: Option<String>,
    pub series: Vec<Series>,
    pub alpha: f64,
    pub permutations: u32,
    pub min_magnitude_pct: f64,
    /// Fewest points a series needs for change points: fewer cannot reach
    /// `alpha` whatever they show ([`min_points`]).
    pub min_points: usize,
    /// Fewest points on each side of a change.
    pub min_side: usize,
    /// What was left out and why.
    pub notes: Vec<String>,
    /// The group of saved results this history is, when none were named.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub group: Option<Group>,
}

/// Saved results that make one history: they share a profile (directly or
/// through others) and their identifiers carry the same tag keys.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Group {
    pub profiles: Vec<String>,
    pub tag_keys: Vec<String>,
    pub results: Vec<String>,
}

impl Group {
    /// `fio, sha256; tagged build` — what a reader tells groups apart by.
    pub(crate) fn describe(&self) -> String {
        let tags = match self.tag_keys.is_empty() {
            true => "untagged".to_string(),
            false => format!("tagged {}", self.tag_keys.join(", ")),
        };
        format!("{}; {tags}", self.profiles.join(", "))
    }
}

#[derive(Debug, thiserror::Error, PartialEq)]
pub enum HistoryError {
    #[error("{0}")]
    Units(Box<UnitConflict>),
    #[error("no result matches {0}")]
    NoTest(String, Vec<String>),
    #[error("nothing to show: {0}")]
    Empty(String),
}

/// One result in two units.
#[derive(Debug, thiserror::Error, PartialEq)]
#[error(
    "`{title}: {what}` is in `{unit_a}` in {at_a} and in `{unit_b}` in {at_b}: values in different units are not one history"
)]
pub struct UnitConflict {
    pub title: String,
    pub what: String,
    pub unit_a: Unit,
    pub at_a: String,
    pub unit_b: Unit,
    pub at_b: String,
}

/// A point before rows are made: one identifier of one saved result.
struct Point<'a> {
    result: &'a str,
    system: &'a System,
    key: String,
}

/// The history of `files` (saved result name, file) as `q` asks.
pub fn build(files: &[(String, ResultFile)], q: &Query) -> Result<History, HistoryError> {
    let mut notes = Vec::new();
    let points = points(files, q, &mut notes)?;
    let per_identifier = {
        let mut seen = std::collections::HashSet::new();
        points.iter().any(|p| !seen.insert(p.system.identifier.as_str()))
    };
    let (rows, place) = rows(&points, per_identifier, &q.order);
    let mut series = collect(files, q, per_identifier, &place)?;
    analyse(&mut series, q);
    let order = match &q.order {
        Order::Time => "time".to_string(),
        Order::Tag(k) => format!("tag `{k}`"),
    };
    Ok(History {
        rows,
        per_identifier,
        order,
        by: match &q.order {
            Order::Tag(k) => Some(k.clone()),
            Order::Time => None,
        },
        series,
        alpha: q.settings.alpha,
        permutations: q.settings.permutations,
        min_magnitude_pct: q.min_magnitude_pct,
        min_points: min_points(q),
        min_side: q.settings.min_size.max(2),
        notes,
        group: None,
    })
}

/// The histories of every saved result: one per [`Group`], joined
/// transitively (a nightly suite and a later run of one of its profiles are
/// one history; a scheduler sweep and an untagged sha256 run are two), so an
/// identifier shared by unrelated results never joins them into one line.
/// Groups with nothing `q` asks for are left out; the largest comes first.
pub fn build_grouped(files: Vec<(String, ResultFile)>, q: &Query) -> Result<Vec<History>, HistoryError> {
    if files.is_empty() {
        return build(&files, q).map(|h| vec![h]);
    }
    let groups = partition(&files);
    let every_profile = profiles_of(&files);
    let mut files: Vec<Option<(String, ResultFile)>> = files.into_iter().map(Some).collect();
    let mut out = Vec::new();
    let (mut no_test, mut empty) = (None, None);
    for members in groups {
        let part: Vec<(String, ResultFile)> = members.iter().filter_map(|&i| files[i].take()).collect();
        match build(&part, q) {
            Ok(mut h) if !h.series.is_empty() => {
                h.group = Some(group_of(&part));
                out.push(h);
            }
            Ok(_) => {}
            Err(e @ HistoryError::Units(_)) => return Err(e),
            Err(HistoryError::NoTest(asked, _)) => no_test = Some(asked),
            Err(e) => {
                empty.get_or_insert(e);
            }
        }
    }
    if out.is_empty() {
        // The test asked for is the clearer answer; then why the identifiers did not match.
        return Err(match (no_test, empty) {
            (Some(asked), _) => HistoryError::NoTest(asked, every_profile),
            (None, Some(e)) => e,
            (None, None) => HistoryError::Empty("no saved result has a value".into()),
        });
    }
    out.sort_by_key(|h| std::cmp::Reverse(h.rows.len()));
    Ok(out)
}

/// Indices of `files` by group, each group in the files' order.
pub(crate) fn partition(files: &[(String, ResultFile)]) -> Vec<Vec<usize>> {
    let mut parent: Vec<usize> = (0..files.len()).collect();
    fn root(parent: &mut [usize], mut i: usize) -> usize {
        while parent[i] != i {
            parent[i] = parent[parent[i]];
            i = parent[i];
        }
        i
    }
    let mut first: std::collections::HashMap<(Vec<&str>, &str), usize> = std::collections::HashMap::new();
    for (i, (_, f)) in files.iter().enumerate() {
        let keys = tag_keys(f);
        for r in &f.results {
            let j = *first.entry((keys.clone(), r.profile.as_str())).or_insert(i);
            let (a, b) = (root(&mut parent, i), root(&mut parent, j));
            parent[a.max(b)] = a.min(b);
        }
    }
    let mut groups: IndexMap<usize, Vec<usize>> = IndexMap::new();
    for i in 0..files.len() {
        let r = root(&mut parent, i);
        groups.entry(r).or_default().push(i);
    }
    groups.into_values().collect()
}

/// The tag keys of a result's identifiers, sorted.
fn tag_keys(f: &ResultFile) -> Vec<&str> {
    let mut keys: Vec<&str> = f.systems.iter().flat_map(|s| s.tags.keys().map(String::as_str)).collect();
    keys.sort_unstable();
    keys.dedup();
    keys
}

fn profiles_of(files: &[(String, ResultFile)]) -> Vec<String> {
    let mut profiles: Vec<String> =
        files.iter().flat_map(|(_, f)| f.results.iter().map(|r| r.profile.clone())).collect();
    profiles.sort();
    profiles.dedup();
    profiles
}

fn group_of(files: &[(String, ResultFile)]) -> Group {
    let mut tags: Vec<String> = files.iter().flat_map(|(_, f)| tag_keys(f)).map(str::to_string).collect();
    tags.sort();
    tags.dedup();
    Group { profiles: profiles_of(files), tag_keys: tags, results: files.iter().map(|(n, _)| n.clone()).collect() }
}

/// The identifiers that have every tag asked for (and the order's tag).
fn points<'a>(
    files: &'a [(String, ResultFile)],
    q: &Query,
    notes: &mut Vec<String>,
) -> Result<Vec<Point<'a>>, HistoryError> {
    let mut out = Vec::new();
    let mut untagged = 0;
    for (name, f) in files {
        for s in f.systems.iter().filter(|s| q.tags.iter().all(|(k, v)| s.tags.get(k) == Some(v))) {
            let key = match &q.order {
                Order::Time => s.started.to_string(),
                Order::Tag(k) => match s.tags.get(k) {
                    Some(v) => v.clone(),
                    None => {
                        untagged += 1;
                        continue;
                    }
                },
            };
            out.push(Point { result: name, system: s, key });
        }
    }
    if let (Order::Tag(k), true) = (&q.order, untagged > 0) {
        notes.push(format!("{untagged} identifier(s) left out: no tag `{k}` to order them by"));
    }
    if out.is_empty() {
        let why = match q.tags.is_empty() {
            true => "no saved result has an identifier".to_string(),
            false => format!(
                "no identifier is tagged {}",
                q.tags.iter().map(|(k, v)| format!("{k}={v}")).collect::<Vec<_>>().join(" and ")
            ),
        };
        return Err(HistoryError::Empty(why));
    }
    Ok(out)
}

/// Natural order: runs of digits compare as numbers (`6.9` < `6.10`).
pub(crate) fn natural(a: &str, b: &str) -> Ordering {
    let (mut x, mut y) = (a.as_bytes(), b.as_bytes());
    loop {
        match (x.first(), y.first()) {
            (None, None) => return Ordering::Equal,
            (None, _) => return Ordering::Less,
            (_, None) => return Ordering::Greater,
            (Some(c), Some(d)) if c.is_ascii_digit() && d.is_ascii_digit() => {
                let (n, m) = (digits(x), digits(y));
                let (p, r) = (trim_zeros(&x[..n]), trim_zeros(&y[..m]));
                let o = p.len().cmp(&r.len()).then_with(|| p.cmp(r));
                if o != Ordering::Equal {
                    return o;
                }
                (x, y) = (&x[n..], &y[m..]);
            }
            (Some(c), Some(d)) if c != d => return c.cmp(d),
            _ => (x, y) = (&x[1..], &y[1..]),
        }
    }
}

fn digits(s: &[u8]) -> usize {
    s.iter().take_while(|c| c.is_ascii_digit()).count()
}

fn trim_zeros(s: &[u8]) -> &[u8] {
    let z = s.iter().take_while(|&&c| c == b'0').count();
    &s[z.min(s.len().saturating_sub(1))..]
}

/// Rows in order, and where each (result, identifier) sits.
fn rows(
    points: &[Point<'_>],
    per_identifier: bool,
    order: &Order,
) -> (Vec<Row>, IndexMap<(String, Identifier), usize>) {
    let mut rows: IndexMap<(String, String), Row> = IndexMap::new();
    // A result's identifiers share a row when they are lines; with time
    // order the row is at its earliest start.
    let mut earliest: IndexMap<&str, &str> = IndexMap::new();
    for p in points {
        let e = earliest.entry(p.result).or_insert(p.system.started.as_str());
        if p.system.started.as_str() < *e {
            *e = p.system.started.as_str();
        }
    }
    for p in points {
        let key = match (order, per_identifier) {
            (Order::Time, true) => earliest[p.result].to_string(),
            _ => p.key.clone(),
        };
        let id = if per_identifier { key.clone() } else { p.system.identifier.to_string() };
        let row = rows.entry((p.result.to_string(), id)).or_insert_with(|| Row {
            result: p.result.to_string(),
            identifiers: Vec::new(),
            time: p.system.started.clone(),
            key,
            tags: p.system.tags.clone(),
        });
        row.identifiers.push(p.system.identifier.clone());
        if p.system.started < row.time {
            row.time = p.system.started.clone();
        }
    }
    let mut rows: Vec<Row> = rows.into_values().collect();
    let by = |a: &Row, b: &Row| match order {
        Order::Time => a.key.cmp(&b.key),
        Order::Tag(_) => natural(&a.key, &b.key),
    };
    rows.sort_by(|a, b| by(a, b).then_with(|| a.result.cmp(&b.result)).then_with(|| a.identifiers.cmp(&b.identifiers)));
    let mut place = IndexMap::new();
    for (k, r) in rows.iter().enumerate() {
        for id in &r.identifiers {
            place.insert((r.result.clone(), id.clone()), k);
        }
    }
    (rows, place)
}

/// Every series with its points, units checked.
fn collect(
    files: &[(String, ResultFile)],
    q: &Query,
    per_identifier: bool,
    place: &IndexMap<(String, Identifier), usize>,
) -> Result<Vec<Series>, HistoryError> {
    let mut series: IndexMap<(String, String, Option<String>), Series> = IndexMap::new();
    // The first unit seen of each result, and where.
    let mut units: IndexMap<(String, String), (String, String)> = IndexMap::new();
    let wanted = |r: &TestResult| q.tests.is_empty() || q.tests.iter().any(|t| r.matches(t));
    for (name, f) in files {
        for r in f.results.iter().filter(|r| wanted(r)) {
            for e in r.entries.iter().filter(|e| e.value.is_finite()) {
                let Some(&row) = place.get(&(name.clone(), e.identifier.clone())) else { continue };
                let at = format!("`{name}` ({})", e.identifier);
                let (unit, first) =
                    units.entry((r.test.clone(), r.result.clone())).or_insert((r.unit.clone().into(), at.clone()));
                if *unit != r.unit {
                    return Err(HistoryError::Units(Box::new(UnitConflict {
                        title: r.title.clone(),
                        what: r.what().to_string(),
                        unit_a: unit.clone().into(),
                        at_a: first.clone(),
                        unit_b: r.unit.clone(),
                        at_b: at,
                    })));
                }
                let line = per_identifier.then(|| e.identifier.clone());
                series
                    .entry((r.test.clone(), r.result.clone(), line.clone().map(Into::into)))
                    .or_insert_with(|| Series {
                        test: r.test.clone(),
                        result: r.result.clone(),
                        profile: r.profile.clone(),
                        title: r.title.clone(),
                        description: r.description.clone(),
                        unit: r.unit.clone(),
                        proportion: r.proportion,
                        line,
                        points: Vec::new(),
                        analysed: false,
                        changes: Vec::new(),
                        outliers: Vec::new(),
                        unsearched: 0,
                    })
                    .points
                    .push((row, e.value));
            }
        }
    }
    if series.is_empty() && !q.tests.is_empty() {
        let asked = q.tests.iter().map(|t| format!("`{t}`")).collect::<Vec<_>>().join(" or ");
        return Err(HistoryError::NoTest(asked, profiles_of(files)));
    }
    let mut out: Vec<Series> = series.into_values().collect();
    for s in &mut out {
        s.points.sort_by_key(|p| p.0);
    }
    Ok(out)
}

/// Change points of every series, on all cores.
fn analyse(series: &mut [Series], q: &Query) {
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get()).min(series.len().max(1));
    let chunk = series.len().div_ceil(threads).max(1);
    std::thread::scope(|scope| {
        for part in series.chunks_mut(chunk) {
            scope.spawn(move || {
                for s in part {
                    analyse_one(s, q);
                }
            });
        }
    });
}

/// The fewest points of a series that can show a change: both sides as
/// long as the settings ask, and enough orders that a permutation test can
/// reach the significance level at all (8 at 0.05, 10 at 0.01).
pub(crate) fn min_points(q: &Query) -> usize {
    (2 * q.settings.min_size).max(changepoint::points_needed(q.settings.alpha, q.settings.min_size))
}

fn analyse_one(s: &mut Series, q: &Query) {
    let all = s.values();
    s.analysed = all.len() >= min_points(q);
    if !s.analysed {
        return;
    }
    let skip = all.len().saturating_sub(MAX_SEARCHED);
    s.unsearched = skip;
    // One stray run must not hide a clean step: outliers stand aside.
    let (values, outliers) = changepoint::guard(&all[skip..]);
    s.outliers = outliers.iter().map(|&i| s.points[skip + i].0).collect();
    let found = changepoint::e_divisive(&values, &q.settings);
    let mut kept: Vec<(usize, f64)> = found.iter().map(|c| (c.index, c.p)).collect();
    loop {
        let changes = sides(s, (skip, &values), &kept, q.min_magnitude_pct);
        // A change without a ratio (a side's mean is 0) goes first, then the
        // weakest under the minimum magnitude.
        let size = |c: &Option<Change>| c.as_ref().map_or(-1.0, |c| c.change_pct.abs());
        let weakest = changes
            .iter()
            .enumerate()
            .filter(|(_, c)| size(c) < q.min_magnitude_pct)
            .min_by(|a, b| size(a.1).total_cmp(&size(b.1)));
        match weakest {
            Some((k, _)) => {
                kept.remove(k);
            }
            None => {
                s.changes = changes.into_iter().flatten().collect();
                return;
            }
        }
    }
}

/// Each kept change with the means of the points on either side (up to the
/// neighbouring changes).
/// `values` are the series' points from `skip` on.
fn sides(s: &Series, (skip, values): (usize, &[f64]), kept: &[(usize, f64)], noise_pct: f64) -> Vec<Option<Change>> {
    let bounds: Vec<usize> =
        std::iter::once(0).chain(kept.iter().map(|c| c.0)).chain(std::iter::once(values.len())).collect();
    kept.iter()
        .enumerate()
        .map(|(k, &(at, p))| {
            let (before, after) = (&values[bounds[k]..at], &values[at..bounds[k + 2]]);
            let c = significance::compare(after, before, s.proportion, &s.unit, significance::Rule::noise(noise_pct))?;
            let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len() as f64;
            Some(Change {
                row: s.points[skip + at].0,
                at: skip + at,
                p,
                before: mean(before),
                after: mean(after),
                ratio: c.ratio,
                ratio_ci: c.ratio_ci,
                change_pct: c.change_pct,
                verdict: c.verdict.to_string(),
                comparison: c,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::result::ResultEntry;

    fn run(name: &str, day: usize, ids: &[(&str, f64)], unit: &str) -> (String, ResultFile) {
        let mut f = ResultFile::new(name);
        for (id, _) in ids {
            let mut s = System { identifier: (*id).into(), ..Default::default() };
            s.started = format!("2026-11-{:02}T00:00:00Z", day + 1).into();
            s.tags.insert("kernel".into(), format!("6.{day}"));
            f.systems.push(s);
        }
        f.results.push(TestResult {
            test: "fio-1.0-abc".into(),
            profile: "fio".into(),
            profile_version: "1.0.0".into(),
            result: "bw".into(),
            title: "fio".into(),
            app_version: None,
            description: "Random Read".into(),
            options: vec![],
            unit: unit.into(),
            proportion: Proportion::Hib,
            entries: ids
                .iter()
                .map(|(id, v)| ResultEntry::from_trials(id, vec![*v, *v], None, vec![], String::new().into()).unwrap())
                .collect(),
            pts: None,
            repository: None,
            about: String::new(),
        });
        (name.to_string(), f)
    }

    fn step(i: usize) -> f64 {
        // A deterministic ±3 % wobble and a +10 % step at 20.
        let wobble = [0.0, 2.1, -1.7, 0.9, -2.8, 1.4, -0.6, 2.6, -2.2, 0.3][i % 10] / 100.0;
        (if i < 20 { 100.0 } else { 110.0 }) * (1.0 + wobble)
    }

    #[test]
    fn recurring_identifiers_are_lines_and_results_are_rows() {
        let files: Vec<_> =
            (0..30).map(|i| run(&format!("n{i:02}"), i, &[("a", step(i)), ("b", 50.0)], "MB/s")).collect();
        let h = build(&files, &Query::default()).unwrap();
        assert!(h.per_identifier);
        assert_eq!(h.rows.len(), 30);
        assert_eq!(h.series.len(), 2);
        let a = h.series.iter().find(|s| s.line.as_deref() == Some("a")).unwrap();
        assert_eq!(a.changes.len(), 1, "{:?}", a.changes);
        assert_eq!(a.changes[0].row, 20);
        assert!(a.changes[0].verdict.starts_with("better"), "{}", a.changes[0].verdict);
        let (lo, hi) = a.changes[0].ratio_ci.unwrap();
        assert!(lo > 1.05 && hi < 1.15 && lo < a.changes[0].ratio, "{lo} {hi}");
        // A flat line has none.
        assert!(h.series.iter().find(|s| s.line.as_deref() == Some("b")).unwrap().changes.is_empty());
    }

    #[test]
    fn identifiers_of_one_result_are_the_points_of_one_line() {
        let mut one = ResultFile::new("appended");
        for i in 0..8 {
            let (_, f) = run("x", i, &[(&format!("k{i}"), 10.0 + i as f64)], "s");
            one.systems.extend(f.systems);
            match one.results.first_mut() {
                Some(r) => r.entries.extend(f.results[0].entries.clone()),
                None => one.results = f.results,
            }
        }
        let h = build(&[("appended".into(), one)], &Query::default()).unwrap();
        assert!(!h.per_identifier);
        assert_eq!(h.rows.len(), 8);
        assert_eq!(h.series.len(), 1);
        assert_eq!(h.series[0].points.len(), 8);
    }

    #[test]
    fn a_tag_orders_naturally_and_filters() {
        let files: Vec<_> = [9, 10, 2].iter().map(|&d| run(&format!("r{d}"), d, &[("h", d as f64)], "MB/s")).collect();
        let q = Query { order: Order::Tag("kernel".into()), ..Default::default() };
        let h = build(&files, &q).unwrap();
        let keys: Vec<&str> = h.rows.iter().map(|r| r.key.as_str()).collect();
        assert_eq!(keys, ["6.2", "6.9", "6.10"]);
        let q = Query { tags: vec![("kernel".into(), "6.9".into())], ..Default::default() };
        assert_eq!(build(&files, &q).unwrap().rows.len(), 1);
        let q = Query { tags: vec![("kernel".into(), "7".into())], ..Default::default() };
        assert!(matches!(build(&files, &q), Err(HistoryError::Empty(m)) if m.contains("kernel=7")));
        assert_eq!(natural("a02", "a2"), Ordering::Equal);
        assert_eq!(natural("rc9", "rc10"), Ordering::Less);
    }

    #[test]
    fn different_units_are_refused_naming_both() {
        let files = vec![run("one", 1, &[("h", 1.0)], "MB/s"), run("two", 2, &[("h", 1.0)], "MiB/s")];
        let e = build(&files, &Query::default()).unwrap_err().to_string();
        assert!(e.contains("`MB/s` in `one` (h)") && e.contains("`MiB/s` in `two` (h)"), "{e}");
    }

    #[test]
    fn gaps_and_short_series() {
        // `b` is missing from every other run; 5 points are too few.
        let files: Vec<_> = (0..10)
            .map(|i| {
                let ids: Vec<(&str, f64)> = if i % 2 == 0 { vec![("a", 1.0), ("b", 2.0)] } else { vec![("a", 1.0)] };
                run(&format!("n{i}"), i, &ids, "MB/s")
            })
            .collect();
        let h = build(&files, &Query::default()).unwrap();
        let b = h.series.iter().find(|s| s.line.as_deref() == Some("b")).unwrap();
        assert_eq!(b.points.iter().map(|p| p.0).collect::<Vec<_>>(), [0, 2, 4, 6, 8]);
        assert!(!b.analysed);
        assert!(h.series.iter().find(|s| s.line.as_deref() == Some("a")).unwrap().analysed);
        let q = Query { tests: vec!["sqlite".into()], ..Default::default() };
        assert!(matches!(build(&files, &q), Err(HistoryError::NoTest(_, p)) if p == ["fio"]));
    }

    /// With every saved result, a scheduler sweep (untagged, identifiers
    /// `a` and `b`) and a sha256 run do not join the tagged nightly fio runs
    /// that also have an identifier `a`: three histories, each its own rows.
    #[test]
    fn every_saved_result_is_grouped_by_profile_and_tag_keys() {
        let mut files: Vec<_> = (0..8).map(|i| run(&format!("n{i}"), i, &[("a", step(i))], "MB/s")).collect();
        let mut sweep = run("sweep", 20, &[("a", 5.0), ("b", 6.0)], "MB/s");
        sweep.1.systems.iter_mut().for_each(|s| s.tags.clear());
        let mut sha = run("sha", 21, &[("a", 700.0)], "MB/s");
        sha.1.results[0].profile = "sha256".into();
        sha.1.results[0].test = "sha256-1.0-abc".into();
        files.push(sweep);
        files.push(sha);
        assert_eq!(partition(&files), [(0..8).collect::<Vec<_>>(), vec![8], vec![9]]);
        let hs = build_grouped(files, &Query::default()).unwrap();
        let described: Vec<(String, usize)> =
            hs.iter().map(|h| (h.group.as_ref().unwrap().describe(), h.rows.len())).collect();
        assert_eq!(
            described,
            [
                ("fio; tagged kernel".to_string(), 8),
                ("fio; untagged".to_string(), 2),
                ("sha256; tagged kernel".to_string(), 1)
            ]
        );
        assert_eq!(hs[0].series.len(), 1, "only the nightly runs' `a`");
        assert_eq!(hs[0].series[0].points.len(), 8);
        // A later run of one of a group's profiles joins it.
        let mut files: Vec<_> = (0..3).map(|i| run(&format!("n{i}"), i, &[("a", 1.0)], "MB/s")).collect();
        let also = TestResult { profile: "sha256".into(), ..files[0].1.results[0].clone() };
        files[0].1.results.push(also);
        files.push(run("later", 9, &[("a", 1.0)], "MB/s"));
        files[3].1.results[0].profile = "sha256".into();
        assert_eq!(partition(&files), [vec![0, 1, 2, 3]]);
    }

    /// A bare series of `values` (one point a row), analysed as `q` says.
    fn analysed(values: &[f64], q: &Query) -> Series {
        let mut s = Series {
            test: "t".into(),
            result: "r".into(),
            profile: "p".into(),
            title: "t".into(),
            description: String::new(),
            unit: "ops/s".into(),
            proportion: Proportion::Hib,
            line: None,
            points: values.iter().copied().enumerate().collect(),
            analysed: false,
            changes: Vec::new(),
            outliers: Vec::new(),
            unsearched: 0,
        };
        analyse_one(&mut s, q);
        s
    }

    /// The user's eight runs: an 87 % drop after the third. Found at the
    /// defaults, at #3 or #4 (the third run is half-way down), with no
    /// point of the step set aside as an outlier.
    #[test]
    fn a_plain_step_in_eight_runs_is_found_at_the_defaults() {
        let runs = [2769.0, 3032.0, 1654.0, 347.0, 280.0, 256.0, 286.0, 278.0];
        let s = analysed(&runs, &Query::default());
        assert!(s.analysed);
        assert!(s.outliers.is_empty(), "a step's points are not outliers: {:?}", s.outliers);
        assert_eq!(s.changes.len(), 1, "{:?}", s.changes);
        assert!((2..=3).contains(&s.changes[0].row), "{:?}", s.changes[0]);
        assert!(s.changes[0].p <= changepoint::ALPHA && s.changes[0].verdict.starts_with("worse"));
    }

    /// Fewer points than the significance can be reached with are said to
    /// be too few, with what is needed.
    #[test]
    fn too_short_for_the_significance_says_what_it_needs() {
        assert_eq!(min_points(&Query::default()), 8);
        let strict = Query { settings: Settings { alpha: 0.01, ..Settings::default() }, ..Query::default() };
        assert_eq!(min_points(&strict), 10);
        let s = analysed(&[100.0, 101.0, 99.0, 50.0, 51.0, 49.0, 50.0], &Query::default());
        assert!(!s.analysed && s.changes.is_empty());
        let files: Vec<_> = (0..7).map(|i| run(&format!("n{i}"), i, &[("a", 10.0)], "MB/s")).collect();
        let text = crate::report::history::render(
            &[build(&files, &Query::default()).unwrap()],
            crate::report::history::Format::Text,
            100,
        )
        .unwrap();
        assert!(text.contains("too few to show a change at p ≤ 0.05 (8 points needed)"), "{text}");
    }

    fn normal(rng: &mut fastrand::Rng) -> f64 {
        let (u1, u2) = (rng.f64().max(1e-12), rng.f64());
        (-2.0 * u1.ln()).sqrt() * (2.0 * std::f64::consts::PI * u2).cos()
    }

    /// The defaults' power and false alarms, simulated: a single step of
    /// 50 % (up or down) after at least 3 of 8–20 points at 5 % noise is
    /// found in at least 95 % of histories; histories without one raise a
    /// change in at most 5 %.
    #[test]
    fn defaults_find_plain_steps_and_rarely_invent_one() {
        let mut rng = fastrand::Rng::with_seed(54);
        let q = Query::default();
        let (mut found, mut alarms) = (0, 0);
        let trials = 1000;
        for _ in 0..trials {
            let n = rng.usize(8..=20);
            let at = rng.usize(3..=n - 3);
            let after = if rng.bool() { 1.5 } else { 0.5 };
            let step: Vec<f64> =
                (0..n).map(|i| 1000.0 * if i < at { 1.0 } else { after } * (1.0 + 0.05 * normal(&mut rng))).collect();
            let s = analysed(&step, &q);
            found += usize::from(s.changes.iter().any(|c| c.row.abs_diff(at) <= 1));
            assert!(s.outliers.iter().all(|&o| o + 1 != at && o != at), "a step's point set aside: {step:?}");
            let flat: Vec<f64> = (0..n).map(|_| 1000.0 * (1.0 + 0.05 * normal(&mut rng))).collect();
            alarms += usize::from(!analysed(&flat, &q).changes.is_empty());
        }
        eprintln!("steps found in {found} of {trials}; false changes in {alarms} of {trials}");
        assert!(found * 100 >= 95 * trials, "steps found in {found} of {trials}");
        assert!(alarms * 100 <= 5 * trials, "false changes in {alarms} of {trials}");
    }
}
