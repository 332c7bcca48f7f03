//! The one bounded reader of what a test sends back: a command's captured
//! stdout or stderr becomes text of at most [`STREAM`] bytes (its first and
//! last halves, the cut said between them), bytes that are not UTF-8
//! written as `\xNN` — counted against the same bound, so a flood of
//! invalid bytes costs no more than a flood of text (lossy decoding once
//! tripled it) — and a test's trial logs, held until the test ends, share
//! one [`TEST`] budget. Engine's memory for a test's output is bounded by
//! these, not by what the test sent. Steps and servers write their logs
//! through a [`Sink`]: a pipe engine copies into the log file, at most
//! [`LOG`] bytes of it.

use std::fmt::Write as _;
use std::fs::File;
use std::os::unix::fs::FileExt;

/// Most text kept of one stream of one command (a trial's stdout, …): a
/// trial's two streams together keep 16 MiB.
pub const STREAM: usize = 8 << 20;
/// Most text of trial logs a test keeps until it ends (its `trials.log`).
pub const TEST: usize = 32 << 20;
/// Most bytes a step's or server's output adds to its log file: the first
/// and last halves, with a line between saying how much was dropped.
pub const LOG: usize = 16 << 20;
/// What a trial's log keeps once the test's budget is spent: its last
/// lines, where a failure says why.
const SPENT_TAIL: usize = 16 << 10;

/// The text of what was written to `f` from its start (positional reads:
/// the child shares the offset), at most `cap` bytes of it.
pub fn read(f: &File, cap: usize) -> std::io::Result<String> {
    let size = f.metadata()?.len();
    if size <= cap as u64 {
        let raw = read_at(f, 0, size as usize)?;
        let (text, used) = decode(&raw, cap, false);
        if used == raw.len() {
            return Ok(text);
        }
    }
    let half = cap / 2;
    let (mut text, used) = decode(&read_at(f, 0, half)?, half, true);
    // The tail: the last `half` bytes, fewer when escapes make more text.
    let rest = size - used as u64;
    let mut window = rest.min(half as u64) as usize;
    let tail = loop {
        let raw = read_at(f, size - window as u64, window)?;
        let (t, used) = decode(&raw, half, false);
        if used == raw.len() || window <= 1 {
            break t;
        }
        window /= 2;
    };
    let dropped = rest - window as u64;
    if dropped > 0 {
        let _ = write!(text, "\n[engine: {dropped} bytes {CUT} more than {} MiB]\n", cap >> 20);
    }
    text.push_str(&tail);
    Ok(text)
}

/// What the line in a cut output says (and [`was_cut`] looks for).
const CUT: &str = "of this output not kept:";

/// Whether `text` (from [`read`]) was cut: a parser that found nothing may
/// have lost what it looked for.
pub fn was_cut(text: &str) -> bool {
    text.contains(CUT)
}

/// A memory file a command writes its output to, past 64 MiB: what lies
/// between the first and last half of [`STREAM`] is given back to the
/// system (a hole punched; the size stays, so [`read`] counts what was
/// dropped). Without it a command's output costs memory as long as it
/// writes. Only memory files (they take seals; a log file never): checked
/// every few tens of milliseconds while the command runs.
pub fn trim_memfile(f: &File) {
    use std::os::fd::AsRawFd;
    const TRIM_AT: u64 = 64 << 20;
    let Ok(size) = f.metadata().map(|m| m.len()) else { return };
    // SAFETY: fcntl on a descriptor we hold; memfds answer F_GET_SEALS.
    if size <= TRIM_AT || unsafe { libc::fcntl(f.as_raw_fd(), libc::F_GET_SEALS) } < 0 {
        return;
    }
    let page = 4096u64;
    let from = ((STREAM / 2) as u64).div_ceil(page) * page;
    let to = (size - (STREAM / 2) as u64) / page * page;
    if to > from {
        let mode = libc::FALLOC_FL_PUNCH_HOLE | libc::FALLOC_FL_KEEP_SIZE;
        // SAFETY: fallocate on our descriptor; a failure leaves the file as it was.
        unsafe { libc::fallocate(f.as_raw_fd(), mode, from as libc::off_t, (to - from) as libc::off_t) };
    }
}

fn read_at(f: &File, from: u64, len: usize) -> std::io::Result<Vec<u8>> {
    let mut v = vec![0u8; len];
    let mut done = 0;
    while done < len {
        match f.read_at(&mut v[done..], from + done as u64)? {
            0 => break,
            n => done += n,
        }
    }
    v.truncate(done);
    Ok(v)
}

/// `bytes` as text of at most `cap` bytes, each byte that is not part of
/// valid UTF-8 as `\xNN`; with how many of `bytes` it holds. With `more`
/// (the input goes on), a sequence cut at the end is left for later.
pub fn decode(mut bytes: &[u8], cap: usize, more: bool) -> (String, usize) {
    let mut out = String::with_capacity(bytes.len().min(cap));
    let mut used = 0;
    loop {
        let (good, bad) = match std::str::from_utf8(bytes) {
            Ok(s) => (s, 0),
            Err(e) => {
                // SAFETY: the bytes up to `valid_up_to` are valid UTF-8.
                let s = unsafe { std::str::from_utf8_unchecked(&bytes[..e.valid_up_to()]) };
                let bad = match e.error_len() {
                    Some(n) => n,
                    None if more => {
                        push_bounded(&mut out, s, cap, &mut used);
                        return (out, used);
                    }
                    None => bytes.len() - e.valid_up_to(),
                };
                (s, bad)
            }
        };
        if !push_bounded(&mut out, good, cap, &mut used) {
            return (out, used);
        }
        for b in &bytes[good.len()..good.len() + bad] {
            if out.len() + 4 > cap {
                return (out, used);
            }
            let _ = write!(out, "\\x{b:02x}");
            used += 1;
        }
        bytes = &bytes[good.len() + bad..];
        if bytes.is_empty() {
            return (out, used);
        }
    }
}

/// Pushes what of `s` fits under `cap`; whether all of it did.
fn push_bounded(out: &mut String, s: &str, cap: usize, used: &mut usize) -> bool {
    let room = cap.saturating_sub(out.len());
    let n = if s.len() <= room { s.len() } else { s.floor_char_boundary(room) };
    out.push_str(&s[..n]);
    *used += n;
    n == s.len()
}

/// What a test's trial logs may still hold, in bytes of text.
#[derive(Debug)]
pub struct Budget {
    left: usize,
}

impl Default for Budget {
    fn default() -> Budget {
        Budget { left: TEST }
    }
}

/// Most bytes of trial logs one run keeps, all tests together: past it a
/// trial's log is the line saying why (a run's tests are at most
/// `expand::MAX_TESTS`, so that line is bounded too).
pub const RUN_TRIAL_LOGS: usize = 1 << 30;

static RUN_TRIAL_LEFT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(RUN_TRIAL_LOGS);

impl Budget {
    /// `text` as kept: whole while the test's and the run's budgets last,
    /// else its last lines after a line saying how much was dropped and why.
    pub fn keep(&mut self, text: String) -> String {
        use std::sync::atomic::Ordering::Relaxed;
        let (kept, spent) = within(text, self.left, RUN_TRIAL_LEFT.load(Relaxed));
        self.left = self.left.saturating_sub(kept.len());
        let _ = RUN_TRIAL_LEFT.fetch_update(Relaxed, Relaxed, |l| Some(l.saturating_sub(spent)));
        kept
    }
}

/// `text` kept within `test` and `run` bytes left: whole, or its tail
/// after a line saying which budget ran out; and the bytes it takes from
/// them.
fn within(text: String, test: usize, run: usize) -> (String, usize) {
    let left = test.min(run);
    if text.len() <= left {
        let n = text.len();
        return (text, n);
    }
    let tail = text.len() - text.ceil_char_boundary(text.len().saturating_sub(SPENT_TAIL.min(left)));
    let why = match test <= run {
        true => format!("the test's logs reached {} MiB", TEST >> 20),
        false => format!("the run's trial logs reached {} MiB", RUN_TRIAL_LOGS >> 20),
    };
    let mut kept = format!("[engine: {} bytes of this trial's log not kept: {why}]\n", text.len() - tail);
    kept.push_str(&text[text.len() - tail..]);
    let spent = kept.len().min(left);
    (kept, spent)
}

/// How long a finished command's output may take to reach its log.
pub const GRACE: std::time::Duration = std::time::Duration::from_millis(500);

/// The reading end of a command's output pipe, copied into its log by a
/// thread of engine's.
pub struct Sink {
    done: std::sync::mpsc::Receiver<()>,
}

/// Most bytes of step, build and server logs one test writes, and one run.
pub const TEST_LOGS: u64 = 64 << 20;
pub const RUN_LOGS: u64 = 1 << 30;

/// What is left of the bytes logs may still take: the test's (shared by
/// its commands' sinks) and the whole run's.
#[derive(Clone, Debug)]
pub struct LogBudget(std::sync::Arc<std::sync::atomic::AtomicU64>);

static RUN_LEFT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(RUN_LOGS);

impl LogBudget {
    /// A test's (or an install's) budget of [`TEST_LOGS`].
    pub fn test() -> LogBudget {
        LogBudget(std::sync::Arc::new(std::sync::atomic::AtomicU64::new(TEST_LOGS)))
    }

    /// Takes up to `n` bytes from the test's and the run's budgets: how
    /// many may be written.
    fn take(&self, n: usize) -> usize {
        use std::sync::atomic::Ordering::Relaxed;
        let take_from = |a: &std::sync::atomic::AtomicU64, want: u64| {
            let mut got = 0;
            let _ = a.fetch_update(Relaxed, Relaxed, |left| {
                got = left.min(want);
                Some(left - got)
            });
            got
        };
        let test = take_from(&self.0, n as u64);
        let run = take_from(&RUN_LEFT, test);
        // What the run could not give goes back to the test.
        self.0.fetch_add(test - run, Relaxed);
        run as usize
    }

    fn spent(&self) -> bool {
        use std::sync::atomic::Ordering::Relaxed;
        self.0.load(Relaxed) == 0 || RUN_LEFT.load(Relaxed) == 0
    }
}

/// A pipe for a command's stdout and stderr (the returned write end) whose
/// output a thread appends to `log`: the first `cap / 2` bytes as they
/// come, the last `cap / 2` held and written when the pipe closes, after
/// a line saying how many bytes between them were dropped — all within
/// `budget` (the test's and the run's). `owner`: the pipe is the
/// command's user's (a server that reopens `/dev/stderr`).
pub fn sink(log: File, cap: usize, owner: Option<(u32, u32)>, budget: &LogBudget) -> std::io::Result<(File, Sink)> {
    use std::os::fd::FromRawFd;
    let mut fds = [0; 2];
    // SAFETY: fds is a valid array of two descriptors for pipe2 to fill.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: both descriptors are fresh and ours.
    let (read, write) = unsafe { (File::from_raw_fd(fds[0]), File::from_raw_fd(fds[1])) };
    if let Some((uid, gid)) = owner {
        std::os::unix::fs::fchown(&write, Some(uid), Some(gid))?;
    }
    let (tx, done) = std::sync::mpsc::channel();
    let budget = budget.clone();
    std::thread::Builder::new().name("engine-log".into()).spawn(move || {
        let _ = copy(read, log, cap, &budget);
        let _ = tx.send(());
    })?;
    Ok((write, Sink { done }))
}

/// The copying: head to the file, tail in a ring, the ring at the end.
fn copy(mut from: File, mut to: File, cap: usize, budget: &LogBudget) -> std::io::Result<()> {
    use std::io::{Read, Write};
    let half = cap / 2;
    let (mut head, mut dropped) = (0usize, 0u64);
    // Never more than `half` held: room is made before bytes go in.
    let mut tail: std::collections::VecDeque<u8> = std::collections::VecDeque::new();
    let mut buf = vec![0u8; 64 << 10];
    loop {
        let n = match from.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        let to_file = n.min(half - head);
        if to_file > 0 {
            let allowed = budget.take(to_file);
            to.write_all(&buf[..allowed])?;
            dropped += (to_file - allowed) as u64;
            head += to_file;
        }
        if budget.spent() {
            // Nothing more will be written: hold nothing.
            dropped += (tail.len() + n - to_file) as u64;
            tail = std::collections::VecDeque::new();
            continue;
        }
        let mut incoming = &buf[to_file..n];
        if incoming.len() > half {
            dropped += (incoming.len() - half) as u64;
            incoming = &incoming[incoming.len() - half..];
        }
        let over = (tail.len() + incoming.len()).saturating_sub(half);
        tail.drain(..over);
        dropped += over as u64;
        if tail.capacity() < half && tail.len() + incoming.len() > tail.capacity() {
            tail.reserve_exact((tail.len() + incoming.len()).max(tail.capacity() * 2).min(half) - tail.len());
        }
        tail.extend(incoming);
    }
    let allowed = budget.take(tail.len());
    dropped += (tail.len() - allowed) as u64;
    tail.drain(..tail.len() - allowed);
    if dropped > 0 {
        writeln!(
            to,
            "\n[engine: {dropped} bytes of this output not kept: a command's log keeps {} MiB, a test's {} MiB, a run's {} MiB]",
            cap >> 20,
            TEST_LOGS >> 20,
            RUN_LOGS >> 20
        )?;
    }
    let (a, b) = tail.as_slices();
    to.write_all(a)?;
    to.write_all(b)
}

impl Sink {
    /// Waits up to `grace` for the pipe to close (the command's processes
    /// are gone) and the copy to end. A process the command left behind
    /// that holds the pipe does not hold engine: the copy goes on beside,
    /// bounded as before.
    pub fn finish(self, grace: std::time::Duration) -> bool {
        // After Ctrl-C nothing more is waited for.
        let grace = if super::interrupt::requested() { std::time::Duration::ZERO } else { grace };
        self.done.recv_timeout(grace).is_ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    #[test]
    fn invalid_bytes_are_escaped_within_the_bound() {
        assert_eq!(decode(b"ok \xff\xfe\n", 100, false), ("ok \\xff\\xfe\n".to_string(), 6));
        // "é" cut at the end of a read is left for the next one.
        assert_eq!(decode(b"a\xc3", 100, true), ("a".to_string(), 1));
        assert_eq!(decode(b"a\xc3", 100, false), ("a\\xc3".to_string(), 2));
        // The bound counts the escapes: 2 bytes of 0xff make 8 of text.
        assert_eq!(decode(b"\xff\xff\xff", 9, false), ("\\xff\\xff".to_string(), 2));
        assert_eq!(decode("aé".as_bytes(), 2, false), ("a".to_string(), 1));
    }

    #[test]
    fn a_flood_of_invalid_bytes_is_kept_at_the_bound() {
        let mut f = tempfile::tempfile().unwrap();
        f.write_all(&vec![0xff; 5 << 20]).unwrap();
        let text = read(&f, 1 << 20).unwrap();
        assert!(text.len() <= (1 << 20) + 100, "{} bytes of text", text.len());
        assert!(text.starts_with("\\xff\\xff") && text.ends_with("\\xff"));
        let said = text.split("[engine: ").nth(1).unwrap();
        let dropped: u64 = said.split(' ').next().unwrap().parse().unwrap();
        // Half the bound of text from each end: a quarter of that in bytes.
        assert_eq!(dropped, (5 << 20) - 2 * (1 << 20) / 2 / 4);
        // Small and valid output: all of it, unchanged.
        let mut g = tempfile::tempfile().unwrap();
        g.write_all("héllo\n".as_bytes()).unwrap();
        assert_eq!(read(&g, 1 << 20).unwrap(), "héllo\n");
    }

    #[test]
    fn a_sink_keeps_head_and_tail_of_a_flood() {
        let log = tempfile::NamedTempFile::new().unwrap();
        let (mut w, sink) = sink(log.reopen().unwrap(), 1 << 20, None, &LogBudget::test()).unwrap();
        for k in 0..40u8 {
            w.write_all(&[b'a' + k % 26; 64 << 10]).unwrap();
        }
        w.write_all(b"the end\n").unwrap();
        drop(w);
        assert!(sink.finish(std::time::Duration::from_secs(10)));
        let text = std::fs::read_to_string(log.path()).unwrap();
        assert!(text.len() < (1 << 20) + 200, "{} bytes", text.len());
        assert!(text.starts_with("aaaa") && text.ends_with("the end\n"));
        assert!(text.contains(&format!("[engine: {} bytes of this output not kept", 40 * (64 << 10) + 8 - (1 << 20))));
    }

    /// A memory file past 64 MiB gives back what lies between its first
    /// and last 4 MiB; what is read back is the same as without the trim.
    #[test]
    fn a_memfile_is_trimmed_to_its_ends() {
        let f = crate::process::memfile("t").unwrap();
        (&f).write_all(&vec![b'x'; 100 << 20]).unwrap();
        (&f).write_all(b"end\n").unwrap();
        let before = read(&f, STREAM).unwrap();
        trim_memfile(&f);
        use std::os::unix::fs::MetadataExt;
        let m = f.metadata().unwrap();
        assert!(m.blocks() * 512 < 16 << 20, "{} bytes held", m.blocks() * 512);
        assert_eq!(m.len(), (100 << 20) + 4);
        assert_eq!(read(&f, STREAM).unwrap(), before);
    }

    #[test]
    fn the_runs_trial_log_budget_is_shared_by_its_tests() {
        // A fresh test with the run nearly spent: the tail the run still
        // has room for, and the line says it was the run's budget.
        let text = "x".repeat(1 << 20);
        let (kept, spent) = within(text.clone(), TEST, 4 << 10);
        assert!(kept.starts_with("[engine: ") && kept.contains("the run's trial logs reached 1024 MiB"), "{kept:.80}");
        assert_eq!(spent, 4 << 10);
        assert!(kept.len() < (4 << 10) + 200);
        // Spent: only the line.
        let (kept, spent) = within(text.clone(), TEST, 0);
        assert!(kept.lines().count() == 1 && spent == 0, "{kept}");
        // Within both: whole.
        assert_eq!(within("ok".into(), TEST, 10), ("ok".to_string(), 2));
    }

    #[test]
    fn the_test_budget_keeps_tails_once_spent() {
        let mut b = Budget { left: 100 };
        assert_eq!(b.keep("x".repeat(60)), "x".repeat(60));
        let kept = b.keep(format!("{}tail", "y".repeat(200)));
        assert!(kept.starts_with("[engine: ") && kept.ends_with("tail"), "{kept}");
        assert!(kept.len() <= 40 + 90, "the tail within what was left, and the note: {kept}");
        assert!(b.keep("z".repeat(10)).contains("not kept"));
    }
}
