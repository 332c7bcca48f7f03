//! Processes by pid, read from /proc: whether one still runs and is the one
//! engine knew (a pid can be reused; its start time and the boot say), its
//! group, and signals by name.

use std::io;

/// Whether process `pid` exists (signal 0 checks without signalling).
pub fn pid_alive(pid: i32) -> bool {
    // SAFETY: kill with signal 0 only checks that the process exists.
    pid > 0 && (unsafe { libc::kill(pid, 0) } == 0 || io::Error::last_os_error().raw_os_error() == Some(libc::EPERM))
}

/// The fields of /proc/PID/stat after the command name (which may hold
/// spaces and parentheses: what follows the last `)` is plain).
fn stat_fields(pid: i32) -> Option<Vec<String>> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let rest = &stat[stat.rfind(')')? + 1..];
    Some(rest.split_whitespace().map(str::to_string).collect())
}

/// Start time of process `pid` in clock ticks after boot (field 22 of
/// /proc/PID/stat), to recognise it later.
pub fn start_ticks(pid: i32) -> Option<u64> {
    stat_fields(pid)?.get(19)?.parse().ok()
}

/// This boot's id: a pid and start time name a process only within one boot.
pub fn boot_id() -> Option<String> {
    std::fs::read_to_string("/proc/sys/kernel/random/boot_id").ok().map(|s| s.trim().to_string())
}

/// Whether process `pid` runs (a zombie does not) and is the one that
/// started at `ticks` (when known).
pub fn process_running(pid: i32, ticks: Option<u64>) -> bool {
    if pid <= 0 {
        return false;
    }
    let Some(f) = stat_fields(pid) else { return false };
    if f.first().map(String::as_str) == Some("Z") {
        return false;
    }
    match ticks {
        Some(t) => f.get(19).and_then(|s| s.parse().ok()) == Some(t),
        None => true,
    }
}

/// Whether any live (not zombie) process is in process group `pgid`.
pub fn group_running(pgid: i32) -> bool {
    let Ok(rd) = std::fs::read_dir("/proc") else { return false };
    rd.flatten().filter_map(|e| e.file_name().to_str().and_then(|n| n.parse::<i32>().ok())).any(|pid| {
        // Fields after the name: state, ppid, pgrp.
        stat_fields(pid).is_some_and(|f| f.len() >= 3 && f[0] != "Z" && f[2].parse::<i32>().ok() == Some(pgid))
    })
}

/// CPU time (user, system) of the processes in the groups `pgids` so far, each
/// with the children it has waited for (fields 14–17 of /proc/PID/stat):
/// a server's workers while they live, and those that exited and were
/// reaped inside the group.
pub fn group_cpu(pgids: &[i32]) -> (std::time::Duration, std::time::Duration) {
    if pgids.is_empty() {
        return Default::default();
    }
    // SAFETY: sysconf has no preconditions.
    let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) }.max(1) as f64;
    let Ok(rd) = std::fs::read_dir("/proc") else { return Default::default() };
    let (mut user, mut system) = (0u64, 0u64);
    for pid in rd.flatten().filter_map(|e| e.file_name().to_str().and_then(|n| n.parse::<i32>().ok())) {
        // After the name: state, ppid, pgrp … utime (12), stime, cutime, cstime.
        let Some(f) =
            stat_fields(pid).filter(|f| f.len() > 15 && f[2].parse::<i32>().is_ok_and(|g| pgids.contains(&g)))
        else {
            continue;
        };
        let n = |i: usize| f[i].parse::<u64>().unwrap_or(0);
        user = user.saturating_add(n(11)).saturating_add(n(13));
        system = system.saturating_add(n(12)).saturating_add(n(14));
    }
    let secs = |t: u64| std::time::Duration::from_secs_f64(t as f64 / hz);
    (secs(user), secs(system))
}

/// The signal named in a profile (`TERM`, `SIGINT`, `quit`).
pub fn signal_by_name(s: &str) -> Option<i32> {
    let n = s.trim().to_ascii_uppercase();
    let n = n.strip_prefix("SIG").unwrap_or(&n);
    Some(match n {
        "TERM" => libc::SIGTERM,
        "INT" => libc::SIGINT,
        "QUIT" => libc::SIGQUIT,
        "HUP" => libc::SIGHUP,
        "WINCH" => libc::SIGWINCH,
        "USR1" => libc::SIGUSR1,
        "USR2" => libc::SIGUSR2,
        "KILL" => libc::SIGKILL,
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn this_process_is_recognised_and_a_reused_pid_is_not() {
        let me = std::process::id() as i32;
        let t = start_ticks(me).unwrap();
        assert!(pid_alive(me));
        assert!(process_running(me, Some(t)));
        assert!(!process_running(me, Some(t + 1)));
        assert!(!process_running(0, None));
        assert_eq!(signal_by_name("sigterm"), Some(libc::SIGTERM));
        assert_eq!(signal_by_name("nope"), None);
    }
}
