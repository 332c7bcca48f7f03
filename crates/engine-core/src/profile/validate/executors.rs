//! Executors: built-in workloads' settings, WASM plugins' paths and limits (and the files on disk), external commands.

use super::*;

pub(super) fn check_builtin(c: &mut Checker, b: &BuiltinExecutor, p: &Profile, known: &BTreeSet<String>) {
    let Some(w) = crate::workloads::find(&b.workload) else {
        let names = crate::workloads::names();
        let hint = match crate::model::diag::did_you_mean(&b.workload, names.iter().copied()) {
            Some(s) => format!("did you mean `{s}`?"),
            None => format!("built-in workloads: {}", names.join(", ")),
        };
        c.at_value(
            path!["executor", "builtin", "workload"],
            format!("no built-in workload `{}`", b.workload),
            Some(hint),
        );
        return;
    };
    for (k, v) in &b.config {
        if !w.keys.contains(&k.as_str()) {
            let hint = match crate::model::diag::did_you_mean(k, w.keys.iter().copied()) {
                Some(s) => format!("did you mean `{s}`?"),
                None => format!("`{}` reads: {}", w.name, w.keys.join(", ")),
            };
            c.at_key(
                path!["executor", "builtin", "config", k.as_str()],
                format!("workload `{}` has no config key `{k}`", w.name),
                Some(hint),
            );
        }
        c.text(path!["executor", "builtin", "config", k.as_str()], v.as_str(), known);
    }
    for (i, r) in p.results.iter().enumerate() {
        if !w.results.contains(&r.id.as_str()) && !p.parsers.iter().any(|d| d.result == r.id) {
            c.at_value(
                path!["results", i, "id"],
                format!("workload `{}` returns no result `{}`", w.name, r.id),
                Some(format!("it returns: {}", w.results.join(", "))),
            );
        }
    }
}

pub(super) fn check_wasm(c: &mut Checker, w: &WasmExecutor, known: &BTreeSet<String>) {
    c.plugin_path(path!["executor", "wasm", "plugin"], &w.plugin);
    for (k, v) in &w.config {
        c.text(path!["executor", "wasm", "config", k.as_str()], v.as_str(), known);
    }
    for (k, v) in &w.env {
        c.text(path!["executor", "wasm", "env", k.as_str()], v, known);
    }
}

impl Checker<'_> {
    /// A plugin path must name a file inside the profile's folder: relative,
    /// and never climbing with `..` (symlinks are checked on disk, see
    /// [`check_plugin_files`]).
    pub(super) fn plugin_path(&mut self, at: Path, rel: &str) {
        let hint = "put the `.wasm` file in the profile's folder and name it relative to it, like `plugin.wasm`";
        if rel.trim().is_empty() {
            self.at_value(at, "plugin path is empty", Some(hint.into()));
        } else if rel.starts_with('/') {
            self.at_value(
                at,
                format!("plugin path `{rel}` is absolute; it must be inside the profile's folder"),
                Some(hint.into()),
            );
        } else if std::path::Path::new(rel).components().any(|c| matches!(c, std::path::Component::ParentDir)) {
            self.at_value(
                at,
                format!("plugin path `{rel}` climbs out of the profile's folder with `..`"),
                Some(hint.into()),
            );
        } else if template::names(rel).is_ok_and(|n| !n.is_empty()) {
            self.at_value(
                at,
                format!("plugin path `{rel}` holds a placeholder"),
                Some("name one file; put choices in `config:`".into()),
            );
        }
    }
}

/// On-disk checks of the plugin files a profile in folder `dir` names.
pub fn check_plugin_files(p: &Profile, dir: &std::path::Path, file: &str, index: &YamlIndex) -> Diagnostics {
    let packages = crate::install::packages::Catalog::default();
    let mut c = Checker { file, index, packages: &packages, out: Diagnostics::default() };
    let mut paths: Vec<(Path, &str)> = Vec::new();
    if let ExecutorDef::Wasm(w) = &p.executor {
        paths.push((path!["executor", "wasm", "plugin"], &w.plugin));
    }
    for (i, pd) in p.parsers.iter().enumerate() {
        if let Some(pl) = &pd.plugin {
            paths.push((path!["parsers", i, "plugin", "path"], &pl.path));
        }
    }
    for (at, rel) in paths {
        // Lexical problems were reported by `check_profile`.
        if rel.trim().is_empty()
            || rel.starts_with('/')
            || rel.contains("..")
            || template::names(rel).is_ok_and(|n| !n.is_empty())
        {
            continue;
        }
        if let Err(e) = crate::plugin::file::plugin_file(dir, rel) {
            let hint = match e {
                crate::plugin::file::PluginFileError::Missing(_) => format!(
                    "build the plugin (`engine plugin build`) and copy its `.wasm` to {}",
                    dir.join(rel).display()
                ),
                crate::plugin::file::PluginFileError::Directory(_) => "name the `.wasm` file itself".to_string(),
                crate::plugin::file::PluginFileError::Escapes(_) => {
                    "copy the `.wasm` file into the profile's folder instead of linking to it".to_string()
                }
            };
            c.at_value(at, e.to_string(), Some(hint));
        }
    }
    c.out
}

pub(super) fn check_external(c: &mut Checker, x: &ExternalExecutor, known: &BTreeSet<String>) {
    if x.program.trim().is_empty() {
        c.at_value(
            path!["executor", "external", "program"],
            "program is empty",
            Some("name the program to run, like `fio`".into()),
        );
    }
    c.text(path!["executor", "external", "program"], &x.program, known);
    for (i, a) in x.args.iter().enumerate() {
        c.arg(path!["executor", "external", "args", i], a, known);
    }
    for (k, v) in &x.env {
        c.text(path!["executor", "external", "env", k.as_str()], v, known);
    }
    if let Some(s) = &x.stdin {
        c.text(path!["executor", "external", "stdin"], s, known);
    }
    let mut servers = HashSet::new();
    check_steps(c, "pre_test", &x.pre_test, known, &mut servers);
    check_steps(c, "pre_trial", &x.pre_trial, known, &mut servers);
    check_steps(c, "post_trial", &x.post_trial, known, &mut servers);
    check_steps(c, "post_test", &x.post_test, known, &mut servers);
}
