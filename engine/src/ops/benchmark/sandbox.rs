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
use crate::sys::{cgroup::Layout, confine};

/// The run's sandbox settings (none: nothing runs confined) and the note
/// each system records about it.
pub(super) struct Decided {
    pub config: Option<Config>,
    pub note: Option<String>,
}

fn refs(tests: &[Test], keep: impl Fn(&Test) -> bool) -> Vec<String> {
    let mut v: Vec<String> = tests.iter().filter(|t| keep(t)).map(|t| t.profile.reference()).collect();
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
    let ns_dir = cx.settings.namespaces_dir.clone().unwrap_or_else(|| "/proc/self/ns".into());
    confine::check(&ns_dir)
        .map_err(|e| Failure::error(format!("{} cannot run confined: {e}", confined.join(", "))).hint(way_on))?;
    let root = cx.settings.cgroup_root.clone().unwrap_or_else(|| "/sys/fs/cgroup".into());
    let layout = Layout::detect(&root).ok_or_else(|| {
        Failure::error(format!(
            "{} cannot run confined: the sandbox needs a cgroup hierarchy (v2, or v1 cpuacct, memory, blkio or pids) under {}, and there is none",
            confined.join(", "),
            root.display()
        ))
        .hint(way_on)
    })?;
    let note = format!("confined (namespaces, read-only root, cgroups {}): {}", layout.describe(), confined.join(", "));
    let home = cx.home.root.clone();
    Ok(Decided {
        config: Some(Config { mode: req.sandbox, engine_home: home, cgroups: Some(layout) }),
        note: Some(note),
    })
}
