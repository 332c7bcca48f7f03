//! Compiles the repository's `test-profiles/` and `suites/` into the binary, so
//! `engine` works from any directory. `include_str!` makes rustc track each
//! file; the directory watch catches files added or removed.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(rd) = std::fs::read_dir(dir) else { return };
    let mut entries: Vec<_> = rd.flatten().map(|e| e.path()).collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            walk(&p, out);
        } else if p.extension().is_some_and(|e| e == "yaml") {
            out.push(p);
        }
    }
}

fn main() {
    let root = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").unwrap()).join("../..");
    let mut code = String::from("pub static BUILTIN_FILES: &[(&str, &str)] = &[\n");
    for top in ["test-profiles", "suites"] {
        let dir = root.join(top);
        println!("cargo:rerun-if-changed={}", dir.display());
        let mut files = Vec::new();
        walk(&dir, &mut files);
        for f in files {
            let rel = f.strip_prefix(&root).unwrap().to_string_lossy().replace('\\', "/");
            let abs = f.canonicalize().unwrap();
            writeln!(code, "    ({rel:?}, include_str!({:?})),", abs.display().to_string()).unwrap();
        }
    }
    code.push_str("];\n");
    let out = PathBuf::from(std::env::var("OUT_DIR").unwrap()).join("builtin_files.rs");
    std::fs::write(out, code).unwrap();
}
