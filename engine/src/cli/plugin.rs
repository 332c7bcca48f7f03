//! `engine plugin new|build|info`: write a WASM plugin, build it for the
//! plugin target, and look at what a `.wasm` file is.

use super::{Failure, exit};
use clap::{Args, Subcommand};
use engine_ops::Context;
use engine_ops::plugin::{self as ops, InspectRequest};
use engine_ops::vocab::plugin::{Limits, cache};
use std::path::PathBuf;

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
    pub memory: Option<engine_model::units::Size>,
    /// Time limit for `--run` (default 10m)
    #[arg(long, value_name = "DURATION")]
    pub time: Option<engine_model::units::Duration>,
}

pub fn run(cx: &Context, cmd: PluginCommand) -> Result<i32, Failure> {
    match cmd {
        PluginCommand::New(a) => new(a),
        PluginCommand::Build(a) => build(a),
        PluginCommand::Info(a) => info(cx, a),
    }
}

fn new(a: NewArgs) -> Result<i32, Failure> {
    let s = ops::scaffold(&a.name, &a.dir, a.sdk)?;
    let (root, id, file) = (s.root.display(), &s.profile_id, &s.crate_file);
    outln!("created {root} (a workload plugin) and {root}/{id}/profile.yaml");
    outln!("next:");
    outln!("  cd {root}");
    outln!("  engine plugin build          # builds {file}.wasm into {id}/");
    outln!("  engine benchmark ./{id}");
    Ok(exit::OK)
}

fn build(a: BuildArgs) -> Result<i32, Failure> {
    ops::build(&a.dir, a.debug, &mut |b| {
        outln!("{}", b.artifact.display());
        outln!("sha256 {}", b.sha256);
        for dest in &b.copied_to {
            outln!("copied to {}", dest.display());
        }
    })?;
    Ok(exit::OK)
}

fn info(cx: &Context, a: InfoArgs) -> Result<i32, Failure> {
    let mut limits = Limits::default();
    if let Some(m) = &a.memory {
        limits.memory = m.bytes();
    }
    if let Some(t) = &a.time {
        limits.time = t.get();
    }
    let req = InspectRequest { file: a.file.clone(), config: a.config, limits, run: a.run };
    let i = ops::inspect(cx, &req)?;
    let ms = |d: std::time::Duration| d.as_secs_f64() * 1e3;
    outln!("plugin:     {}", a.file.display());
    outln!("kind:       {} (engine:plugin@{})", i.kind, engine_ops::vocab::plugin::INTERFACE_VERSION);
    outln!("sha256:     {}", i.sha256);
    let how = match i.source {
        cache::Source::Cached => "from the cache",
        cache::Source::Compiled => "compiled now",
        cache::Source::Rebuilt => "compiled now (the cache entry was corrupt)",
    };
    outln!("code:       {how} in {:.3} ms", ms(i.load));
    outln!("keys:       {}", i.keys.join(", "));
    outln!("results:    {}", i.results.join(", "));
    outln!(
        "check:      instantiate {:.3} ms, keys+results+configure {:.3} ms (engine start {:.3} ms)",
        ms(i.check_instantiate),
        ms(i.check_call),
        ms(i.engine_start)
    );
    if let Some(r) = i.ran {
        let r = r?;
        outln!("run:        instantiate {:.3} ms, configure+run {:.3} ms", ms(r.instantiate), ms(r.call));
        for m in &r.measurements {
            outln!("value:      {} = {}", m.result, engine_model::units::exact(m.value));
        }
        out!("{}", r.log);
    }
    outln!("total:      {:.3} ms", ms(i.total));
    Ok(exit::OK)
}
