//! Which tests run confined, checked before anything runs: the kernel's
//! namespaces and a cgroup hierarchy must be there (else a clear refusal,
//! never a silent unconfined run of a repository profile), and
//! `--no-sandbox` for a repository profile is confirmed and recorded.

use super::request::Request;
use crate::{Context, Failure};
use engine::events::Events;
use engine::expand::Test;
use engine::model::profile::ExecutorDef;
use engine::runner::sandbox::{self, Config, Defaults, Mode, Widening};

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
    let defaults = Defaults::for_machine(engine::sysinfo::memory_bytes());
    // Plugins too: a shared profile asks for no more than the defaults.
    if req.sandbox != Mode::Off {
        refuse_widenings(tests, req, &defaults)?;
    }
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
    let layout = crate::sandbox::confinement(cx)
        .map_err(|e| Failure::error(format!("{} cannot run confined: {e}", confined.join(", "))).hint(way_on))?;
    // What a confined profile asks for beyond the defaults is said before it runs.
    let mut said = std::collections::HashSet::new();
    for t in tests.iter().filter(|t| external(t) && sandbox::applies(req.sandbox, &t.profile)) {
        let extras = t.profile.profile.sandbox.as_ref().map(|s| s.extras()).unwrap_or_default();
        if !extras.is_empty() && said.insert(t.profile.reference()) {
            events.message(&format!("{} runs confined, and asks for: {}", t.profile.reference(), extras.join("; ")));
        }
    }
    let mut note = format!(
        "confined (namespaces, a user namespace, read-only root, a system-call filter, cgroups {}): {}",
        layout.describe(),
        confined.join(", ")
    );
    if !req.grants.is_empty() {
        note.push_str(&format!("; granted by the user: {}", req.grants.describe().join(", ")));
    }
    let config = Config { mode: req.sandbox, cgroups: Some(layout), defaults, grants: req.grants.clone() };
    Ok(Decided { config: Some(config), note: Some(note) })
}

/// A shared profile that asks for more than the defaults (and was not
/// granted it) stops the run before anything runs, pointing at the field.
fn refuse_widenings(tests: &[Test], req: &Request, d: &Defaults) -> Result<(), Failure> {
    // Not a widening a grant allows: refused for every profile, before
    // anything runs.
    for t in tests {
        if let Some(field) = sandbox::uring_and_writable(&t.profile) {
            let w = Widening { field, asks: String::new(), grant: String::new() };
            return Err(Failure::error(format!("{}: {}", located(&t.profile, &w), sandbox::URING_AND_WRITABLE))
                .hint("a test that needs both can write its files in its own directory (the working directory of its commands)"));
        }
    }
    for t in tests.iter().filter(|t| t.profile.shared()) {
        let mut all = sandbox::widenings(&t.profile, d, &req.grants);
        let space = engine::runner::requirements::free_space_of(t);
        all.extend(sandbox::scratch_widening(&t.profile, space, d, &req.grants));
        if let Some(w) = all.first() {
            let mut grants: Vec<String> = Vec::new();
            for g in all.iter().map(|w| format!("--grant {}", w.grant)) {
                if !grants.contains(&g) {
                    grants.push(g);
                }
            }
            return Err(Failure::error(format!("{}: {}", located(&t.profile, w), refusal(&t.profile, w)))
                .hint(format!("to allow it for this run, add {}", grants.join(" "))));
        }
    }
    Ok(())
}

fn refusal(p: &engine::model::profile::LoadedProfile, w: &Widening) -> String {
    let whose = match &p.source {
        Some(r) => format!("{} (from repository {})", p.reference(), r.name),
        None => format!("{} (imported from PTS)", p.reference()),
    };
    format!("{whose} asks {}, beyond what the sandbox gives a shared profile", w.asks)
}

/// `file:line:col` of the widening's field (the file alone when the
/// profile's text cannot be read again).
fn located(p: &engine::model::profile::LoadedProfile, w: &Widening) -> String {
    use engine::model::grant::Seg;
    use engine::profile::yaml_index::{Seg as Y, YamlIndex};
    let path: Vec<Y> = w
        .field
        .iter()
        .map(|s| match s {
            Seg::Key(k) => Y::Key(k.to_string()),
            Seg::Index(i) => Y::Index(*i),
        })
        .collect();
    let file = match &p.origin {
        engine::model::profile::Origin::File(f) => f,
        engine::model::profile::Origin::Builtin => return p.display.clone(),
    };
    match std::fs::read_to_string(file) {
        Ok(text) => {
            let pos = YamlIndex::build(&text).value(&path);
            format!("{}:{}:{}", p.display, pos.line, pos.col)
        }
        Err(_) => p.display.clone(),
    }
}
