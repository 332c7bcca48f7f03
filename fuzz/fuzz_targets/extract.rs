//! Archive extraction: the first byte picks how the rest is fed — as a
//! tar that the harness gzips (so the fuzzer explores tar headers through
//! the real .tar.gz path), as raw .tar.gz bytes, as a plain .tar, or as a
//! .zip — into `dest/` of a fresh temporary folder that also holds a bait
//! file. Whatever the archive, nothing may land outside `dest/`: the
//! folder holds only `dest`, `bait` and the archive afterwards, the bait is
//! unchanged and not hard-linked, and after a successful extraction every
//! symlink in `dest/` resolves inside it.
#![no_main]
use engine::install::extract::{Format, extract};
use libfuzzer_sys::fuzz_target;
use std::io::Write;
use std::os::unix::fs::MetadataExt;
use std::path::Path;

fn walk(dir: &Path, root: &Path) {
    let Ok(rd) = std::fs::read_dir(dir) else { return };
    for e in rd.flatten() {
        let p = e.path();
        let m = std::fs::symlink_metadata(&p).unwrap();
        if m.file_type().is_symlink() {
            if let Ok(real) = p.canonicalize() {
                assert!(real.starts_with(root), "{} resolves outside: {}", p.display(), real.display());
            }
        } else if m.is_dir() {
            walk(&p, root);
        }
    }
}

fuzz_target!(|data: &[u8]| {
    let Some((&mode, body)) = data.split_first() else { return };
    let tmp = tempfile::tempdir().unwrap();
    let top = tmp.path().canonicalize().unwrap();
    let dest = top.join("dest");
    std::fs::create_dir(&dest).unwrap();
    let bait = top.join("bait");
    std::fs::write(&bait, b"bait").unwrap();
    let (name, bytes) = match mode % 4 {
        0 => {
            let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
            e.write_all(body).unwrap();
            ("a.tar.gz", e.finish().unwrap())
        }
        1 => ("a.tar.gz", body.to_vec()),
        2 => ("a.tar", body.to_vec()),
        _ => ("a.zip", body.to_vec()),
    };
    let archive = top.join(name);
    std::fs::write(&archive, &bytes).unwrap();
    let result =
        extract(&archive, name, Format::of(name).unwrap(), &dest, &engine::install::extract::Limits::DOWNLOADS);
    let mut names: Vec<String> =
        std::fs::read_dir(&top).unwrap().flatten().map(|e| e.file_name().to_string_lossy().into_owned()).collect();
    names.sort();
    let mut want = vec!["bait".to_string(), "dest".to_string(), name.to_string()];
    want.sort();
    assert_eq!(names, want, "something landed next to dest/ ({result:?})");
    let m = std::fs::symlink_metadata(&bait).unwrap();
    assert!(m.is_file() && m.nlink() == 1, "the bait was replaced or hard-linked ({result:?})");
    assert_eq!(std::fs::read(&bait).unwrap(), b"bait", "the bait was written ({result:?})");
    if result.is_ok() {
        walk(&dest, &dest);
    } else {
        let _ = result.unwrap_err().to_string();
    }
});
