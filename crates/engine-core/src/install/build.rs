//! Build steps: run in the install directory, one after the other, each in
//! its own process group with a timeout, with `NUM_CPU_CORES`,
//! `NUM_CPU_JOBS`, `SYS_MEMORY` and `INSTALL_DIR` set, and everything they
//! print appended to the install log.

use crate::model::profile::BuildStep;
use crate::model::template;
use crate::sys::process::{self, Exit};
use std::ffi::OsStr;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Duration;
use thiserror::Error;

/// Default limit of one build step.
pub(crate) const STEP_TIMEOUT: Duration = Duration::from_secs(3600);

#[derive(Debug, Error)]
pub enum BuildError {
    #[error("build step {index} (`{command}`) {how}; its output is in {}", log.display())]
    Failed { index: usize, command: String, how: String, log: PathBuf },
    #[error("build step {index}: {msg}")]
    Setup { index: usize, msg: String },
    #[error("cannot write the install log {}: {source}", log.display())]
    Log { log: PathBuf, source: std::io::Error },
    #[error("interrupted during build step {index}")]
    Interrupted { index: usize },
}

/// Memory in MiB, as PTS's `SYS_MEMORY`.
fn memory_mib() -> u64 {
    std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|t| {
            t.lines().find_map(|l| l.strip_prefix("MemTotal:").and_then(|r| r.split_whitespace().next()?.parse().ok()))
        })
        .map(|kib: u64| kib / 1024)
        .unwrap_or(0)
}

/// The memory a confined build step may use: an eighth of the machine's,
/// at least 1 GiB (the sandbox's default for a test's command).
pub(crate) fn memory_limit() -> u64 {
    (memory_mib() << 20).div_ceil(8).max(1 << 30)
}

/// The most a confined build may add to its install folder and private
/// /tmp: as much as a shared profile's test may take without a grant.
const BUILD_SPACE: u64 = 16 << 30;

/// What a confined build's space limit is, for its failure's message.
pub(crate) const SPACE_WHAT: &str = "an install's build may add 16 GiB to its unpacked downloads, or what its file system had free less a reserve (1 %, at least 64 MiB), whichever is less";

/// The space a confined build's folders may hold — what they hold now and
/// what it may add — and that room: [`BUILD_SPACE`], or what the file
/// system has free less the reserve engine keeps so the disk is never
/// filled.
pub(crate) fn space_limit(dirs: &[crate::sys::safepath::Dir]) -> (u64, u64) {
    let held: u64 = dirs.iter().map(|d| d.usage_bounded().bytes).sum();
    let room = dirs
        .first()
        .and_then(crate::sys::space::free_of)
        .map_or(0, |(free, _, size, _)| free.saturating_sub(crate::sys::space::nearly_full(size)));
    let room = room.min(BUILD_SPACE);
    (held + room, room)
}

/// The variables build steps see (besides engine's own environment).
pub(crate) fn environment(dir: &Path) -> Vec<(String, String)> {
    let cores = std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1).to_string();
    vec![
        ("NUM_CPU_CORES".into(), cores.clone()),
        ("NUM_CPU_JOBS".into(), cores),
        ("SYS_MEMORY".into(), memory_mib().to_string()),
        ("INSTALL_DIR".into(), dir.display().to_string()),
    ]
}

/// A step's program, arguments, command line as logged, and time limit.
fn command_of<'v>(
    step: &BuildStep,
    index: usize,
    lookup: &dyn Fn(&str) -> Option<&'v str>,
) -> Result<(String, Vec<String>, String, Duration), BuildError> {
    let setup = |e: template::TemplateError| BuildError::Setup { index, msg: e.to_string() };
    let (program, args) = match (&step.program, &step.shell) {
        (Some(p), _) => (
            template::render(p, lookup, false).map_err(setup)?,
            step.args
                .iter()
                .map(|a| template::render(a, lookup, false))
                .collect::<Result<Vec<_>, _>>()
                .map_err(setup)?,
        ),
        (None, Some(sh)) => {
            ("/bin/sh".to_string(), vec!["-e".into(), "-c".into(), template::render(sh, lookup, true).map_err(setup)?])
        }
        (None, None) => return Err(BuildError::Setup { index, msg: "nothing to run".into() }),
    };
    let timeout = step.timeout.as_ref().map_or(STEP_TIMEOUT, |t| t.get());
    let command = match &step.shell {
        Some(_) => args[2].clone(),
        None => std::iter::once(program.clone())
            .chain(args.iter().map(|a| template::quote(a)))
            .collect::<Vec<_>>()
            .join(" "),
    };
    Ok((program, args, command, timeout))
}

/// Runs `steps` in `dir`, appending to `log`. `profile_dir` fills `{{profile_dir}}`.
/// With `confine`, every step runs in that sandbox.
pub(crate) fn run(
    steps: &[&BuildStep],
    dir: &Path,
    log: &Path,
    profile_dir: &str,
    confine: Option<process::Confined<'_>>,
) -> Result<(), BuildError> {
    let cores = std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1).to_string();
    let dir_s = dir.display().to_string();
    let lookup = |n: &str| match n {
        "install_dir" => Some(dir_s.as_str()),
        "num_cpus" => Some(cores.as_str()),
        "profile_dir" => Some(profile_dir),
        _ => None,
    };
    let env = environment(dir);
    let log_err = |source| BuildError::Log { log: log.to_path_buf(), source };
    let budget = crate::sys::bounded::LogBudget::test();
    for (i, step) in steps.iter().enumerate() {
        let index = i + 1;
        let (program, args, command, timeout) = command_of(step, index, &lookup)?;
        let mut f = crate::sys::fs::append(log).map_err(log_err)?;
        writeln!(f, "$ {command}").map_err(log_err)?;
        let (out, sink) =
            crate::sys::bounded::sink(f.try_clone().map_err(log_err)?, crate::sys::bounded::LOG, None, &budget)
                .map_err(log_err)?;
        let err = out.try_clone().map_err(log_err)?;
        let fin = process::run(process::Spec {
            program: OsStr::new(&program),
            args: &args,
            env: &env,
            cwd: dir,
            stdin: None,
            stdout: out,
            stderr: err,
            timeout: Some(timeout),
            confine,
            stdin_inside: None,
        })
        .map_err(|e| BuildError::Failed {
            index,
            command: command.clone(),
            how: format!("could not start: {e}"),
            log: log.to_path_buf(),
        });
        sink.finish(crate::sys::bounded::GRACE);
        let fin = fin?;
        writeln!(f, "# exit: {} after {:.1} s", fin.exit, fin.wall.as_secs_f64()).map_err(log_err)?;
        let how = match fin.exit {
            Exit::Code(0) => continue,
            Exit::Code(c) => format!("exited with status {c}"),
            Exit::Signal(s) => format!("was killed by signal {s}"),
            Exit::TimedOut => format!("took longer than {}", humantime::format_duration(timeout)),
            Exit::Interrupted => return Err(BuildError::Interrupted { index }),
        };
        return Err(BuildError::Failed { index, command, how, log: log.to_path_buf() });
    }
    Ok(())
}
