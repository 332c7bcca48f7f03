//! Robustness: a full disk during a trial, a result write and an extraction
//! (16 MiB ext4 loop devices without a root reserve; root); hostile result
//! and composite.xml files (200 MB, 10,000-deep, invalid UTF-8) with the
//! engine's peak memory measured; symlinks planted where engine writes (a
//! lock, a result folder that links to /etc); and the inputs fuzzing found.

use crate::common::*;
use crate::loopdev::LoopFs;
use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

/// Runs `cmd` to the end under GNU time and returns its output with the
/// peak resident memory of that process in KiB. (The rusage of a child
/// spawned from the test process itself is useless: a vfork'ed child is
/// charged the test harness's memory before it execs.)
fn run_measured(cmd: Command) -> (Run, u64) {
    let out = tempfile::tempdir().unwrap();
    let rss = out.path().join("rss");
    let mut t = Command::new("/usr/bin/time");
    t.arg("-o").arg(&rss).args(["-f", "%M"]).arg(cmd.get_program()).args(cmd.get_args());
    for (k, v) in cmd.get_envs() {
        match v {
            Some(v) => t.env(k, v),
            None => t.env_remove(k),
        };
    }
    let run: Run = t.output().expect("GNU time runs (scripts/install-deps.sh installs it)").into();
    let text = std::fs::read_to_string(&rss).unwrap();
    let kib = text.lines().last().and_then(|l| l.trim().parse().ok()).unwrap_or_else(|| panic!("time said {text:?}"));
    // GNU time adds its own line to stderr when the command fails.
    let stderr = run.stderr.lines().filter(|l| !l.starts_with("Command exited with")).collect::<Vec<_>>().join("\n");
    (Run { stderr, ..run }, kib)
}

/// Every file under `dir` whose name marks an unfinished write.
fn temp_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let Ok(rd) = std::fs::read_dir(dir) else { return out };
    for e in rd.flatten() {
        let p = e.path();
        let n = e.file_name().to_string_lossy().to_string();
        if e.file_type().is_ok_and(|t| t.is_dir()) {
            if n.starts_with(".tmp") || n.ends_with(".tmp") {
                out.push(p.clone());
            }
            out.extend(temp_files(&p));
        } else if n.starts_with(".tmp") || n.ends_with(".tmp") || n.ends_with(".part") {
            out.push(p);
        }
    }
    out
}

// ---------------------------------------------------------------- disk full

/// A disk that fills during a trial: the trial fails naming ENOSPC and the
/// file it was writing, its files are gone, the run goes on and saves.
#[test]
#[ignore = "needs root"]
fn disk_full_during_a_trial_names_enospc_and_the_file() {
    let fs = LoopFs::without_reserve(16);
    let env = Env::new();
    env.profile(
        "fill",
        "id: fill\nversion: 1.0.0\ntitle: Fill\ntest_type: disk\nexecutor: {builtin: {workload: io, config: {rw: write, bs: 1m, size: 64m, runtime: '0', direct: 'no'}}}\nresults:\n  - {id: bandwidth, unit: MB/s, proportion: HIB}\nparsers: []\n",
    );
    env.profile("echo", &echo_profile("echo", &["1"]));
    let target = fs.path();
    let r = env.run(&["benchmark", "-y", "fill", "echo", "--runs", "1", "--target-dir", target, "--save", "full"]);
    assert_eq!(r.code, 4, "{r:?}");
    assert!(r.stderr.contains("No space left on device (ENOSPC)"), "{r:?}");
    assert!(r.stderr.contains(target), "the message names the path: {r:?}");
    assert_eq!(env.result("full")["results"][0]["profile"], "echo", "the next test ran and was saved");
    let left: Vec<_> =
        std::fs::read_dir(fs.path()).unwrap().flatten().map(|e| e.file_name()).filter(|n| n != "lost+found").collect();
    assert!(left.is_empty(), "the trial's files are removed: {left:?}");
    assert!(temp_files(env.home.path()).is_empty());
}

/// ENGINE_HOME on a small file system that a trial fills: saving the result
/// fails naming ENOSPC and the result file; results written before keep
/// their bytes; no temporary file remains; with room again the same command
/// finishes the run.
#[test]
#[ignore = "needs root"]
fn disk_full_during_a_result_write_keeps_every_earlier_result() {
    let fs = LoopFs::without_reserve(16);
    let env = Env::new();
    let home = fs.mnt.path().join("home");
    std::fs::create_dir(&home).unwrap();
    let filler = fs.mnt.path().join("filler");
    let flag = fs.mnt.path().join("fill-now");
    env.profile("echo", &echo_profile("echo", &["1"]));
    // Its trial fills the home's file system while `flag` exists, then reports a value.
    env.profile(
        "hog",
        &format!(
            "id: hog\nversion: 1.0.0\ntitle: Hog\ntest_type: other\nexecutor:\n  external:\n    program: sh\n    args: [\"-c\", \"if [ -e {flag} ]; then dd if=/dev/zero of={f} bs=64k 2>/dev/null; sync; i=0; while [ $i -lt 500 ] && dd if=/dev/zero of={f}.$i bs=4k count=1 2>/dev/null; do i=$((i+1)); sync; done; fi; echo value: 1\"]\nresults:\n  - {{id: number, unit: Items, proportion: HIB}}\nparsers:\n  - {{result: number, regex: 'value: (?P<value>[0-9.]+)'}}\n",
            flag = flag.display(),
            f = filler.display()
        ),
    );
    let run = |args: &[&str]| -> Run {
        let mut all = vec!["benchmark", "-y", "--runs", "1", "--target-dir", env.target.path().to_str().unwrap()];
        all.extend_from_slice(args);
        let mut c = env.cmd(&all);
        c.env("ENGINE_HOME", &home);
        c.output().unwrap().into()
    };
    let r = run(&["echo", "--save", "keep", "--identifier", "a"]);
    assert_eq!(r.code, 0, "{r:?}");
    let r = run(&["echo", "--save", "grow", "--identifier", "a"]);
    assert_eq!(r.code, 0, "{r:?}");
    let results = home.join("results");
    let keep = std::fs::read(results.join("keep/result.json")).unwrap();
    let grow = std::fs::read(results.join("grow/result.json")).unwrap();

    std::fs::write(&flag, "").unwrap();
    let r = run(&["hog", "--save", "grow", "--identifier", "b"]);
    assert_ne!(r.code, 0, "{r:?}");
    assert!(r.stderr.contains("No space left on device"), "{r:?}");
    assert!(r.stderr.contains(&results.join("grow").display().to_string()), "names the path: {r:?}");
    assert_eq!(std::fs::read(results.join("keep/result.json")).unwrap(), keep, "an earlier result is untouched");
    assert_eq!(std::fs::read(results.join("grow/result.json")).unwrap(), grow, "the file being written is intact");
    assert!(temp_files(&home).is_empty(), "{:?}", temp_files(&home));

    std::fs::remove_file(&flag).unwrap();
    for e in std::fs::read_dir(fs.path()).unwrap().flatten() {
        if e.file_name().to_string_lossy().starts_with("filler") {
            std::fs::remove_file(e.path()).unwrap();
        }
    }
    let r = run(&["hog", "--save", "grow", "--identifier", "b"]);
    assert_eq!(r.code, 0, "with room again the run finishes: {r:?}");
    let f: serde_json::Value =
        serde_json::from_slice(&std::fs::read(results.join("grow/result.json")).unwrap()).unwrap();
    let ids: Vec<&str> = f["systems"].as_array().unwrap().iter().map(|s| s["identifier"].as_str().unwrap()).collect();
    assert_eq!(ids, ["a", "b"]);
    assert!(temp_files(&home).is_empty(), "{:?}", temp_files(&home));
}

/// An archive whose content does not fit the install folder's ext4: the
/// install fails naming ENOSPC and the member; nothing partial remains.
#[test]
#[ignore = "needs root"]
fn disk_full_during_an_extraction_leaves_no_partial_install() {
    let fs = LoopFs::without_reserve(16);
    let env = Env::new();
    let home = fs.mnt.path().join("home");
    std::fs::create_dir(&home).unwrap();
    // 24 MB of zeros compress to about 24 KB.
    let zeros = vec![0u8; 24 << 20];
    let mut b = tar::Builder::new(flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast()));
    for (name, data) in [("pkg/value.txt", &b"value: 1\n"[..]), ("pkg/zeros.bin", &zeros[..])] {
        let mut h = tar::Header::new_gnu();
        h.set_size(data.len() as u64);
        h.set_mode(0o644);
        b.append_data(&mut h, name, data).unwrap();
    }
    let data = b.into_inner().unwrap().finish().unwrap();
    // Served from a cache folder by name: no network at all.
    let cache = tempfile::tempdir().unwrap();
    std::fs::write(cache.path().join("z.tar.gz"), &data).unwrap();
    let sha: String = Sha256::digest(&data).iter().map(|b| format!("{b:02x}")).collect();
    env.profile(
        "fullx",
        &format!(
            "id: fullx\nversion: 1.0.0\ntitle: X\ntest_type: other\ninstall:\n  downloads:\n    - file: z.tar.gz\n      size: {}\n      sha256: {sha}\n      urls: [https://example.invalid/z.tar.gz]\nexecutor:\n  external:\n    program: cat\n    args: [\"{{{{install_dir}}}}/pkg/value.txt\"]\nresults:\n  - {{id: number, unit: Items, proportion: HIB}}\nparsers:\n  - {{result: number, regex: 'value: (?P<value>[0-9.]+)'}}\n",
            data.len()
        ),
    );
    let mut c = env.cmd(&["install", "fullx"]);
    // The ratio cap (1,000 to one here) would stop it first; the disk is what is tested.
    c.env("ENGINE_HOME", &home).env("ENGINE_DOWNLOAD_CACHE", cache.path()).env("ENGINE_DOWNLOAD_UNPACK_RATIO", "10000");
    let r: Run = c.output().unwrap().into();
    assert_eq!(r.code, 5, "{r:?}");
    assert!(r.stderr.contains("cannot extract `pkg/zeros.bin`"), "names the member: {r:?}");
    assert!(r.stderr.contains("No space left on device"), "{r:?}");
    assert!(r.stderr.contains("z.tar.gz"), "names the archive: {r:?}");
    let left: Vec<String> = std::fs::read_dir(home.join("installed"))
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().to_string())
        .filter(|n| !n.ends_with(".lock"))
        .collect();
    assert!(left.is_empty(), "no half-extracted install: {left:?}");
    assert!(temp_files(&home).is_empty(), "{:?}", temp_files(&home));
}

// ------------------------------------------------------------ hostile input

/// The resident memory an engine that reads nothing big needs (KiB), from
/// `engine --version`; the hostile cases may add at most their stated cap.
fn baseline_rss() -> u64 {
    run_measured({
        let mut c = Command::new(crate::common::bin());
        c.arg("--version");
        c
    })
    .1
}

/// A 200 MB result.json (sparse) from outside and a 200 MB composite.xml
/// are refused before reading, naming the limit; in the store (where engine
/// reads results of any size it wrote, a fleet's merge) the same file is
/// read as it is parsed and refused at its first byte. Memory stays at the
/// baseline either way.
#[test]
fn a_200_mb_result_or_composite_is_refused_before_reading() {
    let env = Env::new();
    let dir = env.home.path().join("results/huge");
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("result.json");
    std::fs::File::create(&file).unwrap().set_len(200 << 20).unwrap();
    let base = baseline_rss();
    let (r, rss) = run_measured(env.cmd(&["result", "show", file.to_str().unwrap()]));
    assert_eq!(r.code, 1, "{r:?}");
    assert!(
        r.stderr.contains("result.json") && r.stderr.contains("it is 200 MiB, over engine's limit of 64 MiB"),
        "{r:?}"
    );
    assert!(rss < base + 16 * 1024, "peak RSS {rss} KiB (baseline {base} KiB)");
    let (r, rss) = run_measured(env.cmd(&["result", "show", "huge"]));
    assert_eq!(r.code, 1, "{r:?}");
    assert!(r.stderr.contains("result.json:1:1: not a valid result file"), "{r:?}");
    assert!(rss < base + 16 * 1024, "peak RSS {rss} KiB (baseline {base} KiB)");

    let xml = env.target.path().join("composite.xml");
    std::fs::File::create(&xml).unwrap().set_len(200 << 20).unwrap();
    let (r, rss) = run_measured(env.cmd(&["result", "import", xml.to_str().unwrap(), "--save", "x"]));
    assert_eq!(r.code, 1, "{r:?}");
    assert!(r.stderr.contains("it is 200 MiB, over engine's limit of 32 MiB"), "{r:?}");
    assert!(rss < base + 16 * 1024, "peak RSS {rss} KiB (baseline {base} KiB)");
    assert!(!env.home.path().join("results/x").exists());
}

/// 10,000-deep nesting: an error with a position (the strict model refuses
/// the first bracket where a value belongs; serde_json's recursion limit of
/// 128 bounds any deeper path), and the XML importer takes it without
/// recursion.
#[test]
fn ten_thousand_deep_nesting_is_an_error_not_a_stack_overflow() {
    let env = Env::new();
    let dir = env.home.path().join("results/deep");
    std::fs::create_dir_all(&dir).unwrap();
    let json = format!("{{\"title\": {}{}}}", "[".repeat(10_000), "]".repeat(10_000));
    std::fs::write(dir.join("result.json"), &json).unwrap();
    let (r, rss) = run_measured(env.cmd(&["result", "show", "deep"]));
    assert_eq!(r.code, 1, "{r:?}");
    assert!(r.stderr.contains("result.json:1:") && r.stderr.contains("not a valid result file"), "{r:?}");
    assert!(rss < 64 * 1024, "peak RSS {rss} KiB");

    let xml = env.target.path().join("deep.xml");
    let body = format!("{}{}", "<a>".repeat(10_000), "</a>".repeat(10_000));
    std::fs::write(&xml, format!("<PhoronixTestSuite>{body}</PhoronixTestSuite>")).unwrap();
    let (r, _) = run_measured(env.cmd(&["result", "import", xml.to_str().unwrap(), "--save", "deep-x"]));
    assert_eq!(r.code, 2, "{r:?}");
    assert!(r.stderr.contains("deep.xml:1:1: the file has no <System> and no <Result>"), "{r:?}");
    // Nesting inside a <Result> is ignored the same way.
    let xml2 = env.target.path().join("deep2.xml");
    std::fs::write(
        &xml2,
        format!("<PhoronixTestSuite><System><Identifier>s</Identifier></System><Result><Title>{body}</Title></Result></PhoronixTestSuite>"),
    )
    .unwrap();
    let r: Run = env.run(&["result", "import", xml2.to_str().unwrap(), "--save", "deep-y"]);
    assert_eq!(r.code, 0, "{r:?}");
}

/// Invalid UTF-8 in either file: an error with the line and column of the byte.
#[test]
fn invalid_utf8_is_reported_with_its_position() {
    let env = Env::new();
    let dir = env.home.path().join("results/bad");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("result.json"), b"{\n  \"title\": \"caf\xe9\"\n}\n").unwrap();
    let r = env.run(&["result", "show", "bad"]);
    assert_eq!(r.code, 1, "{r:?}");
    assert!(r.stderr.contains("result.json:2:16: not a valid result file: invalid UTF-8 (byte 0xe9)"), "{r:?}");
    let xml = env.target.path().join("latin1.xml");
    std::fs::write(&xml, b"<PhoronixTestSuite>\n<Generated><Title>caf\xe9</Title></Generated>\n</PhoronixTestSuite>")
        .unwrap();
    let r = env.run(&["result", "import", xml.to_str().unwrap()]);
    assert_eq!(r.code, 1, "{r:?}");
    assert!(r.stderr.contains("latin1.xml:2:22: invalid UTF-8 (byte 0xe9)"), "{r:?}");
}

/// A result folder that is a symlink to /etc: every command that writes a
/// result refuses it, and nothing is written outside ENGINE_HOME.
#[test]
fn a_result_folder_that_links_to_etc_is_never_written() {
    let env = Env::new();
    env.profile("echo", &echo_profile("echo", &["1"]));
    let results = env.home.path().join("results");
    std::fs::create_dir_all(&results).unwrap();
    std::os::unix::fs::symlink("/etc", results.join("evil")).unwrap();
    let etc_before = std::fs::metadata("/etc").unwrap().modified().unwrap();
    let r = env.bench(&["echo", "--save", "evil"]);
    assert_eq!(r.code, 1, "{r:?}");
    assert!(r.stderr.contains("the result folder is a symbolic link; engine writes only into real folders"), "{r:?}");
    env.bench(&["echo", "--save", "good"]);
    for args in [
        &["result", "merge", "good", "--save", "evil"][..],
        &["result", "rename-identifier", "evil", "a", "b"],
        &["result", "remove-result", "evil", "x"],
    ] {
        let r = env.run(args);
        assert_ne!(r.code, 0, "{args:?}: {r:?}");
    }
    let r = env.run(&["result", "delete", "evil"]);
    assert_ne!(r.code, 0, "{r:?}");
    assert!(Path::new("/etc/passwd").exists());
    for f in ["/etc/.lock", "/etc/result.json", "/etc/result.json.bak", "/etc/logs"] {
        assert!(!Path::new(f).exists(), "{f} was written");
    }
    assert_eq!(std::fs::metadata("/etc").unwrap().modified().unwrap(), etc_before, "/etc is unchanged");
    assert!(std::fs::symlink_metadata(results.join("evil")).unwrap().file_type().is_symlink());
}

/// As root with a user-writable ENGINE_HOME: a symlink planted where engine
/// writes its lock is refused, not followed.
#[test]
fn a_planted_symlink_is_not_followed() {
    let env = Env::new();
    env.profile("echo", &echo_profile("echo", &["4"]));
    let victim = env.target.path().join("victim");
    std::fs::write(&victim, "precious").unwrap();
    let dir = env.home.path().join("results/s");
    std::fs::create_dir_all(&dir).unwrap();
    std::os::unix::fs::symlink(&victim, dir.join(".lock")).unwrap();
    let r = env.bench(&["echo", "--runs", "1", "--save", "s"]);
    assert_eq!(r.code, 1, "{r:?}");
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious");
    // A symlinked result folder is refused too.
    std::fs::create_dir_all(env.home.path().join("results")).unwrap();
    std::os::unix::fs::symlink(env.target.path(), env.home.path().join("results/t")).unwrap();
    let r = env.bench(&["echo", "--runs", "1", "--save", "t"]);
    assert_eq!(r.code, 1, "{r:?}");
    assert!(r.stderr.contains("symbolic link"), "{r:?}");
}

// ------------------------------------------------------- fuzz regressions
// Inputs that made a fuzz target (`fuzz/`, `scripts/fuzz.sh`) crash, each
// kept as a regular test of the code it broke, through the same entry point
// the target uses.

/// plugin_config: a duration whose number is too large for a Duration
/// panicked in `Duration::from_secs_f64`; now it is a config error.
#[test]
fn plugin_config_huge_duration_is_an_error() {
    let c: engine_sdk::Config = [("runtime", "99999999999999999999999999h"), ("t2", "1e300")].into_iter().collect();
    let e = c.duration_or("runtime", Duration::from_secs(1)).unwrap_err();
    assert_eq!(
        e.to_string(),
        "config `runtime`: `99999999999999999999999999h` is not a duration; write 500ms, 20s or 2m"
    );
    assert!(c.duration_or("t2", Duration::ZERO).is_err());
}

/// result_load: a value saved as `11.852191546057819` read back as
/// `11.85219154605782` (serde_json's fast float parser may be off by one
/// unit in the last place), so every load and save changed stored results.
/// serde_json's `float_roundtrip` reads every float exactly.
#[test]
fn result_load_floats_survive_load_and_save_exactly() {
    // The input the fuzzer found (the PTS fixture, imported, then mutated).
    let text =
        std::fs::read(crate::common::repo().join("tests/fixtures/fuzz/result-load-float-roundtrip.json")).unwrap();
    let path = std::path::Path::new("result.json");
    let f = engine::store::parse(&text, path).unwrap();
    let once = serde_json::to_vec_pretty(&f).unwrap();
    let again = engine::store::parse(&once, path).unwrap();
    assert_eq!(
        String::from_utf8(serde_json::to_vec_pretty(&again).unwrap()).unwrap(),
        String::from_utf8(once).unwrap()
    );
    assert!(String::from_utf8_lossy(&serde_json::to_vec(&again).unwrap()).contains("11.852191546057819"));
}
