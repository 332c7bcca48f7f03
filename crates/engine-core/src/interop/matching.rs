//! Which of engine's tests does a PTS result's work — decided from profile
//! data only, and never by guessing (the book, "PTS compatibility"):
//!
//! - **the test**: an engine profile whose title is PTS's title and whose
//!   `app_version` is in the same release line as PTS's AppVersion (Cargo's
//!   caret rule: equal up to the first non-zero part, so fio 3.1 and 3.33
//!   agree, PostgreSQL 10.3 and 15 or Compile Bench 0.6 and 1.0 do not);
//! - **the entries**: every `Name: Label` of PTS's description names an
//!   option of that profile and an entry with exactly that label, or the
//!   description of one of its results (PTS models compilebench's results
//!   as a `Test` option); PTS's generated `Disk Target` is where PTS ran,
//!   not what it ran. Every option of the profile that PTS does not name
//!   must leave no choice (one entry): its default would be a guess;
//! - **the result**: the one PTS's description names, else the only one
//!   with PTS's unit (or its exact twin: see [`unit_fit`]).
//!
//! Anything short of that keeps the result as PTS's own, with the reason.

use crate::expand::Test;
use crate::model::profile::{LoadedProfile, OptionDef, Proportion, ResultDef};
use std::sync::Arc;

/// What PTS says of one result.
pub struct PtsTest<'a> {
    pub title: &'a str,
    pub app_version: &'a str,
    /// `Type: Random Read - Block Size: 4KB - Disk Target: Default Test Directory`.
    pub description: &'a str,
    pub unit: &'a str,
    pub proportion: Proportion,
}

/// A PTS result lined up with one of engine's tests.
#[derive(Debug)]
pub struct Match {
    pub test: Test,
    pub result_id: String,
    /// Engine's exact unit for the result.
    pub unit: String,
    /// PTS's own label of the unit, when it differs from `unit`.
    pub pts_unit: Option<String>,
    /// What lining it up took: a relabelled unit, another tool version of
    /// the same line, PTS's Disk Target.
    pub notes: Vec<String>,
}

/// Engine's test for a PTS result, or why there is none.
#[derive(Debug)]
pub enum Decision {
    Engine(Box<Match>),
    /// Kept as PTS's own: `no faithful profile: …`.
    PtsOwn(String),
}

/// The option PTS adds to every disk test: the mount point it ran on.
/// Where a test runs is engine's `--target-dir`, not part of its work.
const PTS_GENERATED: &str = "Disk Target";

/// Decides which of `profiles` (if any) does `pts`'s work.
pub(crate) fn decide(profiles: &[Arc<LoadedProfile>], pts: &PtsTest) -> Decision {
    let titled: Vec<&Arc<LoadedProfile>> =
        profiles.iter().filter(|p| same_words(&p.profile.title, pts.title)).collect();
    if titled.is_empty() {
        return own(format!("no engine profile is titled `{}`", pts.title.trim()));
    }
    let described = Described::parse(pts.description);
    let (mut found, mut why) = (Vec::new(), Vec::new());
    for p in titled {
        match against(p, pts, &described) {
            Ok(m) => found.push(m),
            Err(reasons) => why.push(format!("`{}` ({}): {}", p.profile.id, title_line(p), reasons.join("; "))),
        }
    }
    match found.len() {
        1 => Decision::Engine(Box::new(found.remove(0))),
        0 => own(why.join(" — ")),
        _ => {
            let ids: Vec<String> = found.iter().map(|m| format!("`{}`", m.test.label())).collect();
            own(format!("{} all fit it; engine will not pick one", ids.join(", ")))
        }
    }
}

fn own(reason: String) -> Decision {
    Decision::PtsOwn(format!("no faithful profile: {reason}"))
}

/// `Flexible IO Tester 3.33`.
fn title_line(p: &LoadedProfile) -> String {
    match &p.profile.app_version {
        Some(v) => format!("{} {}", p.profile.title, v.0),
        None => p.profile.title.clone(),
    }
}

/// Titles and option names compare as words, ignoring case and spacing.
fn same_words(a: &str, b: &str) -> bool {
    a.split_whitespace().map(str::to_lowercase).eq(b.split_whitespace().map(str::to_lowercase))
}

/// PTS's description, split: `Name: Label` pairs (its options, joined by
/// ` - `) and plain parts (a result's own description PTS appends, such as
/// `Average Latency`).
struct Described {
    pairs: Vec<(String, String)>,
    plain: Vec<String>,
}

impl Described {
    fn parse(description: &str) -> Self {
        let (mut pairs, mut plain) = (Vec::new(), Vec::new());
        for part in description.split(" - ").map(str::trim).filter(|p| !p.is_empty()) {
            match part.split_once(": ") {
                Some((k, v)) => pairs.push((k.trim().to_string(), v.trim().to_string())),
                None => plain.push(part.to_string()),
            }
        }
        Described { pairs, plain }
    }
}

/// `p`'s test and result for `pts`, or every reason it is not PTS's work.
fn against(p: &Arc<LoadedProfile>, pts: &PtsTest, d: &Described) -> Result<Match, Vec<String>> {
    let mut reasons = Vec::new();
    let mut notes = Vec::new();
    match version_fit(p, pts.app_version) {
        Ok(note) => notes.extend(note),
        Err(r) => return Err(vec![r.to_string()]),
    }
    let chosen = entries(p, d, &mut reasons, &mut notes);
    let result = result_for(p, &chosen.named, pts).map_err(|r| reasons.push(r.to_string())).ok();
    match (chosen.choice, result) {
        (Some(choice), Some((def, fit))) if reasons.is_empty() => {
            let pts_unit = match fit {
                UnitFit::Same => None,
                UnitFit::Relabel(note) => {
                    notes.push(note);
                    Some(pts.unit.trim().to_string())
                }
            };
            Ok(Match {
                test: Test { profile: p.clone(), choice, budget: None, monitor_interval: None, setups: None },
                result_id: def.id.clone(),
                unit: def.unit.clone().into(),
                pts_unit,
                notes,
            })
        }
        _ => Err(reasons),
    }
}

/// Whether `p`'s tool is in the release line PTS ran: a note when the
/// versions differ within it, the reason when they are not the same line.
/// Why a profile is not the work PTS's row measured.
#[derive(Debug, thiserror::Error)]
enum Misfit {
    #[error("it states no app_version, so PTS's {0} cannot be checked against it")]
    NoVersion(String),
    #[error("PTS ran version {pts}, another release line than its {ours}")]
    OtherLine { pts: String, ours: String },
    #[error("PTS's description names several results ({0})")]
    SeveralNamed(String),
    #[error("none of its results is `{0}`")]
    NoneNamed(String),
    #[error("PTS reports {unit} {proportion}, its result(s) {ours}")]
    Unit { unit: String, proportion: &'static str, ours: String },
    #[error("PTS's description does not say which of its `{unit}` results ({ids}) it is")]
    Ambiguous { unit: String, ids: String },
}

fn version_fit(p: &LoadedProfile, pts: &str) -> Result<Option<String>, Misfit> {
    let ours = p.profile.app_version.as_ref().map(|v| v.0.trim()).unwrap_or("");
    let pts = pts.trim();
    if ours == pts {
        return Ok(None);
    }
    if ours.is_empty() {
        return Err(Misfit::NoVersion(pts.to_string()));
    }
    if same_line(ours, pts) {
        Ok(Some(format!(
            "PTS ran {} {pts}; engine's `{}` runs {ours}, the same release line",
            p.profile.title, p.profile.id
        )))
    } else {
        Err(Misfit::OtherLine { pts: pts.to_string(), ours: ours.to_string() })
    }
}

/// Cargo's caret rule on dotted versions: equal up to and including the
/// first non-zero part (`3.1` ~ `3.33`, `0.3.3` ≁ `0.4.2`, `10.3` ≁ `15`).
/// A version that is not dotted numbers matches only itself.
fn same_line(a: &str, b: &str) -> bool {
    let parts = |s: &str| -> Option<Vec<u64>> { s.split('.').map(|x| x.parse::<u64>().ok()).collect() };
    let (Some(a), Some(b)) = (parts(a), parts(b)) else { return a == b };
    let upto = a.iter().position(|&x| x != 0).unwrap_or(a.len().saturating_sub(1));
    a.len() > upto && b.len() > upto && a[..=upto] == b[..=upto]
}

/// The entries PTS's description chooses, and the result it names.
struct Chosen {
    /// One entry per option; none when an option is left undecided.
    choice: Option<Vec<usize>>,
    /// Result descriptions the description names (`Compile`, `Average Latency`).
    named: Vec<String>,
}

/// Reads PTS's `Name: Label` pairs against `p`'s options; what does not fit
/// goes to `reasons`, PTS's generated Disk Target to `notes`.
fn entries(p: &LoadedProfile, d: &Described, reasons: &mut Vec<String>, notes: &mut Vec<String>) -> Chosen {
    let opts = &p.profile.options;
    let mut choice: Vec<Option<usize>> = vec![None; opts.len()];
    let mut named: Vec<String> = d.plain.clone();
    for (name, label) in &d.pairs {
        if let Some(i) = opts.iter().position(|o| same_words(&o.name, name)) {
            match opts[i].entries.iter().position(|e| e.label.trim() == label) {
                Some(_) if choice[i].is_some() => reasons.push(format!("PTS names `{name}` twice")),
                Some(e) => choice[i] = Some(e),
                None => reasons.push(format!("`{name}: {label}` is not an entry of its {}", menu(&opts[i]))),
            }
        } else if same_words(name, PTS_GENERATED) {
            notes.push(format!("`{name}: {label}` is where PTS ran it, not what it ran (engine: --target-dir)"));
        } else if p.profile.results.iter().any(|r| r.description.as_deref().is_some_and(|x| x.trim() == label)) {
            named.push(label.clone());
        } else {
            reasons.push(format!("PTS's option `{name}` ({label}) has no counterpart in it"));
        }
    }
    for (i, o) in opts.iter().enumerate() {
        if choice[i].is_none() {
            match o.entries.len() {
                1 => choice[i] = Some(0),
                _ => reasons.push(format!("PTS's result does not say which {} it ran", menu(o))),
            }
        }
    }
    Chosen { choice: choice.into_iter().collect(), named }
}

/// `Run Time` (20 Seconds, 60 Seconds, 2 Seconds).
fn menu(o: &OptionDef) -> String {
    let labels: Vec<&str> = o.entries.iter().map(|e| e.label.as_str()).collect();
    format!("`{}` ({})", o.name, labels.join(", "))
}

/// The result of `p` that PTS's row is: the one its description names, else
/// the only one with PTS's unit and proportion (among several, the only one
/// without a description of its own, which PTS's would have carried).
fn result_for<'p>(p: &'p LoadedProfile, named: &[String], pts: &PtsTest) -> Result<(&'p ResultDef, UnitFit), Misfit> {
    let unit = pts.unit;
    let results = &p.profile.results;
    let candidates: Vec<&ResultDef> = match named {
        [] => results.iter().collect(),
        [one] => results.iter().filter(|r| r.description.as_deref().map(str::trim) == Some(one.as_str())).collect(),
        many => return Err(Misfit::SeveralNamed(many.join(", "))),
    };
    if candidates.is_empty() {
        return Err(Misfit::NoneNamed(named.join(", ")));
    }
    let fits: Vec<(&ResultDef, UnitFit)> = candidates
        .iter()
        .filter(|r| r.proportion == pts.proportion)
        .filter_map(|r| unit_fit(unit, &r.unit, &p.profile.id).map(|f| (*r, f)))
        .collect();
    let plain: Vec<&(&ResultDef, UnitFit)> = fits.iter().filter(|(r, _)| r.description.is_none()).collect();
    match (fits.len(), plain.len()) {
        (1, _) => Ok(fits.into_iter().next().expect("one")),
        (0, _) => {
            let units: Vec<String> = candidates.iter().map(|r| format!("{} {}", r.unit, hib(r.proportion))).collect();
            Err(Misfit::Unit { unit: unit.trim().to_string(), proportion: hib(pts.proportion), ours: units.join(", ") })
        }
        (_, 1) => {
            let id = plain[0].0.id.clone();
            Ok(fits.into_iter().find(|(r, _)| r.id == id).expect("present"))
        }
        _ => {
            let ids: Vec<&str> = fits.iter().map(|(r, _)| r.id.as_str()).collect();
            Err(Misfit::Ambiguous { unit: unit.trim().to_string(), ids: ids.join(", ") })
        }
    }
}

/// `HIB`, `LIB`: as PTS writes it.
fn hib(p: Proportion) -> &'static str {
    match p {
        Proportion::Hib => "HIB",
        Proportion::Lib => "LIB",
    }
}

/// How PTS's unit label relates to engine's exact unit.
#[derive(Debug, PartialEq)]
enum UnitFit {
    Same,
    /// PTS wrote a decimal prefix for what engine's faithful profile states
    /// is binary (fio's and iozone's "MB/s" are MiB/s): the number is the
    /// same quantity, relabelled; the note says so.
    Relabel(String),
}

/// Whether a PTS value labelled `pts` is engine's `ours` (of profile `id`).
/// Only the label can be loose: a profile matched by title, version and
/// labels reports PTS's quantity (the book's rule), so where it states MiB/s
/// for PTS's "MB/s", PTS's number is MiB/s. Any other difference is another
/// quantity, never converted on a guess.
fn unit_fit(pts: &str, ours: &str, id: &str) -> Option<UnitFit> {
    let (pts, ours) = (pts.trim(), ours.trim());
    if pts == ours {
        return Some(UnitFit::Same);
    }
    let (p, o) = (byte_unit(pts)?, byte_unit(ours)?);
    (!p.binary && o.binary && p.magnitude == o.magnitude && p.rest == o.rest).then(|| {
        UnitFit::Relabel(format!(
            "PTS labels this unit `{pts}`; its value is {ours} (2^{} bytes{}), as engine's `{id}` reports it: \
             relabelled, values unchanged",
            o.power,
            &o.rest[1..]
        ))
    })
}

/// A byte unit split: `MiB/s` → magnitude `M`, binary, rest `B/s`.
struct ByteUnit<'a> {
    magnitude: char,
    binary: bool,
    power: u32,
    rest: &'a str,
}

fn byte_unit(u: &str) -> Option<ByteUnit<'_>> {
    let b = u.find('B')?;
    let (prefix, rest) = u.split_at(b);
    let (magnitude, binary) = match prefix.as_bytes() {
        [m] => (m.to_ascii_uppercase() as char, false),
        [m, b'i'] => (*m as char, true),
        _ => return None,
    };
    let step = "KMGT".find(magnitude)? as u32 + 1;
    Some(ByteUnit { magnitude, binary, power: 10 * step, rest })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn release_lines_follow_the_caret_rule() {
        assert!(same_line("3.1", "3.33"));
        assert!(same_line("3.22", "3.40"));
        assert!(!same_line("10.3", "15"));
        assert!(!same_line("0.6", "1.0"));
        assert!(!same_line("0.3.3", "0.4.2"));
        assert!(same_line("0.4", "0.4.2"));
        assert!(!same_line("4.18", "6.1"));
        assert!(!same_line("1.9.0-jumbo", "1.9.0"));
    }

    #[test]
    fn only_a_decimal_label_for_a_binary_unit_is_relabelled() {
        assert_eq!(unit_fit("MB/s", "MB/s", "fio"), Some(UnitFit::Same));
        assert!(matches!(unit_fit("MB/s", "MiB/s", "fio"), Some(UnitFit::Relabel(n)) if n.contains("2^20 bytes/s")));
        assert!(matches!(unit_fit("KB/s", "KiB/s", "x"), Some(UnitFit::Relabel(n)) if n.contains("2^10")));
        // Exact labels of other quantities are never converted on a guess.
        assert_eq!(unit_fit("MiB/s", "MB/s", "fio"), None);
        assert_eq!(unit_fit("MB/s", "GiB/s", "fio"), None);
        assert_eq!(unit_fit("MB/s", "IOPS", "fio"), None);
        assert_eq!(unit_fit("MB", "MiB/s", "fio"), None);
    }

    fn profile(yaml: &str) -> Arc<LoadedProfile> {
        use crate::profile::load::{Packages, profile_from_str};
        let p = profile_from_str(yaml, "t.yaml", crate::model::profile::Origin::Builtin, &Packages::builtin());
        Arc::new(p.unwrap())
    }

    const PG: &str = r#"
id: pg
version: 1.0.0
title: PostgreSQL pgbench
app_version: "10.3"
test_type: system
options:
  - {id: mode, name: Mode, entries: [{label: Read Only, value: "-S"}, {label: Read Write, value: ""}]}
  - {id: clients, name: Clients, entries: [{label: "50", value: 50}]}
executor: {external: {program: "true"}}
results:
  - {id: tps, unit: TPS, proportion: HIB}
  - {id: latency, unit: ms, proportion: LIB, description: Average Latency}
parsers:
  - {result: tps, regex: 'tps (?P<value>[0-9.]+)'}
  - {result: latency, regex: 'lat (?P<value>[0-9.]+)'}
"#;

    fn pts<'a>(version: &'a str, description: &'a str, unit: &'a str, proportion: Proportion) -> PtsTest<'a> {
        PtsTest { title: "PostgreSQL  pgbench", app_version: version, description, unit, proportion }
    }

    #[test]
    fn a_result_lands_on_the_entry_and_result_it_names() {
        let ps = [profile(PG)];
        let d = decide(&ps, &pts("10.3", "Mode: Read Write - Average Latency", "ms", Proportion::Lib));
        let Decision::Engine(m) = d else { panic!("{d:?}") };
        assert_eq!(
            (m.result_id.as_str(), m.test.description().as_str()),
            ("latency", "Mode: Read Write - Clients: 50")
        );
        let d = decide(&ps, &pts("10.3", "Mode: Read Only", "TPS", Proportion::Hib));
        let Decision::Engine(m) = d else { panic!("{d:?}") };
        assert_eq!(m.result_id, "tps", "the one result without a description of its own");
    }

    #[test]
    fn anything_short_of_the_rule_keeps_the_result_as_pts_own() {
        let ps = [profile(PG)];
        let why = |v, d, u, p| match decide(&ps, &pts(v, d, u, p)) {
            Decision::PtsOwn(w) => w,
            d => panic!("{d:?}"),
        };
        assert!(why("15", "Mode: Read Only", "TPS", Proportion::Hib).contains("another release line than its 10.3"));
        assert!(
            why("10.3", "Mode: Read Only - Scaling: Buffer Test", "TPS", Proportion::Hib)
                .contains("PTS's option `Scaling` (Buffer Test) has no counterpart")
        );
        assert!(why("10.3", "Mode: Read-Only", "TPS", Proportion::Hib).contains("`Mode: Read-Only` is not an entry"));
        assert!(why("10.3", "Clients: 50", "TPS", Proportion::Hib).contains("does not say which `Mode`"));
        assert!(why("10.3", "Mode: Read Only", "TPS", Proportion::Lib).contains("PTS reports TPS LIB"));
        let d = decide(&ps, &PtsTest { title: "pgbench", ..pts("10.3", "Mode: Read Only", "TPS", Proportion::Hib) });
        assert!(matches!(d, Decision::PtsOwn(w) if w == "no faithful profile: no engine profile is titled `pgbench`"));
        // Two profiles that both do the work: engine does not pick one.
        let twin = profile(&PG.replace("id: pg", "id: pg2"));
        let d = decide(&[ps[0].clone(), twin], &pts("10.3", "Mode: Read Only", "TPS", Proportion::Hib));
        assert!(matches!(d, Decision::PtsOwn(w) if w.contains("all fit it")));
    }

    #[test]
    fn descriptions_split_into_options_and_result_names() {
        let d = Described::parse("Scaling Factor: 100 - Clients: 50 - Mode: Read Only - Average Latency");
        assert_eq!(d.pairs.len(), 3);
        assert_eq!(d.pairs[1], ("Clients".to_string(), "50".to_string()));
        assert_eq!(d.plain, ["Average Latency"]);
    }
}
