//! `files`: the fs_mark-class workload. N files of a size, over D
//! subdirectories, by T threads, with an fsync before each close or not;
//! Files/s. Per file it makes the system calls fs_mark 3.3 makes (seen with
//! strace): mkdir of the file's directory (EEXIST after the first),
//! openat(O_RDWR|O_CREAT|O_TRUNC, 0666), writes of 16 KiB from a zeroed
//! buffer, fsync (when syncing), close — and names files as fs_mark does:
//! 8 hex digits, 8 `~`, 24 random characters.

use engine_sdk::{Config, Context, Error, Report, Workload};
use std::ffi::CString;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

/// fs_mark's write size.
const CHUNK: usize = 16 * 1024;

#[derive(Debug)]
pub struct Files {
    files: u64,
    size: u64,
    dirs: u32,
    threads: u32,
    fsync: bool,
}

impl Workload for Files {
    const KEYS: &'static [&'static str] = &["files", "size", "dirs", "threads", "fsync"];
    const RESULTS: &'static [&'static str] = &["files_per_second", "seconds", "bandwidth"];

    fn new(c: &Config) -> Result<Self, Error> {
        c.only(Self::KEYS)?;
        let files = c.parse_or::<u64>("files", 1000)?;
        if files == 0 {
            return Err(Error::config("files", "must be at least 1"));
        }
        let threads = c.parse_or::<u32>("threads", 1)?;
        if threads == 0 || threads > 256 {
            return Err(Error::config("threads", format!("{threads}: use 1 to 256")));
        }
        Ok(Files {
            files,
            size: c.size_or("size", 1 << 20)?,
            dirs: c.parse_or::<u32>("dirs", 0)?,
            threads,
            fsync: c.bool_or("fsync", true)?,
        })
    }

    fn run(&mut self, cx: &dyn Context) -> Result<Report, Error> {
        let root = cx.scratch_dir().join("files");
        std::fs::create_dir(&root).map_err(|e| Error::io(&format!("mkdir {}", root.display()), &e))?;
        let stop = AtomicBool::new(false);
        // Files per thread: `files` in all, as fs_mark's -n counts per thread × -t.
        let per = self.files.div_ceil(self.threads as u64);
        let t0 = Instant::now();
        let (size, dirs, fsync, threads, files) = (self.size, self.dirs, self.fsync, self.threads, self.files);
        let ops = super::Ops::new(&[("files_s", "1/s", 1.0)]);
        let results: Vec<Result<u64, Error>> = std::thread::scope(|s| {
            let handles: Vec<_> = (0..threads)
                .map(|t| {
                    let n = per.min(files.saturating_sub(per * t as u64));
                    let dir = if threads > 1 { root.join(format!("{t:02}")) } else { root.clone() };
                    let w = Watch { stop: &stop, ops: &ops };
                    s.spawn(move || write_files(&dir, n, size, dirs, fsync, t as u64, w))
                })
                .collect();
            super::join_watching(cx, &stop, handles, "a files thread", Some(&ops))
        });
        let secs = t0.elapsed().as_secs_f64();
        if cx.cancelled() {
            return Err(Error::cancelled());
        }
        let mut made = 0;
        for r in results {
            made += r?;
        }
        Ok(Report::new()
            .value("files_per_second", made as f64 / secs)
            .value("seconds", secs)
            .value("bandwidth", (made * self.size) as f64 / secs / 1e6)
            .line(format!(
                "{made} files of {} bytes in {} dir(s) by {} thread(s), fsync {}: {secs:.6} s",
                self.size,
                self.dirs.max(1),
                self.threads,
                if self.fsync { "before close" } else { "off" }
            )))
    }
}

/// fs_mark's name: seconds in hex, `~` padding, random upper-case letters and digits.
fn name(x: &mut u64, secs: u64) -> String {
    const CHARS: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
    let mut s = format!("{:08x}~~~~~~~~", secs as u32);
    for _ in 0..24 {
        *x ^= *x << 13;
        *x ^= *x >> 7;
        *x ^= *x << 17;
        s.push(CHARS[(*x % CHARS.len() as u64) as usize] as char);
    }
    s
}

fn cpath(p: &Path) -> CString {
    CString::new(p.as_os_str().as_bytes()).expect("paths have no NUL")
}

/// What every files thread shares: when to stop, what it counted.
struct Watch<'a> {
    stop: &'a AtomicBool,
    ops: &'a super::Ops,
}

/// One thread's files, with fs_mark's system calls.
fn write_files(dir: &Path, n: u64, size: u64, dirs: u32, fsync: bool, seed: u64, w: Watch<'_>) -> Result<u64, Error> {
    let Watch { stop, ops } = w;
    // The thread's own folder, once (fs_mark makes it before timing too).
    std::fs::create_dir_all(dir).map_err(|e| Error::io(&format!("mkdir {}", dir.display()), &e))?;
    let buf = vec![0u8; CHUNK];
    let mut x = 0x2545_F491_4F6C_DD1D ^ (seed + 1);
    let secs = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_secs()).unwrap_or(0);
    let mut made = 0;
    for i in 0..n {
        if stop.load(Ordering::Relaxed) {
            break;
        }
        let d: PathBuf = if dirs > 0 { dir.join(format!("{:02}", i % dirs as u64)) } else { dir.to_path_buf() };
        let cd = cpath(&d);
        // SAFETY: valid C string; EEXIST after the first file is expected (fs_mark does the same).
        if unsafe { libc::mkdir(cd.as_ptr(), 0o777) } != 0 {
            let e = std::io::Error::last_os_error();
            if e.raw_os_error() != Some(libc::EEXIST) {
                return Err(Error::io(&format!("mkdir {}", d.display()), &e));
            }
        }
        let path = d.join(name(&mut x, secs));
        let cp = cpath(&path);
        // SAFETY: valid C string; we own the descriptor until close below.
        let fd = unsafe { libc::open(cp.as_ptr(), libc::O_RDWR | libc::O_CREAT | libc::O_TRUNC, 0o666) };
        if fd < 0 {
            return Err(Error::io(&format!("create {}", path.display()), &std::io::Error::last_os_error()));
        }
        let fail = |what: &str| {
            let e = std::io::Error::last_os_error();
            // SAFETY: closing our own descriptor.
            unsafe { libc::close(fd) };
            Err(Error::io(&format!("{what} {}", path.display()), &e))
        };
        let mut left = size;
        while left > 0 {
            let n = (left as usize).min(CHUNK);
            // SAFETY: buf holds at least n bytes.
            let w = unsafe { libc::write(fd, buf.as_ptr().cast(), n) };
            if w < 0 {
                return fail("write");
            }
            left -= w as u64;
        }
        // SAFETY: our descriptor.
        if fsync && unsafe { libc::fsync(fd) } != 0 {
            return fail("fsync");
        }
        // SAFETY: our descriptor, closed once.
        if unsafe { libc::close(fd) } != 0 {
            return Err(Error::io(&format!("close {}", path.display()), &std::io::Error::last_os_error()));
        }
        made += 1;
        ops.add(0, 1);
    }
    Ok(made)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workloads::testing::Cx;

    fn count(dir: &Path) -> (u64, u64, u64) {
        let (mut files, mut bytes, mut dirs) = (0, 0, 0);
        for e in std::fs::read_dir(dir).unwrap().flatten() {
            let m = e.metadata().unwrap();
            if m.is_dir() {
                dirs += 1;
                let (f, b, d) = count(&e.path());
                files += f;
                bytes += b;
                dirs += d;
            } else {
                files += 1;
                bytes += m.len();
            }
        }
        (files, bytes, dirs)
    }

    #[test]
    fn makes_exactly_the_files_asked() {
        for (files, threads, dirs) in [(10u64, 1u32, 0u32), (25, 4, 3)] {
            let d = tempfile::tempdir().unwrap();
            let cfg: Config = [
                ("files", files.to_string()),
                ("threads", threads.to_string()),
                ("dirs", dirs.to_string()),
                ("size", "40000".into()),
                ("fsync", "no".into()),
            ]
            .into_iter()
            .collect();
            let r = Files::new(&cfg).unwrap().run(&Cx::new(d.path())).unwrap();
            let (f, b, _) = count(&d.path().join("files"));
            assert_eq!((f, b), (files, files * 40000), "{}", r.log);
            assert!(r.get("files_per_second").unwrap() > 0.0);
            // fs_mark's names: 8 hex, 8 `~`, 24 characters.
            let any = walk_one(&d.path().join("files"));
            assert_eq!(any.len(), 40, "{any}");
            assert_eq!(&any[8..16], "~~~~~~~~");
        }
    }

    fn walk_one(dir: &Path) -> String {
        match std::fs::read_dir(dir).unwrap().flatten().next() {
            Some(e) if e.metadata().unwrap().is_dir() => walk_one(&e.path()),
            Some(e) => e.file_name().to_string_lossy().to_string(),
            None => String::new(),
        }
    }
}
