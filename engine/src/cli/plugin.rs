//! `engine plugin new|build|info`: write a WASM plugin, build it for the
//! plugin target, and look at what a `.wasm` file is.

use super::{Failure, exit};
use clap::{Args, Subcommand};
use engine::model::profile::{ExecutorDef, Profile};
use engine::ops::Context;
use engine::plugin::host::Sandbox;
use engine::plugin::{self, Kind, Limits, Plugin, cache};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

/// The rustup target plugins are built for.
pub const TARGET: &str = "wasm32-wasip2";

#[derive(Subcommand, Debug)]
pub enum PluginCommand {
    /// Write a new workload plugin crate, with a profile folder that runs it
    New(NewArgs),
    /// Build a plugin crate for wasm32-wasip2; print the `.wasm` path and its sha256
    Build(BuildArgs),
    /// Show what a `.wasm` plugin is (kind, interface, keys, results); `--run` runs it once
    Info(InfoArgs),
}

#[derive(Args, Debug)]
pub struct NewArgs {
    /// Name of the crate and folder (`my-plugin`); the profile is `<NAME>-profile`
    pub name: String,
    /// Where to create the folder (default: the current directory)
    #[arg(long, value_name = "DIR", default_value = ".")]
    pub dir: PathBuf,
    /// Path of the `sdk/` folder of an engine checkout (default: the one this engine was built from, if present)
    #[arg(long, value_name = "PATH")]
    pub sdk: Option<PathBuf>,
}

#[derive(Args, Debug)]
pub struct BuildArgs {
    /// The plugin crate (default: the current directory)
    #[arg(default_value = ".")]
    pub dir: PathBuf,
    /// Build without optimizations (faster to build, slower to run)
    #[arg(long)]
    pub debug: bool,
}

#[derive(Args, Debug)]
pub struct InfoArgs {
    /// The `.wasm` file
    pub file: PathBuf,
    /// A configuration value, as in the profile's `config:` (repeatable)
    #[arg(short, long = "config", value_name = "KEY=VALUE")]
    pub config: Vec<String>,
    /// Run the workload once in a temporary scratch directory and print its values and timings
    #[arg(long)]
    pub run: bool,
    /// Memory cap for `--run` (default 256MiB)
    #[arg(long, value_name = "SIZE")]
    pub memory: Option<engine::units::Size>,
    /// Time limit for `--run` (default 10m)
    #[arg(long, value_name = "DURATION")]
    pub time: Option<engine::units::Duration>,
}

pub fn run(cx: &Context, cmd: PluginCommand) -> Result<i32, Failure> {
    match cmd {
        PluginCommand::New(a) => new(a),
        PluginCommand::Build(a) => build(a),
        PluginCommand::Info(a) => info(cx, a),
    }
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
    let sdk = Path::new(env!("CARGO_MANIFEST_DIR")).join("../sdk");
    let toml = std::fs::read_to_string(sdk.join("Cargo.toml")).ok()?;
    toml.contains("name = \"engine-sdk\"").then(|| sdk.canonicalize().ok()).flatten()
}

fn new(a: NewArgs) -> Result<i32, Failure> {
    if !valid_name(&a.name) {
        return Err(Failure::new(exit::USAGE, format!("`{}` is not a valid plugin name", a.name))
            .hint("use lower-case letters, digits, `-` and `_`, starting with a letter (`my-plugin`)"));
    }
    let root = a.dir.join(&a.name);
    if root.exists() {
        return Err(Failure::new(exit::USAGE, format!("{} already exists", root.display()))
            .hint("pick another name, or remove the folder"));
    }
    let sdk = match a.sdk.clone().or_else(checkout_sdk) {
        Some(p) => p.canonicalize().map_err(|e| Failure::new(exit::USAGE, format!("{}: {e}", p.display())))?,
        None => {
            return Err(Failure::new(
                exit::USAGE,
                "cannot find engine-sdk: this engine was not built from a checkout here",
            )
            .hint("pass the `sdk/` folder of an engine checkout with `--sdk PATH`"));
        }
    };
    let crate_file = a.name.replace('-', "_");
    let profile_id = format!("{}-profile", a.name);
    let ty = type_name(&a.name);
    let files = [
        ("Cargo.toml".to_string(), cargo_toml(&a.name, &sdk)),
        ("src/lib.rs".to_string(), lib_rs(&a.name, &ty)),
        (".gitignore".to_string(), "target/\n".to_string()),
        (format!("{profile_id}/profile.yaml"), profile_yaml(&a.name, &profile_id, &crate_file)),
    ];
    for (rel, text) in &files {
        let p = root.join(rel);
        if let Some(d) = p.parent() {
            std::fs::create_dir_all(d).map_err(|e| io_fail(d, e))?;
        }
        std::fs::write(&p, text).map_err(|e| io_fail(&p, e))?;
    }
    outln!("created {} (a workload plugin) and {}/{profile_id}/profile.yaml", root.display(), root.display());
    outln!("next:");
    outln!("  cd {}", root.display());
    outln!("  engine plugin build          # builds {crate_file}.wasm into {profile_id}/");
    outln!("  engine benchmark ./{profile_id}");
    Ok(exit::OK)
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

fn build(a: BuildArgs) -> Result<i32, Failure> {
    let manifest = a.dir.join("Cargo.toml");
    if !manifest.is_file() {
        return Err(Failure::new(exit::USAGE, format!("no Cargo.toml in {}", a.dir.display()))
            .hint("run it in a plugin crate, or name one: `engine plugin build DIR`"));
    }
    let mut cmd = Command::new(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()));
    cmd.args(["build", "--target", TARGET, "--message-format", "json-render-diagnostics", "--manifest-path"])
        .arg(&manifest)
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit());
    if !a.debug {
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
    for art in &artifacts {
        let bytes = std::fs::read(art).map_err(|e| Failure::new(exit::ERROR, format!("{}: {e}", art.display())))?;
        outln!("{}", art.display());
        outln!("sha256 {}", engine::sys::hash::sha256_hex(&bytes));
        for dest in profile_folders(&a.dir, art) {
            std::fs::write(&dest, &bytes).map_err(|e| io_fail(&dest, e))?;
            outln!("copied to {}", dest.display());
        }
    }
    Ok(exit::OK)
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

fn info(cx: &Context, a: InfoArgs) -> Result<i32, Failure> {
    let t0 = Instant::now();
    let _ = plugin::runtime::engine();
    let engine_ms = t0.elapsed().as_secs_f64() * 1e3;
    let cache = plugin::cache::Cache::new(cx.home.plugin_cache());
    let fail = |e: plugin::PluginError| Failure::new(exit::ERROR, format!("{}: {e}", a.file.display()));
    let p = Plugin::load(&a.file, &cache).map_err(fail)?;
    let config: Vec<(String, String)> = a
        .config
        .iter()
        .map(|kv| kv.split_once('=').map(|(k, v)| (k.to_string(), v.to_string())))
        .collect::<Option<_>>()
        .ok_or_else(|| Failure::new(exit::USAGE, "--config takes KEY=VALUE"))?;
    let mut limits = Limits::default();
    if let Some(m) = &a.memory {
        limits.memory = m.bytes();
    }
    if let Some(t) = &a.time {
        limits.time = t.get();
    }
    let scratch = tempfile::tempdir().map_err(|e| Failure::new(exit::ERROR, format!("temporary directory: {e}")))?;
    let dir = engine::sys::safepath::Dir::open(scratch.path())
        .map_err(|e| Failure::new(exit::ERROR, format!("temporary directory: {e}")))?;
    let sb = Sandbox { scratch: Some(&dir), env: &[], limits, interrupted: engine::sys::interrupt::requested };
    let (iface, out) = p.check(&config, &sb);
    let iface = iface.map_err(fail)?;
    outln!("plugin:     {}", a.file.display());
    outln!("kind:       {} (engine:plugin@{})", p.kind, plugin::INTERFACE_VERSION);
    outln!("sha256:     {}", p.sha256);
    let how = match p.loaded.source {
        cache::Source::Cached => "from the cache",
        cache::Source::Compiled => "compiled now",
        cache::Source::Rebuilt => "compiled now (the cache entry was corrupt)",
    };
    outln!("code:       {how} in {:.3} ms", p.loaded.took.as_secs_f64() * 1e3);
    outln!("keys:       {}", iface.keys.join(", "));
    outln!("results:    {}", iface.results.join(", "));
    outln!(
        "check:      instantiate {:.3} ms, keys+results+configure {:.3} ms (engine start {engine_ms:.3} ms)",
        out.instantiate.as_secs_f64() * 1e3,
        out.call.as_secs_f64() * 1e3
    );
    if a.run {
        if p.kind != Kind::Workload {
            return Err(Failure::new(exit::USAGE, "--run runs workloads; a parser reads a trial's output"));
        }
        let (r, out) = p.run(&config, &sb);
        let report = r.map_err(fail)?;
        outln!(
            "run:        instantiate {:.3} ms, configure+run {:.3} ms",
            out.instantiate.as_secs_f64() * 1e3,
            out.call.as_secs_f64() * 1e3
        );
        for m in &report.measurements {
            outln!("value:      {} = {}", m.result, engine::units::exact(m.value));
        }
        out!("{}", out.log);
        out!("{}", report.log);
    }
    outln!("total:      {:.3} ms", t0.elapsed().as_secs_f64() * 1e3);
    Ok(exit::OK)
}
