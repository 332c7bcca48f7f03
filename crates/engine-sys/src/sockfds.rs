//! What the IP sockets a network namespace's processes hold by descriptor
//! keep received, for the sockets no socket dump lists.
//!
//! A TCP socket that was reset or never connected, and a UDP socket that
//! was disconnected, leave the kernel's connection hash (and its `inuse`
//! count) while their descriptor stays open — and keep their error queue:
//! one reset socket kept 8 MiB of transmit timestamps asked per message,
//! charged to no memory cgroup. Each such descriptor is fetched with
//! `pidfd_getfd` (engine is root outside the test's user namespace) and
//! asked `SO_MEMINFO`: its receive allocation, which includes the error
//! queue, and its option memory (keys, multicast memberships, filters:
//! charged to no memory cgroup either).
//!
//! Every descriptor table is walked: a process's, and a thread's that is
//! another (one that unshared it, or every thread once the process's first
//! thread exited — its own table is gone then). The walk stops at a
//! deadline: a test can give its processes descriptors by the hundred
//! thousand (a red team made one look take 1.8 s of CPU, and the watch
//! then waited ten times as long); what it did not reach stays unseen.

use std::collections::HashSet;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::sync::mpsc;
use std::time::Instant;

/// IP sockets found by descriptor, and what they hold.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Found {
    pub sockets: u64,
    /// In their receive and error queues.
    pub bytes: u64,
    /// Their option memory (`SK_MEMINFO_OPTMEM`).
    pub optmem: u64,
    /// What UDP and UDP-Lite ones hold to send ([`crate::sockdiag::corked`]).
    pub corked: u64,
}

/// Walks processes' descriptors; closes what it fetched on a thread of its
/// own.
#[derive(Debug)]
pub struct Walker {
    /// Closing a fetched socket whose owner closed its own meanwhile
    /// releases it here: a TCP socket with `SO_LINGER` and unsent data
    /// would block that close for as long as the test chose, and the watch
    /// must not wait with it.
    closer: mpsc::Sender<OwnedFd>,
}

impl Walker {
    pub fn new() -> Option<Walker> {
        let (closer, fds) = mpsc::channel::<OwnedFd>();
        std::thread::Builder::new().name("socket-close".into()).spawn(move || fds.into_iter().for_each(drop)).ok()?;
        Some(Walker { closer })
    }

    /// The IP sockets the processes `pids` hold by descriptor, each counted
    /// once, leaving out those whose inode is in `listed` (a dump counted
    /// them already); as many as it reaches by `deadline`.
    pub fn unlisted(&self, pids: &[i32], listed: &HashSet<u64>, deadline: Instant) -> Found {
        let mut seen = HashSet::new();
        let mut found = Found::default();
        for (pid, tid) in pids.iter().flat_map(|&pid| tables_of(pid).into_iter().map(move |tid| (pid, tid))) {
            // The pidfd first: the directory read after it is of that same
            // task or of none (a reused id fails to fetch).
            let Some(pidfd) = pidfd_open(tid, tid != pid) else { continue };
            let Ok(fds) = std::fs::read_dir(format!("/proc/{pid}/task/{tid}/fd")) else { continue };
            for e in fds.flatten() {
                if Instant::now() > deadline {
                    return found;
                }
                let Some(fd) = e.file_name().to_str().and_then(|n| n.parse::<i32>().ok()) else { continue };
                let Some(inode) = std::fs::read_link(e.path()).ok().and_then(|l| socket_inode(&l.to_string_lossy()))
                else {
                    continue;
                };
                if listed.contains(&inode) || !seen.insert(inode) {
                    continue;
                }
                let Some(sock) = fetch(&pidfd, fd) else { continue };
                if let Some(held) = ip_held(&sock) {
                    found.sockets += 1;
                    found.bytes = found.bytes.saturating_add(held.received);
                    found.optmem = found.optmem.saturating_add(held.optmem);
                    found.corked = found.corked.saturating_add(held.corked);
                }
                if let Err(e) = self.closer.send(sock) {
                    drop(e.0);
                }
            }
        }
        found
    }
}

/// The threads of process `pid` whose descriptor tables are to be walked:
/// its first thread's, and each other table once (`kcmp` tells tables
/// apart; where it is missing, every thread is walked).
fn tables_of(pid: i32) -> Vec<i32> {
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else { return vec![pid] };
    let mut tids: Vec<i32> =
        tasks.flatten().filter_map(|e| e.file_name().to_str().and_then(|n| n.parse().ok())).collect();
    // The process's own first (its table is most threads' table).
    tids.sort_by_key(|t| (*t != pid, *t));
    let mut walked: Vec<i32> = Vec::new();
    for tid in tids {
        // SAFETY: plain syscall on ids; KCMP_FILES compares two tasks'
        // descriptor tables, 0 meaning the same one.
        let same = |w: i32| unsafe { libc::syscall(libc::SYS_kcmp, w, tid, KCMP_FILES, 0, 0) } == 0;
        if !walked.iter().any(|&w| same(w)) {
            walked.push(tid);
        }
    }
    walked
}

const KCMP_FILES: libc::c_int = 2;
/// `pidfd_open`'s flag for a thread's own pidfd (Linux 6.9).
const PIDFD_THREAD: libc::c_uint = libc::O_EXCL as libc::c_uint;

/// A pidfd of process or thread `id`.
fn pidfd_open(id: i32, thread: bool) -> Option<OwnedFd> {
    // SAFETY: plain syscall; the descriptor it returns is ours alone.
    let fd = unsafe { libc::syscall(libc::SYS_pidfd_open, id, if thread { PIDFD_THREAD } else { 0 }) };
    // SAFETY: a descriptor just returned to us, owned once.
    (fd >= 0).then(|| unsafe { OwnedFd::from_raw_fd(fd as i32) })
}

/// `socket:[INODE]`, as /proc links name a socket.
fn socket_inode(link: &str) -> Option<u64> {
    link.strip_prefix("socket:[")?.strip_suffix(']')?.parse().ok()
}

/// A copy of descriptor `fd` of the process behind `pidfd`.
fn fetch(pidfd: &OwnedFd, fd: i32) -> Option<OwnedFd> {
    // SAFETY: plain syscall; the descriptor it returns is ours alone.
    let got = unsafe { libc::syscall(libc::SYS_pidfd_getfd, pidfd.as_raw_fd(), fd, 0) };
    // SAFETY: a descriptor just returned to us, owned once.
    (got >= 0).then(|| unsafe { OwnedFd::from_raw_fd(got as i32) })
}

/// What one IP socket holds.
struct Held {
    received: u64,
    optmem: u64,
    corked: u64,
}

/// An int socket option of `sock`.
fn int_option(sock: &OwnedFd, option: libc::c_int) -> Option<libc::c_int> {
    let mut value: libc::c_int = 0;
    let mut len = std::mem::size_of::<libc::c_int>() as libc::socklen_t;
    // SAFETY: reads an int into ours, within its length.
    let ok = unsafe { libc::getsockopt(sock.as_raw_fd(), libc::SOL_SOCKET, option, (&raw mut value).cast(), &mut len) };
    (ok == 0).then_some(value)
}

/// What an IPv4 or IPv6 socket holds in its receive and error queues, its
/// option memory and, for UDP, what it holds to send (`None` for other
/// sockets).
fn ip_held(sock: &OwnedFd) -> Option<Held> {
    let domain = int_option(sock, libc::SO_DOMAIN)?;
    if !(domain == libc::AF_INET || domain == libc::AF_INET6) {
        return None;
    }
    let udp = int_option(sock, libc::SO_PROTOCOL).is_some_and(|p| p != libc::IPPROTO_TCP);
    let mut info = [0u32; 9];
    let mut len = std::mem::size_of_val(&info) as libc::socklen_t;
    // SAFETY: the kernel writes at most `len` bytes into ours.
    let ok = unsafe {
        libc::getsockopt(sock.as_raw_fd(), libc::SOL_SOCKET, libc::SO_MEMINFO, info.as_mut_ptr().cast(), &mut len)
    };
    (ok == 0).then(|| Held {
        received: u64::from(info[libc::SK_MEMINFO_RMEM_ALLOC as usize]),
        optmem: u64::from(info[OPTMEM]),
        corked: if udp { crate::sockdiag::corked(u64::from(info[libc::SK_MEMINFO_WMEM_ALLOC as usize])) } else { 0 },
    })
}

/// `SK_MEMINFO_OPTMEM`.
const OPTMEM: usize = 6;

#[cfg(test)]
mod tests {
    use super::*;

    fn far() -> Instant {
        Instant::now() + std::time::Duration::from_secs(60)
    }

    /// A UDP socket holding what it never read is found by its descriptor
    /// in another process, with what it holds; a listed one is left to the
    /// dump that listed it.
    #[test]
    fn sockets_out_of_the_hash_are_found_by_descriptor() {
        use std::os::unix::fs::MetadataExt;
        let walker = Walker::new().unwrap();
        let r = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
        let s = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
        for _ in 0..20 {
            s.send_to(&[1u8; 8000], r.local_addr().unwrap()).unwrap();
        }
        let fd = r.as_raw_fd();
        let inode = std::fs::metadata(format!("/proc/self/fd/{fd}")).unwrap().ino();
        // SAFETY: the child only closes descriptors and waits for its
        // kill, calls safe after fork in a threaded process.
        let child = unsafe { libc::fork() };
        if child == 0 {
            unsafe {
                libc::syscall(libc::SYS_close_range, 3, fd - 1, 0);
                libc::syscall(libc::SYS_close_range, fd + 1, u32::MAX, 0);
                loop {
                    libc::pause();
                }
            }
        }
        // Its descriptor table as the fork left it, then closed down.
        let mut found = Found::default();
        for _ in 0..100 {
            found = walker.unlisted(&[child], &HashSet::new(), far());
            if found.sockets == 1 {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        let rest = walker.unlisted(&[child], &HashSet::from([inode]), far());
        // SAFETY: our child.
        unsafe {
            libc::kill(child, libc::SIGKILL);
            libc::waitpid(child, std::ptr::null_mut(), 0);
        }
        assert_eq!(found.sockets, 1, "{found:?}");
        assert!(found.bytes >= 20 * 8000, "{found:?}");
        assert_eq!(rest, Found::default());
        assert_eq!(socket_inode("socket:[42]"), Some(42));
        assert_eq!(socket_inode("pipe:[42]"), None);
    }
}
