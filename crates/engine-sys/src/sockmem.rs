//! Kernel memory a test holds through its sockets, which no memory cgroup
//! is charged for: replies the kernel queues on a netlink socket that never
//! reads them (each socket up to twice `net.core.rmem_max`, as many sockets
//! as descriptors), and where the memory controller is cgroup v1, TCP and
//! UDP buffers (v2 charges those to the socket's memory cgroup). A red team held 519 MiB of netlink replies and 600 MiB of
//! loopback TCP buffers under a 64 MiB limit.
//!
//! Read from the test's own network namespace's `/proc/net` files, opened
//! once from inside it (a `/proc/net` file keeps showing the namespace it
//! was opened in): netlink's `Rmem` and `Wmem`, TCP's and UDP's
//! `tx_queue` and `rx_queue`. Their sum and the test's memory cgroup's use
//! together may not pass the test's memory limit: over it, every process
//! in the namespace is killed. Read every 50 ms, every 10 ms once the
//! sockets hold a quarter of what is left: what a test can queue within
//! one look is what it can take past its limit (loopback TCP fills tens
//! of MiB a connection in a few milliseconds: 67 to 883 MiB held under a
//! 64 MiB limit before the stop, where unwatched it took 2 GiB). Unix sockets are charged to the
//! sender's memory cgroup, so they are not counted here.

use std::fs::File;
use std::os::unix::fs::FileExt;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

const EVERY: Duration = Duration::from_millis(50);
const CLOSE: Duration = Duration::from_millis(10);
/// Most of a `/proc/net` file read per look: past it, the rest counts as
/// over (a test cannot hide sockets behind a table too long to read).
const MOST: usize = 16 << 20;

/// The `/proc/net` files of one network namespace.
#[derive(Debug)]
pub struct Tables {
    netlink: Option<File>,
    /// tcp, tcp6, udp, udp6.
    inet: Vec<File>,
    /// The pages TCP and UDP hold on the whole machine: while they fit in
    /// the room left, the namespace's own tables (whose reading walks the
    /// machine's whole socket hash, ~8 ms here) need no look.
    sockstat: Option<File>,
}

impl Tables {
    /// Opens the tables of the network namespace the calling thread is in:
    /// netlink's, and with `inet` TCP's and UDP's too (not where a v2
    /// memory cgroup is charged for them already).
    pub fn open_here(inet: bool) -> Tables {
        let open = |n: &str| File::open(format!("/proc/thread-self/net/{n}")).ok();
        let names: &[&str] = if inet { &["tcp", "tcp6", "udp", "udp6"] } else { &[] };
        Tables {
            netlink: open("netlink"),
            inet: names.iter().filter_map(|n| open(n)).collect(),
            sockstat: if inet { open("sockstat") } else { None },
        }
    }

    /// Bytes queued on the namespace's netlink, TCP and UDP sockets
    /// (`u64::MAX` when a table is past [`MOST`] bytes); while what TCP and
    /// UDP hold on the whole machine fits in `room`, that is counted
    /// instead of theirs.
    pub fn held(&self, room: u64) -> u64 {
        let mut total = 0u64;
        if let Some(f) = &self.netlink {
            let Some(text) = read_all(f) else { return u64::MAX };
            // sk Eth Pid Groups Rmem Wmem Dump Locks Drops Inode
            for l in text.lines().skip(1) {
                let f: Vec<&str> = l.split_whitespace().collect();
                let n = |i: usize| f.get(i).and_then(|v| v.parse::<u64>().ok()).unwrap_or(0);
                total = total.saturating_add(n(4)).saturating_add(n(5));
            }
        }
        if let Some(machine) = self.sockstat.as_ref().and_then(machine_inet)
            && total.saturating_add(machine) <= room
        {
            return total.saturating_add(machine);
        }
        for f in &self.inet {
            let Some(text) = read_all(f) else { return u64::MAX };
            // sl local_address rem_address st tx_queue:rx_queue ...
            for l in text.lines().skip(1) {
                let Some((tx, rx)) = l.split_whitespace().nth(4).and_then(|q| q.split_once(':')) else { continue };
                let hex = |v: &str| u64::from_str_radix(v, 16).unwrap_or(0);
                total = total.saturating_add(hex(tx)).saturating_add(hex(rx));
            }
        }
        total
    }
}

/// Bytes TCP and UDP hold on the whole machine, from `sockstat`'s `mem`
/// (pages; the namespace's file, the machine's figure).
fn machine_inet(f: &File) -> Option<u64> {
    let text = read_all(f)?;
    let mut pages = 0u64;
    for l in text.lines().filter(|l| l.starts_with("TCP:") || l.starts_with("UDP:")) {
        let f: Vec<&str> = l.split_whitespace().collect();
        let at = f.iter().position(|w| *w == "mem")?;
        pages = pages.saturating_add(f.get(at + 1)?.parse().ok()?);
    }
    // SAFETY: sysconf has no preconditions.
    let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) }.max(4096) as u64;
    Some(pages.saturating_mul(page))
}

fn read_all(f: &File) -> Option<String> {
    let mut buf = Vec::new();
    let mut chunk = vec![0u8; 64 << 10];
    loop {
        let n = f.read_at(&mut chunk, buf.len() as u64).ok()?;
        if n == 0 {
            return Some(String::from_utf8_lossy(&buf).into_owned());
        }
        buf.extend_from_slice(&chunk[..n]);
        if buf.len() > MOST {
            return None;
        }
    }
}

/// A running watch; stops when dropped.
pub struct Watch {
    stop: Arc<AtomicBool>,
    /// What the sockets held when it stopped the test (0: it did not).
    tripped: Arc<AtomicU64>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Watch {
    /// Watches `tables` against `limit` bytes together with the memory
    /// cgroup use `used()` gives; over it, `stop()`.
    pub fn start(
        tables: Tables,
        limit: u64,
        used: impl Fn() -> u64 + Send + 'static,
        stop_test: impl Fn() + Send + 'static,
    ) -> Option<Watch> {
        let stop = Arc::new(AtomicBool::new(false));
        let tripped = Arc::new(AtomicU64::new(0));
        let (s, t) = (stop.clone(), tripped.clone());
        let thread = std::thread::Builder::new()
            .name("socket-watch".into())
            .spawn(move || {
                while !s.load(Ordering::Relaxed) {
                    let room = limit.saturating_sub(used());
                    let held = tables.held(room);
                    if held > room {
                        // Said before the kill: whoever sees the test die
                        // asks why at once.
                        t.store(held.max(1), Ordering::SeqCst);
                        stop_test();
                        return;
                    }
                    std::thread::sleep(if held > room / 4 { CLOSE } else { EVERY });
                }
            })
            .ok()?;
        Some(Watch { stop, tripped, thread: Some(thread) })
    }

    /// The bytes the sockets held when it stopped the test, if it did.
    pub fn tripped(&self) -> Option<u64> {
        Some(self.tripped.load(Ordering::SeqCst)).filter(|b| *b > 0)
    }
}

impl Drop for Watch {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// A memory cgroup's use, bytes (v1 `memory.usage_in_bytes`, v2
/// `memory.current`); 0 when neither reads.
pub fn memcg_used(dir: &std::path::Path) -> u64 {
    let read = |f: &str| std::fs::read_to_string(dir.join(f)).ok()?.trim().parse().ok();
    read("memory.usage_in_bytes").or_else(|| read("memory.current")).unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Netlink replies queued on a socket that never reads them are seen,
    /// in the namespace the tables were opened in only.
    #[test]
    fn queued_netlink_replies_are_counted() {
        let tables = Tables::open_here(true);
        let before = tables.held(0);
        // SAFETY: a netlink socket we close; messages built in place.
        unsafe {
            let s = libc::socket(libc::AF_NETLINK, libc::SOCK_RAW | libc::SOCK_CLOEXEC, libc::NETLINK_ROUTE);
            assert!(s >= 0);
            // An unknown type with NLM_F_ACK: the error reply carries the request back.
            let mut msg = vec![0u8; 16 + 4000];
            let len = msg.len() as u32;
            msg[0..4].copy_from_slice(&len.to_ne_bytes());
            msg[4..6].copy_from_slice(&0x1f0u16.to_ne_bytes());
            msg[6..8].copy_from_slice(&(libc::NLM_F_REQUEST as u16 | libc::NLM_F_ACK as u16).to_ne_bytes());
            let mut addr: libc::sockaddr_nl = std::mem::zeroed();
            addr.nl_family = libc::AF_NETLINK as u16;
            for _ in 0..20 {
                libc::sendto(
                    s,
                    msg.as_ptr().cast(),
                    msg.len(),
                    0,
                    (&addr as *const libc::sockaddr_nl).cast(),
                    std::mem::size_of::<libc::sockaddr_nl>() as u32,
                );
            }
            let held = tables.held(0);
            libc::close(s);
            assert!(held >= before + 20 * 4000, "held {held}, before {before}");
        }
    }
}
