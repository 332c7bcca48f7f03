//! What a network namespace's IP sockets hold in their receive queues,
//! error queues included.
//!
//! A socket's error queue (transmit timestamps, zero-copy notices, ICMP
//! errors) is charged to its receive allocation only, never to the
//! protocol's memory nor to a memory cgroup: a red team held 763 MiB so
//! under a 64 MiB limit (UDP datagrams sent with software transmit
//! timestamps asked per message, never read back). Found through the
//! namespace's `NETLINK_SOCK_DIAG` socket (opened from inside it: a diag
//! socket shows its own namespace only): every TCP, UDP and UDP-Lite
//! socket, IPv4 and IPv6, and its `SK_MEMINFO_RMEM_ALLOC`. The kernel walks
//! its whole connection hash for a dump (a millisecond or two here), so
//! the caller asks only when the namespace's sockets could hold more than
//! the test has left.

use std::collections::HashSet;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

const SOCK_DIAG_BY_FAMILY: u16 = 20;
const INET_DIAG_SKMEMINFO: u16 = 7;
/// `struct inet_diag_msg`: family, state, timer, retrans, the socket id
/// (48 bytes), expires, rqueue, wqueue, uid, inode.
const MSG_LEN: usize = 72;

/// What one dump of the namespace's IP sockets found.
#[derive(Debug, Default)]
pub struct Dump {
    /// Bytes in their receive and error queues.
    pub received: u64,
    /// Their option memory, bytes (`SK_MEMINFO_OPTMEM`).
    pub optmem: u64,
    /// What UDP and UDP-Lite sockets hold to send ([`corked`]).
    pub corked: u64,
    /// Sockets listed, as `sockets: used` counts them: connections in
    /// `TIME_WAIT` and requests not yet connected are not sockets there.
    pub sockets: u64,
    /// The inodes of those that have one (a process's descriptor names
    /// it); sockets the kernel made for a listener have none until
    /// accepted.
    pub inodes: HashSet<u64>,
    /// Connections in listeners' accept queues, reset ones included
    /// (those leave the hash: listed nowhere else).
    pub to_accept: u64,
    /// Of those, the ones listed (established or closed by their peer,
    /// with no inode yet).
    pub listed_to_accept: u64,
}

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

    /// The namespace's TCP, UDP and UDP-Lite sockets of the kinds `wanted`
    /// names — by index: TCP, UDP, UDP-Lite, IPv4 then IPv6 — (`None`
    /// when the kernel did not answer).
    pub fn dump(&self, wanted: impl Fn(usize) -> bool) -> Option<Dump> {
        let mut found = Dump::default();
        let kinds = [libc::AF_INET, libc::AF_INET6]
            .into_iter()
            .flat_map(|f| [libc::IPPROTO_TCP, libc::IPPROTO_UDP, libc::IPPROTO_UDPLITE].map(|p| (f, p)));
        for (i, (family, protocol)) in kinds.enumerate() {
            if wanted(i) {
                self.dump_one(family as u8, protocol as u8, &mut found)?;
            }
        }
        Some(found)
    }

    fn dump_one(&self, family: u8, protocol: u8, found: &mut Dump) -> Option<()> {
        const LEN: usize = 16 + 56;
        let mut req = [0u8; LEN];
        req[0..4].copy_from_slice(&(LEN as u32).to_ne_bytes());
        req[4..6].copy_from_slice(&SOCK_DIAG_BY_FAMILY.to_ne_bytes());
        req[6..8].copy_from_slice(&((libc::NLM_F_REQUEST | libc::NLM_F_DUMP) as u16).to_ne_bytes());
        // inet_diag_req_v2: family, protocol, extensions, pad, states, id.
        req[16] = family;
        req[17] = protocol;
        req[18] = 1 << (INET_DIAG_SKMEMINFO - 1);
        req[20..24].copy_from_slice(&u32::MAX.to_ne_bytes());
        // SAFETY: sends our buffer on our socket (to the kernel: no address).
        if unsafe { libc::send(self.fd.as_raw_fd(), req.as_ptr().cast(), req.len(), 0) } != req.len() as isize {
            return None;
        }
        let mut buf = vec![0u8; 64 << 10];
        loop {
            // SAFETY: receives into our buffer, within its length.
            let n = unsafe { libc::recv(self.fd.as_raw_fd(), buf.as_mut_ptr().cast(), buf.len(), 0) };
            if n <= 0 {
                return None;
            }
            match read_into(&buf[..n as usize], protocol as i32 != libc::IPPROTO_TCP, found) {
                Part::More => {}
                Part::Done => return Some(()),
                Part::Failed => return None,
            }
        }
    }
}

/// What a UDP or UDP-Lite socket whose write allocation is `wmem` holds
/// to send: a datagram corked (`MSG_MORE`, `UDP_CORK`) waits in its write
/// queue, charged to no memory cgroup (a red team held 990 MiB so under
/// 64 MiB). Pages its one-byte fragments keep whole (32 KiB for each byte
/// `wmem` counts) are counted with the machine's unaccounted memory
/// (`sockmem`): counted here at 17 pages a socket, 110 sockets each
/// corking 100 bytes had a benign program killed.
pub fn corked(wmem: u64) -> u64 {
    wmem
}

enum Part {
    More,
    Done,
    Failed,
}

/// `TCP_TIME_WAIT` and `TCP_NEW_SYN_RECV`: listed, but not sockets.
const NOT_SOCKETS: [u8; 2] = [6, 12];
const LISTEN: u8 = 10;
/// `TCP_ESTABLISHED` and `TCP_CLOSE_WAIT`: without an inode, connections
/// waiting to be accepted (closed ones without are orphans, closing).
const WAITING: [u8; 2] = [1, 8];

/// Adds the sockets among one read's messages to `found`.
fn read_into(mut b: &[u8], udp: bool, found: &mut Dump) -> Part {
    let u32_at = |b: &[u8], at: usize| b.get(at..at + 4).map_or(0, |v| u32::from_ne_bytes([v[0], v[1], v[2], v[3]]));
    while b.len() >= 16 {
        let len = u32_at(b, 0) as usize;
        let kind = u16::from_ne_bytes([b[4], b[5]]);
        if len < 16 || len > b.len() {
            return Part::Failed;
        }
        match kind as i32 {
            libc::NLMSG_DONE => return Part::Done,
            libc::NLMSG_ERROR => return Part::Failed,
            _ if len >= 16 + MSG_LEN => {
                let state = b[17];
                if !NOT_SOCKETS.contains(&state) {
                    found.sockets += 1;
                    // The last field of the message.
                    match u32_at(b, 16 + MSG_LEN - 4) {
                        0 if WAITING.contains(&state) => found.listed_to_accept += 1,
                        0 => {}
                        inode => _ = found.inodes.insert(u64::from(inode)),
                    }
                }
                if state == LISTEN {
                    // `idiag_rqueue`: a listener's accept queue.
                    found.to_accept += u64::from(u32_at(b, 16 + 56));
                }
                // Attributes after the message, each 4-aligned.
                let mut a = &b[16 + MSG_LEN..len];
                while a.len() >= 4 {
                    let alen = u16::from_ne_bytes([a[0], a[1]]) as usize;
                    let atype = u16::from_ne_bytes([a[2], a[3]]);
                    if alen < 4 || alen > a.len() {
                        break;
                    }
                    if atype == INET_DIAG_SKMEMINFO {
                        // SK_MEMINFO_RMEM_ALLOC, the first slot.
                        found.received = found.received.saturating_add(u64::from(u32_at(&a[4..alen], 0)));
                        found.optmem = found.optmem.saturating_add(u64::from(u32_at(&a[4..alen], 4 * 6)));
                        if udp {
                            // SK_MEMINFO_WMEM_ALLOC.
                            found.corked = found.corked.saturating_add(corked(u64::from(u32_at(&a[4..alen], 4 * 2))));
                        }
                    }
                    a = &a[((alen + 3) & !3).min(a.len())..];
                }
            }
            _ => {}
        }
        b = &b[((len + 3) & !3).min(b.len())..];
    }
    Part::More
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Datagrams a socket never reads are found, in the namespace the
    /// diag socket was opened in.
    #[test]
    fn what_sockets_hold_received_is_found() {
        let diag = Diag::open_here().expect("a sock_diag socket");
        let before = diag.dump(|_| true).expect("the kernel answers");
        let r = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
        let s = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
        for _ in 0..20 {
            s.send_to(&[1u8; 8000], r.local_addr().unwrap()).unwrap();
        }
        let after = diag.dump(|_| true).unwrap();
        assert!(after.received >= before.received + 20 * 8000, "{after:?}, before {before:?}");
        // Each socket listed with its inode (other tests' sockets come and go).
        use std::os::fd::AsRawFd;
        use std::os::unix::fs::MetadataExt;
        for sock in [r.as_raw_fd(), s.as_raw_fd()] {
            let inode = std::fs::metadata(format!("/proc/self/fd/{sock}")).unwrap().ino();
            assert!(after.inodes.contains(&inode), "{inode} not in {:?}", after.inodes);
        }
        assert!(after.sockets >= after.inodes.len() as u64);
    }
}
