//! Phase 4: where to save and under which identifier — resuming an
//! unfinished run of the same command. Each run records its result name and
//! identifier in `ENGINE_HOME/runs/` under a key made from what it was asked
//! to run (references, options, trials, target, sweep flags; not `--save` or
//! `--identifier`), and removes the record when it finishes, so a plain
//! re-run of an interrupted command continues the same result.

use super::Request;
use super::flags::Flags;
use super::work::Work;
use crate::{Context, Failure};
use engine::model::facts::{Identifier, Timestamp};
use engine::store::{self, StoreError};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// Where the run saves.
pub(super) struct Destination {
    pub name: String,
    pub identifier: Identifier,
    /// The resume key of what was asked.
    pub key: String,
    /// The same command resumed an unfinished run.
    pub resumed: bool,
}

/// One unfinished run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(super) struct Unfinished {
    /// What was asked (see [`key`]).
    pub key: String,
    /// Result name it saves to.
    pub name: String,
    pub identifier: Identifier,
    /// When it started.
    pub started: Timestamp,
}

/// The records in `ENGINE_HOME/runs/`.
pub(super) struct Runs {
    dir: PathBuf,
}

impl Runs {
    pub(crate) fn new(dir: PathBuf) -> Self {
        Runs { dir }
    }

    fn path(&self, key: &str) -> PathBuf {
        self.dir.join(format!("{key}.json"))
    }

    /// The unfinished run recorded for `key`, if its result still exists in `results`.
    pub(crate) fn find(&self, key: &str, results: &Path) -> Option<Unfinished> {
        let text = std::fs::read_to_string(self.path(key)).ok()?;
        let u: Unfinished = serde_json::from_str(&text).ok()?;
        results.join(&u.name).join("result.json").is_file().then_some(u)
    }

    /// Records `u` (replacing an earlier record of the same key).
    pub(crate) fn record(&self, u: &Unfinished) -> std::io::Result<()> {
        let bytes = serde_json::to_vec_pretty(u).expect("records serialize");
        engine::sys::fs::write_atomic(&self.path(&u.key), &bytes)
    }

    /// The run of `key` finished: forget it.
    pub(crate) fn finish(&self, key: &str) {
        let _ = std::fs::remove_file(self.path(key));
    }
}

/// A stable key for what a command asks to run: FNV-1a of its parts.
fn key(req: &Request, target: &Path) -> String {
    let mut options: Vec<String> = req.options.iter().map(ToString::to_string).collect();
    options.sort();
    let opt = |n: Option<u32>| n.map(|n| n.to_string()).unwrap_or_default();
    let s = &req.sweep;
    let mut parts: Vec<String> = req.refs.clone();
    parts.extend(options);
    parts.push(format!("runs={} warmup={}", opt(req.runs), opt(req.warmup)));
    let target = std::fs::canonicalize(target).unwrap_or_else(|_| target.to_path_buf());
    parts.push(target.display().to_string());
    // The parsed states as the flags spell them (not `Debug`, which says
    // how the types are built), so `bfq, none` and `bfq,none` are one run.
    let list = |v: Vec<String>| v.join(",");
    parts.push(format!(
        "scheduler={} filesystem={} device={} set={}",
        s.schedulers,
        list(s.filesystems.iter().map(ToString::to_string).collect()),
        s.device.as_ref().map(ToString::to_string).unwrap_or_default(),
        list(s.settings.iter().map(ToString::to_string).collect()),
    ));
    format!("{:016x}", engine::sys::hash::fnv1a(parts.iter().map(|p| p.as_bytes())))
}

/// A new result's name: the references and the time, never an existing name.
fn new_name(cx: &Context, refs: &[String]) -> String {
    let stamp: String = engine::sys::time::now().chars().filter(|c| c.is_ascii_digit()).take(14).collect();
    let base = format!("{}-{stamp}", store::slug(&refs.join("-")));
    std::iter::once(base.clone())
        .chain((2..).map(|i| format!("{base}-{i}")))
        .find(|n| !cx.store.dir(n).exists())
        .expect("some name is free")
}

pub(super) fn choose(cx: &Context, req: &Request, flags: &Flags, work: &Work) -> Result<Destination, Failure> {
    let key = key(req, &flags.target);
    let runs = Runs::new(cx.home.runs());
    let results = cx.home.results();
    let unfinished = runs.find(&key, &results).filter(|u| match (req.save.as_deref(), work.rerun.as_deref()) {
        (Some(n), _) | (None, Some(n)) => u.name == n,
        (None, None) => true,
    });
    let name = req
        .save
        .as_ref()
        .map(|n| n.to_string())
        .or(work.rerun.clone())
        .or(unfinished.as_ref().map(|u| u.name.clone()))
        .unwrap_or_else(|| new_name(cx, &req.refs));
    store::check_name(&name).map_err(|e| Failure::usage(e.to_string()))?;
    let file = match cx.store.load(&name) {
        Ok(f) => Some(f),
        Err(StoreError::NotFound(_)) => None,
        Err(e) => return Err(e.into()),
    };
    let resumed_id = unfinished.filter(|u| u.name == name).map(|u| u.identifier);
    let identifier = match (&req.identifier, &resumed_id) {
        (Some(id), _) | (None, Some(id)) => id.clone(),
        // A sweep's identifiers come from its states.
        (None, None) if req.only_unsettled && !flags.plan.is_active() => unsettled_identifier(file.as_ref())?.into(),
        (None, None) => {
            let base = engine::sysinfo::hostname();
            let taken = |c: &str| file.as_ref().is_some_and(|f| f.system(c).is_some());
            let id =
                if !taken(&base) { base } else { (2..).map(|i| format!("{base} ({i})")).find(|c| !taken(c)).unwrap() };
            id.into()
        }
    };
    let resumed = req.identifier.is_none() && resumed_id.is_some();
    Ok(Destination { name, identifier, key, resumed })
}

/// The identifier `--only-unsettled` re-runs: this host's when it has
/// something unsettled, else the only one that has.
fn unsettled_identifier(file: Option<&engine::model::result::ResultFile>) -> Result<String, Failure> {
    let ids: Vec<String> = file.map(engine::analysis::precision::unsettled).unwrap_or_default().into_keys().collect();
    let host = engine::sysinfo::hostname();
    match ids.as_slice() {
        _ if ids.contains(&host) => Ok(host),
        [one] => Ok(one.clone()),
        _ => Err(Failure::usage(format!("several identifiers have unsettled tests: {}", ids.join(", ")))
            .hint("say which with --identifier")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn record_find_finish() {
        let d = tempfile::tempdir().unwrap();
        let results = d.path().join("results");
        let runs = Runs::new(d.path().join("runs"));
        let a = Request { refs: vec!["suite/disk-quick".into()], ..Request::default() };
        let b = Request { options: vec!["size=1".parse().unwrap()], ..a.clone() };
        let k = key(&a, d.path());
        assert_ne!(k, key(&b, d.path()), "options are part of the key");
        let u = Unfinished { key: k.clone(), name: "r".into(), identifier: "host".into(), started: "t".into() };
        runs.record(&u).unwrap();
        assert_eq!(runs.find(&k, &results), None, "no result file yet");
        std::fs::create_dir_all(results.join("r")).unwrap();
        std::fs::write(results.join("r/result.json"), "{}").unwrap();
        assert_eq!(runs.find(&k, &results), Some(u.clone()));
        runs.finish(&k);
        assert_eq!(runs.find(&k, &results), None);
    }

    /// The states count as the flags spell them once parsed: spacing does
    /// not make another run, another scheduler, file system or setting does.
    #[test]
    fn a_sweeps_states_are_part_of_the_key_as_parsed() {
        let d = tempfile::tempdir().unwrap();
        let with = |sched: &str, fs: &str, set: &[&str]| {
            let mut r = Request { refs: vec!["io".into()], ..Request::default() };
            r.sweep.schedulers = sched.parse().unwrap();
            r.sweep.filesystems = fs.parse::<engine::state::sweep::FsList>().unwrap().0;
            r.sweep.device = Some("loop:1G".parse().unwrap());
            r.sweep.settings = set.iter().map(|s| s.parse().unwrap()).collect();
            key(&r, d.path())
        };
        let base = with("none,kyber", "ext4", &["queue/read_ahead_kb=128"]);
        assert_eq!(base, with("none, kyber", "ext4", &["queue/read_ahead_kb=128"]));
        assert_ne!(base, with("none,mq-deadline", "ext4", &["queue/read_ahead_kb=128"]));
        assert_ne!(base, with("none,kyber", "xfs", &["queue/read_ahead_kb=128"]));
        assert_ne!(base, with("none,kyber", "ext4", &["queue/read_ahead_kb=256"]));
    }
}
