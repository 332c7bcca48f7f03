//! The shipped profiles with the real tools from Debian
//! (scripts/install-deps.sh installs them): every seed profile at a tiny size
//! in one run, unpack-linux, the kernel and GCC builds from Debian's sources
//! (slow, so ignored unless asked for), a missing tool skipped with its
//! install command; and the shipped suites that follow the seeds.

use crate::common::*;
use std::path::Path;
use std::time::Instant;

/// Every seed profile at a tiny size, one trial each, in one run: the
/// external tools (PostgreSQL with its own cluster, dbench, PostMark, Git,
/// nginx and Apache with ab, the compressors, John the Ripper, OpenSSL,
/// GnuPG) and the built-in presets.
#[test]
fn every_seed_profile_runs_at_a_tiny_size() {
    let env = Env::new();
    env.suite(
        "tiny",
        r#"title: Tiny
tests:
  - {profile: pgbench, options: {scaling_factor: "1", clients: "1 (engine quick: 3 s)", mode: [Read Only, Read Write]}}
  - {profile: dbench, options: {clients: "1 (engine quick: 5 s)"}}
  - {profile: postmark, options: {transactions: "2500 (engine quick)"}}
  - {profile: git, options: {repository: "1000 Commits, 300 Files"}}
  - {profile: nginx, options: {concurrency: "20", requests: "5000"}}
  - {profile: apache, options: {concurrency: "20", requests: "5000"}}
  - {profile: compress-gzip, options: {file_size: 16MB}}
  - {profile: compress-pbzip2, options: {file_size: 16MB}}
  - {profile: compress-7zip, options: {file_size: 16MB}}
  - {profile: compress-zstd, options: {file_size: 16MB}}
  - {profile: compress-xz, options: {file_size: 16MB}}
  - {profile: tiobench-io, options: {test: [Random Write, Random Read], size: 4MB, threads: "4"}}
  - {profile: iozone, options: {record: 64Kb, file_size: 64MB, test: [Write Performance, Read Performance]}}
  - {profile: blogbench, options: {duration: 2 x 1 Seconds}}
  - {profile: io-patterns, options: {pattern: AIO-Stress Random Write, file_size: 64 MiB}}
  - {profile: john-the-ripper, options: {test: MD5, duration: 1 Second}}
  - {profile: openssl, options: {seconds: 1 Second}}
  - {profile: gnupg, options: {file_size: 64MB}}
"#,
    );
    let t0 = Instant::now();
    let r = env.bench(&["suite/tiny", "--runs", "1", "--save", "tiny"]);
    assert_eq!(r.code, 0, "{r:?}");
    let v = env.result("tiny");
    let results = v["results"].as_array().unwrap();
    let has = |profile: &str, result: &str| {
        results.iter().any(|x| {
            x["profile"] == profile
                && x["result"] == result
                && x["entries"][0]["value"].as_f64().is_some_and(|v| v > 0.0)
        })
    };
    for (p, res) in [
        ("pgbench", "tps"),
        ("pgbench", "latency"),
        ("dbench", "throughput"),
        ("postmark", "tps"),
        ("git", "seconds"),
        ("nginx", "rps"),
        ("apache", "rps"),
        ("compress-gzip", "seconds"),
        ("compress-pbzip2", "seconds"),
        ("compress-7zip", "seconds"),
        ("compress-zstd", "seconds"),
        ("compress-xz", "seconds"),
        ("tiobench-io", "bandwidth"),
        ("iozone", "bandwidth"),
        ("blogbench", "read_score"),
        ("blogbench", "write_score"),
        ("io-patterns", "bandwidth"),
        ("john-the-ripper", "cps"),
        ("openssl", "signs"),
        ("gnupg", "seconds"),
    ] {
        assert!(has(p, res), "no {p} {res} in the result: {r:?}");
    }
    // Both pgbench modes ran, as separate tests with PTS's description.
    let pg: Vec<&str> = results
        .iter()
        .filter(|x| x["profile"] == "pgbench" && x["result"] == "tps")
        .map(|x| x["description"].as_str().unwrap())
        .collect();
    assert_eq!(pg.len(), 2, "{pg:?}");
    let ro = "Scaling Factor: 1 - Clients: 1 (engine quick: 3 s) - Mode: Read Only";
    assert!(pg.iter().any(|d| d.contains(ro)), "{pg:?}");
    // Servers are stopped and their data removed; nothing stays journaled.
    let target = env.target.path().display().to_string();
    assert!(processes_mentioning(&target).is_empty(), "{:?}", processes_mentioning(&target));
    assert!(journal_files(&env).is_empty(), "{:?}", journal_files(&env));
    assert_eq!(std::fs::read_dir(env.target.path()).unwrap().count(), 0, "scratch directories were left");
    eprintln!("tiny run of every seed profile: {:.1} s", t0.elapsed().as_secs_f64());
}

/// The unpack-linux profile extracts Debian's kernel tarball (one trial).
#[test]
fn unpack_linux_extracts_the_debian_kernel_tarball() {
    let env = Env::new();
    let r = env.bench(&["unpack-linux", "--runs", "1", "--save", "unpack"]);
    assert_eq!(r.code, 0, "{r:?}");
    let v = env.result("unpack");
    let secs = v["results"][0]["entries"][0]["value"].as_f64().unwrap();
    assert!(secs > 0.5, "extracting 1.3 GB cannot take {secs} s");
    assert_eq!(std::fs::read_dir(env.target.path()).unwrap().count(), 0, "the extracted tree was left");
}

/// The kernel build from Debian's linux-source-6.1 (kernel.org is not
/// reachable here), tinyconfig, one trial: extraction plus a build of a few
/// minutes on 2 cores.
#[test]
#[ignore = "slow: builds Linux 6.1 tinyconfig (about 4 minutes on 2 cores)"]
fn build_linux_kernel_tinyconfig_from_debian_sources() {
    let env = Env::new();
    assert!(
        Path::new("/usr/src/linux-source-6.1.tar.xz").exists(),
        "scripts/install-deps.sh installs linux-source-6.1"
    );
    let r = env.bench(&[
        "build-linux-kernel",
        "--option",
        "build=tinyconfig",
        "--option",
        "source=debian",
        "--runs",
        "1",
        "--save",
        "k",
        // Confined (the book, "Sandbox"): the build needs nothing outside its folders.
        "--sandbox",
    ]);
    assert_eq!(r.code, 0, "{r:?}");
    assert!(r.stdout.contains("Build: tinyconfig - Source: Linux 6.1 (Debian linux-source-6.1)"), "{r:?}");
    let res = env.result("k");
    assert!(res["systems"][0]["notes"]["Sandbox Notes"].as_str().unwrap().contains("build-linux-kernel"), "{res}");
    assert!(res["results"][0]["description"].as_str().unwrap().contains("Linux 6.1 (Debian linux-source-6.1)"));
    let secs = res["results"][0]["entries"][0]["trials"][0].as_f64().unwrap();
    assert!(secs > 10.0, "{secs}");
}

/// GCC from Debian's gcc-12-source (the GNU mirrors are not reachable here):
/// the install unpacks the tree once; the libiberty build configures and
/// compiles for real in the trial's scratch directory.
#[test]
#[ignore = "slow: unpacks GCC 12 and builds libiberty (about 1 minute on 2 cores)"]
fn build_gcc_libiberty_from_debian_sources() {
    let env = Env::new();
    assert!(
        Path::new("/usr/src/gcc-12/gcc-12.2.0-dfsg.tar.xz").exists(),
        "scripts/install-deps.sh installs gcc-12-source"
    );
    let r = env.bench(&["build-gcc", "--option", "build=libiberty", "--runs", "1", "--save", "g", "--sandbox"]);
    assert_eq!(r.code, 0, "{r:?}");
    assert!(r.stdout.contains("Build: libiberty"), "{r:?}");
    let res = env.result("g");
    let secs = res["results"][0]["entries"][0]["trials"][0].as_f64().unwrap();
    assert!(secs > 1.0, "{secs}");
    // The source tree was unpacked once, into the install directory.
    let installed = env.home.path().join("installed/build-gcc@1.0.0/gcc-12.2.0/configure");
    assert!(installed.exists(), "{}", installed.display());
}

#[test]
fn a_missing_seed_tool_is_skipped_with_its_install_command_and_the_rest_runs() {
    let env = Env::new();
    let empty = tempfile::tempdir().unwrap();
    let r = env
        .cmd(&[
            "benchmark",
            "-y",
            "--target-dir",
            env.target.path().to_str().unwrap(),
            "postmark",
            "tiobench-io",
            "-o",
            "transactions=2500",
            "-o",
            "test=Random Write",
            "-o",
            "size=4MB",
            "-o",
            "threads=2",
            "--runs",
            "1",
        ])
        .env("PATH", empty.path())
        .output()
        .unwrap();
    let r: crate::common::Run = r.into();
    assert_eq!(r.code, 4, "{r:?}");
    assert!(r.stderr.contains("postmark not found — install it with `apt-get install postmark`"), "{r:?}");
    assert!(r.stdout.contains("Threaded I/O (engine io)"), "{r:?}");
}

#[test]
fn each_suite_names_the_seed_it_follows() {
    let text = |s: &str| std::fs::read_to_string(repo().join("suites").join(s)).unwrap();
    assert!(text("io-schedulers.yaml").contains("Seed 000"));
    assert!(text("filesystems.yaml").contains("Seed 004"));
    for s in ["disk.yaml", "disk-quick.yaml"] {
        assert!(text(s).contains("../shared/seeds"), "{s}");
    }
    // suite/disk's items are the seeds' tests; the quick suite has the same
    // profiles (but unpack-linux and the timed builds) at tiny sizes.
    let profiles = |s: &str| -> Vec<String> {
        let v: serde_json::Value = serde_saphyr::from_str(&text(s)).unwrap();
        let mut p: Vec<String> =
            v["tests"].as_array().unwrap().iter().filter_map(|t| t["profile"].as_str().map(String::from)).collect();
        p.dedup();
        p.sort();
        p.dedup();
        p
    };
    let mut disk = profiles("disk.yaml");
    disk.retain(|p| !["unpack-linux", "build-linux-kernel", "build-gcc"].contains(&p.as_str()));
    // The seeds' fio profile (fio-v1, PTS's pts/fio-1.11) has only PTS's
    // entries: the quick suite runs fio's own "(engine quick)" ones instead.
    let quick = profiles("disk-quick.yaml");
    assert!(disk.contains(&"fio-v1".to_string()) && quick.contains(&"fio".to_string()));
    let disk: Vec<String> = disk.into_iter().filter(|p| p != "fio-v1").collect();
    assert_eq!(disk, quick.into_iter().filter(|p| p != "fio").collect::<Vec<_>>());
    for p in ["pgbench", "dbench", "postmark", "tiobench-io", "iozone", "blogbench", "git", "io-patterns"] {
        assert!(disk.contains(&p.to_string()), "suite/disk lacks {p}");
    }
}

#[test]
fn the_quick_suite_resolves_to_real_profiles() {
    let env = Env::new();
    let r = env.run(&["info", "suite/disk-quick"]);
    assert_eq!(r.code, 0, "{r:?}");
    assert!(
        r.stdout.contains("fio@2.2.0") && r.stdout.contains("fs-mark@1.0.0") && r.stdout.contains("sqlite@2.0.0"),
        "{r:?}"
    );
}

/// Free space follows the options: tiobench-io with 4 threads × 4 MB asks
/// for its four files (and a margin), not for 32 × 256 MiB; BlogBench's
/// quick entry for its 200 blogs, not for 2,000.
#[test]
fn free_space_is_computed_from_the_chosen_options() {
    use engine::expand::{self, Batch};
    use engine::model::profile::Origin;
    use engine::profile::load::{Packages, profile_from_str};
    let need = |id: &str, presets: &[&str]| -> u64 {
        let path = repo().join("test-profiles").join(id).join("profile.yaml");
        let text = std::fs::read_to_string(&path).unwrap();
        let p = std::sync::Arc::new(profile_from_str(&text, id, Origin::File(path), &Packages::builtin()).unwrap());
        let presets: Vec<_> = presets.iter().map(|s| expand::parse_cli_option(s).unwrap()).collect();
        let tests = expand::expand(&p, &presets, &Batch, true).unwrap();
        assert_eq!(tests.len(), 1, "presets pick one test");
        engine::runner::requirements::free_space_of(&tests[0]).expect("a free-space need")
    };
    assert_eq!(need("tiobench-io", &["test=Random Write", "threads=4", "size=4MB"]), 4 * (4 << 20) + (16 << 20));
    assert_eq!(need("tiobench-io", &["test=Read", "threads=32", "size=256MB"]), 32 * (256 << 20) + (16 << 20));
    assert_eq!(need("blogbench", &["duration=2 x 1 Seconds"]), 200 * 1536 * 1024 + (64 << 20));
}

/// A never-timed test whose options fix its run time is estimated from it:
/// BlogBench's 2 × 1 s, fio's start delay, ramp and run time.
#[test]
fn dry_run_estimates_a_fixed_run_time_before_the_first_run() {
    let env = Env::new();
    let r = env.run(&["benchmark", "blogbench", "-o", "duration=2 x 1 Seconds", "--dry-run", "-y"]);
    assert_eq!(r.code, 0, "{r:?}");
    assert!(r.stdout.contains("3 trial(s) (up to 1000 within a budget of 1m), ~6s from its run time"), "{}", r.stdout);
    let r = env.run(&[
        "benchmark",
        "fio",
        "-o",
        "type=Random Read",
        "-o",
        "engine=Sync",
        "-o",
        "direct=No",
        "-o",
        "block_size=4KB",
        "-o",
        "jobs=1",
        "--dry-run",
        "-y",
    ]);
    assert_eq!(r.code, 0, "{r:?}");
    // 20 s delay + 5 s ramp + 60 s, three trials.
    assert!(r.stdout.contains("~4m 15s from its run time"), "{}", r.stdout);
}
