//! A parser plugin: a component (`export_parser!` in `sdk/`) that reads a
//! trial's stdout and stderr and returns values by result id; this parser
//! takes the one its definition names. Loaded, checked and configured when
//! the test is set up, so a bad key fails before the first trial; each
//! parse runs in a fresh instance with no directory at all.

use super::{ParseError, Parser, RawOutput, Reading};
use crate::plugin::host::Sandbox;
use crate::plugin::{Kind, Limits, Plugin};

pub(crate) struct PluginParser {
    plugin: Plugin,
    /// As the profile names it (`dbench.wasm`).
    name: String,
    result: String,
    config: Vec<(String, String)>,
    limits: Limits,
}

impl PluginParser {
    /// Loads the plugin at `path` (`name` as the profile writes it) for result
    /// `result`, and checks that it reads `config` and returns `result`.
    pub(crate) fn new(
        path: &std::path::Path,
        name: &str,
        result: &str,
        config: Vec<(String, String)>,
        limits: Limits,
        cache: &crate::plugin::cache::Cache,
    ) -> Result<Self, ParseError> {
        let fail = |message: String| ParseError::Plugin { plugin: name.to_string(), message };
        let plugin = Plugin::load(path, cache).map_err(|e| fail(e.to_string()))?;
        plugin.expect(Kind::Parser).map_err(|e| fail(e.to_string()))?;
        let sb = Sandbox {
            scratch: None,
            env: &[],
            limits,
            interrupted: crate::sys::interrupt::requested,
            interval: None,
            stop: None,
        };
        let iface = plugin.check(&config, &sb).0.map_err(|e| fail(e.to_string()))?;
        if let Some((k, _)) = config.iter().find(|(k, _)| !iface.keys.contains(k)) {
            return Err(fail(format!(
                "config `{k}`: the parser reads no such key (it reads: {})",
                iface.keys.join(", ")
            )));
        }
        if !iface.results.iter().any(|r| r == result) {
            return Err(fail(format!("returns no result `{result}` (it returns: {})", iface.results.join(", "))));
        }
        Ok(PluginParser { plugin, name: name.to_string(), result: result.to_string(), config, limits })
    }
}

impl Parser for PluginParser {
    fn parse(&self, out: &RawOutput<'_>) -> Result<Reading, ParseError> {
        // A trial reaches its parsers only when its program exited 0.
        let output = engine_sdk::TrialOutput { stdout: out.stdout, stderr: out.stderr, exit_code: 0 };
        let sb = Sandbox {
            scratch: None,
            stop: None,
            env: &[],
            limits: self.limits,
            interrupted: crate::sys::interrupt::requested,
            interval: None,
        };
        let fail = |message: String| ParseError::Plugin { plugin: self.name.clone(), message };
        let report = self.plugin.parse(&self.config, &output, &sb).0.map_err(|e| fail(e.to_string()))?;
        let value = report.get(&self.result).ok_or_else(|| fail(format!("returned no value for `{}`", self.result)))?;
        Ok(Reading { value, raw: format!("{} (from the plugin)", crate::units::exact(value)) })
    }
}
