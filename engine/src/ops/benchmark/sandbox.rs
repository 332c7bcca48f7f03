//! Which tests run confined, checked before anything runs: the kernel's
//! namespaces and a cgroup hierarchy must be there (else a clear refusal,
//! never a silent unconfined run of a repository profile), and
//! `--no-sandbox` for a repository profile is confirmed and recorded.

use super::request::Request;
use crate::events::Events;
use crate::expand::Test;
use crate::model::profile::ExecutorDef;
use crate::ops::{Context, Failure};
use crate::runner::sandbox::{self, Config, Mode};

/// The run's sandbox settings (none: nothing runs confined) and the note
/// each system records about it.
pub(super) struct Decided {
    pub config: Option<Config>,
    pub note: Option<String>,
}

fn refs(tests: &[Test], keep: impl Fn(&Test) -> bool) -> Vec<String> {
    let name = |t: &Test| match &t.profile.source {
        Some(r) => format!("{}/{}", r.name, t.profile.reference()),
        None => t.profile.reference(),
    };
    let mut v: Vec<String> = tests.iter().filter(|t| keep(t)).map(name).collect();
    v.dedup();
    v
}

pub(super) fn phase(cx: &Context, req: &Request, tests: &[Test], events: &dyn Events) -> Result<Decided, Failure> {
    let external = |t: &Test| matches!(t.profile.profile.executor, ExecutorDef::External(_));
    let from_repo = refs(tests, |t| external(t) && t.profile.source.is_some());
    if req.sandbox == Mode::Off && !from_repo.is_empty() {
        let list = from_repo.join(", ");
        let q = format!("--no-sandbox: run {list} (from a repository) unconfined, with the whole machine in reach?");
        if !req.yes && !events.confirm(&q) {
            return Err(Failure::usage(format!("--no-sandbox would run {list} from a repository unconfined"))
                .hint("confirm on a terminal, or pass -y as well; without --no-sandbox they run confined"));
        }
        let note = format!("--no-sandbox: {list} from a repository ran unconfined");
        events.message(&format!("warning: {note}"));
        return Ok(Decided { config: None, note: Some(note) });
    }
    let confined = refs(tests, |t| external(t) && sandbox::applies(req.sandbox, &t.profile));
    if confined.is_empty() {
        return Ok(Decided { config: None, note: None });
    }
    let way_on = "run them unconfined with --no-sandbox (a repository's profile then has the machine in reach)";
    let layout = crate::ops::sandbox::confinement(cx)
        .map_err(|e| Failure::error(format!("{} cannot run confined: {e}", confined.join(", "))).hint(way_on))?;
    // What a confined profile asks for beyond the defaults is said before it runs.
    let mut said = std::collections::HashSet::new();
    for t in tests.iter().filter(|t| external(t) && sandbox::applies(req.sandbox, &t.profile)) {
        let extras = t.profile.profile.sandbox.as_ref().map(|s| s.extras()).unwrap_or_default();
        if !extras.is_empty() && said.insert(t.profile.reference()) {
            events.message(&format!("{} runs confined, and asks for: {}", t.profile.reference(), extras.join("; ")));
        }
    }
    let note = format!("confined (namespaces, read-only root, cgroups {}): {}", layout.describe(), confined.join(", "));
    let home = cx.home.root.clone();
    Ok(Decided {
        config: Some(Config { mode: req.sandbox, engine_home: home, cgroups: Some(layout) }),
        note: Some(note),
    })
}
