//! The layout ARCHITECTURE.md asks for, checked from the source text: no
//! import cycle between modules, at the top level (`runner`, `state`, …) or
//! one level down (`state::journal`, `runner::executor`, …). A module may
//! use its parent's items (the folder's seam) and its children's; siblings
//! must form layers.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Every `.rs` file under `dir`.
fn files(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let p = e.path();
        if p.is_dir() {
            files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// `state/change/mod.rs` → `["state", "change"]`; the crate roots → `[]`.
fn module_of(src: &Path, file: &Path) -> Vec<String> {
    let rel = file.strip_prefix(src).unwrap().with_extension("");
    let mut parts: Vec<String> = rel.iter().map(|c| c.to_string_lossy().into_owned()).collect();
    if matches!(parts.last().map(String::as_str), Some("mod" | "lib" | "main")) {
        parts.pop();
    }
    parts
}

/// The code of a file before its unit tests, without line comments.
fn code(text: &str) -> String {
    let body = text.split("#[cfg(test)]").next().unwrap_or("");
    body.lines().map(|l| l.split("//").next().unwrap_or("")).collect::<Vec<_>>().join("\n")
}

/// The module paths `text` names with `crate::…` and `super::…`, each as
/// written (braced groups expanded one level: `super::{a, b::c}`).
fn paths(text: &str) -> Vec<(String, Vec<String>)> {
    let ident = |c: char| c.is_ascii_alphanumeric() || c == '_';
    let mut out = Vec::new();
    for start in ["crate::", "super::"] {
        let mut from = 0;
        while let Some(i) = text[from..].find(start).map(|i| i + from) {
            from = i + start.len();
            if i > 0 && text[..i].ends_with(|c: char| ident(c) || c == ':') {
                continue;
            }
            let root = start.trim_end_matches("::").to_string();
            let mut rest = &text[from..];
            let mut segs = Vec::new();
            // `super::super::x`
            while let Some(r) = rest.strip_prefix("super::") {
                segs.push("super".to_string());
                rest = r;
            }
            loop {
                let n = rest.find(|c: char| !ident(c)).unwrap_or(rest.len());
                if n == 0 {
                    break;
                }
                segs.push(rest[..n].to_string());
                match rest[n..].strip_prefix("::") {
                    Some(r) => rest = r,
                    None => break,
                }
            }
            if let Some(group) = rest.strip_prefix('{') {
                for item in top_level_items(group) {
                    // `a::b::{C, D}`: the path up to the inner group.
                    let head = item.split('{').next().unwrap_or("");
                    let mut all = segs.clone();
                    all.extend(head.split("::").map(|s| s.trim().to_string()).filter(|s| !s.is_empty() && s != "self"));
                    out.push((root.clone(), all));
                }
            } else {
                out.push((root.clone(), segs));
            }
        }
    }
    out
}

/// The comma-separated items of a braced group (`{` already read) up to
/// its closing brace, nested groups kept whole.
fn top_level_items(group: &str) -> Vec<&str> {
    let (mut depth, mut start, mut out) = (0usize, 0usize, Vec::new());
    for (i, c) in group.char_indices() {
        match c {
            '{' => depth += 1,
            '}' if depth == 0 => {
                out.push(&group[start..i]);
                return out;
            }
            '}' => depth -= 1,
            ',' if depth == 0 => {
                out.push(&group[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    out.push(&group[start..]);
    out
}

/// The module a path names: the longest prefix that is a module.
fn resolve(modules: &BTreeSet<Vec<String>>, from: &[String], root: &str, segs: &[String]) -> Vec<String> {
    let mut base: Vec<String> =
        if root == "crate" { Vec::new() } else { from[..from.len().saturating_sub(1)].to_vec() };
    let mut segs = segs;
    while let Some(("super", rest)) = segs.split_first().map(|(a, b)| (a.as_str(), b)) {
        base.pop();
        segs = rest;
    }
    let mut best = base.clone();
    for s in segs {
        base.push(s.clone());
        if modules.contains(&base) {
            best = base.clone();
        } else {
            break;
        }
    }
    best
}

/// The cycles (strongly connected components of two or more) of `edges`.
fn cycles(edges: &BTreeMap<String, BTreeSet<String>>) -> Vec<Vec<String>> {
    let nodes: BTreeSet<&String> = edges.keys().chain(edges.values().flatten()).collect();
    let reach = |from: &String| {
        let mut seen = BTreeSet::new();
        let mut stack = vec![from.clone()];
        while let Some(n) = stack.pop() {
            for m in edges.get(&n).into_iter().flatten() {
                if seen.insert(m.clone()) {
                    stack.push(m.clone());
                }
            }
        }
        seen
    };
    let reached: BTreeMap<&String, BTreeSet<String>> = nodes.iter().map(|n| (*n, reach(n))).collect();
    let mut out: Vec<Vec<String>> = Vec::new();
    for n in &nodes {
        let ring: Vec<String> = nodes
            .iter()
            .filter(|m| reached[*n].contains(**m) && reached[*m].contains(*n))
            .map(|m| (*m).clone())
            .collect();
        if ring.len() > 1 && !out.contains(&ring) {
            out.push(ring);
        }
    }
    out
}

#[test]
fn no_import_cycle_between_modules_or_files_of_a_folder() {
    // engine's crates: the layers between them the compiler holds; inside
    // each, this.
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    for (src, least) in [
        (root.join("crates/engine-core/src"), 8),
        (root.join("crates/engine-ops/src"), 2),
        (root.join("crates/engine-serve/src"), 2),
        (root.join("engine/src/cli"), 2),
        (root.join("crates/engine-model/src"), 2),
        (root.join("crates/engine-sys/src"), 2),
    ] {
        no_cycle_in(&src, least);
    }
}

fn no_cycle_in(src: &Path, least: usize) {
    let src = src.to_path_buf();
    let mut all = Vec::new();
    files(&src, &mut all);
    let modules: BTreeSet<Vec<String>> = all.iter().map(|f| module_of(&src, f)).collect();
    for depth in [1, 2] {
        let mut edges: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
        for f in &all {
            let from = module_of(&src, f);
            if from.is_empty() {
                continue; // the crate roots
            }
            let text = code(&std::fs::read_to_string(f).unwrap());
            let a = from[..from.len().min(depth)].join("::");
            for (root, segs) in paths(&text) {
                let to = resolve(&modules, &from, &root, &segs);
                let b = to[..to.len().min(depth)].join("::");
                // A module and its own parent or child are one seam, not a cycle.
                let related = |x: &str, y: &str| y.is_empty() || x.starts_with(&format!("{y}::"));
                if a != b && !related(&a, &b) && !related(&b, &a) {
                    edges.entry(a.clone()).or_default().insert(b);
                }
            }
        }
        let found = cycles(&edges);
        assert!(found.is_empty(), "{}: import cycles at depth {depth}: {found:?}", src.display());
        assert!(
            edges.len() > least,
            "{}: the graph was read: {} modules with imports at depth {depth}",
            src.display(),
            edges.len()
        );
    }
}

/// The check finds a ring when there is one.
#[test]
fn a_ring_of_two_modules_is_found() {
    let modules: BTreeSet<Vec<String>> =
        [vec!["a".to_string()], vec!["a".into(), "x".into()], vec!["a".into(), "y".into()]].into_iter().collect();
    let from_x = vec!["a".to_string(), "x".to_string()];
    let found = paths("use super::{y::{Thing, Other}, x};\nlet _ = crate::a::y::f();");
    let targets: Vec<Vec<String>> = found.iter().map(|(r, s)| resolve(&modules, &from_x, r, s)).collect();
    assert_eq!(targets, [vec!["a", "y"], vec!["a", "y"], vec!["a", "x"]]);
    let mut edges = BTreeMap::new();
    edges.insert("a::x".to_string(), BTreeSet::from(["a::y".to_string()]));
    edges.insert("a::y".to_string(), BTreeSet::from(["a::x".to_string()]));
    assert_eq!(cycles(&edges), [vec!["a::x".to_string(), "a::y".to_string()]]);
}
