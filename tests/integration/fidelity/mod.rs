//! PTS fidelity (issue 43): for each seed test engine claims under PTS's
//! label, the command engine would run (its `--dry-run` lines) is the one
//! PTS's test-definition and install.sh produce, and engine's parser reads
//! the number PTS's parser reads from the real tool's output. One file per
//! profile group; the PTS side is read from `tests/fixtures/pts-profiles/`
//! (PTS's folders as it ships them, copied from `../shared/fixtures/`).

use crate::common::{Env, repo};
use engine::model::profile::{LoadedProfile, Origin};
use engine::profile::load::{Packages, profile_from_str};
use std::path::PathBuf;
use std::sync::Arc;

mod builds;
mod files;
mod storage;

/// A PTS test-profile folder of the fixtures (`fio-2.2.0`).
pub fn pts_profile(name: &str) -> PathBuf {
    repo().join("tests/fixtures/pts-profiles").join(name)
}

/// A file of a PTS fixture profile, as text.
pub fn pts_file(profile: &str, file: &str) -> String {
    let p = pts_profile(profile).join(file);
    std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

/// What `engine benchmark REFERENCE --dry-run` says each test runs: per
/// test, its label and its command lines (`trial: fio …`, `pre_test: …`,
/// `server NAME: …`, `workload io …`), directories as `$TEST_DIR`,
/// `$SCRATCH_DIR` and `$TARGET_DIR`.
pub fn engine_commands(env: &Env, reference: &str, options: &[&str]) -> Vec<(String, Vec<String>)> {
    let mut args = vec!["benchmark", reference, "--dry-run", "-y"];
    for o in options {
        args.extend(["-o", o]);
    }
    let r = env.run(&args);
    assert_eq!(r.code, 0, "{r:?}");
    let mut out: Vec<(String, Vec<String>)> = Vec::new();
    for line in r.stdout.lines() {
        if let Some(cmd) = line.strip_prefix("    ") {
            out.last_mut().expect("a test before its commands").1.push(cmd.to_string());
        } else if let Some(test) = line.strip_prefix("  ") {
            let label = test.rsplit_once(": ").map(|(l, _)| l).unwrap_or(test);
            // `label: N trial(s) …`: the label is everything before the last `: N trial`.
            let label = test.find(" trial(s)").and_then(|i| test[..i].rfind(": ")).map(|i| &test[..i]).unwrap_or(label);
            out.push((label.to_string(), Vec::new()));
        }
    }
    out
}

/// One option of a PTS test-definition.xml: its display name, the text put
/// around the chosen value, and its menu (entry name, value).
pub struct PtsOption {
    pub name: String,
    pub prefix: String,
    pub postfix: String,
    pub menu: Vec<(String, String)>,
}

/// The text of `n`'s child element `tag`.
pub fn child<'a>(n: roxmltree::Node<'a, 'a>, tag: &str) -> Option<String> {
    n.children().find(|c| c.has_tag_name(tag)).map(|c| c.text().unwrap_or("").to_string())
}

/// The options of a test-definition.xml.
pub fn pts_options(xml: &str) -> Vec<PtsOption> {
    let doc = roxmltree::Document::parse(xml).unwrap();
    doc.descendants()
        .filter(|n| n.has_tag_name("Option"))
        .map(|o| PtsOption {
            name: child(o, "DisplayName").unwrap_or_default(),
            prefix: child(o, "ArgumentPrefix").unwrap_or_default(),
            postfix: child(o, "ArgumentPostfix").unwrap_or_default(),
            menu: o
                .descendants()
                .filter(|e| e.has_tag_name("Entry"))
                .map(|e| (child(e, "Name").unwrap_or_default(), child(e, "Value").unwrap_or_default()))
                .collect(),
        })
        .collect()
}

/// A shipped profile, loaded as engine loads it.
pub fn load(id: &str) -> Arc<LoadedProfile> {
    let path = repo().join("test-profiles").join(id).join("profile.yaml");
    let text = std::fs::read_to_string(&path).unwrap();
    Arc::new(profile_from_str(&text, id, Origin::File(path), &Packages::builtin()).unwrap())
}
