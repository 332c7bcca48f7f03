//! Compiled plugins on disk: `cache/wasm/<key>.cwasm` with the sha256 of
//! its bytes beside it (`<key>.sha256`). The key is the component's sha256
//! plus the engine/wasmtime fingerprint, so a new engine, wasmtime or
//! target never reads an old artifact. Deserializing runs native code from
//! the file, so bytes whose hash does not match are rebuilt, never loaded,
//! and an entry is trusted only in a folder engine's user owns that nobody
//! else may write. The folder holds at most [`MAX_CACHE_BYTES`]: the
//! entries used longest ago go first.

use crate::sys::hash::sha256_hex;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};
use wasmtime::component::Component;

/// How a component was obtained.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Source {
    /// Deserialized from a verified cache entry.
    Cached,
    /// Compiled now (no entry yet).
    Compiled,
    /// Compiled now because the entry failed its checksum or did not load.
    Rebuilt,
}

#[derive(Debug, Clone, Copy)]
pub struct Loaded {
    pub source: Source,
    /// Compiling or deserializing.
    pub took: Duration,
}

/// Most bytes of compiled code the cache keeps.
pub(crate) const MAX_CACHE_BYTES: u64 = 512 << 20;

pub struct Cache {
    dir: PathBuf,
}

/// Whether `p` is engine's own: owned by this user, writable by nobody else.
fn ours(p: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    // SAFETY: geteuid cannot fail.
    let me = unsafe { libc::geteuid() };
    std::fs::symlink_metadata(p).is_ok_and(|m| m.uid() == me && m.mode() & 0o022 == 0 && !m.file_type().is_symlink())
}

impl Cache {
    pub fn new(dir: PathBuf) -> Self {
        Cache { dir }
    }

    fn paths(&self, sha256: &str) -> (PathBuf, PathBuf) {
        let key = format!("{sha256}-{}", super::runtime::fingerprint());
        (self.dir.join(format!("{key}.cwasm")), self.dir.join(format!("{key}.sha256")))
    }

    /// The component with sha256 `sha256` and bytes `wasm`: from the cache
    /// when its entry checks out, else compiled (and stored; a cache that
    /// cannot be written only costs the next run a compile).
    pub(crate) fn component(
        &self,
        engine: &wasmtime::Engine,
        wasm: &[u8],
        sha256: &str,
    ) -> Result<(Component, Loaded), wasmtime::Error> {
        let t0 = Instant::now();
        let (art, sum) = self.paths(sha256);
        let mut source = Source::Compiled;
        let trusted = ours(&self.dir) && ours(&art) && ours(&sum);
        if let (true, Ok(bytes), Ok(want)) = (trusted, std::fs::read(&art), std::fs::read_to_string(&sum)) {
            if sha256_hex(&bytes) == want.trim() {
                // SAFETY: these bytes are the ones this engine serialized:
                // their sha256 matches the one written beside them, and the
                // key names this engine's wasmtime version and settings
                // (which `deserialize` checks again in the header).
                match unsafe { Component::deserialize(engine, &bytes) } {
                    Ok(c) => {
                        // Used now: the last to be evicted.
                        let _ = std::fs::File::open(&art).and_then(|f| f.set_modified(std::time::SystemTime::now()));
                        return Ok((c, Loaded { source: Source::Cached, took: t0.elapsed() }));
                    }
                    Err(_) => source = Source::Rebuilt,
                }
            } else {
                source = Source::Rebuilt;
            }
            let _ = std::fs::remove_file(&art);
            let _ = std::fs::remove_file(&sum);
        }
        // Read before compiling (1.5 ms for a 150 KiB plugin): a compile
        // bomb stops here. A cached entry was compiled from these very bytes.
        super::compile::check(wasm).map_err(wasmtime::Error::new)?;
        let component = super::compile::compile(engine, wasm)?;
        if self.store(&component, &art, &sum).is_ok() {
            self.evict();
        }
        Ok((component, Loaded { source, took: t0.elapsed() }))
    }

    /// Writes the artifact, then its checksum: an entry without a checksum
    /// (a crash in between) is never trusted. One larger than a quarter of
    /// the cache is not kept.
    fn store(&self, c: &Component, art: &Path, sum: &Path) -> std::io::Result<()> {
        let bytes = c.serialize().map_err(std::io::Error::other)?;
        if bytes.len() as u64 > MAX_CACHE_BYTES / 4 {
            return Err(std::io::Error::other("too large to cache"));
        }
        std::fs::create_dir_all(&self.dir)?;
        self.write_atomic(art, &bytes)?;
        self.write_atomic(sum, format!("{}\n", sha256_hex(&bytes)).as_bytes())
    }

    /// Removes the entries used longest ago until the folder holds at most
    /// [`MAX_CACHE_BYTES`].
    fn evict(&self) {
        let Ok(rd) = std::fs::read_dir(&self.dir) else { return };
        let mut arts: Vec<(std::time::SystemTime, u64, PathBuf)> = rd
            .flatten()
            .filter(|e| e.path().extension().is_some_and(|x| x == "cwasm"))
            .filter_map(|e| {
                let m = e.metadata().ok()?;
                Some((m.modified().ok()?, m.len(), e.path()))
            })
            .collect();
        let mut total: u64 = arts.iter().map(|a| a.1).sum();
        arts.sort();
        for (_, len, art) in arts {
            if total <= MAX_CACHE_BYTES {
                break;
            }
            let _ = std::fs::remove_file(art.with_extension("sha256"));
            if std::fs::remove_file(&art).is_ok() {
                total -= len;
            }
        }
    }

    /// Temp file in the cache folder, then rename: readers see a whole
    /// file or none (two runs may fill the same entry at once).
    fn write_atomic(&self, path: &Path, bytes: &[u8]) -> std::io::Result<()> {
        use std::io::Write;
        let mut t = tempfile::Builder::new().prefix(&crate::sys::fs::temp_prefix()).tempfile_in(&self.dir)?;
        t.write_all(bytes)?;
        t.persist(path).map_err(|e| e.error)?;
        Ok(())
    }
}
