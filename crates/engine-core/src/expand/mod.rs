//! Options → tests: the cross product of the entries selected for each option
//! (by `--option`, a suite preset, a menu on a TTY, the profile's default, or
//! every entry in batch mode).

use crate::model::diag::{Diagnostic, Pos, did_you_mean};
use crate::model::profile::LoadedProfile;
use crate::model::profile::OptionDef;
use crate::model::result::OptionChoice;
use indexmap::IndexMap;
use std::sync::Arc;
use thiserror::Error;

/// Where a selection came from, for error messages.
#[derive(Debug, Clone, PartialEq)]
pub enum Origin {
    CommandLine,
    /// A suite file, with the positions of the option key and its value.
    Suite {
        file: String,
        key: Pos,
        value: Pos,
    },
    /// A saved result being re-run.
    SavedResult,
}

/// Entries asked for one option.
#[derive(Debug, Clone, PartialEq)]
pub struct Preset {
    /// Option id or name.
    pub option: String,
    /// Entry labels or values.
    pub entries: Vec<String>,
    pub origin: Origin,
}

#[derive(Debug, Clone, PartialEq, Error)]
pub enum ExpandError {
    #[error("{0}")]
    AtFile(Diagnostic),
    #[error("{msg}\n  hint: {hint}")]
    CommandLine { msg: String, hint: String },
}

/// Picks entries for options that nothing else chose.
pub trait Chooser {
    /// Indexes of the entries to run for `option`; `defaults` are preselected.
    fn choose(&self, profile: &LoadedProfile, option: &OptionDef, defaults: &[usize]) -> Vec<usize>;
}

/// Batch mode: the profile's default entries, or every entry.
pub struct Batch;

impl Chooser for Batch {
    fn choose(&self, _: &LoadedProfile, _: &OptionDef, defaults: &[usize]) -> Vec<usize> {
        defaults.to_vec()
    }
}

/// The most tests one run holds (all its profiles' option combinations):
/// more is a mistake or an attack, not a benchmark anyone waits for.
pub const MAX_TESTS: usize = 4096;

/// One profile with one entry chosen for every option.
#[derive(Debug, Clone)]
pub struct Test {
    pub profile: Arc<LoadedProfile>,
    /// Entry index per option, in the profile's option order.
    pub choice: Vec<usize>,
    /// The time budget of its trials a suite gives it (over the profile's).
    pub budget: Option<std::time::Duration>,
    /// The monitors' interval a suite gives it (over the profile's).
    pub monitor_interval: Option<std::time::Duration>,
    /// The set-ups a suite gives it (over the profile's).
    pub setups: Option<u32>,
}

impl Test {
    /// `Type: Random Read - Block Size: 4KB`.
    pub fn description(&self) -> String {
        self.profile
            .profile
            .options
            .iter()
            .zip(&self.choice)
            .map(|(o, &e)| format!("{}: {}", o.name, o.entries[e].label))
            .collect::<Vec<_>>()
            .join(" - ")
    }

    /// The named values of the chosen entries.
    pub fn bindings(&self) -> IndexMap<String, String> {
        let mut b = IndexMap::new();
        for (o, &e) in self.profile.profile.options.iter().zip(&self.choice) {
            let entry = &o.entries[e];
            if let Some(v) = &entry.value {
                b.insert(o.id.clone(), v.0.clone());
            }
            for (k, v) in &entry.values {
                b.insert(k.clone(), v.0.clone());
            }
        }
        b
    }

    pub(crate) fn choices(&self) -> Vec<OptionChoice> {
        self.profile
            .profile
            .options
            .iter()
            .zip(&self.choice)
            .map(|(o, &e)| {
                let entry = &o.entries[e];
                let mut values = IndexMap::new();
                if let Some(v) = &entry.value {
                    values.insert(o.id.clone(), v.0.clone());
                }
                for (k, v) in &entry.values {
                    values.insert(k.clone(), v.0.clone());
                }
                OptionChoice { option: o.id.clone(), name: o.name.clone(), entry: entry.label.clone(), values }
            })
            .collect()
    }

    /// Identity of the test across runs: profile id, major.minor version and
    /// the option values (sorted), so labels may change without breaking it.
    pub fn key(&self) -> String {
        let p = &self.profile.profile;
        let mm = match semver::Version::parse(&p.version) {
            Ok(v) => format!("{}.{}", v.major, v.minor),
            Err(_) => p.version.clone(),
        };
        let mut vals: Vec<(String, String)> = self.bindings().into_iter().collect();
        vals.sort();
        let vals: Vec<String> = vals.into_iter().map(|(k, v)| format!("{k}={v}")).collect();
        format!("{}@{}[{}]", p.id, mm, vals.join(","))
    }

    /// One line naming the test: `fio: Type: Random Read - Block Size: 4KB`.
    pub fn label(&self) -> String {
        let d = self.description();
        if d.is_empty() { self.profile.profile.id.clone() } else { format!("{}: {}", self.profile.profile.id, d) }
    }
}

/// Whether `entry` is what `want` asks for: its label or one of its values, ignoring case.
/// Whether entry `idx` of `o` is `want` by its own value: `value:`, or the
/// one of `values:` named after the option (`runtime: 2s`, not `ramp: 2s`).
fn value_matches(o: &OptionDef, idx: usize, want: &str) -> bool {
    let e = &o.entries[idx];
    e.value.as_ref().is_some_and(|v| v.0.eq_ignore_ascii_case(want))
        || e.values.get(&o.id).is_some_and(|v| v.0.eq_ignore_ascii_case(want))
}

/// The entries `want` names: the one whose label it is, else those whose own
/// value it is, else those with any value equal to it (`bs: 64k` of an entry
/// that has no value named after its option).
fn entries_named(o: &OptionDef, want: &str) -> Vec<usize> {
    if let Some(i) = o.entries.iter().position(|e| e.label.eq_ignore_ascii_case(want)) {
        return vec![i];
    }
    let own: Vec<usize> = (0..o.entries.len()).filter(|&i| value_matches(o, i, want)).collect();
    if !own.is_empty() {
        return own;
    }
    (0..o.entries.len()).filter(|&i| o.entries[i].values.values().any(|v| v.0.eq_ignore_ascii_case(want))).collect()
}

pub fn find_option<'a>(profile: &'a LoadedProfile, key: &str) -> Option<(usize, &'a OptionDef)> {
    profile
        .profile
        .options
        .iter()
        .enumerate()
        .find(|(_, o)| o.id.eq_ignore_ascii_case(key) || o.name.eq_ignore_ascii_case(key))
}

fn error(origin: &Origin, at_value: bool, msg: String, hint: String) -> ExpandError {
    match origin {
        Origin::Suite { file, key, value } => ExpandError::AtFile(
            Diagnostic::new(file.clone(), if at_value { *value } else { *key }, msg).with_hint(hint),
        ),
        _ => ExpandError::CommandLine { msg, hint },
    }
}

/// Entry indexes selected by `preset` in `option`.
fn select(profile: &LoadedProfile, option: &OptionDef, preset: &Preset) -> Result<Vec<usize>, ExpandError> {
    let mut out = Vec::new();
    // From the command line, `a,b` lists entries, but a label may hold commas
    // itself (`100 Files, 1MB Size`): the whole text wins when it is a label.
    let wants: Vec<String> = match preset.origin {
        Origin::CommandLine => {
            let norm = |s: &str| s.split(',').map(str::trim).collect::<Vec<_>>().join(",");
            let whole = preset.entries.join(",");
            if let Some(e) = option.entries.iter().find(|e| norm(&e.label).eq_ignore_ascii_case(&whole)) {
                vec![e.label.clone()]
            } else {
                preset.entries.clone()
            }
        }
        _ => preset.entries.clone(),
    };
    for want in &wants {
        let found = entries_named(option, want);
        if found.len() > 1 {
            let labels: Vec<String> = found.iter().map(|&i| format!("`{}`", option.entries[i].label)).collect();
            return Err(error(
                &preset.origin,
                true,
                format!("`{want}` is the value of several entries of option `{}`: {}", option.id, labels.join(", ")),
                "name one by its label".into(),
            ));
        }
        if found.is_empty() {
            let labels: Vec<&str> = option.entries.iter().map(|e| e.label.as_str()).collect();
            let hint = match did_you_mean(want, labels.iter().copied()) {
                Some(s) => format!("did you mean `{s}`?"),
                None => format!(
                    "entries of `{}`: {}",
                    option.id,
                    labels.iter().map(|l| format!("`{l}`")).collect::<Vec<_>>().join(", ")
                ),
            };
            return Err(error(
                &preset.origin,
                true,
                format!("`{want}` is not an entry of option `{}` of {}", option.id, profile.profile.id),
                hint,
            ));
        }
        for i in found {
            if !out.contains(&i) {
                out.push(i);
            }
        }
    }
    Ok(out)
}

/// Expands `profile` into tests. `presets` are applied in order (later ones
/// override earlier ones for the same option); presets for options the
/// profile lacks are errors only when `strict`.
pub fn expand(
    profile: &Arc<LoadedProfile>,
    presets: &[Preset],
    chooser: &dyn Chooser,
    strict: bool,
) -> Result<Vec<Test>, ExpandError> {
    let opts = &profile.profile.options;
    let mut chosen: Vec<Option<Vec<usize>>> = vec![None; opts.len()];
    for p in presets {
        match find_option(profile, &p.option) {
            Some((i, o)) => chosen[i] = Some(select(profile, o, p)?),
            None if strict => {
                let ids: Vec<&str> = opts.iter().map(|o| o.id.as_str()).collect();
                let hint = match did_you_mean(&p.option, ids.iter().copied()) {
                    Some(s) => format!("did you mean `{s}`?"),
                    None if ids.is_empty() => format!("{} has no options", profile.profile.id),
                    None => format!(
                        "options of {}: {}",
                        profile.profile.id,
                        ids.iter().map(|i| format!("`{i}`")).collect::<Vec<_>>().join(", ")
                    ),
                };
                return Err(error(
                    &p.origin,
                    false,
                    format!("{} has no option `{}`", profile.profile.id, p.option),
                    hint,
                ));
            }
            None => {}
        }
    }
    let mut per_option = Vec::with_capacity(opts.len());
    for (i, o) in opts.iter().enumerate() {
        let sel = match chosen[i].take() {
            Some(s) => s,
            None => {
                let defaults: Vec<usize> = if o.default.is_empty() {
                    (0..o.entries.len()).collect()
                } else {
                    (0..o.entries.len())
                        .filter(|&j| o.default.iter().any(|d| d.eq_ignore_ascii_case(&o.entries[j].label)))
                        .collect()
                };
                chooser.choose(profile, o, &defaults)
            }
        };
        per_option.push(sel);
    }
    // Counted before it is built: a profile's options must not make more
    // tests than a run holds (twelve options of ten entries are 10^12).
    let count = per_option.iter().try_fold(1usize, |n, sel| n.checked_mul(sel.len()));
    if count.is_none_or(|n| n > MAX_TESTS) {
        let sizes: Vec<String> = per_option.iter().map(|s| s.len().to_string()).collect();
        return Err(ExpandError::CommandLine {
            msg: format!(
                "{}'s options make {} tests ({}); a run holds at most {MAX_TESTS}",
                profile.profile.id,
                count.map_or("more than 2^64".to_string(), |n| n.to_string()),
                sizes.join(" × ")
            ),
            hint: "pick fewer entries with --option ID=ENTRY (engine info PROFILE lists them)".into(),
        });
    }
    // Cross product, first option varying slowest (as the seeds list them).
    let mut combos: Vec<Vec<usize>> = vec![Vec::new()];
    for sel in &per_option {
        let mut next = Vec::with_capacity(combos.len() * sel.len());
        for c in &combos {
            for &e in sel {
                let mut c2 = c.clone();
                c2.push(e);
                next.push(c2);
            }
        }
        combos = next;
    }
    Ok(combos
        .into_iter()
        .map(|choice| Test { profile: profile.clone(), choice, budget: None, monitor_interval: None, setups: None })
        .collect())
}

/// As `--option` takes it: `block_size=4KB,2MB`.
impl std::fmt::Display for Preset {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}={}", self.option, self.entries.join(","))
    }
}

/// `--option block_size=4KB,2MB`, from the command line.
impl std::str::FromStr for Preset {
    type Err = ExpandError;
    fn from_str(s: &str) -> Result<Self, ExpandError> {
        parse_cli_option(s)
    }
}

/// Parses `--option key=a,b`.
pub fn parse_cli_option(s: &str) -> Result<Preset, ExpandError> {
    let Some((k, v)) = s.split_once('=') else {
        return Err(ExpandError::CommandLine {
            msg: format!("`--option {s}` has no `=`"),
            hint: "write `--option block_size=4KB,2MB`".into(),
        });
    };
    // Split on commas; `select` rejoins them when the whole text is one label.
    let entries: Vec<String> = v.split(',').map(|x| x.trim().to_string()).filter(|x| !x.is_empty()).collect();
    if k.trim().is_empty() || entries.is_empty() {
        return Err(ExpandError::CommandLine {
            msg: format!("`--option {s}` names no option or no entry"),
            hint: "write `--option block_size=4KB,2MB`".into(),
        });
    }
    Ok(Preset { option: k.trim().to_string(), entries, origin: Origin::CommandLine })
}

/// The test of `profile` with the given choices (from a saved result):
/// entries matched by their values, or by label when values changed.
pub(crate) fn test_from_choices(profile: &Arc<LoadedProfile>, choices: &[OptionChoice]) -> Option<Test> {
    let opts = &profile.profile.options;
    let mut choice = Vec::with_capacity(opts.len());
    for o in opts {
        let c = choices.iter().find(|c| c.option == o.id)?;
        let by_values = o.entries.iter().position(|e| {
            let mut v = IndexMap::new();
            if let Some(x) = &e.value {
                v.insert(o.id.clone(), x.0.clone());
            }
            for (k, x) in &e.values {
                v.insert(k.clone(), x.0.clone());
            }
            v == c.values
        });
        choice.push(by_values.or_else(|| o.entries.iter().position(|e| e.label == c.entry))?);
    }
    Some(Test { profile: profile.clone(), choice, budget: None, monitor_interval: None, setups: None })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::profile::Origin as LoadOrigin;
    use crate::profile::load::profile_from_str;

    const FIO_LIKE: &str = r#"
id: t
version: 1.2.3
title: T
test_type: disk
options:
  - id: type
    name: Type
    entries:
      - {label: Random Read, values: {rw: randread, dir: read}}
      - {label: Random Write, values: {rw: randwrite, dir: write}}
  - id: bs
    name: Block Size
    default: [4KB]
    entries:
      - {label: 4KB, value: 4k}
      - {label: 2MB, value: 2m}
executor: {external: {program: "true", args: ["{{rw}}", "{{bs}}"]}}
results: [{id: r, unit: MB/s, proportion: HIB}]
parsers: [{result: r, wall_time: true}]
"#;

    fn profile() -> Arc<LoadedProfile> {
        Arc::new(
            profile_from_str(FIO_LIKE, "t.yaml", LoadOrigin::Builtin, &crate::profile::load::Packages::builtin())
                .unwrap(),
        )
    }

    #[test]
    fn batch_uses_defaults_and_all_entries() {
        let tests = expand(&profile(), &[], &Batch, true).unwrap();
        let d: Vec<String> = tests.iter().map(Test::description).collect();
        assert_eq!(d, vec!["Type: Random Read - Block Size: 4KB", "Type: Random Write - Block Size: 4KB"]);
        assert_eq!(tests[0].key(), "t@1.2[bs=4k,dir=read,rw=randread]");
    }

    #[test]
    fn presets_select_by_label_or_value() {
        let p = parse_cli_option("bs=2m,4KB").unwrap();
        let q = parse_cli_option("Type=randwrite").unwrap();
        let tests = expand(&profile(), &[p, q], &Batch, true).unwrap();
        let d: Vec<String> = tests.iter().map(Test::description).collect();
        assert_eq!(d, vec!["Type: Random Write - Block Size: 2MB", "Type: Random Write - Block Size: 4KB"]);
        assert_eq!(tests[0].bindings().get("rw").unwrap(), "randwrite");
    }

    #[test]
    fn unknown_options_and_entries_are_errors() {
        let e = expand(&profile(), &[parse_cli_option("bz=4k").unwrap()], &Batch, true).unwrap_err();
        assert_eq!(e.to_string(), "t has no option `bz`\n  hint: did you mean `bs`?");
        let e = expand(&profile(), &[parse_cli_option("bs=3MB").unwrap()], &Batch, true).unwrap_err();
        assert!(e.to_string().starts_with("`3MB` is not an entry of option `bs` of t"), "{e}");
        assert!(parse_cli_option("bs").is_err());
    }

    /// `--option runtime=2s` on io picked both "2 Seconds" and "20 Seconds"
    /// (whose `ramp` is 2s): an entry's own value counts, not its others.
    #[test]
    fn a_value_selects_the_entry_whose_own_value_it_is() {
        let text = FIO_LIKE.replace(
            "  - id: bs\n",
            "  - id: runtime\n    name: Run Time\n    entries:\n      - {label: 20 Seconds, values: {runtime: 20s, ramp: 2s}}\n      - {label: 2 Seconds, values: {runtime: 2s, ramp: 0s}}\n      - {label: Two, values: {runtime: 2s, ramp: 1s}}\n  - id: bs\n",
        );
        let p = Arc::new(
            profile_from_str(&text, "t.yaml", LoadOrigin::Builtin, &crate::profile::load::Packages::builtin()).unwrap(),
        );
        let pick = |o: &str| expand(&p, &[parse_cli_option(o).unwrap()], &Batch, true);
        let t = pick("runtime=20 Seconds").unwrap();
        assert!(t.iter().all(|t| t.description().contains("Run Time: 20 Seconds")));
        // `2s` is the own value of two entries (and `ramp` of a third): ambiguous.
        let e = pick("runtime=2s").unwrap_err().to_string();
        assert!(e.starts_with("`2s` is the value of several entries of option `runtime`: `2 Seconds`, `Two`"), "{e}");
        // A value only another key has still names its one entry.
        let t = pick("runtime=1s").unwrap();
        assert!(t.iter().all(|t| t.description().contains("Run Time: Two")), "{:?}", t[0].description());
    }

    #[test]
    fn labels_with_commas_can_be_named_whole() {
        let text = FIO_LIKE.replace("{label: 2MB, value: 2m}", "{label: \"2MB, aligned\", value: 2m}");
        let p = Arc::new(
            profile_from_str(&text, "t.yaml", LoadOrigin::Builtin, &crate::profile::load::Packages::builtin()).unwrap(),
        );
        let tests = expand(&p, &[parse_cli_option("bs=2MB, aligned").unwrap()], &Batch, true).unwrap();
        assert_eq!(tests.len(), 2);
        assert!(tests.iter().all(|t| t.description().ends_with("Block Size: 2MB, aligned")));
        let both = expand(&p, &[parse_cli_option("bs=4k,2m").unwrap()], &Batch, true).unwrap();
        assert_eq!(both.len(), 4);
    }
}
