//! Phase 5: what cannot run here (not installed, a missing program or file,
//! not root) is skipped — quietly for optional suite items, whose absence
//! does not fail the run.

use crate::install::NotInstalled;
use engine::events::Events;
use engine::expand::Test;
use engine::model::result::{FailedTest, FailureStatus};
use engine::runner::requirements;
use std::collections::{HashMap, HashSet};

/// Why `p` cannot run here, if it cannot.
fn unmet_of(p: &engine::model::profile::Profile, not_installed: &HashMap<String, NotInstalled>) -> Vec<String> {
    let mut unmet: Vec<String> = Vec::new();
    if let Some(why) = not_installed.get(&p.id) {
        unmet.push(why.to_string());
    } else {
        unmet.extend(requirements::missing_programs(p).iter().map(ToString::to_string));
        unmet.extend(requirements::missing_files(p).iter().map(ToString::to_string));
    }
    unmet.extend(requirements::missing_root(p).map(|u| u.to_string()));
    unmet
}

/// Removes the tests that cannot run from `tests`; returns the skipped ones
/// (optional items are left out without a record).
pub(super) fn check(
    tests: &mut Vec<Test>,
    optional: &HashSet<String>,
    identifier: &str,
    not_installed: &HashMap<String, NotInstalled>,
    events: &dyn Events,
) -> Vec<FailedTest> {
    let mut unmet_profiles: HashMap<String, String> = HashMap::new();
    for t in tests.iter() {
        let p = &t.profile.profile;
        if unmet_profiles.contains_key(&p.id) {
            continue;
        }
        let unmet = unmet_of(p, not_installed);
        if unmet.is_empty() {
            continue;
        }
        let all_optional = tests.iter().filter(|x| x.profile.profile.id == p.id).all(|x| optional.contains(&x.key()));
        for u in &unmet {
            if all_optional {
                events.message(&format!("not run (optional in this suite) {}: {u}", p.id));
            } else {
                events.message(&format!("skipped {}: {u}", p.id));
            }
        }
        unmet_profiles.insert(p.id.clone(), unmet.join("; "));
    }
    let stamp = engine::model::facts::Timestamp::now();
    let mut skipped = Vec::new();
    tests.retain(|t| match unmet_profiles.get(&t.profile.profile.id) {
        Some(_) if optional.contains(&t.key()) => false,
        Some(why) => {
            skipped.push(super::failed_test(t, identifier, FailureStatus::Skipped, why.clone(), stamp.clone()));
            false
        }
        None => true,
    });
    skipped
}
