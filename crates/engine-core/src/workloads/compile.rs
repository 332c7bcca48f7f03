//! `compile`: the compilebench-class workload (compilebench is not packaged
//! for Debian 12 and needs Python 2). It builds kernel-like source trees and
//! times what a kernel build does to a file system, as compilebench reports
//! it: the initial create of the trees (MB/s), a "compile" that writes an
//! object file next to every `.c` file (MB/s), reading the whole compiled
//! tree from a cold cache (MB/s), stat of every file and directory
//! (seconds), and deleting the trees (seconds). Writing phases end with a
//! `syncfs`, so their data is on the device when the clock stops.
//!
//! The tree's shape was derived from the Linux 6.1 source tree (Debian
//! `linux-source-6.1`) by `scripts/derive-tree-shape.py`: 5,096 directories,
//! 78,579 files (40.7 % `.c`, 29.8 % `.h`, 29.5 % other), 1.30 GB. The
//! tables below are that script's output: quantiles of files per directory
//! and of each kind's size. A tree is drawn from them with a seeded
//! generator (log-uniform between quantiles), so every run builds the same
//! tree; `scale: 1` gives about the kernel's size, the default 0.25 about
//! compilebench's (a 2.6.20 tree). Object files are 1.5 × their source's
//! size (compilebench replays recorded object sizes, which we do not have;
//! the ratio is a stated assumption and a config key).

use engine_sdk::{Config, Context, Error, Figure, Report, Workload};
use std::io::{Read, Write};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

// scripts/derive-tree-shape.py /usr/src/linux-source-6.1.tar.xz
const QUANTS: [f64; 25] = [
    0.0, 0.05, 0.10, 0.15, 0.20, 0.25, 0.30, 0.35, 0.40, 0.45, 0.50, 0.55, 0.60, 0.65, 0.70, 0.75, 0.80, 0.85, 0.90,
    0.95, 0.975, 0.99, 0.995, 0.999, 1.0,
];
const DIRS: u32 = 5096;
const FILES_PER_DIR: [u32; 25] =
    [0, 0, 1, 2, 2, 3, 3, 4, 4, 5, 6, 7, 8, 9, 11, 14, 18, 23, 32, 52, 89, 156, 210, 484, 2541];
const KIND_PERMILLE: [u32; 3] = [407, 298, 295];
const C_SIZE: [u32; 25] = [
    18, 1046, 1761, 2427, 3166, 3907, 4734, 5672, 6684, 7854, 9196, 10804, 12685, 14967, 17946, 21703, 26642, 33781,
    44965, 68473, 96229, 149788, 196974, 358123, 1747157,
];
const H_SIZE: [u32; 25] = [
    0, 285, 418, 556, 723, 916, 1131, 1364, 1627, 1943, 2339, 2808, 3404, 4195, 5199, 6536, 8408, 11401, 17217, 33107,
    58592, 146292, 495783, 5179756, 23944620,
];
const OTHER_SIZE: [u32; 25] = [
    0, 125, 221, 328, 444, 592, 775, 949, 1162, 1396, 1675, 2029, 2412, 2892, 3573, 4563, 5959, 7905, 11440, 19130,
    30044, 55523, 85071, 166973, 1215659,
];

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    C,
    H,
    Other,
}

/// One file of a tree: where, what kind, how big.
#[derive(Debug, Clone)]
struct File {
    dir: usize,
    name: String,
    kind: Kind,
    size: u64,
}

/// A tree: directory paths (relative, parents first) and files.
#[derive(Debug, Clone)]
struct Tree {
    dirs: Vec<PathBuf>,
    files: Vec<File>,
}

struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// A value of the distribution given by quantile `table` at `u` in [0, 1):
/// log-uniform between neighbouring quantiles (linear next to zero).
fn sample(table: &[u32; 25], u: f64, log: bool) -> f64 {
    for i in 0..QUANTS.len() - 1 {
        if u <= QUANTS[i + 1] {
            let (a, b) = (table[i] as f64, table[i + 1] as f64);
            let f = (u - QUANTS[i]) / (QUANTS[i + 1] - QUANTS[i]);
            return if log && a > 0.0 && b > 0.0 { a * (b / a).powf(f) } else { a + (b - a) * f };
        }
    }
    table[table.len() - 1] as f64
}

impl Tree {
    fn draw(scale: f64, seed: u64) -> Tree {
        let mut r = Rng(seed | 1);
        let ndirs = ((DIRS as f64 * scale).round() as usize).max(1);
        let mut dirs: Vec<PathBuf> = vec![PathBuf::new()];
        let mut files = Vec::new();
        for i in 1..ndirs {
            let parent = (r.next() % i as u64) as usize;
            dirs.push(dirs[parent].join(format!("d{i}")));
        }
        for dir in 0..ndirs {
            let n = sample(&FILES_PER_DIR, r.unit(), false).round() as u64;
            for j in 0..n {
                let k = r.next() % 1000;
                let (kind, table, ext) = if k < KIND_PERMILLE[0] as u64 {
                    (Kind::C, &C_SIZE, "c")
                } else if k < (KIND_PERMILLE[0] + KIND_PERMILLE[1]) as u64 {
                    (Kind::H, &H_SIZE, "h")
                } else {
                    (Kind::Other, &OTHER_SIZE, "txt")
                };
                let size = sample(table, r.unit(), true).round() as u64;
                files.push(File { dir, name: format!("f{j}.{ext}"), kind, size });
            }
        }
        Tree { dirs, files }
    }

    fn bytes(&self) -> u64 {
        self.files.iter().map(|f| f.size).sum()
    }
}

#[derive(Debug)]
pub struct Compile {
    scale: f64,
    trees: u32,
    object_ratio: f64,
    seed: u64,
}

impl Workload for Compile {
    const KEYS: &'static [&'static str] = &["scale", "trees", "object_ratio", "seed"];
    const RESULTS: &'static [&'static str] =
        &["initial_create", "compile", "read_compiled_tree", "stat_tree", "delete_tree"];

    fn new(c: &Config) -> Result<Self, Error> {
        c.only(Self::KEYS)?;
        let scale = c.parse_or::<f64>("scale", 0.25)?;
        if !(scale > 0.0 && scale <= 4.0) {
            return Err(Error::config(
                "scale",
                format!("{scale}: use more than 0 and at most 4 (1 is a whole kernel tree)"),
            ));
        }
        let trees = c.parse_or::<u32>("trees", 1)?;
        if trees == 0 || trees > 64 {
            return Err(Error::config("trees", format!("{trees}: use 1 to 64")));
        }
        let object_ratio = c.parse_or::<f64>("object_ratio", 1.5)?;
        if !(object_ratio > 0.0 && object_ratio <= 20.0) {
            return Err(Error::config("object_ratio", format!("{object_ratio}: use more than 0 and at most 20")));
        }
        Ok(Compile { scale, trees, object_ratio, seed: c.parse_or::<u64>("seed", 2007)? })
    }

    fn run(&mut self, cx: &dyn Context) -> Result<Report, Error> {
        let root = cx.scratch_dir();
        let t = Trees {
            tree: Tree::draw(self.scale, self.seed),
            root,
            roots: (0..self.trees).map(|t| root.join(format!("tree-{t}"))).collect(),
        };
        let tree = &t.tree;
        let buf = text_buffer();
        let (created, create_s) = timed(cx, || create(cx, &t, &buf))?;
        let created_at = cx.elapsed();
        let (objects, compile_s) = timed(cx, || self.compile(cx, &t, &buf))?;
        let compiled_at = cx.elapsed();
        let paths = compiled_files(&t);
        let cold = match cx.drop_caches() {
            Ok(()) => "dropped (root)",
            Err(_) => {
                for p in &paths {
                    evict(p);
                }
                "evicted file by file (posix_fadvise)"
            }
        };
        let (read, read_s) = timed(cx, || read_all(&paths))?;
        // Its own intervals: one per phase that moves data, at its end.
        let mb = |b: u64, s: f64| b as f64 / s / 1e6;
        if cx.interval_every().is_some() {
            let ends = [created_at, compiled_at, cx.elapsed()];
            for ((bytes, secs), end) in
                [(created, create_s), (objects, compile_s), (read, read_s)].into_iter().zip(ends)
            {
                cx.interval(end, &[Figure::new("mb_s", "MB/s", mb(bytes, secs))]);
            }
        }
        if cx.cancelled() {
            return Err(Error::cancelled());
        }
        let ((), stat_s) = timed(cx, || stat_all(&t, &paths))?;
        let ((), delete_s) = timed(cx, || delete(&t))?;
        Ok(Report::new()
            .value("initial_create", mb(created, create_s))
            .value("compile", mb(objects, compile_s))
            .value("read_compiled_tree", mb(read, read_s))
            .value("stat_tree", stat_s)
            .value("delete_tree", delete_s)
            .line(format!(
                "{} tree(s) of {} directories and {} files ({} bytes; scale {}): created in {create_s:.3} s, {} bytes of objects in {compile_s:.3} s, read {read} bytes ({} files, cache {cold}) in {read_s:.3} s, stat in {stat_s:.3} s, deleted in {delete_s:.3} s",
                self.trees,
                tree.dirs.len(),
                tree.files.len(),
                tree.bytes(),
                self.scale,
                objects,
                paths.len(),
            )))
    }
}

impl Compile {
    /// The "compile": an object file next to each `.c` file, synced. Returns the bytes written.
    fn compile(&self, cx: &dyn Context, t: &Trees, buf: &[u8]) -> Result<u64, Error> {
        let mut objects = 0u64;
        for r in &t.roots {
            for f in t.tree.files.iter().filter(|f| f.kind == Kind::C) {
                let size = (f.size as f64 * self.object_ratio).round() as u64;
                let name = f.name.replace(".c", ".o");
                write_file(&r.join(&t.tree.dirs[f.dir]).join(name), size, buf)?;
                objects += size;
            }
            cancelled(cx)?;
        }
        syncfs(t.root)?;
        Ok(objects)
    }
}

/// `phase`'s value and how long it took, in seconds of the trial's clock.
fn timed<T>(cx: &dyn Context, phase: impl FnOnce() -> Result<T, Error>) -> Result<(T, f64), Error> {
    let t0 = cx.elapsed();
    let v = phase()?;
    Ok((v, (cx.elapsed() - t0).as_secs_f64()))
}

fn cancelled(cx: &dyn Context) -> Result<(), Error> {
    if cx.cancelled() { Err(Error::cancelled()) } else { Ok(()) }
}

/// The trees of a trial: their shape, the scratch directory they are in,
/// and each one's folder there.
struct Trees<'a> {
    tree: Tree,
    root: &'a Path,
    roots: Vec<PathBuf>,
}

/// The initial create: every tree's directories and files, synced. Returns the bytes written.
fn create(cx: &dyn Context, t: &Trees, buf: &[u8]) -> Result<u64, Error> {
    let mut created = 0u64;
    for r in &t.roots {
        for d in &t.tree.dirs {
            let p = r.join(d);
            std::fs::create_dir_all(&p).map_err(|e| Error::io(&format!("mkdir {}", p.display()), &e))?;
        }
        for f in &t.tree.files {
            write_file(&r.join(&t.tree.dirs[f.dir]).join(&f.name), f.size, buf)?;
            created += f.size;
        }
        cancelled(cx)?;
    }
    syncfs(t.root)?;
    Ok(created)
}

/// Every file of the compiled trees: sources and objects.
fn compiled_files(t: &Trees) -> Vec<PathBuf> {
    let mut paths: Vec<PathBuf> = Vec::with_capacity(t.tree.files.len() * 2);
    for r in &t.roots {
        for f in &t.tree.files {
            let d = r.join(&t.tree.dirs[f.dir]);
            paths.push(d.join(&f.name));
            if f.kind == Kind::C {
                paths.push(d.join(f.name.replace(".c", ".o")));
            }
        }
    }
    paths
}

/// Reads every file whole; returns the bytes read.
fn read_all(paths: &[PathBuf]) -> Result<u64, Error> {
    let mut read = 0u64;
    let mut rbuf = vec![0u8; 1 << 16];
    for p in paths {
        let mut f = crate::sys::fs::open_regular(p).map_err(|e| Error::io(&format!("open {}", p.display()), &e))?;
        loop {
            let n = f.read(&mut rbuf).map_err(|e| Error::io(&format!("read {}", p.display()), &e))?;
            if n == 0 {
                break;
            }
            read += n as u64;
        }
    }
    Ok(read)
}

/// Stats every directory of the trees, then every file.
fn stat_all(t: &Trees, paths: &[PathBuf]) -> Result<(), Error> {
    for r in &t.roots {
        for d in &t.tree.dirs {
            std::fs::symlink_metadata(r.join(d)).map_err(|e| Error::io("stat", &e))?;
        }
    }
    for p in paths {
        std::fs::symlink_metadata(p).map_err(|e| Error::io(&format!("stat {}", p.display()), &e))?;
    }
    Ok(())
}

/// Deletes the trees, synced.
fn delete(t: &Trees) -> Result<(), Error> {
    for r in &t.roots {
        std::fs::remove_dir_all(r).map_err(|e| Error::io(&format!("delete {}", r.display()), &e))?;
    }
    syncfs(t.root)
}

/// 64 KiB of printable text-like bytes: compresses like source, not like zeros.
fn text_buffer() -> Vec<u8> {
    let mut r = Rng(0x1D0C_0DE5);
    (0..1 << 16).map(|_| b" etaoinshrdlucmfwypvbgkqjxz_(){};\n"[(r.next() % 34) as usize]).collect()
}

fn write_file(p: &Path, size: u64, buf: &[u8]) -> Result<(), Error> {
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o644)
        .open(p)
        .map_err(|e| Error::io(&format!("create {}", p.display()), &e))?;
    let mut left = size as usize;
    while left > 0 {
        let n = left.min(buf.len());
        f.write_all(&buf[..n]).map_err(|e| Error::io(&format!("write {}", p.display()), &e))?;
        left -= n;
    }
    Ok(())
}

fn syncfs(dir: &Path) -> Result<(), Error> {
    use std::os::fd::AsRawFd;
    let d = std::fs::File::open(dir).map_err(|e| Error::io(&format!("open {}", dir.display()), &e))?;
    // SAFETY: syncfs on a descriptor we own.
    if unsafe { libc::syncfs(d.as_raw_fd()) } != 0 {
        return Err(Error::io("syncfs", &std::io::Error::last_os_error()));
    }
    Ok(())
}

fn evict(p: &Path) {
    use std::os::fd::AsRawFd;
    if let Ok(f) = crate::sys::fs::open_regular(p) {
        // SAFETY: fadvise on a descriptor we own; a failure leaves pages cached.
        unsafe { libc::posix_fadvise(f.as_raw_fd(), 0, 0, libc::POSIX_FADV_DONTNEED) };
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workloads::testing::Cx;

    #[test]
    fn the_full_tree_is_kernel_sized_and_always_the_same() {
        let t = Tree::draw(1.0, 2007);
        assert_eq!(t.dirs.len(), 5096);
        // Within 25 % of the real tree's 78,579 files and 1.30 GB.
        assert!((t.files.len() as f64 / 78579.0 - 1.0).abs() < 0.25, "{}", t.files.len());
        assert!((t.bytes() as f64 / 1.2987e9 - 1.0).abs() < 0.25, "{}", t.bytes());
        let again = Tree::draw(1.0, 2007);
        assert_eq!((again.files.len(), again.bytes()), (t.files.len(), t.bytes()));
        let c = t.files.iter().filter(|f| f.kind == Kind::C).count() as f64 / t.files.len() as f64;
        assert!((c - 0.407).abs() < 0.02, "{c}");
    }

    #[test]
    fn a_small_tree_runs_every_phase_with_exact_bytes() {
        let d = tempfile::tempdir().unwrap();
        let cfg: Config = [("scale", "0.005"), ("trees", "2")].into_iter().collect();
        let mut w = Compile::new(&cfg).unwrap();
        let tree = Tree::draw(0.005, 2007);
        let r = w.run(&Cx::new(d.path())).unwrap();
        for k in Compile::RESULTS {
            assert!(r.get(k).unwrap() > 0.0, "{k}: {}", r.log);
        }
        let objects: u64 =
            tree.files.iter().filter(|f| f.kind == Kind::C).map(|f| (f.size as f64 * 1.5).round() as u64).sum();
        assert!(r.log.contains(&format!("{} bytes of objects", 2 * objects)), "{}", r.log);
        assert!(r.log.contains(&format!("read {} bytes", 2 * (tree.bytes() + objects))), "{}", r.log);
        assert_eq!(std::fs::read_dir(d.path()).unwrap().count(), 0, "the trees are deleted");
        assert!(Compile::new(&[("scale", "0")].into_iter().collect()).is_err());
    }
}
