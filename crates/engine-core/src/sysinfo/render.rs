//! SystemInfo → the lines result viewers show: Hardware (`Processor: …`),
//! Software (`OS: …`) and Notes (`Disk Notes: BFQ / relatime,rw`).

use super::device::{BlockDevice, Resolution};
use crate::model::system::{Disk, SystemInfo};
use crate::units;
use indexmap::IndexMap;

const UNKNOWN: &str = "unknown";

fn join(v: &[String]) -> Option<String> {
    (!v.is_empty()).then(|| v.join(" + "))
}

/// Counts equal items, keeping first-seen order: `2 x A + B`.
fn grouped(items: Vec<String>) -> String {
    let mut order: Vec<(String, usize)> = Vec::new();
    for i in items {
        match order.iter_mut().find(|(x, _)| *x == i) {
            Some((_, n)) => *n += 1,
            None => order.push((i, 1)),
        }
    }
    order.into_iter().map(|(i, n)| if n > 1 { format!("{n} x {i}") } else { i }).collect::<Vec<_>>().join(" + ")
}

pub(crate) fn processor(s: &SystemInfo) -> String {
    let p = &s.processor;
    let mut out = String::new();
    if let Some(n) = p.sockets.filter(|&n| n > 1) {
        out.push_str(&format!("{n} x "));
    }
    out.push_str(p.model.as_deref().unwrap_or(UNKNOWN));
    if let Some(mhz) = p.max_mhz {
        out.push_str(&format!(" @ {:.2}GHz", mhz as f64 / 1000.0));
    }
    match (p.cores, p.threads) {
        (Some(c), Some(t)) if c == t => out.push_str(&format!(" ({c} Cores)")),
        (Some(c), Some(t)) => out.push_str(&format!(" ({c} Cores / {t} Threads)")),
        _ => {}
    }
    out
}

pub(crate) fn disk_label(d: &Disk) -> String {
    let size = d.size_bytes.map(units::format_bytes_decimal);
    match (size, &d.model) {
        (Some(s), Some(m)) => format!("{s} {m}"),
        (Some(s), None) => format!("{s} {}", d.name),
        (None, Some(m)) => m.clone(),
        (None, None) => d.name.clone(),
    }
}

fn memory(s: &SystemInfo) -> String {
    if !s.memory.dimms.is_empty() {
        let items = s
            .memory
            .dimms
            .iter()
            .map(|d| {
                let mut x = units::format_bytes_binary(d.size_bytes).replace(".0 ", " ");
                if let Some(k) = &d.kind {
                    x.push_str(&format!(" {k}"));
                    if let Some(sp) = d.speed_mts {
                        x.push_str(&format!("-{sp}MT/s"));
                    }
                }
                if let Some(p) = &d.part_number {
                    x.push_str(&format!(" {p}"));
                }
                x
            })
            .collect();
        return grouped(items);
    }
    s.memory.total_bytes.map(units::format_bytes_binary).unwrap_or_else(|| UNKNOWN.into())
}

pub fn hardware(s: &SystemInfo) -> IndexMap<String, String> {
    let mut h = IndexMap::new();
    h.insert("Processor".into(), processor(s));
    if let Some(b) = &s.motherboard {
        let name = [b.vendor.as_deref().or(b.system_vendor.as_deref()), b.name.as_deref().or(b.product.as_deref())]
            .into_iter()
            .flatten()
            .collect::<Vec<_>>()
            .join(" ");
        let bios = b.bios_version.as_ref().map(|v| format!(" ({v} BIOS)")).unwrap_or_default();
        h.insert("Motherboard".into(), format!("{}{bios}", if name.is_empty() { UNKNOWN } else { &name }));
    }
    if let Some(c) = &s.chipset {
        h.insert("Chipset".into(), c.clone());
    }
    h.insert("Memory".into(), memory(s));
    let disks = grouped(s.disks.iter().map(disk_label).collect());
    let mut disk = if disks.is_empty() { UNKNOWN.into() } else { disks };
    // A target off the disks (tmpfs, NFS) says so where readers look first.
    if let Some(t) = &s.target
        && t.resolution.is_none()
        && let Some(m) = &t.mount
        && let Some(what) = super::fs_class(&m.fstype)
    {
        disk = format!("{disk} (tests ran on {}: {what})", m.fstype);
    }
    h.insert("Disk".into(), disk);
    for (k, v) in [("Graphics", &s.graphics), ("Audio", &s.audio), ("Network", &s.network)] {
        if let Some(j) = join(v) {
            h.insert(k.into(), j);
        }
    }
    h
}

pub fn software(s: &SystemInfo) -> IndexMap<String, String> {
    let mut w = IndexMap::new();
    w.insert("OS".into(), s.os.clone().unwrap_or_else(|| UNKNOWN.into()));
    w.insert("Kernel".into(), format!("{} ({})", s.kernel.as_deref().unwrap_or(UNKNOWN), s.arch));
    for (k, v) in [("Desktop", &s.desktop), ("Display Server", &s.display_server)] {
        if let Some(v) = v {
            w.insert(k.into(), v.clone());
        }
    }
    if let Some(c) = &s.compiler {
        w.insert("Compiler".into(), c.version.clone());
    }
    let fs = s.target.as_ref().and_then(|t| {
        let m = t.resolution.as_ref().map(|r| &r.mount).or(t.mount.as_ref())?;
        Some(match super::fs_class(&m.fstype) {
            Some(what) => format!("{} ({what})", m.fstype),
            None => m.fstype.clone(),
        })
    });
    let fs = fs.unwrap_or_else(|| match s.target.as_ref().and_then(|t| t.problem.clone()) {
        Some(why) => format!("{UNKNOWN} ({why})"),
        None => UNKNOWN.into(),
    });
    w.insert("File-System".into(), fs);
    if let Some(l) = &s.system_layer {
        w.insert("System Layer".into(), l.clone());
    }
    w
}

fn queue_line(d: &BlockDevice) -> Option<String> {
    let q = d.queue.as_ref()?;
    let mut parts = Vec::new();
    if let Some(v) = q.read_ahead_kb {
        parts.push(format!("read_ahead_kb={v}"));
    }
    if let Some(v) = q.nr_requests {
        parts.push(format!("nr_requests={v}"));
    }
    if let Some(v) = q.rotational {
        parts.push(format!("rotational={}", u8::from(v)));
    }
    if let Some(v) = &q.write_cache {
        parts.push(format!("write_cache={v}"));
    }
    (!parts.is_empty()).then(|| parts.join(" "))
}

/// `BFQ`, `BFQ low_latency=0` (tunables in `highlight`, as read back), or per
/// disk when they differ: `sda: BFQ, sdb: NONE`.
pub(crate) fn scheduler_text(r: &Resolution, highlight: &[String]) -> String {
    let per: Vec<(String, String)> = r
        .disks
        .iter()
        .map(|d| {
            let mut s = d
                .queue
                .as_ref()
                .and_then(|q| q.scheduler.clone())
                .map(|s| s.to_uppercase())
                .unwrap_or_else(|| UNKNOWN.into());
            if let Some(q) = &d.queue {
                for h in highlight {
                    if let Some(v) = q.iosched.get(h) {
                        s.push_str(&format!(" {h}={v}"));
                    }
                }
            }
            (d.name.clone(), s)
        })
        .collect();
    match per.as_slice() {
        [] => UNKNOWN.into(),
        [(_, s)] => s.clone(),
        _ if per.iter().all(|(_, s)| *s == per[0].1) => per[0].1.clone(),
        _ => per.iter().map(|(n, s)| format!("{n}: {s}")).collect::<Vec<_>>().join(", "),
    }
}

/// `BFQ / noatime,rw / ext4 on loop0 (…) / loop0: read_ahead_kb=128 …`.
pub(crate) fn disk_notes(s: &SystemInfo) -> Option<String> {
    let t = s.target.as_ref()?;
    let Some(r) = &t.resolution else {
        return Some(match (&t.mount, &t.problem) {
            (Some(m), _) => {
                let what = super::fs_class(&m.fstype).unwrap_or("no block device");
                format!(
                    "{} ({what}) / {} / {} on {}, no block device",
                    m.fstype,
                    m.sorted_options(),
                    m.fstype,
                    m.source
                )
            }
            (None, Some(why)) => format!("{UNKNOWN} ({why})"),
            (None, None) => format!("{UNKNOWN} (the devices under {} could not be read)", t.path),
        });
    };
    let mut parts = vec![scheduler_text(r, &s.highlight), r.mount.sorted_options(), r.chain()];
    let queues: Vec<String> =
        r.disks.iter().filter_map(|d| queue_line(d).map(|q| format!("{}: {q}", d.name))).collect();
    if !queues.is_empty() {
        parts.push(queues.join("; "));
    }
    Some(parts.join(" / "))
}

pub fn notes(s: &SystemInfo) -> IndexMap<String, String> {
    let mut n = IndexMap::new();
    if let Some(c) = s.compiler.as_ref().and_then(|c| c.configure.clone()) {
        n.insert("Compiler Notes".into(), c);
    }
    if let Some(d) = disk_notes(s) {
        n.insert("Disk Notes".into(), d);
    }
    let p = &s.processor;
    let mut pn = Vec::new();
    match (&p.scaling_driver, &p.governor) {
        (Some(d), Some(g)) => pn.push(format!("Scaling Governor: {d} {g}")),
        (None, Some(g)) => pn.push(format!("Scaling Governor: {g}")),
        _ => pn.push(format!("Scaling Governor: {UNKNOWN}")),
    }
    if let Some(b) = p.boost {
        pn.push(format!("Boost: {}", if b { "Enabled" } else { "Disabled" }));
    }
    if let Some(e) = &p.energy_preference {
        pn.push(format!("EPP: {e}"));
    }
    if let Some(m) = &p.microcode {
        pn.push(format!("CPU Microcode: {m}"));
    }
    n.insert("Processor Notes".into(), pn.join(" - "));
    let mut kn = Vec::new();
    if let Some(t) = &s.transparent_hugepages {
        kn.push(format!("Transparent Huge Pages: {t}"));
    }
    if let Some(c) = &s.kernel_cmdline {
        kn.push(format!("Command Line: {c}"));
    }
    if !kn.is_empty() {
        n.insert("Kernel Notes".into(), kn.join(" - "));
    }
    if let Some(py) = &s.python {
        n.insert("Python Notes".into(), py.clone());
    }
    if !s.security.is_empty() {
        n.insert(
            "Security Notes".into(),
            s.security.iter().map(|(k, v)| format!("{k}: {v}")).collect::<Vec<_>>().join(" + "),
        );
    }
    if !s.environment.is_empty() {
        n.insert(
            "Environment Notes".into(),
            s.environment.iter().map(|(k, v)| format!("{k}={v}")).collect::<Vec<_>>().join(" "),
        );
    }
    n
}
