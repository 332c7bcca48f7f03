//! What a test would run, rendered without running it (`--dry-run`): each
//! command line with the test's values filled in — the directories as
//! `$TEST_DIR`, `$SCRATCH_DIR` and `$TARGET_DIR` — in the order the runner
//! runs them. What a reader compares with PTS's command lines.

use crate::expand::Test;
use crate::model::profile::{ExecutorDef, Step};
use crate::model::template;
use indexmap::IndexMap;

/// The test's commands, one line each: `pre_test: …`, `server NAME: …`,
/// `trial: …` (the measured command), `post_trial: …`; a built-in or WASM
/// workload as its name and configuration.
pub fn commands(test: &Test, installed: &std::path::Path) -> Vec<String> {
    let mut b =
        super::bindings(test, std::path::Path::new("$TEST_DIR"), std::path::Path::new("$TARGET_DIR"), installed);
    match &test.profile.profile.executor {
        ExecutorDef::External(x) => {
            let mut out = Vec::new();
            let test_b = b.clone();
            b.insert(
                "scratch_dir".into(),
                if test.profile.profile.scratch == crate::model::profile::ScratchScope::PerTest {
                    "$TEST_DIR".into()
                } else {
                    "$SCRATCH_DIR".into()
                },
            );
            steps(&mut out, "pre_test", &x.pre_test, &test_b);
            steps(&mut out, "pre_trial", &x.pre_trial, &b);
            let mut line = line_of(&x.program, &x.args, &b);
            if let Some(s) = &x.stdin {
                line.push_str(&format!(" < {}", render(s, &b)));
            }
            out.push(format!("trial: {line}"));
            steps(&mut out, "post_trial", &x.post_trial, &b);
            steps(&mut out, "post_test", &x.post_test, &test_b);
            out
        }
        ExecutorDef::Builtin(w) => vec![format!("workload {}{}", w.workload, config(&w.config, &b))],
        ExecutorDef::Wasm(w) => vec![format!("plugin {}{}", w.plugin, config(&w.config, &b))],
    }
}

fn render(s: &str, b: &IndexMap<String, String>) -> String {
    template::render(s, |n| b.get(n).map(String::as_str), false).unwrap_or_else(|_| s.to_string())
}

fn line_of(program: &str, args: &[String], b: &IndexMap<String, String>) -> String {
    let args = template::render_args(args, |n| b.get(n).map(String::as_str)).unwrap_or_else(|_| args.to_vec());
    std::iter::once(render(program, b)).chain(args.iter().map(|a| template::quote(a))).collect::<Vec<_>>().join(" ")
}

fn steps(out: &mut Vec<String>, which: &str, steps: &[Step], b: &IndexMap<String, String>) {
    for s in steps {
        let line = match (&s.server, &s.program, &s.shell) {
            (Some(d), _, _) => format!("server {}: {}", d.name, line_of(&d.program, &d.args, b)),
            (None, Some(p), _) => format!("{which}: {}", line_of(p, &s.args, b)),
            (None, None, Some(sh)) => format!("{which}: sh -c {}", template::quote(&render(sh, b))),
            (None, None, None) => continue,
        };
        out.push(line);
    }
}

fn config(c: &IndexMap<String, crate::model::profile::Scalar>, b: &IndexMap<String, String>) -> String {
    c.iter().map(|(k, v)| format!(" {k}={}", render(v.as_str(), b))).collect()
}
