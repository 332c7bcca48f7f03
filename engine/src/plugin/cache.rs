//! Compiled plugins on disk: `cache/wasm/<key>.cwasm` with the sha256 of
//! its bytes beside it (`<key>.sha256`). The key is the component's sha256
//! plus the engine/wasmtime fingerprint, so a new engine, wasmtime or
//! target never reads an old artifact. Deserializing runs native code from
//! the file, so bytes whose hash does not match are rebuilt, never loaded.

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

pub struct Cache {
    dir: PathBuf,
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
    pub fn component(
        &self,
        engine: &wasmtime::Engine,
        wasm: &[u8],
        sha256: &str,
    ) -> Result<(Component, Loaded), wasmtime::Error> {
        let t0 = Instant::now();
        let (art, sum) = self.paths(sha256);
        let mut source = Source::Compiled;
        if let (Ok(bytes), Ok(want)) = (std::fs::read(&art), std::fs::read_to_string(&sum)) {
            if sha256_hex(&bytes) == want.trim() {
                // SAFETY: these bytes are the ones this engine serialized:
                // their sha256 matches the one written beside them, and the
                // key names this engine's wasmtime version and settings
                // (which `deserialize` checks again in the header).
                match unsafe { Component::deserialize(engine, &bytes) } {
                    Ok(c) => return Ok((c, Loaded { source: Source::Cached, took: t0.elapsed() })),
                    Err(_) => source = Source::Rebuilt,
                }
            } else {
                source = Source::Rebuilt;
            }
            let _ = std::fs::remove_file(&art);
            let _ = std::fs::remove_file(&sum);
        }
        let component = Component::new(engine, wasm)?;
        let _ = self.store(&component, &art, &sum);
        Ok((component, Loaded { source, took: t0.elapsed() }))
    }

    /// Writes the artifact, then its checksum: an entry without a checksum
    /// (a crash in between) is never trusted.
    fn store(&self, c: &Component, art: &Path, sum: &Path) -> std::io::Result<()> {
        let bytes = c.serialize().map_err(std::io::Error::other)?;
        std::fs::create_dir_all(&self.dir)?;
        self.write_atomic(art, &bytes)?;
        self.write_atomic(sum, format!("{}\n", sha256_hex(&bytes)).as_bytes())
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
