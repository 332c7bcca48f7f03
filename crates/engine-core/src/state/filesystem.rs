//! A file system, made fresh and mounted with the given options on the
//! scratch device; unmounted (and its mount point removed) by the guard.

pub use super::change::mount::{MountPoint, Mounted};
use super::journal::Shared;
use super::{Guard, SpecError, StateError, SystemState};
use std::path::PathBuf;
use std::process::Command;

/// File systems engine knows how to make (`mkfs.<name>`).
pub(crate) const KNOWN: &[&str] =
    &["ext2", "ext3", "ext4", "xfs", "btrfs", "f2fs", "vfat", "exfat", "jfs", "nilfs2", "bcachefs"];

/// `ext4:data=writeback,noatime` → file system `ext4`, mount options `data=writeback,noatime`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FsSpec {
    pub fstype: String,
    pub options: Vec<String>,
}

/// As `--filesystem` takes it: `ext4:data=writeback,noatime`.
impl std::fmt::Display for FsSpec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.fstype)?;
        if !self.options.is_empty() {
            write!(f, ":{}", self.options.join(","))?;
        }
        Ok(())
    }
}

impl FsSpec {
    /// Parses a `--filesystem` value: states separated by commas, where a
    /// comma-separated word that is not a file system name is one more mount
    /// option of the state before it (`ext4:noatime,nobarrier,xfs`).
    pub fn parse_list(s: &str) -> Result<Vec<FsSpec>, SpecError> {
        let mut out: Vec<FsSpec> = Vec::new();
        for word in s.split(',').map(str::trim).filter(|w| !w.is_empty()) {
            let (name, opt) = match word.split_once(':') {
                Some((n, o)) => (n, Some(o)),
                None => (word, None),
            };
            if KNOWN.contains(&name.to_lowercase().as_str()) {
                let mut spec = FsSpec { fstype: name.to_lowercase(), options: Vec::new() };
                spec.options.extend(opt.filter(|o| !o.is_empty()).map(str::to_string));
                out.push(spec);
            } else if let Some(last) = out.last_mut()
                && opt.is_none()
            {
                last.options.push(word.to_string());
            } else {
                return Err(SpecError(format!(
                    "`{name}` is not a file system engine can make; known: {}",
                    KNOWN.join(", ")
                )));
            }
        }
        if out.is_empty() {
            return Err(SpecError("`--filesystem` names no file system".into()));
        }
        if s.chars().any(char::is_control) {
            return Err(SpecError("`--filesystem`: mount options are one line".into()));
        }
        if out.len() > super::scheduler::MAX_STATES {
            return Err(SpecError(format!(
                "more than {} file systems: each is made afresh and measured",
                super::scheduler::MAX_STATES
            )));
        }
        Ok(out)
    }

    pub fn label(&self) -> String {
        if self.options.is_empty() {
            self.fstype.clone()
        } else {
            format!("{} {}", self.fstype, self.options.join(" "))
        }
    }

    /// The mkfs program and its arguments for `device`.
    pub(crate) fn mkfs(&self, device: &str) -> (String, Vec<String>) {
        let prog = format!("mkfs.{}", self.fstype);
        let mut args: Vec<String> = match self.fstype.as_str() {
            // Initialise inode tables and journal now: left lazy, the kernel
            // writes them in the background during the first tests.
            "ext2" | "ext3" | "ext4" => {
                vec!["-q".into(), "-F".into(), "-E".into(), "lazy_itable_init=0,lazy_journal_init=0".into()]
            }
            "xfs" | "btrfs" | "f2fs" => vec!["-f".into(), "-q".into()],
            _ => vec![],
        };
        args.push(device.to_string());
        (prog, args)
    }
}

/// `spec` made on `device` and mounted at `mount_point`.
pub struct FsState {
    pub spec: FsSpec,
    pub device: String,
    pub mount_point: PathBuf,
}

fn run(cmd: &str, args: &[String]) -> Result<(), StateError> {
    let o = crate::sys::process::dies_with_engine(Command::new(cmd).args(args))
        .output()
        .map_err(|e| StateError::Apply(format!("cannot run {cmd}: {e}")))?;
    if o.status.success() {
        Ok(())
    } else {
        Err(StateError::Apply(format!(
            "{cmd} {} failed: {}",
            args.join(" "),
            String::from_utf8_lossy(&o.stderr).trim()
        )))
    }
}

impl SystemState for FsState {
    fn label(&self) -> String {
        self.spec.label()
    }

    fn apply(&self, journal: &Shared) -> Result<Guard, StateError> {
        let mut g = Guard::new(journal);
        let (prog, args) = self.spec.mkfs(&self.device);
        run(&prog, &args)?;
        let mp = self.mount_point.display().to_string();
        g.record(MountPoint { path: mp.clone() })?;
        std::fs::create_dir_all(&self.mount_point)
            .map_err(|e| StateError::Apply(format!("cannot create {mp}: {e}")))?;
        g.record(Mounted { target: mp.clone(), source: self.device.clone() })?;
        let mut margs = vec!["-t".to_string(), self.spec.fstype.clone()];
        if !self.spec.options.is_empty() {
            margs.push("-o".into());
            margs.push(self.spec.options.join(","));
        }
        margs.push(self.device.clone());
        margs.push(mp.clone());
        run("mount", &margs)?;
        let text = std::fs::read_to_string("/proc/self/mountinfo").unwrap_or_default();
        let m = crate::sysinfo::mounts::parse_mountinfo(&text).into_iter().rev().find(|m| m.mount_point == mp);
        match m {
            Some(m) if m.fstype == self.spec.fstype => Ok(g),
            Some(m) => Err(StateError::NotInForce {
                what: "file system".into(),
                wanted: self.spec.fstype.clone(),
                got: m.fstype,
                path: mp,
            }),
            None => Err(StateError::Apply(format!("{mp} is not mounted after mount succeeded"))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_states_and_options() {
        let l = FsSpec::parse_list("ext4,xfs,btrfs").unwrap();
        assert_eq!(l.iter().map(FsSpec::label).collect::<Vec<_>>(), ["ext4", "xfs", "btrfs"]);
        let l = FsSpec::parse_list("ext4:nobarrier,ext4:data=writeback,noatime,xfs").unwrap();
        assert_eq!(l.len(), 3);
        assert_eq!(l[0].options, ["nobarrier"]);
        assert_eq!(l[1].options, ["data=writeback", "noatime"]);
        assert_eq!(l[1].label(), "ext4 data=writeback noatime");
        assert!(FsSpec::parse_list("zfs").is_err());
        assert!(FsSpec::parse_list("noatime,ext4").is_err());
        assert_eq!(
            l[2].mkfs("/dev/loop0"),
            ("mkfs.xfs".to_string(), vec!["-f".to_string(), "-q".into(), "/dev/loop0".into()])
        );
    }
}
