//! Where an identifier was measured, in words that stay the same when the
//! same state is made again: the file system, its options, the stack of
//! devices under it (a loop device by what it is, not by its number or
//! backing file name, which change from run to run) and the scheduler in
//! force. Two runs saved under one identifier must agree on it: an entry's
//! numbers and its notes never describe different systems.

use crate::model::result::System;
use crate::model::system::{Kind, Resolution};

/// Where `s` was measured; `None` when its capture could not tell (an
/// imported or older result), which nothing can be checked against.
pub fn place(s: &System) -> Option<String> {
    let d = s.details.as_ref()?;
    let t = d.target.as_ref()?;
    let text = match (&t.resolution, &t.mount) {
        (Some(r), _) => {
            format!("{}; scheduler {}", stack(r), super::render::scheduler_text(r, &d.highlight))
        }
        (None, Some(m)) => format!("{} ({}) [{}]", m.fstype, m.source, m.sorted_options()),
        (None, None) => return None,
    };
    // Another host's identifier (a merged or appended result) is never
    // this host's place, however alike their disks.
    let host = d.hostname.as_deref().map_or(String::new(), |h| format!("host {h}: "));
    Some(match &s.state {
        Some(r) => format!("{host}{text}; made by {r}"),
        None => format!("{host}{text}"),
    })
}

/// `ext4 [relatime,rw] on loop (backing file on ext4 [..] on vda)`.
fn stack(r: &Resolution) -> String {
    let layers: Vec<String> = r
        .layers
        .iter()
        .map(|l| match &l.kind {
            Kind::Disk => match &l.model {
                Some(m) => format!("{} ({m})", l.name),
                None => l.name.clone(),
            },
            Kind::Partition { .. } => l.name.clone(),
            Kind::DeviceMapper { name } => name.clone().unwrap_or_else(|| l.name.clone()),
            Kind::Md { level } => format!("{} ({})", l.name, level.as_deref().unwrap_or("md")),
            Kind::Loop { .. } => match l.size_bytes {
                Some(b) => format!("a loop device of {b} bytes"),
                None => "a loop device".into(),
            },
        })
        .collect();
    let mut s = format!("{} [{}] on {}", r.mount.fstype, r.mount.sorted_options(), layers.join(" > "));
    if let Some(b) = &r.backing {
        s.push_str(&format!(" (backing file on {})", stack(b)));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::system::{BlockDevice, Mount, Queue, SystemInfo, Target};

    fn on(fstype: &str, dev: BlockDevice, scheduler: &str) -> System {
        let mut dev = dev;
        dev.queue = Some(Queue { scheduler: Some(scheduler.into()), ..Default::default() });
        let r = Resolution {
            path: "/mnt/x".into(),
            mount: Mount {
                mount_point: "/mnt/x".into(),
                fstype: fstype.into(),
                source: format!("/dev/{}", dev.name),
                dev: "7:1".into(),
                options: vec!["relatime".into(), "rw".into()],
            },
            layers: vec![dev.clone()],
            disks: vec![dev],
            backing: None,
        };
        let target = Target { path: "/mnt/x".into(), resolution: Some(r), mount: None, problem: None };
        let details = SystemInfo { target: Some(target), ..Default::default() };
        System { identifier: "x".into(), details: Some(details), ..Default::default() }
    }

    fn dev(name: &str, kind: Kind) -> BlockDevice {
        BlockDevice { name: name.into(), kind, model: None, size_bytes: Some(2 << 30), transport: None, queue: None }
    }

    #[test]
    fn a_loop_device_made_again_is_the_same_place_and_the_root_disk_is_not() {
        let a = on("ext4", dev("loop1", Kind::Loop { backing_file: Some("/h/loop/a.img".into()) }), "none");
        let b = on("ext4", dev("loop0", Kind::Loop { backing_file: Some("/h/loop/b.img".into()) }), "none");
        assert_eq!(place(&a), place(&b));
        let kyber = on("ext4", dev("loop0", Kind::Loop { backing_file: None }), "kyber");
        assert_ne!(place(&a), place(&kyber));
        let root = on("ext4", dev("vda", Kind::Disk), "none");
        assert_ne!(place(&a), place(&root));
        let xfs = on("xfs", dev("loop0", Kind::Loop { backing_file: None }), "none");
        assert_ne!(place(&a), place(&xfs));
        assert_eq!(place(&System::default()), None);
        let mut elsewhere = b.clone();
        elsewhere.details.as_mut().unwrap().hostname = Some("other".into());
        assert_ne!(place(&a), place(&elsewhere), "another host");
    }
}
