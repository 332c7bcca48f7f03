//! A fresh ENGINE_HOME, target directory and profile folder per test, and a
//! command builder for the real binary.

use std::path::PathBuf;
use std::process::{Command, Output};

pub struct Env {
    pub home: tempfile::TempDir,
    pub target: tempfile::TempDir,
    /// Extra profile root (`test-profiles/`, `suites/`) on ENGINE_PROFILE_PATH.
    pub profiles: tempfile::TempDir,
}

pub struct Run {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

impl std::fmt::Debug for Run {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "exit {}\n--- stdout ---\n{}\n--- stderr ---\n{}", self.code, self.stdout, self.stderr)
    }
}

impl From<Output> for Run {
    fn from(o: Output) -> Self {
        Run {
            code: o.status.code().unwrap_or(-1),
            stdout: String::from_utf8_lossy(&o.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&o.stderr).into_owned(),
        }
    }
}

pub fn bin() -> &'static str {
    env!("CARGO_BIN_EXE_engine")
}

/// The repository root (for shipped profiles, suites, schemas and fixtures).
pub fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
}

impl Env {
    pub fn new() -> Self {
        Env {
            home: tempfile::tempdir().unwrap(),
            target: tempfile::tempdir().unwrap(),
            profiles: tempfile::tempdir().unwrap(),
        }
    }

    pub fn cmd(&self, args: &[&str]) -> Command {
        let mut c = Command::new(bin());
        c.args(args)
            .env("ENGINE_HOME", self.home.path())
            .env("ENGINE_PROFILE_PATH", self.profiles.path())
            .env("COLUMNS", "100")
            .env("NO_COLOR", "1")
            .env_remove("XDG_DATA_HOME");
        c
    }

    pub fn run(&self, args: &[&str]) -> Run {
        self.cmd(args).output().expect("engine runs").into()
    }

    /// `engine benchmark … --target-dir T -y` plus `args`.
    pub fn bench(&self, args: &[&str]) -> Run {
        let mut all = vec!["benchmark", "-y", "--target-dir", self.target.path().to_str().unwrap()];
        all.extend_from_slice(args);
        self.run(&all)
    }

    /// Writes `test-profiles/<id>/profile.yaml` into the extra profile root.
    pub fn profile(&self, id: &str, yaml: &str) -> PathBuf {
        let dir = self.profiles.path().join("test-profiles").join(id);
        std::fs::create_dir_all(&dir).unwrap();
        let p = dir.join("profile.yaml");
        std::fs::write(&p, yaml).unwrap();
        p
    }

    pub fn suite(&self, id: &str, yaml: &str) -> PathBuf {
        let dir = self.profiles.path().join("suites");
        std::fs::create_dir_all(&dir).unwrap();
        let p = dir.join(format!("{id}.yaml"));
        std::fs::write(&p, yaml).unwrap();
        p
    }

    pub fn result_path(&self, name: &str) -> PathBuf {
        self.home.path().join("results").join(name).join("result.json")
    }

    pub fn result(&self, name: &str) -> serde_json::Value {
        let text = std::fs::read_to_string(self.result_path(name)).unwrap_or_else(|e| panic!("result {name}: {e}"));
        serde_json::from_str(&text).unwrap()
    }
}

/// A profile whose one trial prints `value: <v>` for the entry's value `v`.
pub fn echo_profile(id: &str, values: &[&str]) -> String {
    let entries: Vec<String> = values.iter().map(|v| format!("      - {{label: \"V{v}\", value: \"{v}\"}}")).collect();
    format!(
        r#"id: {id}
version: 1.0.0
title: Echo {id}
app_version: "1"
test_type: other
options:
  - id: v
    name: Value
    entries:
{}
executor:
  external:
    program: sh
    args: ["-c", "echo value: {{{{v}}}}"]
results:
  - {{id: number, unit: Items/s, proportion: HIB}}
parsers:
  - {{result: number, regex: 'value: (?P<value>[0-9.]+)'}}
"#,
        entries.join("\n")
    )
}

/// A profile whose k-th trial runs `script` with `$n` = k (a counter kept in
/// the test's directory, which outlives the trials' scratch directories).
pub fn counter_profile(id: &str, script: &str, extra: &str) -> String {
    let body =
        format!("c={{{{test_dir}}}}/count; n=$(cat $c 2>/dev/null || echo 0); n=$((n+1)); echo $n > $c; {script}");
    format!(
        r#"id: {id}
version: 1.0.0
title: Counter {id}
test_type: other
executor:
  external:
    program: sh
    args: ["-c", {body:?}]
{extra}
results:
  - {{id: number, unit: Items, proportion: HIB}}
parsers:
  - {{result: number, regex: 'value: (?P<value>-?[0-9.]+)'}}
"#
    )
}

pub fn stats_of(values: &[f64]) -> (f64, f64, f64) {
    let n = values.len() as f64;
    let mean = values.iter().sum::<f64>() / n;
    let sd = (values.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1.0)).sqrt();
    (mean, sd, sd / n.sqrt())
}

pub fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * a.abs().max(b.abs()).max(1.0)
}

pub trait SpawnScript {
    fn spawn_script(&mut self, cmdline: &str) -> std::process::Child;
}

impl SpawnScript for std::process::Command {
    /// Runs `cmdline` under `script`, on a pseudo-terminal, with this command's environment.
    fn spawn_script(&mut self, cmdline: &str) -> std::process::Child {
        let mut c = std::process::Command::new("script");
        c.args(["-qfec", cmdline, "/dev/null"]);
        for (k, v) in self.get_envs() {
            match v {
                Some(v) => c.env(k, v),
                None => c.env_remove(k),
            };
        }
        c.stdin(std::process::Stdio::piped()).stdout(std::process::Stdio::piped()).stderr(std::process::Stdio::piped());
        c.spawn().expect("script (util-linux) runs")
    }
}
