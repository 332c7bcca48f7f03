//! `blog`: the BlogBench-class workload (Debian does not package blogbench).
//! Like blogbench, threads play a busy blog server on the scratch
//! directory for a fixed time: writers publish new blogs (a directory of
//! articles and pictures), rewriters replace articles (written to a temporary
//! file and renamed over the old one), commenters append comments, and
//! readers read whole articles, pictures and comment files of published
//! blogs. Defaults are blogbench's: 3 writers, 1 rewriter, 5 commenters,
//! 100 readers, 30 iterations of 10 s. The write score is the number of
//! files written, rewritten or appended to; the read score the number of
//! files read — totals over the run, as blogbench's final scores are, but
//! counted by engine's own rules, so they compare with each other and not
//! with blogbench's numbers.

use engine_sdk::{Config, Context, Error, Report, Workload};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// Files of each kind in a new blog.
const ARTICLES: u64 = 8;
const PICTURES: u64 = 8;

#[derive(Debug)]
pub(crate) struct Blog {
    writers: u32,
    rewriters: u32,
    commenters: u32,
    readers: u32,
    iterations: u32,
    frequency: Duration,
    max_blogs: u64,
}

/// A small, fast generator: sizes, choices and file contents.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        // xorshift64*
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: u64) -> u64 {
        if n == 0 { 0 } else { self.next() % n }
    }
    fn fill(&mut self, buf: &mut [u8]) {
        for chunk in buf.chunks_mut(8) {
            let v = self.next().to_le_bytes();
            chunk.copy_from_slice(&v[..chunk.len()]);
        }
    }
}

struct Shared<'a> {
    root: &'a Path,
    /// Blogs published (complete): ids 0..published.
    published: AtomicU64,
    /// Next blog id a writer takes.
    next: AtomicU64,
    stop: &'a AtomicBool,
    writes: AtomicU64,
    reads: AtomicU64,
    bytes_written: AtomicU64,
    bytes_read: AtomicU64,
    max_blogs: u64,
}

fn io(what: String, e: std::io::Error) -> Error {
    Error::io(&what, &e)
}

impl Shared<'_> {
    fn blog(&self, id: u64) -> PathBuf {
        self.root.join(format!("blog-{id}"))
    }

    fn write_file(&self, path: &Path, size: usize, rng: &mut Rng, buf: &mut Vec<u8>) -> Result<(), Error> {
        buf.resize(size, 0);
        rng.fill(buf);
        let mut f = std::fs::File::create(path).map_err(|e| io(format!("create {}", path.display()), e))?;
        f.write_all(buf).map_err(|e| io(format!("write {}", path.display()), e))?;
        self.bytes_written.fetch_add(size as u64, Ordering::Relaxed);
        Ok(())
    }

    /// Article sizes 1–64 KiB, pictures 8–128 KiB, comments 0.5–4 KiB.
    fn article_size(rng: &mut Rng) -> usize {
        1024 + rng.below(63 * 1024) as usize
    }
    fn picture_size(rng: &mut Rng) -> usize {
        8192 + rng.below(120 * 1024) as usize
    }

    fn writer(&self, seed: u64) -> Result<(), Error> {
        let mut rng = Rng(seed);
        let mut buf = Vec::new();
        while !self.stop.load(Ordering::Relaxed) {
            let id = self.next.fetch_add(1, Ordering::Relaxed);
            if id >= self.max_blogs {
                // The server is full: writers rewrite instead.
                self.next.fetch_sub(1, Ordering::Relaxed);
                self.rewrite_one(&mut rng, &mut buf)?;
                continue;
            }
            let dir = self.blog(id);
            std::fs::create_dir(&dir).map_err(|e| io(format!("mkdir {}", dir.display()), e))?;
            for a in 0..ARTICLES {
                if self.stop.load(Ordering::Relaxed) {
                    break;
                }
                self.write_file(
                    &dir.join(format!("article-{a}.xml")),
                    Self::article_size(&mut rng),
                    &mut rng,
                    &mut buf,
                )?;
                self.writes.fetch_add(1, Ordering::Relaxed);
            }
            for p in 0..PICTURES {
                if self.stop.load(Ordering::Relaxed) {
                    break;
                }
                self.write_file(
                    &dir.join(format!("picture-{p}.jpg")),
                    Self::picture_size(&mut rng),
                    &mut rng,
                    &mut buf,
                )?;
                self.writes.fetch_add(1, Ordering::Relaxed);
            }
            std::fs::File::create(dir.join("comments.xml"))
                .map_err(|e| io(format!("create comments in {}", dir.display()), e))?;
            // Published in order: readers see only complete blogs.
            while self.published.load(Ordering::Acquire) != id {
                if self.stop.load(Ordering::Relaxed) {
                    return Ok(());
                }
                std::thread::yield_now();
            }
            self.published.store(id + 1, Ordering::Release);
        }
        Ok(())
    }

    fn random_blog(&self, rng: &mut Rng) -> Option<PathBuf> {
        let n = self.published.load(Ordering::Acquire);
        (n > 0).then(|| self.blog(rng.below(n)))
    }

    fn rewrite_one(&self, rng: &mut Rng, buf: &mut Vec<u8>) -> Result<(), Error> {
        let Some(dir) = self.random_blog(rng) else {
            std::thread::sleep(Duration::from_millis(1));
            return Ok(());
        };
        let a = rng.below(ARTICLES);
        let tmp = dir.join(format!("article-{a}.xml.tmp-{}", rng.next()));
        self.write_file(&tmp, Self::article_size(rng), rng, buf)?;
        std::fs::rename(&tmp, dir.join(format!("article-{a}.xml")))
            .map_err(|e| io(format!("rename {}", tmp.display()), e))?;
        self.writes.fetch_add(1, Ordering::Relaxed);
        Ok(())
    }

    fn rewriter(&self, seed: u64) -> Result<(), Error> {
        let mut rng = Rng(seed);
        let mut buf = Vec::new();
        while !self.stop.load(Ordering::Relaxed) {
            self.rewrite_one(&mut rng, &mut buf)?;
        }
        Ok(())
    }

    fn commenter(&self, seed: u64) -> Result<(), Error> {
        let mut rng = Rng(seed);
        let mut buf = Vec::new();
        while !self.stop.load(Ordering::Relaxed) {
            let Some(dir) = self.random_blog(&mut rng) else {
                std::thread::sleep(Duration::from_millis(1));
                continue;
            };
            let size = 512 + rng.below(3584) as usize;
            buf.resize(size, 0);
            rng.fill(&mut buf);
            let path = dir.join("comments.xml");
            let mut f = std::fs::OpenOptions::new()
                .append(true)
                .open(&path)
                .map_err(|e| io(format!("open {}", path.display()), e))?;
            f.write_all(&buf).map_err(|e| io(format!("append to {}", path.display()), e))?;
            self.bytes_written.fetch_add(size as u64, Ordering::Relaxed);
            self.writes.fetch_add(1, Ordering::Relaxed);
        }
        Ok(())
    }

    fn reader(&self, seed: u64) -> Result<(), Error> {
        let mut rng = Rng(seed);
        let mut buf = vec![0u8; 64 * 1024];
        while !self.stop.load(Ordering::Relaxed) {
            let Some(dir) = self.random_blog(&mut rng) else {
                std::thread::sleep(Duration::from_millis(1));
                continue;
            };
            let name = match rng.below(3) {
                0 => format!("article-{}.xml", rng.below(ARTICLES)),
                1 => format!("picture-{}.jpg", rng.below(PICTURES)),
                _ => "comments.xml".to_string(),
            };
            let path = dir.join(name);
            let mut f = match crate::sys::fs::open_regular(&path) {
                Ok(f) => f,
                // A rename in flight: try another file.
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
                Err(e) => return Err(io(format!("open {}", path.display()), e)),
            };
            loop {
                let n = f.read(&mut buf).map_err(|e| io(format!("read {}", path.display()), e))?;
                if n == 0 {
                    break;
                }
                self.bytes_read.fetch_add(n as u64, Ordering::Relaxed);
            }
            self.reads.fetch_add(1, Ordering::Relaxed);
        }
        Ok(())
    }
}

impl Workload for Blog {
    const KEYS: &'static [&'static str] =
        &["writers", "rewriters", "commenters", "readers", "iterations", "frequency", "max_blogs"];
    const RESULTS: &'static [&'static str] = &["write_score", "read_score", "seconds"];

    fn new(c: &Config) -> Result<Self, Error> {
        c.only(Self::KEYS)?;
        let count = |key: &str, default: u32| -> Result<u32, Error> {
            let v = c.parse_or::<u32>(key, default)?;
            if v > 1000 {
                return Err(Error::config(key, format!("{v}: use at most 1000")));
            }
            Ok(v)
        };
        let b = Blog {
            writers: count("writers", 3)?,
            rewriters: count("rewriters", 1)?,
            commenters: count("commenters", 5)?,
            readers: count("readers", 100)?,
            iterations: c.parse_or::<u32>("iterations", 30)?,
            frequency: c.duration_or("frequency", Duration::from_secs(10))?,
            max_blogs: c.parse_or::<u64>("max_blogs", 2000)?,
        };
        if b.writers == 0 {
            return Err(Error::config("writers", "at least one writer publishes the blogs the others use"));
        }
        if b.iterations == 0 || b.frequency.is_zero() {
            return Err(Error::config("iterations", "the run needs at least one iteration of some time"));
        }
        if b.max_blogs == 0 {
            return Err(Error::config("max_blogs", "must be at least 1"));
        }
        Ok(b)
    }

    fn run(&mut self, cx: &dyn Context) -> Result<Report, Error> {
        let root = cx.scratch_dir().join("blogbench");
        std::fs::create_dir(&root).map_err(|e| io(format!("mkdir {}", root.display()), e))?;
        let stop = AtomicBool::new(false);
        let sh = Shared {
            root: &root,
            published: AtomicU64::new(0),
            next: AtomicU64::new(0),
            stop: &stop,
            writes: AtomicU64::new(0),
            reads: AtomicU64::new(0),
            bytes_written: AtomicU64::new(0),
            bytes_read: AtomicU64::new(0),
            max_blogs: self.max_blogs,
        };
        let total = self.frequency * self.iterations;
        let t0 = Instant::now();
        let (lines, results) = std::thread::scope(|s| {
            let handles = self.spawn_roles(s, &sh);
            let lines = self.iterate(cx, &sh, t0);
            stop.store(true, Ordering::Relaxed);
            let results: Vec<Result<(), Error>> = handles
                .into_iter()
                .map(|h| h.join().unwrap_or_else(|_| Err(Error::failed("a blog thread panicked"))))
                .collect();
            (lines, results)
        });
        let secs = t0.elapsed().as_secs_f64();
        if cx.cancelled() {
            return Err(Error::cancelled());
        }
        for r in results {
            r?;
        }
        if secs + 0.5 < total.as_secs_f64() {
            return Err(Error::failed("the run stopped early"));
        }
        Ok(self.report(&sh, lines, secs))
    }
}

impl Blog {
    /// Starts the writers, rewriters, commenters and readers; a thread that
    /// fails stops them all.
    fn spawn_roles<'scope>(
        &self,
        s: &'scope std::thread::Scope<'scope, '_>,
        sh: &'scope Shared<'_>,
    ) -> Vec<std::thread::ScopedJoinHandle<'scope, Result<(), Error>>> {
        let mut handles = Vec::new();
        let kinds: [(u32, u64); 4] = [(self.writers, 1), (self.rewriters, 2), (self.commenters, 3), (self.readers, 4)];
        for (n, kind) in kinds {
            for i in 0..n {
                let seed = (kind << 32) ^ (i as u64 + 1) ^ 0x9E37_79B9_7F4A_7C15;
                handles.push(s.spawn(move || {
                    let r = match kind {
                        1 => sh.writer(seed),
                        2 => sh.rewriter(seed),
                        3 => sh.commenter(seed),
                        _ => sh.reader(seed),
                    };
                    if r.is_err() {
                        sh.stop.store(true, Ordering::Relaxed);
                    }
                    r
                }));
            }
        }
        handles
    }

    /// Waits out the iterations (until a thread fails or the trial is
    /// cancelled), with one line per iteration, as blogbench prints.
    fn iterate(&self, cx: &dyn Context, sh: &Shared, t0: Instant) -> Vec<String> {
        let mut lines = Vec::new();
        let (mut w0, mut r0) = (0, 0);
        let mut rates = engine_sdk::Rates::new(cx, &[("writes_s", "1/s", 1.0), ("reads_s", "1/s", 1.0)]);
        let totals = || [sh.writes.load(Ordering::Relaxed), sh.reads.load(Ordering::Relaxed)];
        for it in 1..=self.iterations {
            let end = self.frequency * it;
            while t0.elapsed() < end && !sh.stop.load(Ordering::Relaxed) {
                if cx.cancelled() {
                    sh.stop.store(true, Ordering::Relaxed);
                }
                rates.tick(cx, &totals());
                std::thread::sleep(Duration::from_millis(20));
            }
            let (w, r) = (sh.writes.load(Ordering::Relaxed), sh.reads.load(Ordering::Relaxed));
            lines.push(format!(
                "iteration {it}: {} blogs, {} writes, {} reads",
                sh.published.load(Ordering::Relaxed),
                w - w0,
                r - r0
            ));
            (w0, r0) = (w, r);
            cx.progress(it as f64 / self.iterations as f64, &format!("iteration {it} of {}", self.iterations));
            if sh.stop.load(Ordering::Relaxed) {
                break;
            }
        }
        rates.finish(cx, &totals());
        lines
    }

    /// The scores, the iterations' `lines`, and a summary of the run.
    fn report(&self, sh: &Shared, lines: Vec<String>, secs: f64) -> Report {
        let (w, r) = (sh.writes.load(Ordering::Relaxed), sh.reads.load(Ordering::Relaxed));
        let mut report =
            Report::new().value("write_score", w as f64).value("read_score", r as f64).value("seconds", secs);
        for l in lines {
            report = report.line(l);
        }
        report.line(format!(
            "{} writers, {} rewriters, {} commenters, {} readers for {secs:.3} s: {} blogs, {w} writes ({} bytes), {r} reads ({} bytes)",
            self.writers,
            self.rewriters,
            self.commenters,
            self.readers,
            sh.published.load(Ordering::Relaxed),
            sh.bytes_written.load(Ordering::Relaxed),
            sh.bytes_read.load(Ordering::Relaxed)
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workloads::testing::Cx;

    fn blog(pairs: &[(&str, &str)]) -> Result<Blog, Error> {
        let mut c = Config::new();
        for (k, v) in pairs {
            c.set(*k, *v);
        }
        Blog::new(&c)
    }

    #[test]
    fn bad_config_is_refused() {
        assert!(blog(&[("writers", "0")]).unwrap_err().to_string().contains("writer"));
        assert!(blog(&[("readers", "5000")]).is_err());
        assert!(blog(&[("iterations", "0")]).is_err());
        assert!(blog(&[("nope", "1")]).is_err());
    }

    #[test]
    fn a_short_run_writes_and_reads_published_blogs() {
        let d = tempfile::tempdir().unwrap();
        let mut b =
            blog(&[("iterations", "2"), ("frequency", "150ms"), ("readers", "4"), ("max_blogs", "20")]).unwrap();
        let r = b.run(&Cx::new(d.path())).unwrap();
        let (w, rd) = (r.get("write_score").unwrap(), r.get("read_score").unwrap());
        assert!(w >= (ARTICLES + PICTURES) as f64, "a writer publishes at least one blog: {r:?}");
        assert!(rd > 0.0, "readers read published blogs: {r:?}");
        assert!(r.get("seconds").unwrap() >= 0.3);
        let blogs = std::fs::read_dir(d.path().join("blogbench")).unwrap().count();
        assert!((1..=20).contains(&blogs), "{blogs} blogs, at most max_blogs");
        assert_eq!(r.log.lines().filter(|l| l.starts_with("iteration")).count(), 2);
    }
}
