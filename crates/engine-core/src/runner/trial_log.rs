//! A trial log's layout, in one place: the writers (external commands,
//! servers, plugins) and the reader (a failure's standard-error tail) agree
//! on its markers by construction.
//!
//! ```text
//! $ fio --name=x …
//! # cwd: /scratch/fio
//! # exit: … (external commands: status, time, resources)
//! --- stdout ---
//! …
//! --- stderr ---
//! …
//! ```

use std::path::Path;

/// Starts the standard output section.
pub(crate) const STDOUT: &str = "--- stdout ---\n";
/// Starts the standard error section (the last section of a log).
pub(crate) const STDERR: &str = "--- stderr ---\n";

/// The command and where it ran.
pub(crate) fn header(command_line: &str, cwd: &Path) -> String {
    format!("$ {command_line}\n# cwd: {}\n", cwd.display())
}

/// Both streams, standard output ended by a line break before the marker.
pub(crate) fn streams(stdout: &str, stderr: &str) -> String {
    let mut s = String::with_capacity(stdout.len() + stderr.len() + 40);
    write_streams(&mut s, stdout, stderr);
    s
}

/// [`streams`] added to `out`.
pub(crate) fn write_streams(out: &mut String, stdout: &str, stderr: &str) {
    let gap = if stdout.is_empty() || stdout.ends_with('\n') { "" } else { "\n" };
    for part in [STDOUT, stdout, gap, STDERR, stderr] {
        out.push_str(part);
    }
}

/// The last `n` non-blank lines of standard error in a log's text.
pub(crate) fn stderr_tail(text: &str, n: usize) -> Vec<String> {
    let Some((_, err)) = text.rsplit_once(STDERR) else { return Vec::new() };
    last_lines(err, n)
}

/// The last `n` lines of `text` that are not blank.
pub(crate) fn last_lines(text: &str, n: usize) -> Vec<String> {
    let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    lines[lines.len().saturating_sub(n)..].iter().map(|l| l.to_string()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_tail_read_is_the_stderr_written() {
        let log = header("prog -x", Path::new("/tmp")) + &streams("out", "a\n\nb\nc\n");
        assert_eq!(log, "$ prog -x\n# cwd: /tmp\n--- stdout ---\nout\n--- stderr ---\na\n\nb\nc\n");
        assert_eq!(stderr_tail(&log, 2), ["b", "c"]);
        assert!(stderr_tail("no markers", 5).is_empty());
    }
}
