//! Pressure stall information (`/proc/pressure/*`, a cgroup v2's
//! `io.pressure`, `cpu.pressure`, `memory.pressure`): the `total=` stall
//! time, in microseconds, of the `some` and `full` lines.

/// `some … total=N` and `full … total=N` of a PSI file's text; `full` is
/// `None` where the kernel has no such line (CPU pressure before 5.13).
pub fn totals(text: &[u8]) -> (Option<u64>, Option<u64>) {
    let total = |prefix: &[u8]| {
        text.split(|&b| b == b'\n').find(|l| l.starts_with(prefix)).and_then(|l| {
            let at = l.windows(6).position(|w| w == b"total=")? + 6;
            let digits = l[at..].split(|b| b.is_ascii_whitespace()).next()?;
            if digits.is_empty() || !digits.iter().all(u8::is_ascii_digit) {
                return None;
            }
            digits.iter().try_fold(0u64, |acc, &d| acc.checked_mul(10)?.checked_add(u64::from(d - b'0')))
        })
    };
    (total(b"some"), total(b"full"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn totals_of_some_and_full() {
        let psi = b"some avg10=0.00 avg60=0.28 avg300=0.73 total=1645561994\nfull avg10=0.00 avg60=0.25 avg300=0.64 total=1061832349\n";
        assert_eq!(totals(psi), (Some(1645561994), Some(1061832349)));
        assert_eq!(totals(b"some avg10=0.00 avg60=0.00 avg300=0.00 total=5\n"), (Some(5), None));
        assert_eq!(totals(b"some total=-3\nfull total=99999999999999999999999\n"), (None, None));
        assert_eq!(totals(b""), (None, None));
    }
}
