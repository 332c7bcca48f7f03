//! Phases 2 and 3: the references resolved and expanded into tests — suite
//! presets, `--option`, menus on a terminal, every entry in batch mode.

use super::Request;
use crate::{Context, Failure};
use engine::catalog::reference::{self, Resolved};
use engine::events::Events;
use engine::expand::{self, Batch, Chooser, Test};
use engine::model::profile::{LoadedProfile, OptionDef};
use std::collections::{BTreeSet, HashSet};

/// What the references name.
pub(super) struct Work {
    pub tests: Vec<Test>,
    /// Keys of the tests only optional suite items asked for.
    pub optional: HashSet<String>,
    /// The saved result whose tests are re-run (`engine benchmark NAME`).
    pub rerun: Option<String>,
    /// Tests of a saved result that cannot run here.
    pub not_runnable: Vec<String>,
}

/// Menus through `events`; the defaults where nobody answers.
struct Ask<'a>(&'a dyn Events);

impl Chooser for Ask<'_> {
    fn choose(&self, profile: &LoadedProfile, option: &OptionDef, defaults: &[usize]) -> Vec<usize> {
        self.0.choose(profile, option, defaults).unwrap_or_else(|| Batch.choose(profile, option, defaults))
    }
}

/// A `--option` no test of the run has.
fn unused_option(option: &str, tests: &[Test]) -> Failure {
    let ids: BTreeSet<&str> =
        tests.iter().flat_map(|t| t.profile.profile.options.iter().map(|o| o.id.as_str())).collect();
    let hint = match engine::model::diag::did_you_mean(option, ids.iter().copied()) {
        Some(s) => format!("did you mean `{s}`?"),
        None => "see the options with `engine info PROFILE`".to_string(),
    };
    Failure::usage(format!("no profile in this run has an option `{option}`")).hint(hint)
}

pub(super) fn expand(cx: &Context, req: &Request, events: &dyn Events) -> Result<Work, Failure> {
    let presets = req.options.clone();
    let ask = Ask(events);
    let chooser: &dyn Chooser = if req.yes { &Batch } else { &ask };
    let mut work = Work { tests: Vec::new(), optional: HashSet::new(), rerun: None, not_runnable: Vec::new() };
    let mut used = HashSet::new();
    let mut required = HashSet::new();
    for r in &req.refs {
        let found = reference::resolve(r, cx.catalog(), &cx.store)?;
        for n in &found.notes {
            events.message(n);
        }
        match found.resolved {
            Resolved::Planned(items) => {
                for item in items {
                    let mut all = item.presets.clone();
                    for (i, p) in presets.iter().enumerate() {
                        if expand::find_option(&item.profile, &p.option).is_some() {
                            used.insert(i);
                            all.push(p.clone());
                        }
                    }
                    // A suite never stops at a menu: what its presets leave
                    // open takes the profile's defaults.
                    let chooser: &dyn Chooser = if item.from_suite { &Batch } else { chooser };
                    let mut t = expand::expand(&item.profile, &all, chooser, true)?;
                    t.iter_mut().for_each(|t| {
                        (t.budget, t.monitor_interval, t.setups) = (item.budget, item.monitor_interval, item.setups)
                    });
                    if t.is_empty() {
                        events.message(&format!(
                            "nothing chosen for {}: its tests are left out",
                            item.profile.profile.id
                        ));
                    }
                    let keys = if item.optional { &mut work.optional } else { &mut required };
                    keys.extend(t.iter().map(Test::key));
                    work.tests.extend(t);
                }
            }
            Resolved::Saved { name, mut tests, missing } => {
                if req.only_unsettled {
                    let by_id = engine::analysis::precision::unsettled(&cx.store.load_lean(&name)?);
                    tests.retain(|t| by_id.values().any(|keys| keys.contains(&t.key())));
                    if tests.is_empty() {
                        return Err(Failure::usage(format!(
                            "nothing to settle in `{name}`: no test stopped for time wider than ±{} %",
                            engine::analysis::precision::BANDS[0]
                        ))
                        .hint("--only-unsettled re-runs what a run's `unsettled:` line named"));
                    }
                } else {
                    work.not_runnable.extend(missing);
                }
                work.rerun.get_or_insert(name);
                work.tests.extend(tests);
            }
        }
    }
    if req.only_unsettled && work.rerun.is_none() {
        return Err(Failure::usage("--only-unsettled re-runs tests of a saved result")
            .hint("give the result's name: `engine benchmark NAME --only-unsettled --budget 5m`"));
    }
    if work.rerun.is_none()
        && let Some(p) = presets.iter().enumerate().find(|(i, _)| !used.contains(i)).map(|(_, p)| p)
    {
        return Err(unused_option(&p.option, &work.tests));
    }
    // A test asked for twice runs once; two different profiles that would
    // be saved as one test are refused, never one dropped in silence.
    let mut seen: std::collections::HashMap<String, String> = std::collections::HashMap::new();
    for t in &work.tests {
        let from = &t.profile.display;
        if let Some(other) = seen.insert(t.key(), from.clone()).filter(|o| o != from) {
            return Err(Failure::usage(format!(
                "two different profiles are both `{}` ({other} and {from}): a result keeps one test of that name",
                t.profile.reference()
            ))
            .hint("give one of them another `id`, or another `version`"));
        }
    }
    let mut kept = HashSet::new();
    work.tests.retain(|t| kept.insert(t.key()));
    if work.tests.len() > engine::expand::MAX_TESTS {
        return Err(Failure::usage(format!(
            "this run would hold {} tests; a run holds at most {}",
            work.tests.len(),
            engine::expand::MAX_TESTS
        ))
        .hint("run the suites or profiles in several runs, or pick fewer entries with --option"));
    }
    if work.tests.is_empty() && work.not_runnable.is_empty() {
        return Err(Failure::usage("nothing to run: no test was chosen"));
    }
    work.optional.retain(|k| !required.contains(k));
    Ok(work)
}
