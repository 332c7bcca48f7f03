//! The install phase: what a profile's tests need before they can run —
//! system packages, verified downloads, build steps — put in
//! `$ENGINE_HOME/installed/<profile>@<version>/` (`{{install_dir}}`) and
//! recorded there, so the next run knows it is done.
//!
//! One capability per module: [`download`] (mirrors, cache, resume),
//! [`extract`] (archives, safely), [`build`] (steps and their log),
//! [`packages`] (generic names per distribution family), [`platform`].

pub mod build;
pub mod download;
pub mod extract;
pub mod packages;
pub mod platform;

use crate::home::Home;
use crate::model::profile::LoadedProfile;
use crate::model::profile::{BuildStep, Download, Profile, Scalar};
use crate::sys::safepath::Dir;
use download::{DownloadError, Downloader, Fetched, Want};
use indexmap::IndexMap;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;
use thiserror::Error;

/// The record of a finished install, in the install directory.
pub const STATE_FILE: &str = "install-state.json";
/// What the build steps printed, in the install directory.
pub const LOG_FILE: &str = "install.log";

/// What was installed, when, from which inputs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct State {
    pub profile: String,
    pub version: String,
    /// The sha256 of every download, by file name.
    pub inputs: BTreeMap<String, String>,
    /// Every download and build step installed (their identities).
    pub items: Vec<String>,
    /// RFC 3339.
    pub installed_at: String,
    pub seconds: f64,
    /// The build log.
    pub log: String,
}

/// `installed/<id>@<version>`.
pub fn dir_of(installed: &Path, p: &Profile) -> PathBuf {
    installed.join(format!("{}@{}", p.id, p.version))
}

/// Whether `p` needs no install or has been installed under `installed`:
/// the one answer `list profiles` and `info` give.
pub fn is_installed(installed: &Path, p: &Profile) -> bool {
    // A link planted by a build is not a state file (never followed).
    p.install.is_none() || std::fs::symlink_metadata(dir_of(installed, p).join(STATE_FILE)).is_ok_and(|m| m.is_file())
}

/// The state file of the install folder `dir`, when it is one: read
/// through the folder's descriptor, never following a link, never waiting
/// (a confined build may have left a FIFO or a device there), at most 1 MiB.
pub fn read_state(dir: &Path) -> Option<State> {
    let f = crate::sys::safepath::Dir::open(dir).ok()?.open_regular(Path::new(STATE_FILE)).ok()?;
    let mut text = String::new();
    std::io::Read::read_to_string(&mut std::io::Read::take(f, 1 << 20), &mut text).ok()?;
    serde_json::from_str(&text).ok()
}

fn sha_hex(b: &[u8]) -> String {
    crate::sys::hash::sha256_hex(b)
}

fn when_matches(when: &IndexMap<String, Scalar>, b: &IndexMap<String, String>) -> bool {
    when.iter().all(|(k, v)| b.get(k).is_some_and(|x| x == v.as_str()))
}

fn download_key(d: &Download) -> String {
    format!("download {} {}", d.file, d.sha256.as_deref().unwrap_or("").to_ascii_lowercase())
}

fn build_key(i: usize, s: &BuildStep) -> String {
    format!("build {i} {}", sha_hex(serde_json::to_string(s).unwrap_or_default().as_bytes()))
}

/// A download or build step of an install section (build steps with their index).
enum Item<'a> {
    Download(&'a Download),
    Build(usize, &'a BuildStep),
}

/// Whether the install is there and current.
#[derive(Debug, Clone, PartialEq)]
pub enum Status {
    /// The profile installs no files (maybe packages only).
    Nothing,
    Installed(State),
    NotInstalled,
    /// Installed, but not from what the profile (or these tests) need now.
    Stale(String),
}

/// What the chosen tests of one profile need installed.
#[derive(Debug, Clone)]
pub struct Plan {
    pub id: String,
    pub version: String,
    pub dir: PathBuf,
    /// Downloads for this platform and these tests, in profile order.
    pub downloads: Vec<Download>,
    pub build: Vec<BuildStep>,
    /// Identities of `downloads` and `build`.
    pub keys: Vec<String>,
    /// Generic packages (and ad hoc ones from `requirements.programs`).
    pub packages: Vec<(String, packages::Package)>,
    /// Names in `packages` made from a program's `apt`/`dnf` fields (no
    /// generic `package:`): `engine install-deps` installs them, while the
    /// requirement check reports them as missing programs.
    pub adhoc: Vec<String>,
    profile: Profile,
    profile_dir: String,
    /// Build steps run confined (the book, "Sandbox"): writable only the install directory.
    pub confined: bool,
}

impl Plan {
    /// The parts of `lp`'s install section that tests with `bindings` need
    /// (`when` filters), on this platform.
    pub fn new(
        home: &Home,
        lp: &LoadedProfile,
        bindings: &[IndexMap<String, String>],
        catalog: &packages::Catalog,
    ) -> Plan {
        let p = &lp.profile;
        let any = |w: &IndexMap<String, Scalar>| w.is_empty() || bindings.iter().any(|b| when_matches(w, b));
        let mut plan = Plan {
            id: p.id.clone(),
            version: p.version.clone(),
            dir: dir_of(&home.installed(), p),
            downloads: Vec::new(),
            build: Vec::new(),
            keys: Vec::new(),
            packages: Vec::new(),
            adhoc: Vec::new(),
            profile: p.clone(),
            profile_dir: lp.dir().map(|d| d.display().to_string()).unwrap_or_default(),
            confined: lp.confined_by_default(),
        };
        if let Some(inst) = &p.install {
            for item in &inst.packages {
                if item.when().is_none_or(&any)
                    && let Some(pkg) = catalog.get(item.name())
                {
                    plan.packages.push((item.name().to_string(), pkg.clone()));
                }
            }
            plan.select(|item| match item {
                Item::Download(d) => any(&d.when),
                Item::Build(_, s) => any(&s.when),
            });
        }
        for r in &p.requirements.programs {
            let pkg = match &r.package {
                Some(g) => catalog.get(g).cloned().map(|pkg| (g.clone(), pkg)),
                None => Some((
                    r.apt.clone().unwrap_or_else(|| r.name.clone()),
                    packages::Package {
                        description: String::new(),
                        check: packages::Check { programs: vec![r.name.clone()], files: Vec::new() },
                        debian: r.apt.iter().cloned().collect(),
                        fedora: r.dnf.iter().cloned().collect(),
                        arch: Vec::new(),
                        opensuse: Vec::new(),
                    },
                )),
            };
            if let Some(pkg) = pkg
                && !plan.packages.iter().any(|(n, _)| *n == pkg.0)
            {
                if r.package.is_none() {
                    plan.adhoc.push(pkg.0.clone());
                }
                plan.packages.push(pkg);
            }
        }
        plan
    }

    /// Selects the downloads and build steps `keep` accepts (platform permitting).
    fn select(&mut self, keep: impl Fn(Item<'_>) -> bool) {
        let Some(inst) = self.profile.install.clone() else { return };
        self.downloads.clear();
        self.build.clear();
        self.keys.clear();
        for d in &inst.downloads {
            if platform::matches_here(d.platform.as_deref()) && keep(Item::Download(d)) {
                self.keys.push(download_key(d));
                self.downloads.push(d.clone());
            }
        }
        for (i, s) in inst.build.iter().enumerate() {
            if keep(Item::Build(i, s)) {
                self.keys.push(build_key(i, s));
                self.build.push(s.clone());
            }
        }
    }

    /// Adds what an earlier install had, so installing for other tests keeps it.
    fn widen(&mut self, earlier: &State) {
        let mine = self.keys.clone();
        self.select(|item| {
            let k = match item {
                Item::Download(d) => download_key(d),
                Item::Build(i, s) => build_key(i, s),
            };
            mine.contains(&k) || earlier.items.contains(&k)
        });
    }

    /// Whether there are files to install (downloads or build steps).
    pub fn has_files(&self) -> bool {
        !self.downloads.is_empty() || !self.build.is_empty()
    }

    pub(crate) fn state(&self) -> Option<State> {
        read_state(&self.dir)
    }

    pub fn status(&self) -> Status {
        if !self.has_files() {
            return Status::Nothing;
        }
        let Some(state) = self.state() else { return Status::NotInstalled };
        if state.version != self.version {
            return Status::Stale(format!("installed for version {}, the profile is {}", state.version, self.version));
        }
        for d in &self.downloads {
            let sha = d.sha256.as_deref().unwrap_or("").to_ascii_lowercase();
            match state.inputs.get(&d.file) {
                Some(s) if *s == sha => {}
                Some(_) => return Status::Stale(format!("`{}` has a new sha256", d.file)),
                None => {}
            }
        }
        let missing: Vec<&String> = self.keys.iter().filter(|k| !state.items.contains(k)).collect();
        if !missing.is_empty() {
            return Status::Stale(format!("the install section changed ({} item(s) new)", missing.len()));
        }
        Status::Installed(state)
    }

    pub(crate) fn wants(&self) -> Vec<Want> {
        self.downloads
            .iter()
            .map(|d| Want {
                file: d.file.clone(),
                sha256: d.sha256.clone().unwrap_or_default().to_ascii_lowercase(),
                size: d.size,
                urls: d.urls.clone(),
            })
            .collect()
    }

    /// `fio@1.0.0`.
    pub fn reference(&self) -> String {
        format!("{}@{}", self.id, self.version)
    }
}

#[derive(Debug, Error)]
pub enum InstallError {
    #[error("{0}")]
    Download(String),
    #[error(transparent)]
    Extract(#[from] extract::ExtractError),
    #[error(transparent)]
    Build(#[from] build::BuildError),
    #[error("{what}: {source}")]
    Io { what: String, source: std::io::Error },
    #[error("interrupted; nothing was installed")]
    Interrupted,
    /// Interrupted, and what the build wrote could not all be removed in
    /// the moment after Ctrl-C.
    #[error(
        "interrupted; nothing was installed, and what the build wrote is in {} until the next install or `engine recover` clears it",
        left.display()
    )]
    InterruptedLeft { left: PathBuf },
    /// Its build steps must run confined, and cannot here.
    #[error("its build steps run confined, and cannot here: {0}")]
    Confinement(crate::sys::confine::Unconfinable),
    #[error("`{name}` cannot name a file or folder: {source}")]
    BadName { name: String, source: crate::model::names::NameError },
}

impl InstallError {
    fn name(name: &str, source: crate::model::names::NameError) -> InstallError {
        InstallError::BadName { name: crate::model::names::shown(name), source }
    }
}

/// How one profile's install went.
#[derive(Debug, Clone)]
pub struct Done {
    pub reference: String,
    pub dir: PathBuf,
    /// It was installed already (nothing was done).
    pub already: bool,
    /// Each download and where it came from.
    pub fetched: Vec<(String, download::Origin)>,
    pub seconds: f64,
}

/// Installs plans: all their downloads first (in parallel), then per profile
/// extraction into a temporary folder renamed into place, then build steps.
pub struct Installer {
    home: Home,
    downloader: Downloader,
    /// How much each downloaded archive may unpack to.
    limits: extract::Limits,
    /// Whether confined builds can run here (the cgroups to use), or why not.
    confinement: Result<Option<crate::sys::cgroup::Layout>, crate::sys::confine::Unconfinable>,
}

fn io(what: impl Into<String>) -> impl FnOnce(std::io::Error) -> InstallError {
    let what = what.into();
    move |source| InstallError::Io { what, source }
}

impl Installer {
    pub fn new(home: Home, settings: download::Settings) -> Result<Installer, download::DownloadError> {
        let limits = settings.unpack;
        let downloader = Downloader::new(home.downloads(), settings)?;
        Ok(Installer { home, downloader, limits, confinement: Err(crate::sys::confine::Unconfinable::NotSetUp) })
    }

    /// What confined builds run with: the cgroups, or why they cannot run.
    pub fn with_confinement(
        mut self,
        c: Result<Option<crate::sys::cgroup::Layout>, crate::sys::confine::Unconfinable>,
    ) -> Self {
        self.confinement = c;
        self
    }

    /// Installs each plan that is not installed (all of them with `force`).
    pub fn install(&self, plans: &[Plan], force: bool) -> Vec<Result<Done, InstallError>> {
        let mut todo: Vec<Option<Plan>> = Vec::with_capacity(plans.len());
        for p in plans {
            match p.status() {
                Status::Nothing => todo.push(None),
                Status::Installed(_) if !force => todo.push(None),
                _ => {
                    let mut p = p.clone();
                    if let Some(s) = p.state().filter(|s| s.version == p.version) {
                        p.widen(&s);
                    }
                    todo.push(Some(p));
                }
            }
        }
        // Every download of every plan, each file once.
        let mut wants: Vec<Want> = Vec::new();
        for p in todo.iter().flatten() {
            for w in p.wants() {
                if !wants.iter().any(|x| x.sha256 == w.sha256) {
                    wants.push(w);
                }
            }
        }
        // Several profiles may share a download, and so its failure.
        let fetched: HashMap<String, Result<Fetched, Arc<DownloadError>>> = wants
            .iter()
            .zip(self.downloader.fetch_all(&wants))
            .map(|(w, r)| (w.sha256.clone(), r.map_err(Arc::new)))
            .collect();
        plans
            .iter()
            .zip(todo)
            .map(|(orig, t)| match t {
                None => Ok(Done {
                    reference: orig.reference(),
                    dir: orig.dir.clone(),
                    already: true,
                    fetched: Vec::new(),
                    seconds: 0.0,
                }),
                Some(p) => self.install_one(&p, &fetched),
            })
            .collect()
    }

    /// A confined build's sandbox: writable the install directory, a private
    /// /tmp in a temporary folder beside it (removed when dropped).
    fn sandbox(
        &self,
        p: &Plan,
        parent: &Path,
    ) -> Result<(Transient, crate::sys::confine::Plan, crate::sys::confine::Shared), InstallError> {
        use crate::sys::confine;
        self.confinement.as_ref().map_err(|why| InstallError::Confinement(why.clone()))?;
        let dir = tempfile::Builder::new()
            .prefix(&format!("{}sandbox-", crate::sys::fs::temp_prefix()))
            .tempdir_in(parent)
            .map_err(io(format!("cannot create a folder in {}", parent.display())))?;
        let dir = Transient(Some(dir.keep()));
        let mut plan = confine::Plan::standard(dir.path())
            .map_err(io(format!("cannot create folders in {}", dir.path().display())))?;
        // Writes, not preallocations: many `fallocate`s fill a disk between
        // two reads of the space watchdog (build tools fall back to writes).
        plan.no_preallocation = true;
        plan.writable.push(p.dir.clone());
        let profile_dir = PathBuf::from(&p.profile_dir);
        if profile_dir.is_dir() {
            plan.readonly.push(profile_dir);
        }
        // The build runs as root of the sandbox's user namespace: it owns
        // the install directory, and nothing of the host's.
        let (uid, gid) = confine::Identity::Root.host();
        crate::sys::safepath::Dir::open(&p.dir)
            .and_then(|d| d.chown_tree(uid, gid))
            .map_err(io(format!("cannot hand {} to the sandbox", p.dir.display())))?;
        let shared = confine::Shared::new(1 << 30).map_err(|e| InstallError::Confinement(e.into()))?;
        Ok((dir, plan, shared))
    }

    /// Runs the plan's build steps in its install folder (confined when the
    /// plan is, its space watched), appending to `log`. A build that fails
    /// leaves nothing under the state file's name; one that outgrew its
    /// space leaves only its log.
    fn build(&self, p: &Plan, parent: &Path, log: &Path) -> Result<(), InstallError> {
        let steps: Vec<&BuildStep> = p.build.iter().collect();
        let sandbox = if p.confined && !steps.is_empty() { Some(self.sandbox(p, parent)?) } else { None };
        // What the build writes is watched as a test's scratch is: past its
        // limit (or with the disk nearly full) every step's process is
        // stopped, before the file system fills.
        let space = sandbox.as_ref().and_then(|(tmp, _, _)| {
            let dirs = vec![Dir::open(&p.dir).ok()?, Dir::open(tmp.path()).ok()?];
            let (limit, room) = build::space_limit(&dirs);
            Some((dirs, limit, room))
        });
        let confined = sandbox.as_ref().map(|(_, plan, shared)| crate::sys::process::Confined {
            plan,
            shared,
            cgroups: self.confinement.as_ref().ok().and_then(Option::as_ref),
            // A build has the sandbox's default memory (an eighth of the
            // machine's, at least 1 GiB: the Linux kernel builds within it)
            // and process limit, as a test's command does.
            limits: crate::sys::cgroup::Limits { memory: Some(build::memory_limit()), ..Default::default() },
            // No one file of a build past 4 GiB (a kernel's largest is a
            // few hundred MiB), nor past the room it has: one `fallocate`
            // fills a disk faster than any watch can see.
            file_size: Some(space.as_ref().map_or(4 << 30, |(_, _, room)| (*room).clamp(1 << 20, 4 << 30))),
        });
        let watchdog = sandbox
            .as_ref()
            .zip(space)
            // Read every 10 ms from the start: many writers in parallel can
            // fill a small disk's reserve within one 250 ms period.
            .and_then(|((_, _, shared), (dirs, limit, _))| {
                Some((shared.watch_every(dirs, limit, crate::sys::space::WATCH_CLOSE)?, limit))
            });
        let built = build::run(&steps, &p.dir, log, &p.profile_dir, confined);
        // Stopped first (a count under way ends within its bound), so a
        // trip seen just before Ctrl-C still frees what the build wrote.
        let over = watchdog.and_then(|(w, limit)| {
            let size = crate::units::format_bytes_binary;
            w.finish().map(|t| crate::sys::space::explain(t, limit, "build", build::SPACE_WHAT, size))
        });
        let over = over.map(|how| match discard_build(p, parent, log) {
            Some(q) => format!(
                "{how}; what it wrote is in {} until the next install or `engine recover` clears it",
                q.display()
            ),
            None => how,
        });
        // Its private /tmp goes now, and what could not go in time is said.
        let left = sandbox.and_then(|(tmp, _, _)| tmp.finish());
        let built = match (built, over) {
            (Err(build::BuildError::Failed { index, command, log, .. }), Some(how)) => {
                Err(build::BuildError::Failed { index, command, how: format!("was stopped: {how}"), log })
            }
            (Ok(()), Some(how)) => Err(build::BuildError::Failed {
                index: steps.len(),
                command: "(the build)".into(),
                how: format!("was stopped: {how}"),
                log: log.to_path_buf(),
            }),
            (built, _) => built,
        };
        built.map_err(|e| {
            // Whatever a failed build left under the state file's name (its
            // own "installed" mark, a link, a FIFO) goes; its log stays.
            let _ = Dir::open(&p.dir).and_then(|d| d.remove(Path::new(STATE_FILE)));
            match (e, left) {
                (build::BuildError::Interrupted { .. }, Some(left)) => InstallError::InterruptedLeft { left },
                (build::BuildError::Interrupted { .. }, None) => InstallError::Interrupted,
                (e, _) => InstallError::Build(e),
            }
        })?;
        Ok(())
    }

    fn install_one(
        &self,
        p: &Plan,
        fetched: &HashMap<String, Result<Fetched, Arc<DownloadError>>>,
    ) -> Result<Done, InstallError> {
        let start = Instant::now();
        // The install folder, its lock and its temporary folder are named after these.
        for n in [&p.id, &p.version] {
            crate::model::names::check(n).map_err(|e| InstallError::name(n, e))?;
        }
        let files = plan_files(p, fetched)?;
        if crate::sys::interrupt::requested() {
            return Err(InstallError::Interrupted);
        }
        let parent = self.home.installed();
        std::fs::create_dir_all(&parent).map_err(io(format!("cannot create {}", parent.display())))?;
        let lock = lock_install(&parent, p)?;
        // What a killed install left (named for its dead pid) goes first,
        // and a little of what earlier removals quarantined: a hostile
        // profile's leftovers cost another profile's install at most this.
        crate::sys::fs::remove_stale_temps(&parent);
        crate::sys::remove::clear_quarantine(&parent, Instant::now() + QUARANTINE_SHARE);
        // Everything is unpacked next to its final place, then renamed there.
        let tmp = tempfile::Builder::new()
            .prefix(&format!("{}{}-", crate::sys::fs::temp_prefix(), p.reference()))
            .tempdir_in(&parent)
            .map_err(io(format!("cannot create a folder in {}", parent.display())))?;
        unpack(p, &files, tmp.path(), &self.limits)?;
        replace_dir(&parent, p, tmp)?;
        let log = p.dir.join(LOG_FILE);
        self.build(p, &parent, &log)?;
        let seconds = start.elapsed().as_secs_f64();
        write_state(p, &log, seconds)?;
        drop(lock);
        Ok(Done {
            reference: p.reference(),
            dir: p.dir.clone(),
            already: false,
            fetched: files.into_iter().map(|(n, f)| (n, f.origin)).collect(),
            seconds,
        })
    }
}

/// The plan's downloads as fetched: (file name, where it is), or why one is missing.
fn plan_files(
    p: &Plan,
    fetched: &HashMap<String, Result<Fetched, Arc<DownloadError>>>,
) -> Result<Vec<(String, Fetched)>, InstallError> {
    let mut files = Vec::new();
    for w in p.wants() {
        match fetched.get(&w.sha256) {
            Some(Ok(f)) => files.push((w.file.clone(), f.clone())),
            Some(Err(e)) => return Err(InstallError::Download(e.to_string())),
            None => return Err(InstallError::Download(format!("{}: not fetched", w.file))),
        }
    }
    Ok(files)
}

/// The lock that lets one engine at a time install a given profile
/// version; held until the returned file is dropped.
fn lock_install(parent: &Path, p: &Plan) -> Result<crate::sys::lock::LockFile, InstallError> {
    let lock_path = parent.join(format!(".{}.lock", p.reference()));
    crate::sys::lock::lock(&lock_path).map_err(io(format!("cannot lock {}", lock_path.display())))
}

/// Puts each download into `dir`: unpacked when it is an archive (unless
/// `extract: false`), else copied. File names were checked when the profile
/// was loaded; they are checked again here, where they become paths.
fn unpack(p: &Plan, files: &[(String, Fetched)], dir: &Path, limits: &extract::Limits) -> Result<(), InstallError> {
    for (file, f) in files {
        let d = p.downloads.iter().find(|d| d.file == *file).expect("plan download");
        let format = extract::Format::of(file).filter(|_| d.extract != Some(false));
        match format {
            Some(fmt) => extract::extract(&f.path, file, fmt, dir, limits).map_err(|e| match e {
                extract::ExtractError::Interrupted => InstallError::Interrupted,
                e => InstallError::Extract(e),
            })?,
            None => {
                let to = crate::model::names::join(dir, file).map_err(|e| InstallError::name(file, e))?;
                std::fs::copy(&f.path, &to).map_err(io(format!("cannot copy {file} to {}", to.display())))?;
            }
        }
    }
    Ok(())
}

/// Moves the unpacked `tmp` to the plan's install directory, in place of
/// an older install.
/// How long an install spends clearing earlier installs' quarantine.
const QUARANTINE_SHARE: std::time::Duration = std::time::Duration::from_secs(2);

fn replace_dir(parent: &Path, p: &Plan, tmp: tempfile::TempDir) -> Result<(), InstallError> {
    if p.dir.exists() {
        let old = parent.join(format!("{}old-{}", crate::sys::fs::temp_prefix(), p.reference()));
        std::fs::rename(&p.dir, &old).map_err(io(format!("cannot move {} aside", p.dir.display())))?;
        // What an earlier build left can be a tree made to be slow to
        // remove: within the deadline and a moment after Ctrl-C, the rest
        // quarantined (cleared a little at each install, and by `recover`).
        drop(Transient(Some(old)));
    }
    let mut kept = Transient(Some(tmp.keep()));
    let at = kept.path().to_path_buf();
    std::fs::rename(&at, &p.dir).map_err(io(format!("cannot rename {} to {}", at.display(), p.dir.display())))?;
    // It is the install now.
    kept.0 = None;
    Ok(())
}

/// A folder engine made for an install, removed when dropped — within
/// the removal deadline and a moment after Ctrl-C; what is left goes to
/// its parent's quarantine folder, never stays under its name.
struct Transient(Option<PathBuf>);

impl Transient {
    fn path(&self) -> &Path {
        self.0.as_deref().unwrap_or(Path::new(""))
    }

    /// Removes it now; where what was left went, when it could not all go.
    fn finish(mut self) -> Option<PathBuf> {
        use crate::sys::remove::{Removed, remove_or_quarantine};
        let p = self.0.take()?;
        match remove_or_quarantine(&p, None) {
            Ok(Removed::Gone) => None,
            Ok(Removed::Quarantined(q)) => Some(q),
            Err(_) => Some(p),
        }
    }
}

impl Drop for Transient {
    fn drop(&mut self) {
        if let Some(p) = self.0.take() {
            let _ = crate::sys::remove::remove_or_quarantine(&p, None);
        }
    }
}

/// Frees what a build that outgrew its space wrote (it may have brought
/// the file system close to full), keeping its log: the folder is moved
/// aside and removed (or quarantined) while the log stays open, then
/// made again holding only the log.
fn discard_build(p: &Plan, parent: &Path, log: &Path) -> Option<PathBuf> {
    // The log may be gone or replaced by the build: the rest goes anyway.
    let kept = crate::sys::fs::open_regular(log).ok();
    let aside = parent.join(format!("{}{}-outgrown", crate::sys::fs::temp_prefix(), p.reference()));
    std::fs::rename(&p.dir, &aside).ok()?;
    // Removed within the deadline (a moment after Ctrl-C), or set aside
    // where the next install and `engine recover` clear it: said.
    let left = Transient(Some(aside)).finish();
    // Its last MiB: the build could have grown the log itself.
    const KEEP: u64 = 1 << 20;
    if std::fs::create_dir(&p.dir).is_err() {
        return left;
    }
    if let (Some(mut kept), Ok(mut f)) = (kept, crate::sys::fs::append(log)) {
        let len = kept.metadata().map_or(0, |m| m.len());
        if std::io::Seek::seek(&mut kept, std::io::SeekFrom::Start(len.saturating_sub(KEEP))).is_ok() {
            let _ = std::io::copy(&mut std::io::Read::take(&mut kept, KEEP), &mut f);
        }
    }
    left
}

/// Records the finished install ([`STATE_FILE`]): what it installed, from which inputs.
fn write_state(p: &Plan, log: &Path, seconds: f64) -> Result<(), InstallError> {
    let state = State {
        profile: p.id.clone(),
        version: p.version.clone(),
        inputs: p
            .downloads
            .iter()
            .map(|d| (d.file.clone(), d.sha256.clone().unwrap_or_default().to_ascii_lowercase()))
            .collect(),
        items: p.keys.clone(),
        installed_at: crate::sys::time::now(),
        seconds,
        log: log.display().to_string(),
    };
    let json = serde_json::to_vec_pretty(&state).expect("state serializes");
    let state_file = p.dir.join(STATE_FILE);
    crate::sys::fs::write_atomic(&state_file, &json)
        .map_err(|source| InstallError::Io { what: format!("cannot write {}", state_file.display()), source })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn when_filters_by_the_tests_values() {
        let mut b = IndexMap::new();
        b.insert("source".to_string(), "debian".to_string());
        let mut w = IndexMap::new();
        w.insert("source".to_string(), Scalar("debian".into()));
        assert!(when_matches(&w, &b));
        w.insert("source".to_string(), Scalar("kernel-org".into()));
        assert!(!when_matches(&w, &b));
        assert!(when_matches(&IndexMap::new(), &b));
    }
}
