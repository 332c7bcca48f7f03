//! What must hold before a test runs: its programs on PATH, root, a writable
//! target directory with enough free space. Checked before any trial.

use crate::model::profile::Profile;
use crate::model::template;
use crate::units;
use std::path::Path;
use thiserror::Error;

#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum Unmet {
    #[error("{program} not found — {}", install_hint(install))]
    Program { program: String, install: Option<String> },
    #[error("{path} not found — install it with `{install}`")]
    File { path: String, install: String },
    #[error("{profile} must run as root (it {why})")]
    Root { profile: String, why: &'static str },
}

/// How to get a missing program: the profile's package, or a way to say one.
fn install_hint(install: &Option<String>) -> String {
    match install {
        Some(cmd) => format!("install it with `{cmd}` or put it on PATH"),
        None => "install the package that provides it or put it on PATH (the profile names none: \
                 `requirements.programs: [{name: …, apt: PACKAGE}]`)"
            .to_string(),
    }
}

/// Where a `*` of `requirements.programs[].dirs` is expanded: programs'
/// own trees. Elsewhere (`/root/*`, `/sys/*/*/…`) a pattern matches
/// nothing, so profile text never lists or probes other places.
const GLOB_ROOTS: [&str; 2] = ["/usr", "/opt"];

/// Most directories one pattern expands to at any level, and most levels:
/// a pattern costs no more than reading a few directories.
const GLOB_MAX: usize = 64;
const GLOB_DEPTH: usize = 16;

/// The directories matching `pattern`, where `*` stands for one path
/// component (`/usr/lib/postgresql/*/bin`), newest-looking last; bounded
/// ([`GLOB_ROOTS`], [`GLOB_MAX`], [`GLOB_DEPTH`]).
fn expand_dir(pattern: &str) -> Vec<std::path::PathBuf> {
    let parts: Vec<&str> = pattern.split('/').filter(|p| !p.is_empty()).collect();
    let globbed = parts.iter().any(|p| p.contains('*'));
    let in_roots = GLOB_ROOTS.iter().any(|r| Path::new(pattern).starts_with(r));
    if parts.len() > GLOB_DEPTH || (globbed && (!in_roots || parts.iter().any(|p| *p == ".." || p.starts_with('.')))) {
        return Vec::new();
    }
    let mut found = vec![std::path::PathBuf::from("/")];
    for part in parts {
        let mut next = Vec::new();
        for base in &found {
            if part.contains('*') {
                let (pre, post) = part.split_once('*').unwrap_or((part, ""));
                let Ok(rd) = std::fs::read_dir(base) else { continue };
                let mut names: Vec<String> = rd
                    .flatten()
                    .filter_map(|e| e.file_name().into_string().ok())
                    .filter(|n| n.len() >= pre.len() + post.len() && n.starts_with(pre) && n.ends_with(post))
                    .collect();
                // Version directories: 9 before 15.
                names.sort_by_key(|n| (n.chars().filter(|c| c.is_ascii_digit()).count(), n.clone()));
                next.extend(names.into_iter().map(|n| base.join(n)));
            } else {
                next.push(base.join(part));
            }
            if next.len() >= GLOB_MAX {
                break;
            }
        }
        next.truncate(GLOB_MAX);
        found = next;
    }
    found.into_iter().filter(|d| d.is_dir()).collect()
}

/// Where program `name` is: on PATH, else in one of `dirs` (newest first).
fn locate(name: &str, dirs: &[String]) -> Option<std::path::PathBuf> {
    if let Ok(p) = which::which(name) {
        return Some(p);
    }
    dirs.iter().flat_map(|d| expand_dir(d).into_iter().rev()).map(|d| d.join(name)).find(|p| p.is_file())
}

/// Directories to add to PATH for `p`'s commands: where its required
/// programs are when they are not on PATH.
pub(crate) fn extra_path(p: &Profile) -> Vec<std::path::PathBuf> {
    let mut out: Vec<std::path::PathBuf> = Vec::new();
    for r in p.requirements.programs.iter().filter(|r| !r.dirs.is_empty()) {
        if which::which(&r.name).is_ok() {
            continue;
        }
        if let Some(dir) = locate(&r.name, &r.dirs).and_then(|f| f.parent().map(|d| d.to_path_buf()))
            && !out.contains(&dir)
        {
            out.push(dir);
        }
    }
    out
}

/// Programs the profile needs that are not on PATH.
pub fn missing_programs(p: &Profile) -> Vec<Unmet> {
    let mut out = Vec::new();
    let mut names: Vec<(String, Option<String>, Vec<String>)> =
        p.requirements.programs.iter().map(|r| (r.name.clone(), r.apt.clone(), r.dirs.clone())).collect();
    // The executor's program counts too, unless it is a path or a placeholder.
    for prog in p.executor.programs() {
        if !names.iter().any(|(n, _, _)| *n == prog) {
            names.push((prog, None, Vec::new()));
        }
    }
    for (name, apt, dirs) in names {
        if locate(&name, &dirs).is_none() {
            // A package is named only when the profile says which: a guess
            // from the program's name is often wrong (`ddx`).
            let install = apt.map(|a| format!("apt-get install {a}"));
            out.push(Unmet::Program { program: name, install });
        }
    }
    out
}

/// Files the profile needs that are missing.
pub fn missing_files(p: &Profile) -> Vec<Unmet> {
    p.requirements
        .files
        .iter()
        .filter(|f| !Path::new(&f.path).exists())
        .map(|f| Unmet::File {
            path: f.path.clone(),
            install: match &f.apt {
                Some(a) => format!("apt-get install {a}"),
                None => "the package that provides it".to_string(),
            },
        })
        .collect()
}

/// Whether root is required and missing.
pub fn missing_root(p: &Profile) -> Option<Unmet> {
    // SAFETY: geteuid cannot fail.
    let euid = unsafe { libc::geteuid() };
    (p.requirements.root && euid != 0)
        .then(|| Unmet::Root { profile: p.id.clone(), why: "declares `requirements.root: true`" })
}

#[derive(Debug, Error)]
pub enum TargetError {
    #[error("target directory {path} cannot be created: {source}")]
    Create { path: String, source: std::io::Error },
    #[error("target directory {path} is not writable: {source}")]
    NotWritable { path: String, source: std::io::Error },
    #[error("target directory {path} has {free} free, but {need} needs {needed}")]
    NoSpace { path: String, free: String, need: String, needed: String },
}

/// Creates `dir` if needed, checks it is writable and has `need` free bytes
/// (`who` names the tests that need them).
pub fn check_target(dir: &Path, need: Option<(u64, String)>) -> Result<(), TargetError> {
    let path = dir.display().to_string();
    std::fs::create_dir_all(dir).map_err(|source| TargetError::Create { path: path.clone(), source })?;
    tempfile::tempfile_in(dir).map_err(|source| TargetError::NotWritable { path: path.clone(), source })?;
    if let Some((bytes, who)) = need {
        let free = crate::sys::fs::free_bytes(dir)
            .map_err(|source| TargetError::NotWritable { path: path.clone(), source })?;
        if free < bytes {
            return Err(TargetError::NoSpace {
                path,
                free: units::format_bytes_binary(free),
                need: who,
                needed: units::format_bytes_binary(bytes),
            });
        }
    }
    Ok(())
}

/// Free space test `t` declares, with placeholders filled from its entries.
pub fn free_space_of(t: &crate::expand::Test) -> Option<u64> {
    let fs = t.profile.profile.requirements.free_space.as_deref()?;
    let b = t.bindings();
    let s = template::render(fs, |n| b.get(n).map(String::as_str), false).ok()?;
    units::parse_size_expr(&s).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn profile_globs_are_bounded_and_stay_in_programs_trees() {
        let t = std::time::Instant::now();
        assert!(expand_dir("/sys/*/*/*/*/*/*/*/*/*/*/*/*").is_empty(), "outside /usr and /opt");
        assert!(expand_dir("/root/*").is_empty() && expand_dir("/home/*/.ssh").is_empty());
        assert!(expand_dir("/usr/../root/*").is_empty() && expand_dir("/usr/.*").is_empty());
        let many = expand_dir("/usr/*/*/*/*/*/*");
        assert!(many.len() <= GLOB_MAX, "{}", many.len());
        assert!(t.elapsed() < std::time::Duration::from_secs(5), "{:?}", t.elapsed());
        // What the shipped profiles use still works.
        assert!(expand_dir("/usr/*").iter().any(|d| d.ends_with("bin")));
        assert_eq!(expand_dir("/usr/bin"), [std::path::PathBuf::from("/usr/bin")]);
    }

    #[test]
    fn space_check() {
        let d = tempfile::tempdir().unwrap();
        check_target(d.path(), Some((1, "t".into()))).unwrap();
        let e = check_target(d.path(), Some((u64::MAX, "fio".into()))).unwrap_err();
        assert!(e.to_string().contains(", but fio needs"), "{e}");
    }
}
