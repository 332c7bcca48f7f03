//! Runs that did not finish, so the same command resumes them: each run
//! records its result name and identifier under a key made from what it was
//! asked to run (references, options, target, sweep flags — not `--save` or
//! `--identifier`), and removes the record when it finishes. A plain re-run
//! of an interrupted command finds the record and continues the same result
//! under the same identifier.

use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// One unfinished run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Unfinished {
    /// What was asked (see [`key`]).
    pub key: String,
    /// Result name it saves to.
    pub name: String,
    pub identifier: String,
    /// When it started (RFC 3339).
    pub started: String,
}

/// The records in `ENGINE_HOME/runs/`.
pub struct Runs {
    dir: PathBuf,
}

/// A stable key for what a command asks to run.
pub fn key(parts: &[String]) -> String {
    // FNV-1a over the parts with a separator: stable across versions and builds.
    let mut h: u64 = 0xcbf29ce484222325;
    for p in parts {
        for b in p.bytes().chain(std::iter::once(0)) {
            h ^= b as u64;
            h = h.wrapping_mul(0x100000001b3);
        }
    }
    format!("{h:016x}")
}

impl Runs {
    pub fn new(dir: PathBuf) -> Self {
        Runs { dir }
    }

    fn path(&self, key: &str) -> PathBuf {
        self.dir.join(format!("{key}.json"))
    }

    /// The unfinished run recorded for `key`, if its result still exists in `results`.
    pub fn find(&self, key: &str, results: &Path) -> Option<Unfinished> {
        let text = std::fs::read_to_string(self.path(key)).ok()?;
        let u: Unfinished = serde_json::from_str(&text).ok()?;
        results.join(&u.name).join("result.json").is_file().then_some(u)
    }

    /// The unfinished run recorded for result `name` under `key`.
    pub fn find_for_name(&self, key: &str, name: &str, results: &Path) -> Option<Unfinished> {
        self.find(key, results).filter(|u| u.name == name)
    }

    /// Records `u` (replacing an earlier record of the same key).
    pub fn record(&self, u: &Unfinished) -> std::io::Result<()> {
        let bytes = serde_json::to_vec_pretty(u).expect("records serialize");
        crate::result::store::write_atomic(&self.path(&u.key), &bytes).map_err(|e| std::io::Error::other(e.to_string()))
    }

    /// The run of `key` finished: forget it.
    pub fn finish(&self, key: &str) {
        let _ = std::fs::remove_file(self.path(key));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn record_find_finish() {
        let d = tempfile::tempdir().unwrap();
        let results = d.path().join("results");
        let runs = Runs::new(d.path().join("runs"));
        let k = key(&["suite/disk-quick".into(), "--option".into()]);
        assert_ne!(k, key(&["suite/disk-quick".into()]));
        let u = Unfinished { key: k.clone(), name: "r".into(), identifier: "host".into(), started: "t".into() };
        runs.record(&u).unwrap();
        assert_eq!(runs.find(&k, &results), None, "no result file yet");
        std::fs::create_dir_all(results.join("r")).unwrap();
        std::fs::write(results.join("r/result.json"), "{}").unwrap();
        assert_eq!(runs.find(&k, &results), Some(u.clone()));
        assert_eq!(runs.find_for_name(&k, "other", &results), None);
        runs.finish(&k);
        assert_eq!(runs.find(&k, &results), None);
    }
}
