//! `engine config`: a person's defaults for the flags they give every time
//! (`$XDG_CONFIG_HOME/engine/config.toml`). Each key is a flag's name and
//! takes what the flag takes, checked by the flag's own parser; a flag on the
//! command line wins over the file, the file over engine's default.

use super::args::{self, Monitor, RunFormat};
use super::benchmark_args::BenchmarkArgs;
use super::{Failure, exit};
use clap::{Subcommand, ValueEnum};
use engine_ops::Context;
use engine_ops::vocab::config::{self, Config, ConfigError, Refused, Spec};
use std::path::PathBuf;

#[derive(Subcommand, Debug)]
pub enum ConfigCommand {
    /// Every setting: its value and where it comes from (the file's line, or engine's default)
    List,
    /// One setting's value
    Get { key: String },
    /// Set a setting in the file (checked as its flag is; the file's comments stay)
    Set { key: String, value: String },
    /// Remove a setting from the file (engine's default applies again)
    Unset { key: String },
    /// Where the file is
    Path,
}

/// Every key, with the flag it stands for and engine's own default.
pub const KEYS: [(Spec, &str); 7] = [
    (spec("target-dir", "the directory tests run in (absolute)", target_dir), "the current directory"),
    (spec("identifier", "the label of this system state in results", |s| ok(args::identifier(s))), "the host name"),
    (spec("budget", "the time each test's trials may take (`2m`)", |s| ok(args::positive_duration(s))), "60s"),
    (number("equivalence", "the largest difference called equivalent, percent", |s| ok(args::margin(s))), "2"),
    (spec("monitor", "sample the devices and the system around every trial: `on` or `none`", monitor), "on"),
    (spec("monitor-interval", "how often the monitors sample (100ms to 10s)", |s| ok(args::monitor_interval(s))), "1s"),
    (spec("format", "what `engine benchmark` prints: `text`, `bars`, or a report format", format), "text"),
];

const fn spec(key: &'static str, about: &'static str, check: fn(&str) -> Result<(), Refused>) -> Spec {
    Spec { key, about, check, number: false }
}

const fn number(key: &'static str, about: &'static str, check: fn(&str) -> Result<(), Refused>) -> Spec {
    Spec { key, about, check, number: true }
}

fn ok<T>(r: Result<T, String>) -> Result<(), Refused> {
    r.map(drop).map_err(Refused)
}

fn target_dir(s: &str) -> Result<(), Refused> {
    match PathBuf::from(s).is_absolute() {
        true => Ok(()),
        false => Err(Refused(format!(
            "`{s}` is not an absolute path: a default directory cannot depend on where engine starts"
        ))),
    }
}

fn monitor(s: &str) -> Result<(), Refused> {
    ok(Monitor::from_str(s, false))
}

fn format(s: &str) -> Result<(), Refused> {
    RunFormat::from_str(s, false).map(drop).map_err(|_| {
        let names: Vec<String> = RunFormat::value_variants()
            .iter()
            .filter_map(|f| f.to_possible_value())
            .map(|p| p.get_name().into())
            .collect();
        Refused(format!("`{s}` is not a format: {}", names.join(", ")))
    })
}

fn specs() -> Vec<Spec> {
    KEYS.iter().map(|(s, _)| Spec { key: s.key, about: s.about, check: s.check, number: s.number }).collect()
}

/// The defaults the file sets (nothing when there is no file).
pub struct Defaults(Config);

impl Defaults {
    pub fn load(cx: &Context) -> Result<Defaults, Failure> {
        match &cx.settings.config_file {
            Some(path) => match config::load(path, &specs()) {
                Ok(c) => Ok(Defaults(c)),
                // Another user's home (`sudo -u`, `setpriv`): the file is not
                // this user's to read; say so, as git does, and go on.
                Err(ConfigError::Read { path, source }) if source.kind() == std::io::ErrorKind::PermissionDenied => {
                    errln!("warning: cannot read {}: {source}; its defaults are not used", path.display());
                    Ok(Defaults(Config::default()))
                }
                Err(e) => Err(failure(e)),
            },
            None => Ok(Defaults(Config::default())),
        }
    }

    /// The file's value of `key`, parsed as its flag parses it (checked
    /// when the file was read).
    fn get<T>(&self, key: &str, parse: impl Fn(&str) -> Result<T, String>) -> Option<T> {
        self.0.get(key).and_then(|e| parse(&e.value).ok())
    }

    /// Fills what the command line left out from the file, then engine's
    /// defaults: afterwards every defaulted flag has its value.
    pub fn benchmark(&self, a: &mut BenchmarkArgs) {
        a.target_dir = a.target_dir.take().or_else(|| self.get("target-dir", |s| Ok(PathBuf::from(s))));
        a.identifier = a.identifier.take().or_else(|| self.get("identifier", args::identifier));
        a.budget = a.budget.or_else(|| self.get("budget", args::positive_duration));
        a.compare.equivalence = a.compare.equivalence.or_else(|| self.equivalence());
        let m = &mut a.monitor;
        m.monitor = m.monitor.or_else(|| self.get("monitor", |s| Monitor::from_str(s, false))).or(Some(Monitor::On));
        m.monitor_interval = m.monitor_interval.or_else(|| self.get("monitor-interval", args::monitor_interval));
        a.format = a.format.or_else(|| self.get("format", |s| RunFormat::from_str(s, false))).or(Some(RunFormat::TEXT));
    }

    /// The equivalence margin: the file's, else engine's.
    pub fn equivalence(&self) -> Option<f64> {
        self.get("equivalence", args::margin)
    }
}

fn failure(e: ConfigError) -> Failure {
    let code = match e {
        ConfigError::Read { .. } | ConfigError::Write { .. } => exit::ERROR,
        _ => exit::USAGE,
    };
    let hint = e.hint();
    let f = Failure::new(code, e.to_string());
    match hint {
        Some(h) => f.hint(h),
        None => f,
    }
}

pub fn run(cx: &Context, cmd: ConfigCommand) -> Result<i32, Failure> {
    let path = cx.settings.config_file.clone().ok_or_else(|| Failure::error("no config file in this context"))?;
    match cmd {
        ConfigCommand::Path => outln!("{}", path.display()),
        ConfigCommand::List => list(&Defaults::load(cx)?.0),
        ConfigCommand::Get { key } => {
            let d = Defaults::load(cx)?;
            config::spec(&key, &specs()).map_err(failure)?;
            let default = KEYS.iter().find(|(s, _)| s.key == key).map_or("", |(_, d)| d);
            match d.0.get(&key) {
                Some(e) => outln!("{}", e.value),
                None => {
                    outln!("{default}");
                    errln!("(engine's default: {} does not set `{key}`)", path.display());
                }
            }
        }
        ConfigCommand::Set { key, value } => {
            config::set(&path, &specs(), &key, &value).map_err(failure)?;
            outln!("{key} = {value}  ({})", path.display());
        }
        ConfigCommand::Unset { key } => match config::unset(&path, &specs(), &key).map_err(failure)? {
            true => outln!("unset {key}: engine's default applies ({})", path.display()),
            false => outln!("{key} was not set in {}", path.display()),
        },
    }
    Ok(exit::OK)
}

fn list(c: &Config) {
    outln!("{}{}", c.path.display(), if c.entries.is_empty() { " (sets nothing)" } else { "" });
    let width = KEYS.iter().map(|(s, _)| s.key.len()).max().unwrap_or(0);
    for (spec, default) in &KEYS {
        match c.get(spec.key) {
            Some(e) => outln!("  {:width$}  {}  (line {})", spec.key, e.value, e.pos.line),
            None => outln!("  {:width$}  {default}  (engine's default)", spec.key),
        }
    }
}
