//! What TCP connections nobody accepted hold, in one network namespace.
//!
//! The kernel makes a listener's connections itself, outside any process,
//! so no memory cgroup is charged for them until a process accepts them:
//! whatever their peers send waits in them uncounted. 1,000 connections a
//! test opened to its own listener and never accepted held 128 MiB while
//! its memory cgroup (v1, socket counter on) was charged 3 MiB.
//!
//! Found through the namespace's `NETLINK_SOCK_DIAG` socket (opened from
//! inside it: a diag socket shows its own namespace only): TCP sockets,
//! IPv4 and IPv6, established or half-closed, with no inode — no process
//! has them — and what each holds (`SK_MEMINFO`: received, queued to send,
//! reserved, backlog). The kernel walks its whole connection hash for a
//! dump (about a millisecond here), so the caller asks only when the
//! machine's TCP memory could be past what the test has left.

use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

const SOCK_DIAG_BY_FAMILY: u16 = 20;
const INET_DIAG_SKMEMINFO: u16 = 7;
const TCP_ESTABLISHED: u32 = 1;
const TCP_CLOSE_WAIT: u32 = 8;
/// `struct inet_diag_msg`: family, state, timer, retrans, the socket id
/// (48 bytes), expires, rqueue, wqueue, uid, inode.
const MSG_LEN: usize = 72;
const INODE_AT: usize = 68;
/// `SK_MEMINFO_*` slots counted: rmem_alloc, fwd_alloc, wmem_queued, backlog.
const COUNTED: [usize; 4] = [0, 4, 5, 7];

/// A sock_diag socket of one network namespace.
#[derive(Debug)]
pub struct Diag {
    fd: OwnedFd,
}

impl Diag {
    /// Opens one in the network namespace of the calling thread.
    pub fn open_here() -> Option<Diag> {
        // SAFETY: plain syscall; the descriptor is owned at once.
        let fd =
            unsafe { libc::socket(libc::AF_NETLINK, libc::SOCK_RAW | libc::SOCK_CLOEXEC, libc::NETLINK_SOCK_DIAG) };
        // SAFETY: a descriptor just returned to us.
        (fd >= 0).then(|| Diag { fd: unsafe { OwnedFd::from_raw_fd(fd) } })
    }

    /// Bytes held by the namespace's TCP connections no process has
    /// accepted (`None` when the kernel did not answer).
    pub fn unaccepted(&self) -> Option<u64> {
        let mut total = 0u64;
        for family in [libc::AF_INET, libc::AF_INET6] {
            total = total.saturating_add(self.dump(family as u8)?);
        }
        Some(total)
    }

    fn dump(&self, family: u8) -> Option<u64> {
        const LEN: usize = 16 + 56;
        let mut req = [0u8; LEN];
        req[0..4].copy_from_slice(&(LEN as u32).to_ne_bytes());
        req[4..6].copy_from_slice(&SOCK_DIAG_BY_FAMILY.to_ne_bytes());
        req[6..8].copy_from_slice(&((libc::NLM_F_REQUEST | libc::NLM_F_DUMP) as u16).to_ne_bytes());
        // inet_diag_req_v2: family, protocol, extensions, pad, states, id.
        req[16] = family;
        req[17] = libc::IPPROTO_TCP as u8;
        req[18] = 1 << (INET_DIAG_SKMEMINFO - 1);
        req[20..24].copy_from_slice(&((1u32 << TCP_ESTABLISHED) | (1 << TCP_CLOSE_WAIT)).to_ne_bytes());
        // SAFETY: sends our buffer on our socket (to the kernel: no address).
        if unsafe { libc::send(self.fd.as_raw_fd(), req.as_ptr().cast(), req.len(), 0) } != req.len() as isize {
            return None;
        }
        let mut buf = vec![0u8; 64 << 10];
        let mut total = 0u64;
        loop {
            // SAFETY: receives into our buffer, within its length.
            let n = unsafe { libc::recv(self.fd.as_raw_fd(), buf.as_mut_ptr().cast(), buf.len(), 0) };
            if n <= 0 {
                return None;
            }
            match held_in(&buf[..n as usize]) {
                Part::More(b) => total = total.saturating_add(b),
                Part::Done(b) => return Some(total.saturating_add(b)),
                Part::Failed => return None,
            }
        }
    }
}

enum Part {
    More(u64),
    Done(u64),
    Failed,
}

/// What the unaccepted sockets among one read's messages hold.
fn held_in(mut b: &[u8]) -> Part {
    let mut total = 0u64;
    let u32_at = |b: &[u8], at: usize| b.get(at..at + 4).map_or(0, |v| u32::from_ne_bytes([v[0], v[1], v[2], v[3]]));
    while b.len() >= 16 {
        let len = u32_at(b, 0) as usize;
        let kind = u16::from_ne_bytes([b[4], b[5]]);
        if len < 16 || len > b.len() {
            return Part::Failed;
        }
        let msg = &b[16..len];
        match kind as i32 {
            libc::NLMSG_DONE => return Part::Done(total),
            libc::NLMSG_ERROR => return Part::Failed,
            _ if msg.len() >= MSG_LEN && u32_at(msg, INODE_AT) == 0 => {
                // Attributes after the message, each 4-aligned.
                let mut a = &msg[MSG_LEN..];
                while a.len() >= 4 {
                    let alen = u16::from_ne_bytes([a[0], a[1]]) as usize;
                    let atype = u16::from_ne_bytes([a[2], a[3]]);
                    if alen < 4 || alen > a.len() {
                        break;
                    }
                    if atype == INET_DIAG_SKMEMINFO {
                        let v = &a[4..alen];
                        for i in COUNTED {
                            total = total.saturating_add(u64::from(u32_at(v, i * 4)));
                        }
                    }
                    a = &a[((alen + 3) & !3).min(a.len())..];
                }
            }
            _ => {}
        }
        b = &b[((len + 3) & !3).min(b.len())..];
    }
    Part::More(total)
}

/// The machine's TCP memory, bytes (`/proc/net/sockstat`'s `TCP: … mem`,
/// pages; machine-wide whichever namespace reads it): no namespace's
/// unaccepted connections can hold more.
pub fn tcp_memory(sockstat: &std::fs::File) -> u64 {
    use std::os::unix::fs::FileExt;
    let mut buf = [0u8; 1024];
    let n = sockstat.read_at(&mut buf, 0).unwrap_or(0);
    let text = String::from_utf8_lossy(&buf[..n]);
    let pages = text
        .lines()
        .find_map(|l| l.strip_prefix("TCP: "))
        .and_then(|l| l.split_whitespace().skip_while(|w| *w != "mem").nth(1)?.parse::<u64>().ok());
    // Unreadable: as if it were large, so that the caller looks.
    pages.map_or(u64::MAX, |p| p.saturating_mul(4096))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{Read, Write};

    /// Data sent to a connection no process accepted is found, and gone
    /// from the count once accepted (it is the process's then).
    #[test]
    fn what_unaccepted_connections_hold_is_found() {
        let diag = Diag::open_here().expect("a sock_diag socket");
        let before = diag.unaccepted().expect("the kernel answers");
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let mut c = std::net::TcpStream::connect(l.local_addr().unwrap()).unwrap();
        c.write_all(&vec![7u8; 200_000]).unwrap();
        std::thread::sleep(std::time::Duration::from_millis(100));
        let waiting = diag.unaccepted().unwrap();
        assert!(waiting >= before + 100_000, "waiting {waiting}, before {before}");
        let (mut a, _) = l.accept().unwrap();
        let after = diag.unaccepted().unwrap();
        assert!(after + 100_000 <= waiting, "after accept {after}, waiting {waiting}");
        let mut got = vec![0u8; 1000];
        a.read_exact(&mut got).unwrap();
    }

    #[test]
    fn sockstat_tcp_memory_is_read_in_bytes() {
        let f = std::fs::File::open("/proc/net/sockstat").unwrap();
        let m = tcp_memory(&f);
        assert!(m < u64::MAX && m.is_multiple_of(4096), "{m}");
    }
}
