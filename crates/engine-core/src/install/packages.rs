//! System packages by generic name: the mapping in `packages.yaml` (compiled
//! in, plus `$ENGINE_HOME/packages.yaml` on top), the distribution family
//! from `/etc/os-release`, the check that skips what is present, and the
//! package manager's command line.

use indexmap::IndexMap;
use serde::Deserialize;
use std::path::Path;
use std::process::Command;
use thiserror::Error;

const BUILTIN: &str = include_str!("../../../../packages.yaml");

/// A distribution family: the package manager and naming its members share.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Family {
    Debian,
    Fedora,
    Arch,
    Opensuse,
}

impl Family {
    pub const ALL: [Family; 4] = [Family::Debian, Family::Fedora, Family::Arch, Family::Opensuse];

    pub fn name(self) -> &'static str {
        match self {
            Family::Debian => "debian",
            Family::Fedora => "fedora",
            Family::Arch => "arch",
            Family::Opensuse => "opensuse",
        }
    }

    fn of_id(id: &str) -> Option<Family> {
        let id = id.trim().trim_matches('"').to_ascii_lowercase();
        Some(match id.as_str() {
            "debian" | "ubuntu" | "linuxmint" | "raspbian" | "pop" | "kali" | "elementary" => Family::Debian,
            "fedora" | "rhel" | "centos" | "rocky" | "almalinux" | "ol" | "amzn" => Family::Fedora,
            "arch" | "manjaro" | "endeavouros" | "archarm" => Family::Arch,
            "suse" | "sles" | "opensuse" => Family::Opensuse,
            s if s.starts_with("opensuse") => Family::Opensuse,
            _ => return None,
        })
    }

    /// The family an `os-release` file names in `ID`, else in `ID_LIKE`.
    pub(crate) fn from_os_release(text: &str) -> Option<Family> {
        let field = |k: &str| {
            text.lines().find_map(|l| l.strip_prefix(k).and_then(|r| r.strip_prefix('=')).map(|v| v.trim_matches('"')))
        };
        if let Some(f) = field("ID").and_then(Family::of_id) {
            return Some(f);
        }
        field("ID_LIKE").and_then(|like| like.split_whitespace().find_map(Family::of_id))
    }

    /// This machine's family, from `os_release` (`ENGINE_OS_RELEASE`) or the
    /// standard places.
    pub fn detect(os_release: Option<&std::path::Path>) -> Option<Family> {
        let paths: Vec<std::path::PathBuf> = match os_release {
            Some(p) => vec![p.into()],
            None => vec!["/etc/os-release".into(), "/usr/lib/os-release".into()],
        };
        paths.iter().find_map(|p| std::fs::read_to_string(p).ok()).and_then(|t| Family::from_os_release(&t))
    }

    /// The command that installs `pkgs`, as argv.
    pub(crate) fn install_argv(self, pkgs: &[String]) -> Vec<String> {
        let head: &[&str] = match self {
            Family::Debian => &["apt-get", "install", "-y", "--no-install-recommends"],
            Family::Fedora => &["dnf", "install", "-y"],
            Family::Arch => &["pacman", "-S", "--needed", "--noconfirm"],
            Family::Opensuse => &["zypper", "--non-interactive", "install"],
        };
        head.iter().map(|s| s.to_string()).chain(pkgs.iter().cloned()).collect()
    }

    /// The exact command line to print (with `sudo` when not root).
    pub fn command_line(self, pkgs: &[String], root: bool) -> String {
        let mut words = self.install_argv(pkgs);
        if !root {
            words.insert(0, "sudo".into());
        }
        words.join(" ")
    }
}

/// What shows a generic package is present: every program on PATH and every file there.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Check {
    #[serde(default)]
    pub programs: Vec<String>,
    #[serde(default)]
    pub files: Vec<String>,
}

/// One generic package.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Package {
    #[serde(default)]
    pub description: String,
    #[serde(default)]
    pub check: Check,
    #[serde(default)]
    pub debian: Vec<String>,
    #[serde(default)]
    pub fedora: Vec<String>,
    #[serde(default)]
    pub arch: Vec<String>,
    #[serde(default)]
    pub opensuse: Vec<String>,
}

impl Package {
    /// The family's packages (empty: none provides it there).
    pub(crate) fn for_family(&self, f: Family) -> &[String] {
        match f {
            Family::Debian => &self.debian,
            Family::Fedora => &self.fedora,
            Family::Arch => &self.arch,
            Family::Opensuse => &self.opensuse,
        }
    }

    /// Whether the check passes (a package with no check is never assumed present).
    pub fn present(&self) -> bool {
        let c = &self.check;
        (!c.programs.is_empty() || !c.files.is_empty())
            && c.programs.iter().all(|p| which::which(p).is_ok())
            && c.files.iter().all(|f| Path::new(f).exists())
    }
}

/// Every generic package engine knows.
#[derive(Debug, Default)]
pub struct Catalog {
    map: IndexMap<String, Package>,
    /// Why `$ENGINE_HOME/packages.yaml` was not used, if it was not.
    pub overlay_error: Option<String>,
}

impl Catalog {
    /// The compiled-in mapping.
    pub fn builtin() -> Catalog {
        Catalog { map: Catalog::parse(BUILTIN).expect("packages.yaml is valid"), overlay_error: None }
    }

    /// The compiled-in mapping with the user's file `user` on top.
    pub fn load(user: &std::path::Path) -> Catalog {
        let mut c = Catalog::builtin();
        if let Ok(text) = std::fs::read_to_string(user) {
            match Catalog::parse(&text) {
                Ok(m) => c.map.extend(m),
                Err(e) => c.overlay_error = Some(format!("{}: {e}", user.display())),
            }
        }
        c
    }

    pub(crate) fn parse(text: &str) -> Result<IndexMap<String, Package>, serde_saphyr::Error> {
        serde_saphyr::from_str(text)
    }

    pub fn get(&self, name: &str) -> Option<&Package> {
        self.map.get(name)
    }

    pub(crate) fn names(&self) -> impl Iterator<Item = &str> {
        self.map.keys().map(String::as_str)
    }
}

/// What a set of generic packages needs on this machine.
#[derive(Debug, Default, Clone)]
pub struct Needs {
    /// Generic names whose check passed.
    pub present: Vec<String>,
    /// Missing generic names and the family's packages for them.
    pub missing: Vec<(String, Vec<String>)>,
    /// Missing generic names no package of this family provides (or no family known).
    pub unmapped: Vec<String>,
    /// The package definitions, to check again after installing.
    pub checks: IndexMap<String, Package>,
}

impl Needs {
    /// The family packages to install, deduplicated, in order.
    pub fn packages(&self) -> Vec<String> {
        let mut out: Vec<String> = Vec::new();
        for p in self.missing.iter().flat_map(|(_, p)| p) {
            if !out.contains(p) {
                out.push(p.clone());
            }
        }
        out
    }
    pub fn is_satisfied(&self) -> bool {
        self.missing.is_empty() && self.unmapped.is_empty()
    }
}

/// Checks `wanted` (generic name, package) here, for `family`.
pub fn needs(wanted: &[(String, Package)], family: Option<Family>) -> Needs {
    let mut n = Needs::default();
    for (name, pkg) in wanted {
        if n.present.contains(name) || n.missing.iter().any(|(m, _)| m == name) || n.unmapped.contains(name) {
            continue;
        }
        n.checks.insert(name.clone(), pkg.clone());
        if pkg.present() {
            n.present.push(name.clone());
            continue;
        }
        match family.map(|f| pkg.for_family(f)) {
            Some(list) if !list.is_empty() => n.missing.push((name.clone(), list.to_vec())),
            _ => n.unmapped.push(name.clone()),
        }
    }
    n
}

#[derive(Debug, Error)]
pub enum PackageError {
    #[error("cannot run `{command}`: {source}")]
    Spawn { command: String, source: std::io::Error },
    #[error("`{command}` failed ({status})")]
    Failed { command: String, status: std::process::ExitStatus },
    #[error("still missing after `{command}`: {names}")]
    StillMissing { command: String, names: String },
}

/// Installs `needs` with the family's package manager (engine runs as
/// root); apt-get's package lists are refreshed once when the first try fails.
pub fn install(family: Family, needs: &Needs) -> Result<(), PackageError> {
    let pkgs = needs.packages();
    if pkgs.is_empty() {
        return Ok(());
    }
    let argv = family.install_argv(&pkgs);
    let command = argv.join(" ");
    let run = |argv: &[String]| -> Result<std::process::ExitStatus, PackageError> {
        let mut c = Command::new(&argv[0]);
        c.args(&argv[1..]);
        if family == Family::Debian {
            c.env("DEBIAN_FRONTEND", "noninteractive");
        }
        c.stdin(std::process::Stdio::null());
        c.status().map_err(|source| PackageError::Spawn { command: argv.join(" "), source })
    };
    eprintln!("$ {}", crate::sys::text::terminal(&command.to_string()));
    let mut status = run(&argv)?;
    if !status.success() && family == Family::Debian {
        let update: Vec<String> = ["apt-get", "update", "-qq"].iter().map(|s| s.to_string()).collect();
        eprintln!("$ apt-get update -qq");
        if run(&update)?.success() {
            eprintln!("$ {}", crate::sys::text::terminal(&command.to_string()));
            status = run(&argv)?;
        }
    }
    if !status.success() {
        return Err(PackageError::Failed { command, status });
    }
    let still: Vec<&str> = needs
        .missing
        .iter()
        .filter(|(g, _)| needs.checks.get(g).is_some_and(|p| !p.present()))
        .map(|(g, _)| g.as_str())
        .collect();
    if !still.is_empty() {
        return Err(PackageError::StillMissing { command, names: still.join(", ") });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn families_from_os_release() {
        assert_eq!(Family::from_os_release("ID=debian\nVERSION_ID=\"12\"\n"), Some(Family::Debian));
        assert_eq!(Family::from_os_release("ID=ubuntu\nID_LIKE=debian\n"), Some(Family::Debian));
        assert_eq!(Family::from_os_release("ID=\"rocky\"\nID_LIKE=\"rhel centos fedora\"\n"), Some(Family::Fedora));
        assert_eq!(Family::from_os_release("ID=somethingnew\nID_LIKE=\"suse opensuse\"\n"), Some(Family::Opensuse));
        assert_eq!(Family::from_os_release("ID=endeavouros\nID_LIKE=arch\n"), Some(Family::Arch));
        assert_eq!(Family::from_os_release("ID=plan9\n"), None);
    }

    #[test]
    fn the_builtin_mapping_parses_and_maps_every_family_it_can() {
        let m = Catalog::parse(BUILTIN).unwrap();
        assert!(m.len() >= 10);
        for (name, p) in &m {
            assert!(!p.check.programs.is_empty() || !p.check.files.is_empty(), "{name} has no check");
            assert!(!p.debian.is_empty(), "{name} has no Debian package");
        }
        assert_eq!(Family::Fedora.command_line(&["fio".into(), "gcc".into()], false), "sudo dnf install -y fio gcc");
        assert_eq!(Family::Arch.command_line(&["fio".into()], true), "pacman -S --needed --noconfirm fio");
    }
}
