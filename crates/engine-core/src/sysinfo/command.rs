//! Read-only commands (`cc -v`, `python3 --version`), each with a timeout, run
//! only on the live system. A command that is missing, fails or hangs yields
//! nothing.

use crate::sys::process;
use std::ffi::OsStr;
use std::time::Duration;

pub(crate) const TIMEOUT: Duration = Duration::from_secs(2);

/// stdout and stderr of `program args`, if it ran and exited 0.
pub(crate) fn output(program: &str, args: &[&str]) -> Option<(String, String)> {
    let path = which::which(program).ok()?;
    let out = process::memfile("stdout").ok()?;
    let err = process::memfile("stderr").ok()?;
    let args: Vec<String> = args.iter().map(|s| s.to_string()).collect();
    let fin = process::run(process::Spec {
        program: OsStr::new(&path),
        args: &args,
        env: &[("LC_ALL".to_string(), "C".to_string())],
        cwd: std::path::Path::new("/"),
        stdin: None,
        stdout: out.try_clone().ok()?,
        stderr: err.try_clone().ok()?,
        timeout: Some(TIMEOUT),
        confine: None,
        stdin_inside: None,
    })
    .ok()?;
    if !fin.exit.success() {
        return None;
    }
    let o = crate::sys::bounded::read(&out, crate::sys::bounded::STREAM).ok()?;
    let e = crate::sys::bounded::read(&err, crate::sys::bounded::STREAM).ok()?;
    Some((o, e))
}
