//! The codec a job process sends its tally back in: little-endian u64s and
//! byte strings. Its own file so the parts that encode themselves (the
//! histogram, the slices, the tally) do not import the process code.

use std::time::{Duration, Instant};

/// What a job process sends back: little-endian u64s and byte strings.
#[derive(Default)]
pub(crate) struct Wire(pub Vec<u8>);

impl Wire {
    pub(crate) fn u(&mut self, x: u64) {
        self.0.extend_from_slice(&x.to_le_bytes());
    }

    pub(crate) fn bytes(&mut self, b: &[u8]) {
        self.u(b.len() as u64);
        self.0.extend_from_slice(b);
    }

    /// An instant as nanoseconds after `origin` (none is before it).
    pub(crate) fn at(&mut self, i: Instant, origin: Instant) {
        self.u(i.saturating_duration_since(origin).as_nanos() as u64);
    }
}

pub(crate) struct Reader<'a>(pub &'a [u8]);

impl Reader<'_> {
    pub(crate) fn u(&mut self) -> Option<u64> {
        let (head, rest) = self.0.split_first_chunk::<8>()?;
        self.0 = rest;
        Some(u64::from_le_bytes(*head))
    }

    pub(crate) fn bytes(&mut self) -> Option<&[u8]> {
        let n = usize::try_from(self.u()?).ok()?;
        let (head, rest) = (self.0.get(..n)?, self.0.get(n..)?);
        self.0 = rest;
        Some(head)
    }

    pub(crate) fn at(&mut self, origin: Instant) -> Option<Instant> {
        origin.checked_add(Duration::from_nanos(self.u()?))
    }
}
