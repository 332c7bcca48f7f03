//! Kernel memory a test holds through its sockets that its memory
//! cgroup's limit does not stop:
//! - netlink sockets, which no memory cgroup is charged for: replies the
//!   kernel queues on a netlink socket that never reads them, each socket
//!   up to twice `net.core.rmem_max`, as many sockets as descriptors. A red
//!   team held 519 MiB of them under a 64 MiB limit. Read from the test's
//!   own network namespace's `/proc/net/netlink`, opened once from inside
//!   it (a `/proc/net` file keeps showing the namespace it was opened in):
//!   `Rmem` and `Wmem`, the sockets' queued bytes as the kernel allocated
//!   them, and each socket's own object.
//! - TCP, UDP, UDP-Lite and MPTCP buffers where memory is cgroup v1: there
//!   the kernel charges them to a counter of their own,
//!   `memory.kmem.tcp.usage_in_bytes`, outside `memory.usage_in_bytes`
//!   and its limit (the cgroup's `memory.kmem.tcp.limit_in_bytes`, which
//!   [`crate::cgroup`] sets to the test's limit, makes the kernel count them
//!   and refuse most growth past it on its own). Under v2 they are part of
//!   `memory.current` and its limit already.
//! - TCP connections made for the test's listeners that none of its
//!   processes accepted: the kernel made them, so no cgroup is charged
//!   until they are accepted, and what their peers sent waits in them —
//!   reset ones even leave the connection hash, so no socket dump lists
//!   them (a red team held 768 MiB so under 64 MiB), nor their own
//!   objects (1 GiB of reset ones that sent nothing). Counted as what the
//!   machine's TCP and UDP memory (`/proc/net/sockstat`) grew by since the
//!   test began beyond what cgroups are charged for, and 3 KiB for each
//!   TCP socket the machine gained — while the test has a TCP socket of
//!   its own: growth of the host's sockets meanwhile counts as its then.
//! - Receive and error queues of the test's IP sockets: an error queue
//!   (transmit timestamps and the like) is charged to its socket alone.
//!   Asked only when the namespace's IP sockets (`sockets: used` less its
//!   Unix and netlink ones, `/proc/net/protocols`: every socket, whether
//!   in the connection hash or not) could hold more than the room: of
//!   the kernel for those in its connection hash ([`crate::sockdiag`]),
//!   of each one a process of the test holds by descriptor for the rest
//!   ([`crate::sockfds`]: reset, unconnected, disconnected). Sockets in
//!   neither, nor waiting in a listener's accept queue — in flight in a
//!   Unix socket's queue — are counted at the most one can hold once
//!   they stay unseen for two seconds of looks (sockets closing while a
//!   look runs are unseen for a look; a worker takes a socket handed to it
//!   in a while), and the kernel is asked to collect Unix
//!   garbage.
//! - Option memory of the same sockets (TCP MD5 keys, multicast
//!   memberships, socket filters: `sock_kmalloc`, charged to no memory
//!   cgroup; a red team held 881 MiB of MD5 keys under 64 MiB), read with
//!   their queues and counted at [`OPTMEM_TAKES`] times; and what a
//!   corked UDP datagram holds to send (its write allocation).
//! - Pages sent data is copied into (each sending thread's 32 KiB page
//!   fragments), charged to no memory cgroup: a send queue or a corked
//!   datagram of one-byte fragments keeps a whole page for each byte (a
//!   red team held 3 GiB so in one TCP socket under 64 MiB, charged 4 MiB).
//!   No count per socket shows them; while the test has an IP socket, what
//!   the machine's kernel holds beyond every kind `/proc/meminfo` names
//!   grew by since the test began counts (the CPUs' own free lists left
//!   out), less the socket buffers' growth, the test's charged kernel
//!   memory and 128 MiB for its own movement — the host's kernel growing
//!   meanwhile counts against such a test too.
//!
//! What the sockets hold and the test's working set (its memory cgroup's
//! use less the page cache the kernel would reclaim) may not pass
//! the test's memory limit: over it, every process of the test is killed,
//! and again whenever a later command of the test passes it. Read every
//! 50 ms, every 10 ms once the sockets hold a quarter of what is left
//! (~30 µs a look with a few sockets), and never more than a tenth of a
//! core: a look that took long waits ten times as long — a walk of the
//! test's descriptors apart, which keeps a tenth of its own and a
//! deadline (the rest of the looks go on between walks).

use std::fs::File;
use std::os::unix::fs::FileExt;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

const EVERY: Duration = Duration::from_millis(50);
const CLOSE: Duration = Duration::from_millis(10);
/// Most of the table read per look (~2,800 sockets): past it, the test
/// counts as over. The kernel gives the table ~4 KiB a read and finds its
/// place again from the start of the machine's netlink hash each time, so
/// a look costs the square of the sockets: 20,000 idle ones made a look
/// take 0.2 s, and a red team filled 887 MiB under 64 MiB in between.
const MOST: usize = 256 << 10;
/// What option memory a socket counts (`SK_MEMINFO_OPTMEM`) takes of the
/// kernel's, at most: TCP MD5 keys take 1.4 times what they count, IPv6
/// multicast memberships 3.1 times (each group's entry on the device is
/// not counted); a red team held 881 MiB so under a 64 MiB limit.
const OPTMEM_TAKES: u64 = 4;
/// How long sockets stay unseen before they count at the most one can
/// hold: a socket handed to a worker over a Unix socket is in flight until
/// the worker takes it (a red team's benign example waited a second: two
/// sockets then counted 65 MiB, over a 64 MiB limit). A socket in flight
/// takes nothing new (no process can send on it, and one out of the
/// connection hash receives nothing): what a test gains by the wait is what
/// it filled and passed between two looks, for two seconds.
const UNSEEN_FOR: Duration = Duration::from_secs(2);
/// What the machine's unaccounted kernel memory may grow by during a test
/// with sockets before it counts as the test's: it moves by tens of MiB
/// on its own (40 MiB in 5 s, measured idle here, the CPUs' free lists
/// left out).
const UNACCOUNTED_SLACK: u64 = 128 << 20;
/// Longest a look walks the test's descriptors.
const WALK: Duration = Duration::from_millis(20);
/// Each netlink socket's own kernel object (`netlink_sock`, ~2 KiB),
/// charged to no memory cgroup either.
const PER_SOCKET: u64 = 2048;

/// The netlink table of one network namespace, the memory cgroup's count
/// of its sockets' buffers, and the machine's socket memory.
#[derive(Debug)]
pub struct Tables {
    netlink: Option<File>,
    charged: Option<Charged>,
    sockstat: Option<File>,
    /// The namespace's `/proc/net/sockstat6`: its IPv6 sockets.
    sockstat6: Option<File>,
    /// `/proc/meminfo`, and what [`unexplained`] read of it at the start.
    meminfo: Option<File>,
    /// `/proc/zoneinfo`: the per-CPU lists of free pages.
    zoneinfo: Option<File>,
    base_unexplained: Option<u64>,
    /// The test's charged kernel memory, and what it was at the start.
    kmem: Option<(Source, u64)>,
    /// The machine's socket memory when the tables were opened.
    base: Machine,
    /// The namespace's sock_diag, for receive and error queues.
    diag: Option<crate::sockdiag::Diag>,
    /// Most one IP socket may hold received, bytes.
    per_socket: u64,
    /// The namespace's `/proc/net/protocols`: its sockets of each kind.
    protocols: Option<File>,
    /// The namespace's inode, to find its processes by.
    netns: u64,
    /// Fetches the test's sockets by descriptor.
    walker: Option<crate::sockfds::Walker>,
    /// IP sockets the last looks found neither listed nor held (newest
    /// last).
    unseen: std::collections::VecDeque<(Instant, u64)>,
    /// The last walk of the test's descriptors.
    walked: Option<Walked>,
    /// What walking took in the latest look.
    walk_took: Duration,
}

#[derive(Debug)]
struct Walked {
    at: Instant,
    took: Duration,
    found: crate::sockfds::Found,
}

/// The machine's sockets, from `/proc/net/sockstat` (machine-wide
/// whichever namespace reads it).
#[derive(Debug, Clone, Copy, Default)]
struct Machine {
    /// TCP and UDP buffers, bytes (`mem` of `TCP:` and `UDP:`, pages).
    buffers: u64,
    /// TCP sockets allocated (`alloc` of `TCP:`).
    tcp_sockets: u64,
    /// The namespace's own TCP sockets in the connection hash, IPv4 and
    /// IPv6 (`inuse` of `TCP:` and of `sockstat6`'s `TCP6:`: per
    /// namespace).
    tcp_here: u64,
    /// The namespace's own IP sockets in the hash, by kind: TCP, UDP and
    /// UDP-Lite, IPv4 then IPv6 (`inuse`).
    hashed: [u64; 6],
    /// The namespace's sockets of every family, hashed or not, in flight
    /// or not (`sockets: used`).
    sockets_here: u64,
}

/// What memory cgroups are charged for their sockets' buffers: the test's
/// and, where it reads, the whole machine's (the root cgroup's).
#[derive(Debug)]
struct Charged {
    own: Source,
    machine: Option<(Source, u64)>,
    /// v1 keeps them apart from the cgroup's use; v2 counts them in it.
    apart: bool,
}

#[derive(Debug)]
enum Source {
    /// v1's `memory.kmem.tcp.usage_in_bytes`.
    Counter(File),
    /// A field of v2's `memory.stat` (`sock`, `kernel`).
    Stat(std::path::PathBuf, &'static str),
}

impl Source {
    fn read(&self) -> u64 {
        match self {
            Source::Counter(f) => read_number(f),
            Source::Stat(p, field) => stat_field(p, field).unwrap_or(0),
        }
    }
}

impl Tables {
    /// Opens the tables of the network namespace the calling thread is in.
    pub fn open_here() -> Tables {
        let sockstat = File::open("/proc/thread-self/net/sockstat").ok();
        let sockstat6 = File::open("/proc/thread-self/net/sockstat6").ok();
        let meminfo = File::open("/proc/meminfo").ok();
        let zoneinfo = File::open("/proc/zoneinfo").ok();
        let base = sockstat.as_ref().and_then(|f| machine(f, sockstat6.as_ref())).unwrap_or_default();
        let sysctl = |p: &str| std::fs::read_to_string(p).ok()?.split_whitespace().last()?.parse::<u64>().ok();
        // SO_RCVBUF doubles what it is given, up to rmem_max; TCP grows its
        // own up to tcp_rmem's last figure. Unreadable: as if unbounded.
        // And its option memory, up to optmem_max (the namespace's), and a
        // corked datagram.
        let per_socket = match (
            sysctl("/proc/sys/net/core/rmem_max"),
            sysctl("/proc/sys/net/ipv4/tcp_rmem"),
            sysctl("/proc/sys/net/core/optmem_max"),
        ) {
            (Some(r), Some(t), Some(o)) => {
                (2 * r).max(t) + (64 << 10) + OPTMEM_TAKES * o + crate::sockdiag::corked(64 << 10) + (64 << 10)
            }
            _ => u64::MAX,
        };
        use std::os::unix::fs::MetadataExt;
        Tables {
            netlink: File::open("/proc/thread-self/net/netlink").ok(),
            charged: None,
            sockstat,
            sockstat6,
            base_unexplained: meminfo.as_ref().and_then(|m| unexplained(m, zoneinfo.as_ref())),
            meminfo,
            zoneinfo,
            kmem: None,
            base,
            diag: crate::sockdiag::Diag::open_here(),
            per_socket,
            protocols: File::open("/proc/thread-self/net/protocols").ok(),
            netns: std::fs::metadata("/proc/thread-self/ns/net").map_or(0, |m| m.ino()),
            walker: crate::sockfds::Walker::new(),
            unseen: std::collections::VecDeque::new(),
            walked: None,
            walk_took: Duration::ZERO,
        }
    }

    /// Counts the socket buffers memory cgroup `memcg` is charged for
    /// (added where v1 keeps them apart from its use), and takes what any
    /// cgroup of the machine is charged for off the machine's growth.
    pub fn with_charged(mut self, memcg: &std::path::Path) -> Tables {
        let v1 = "memory.kmem.tcp.usage_in_bytes";
        let root = |file: &str| memcg.ancestors().take_while(|d| d.join(file).exists()).last().map(|d| d.join(file));
        self.charged = if let Ok(f) = File::open(memcg.join(v1)) {
            let machine = root(v1).and_then(|p| File::open(p).ok()).map(Source::Counter);
            Some(Charged { own: Source::Counter(f), machine: machine.map(with_base), apart: true })
        } else if memcg.join("memory.current").exists() {
            let machine =
                root("memory.stat").filter(|p| stat_field(p, "sock").is_some()).map(|p| Source::Stat(p, "sock"));
            Some(Charged {
                own: Source::Stat(memcg.join("memory.stat"), "sock"),
                machine: machine.map(with_base),
                apart: false,
            })
        } else {
            None
        };
        // The test's kernel memory its cgroup is charged for (pipe buffers,
        // Unix socket queues: off every LRU list, so in the machine's
        // unaccounted memory too, and in the test's use already).
        let kmem = if let Ok(f) = File::open(memcg.join("memory.kmem.usage_in_bytes")) {
            Some(Source::Counter(f))
        } else {
            Some(memcg.join("memory.stat"))
                .filter(|p| stat_field(p, "kernel").is_some())
                .map(|p| Source::Stat(p, "kernel"))
        };
        self.kmem = kmem.map(with_base);
        self
    }

    /// Bytes the test's sockets hold beyond its memory cgroup's use: the
    /// netlink sockets' queues and objects ([`TOO_MANY`] when the table is
    /// past [`MOST`] bytes), the buffers v1 counts apart, what the
    /// machine's TCP and UDP buffers grew by since the tables were opened
    /// beyond what cgroups are charged for, and [`PER_TCP_SOCKET`] for each
    /// TCP socket the machine gained — connections the kernel made for the
    /// test's listeners are charged to no cgroup until accepted, their
    /// objects nor what their peers sent — and, when the namespace's
    /// sockets could hold more than `room` less all that, what its IP
    /// sockets hold received (see the module's text).
    pub fn held(&mut self, room: u64) -> u64 {
        let now = self.machine().unwrap_or(self.base);
        let grown = now.buffers as i128 - self.base.buffers as i128;
        let (own, apart, charged_grown) = match &self.charged {
            None => (0, false, 0),
            Some(c) => {
                let own = c.own.read();
                let grown = match &c.machine {
                    Some((m, base)) => m.read() as i128 - *base as i128,
                    None => own as i128,
                };
                (own, c.apart, grown)
            }
        };
        let netlink = self.netlink();
        let mut held = netlink.saturating_add(if apart { own } else { 0 });
        // Only a test with a TCP socket (a listener) can have connections
        // made for it: a test without one is not blamed for the host's.
        if now.tcp_here > 0 {
            let uncharged = u64::try_from((grown - charged_grown).max(0)).unwrap_or(u64::MAX);
            let objects = now.tcp_sockets.saturating_sub(self.base.tcp_sockets).saturating_mul(PER_TCP_SOCKET);
            held = held.saturating_add(uncharged).saturating_add(objects);
        }
        if self.has_ip(&now) {
            held = held.saturating_add(self.unaccounted(&now, netlink));
        }
        // Receive and error queues, asked only when the namespace's
        // sockets could hold more than is left.
        let left = room.saturating_sub(held);
        held.saturating_add(self.queued(now, left))
    }

    fn machine(&self) -> Option<Machine> {
        machine(self.sockstat.as_ref()?, self.sockstat6.as_ref())
    }

    /// Whether the namespace has an IP socket, in the hash or not.
    fn has_ip(&self, now: &Machine) -> bool {
        now.hashed.iter().sum::<u64>() > 0 || (now.sockets_here > 0 && now.sockets_here > self.not_ip())
    }

    /// What the machine's kernel holds beyond every count it keeps (see
    /// [`unexplained`]) more than when the tables were opened, less what
    /// the TCP and UDP buffers and the test's netlink queues grew by, past
    /// [`UNACCOUNTED_SLACK`]: the pages a sending thread's data is copied
    /// into (32 KiB each) are charged to no memory cgroup, and a send queue
    /// or corked datagram of one-byte fragments keeps a page for each byte
    /// (a red team held 3 GiB so in one TCP socket under 64 MiB, its
    /// memory cgroup and the machine's TCP memory charged 4 MiB).
    fn unaccounted(&self, now: &Machine, netlink: u64) -> u64 {
        let (Some(f), Some(base)) = (&self.meminfo, self.base_unexplained) else { return 0 };
        let Some(unexplained) = unexplained(f, self.zoneinfo.as_ref()) else { return 0 };
        let buffers = now.buffers as i128 - self.base.buffers as i128;
        let charged = self.kmem.as_ref().map_or(0, |(s, base)| s.read() as i128 - *base as i128).max(0);
        let grown =
            unexplained as i128 - base as i128 - buffers - charged - netlink as i128 - UNACCOUNTED_SLACK as i128;
        u64::try_from(grown.max(0)).unwrap_or(0)
    }

    /// What the namespace's IP sockets hold in receive and error queues,
    /// `now` its sockets.
    fn queued(&mut self, now: Machine, left: u64) -> u64 {
        let used = now.sockets_here.max(now.hashed.iter().sum());
        let ip = if used.saturating_mul(self.per_socket) > left { used.saturating_sub(self.not_ip()) } else { 0 };
        if ip.saturating_mul(self.per_socket) <= left {
            self.unseen_for(0);
            return 0;
        }
        // Only the kinds the namespace has in the hash: each dump walks the
        // machine's whole table (a millisecond or so here, loaded).
        let Some(dump) = self.diag.as_ref().and_then(|d| d.dump(|kind| now.hashed[kind] > 0)) else {
            return TOO_MANY;
        };
        // Reset connections waiting to be accepted are out of the hash, and
        // hold no error queue (no process ever sent on them): what they
        // hold is in the machine's growth above.
        let reset_to_accept = dump.to_accept.saturating_sub(dump.listed_to_accept);
        let listed = dump.sockets.saturating_add(reset_to_accept);
        // Descriptors are walked only when some socket is out of the lists
        // (a server whose sockets are all connected costs one dump).
        // A walk takes at most a tenth of the time as well, apart from the
        // looks: a test can make every walk take its deadline (descriptors
        // by the hundred thousand), and the rest of a look must not wait
        // with it. Between walks, the last walk's figures stand.
        self.walk_took = Duration::ZERO;
        let due = self.walked.as_ref().is_none_or(|w| w.at.elapsed() >= w.took * 10);
        let (held, fresh) = match &self.walker {
            Some(w) if ip > listed && due => {
                let at = Instant::now();
                let found = w.unlisted(&crate::space::in_netns(self.netns), &dump.inodes, at + WALK);
                self.walk_took = at.elapsed();
                self.walked = Some(Walked { at, took: self.walk_took, found });
                (found, true)
            }
            Some(_) if ip > listed => (self.walked.as_ref().map(|w| w.found).unwrap_or_default(), false),
            _ => (crate::sockfds::Found::default(), true),
        };
        // Counted again after the look: a socket closed meanwhile is in
        // the first count and in neither list.
        let after = self.machine().map_or(used, |m| m.sockets_here);
        let ip = ip.min(after.saturating_sub(self.not_ip()));
        let seen = listed.saturating_add(held.sockets);
        let unseen = if fresh { self.unseen_for(ip.saturating_sub(seen)) } else { self.lasting_unseen() };
        if unseen > 0 {
            collect_unix_garbage();
        }
        let optmem = dump.optmem.saturating_add(held.optmem).saturating_mul(OPTMEM_TAKES);
        dump.received
            .saturating_add(held.bytes)
            .saturating_add(dump.corked)
            .saturating_add(held.corked)
            .saturating_add(optmem)
            .saturating_add(unseen.saturating_mul(self.per_socket))
    }

    /// Records `now` unseen sockets; what stayed unseen [`UNSEEN_FOR`].
    fn unseen_for(&mut self, now: u64) -> u64 {
        let at = Instant::now();
        self.unseen.push_back((at, now));
        // One look older than the span is kept: it says the span is covered.
        while self.unseen.get(1).is_some_and(|(t, _)| at.duration_since(*t) >= UNSEEN_FOR) {
            self.unseen.pop_front();
        }
        self.lasting_unseen()
    }

    /// The fewest unseen sockets of the looks over the last [`UNSEEN_FOR`]
    /// (none before the looks span it).
    fn lasting_unseen(&self) -> u64 {
        match self.unseen.front() {
            Some((t, _)) if t.elapsed() >= UNSEEN_FOR => self.unseen.iter().map(|(_, n)| *n).min().unwrap_or(0),
            _ => 0,
        }
    }

    /// The namespace's Unix and netlink sockets (`/proc/net/protocols`
    /// counts every one of theirs, where it counts IP sockets only while
    /// they are in the connection hash).
    fn not_ip(&self) -> u64 {
        let Some(text) = self.protocols.as_ref().and_then(read_all) else { return 0 };
        // protocol size sockets memory ...
        text.lines()
            .skip(1)
            .filter_map(|l| {
                let mut f = l.split_whitespace();
                let name = f.next()?;
                let n = f.nth(1)?.parse::<u64>().ok()?;
                (name.starts_with("UNIX") || name == "NETLINK").then_some(n)
            })
            .sum()
    }

    fn netlink(&self) -> u64 {
        let Some(f) = &self.netlink else { return 0 };
        let Some(text) = read_all(f) else { return TOO_MANY };
        let mut total = 0u64;
        // sk Eth Pid Groups Rmem Wmem Dump Locks Drops Inode
        for l in text.lines().skip(1) {
            let f: Vec<&str> = l.split_whitespace().collect();
            let n = |i: usize| f.get(i).and_then(|v| v.parse::<u64>().ok()).unwrap_or(0);
            total = total.saturating_add(n(4)).saturating_add(n(5)).saturating_add(PER_SOCKET);
        }
        total
    }
}

/// A source and what it reads now.
fn with_base(s: Source) -> (Source, u64) {
    let base = s.read();
    (s, base)
}

fn read_number(f: &File) -> u64 {
    let mut buf = [0u8; 32];
    let n = f.read_at(&mut buf, 0).unwrap_or(0);
    std::str::from_utf8(&buf[..n]).ok().and_then(|t| t.trim().parse().ok()).unwrap_or(0)
}

fn stat_field(stat: &std::path::Path, key: &str) -> Option<u64> {
    let text = std::fs::read_to_string(stat).ok()?;
    text.lines().find_map(|l| l.strip_prefix(key)?.strip_prefix(' ')?.trim().parse().ok())
}

/// The machine's sockets now, and the namespace's, from its `sockstat`
/// and `sockstat6`.
fn machine(sockstat: &File, sockstat6: Option<&File>) -> Option<Machine> {
    let read = |f: &File| -> Option<String> {
        let mut buf = [0u8; 2048];
        let n = f.read_at(&mut buf, 0).ok()?;
        Some(String::from_utf8_lossy(&buf[..n]).into_owned())
    };
    let text = read(sockstat)?;
    let text6 = sockstat6.and_then(read).unwrap_or_default();
    let field = |text: &str, proto: &str, name: &str| {
        let l = text.lines().find_map(|l| l.strip_prefix(proto))?;
        l.split_whitespace().skip_while(|w| *w != name).nth(1)?.parse::<u64>().ok()
    };
    let pages = field(&text, "TCP: ", "mem")? + field(&text, "UDP: ", "mem").unwrap_or(0);
    let mut hashed = [0u64; 6];
    for (i, (t, proto)) in [(&text, "TCP: "), (&text, "UDP: "), (&text, "UDPLITE: ")]
        .into_iter()
        .chain([(&text6, "TCP6: "), (&text6, "UDP6: "), (&text6, "UDPLITE6: ")])
        .enumerate()
    {
        hashed[i] = field(t, proto, "inuse").unwrap_or(0);
    }
    let sockets_here = text
        .lines()
        .find_map(|l| l.strip_prefix("sockets: used "))
        .and_then(|n| n.trim().parse::<u64>().ok())
        .unwrap_or(0);
    Some(Machine {
        buffers: pages.saturating_mul(4096),
        tcp_sockets: field(&text, "TCP: ", "alloc").unwrap_or(0),
        tcp_here: hashed[0] + hashed[3],
        hashed,
        sockets_here,
    })
}

/// The machine's memory in use that `/proc/meminfo` puts in none of its
/// kinds, bytes: not free, not on an LRU list (anonymous, file, shared,
/// unevictable), not slab, kernel stacks, page tables, per-CPU areas,
/// huge pages or vmalloc — the kernel's own image and page structures,
/// and pages allocated outright, such as those sockets copy sent data into.
fn unexplained(meminfo: &File, zoneinfo: Option<&File>) -> Option<u64> {
    let mut buf = [0u8; 8192];
    let n = meminfo.read_at(&mut buf, 0).ok()?;
    let text = std::str::from_utf8(&buf[..n]).ok()?;
    let kib = |key: &str| -> u64 {
        text.lines()
            .find_map(|l| l.strip_prefix(key)?.strip_prefix(':'))
            .and_then(|v| v.split_whitespace().next()?.parse().ok())
            .unwrap_or(0)
    };
    let used = kib("MemTotal").checked_sub(kib("MemFree"))?;
    let kinds = ["Active", "Inactive", "Unevictable", "Slab", "KernelStack", "PageTables", "SecPageTables", "Percpu"]
        .iter()
        .chain(&["Hugetlb", "VmallocUsed", "Balloon"])
        .map(|k| kib(k))
        .sum::<u64>()
        + kib("KReclaimable").saturating_sub(kib("SReclaimable"));
    // Free pages on the CPUs' own lists are not in MemFree: a host that
    // freed 1.5 GiB left 1.2 GiB on one CPU's list, draining at 10 MiB/s
    // (a red team had a benign test killed so, and drew pages for a pin
    // from such a list without the sum moving).
    let pcp = zoneinfo.and_then(per_cpu_free).unwrap_or(0);
    Some(used.saturating_sub(kinds).saturating_mul(1024).saturating_sub(pcp))
}

/// Bytes of free pages on the CPUs' own lists (`count:` of each zone's
/// `pagesets` in `/proc/zoneinfo`, pages).
fn per_cpu_free(zoneinfo: &File) -> Option<u64> {
    let text = read_all(zoneinfo)?;
    let pages: u64 = text
        .lines()
        .filter_map(|l| l.trim_start().strip_prefix("count:"))
        .filter_map(|v| v.trim().parse::<u64>().ok())
        .sum();
    Some(pages.saturating_mul(4096))
}

/// What one TCP socket the kernel made for a listener takes, bytes: its
/// `tcp_sock` (2,368 bytes here) and a share of its slab page. A test's own
/// sockets count twice (their objects are in its cgroup's use too): 3 KiB
/// more each, which a limit notices only with sockets by the ten thousand.
const PER_TCP_SOCKET: u64 = 3 << 10;

/// Has the kernel collect unreachable Unix sockets: descriptors in flight
/// in a cycle of Unix sockets (each sent over the other, then closed) keep
/// everything they name alive — listeners with thousands of connections a
/// red team left so after its test ended — until some process closes a
/// Unix socket while descriptors are in flight, which is what this does.
pub fn collect_unix_garbage() {
    let mut fds = [0i32; 2];
    // SAFETY: plain calls on descriptors we own and close; the message
    // carries one descriptor in a buffer sized for it.
    unsafe {
        if libc::socketpair(libc::AF_UNIX, libc::SOCK_DGRAM | libc::SOCK_CLOEXEC, 0, fds.as_mut_ptr()) != 0 {
            return;
        }
        // u64s: aligned for the control header.
        let mut space = [0u64; 8];
        let mut byte = [0u8; 1];
        let mut iov = libc::iovec { iov_base: byte.as_mut_ptr().cast(), iov_len: 1 };
        let mut msg: libc::msghdr = std::mem::zeroed();
        msg.msg_iov = &mut iov;
        msg.msg_iovlen = 1;
        msg.msg_control = space.as_mut_ptr().cast();
        msg.msg_controllen = libc::CMSG_SPACE(std::mem::size_of::<i32>() as u32) as usize;
        let cmsg = libc::CMSG_FIRSTHDR(&msg);
        (*cmsg).cmsg_level = libc::SOL_SOCKET;
        (*cmsg).cmsg_type = libc::SCM_RIGHTS;
        (*cmsg).cmsg_len = libc::CMSG_LEN(std::mem::size_of::<i32>() as u32) as usize;
        std::ptr::write_unaligned(libc::CMSG_DATA(cmsg).cast::<i32>(), fds[0]);
        libc::sendmsg(fds[1], &msg, 0);
        libc::close(fds[0]);
        libc::close(fds[1]);
    }
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

/// What [`Tables::held`] says of more sockets than it reads.
pub const TOO_MANY: u64 = u64::MAX;

/// A running watch; stops when dropped.
pub struct Watch {
    /// Dropped to stop it: wakes it at once from its pause (a pause is up
    /// to ten times a look, which a test can make long).
    stop: Option<std::sync::mpsc::Sender<()>>,
    /// What the sockets held when it last stopped the test (0: never).
    tripped: Arc<AtomicU64>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Watch {
    /// Watches `tables` against `limit` bytes together with the memory
    /// `used()` says the test takes; over it, `stop_test()`.
    pub fn start(
        tables: Tables,
        limit: u64,
        used: impl Fn() -> u64 + Send + 'static,
        stop_test: impl Fn() + Send + 'static,
    ) -> Option<Watch> {
        let (stop, stopped) = std::sync::mpsc::channel::<()>();
        let tripped = Arc::new(AtomicU64::new(0));
        let t = tripped.clone();
        let thread = std::thread::Builder::new()
            .name("socket-watch".into())
            .spawn(move || {
                let mut tables = tables;
                loop {
                    let look = std::time::Instant::now();
                    let room = limit.saturating_sub(used());
                    let held = tables.held(room);
                    if held > room {
                        // Said before the kill: whoever sees the test die
                        // asks why at once.
                        t.store(held, Ordering::SeqCst);
                        stop_test();
                    }
                    // At most a tenth of a core, whatever the test makes a
                    // look cost (sockets it holds by the thousand).
                    // A walk of descriptors keeps its own tenth (above).
                    let pause = if held > room / 4 { CLOSE } else { EVERY };
                    let took = look.elapsed().saturating_sub(tables.walk_took);
                    if let Err(std::sync::mpsc::RecvTimeoutError::Disconnected) =
                        stopped.recv_timeout(pause.max(took * 10))
                    {
                        break;
                    }
                }
            })
            .ok()?;
        Some(Watch { stop: Some(stop), tripped, thread: Some(thread) })
    }

    /// The bytes the sockets held when it stopped the test, if it did.
    pub fn tripped(&self) -> Option<u64> {
        Some(self.tripped.load(Ordering::SeqCst)).filter(|b| *b > 0)
    }
}

impl Drop for Watch {
    fn drop(&mut self) {
        drop(self.stop.take());
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// What a memory cgroup's processes take, bytes: its use less the page
/// cache (active or not) the kernel would reclaim before refusing (v1
/// `memory.usage_in_bytes` less `total_active_file` and
/// `total_inactive_file`, v2 `memory.current` less `active_file` and
/// `inactive_file`); 0 when it does not read. Shared memory and tmpfs are
/// not file cache there: they count.
pub fn working_set(dir: &std::path::Path) -> u64 {
    let num = |f: &str| std::fs::read_to_string(dir.join(f)).ok()?.trim().parse::<u64>().ok();
    let stat = std::fs::read_to_string(dir.join("memory.stat")).unwrap_or_default();
    let sum = |keys: [&str; 2]| -> u64 {
        stat.lines()
            .filter_map(|l| l.split_once(' '))
            .filter(|(k, _)| keys.contains(k))
            .filter_map(|(_, v)| v.trim().parse::<u64>().ok())
            .sum()
    };
    match num("memory.usage_in_bytes") {
        Some(used) => used.saturating_sub(sum(["total_active_file", "total_inactive_file"])),
        None => num("memory.current").unwrap_or(0).saturating_sub(sum(["active_file", "inactive_file"])),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Tables that read nothing of the machine (its figures move as other
    /// tests run).
    fn nothing() -> Tables {
        Tables {
            netlink: None,
            charged: None,
            sockstat: None,
            sockstat6: None,
            meminfo: None,
            zoneinfo: None,
            base_unexplained: None,
            kmem: None,
            base: Machine::default(),
            diag: None,
            per_socket: 0,
            protocols: None,
            netns: 0,
            walker: None,
            unseen: std::collections::VecDeque::new(),
            walked: None,
            walk_took: Duration::ZERO,
        }
    }

    /// What a v1 memory cgroup counts of its sockets apart is added, read
    /// afresh at each look.
    #[test]
    fn the_socket_counter_of_memory_v1_is_added() {
        let dir = std::env::temp_dir().join(format!("sockmem-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("memory.kmem.tcp.usage_in_bytes");
        std::fs::write(&file, "1234567\n").unwrap();
        // Without the netlink table: the host's changes as other tests run.
        let mut tables = nothing().with_charged(&dir);
        assert_eq!(tables.held(u64::MAX), 1234567);
        std::fs::write(&file, "7654321\n").unwrap();
        assert_eq!(tables.held(u64::MAX), 7654321);
        // v2 charges them within its use: not added again.
        let v2 = dir.join("v2");
        std::fs::create_dir_all(&v2).unwrap();
        std::fs::write(v2.join("memory.current"), "9000000\n").unwrap();
        std::fs::write(v2.join("memory.stat"), "anon 100\nsock 5000000\n").unwrap();
        assert_eq!(nothing().with_charged(&v2).held(u64::MAX), 0);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// What connections nobody accepted hold is counted (the kernel made
    /// them: no cgroup is charged), through the machine's growth.
    #[test]
    fn connections_nobody_accepted_are_counted() {
        use std::io::Write;
        let mut tables = Tables { netlink: None, ..Tables::open_here() };
        let before = tables.held(u64::MAX);
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        // The kernel adds to the machine's count a megabyte per CPU at a
        // time: 4 MB in 40 connections.
        let clients: Vec<_> = (0..40)
            .map(|_| {
                let mut c = std::net::TcpStream::connect(l.local_addr().unwrap()).unwrap();
                c.write_all(&vec![7u8; 100_000]).unwrap();
                c
            })
            .collect();
        std::thread::sleep(Duration::from_millis(100));
        let held = tables.held(u64::MAX);
        assert!(held >= before + 2_000_000, "held {held}, before {before}, {} connections", clients.len());
    }

    /// Netlink replies queued on a socket that never reads them are seen,
    /// in the namespace the tables were opened in only.
    #[test]
    fn queued_netlink_replies_are_counted() {
        // Without the machine's socket memory, which other tests move.
        let mut tables = Tables { sockstat: None, ..Tables::open_here() };
        let before = tables.held(u64::MAX);
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
            let held = tables.held(u64::MAX);
            libc::close(s);
            assert!(held >= before + 20 * 4000, "held {held}, before {before}");
        }
    }
}
