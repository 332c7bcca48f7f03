//! The state directory (`ENGINE_HOME`) and what lives in it.

use std::path::PathBuf;

#[derive(Debug, Clone)]
pub struct Home {
    pub root: PathBuf,
}

impl Home {
    pub fn results(&self) -> PathBuf {
        self.root.join("results")
    }
    /// Where a user keeps their own profiles and suites (`test-profiles/`, `suites/`).
    pub fn user_profiles(&self) -> PathBuf {
        self.root.clone()
    }
    /// Default parent of the scratch directories tests run in.
    pub fn default_target_dir(&self) -> PathBuf {
        self.root.join("scratch")
    }
    /// Journals of system-state changes not undone yet.
    pub fn journal(&self) -> PathBuf {
        self.root.join("journal")
    }
    /// Held by the one run that may change system state (and by `engine recover`).
    pub fn state_lock(&self) -> PathBuf {
        self.root.join("state.lock")
    }
    /// Held by the one `engine benchmark` (or `run`) running with this home.
    /// The JSON schemas, for editors (`engine profile new` writes them).
    pub fn schemas(&self) -> PathBuf {
        self.root.join("schemas")
    }

    pub fn benchmark_lock(&self) -> PathBuf {
        self.root.join("benchmark.lock")
    }
    /// Records of runs that did not finish (so the same command resumes them).
    pub fn runs(&self) -> PathBuf {
        self.root.join("runs")
    }
    pub fn installed(&self) -> PathBuf {
        self.root.join("installed")
    }
    /// Added profile repositories: `repos.json` and a synced copy per repository.
    pub fn repos(&self) -> PathBuf {
        self.root.join("repos")
    }
    /// Compiled WASM plugins.
    pub fn plugin_cache(&self) -> PathBuf {
        self.root.join("cache").join("wasm")
    }
    /// Verified downloads, named by their sha256.
    pub fn downloads(&self) -> PathBuf {
        self.root.join("cache").join("downloads")
    }
}
