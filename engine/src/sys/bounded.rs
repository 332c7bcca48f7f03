//! The one bounded reader of what a test sends back: a command's captured
//! stdout or stderr becomes text of at most [`STREAM`] bytes (its first and
//! last halves, the cut said between them), bytes that are not UTF-8
//! written as `\xNN` — counted against the same bound, so a flood of
//! invalid bytes costs no more than a flood of text (lossy decoding once
//! tripled it) — and a test's trial logs, held until the test ends, share
//! one [`TEST`] budget. Engine's memory for a test's output is bounded by
//! these, not by what the test sent.

use std::fmt::Write as _;
use std::fs::File;
use std::os::unix::fs::FileExt;

/// Most text kept of one stream of one command (a trial's stdout, …): a
/// trial's two streams together keep 16 MiB.
pub const STREAM: usize = 8 << 20;
/// Most text of trial logs a test keeps until it ends (its `trials.log`).
pub const TEST: usize = 32 << 20;
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
        let _ = write!(text, "\n[engine: {dropped} bytes of this output not kept: more than {} MiB]\n", cap >> 20);
    }
    text.push_str(&tail);
    Ok(text)
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

impl Budget {
    /// `text` as kept: whole while the budget lasts, else its last lines
    /// after a line saying how much was dropped and why.
    pub fn keep(&mut self, text: String) -> String {
        if text.len() <= self.left {
            self.left -= text.len();
            return text;
        }
        let tail = text.len() - text.ceil_char_boundary(text.len().saturating_sub(SPENT_TAIL.min(self.left)));
        let mut kept = format!(
            "[engine: {} bytes of this trial's log not kept: the test's logs reached {} MiB]\n",
            text.len() - tail,
            TEST >> 20
        );
        kept.push_str(&text[text.len() - tail..]);
        self.left = self.left.saturating_sub(kept.len());
        kept
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
    fn the_test_budget_keeps_tails_once_spent() {
        let mut b = Budget { left: 100 };
        assert_eq!(b.keep("x".repeat(60)), "x".repeat(60));
        let kept = b.keep(format!("{}tail", "y".repeat(200)));
        assert!(kept.starts_with("[engine: ") && kept.ends_with("tail"), "{kept}");
        assert!(kept.len() <= 40 + 90, "the tail within what was left, and the note: {kept}");
        assert!(b.keep("z".repeat(10)).contains("not kept"));
    }
}
