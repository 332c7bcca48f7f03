//! The attack suite (issues 37 and 44): a publisher with a valid key who
//! writes hostile profiles, suites, indexes, archives and plugins. Each test
//! publishes what it attacks with into a signed repository of its own (a
//! folder, added with `engine repo add`), runs it as a user would, and checks
//! that nothing outside the test's own directories changed and that the run
//! says what was denied. A new profile field that touches a path, a
//! privilege or a person's screen gets its test here.
//!
//! One file per class of attack: `sandbox` (privilege and planted paths),
//! `limits` (resources and the environment), `names` (index entries and
//! archives), `text` (terminals, CSV, Markdown, XML), `plugins` (WASM) and `world`
//! (the user's terminal, sockets outside, one budget per test).

mod cleanup;
mod limits;
mod names;
mod plugins;
mod results;
mod sandbox;
mod staging;
mod text;
mod world;

use crate::common::{Env, Run};
use crate::repo::{Source, keygen, publish};
use std::path::{Path, PathBuf};

/// A hostile publisher's repository: profiles and suites written by the
/// test, signed with a key of its own, published into a folder and added to
/// the test's ENGINE_HOME as `name`.
pub struct Hostile {
    pub src: Source,
    _keys: tempfile::TempDir,
    pub out: tempfile::TempDir,
    pub pubkey: String,
    pub secret: String,
}

impl Hostile {
    pub fn new(env: &Env) -> Hostile {
        let keys = tempfile::tempdir().unwrap();
        let (pubkey, secret) = keygen(env, keys.path(), "hostile");
        Hostile { src: Source::new(), _keys: keys, out: tempfile::tempdir().unwrap(), pubkey, secret }
    }

    /// `test-profiles/<id>/profile.yaml` as written.
    pub fn profile(&self, id: &str, yaml: &str) -> &Self {
        self.src.raw_profile(id, yaml);
        self
    }

    /// Another file in the profile's folder (a plugin, a helper script).
    pub fn file(&self, id: &str, name: &str, bytes: &[u8]) -> &Self {
        let d = self.src.dir().join("test-profiles").join(id);
        std::fs::create_dir_all(&d).unwrap();
        std::fs::write(d.join(name), bytes).unwrap();
        self
    }

    pub fn suite(&self, id: &str, yaml: &str) -> &Self {
        self.src.suite(id, yaml);
        self
    }

    /// Publishes the source (signed) and adds it as repository `name`.
    pub fn add(&self, env: &Env, name: &str) -> Run {
        let r = publish(env, &self.src, self.out.path(), &self.secret);
        assert_eq!(r.code, 0, "publishing failed: {r:?}");
        env.run(&["repo", "add", name, self.out.path().to_str().unwrap(), "--key", &self.pubkey])
    }
}

/// A profile whose one trial runs `script` with `shell` and prints
/// `value: 1` only when the script succeeds; `extra` is more YAML at the top
/// level (steps go in `executor_extra`, indented under `external:`).
/// Held by a test whose sockets hold memory no cgroup is charged for, and
/// by one that must run to its end under a small limit: the socket watch
/// counts what the machine's uncharged socket memory grows by as the
/// running test's own, whoever holds it.
pub static UNCHARGED_SOCKETS: std::sync::Mutex<()> = std::sync::Mutex::new(());

pub fn script_profile(id: &str, shell: &str, script: &str, extra: &str, executor_extra: &str) -> String {
    let body = format!("{script} && echo value: 1");
    format!(
        "id: {id}\nversion: 1.0.0\ntitle: Hostile {id}\ntest_type: other\n{extra}executor:\n  external:\n    program: {shell}\n    args: [\"-c\", {body:?}]\n    timeout: 30s\n{executor_extra}results: [{{id: x, unit: U, proportion: HIB}}]\nparsers: [{{result: x, regex: 'value: (?P<value>\\d+)'}}]\n"
    )
}

/// Files placed outside every test directory, each with known contents,
/// removed at the end whatever happens; [`Bait::unchanged`] says whether any
/// was changed, removed, or joined by a new file in its folder.
pub struct Bait {
    pub files: Vec<(PathBuf, Vec<u8>)>,
    /// Folders whose listing must not change (the bait files' own), as far
    /// as names with this bait's tag go (tests run in parallel).
    pub dirs: Vec<(PathBuf, Vec<String>)>,
    made: Vec<PathBuf>,
    tag: String,
}

impl Bait {
    /// A unique bait file in each of `dirs` (mode 0600, owned by root), and
    /// `extra` (path, contents) files too.
    pub fn new(tag: &str, dirs: &[&str]) -> Bait {
        use std::os::unix::fs::PermissionsExt;
        let mut b = Bait { files: Vec::new(), dirs: Vec::new(), made: Vec::new(), tag: tag.to_string() };
        for d in dirs {
            let p = Path::new(d).join(format!("engine-bait-{tag}-{}", std::process::id()));
            let body = format!("secret of {d} {tag}\n").into_bytes();
            std::fs::write(&p, &body).unwrap();
            std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o600)).unwrap();
            b.made.push(p.clone());
            b.files.push((p, body));
        }
        for d in dirs {
            b.dirs.push((PathBuf::from(d), listing(Path::new(d))));
        }
        b
    }

    /// What changed: an empty list when nothing did.
    pub fn changes(&self) -> Vec<String> {
        let mut out = Vec::new();
        for (p, body) in &self.files {
            match std::fs::read(p) {
                Ok(b) if &b == body => {}
                Ok(_) => out.push(format!("{} was changed", p.display())),
                Err(e) => out.push(format!("{}: {e}", p.display())),
            }
        }
        for (d, before) in &self.dirs {
            let now = listing(d);
            for n in now.iter().filter(|n| !before.contains(n) && n.contains(&self.tag)) {
                out.push(format!("{} appeared", d.join(n).display()));
            }
        }
        out
    }

    /// The contents of every bait file, to look for in logs and results.
    pub fn secrets(&self) -> Vec<String> {
        self.files.iter().map(|(_, b)| String::from_utf8_lossy(b).trim().to_string()).collect()
    }
}

impl Drop for Bait {
    fn drop(&mut self) {
        for p in &self.made {
            let _ = std::fs::remove_file(p);
        }
    }
}

/// A directory outside every test (`/var/lib/engine-bait-…`), owned by
/// root, with two files; [`BaitDir::changes`] says what of it changed —
/// contents, names, owner or mode. Removed at the end.
pub struct BaitDir {
    pub path: PathBuf,
    before: Vec<(PathBuf, Vec<u8>, u32, u32)>,
}

impl BaitDir {
    pub fn new(tag: &str) -> BaitDir {
        let path = PathBuf::from(format!("/var/lib/engine-bait-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&path);
        std::fs::create_dir_all(path.join("sub")).unwrap();
        std::fs::write(path.join("keep.txt"), format!("keep me {tag}")).unwrap();
        std::fs::write(path.join("sub/also.txt"), "and me").unwrap();
        let mut b = BaitDir { path, before: Vec::new() };
        b.before = b.state();
        b
    }

    fn state(&self) -> Vec<(PathBuf, Vec<u8>, u32, u32)> {
        use std::os::unix::fs::MetadataExt;
        let mut v: Vec<(PathBuf, Vec<u8>, u32, u32)> = std::iter::once(self.path.clone())
            .chain(walk_all(&self.path))
            .map(|p| {
                let m = std::fs::symlink_metadata(&p).unwrap();
                let body = if m.is_file() { std::fs::read(&p).unwrap() } else { Vec::new() };
                (p, body, m.uid(), m.mode())
            })
            .collect();
        v.sort();
        v
    }

    /// What changed since it was made (empty: nothing).
    pub fn changes(&self) -> Vec<String> {
        let now = self.state();
        let mut out = Vec::new();
        for x in &now {
            if !self.before.contains(x) {
                out.push(format!("{} (owner {}, mode {:o}) is new or changed", x.0.display(), x.2, x.3));
            }
        }
        for x in &self.before {
            if !now.iter().any(|n| n.0 == x.0) {
                out.push(format!("{} is gone", x.0.display()));
            }
        }
        out
    }
}

impl Drop for BaitDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.path);
    }
}

/// Every entry under `dir`, directories included (not following links).
fn walk_all(dir: &Path) -> Vec<PathBuf> {
    let mut v = Vec::new();
    for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        v.push(e.path());
        if e.file_type().is_ok_and(|t| t.is_dir()) {
            v.extend(walk_all(&e.path()));
        }
    }
    v
}

/// The reason each failed test of result `name` gives, by profile id.
pub fn failures(env: &Env, name: &str) -> Vec<(String, String)> {
    env.result(name)["failures"]
        .as_array()
        .map(|a| {
            a.iter()
                .map(|f| {
                    (f["profile"].as_str().unwrap_or("").to_string(), f["reason"].as_str().unwrap_or("").to_string())
                })
                .collect()
        })
        .unwrap_or_default()
}

/// The names in `dir` (not recursive), sorted.
pub fn listing(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .map(|rd| rd.flatten().map(|e| e.file_name().to_string_lossy().into_owned()).collect())
        .unwrap_or_default();
    v.sort();
    v
}

pub use crate::common::walk;

/// Everything engine wrote under its home (results, logs), as text: where a
/// leaked secret would show.
pub fn all_text(env: &Env) -> String {
    text_under(env.home.path())
}

/// Everything in saved result `name`'s folder (its trial logs), as text.
pub fn result_text(env: &Env, name: &str) -> String {
    text_under(&env.home.path().join("results").join(name))
}

fn text_under(dir: &Path) -> String {
    walk(dir).iter().filter_map(|p| std::fs::read(p).ok()).map(|b| String::from_utf8_lossy(&b).into_owned()).collect()
}

/// Runs `c` to its end with its output in files: what it printed and the
/// peak resident memory of engine's own process (wait4's `ru_maxrss`, KiB).
pub fn run_measured(c: &mut std::process::Command) -> (Run, u64) {
    let d = tempfile::tempdir().unwrap();
    let (out, err) = (d.path().join("out"), d.path().join("err"));
    c.stdout(std::fs::File::create(&out).unwrap()).stderr(std::fs::File::create(&err).unwrap());
    // Reaped by wait4 below (std's wait would not give the rusage).
    #[allow(clippy::zombie_processes)]
    let child = c.spawn().unwrap();
    let (mut status, mut usage) = (0, unsafe { std::mem::zeroed::<libc::rusage>() });
    // SAFETY: waiting for our own child; both pointers are valid.
    let pid = unsafe { libc::wait4(child.id() as i32, &mut status, 0, &mut usage) };
    assert_eq!(pid, child.id() as i32);
    let code = if libc::WIFEXITED(status) { libc::WEXITSTATUS(status) } else { 128 + libc::WTERMSIG(status) };
    let text = |p: &Path| String::from_utf8_lossy(&std::fs::read(p).unwrap()).into_owned();
    (Run { code, stdout: text(&out), stderr: text(&err) }, usage.ru_maxrss as u64)
}
