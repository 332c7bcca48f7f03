//! `engine plugin new|build|info`: write a WASM plugin crate, build it for
//! the plugin target, and look at what a `.wasm` file is. The CLI prints
//! what these return.

use crate::{Context, Failure, exit};
use engine::model::profile::{ExecutorDef, Profile};
use engine::plugin::host::Sandbox;
use engine::plugin::{self, Kind, Limits, Plugin, cache};
use engine_sdk::Measurement;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// The rustup target plugins are built for.
pub(crate) const TARGET: &str = "wasm32-wasip2";

/// What `engine plugin new` wrote.
#[derive(Debug)]
pub struct Scaffold {
    pub root: PathBuf,
    /// The crate's file name (`my_plugin`): its `.wasm` is `<crate_file>.wasm`.
    pub crate_file: String,
    pub profile_id: String,
}

/// Writes a workload plugin crate `name` in `dir`, with a profile folder that
/// runs it; `sdk` is the engine checkout's `sdk/` (default: the one this
/// engine was built from, when it is still there).
pub fn scaffold(name: &str, dir: &Path, sdk: Option<PathBuf>) -> Result<Scaffold, Failure> {
    if !valid_name(name) {
        return Err(Failure::new(exit::USAGE, format!("`{name}` is not a valid plugin name"))
            .hint("use lower-case letters, digits, `-` and `_`, starting with a letter (`my-plugin`)"));
    }
    let root = dir.join(name);
    if root.exists() {
        return Err(Failure::new(exit::USAGE, format!("{} already exists", root.display()))
            .hint("pick another name, or remove the folder"));
    }
    let sdk = match sdk.or_else(checkout_sdk) {
        Some(p) => p.canonicalize().map_err(|e| Failure::new(exit::USAGE, format!("{}: {e}", p.display())))?,
        None => {
            return Err(Failure::new(
                exit::USAGE,
                "cannot find engine-sdk: this engine was not built from a checkout here",
            )
            .hint("pass the `sdk/` folder of an engine checkout with `--sdk PATH`"));
        }
    };
    let crate_file = name.replace('-', "_");
    let profile_id = format!("{name}-profile");
    let ty = type_name(name);
    let files = [
        ("Cargo.toml".to_string(), cargo_toml(name, &sdk)),
        ("src/lib.rs".to_string(), lib_rs(name, &ty)),
        (".gitignore".to_string(), "target/\n".to_string()),
        (format!("{profile_id}/profile.yaml"), profile_yaml(name, &profile_id, &crate_file)),
    ];
    for (rel, text) in &files {
        let p = root.join(rel);
        if let Some(d) = p.parent() {
            std::fs::create_dir_all(d).map_err(|e| io_fail(d, e))?;
        }
        std::fs::write(&p, text).map_err(|e| io_fail(&p, e))?;
    }
    Ok(Scaffold { root, crate_file, profile_id })
}

fn valid_name(n: &str) -> bool {
    n.chars().next().is_some_and(|c| c.is_ascii_lowercase())
        && n.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-' || c == '_')
}

/// `my-plugin` → `MyPlugin`.
fn type_name(n: &str) -> String {
    n.split(['-', '_'])
        .map(|w| {
            let mut c = w.chars();
            c.next().map(|f| f.to_ascii_uppercase().to_string() + c.as_str()).unwrap_or_default()
        })
        .collect()
}

/// The `sdk/` folder of the checkout this binary was built from, when it is
/// still there (a developer's build, not an installed copy).
fn checkout_sdk() -> Option<PathBuf> {
    let sdk = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../sdk");
    let toml = std::fs::read_to_string(sdk.join("Cargo.toml")).ok()?;
    toml.contains("name = \"engine-sdk\"").then(|| sdk.canonicalize().ok()).flatten()
}

fn io_fail(p: &Path, e: std::io::Error) -> Failure {
    Failure::new(exit::ERROR, format!("cannot write {}: {e}", p.display()))
}

fn cargo_toml(name: &str, sdk: &Path) -> String {
    format!(
        r#"[package]
name = "{name}"
version = "0.1.0"
edition = "2024"
publish = false

# A plugin is a component: a cdylib built for wasm32-wasip2
# (`engine plugin build` does that).
[lib]
crate-type = ["cdylib"]

[dependencies]
# The workload contract and the export macro. Outside an engine checkout,
# point this at your copy of engine's `sdk/` folder (or a git URL of engine).
engine-sdk = {{ path = "{}", features = ["guest"] }}

[profile.release]
codegen-units = 1
lto = true

# Not part of any enclosing workspace.
[workspace]
"#,
        sdk.display()
    )
}

fn lib_rs(name: &str, ty: &str) -> String {
    format!(
        r#"//! {name}: a workload plugin for engine. It sums `size` bytes of memory
//! `passes` times and reports MB/s; replace `run` with what you want to measure.

use engine_sdk::{{Config, Context, Error, Report, Workload}};

pub struct {ty} {{
    data: Vec<u8>,
    passes: u32,
}}

impl Workload for {ty} {{
    const KEYS: &'static [&'static str] = &["size", "passes"];
    const RESULTS: &'static [&'static str] = &["throughput"];

    fn new(config: &Config) -> Result<Self, Error> {{
        config.only(Self::KEYS)?;
        let size = config.size_or("size", 16 << 20)? as usize;
        Ok({ty} {{ data: (0..size).map(|i| (i * 7) as u8).collect(), passes: config.parse_or("passes", 16)? }})
    }}

    fn run(&mut self, cx: &dyn Context) -> Result<Report, Error> {{
        let t0 = cx.elapsed();
        let mut sum = 0u64;
        for _ in 0..self.passes {{
            sum = sum.wrapping_add(std::hint::black_box(&self.data).iter().map(|&b| b as u64).sum::<u64>());
        }}
        let secs = (cx.elapsed() - t0).as_secs_f64().max(1e-9);
        let bytes = self.data.len() as f64 * self.passes as f64;
        Ok(Report::new().value("throughput", bytes / secs / 1e6).line(format!("sum {{sum}}")))
    }}
}}

engine_sdk::export_workload!({ty});
"#
    )
}

fn profile_yaml(name: &str, id: &str, crate_file: &str) -> String {
    format!(
        r#"id: {id}
version: 0.1.0
title: {name}
description: A WASM workload plugin (built from this folder's parent crate).
test_type: processor
options:
  - id: size
    name: Data Size
    default: [16MiB]
    entries:
      - {{label: 16MiB, value: 16MiB}}
      - {{label: 64MiB, value: 64MiB}}
executor:
  wasm:
    # Relative to this folder; `engine plugin build` copies it here.
    plugin: {crate_file}.wasm
    config:
      size: "{{{{size}}}}"
    limits: {{memory: 256MiB, time: 60s}}
results:
  - {{id: throughput, unit: MB/s, proportion: HIB, description: Summed Bytes}}
parsers: []
"#
    )
}

/// One component `engine plugin build` made.
#[derive(Debug)]
pub struct Built {
    pub artifact: PathBuf,
    pub sha256: String,
    /// Profile folders inside the crate that name it, where it was copied.
    pub copied_to: Vec<PathBuf>,
}

/// Builds the plugin crate in `dir` for [`TARGET`] with cargo (its
/// diagnostics go to standard error) and copies each `.wasm` into the
/// profile folders that name it; `each` hears of each component as it is
/// copied (of one whose copy failed, the copies made before the error).
pub fn build(dir: &Path, debug: bool, each: &mut dyn FnMut(&Built)) -> Result<(), Failure> {
    let manifest = dir.join("Cargo.toml");
    if !manifest.is_file() {
        return Err(Failure::new(exit::USAGE, format!("no Cargo.toml in {}", dir.display()))
            .hint("run it in a plugin crate, or name one: `engine plugin build DIR`"));
    }
    let mut cmd = Command::new(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()));
    cmd.args(["build", "--target", TARGET, "--message-format", "json-render-diagnostics", "--manifest-path"])
        .arg(&manifest)
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit());
    if !debug {
        cmd.arg("--release");
    }
    let out = cmd.output().map_err(|e| {
        Failure::new(exit::ERROR, format!("cannot run cargo: {e}")).hint("install Rust with rustup (https://rustup.rs)")
    })?;
    if !out.status.success() {
        return Err(Failure::new(exit::ERROR, format!("cargo build for {TARGET} failed"))
            .hint(format!("the target must be installed: `rustup target add {TARGET}`")));
    }
    let mut artifacts = Vec::new();
    for line in String::from_utf8_lossy(&out.stdout).lines() {
        let Ok(v) = serde_json::from_str::<serde_json::Value>(line) else { continue };
        if v["reason"] != "compiler-artifact" {
            continue;
        }
        let local =
            v["manifest_path"].as_str().is_some_and(|m| Path::new(m) == manifest.canonicalize().unwrap_or_default());
        for f in v["filenames"].as_array().into_iter().flatten().filter_map(|f| f.as_str()) {
            if f.ends_with(".wasm") && local {
                artifacts.push(PathBuf::from(f));
            }
        }
    }
    if artifacts.is_empty() {
        return Err(Failure::new(exit::ERROR, "cargo built no `.wasm` component")
            .hint("a plugin crate has `[lib] crate-type = [\"cdylib\"]`"));
    }
    for art in artifacts {
        let bytes = std::fs::read(&art).map_err(|e| Failure::new(exit::ERROR, format!("{}: {e}", art.display())))?;
        let dests = profile_folders(dir, &art);
        let mut b = Built { sha256: engine::sys::hash::sha256_hex(&bytes), artifact: art, copied_to: Vec::new() };
        for dest in dests {
            if let Err(e) = std::fs::write(&dest, &bytes) {
                each(&b);
                return Err(io_fail(&dest, e));
            }
            b.copied_to.push(dest);
        }
        each(&b);
    }
    Ok(())
}

/// Where profile folders inside `dir` expect the artifact: a subfolder whose
/// `profile.yaml` names the artifact's file name as its plugin.
fn profile_folders(dir: &Path, art: &Path) -> Vec<PathBuf> {
    let Some(file) = art.file_name().map(|f| f.to_string_lossy().to_string()) else { return Vec::new() };
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let yaml = e.path().join("profile.yaml");
        let Ok(text) = std::fs::read_to_string(&yaml) else { continue };
        let Ok(p) = serde_saphyr::from_str::<Profile>(&text) else { continue };
        let mut names: Vec<&str> =
            p.parsers.iter().filter_map(|d| d.plugin.as_ref().map(|pl| pl.path.as_str())).collect();
        if let ExecutorDef::Wasm(w) = &p.executor {
            names.push(&w.plugin);
        }
        if names.iter().any(|n| *n == file) {
            out.push(e.path().join(&file));
        }
    }
    out.sort();
    out
}

/// What `engine plugin info` asks: the file, its configuration, the limits
/// of each call, and whether to run it once.
#[derive(Debug)]
pub struct InspectRequest {
    pub file: PathBuf,
    /// `KEY=VALUE`, as in a profile's `config:`.
    pub config: Vec<String>,
    pub limits: Limits,
    pub run: bool,
}

/// What a `.wasm` file is, and how long each step took.
#[derive(Debug)]
pub struct Inspection {
    pub kind: Kind,
    pub sha256: String,
    pub source: cache::Source,
    pub load: Duration,
    pub keys: Vec<String>,
    pub results: Vec<String>,
    /// Engine start-up (wasmtime's engine), before the file was read.
    pub engine_start: Duration,
    pub check_instantiate: Duration,
    pub check_call: Duration,
    /// With `run`: the run, or why it failed (what came before still shows).
    pub ran: Option<Result<Ran, Failure>>,
    pub total: Duration,
}

/// One run of a workload plugin.
#[derive(Debug)]
pub struct Ran {
    pub instantiate: Duration,
    pub call: Duration,
    pub measurements: Vec<Measurement>,
    /// The host's log of the call, then the workload's own.
    pub log: String,
}

/// Loads, checks and (with `run`) runs a plugin once in a temporary scratch directory.
pub fn inspect(cx: &Context, req: &InspectRequest) -> Result<Inspection, Failure> {
    let t0 = Instant::now();
    let _ = plugin::runtime::engine();
    let engine_start = t0.elapsed();
    let cache = plugin::cache::Cache::new(cx.home.plugin_cache());
    let fail = |e: plugin::PluginError| Failure::new(exit::ERROR, format!("{}: {e}", req.file.display()));
    let p = Plugin::load(&req.file, &cache).map_err(fail)?;
    let config: Vec<(String, String)> = req
        .config
        .iter()
        .map(|kv| kv.split_once('=').map(|(k, v)| (k.to_string(), v.to_string())))
        .collect::<Option<_>>()
        .ok_or_else(|| Failure::new(exit::USAGE, "--config takes KEY=VALUE"))?;
    let scratch = tempfile::tempdir().map_err(|e| Failure::new(exit::ERROR, format!("temporary directory: {e}")))?;
    let dir = engine::sys::safepath::Dir::open(scratch.path())
        .map_err(|e| Failure::new(exit::ERROR, format!("temporary directory: {e}")))?;
    let sb = Sandbox {
        scratch: Some(&dir),
        env: &[],
        limits: req.limits,
        interrupted: engine::sys::interrupt::requested,
        interval: None,
        stop: None,
    };
    let (iface, out) = p.check(&config, &sb);
    let iface = iface.map_err(fail)?;
    let ran = req.run.then(|| {
        if p.kind != Kind::Workload {
            return Err(Failure::new(exit::USAGE, "--run runs workloads; a parser reads a trial's output"));
        }
        let (r, out) = p.run(&config, &sb);
        let report = r.map_err(fail)?;
        Ok(Ran {
            instantiate: out.instantiate,
            call: out.call,
            measurements: report.measurements,
            log: format!("{}{}", out.log, report.log),
        })
    });
    Ok(Inspection {
        kind: p.kind,
        sha256: p.sha256.clone(),
        source: p.loaded.source,
        load: p.loaded.took,
        keys: iface.keys,
        results: iface.results,
        engine_start,
        check_instantiate: out.instantiate,
        check_call: out.call,
        ran,
        total: t0.elapsed(),
    })
}
