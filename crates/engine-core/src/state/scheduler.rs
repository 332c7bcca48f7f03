//! An I/O scheduler, with tunables, on every queue of the device under test
//! (all member disks of device-mapper and md devices together).

pub use super::change::scheduler::SchedulerChange;
use super::journal::Shared;
use super::sysfs::{self, Setting};
use super::{Guard, SpecError, StateError, SystemState};
use std::path::Path;

/// The most scheduler states one sweep holds.
pub const MAX_STATES: usize = 16;

/// `bfq:low_latency=0` → scheduler `bfq` with tunable `low_latency` = `0`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Scheduler {
    pub name: String,
    pub tunables: Vec<(String, String)>,
}

/// As `--scheduler` takes it: `bfq:low_latency=0`.
impl std::fmt::Display for Scheduler {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.name)?;
        self.tunables.iter().try_for_each(|(k, v)| write!(f, ":{k}={v}"))
    }
}

impl Scheduler {
    /// Parses one state: `bfq`, `bfq:low_latency=0`, `bfq:low_latency=0:slice_idle=0`.
    pub(crate) fn parse(s: &str) -> Result<Scheduler, SpecError> {
        let mut parts = s.split(':');
        let name = parts.next().unwrap_or("").trim().to_lowercase();
        if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_') {
            return Err(SpecError(format!("`{s}` is not a scheduler name")));
        }
        let mut tunables = Vec::new();
        for t in parts {
            let (k, v) =
                t.split_once('=').ok_or_else(|| SpecError(format!("`{t}` in `{s}` is not `tunable=value`")))?;
            if k.is_empty() || !k.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
                return Err(SpecError(format!("`{k}` in `{s}` is not a tunable name")));
            }
            if v.is_empty() || v.len() > 64 || v.chars().any(char::is_control) {
                return Err(SpecError(format!("`{k}` in `{s}` needs a value of one line, at most 64 characters")));
            }
            tunables.push((k.to_string(), v.to_string()));
        }
        Ok(Scheduler { name, tunables })
    }

    /// Parses a `--scheduler` list: `none,mq-deadline,bfq:low_latency=0`.
    /// A state listed twice is one state; more than [`MAX_STATES`] is refused
    /// (each is applied, journaled and measured: a list from a shared result
    /// file must not cost without bound).
    pub(crate) fn parse_list(s: &str) -> Result<Vec<Scheduler>, SpecError> {
        let mut out: Vec<Scheduler> = Vec::new();
        for one in s.split(',').map(str::trim).filter(|x| !x.is_empty()) {
            let sched = Scheduler::parse(one)?;
            if !out.contains(&sched) {
                out.push(sched);
            }
            if out.len() > MAX_STATES {
                return Err(SpecError(format!("more than {MAX_STATES} scheduler states: a sweep compares a few")));
            }
        }
        Ok(out)
    }
}

/// A scheduler applied to a set of queues (`/sys/block/<dev>/queue`), plus
/// `--set iosched/…` settings, which only exist while a scheduler is active.
pub struct SchedulerState {
    pub scheduler: Scheduler,
    pub queues: Vec<String>,
    pub iosched: Vec<Setting>,
}

/// The scheduler in force on `queue` and the values of its tunables.
pub(crate) fn current(queue: &str) -> Result<(String, Vec<(String, String)>), StateError> {
    let path = format!("{queue}/scheduler");
    let text = std::fs::read_to_string(&path).map_err(|e| StateError::Apply(format!("cannot read {path}: {e}")))?;
    let (active, _) = crate::sysinfo::device::parse_scheduler(&text);
    let active =
        active.ok_or_else(|| StateError::Apply(format!("{path} shows no scheduler in force: {}", text.trim())))?;
    let mut tunables = Vec::new();
    let dir = format!("{queue}/iosched");
    if let Ok(rd) = std::fs::read_dir(&dir) {
        let mut names: Vec<String> = rd.flatten().map(|e| e.file_name().to_string_lossy().into_owned()).collect();
        names.sort();
        for n in names {
            if let Ok(v) = std::fs::read_to_string(format!("{dir}/{n}")) {
                tunables.push((n, v.trim().to_string()));
            }
        }
    }
    Ok((active, tunables))
}

impl SystemState for SchedulerState {
    fn label(&self) -> String {
        let mut l = self.scheduler.name.to_uppercase();
        for (k, v) in &self.scheduler.tunables {
            l.push_str(&format!(" {k}={v}"));
        }
        l
    }

    fn apply(&self, journal: &Shared) -> Result<Guard, StateError> {
        let mut g = Guard::new(journal);
        for q in &self.queues {
            let (original, tunables) = current(q)?;
            g.record(SchedulerChange { queue: q.clone(), original, tunables })?;
            let path = format!("{q}/scheduler");
            std::fs::write(&path, &self.scheduler.name)
                .map_err(|e| StateError::Apply(format!("cannot set {} on {path}: {e}", self.scheduler.name)))?;
            sysfs::verify("scheduler", &path, &self.scheduler.name)?;
            for (k, v) in &self.scheduler.tunables {
                let p = format!("{q}/iosched/{k}");
                if !Path::new(&p).exists() {
                    return Err(StateError::Apply(format!(
                        "{} has no tunable `{k}` ({p} does not exist); it has: {}",
                        self.scheduler.name,
                        current(q)?.1.iter().map(|(n, _)| n.as_str()).collect::<Vec<_>>().join(", ")
                    )));
                }
                // The scheduler's own record restores its tunables; no entry per tunable.
                std::fs::write(&p, v).map_err(|e| StateError::Apply(format!("cannot write {v} to {p}: {e}")))?;
                sysfs::verify(k, &p, v)?;
            }
            for s in &self.iosched {
                let p = s.path(q);
                if Path::new(&p).exists() {
                    std::fs::write(&p, &s.value)
                        .map_err(|e| StateError::Apply(format!("cannot write {} to {p}: {e}", s.value)))?;
                    sysfs::verify(&s.attr, &p, &s.value)?;
                }
            }
        }
        Ok(g)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_states() {
        let l = Scheduler::parse_list("none, mq-deadline,bfq:low_latency=0,BFQ").unwrap();
        assert_eq!(l.len(), 4);
        assert_eq!(l[2], Scheduler { name: "bfq".into(), tunables: vec![("low_latency".into(), "0".into())] });
        assert_eq!(l[3].name, "bfq");
        assert!(Scheduler::parse("bfq:low_latency").is_err());
        assert!(Scheduler::parse("../x").is_err());
        let s = SchedulerState { scheduler: l[2].clone(), queues: vec![], iosched: vec![] };
        assert_eq!(s.label(), "BFQ low_latency=0");
    }
}
