//! The shipped profiles' parsers on output captured from the real tools
//! (tests/fixtures/output, made with the tools from Debian 12: fio 3.33,
//! fs_mark 3.3, pgbench 15, dbench 4.00, PostMark 1.51, John the Ripper
//! 1.9.0, OpenSSL 3.0, ab 2.3 against nginx and Apache), and a PTS-style
//! template on the same output.

use crate::common::repo;
use engine::expand::{self, Batch};
use engine::model::profile::Origin;
use engine::model::template;
use engine::parse::{Configured, RawOutput};
use engine::profile::load::profile_from_str;
use std::sync::Arc;
use std::time::Duration;

fn fixture(name: &str) -> String {
    std::fs::read_to_string(repo().join("tests/fixtures/output").join(name)).unwrap()
}

/// Parses `output` with every parser of the shipped profile `id` for the
/// test chosen by `presets`, returning (result id, value).
fn parse_with(id: &str, presets: &[&str], output: &str) -> Vec<(String, f64)> {
    let path = repo().join("test-profiles").join(id).join("profile.yaml");
    let text = std::fs::read_to_string(&path).unwrap();
    let p =
        Arc::new(profile_from_str(&text, id, Origin::File(path), &engine::profile::load::Packages::builtin()).unwrap());
    let presets: Vec<_> = presets.iter().map(|s| expand::parse_cli_option(s).unwrap()).collect();
    let tests = expand::expand(&p, &presets, &Batch, true).unwrap();
    assert_eq!(tests.len(), 1, "presets pick one test");
    let b = tests[0].bindings();
    let fill = |s: &str| template::render(s, |n| b.get(n).map(String::as_str), false);
    let raw = RawOutput { stdout: output, stderr: "", wall: Duration::from_secs(1) };
    p.profile
        .parsers
        .iter()
        .filter(|d| d.when.iter().all(|(k, v)| b.get(k).is_some_and(|x| x == v.as_str())))
        .map(|d| {
            let r = p.profile.results.iter().find(|r| r.id == d.result).unwrap();
            (d.result.clone(), Configured::build(d, &fill, r, None).unwrap().parse(&raw).unwrap())
        })
        .collect()
}

fn pairs(v: &[(&str, f64)]) -> Vec<(String, f64)> {
    v.iter().map(|(k, x)| (k.to_string(), *x)).collect()
}

const FIO_ONE: [&str; 2] = ["engine=IO_uring", "direct=Yes"];

#[test]
fn fio_random_read_reads_the_read_side_in_exact_mebibytes() {
    let mut presets = vec!["type=Random Read", "block_size=4KB (engine quick)"];
    presets.extend(FIO_ONE);
    let got = parse_with("fio", &presets, &fixture("fio-3.33-randread-4k-io_uring.json"));
    // bw_bytes 247315702 B/s = 235.86 MiB/s, the unit PTS prints as "MB/s" (not 247.32 MB/s).
    assert_eq!(got, vec![("bandwidth".to_string(), 247315702.0 / 1048576.0), ("iops".to_string(), 60379.810095)]);
}

#[test]
fn fio_sequential_write_reads_the_write_side() {
    let mut presets = vec!["type=Sequential Write", "block_size=2MB (engine quick)"];
    presets.extend(FIO_ONE);
    let got = parse_with("fio", &presets, &fixture("fio-3.33-write-2m-libaio.json"));
    assert_eq!(got, vec![("bandwidth".to_string(), 2173128226.0 / 1048576.0), ("iops".to_string(), 1036.228288)]);
}

#[test]
fn fs_mark_files_per_second() {
    let got = parse_with("fs-mark", &["test=100 Files, 1MB Size"], &fixture("fs_mark-3.3-100-files.txt"));
    let want: f64 = fixture("fs_mark-3.3-100-files.txt")
        .lines()
        .last()
        .unwrap()
        .split_whitespace()
        .nth(3)
        .unwrap()
        .parse()
        .unwrap();
    assert_eq!(got, vec![("files_per_second".to_string(), want)]);
    // With several loops the first loop's line counts, as PTS reads it (the
    // line after the header); the profile runs one loop.
    let got =
        parse_with("fs-mark", &["test=100 Files, 1MB Size"], &fixture("fs_mark-3.3-4-threads-32-dirs-3-loops.txt"));
    assert_eq!(got, vec![("files_per_second".to_string(), 3017.5)]);
}

#[test]
fn a_pts_style_template_reads_the_same_fs_mark_value() {
    let def = engine::model::profile::ParserDef {
        result: "x".into(),
        template: Some("69 100 1048576 #_RESULT_# 933".into()),
        line_before_hint: Some("FSUse%".into()),
        ..Default::default()
    };
    let out = fixture("fs_mark-3.3-4-threads-32-dirs-3-loops.txt");
    let files = engine::model::profile::ResultDef {
        id: "x".into(),
        unit: "Files/s".into(),
        proportion: engine::model::profile::Proportion::Hib,
        description: None,
        signed: false,
    };
    let p = Configured::build(&def, &|s: &str| Ok(s.to_string()), &files, None).unwrap();
    let raw = RawOutput { stdout: &out, stderr: "", wall: Duration::ZERO };
    assert_eq!(p.parse(&raw).unwrap(), 3017.5, "the line right after the header");
    let def =
        engine::model::profile::ParserDef { line_before_hint: None, pick: engine::model::profile::Pick::Mean, ..def };
    let p = Configured::build(&def, &|s: &str| Ok(s.to_string()), &files, None).unwrap();
    assert!((p.parse(&raw).unwrap() - (3017.5 + 2569.5 + 1127.9) / 3.0).abs() < 1e-9, "shape match on every data line");
}

#[test]
fn pgbench_tps_and_average_latency_from_pgbench_15() {
    let pick = ["scaling_factor=1", "clients=1 (engine quick: 3 s)"];
    let ro = [&pick[..], &["mode=Read Only"]].concat();
    let got = parse_with("pgbench", &ro, &fixture("pgbench-15-select-only-scale-1.txt"));
    assert_eq!(got, pairs(&[("tps", 42603.477524), ("latency", 0.188)]));
    let rw = [&pick[..], &["mode=Read Write"]].concat();
    let got = parse_with("pgbench", &rw, &fixture("pgbench-15-tpc-b-scale-1.txt"));
    assert_eq!(got, pairs(&[("tps", 2413.162803), ("latency", 3.315)]));
}

#[test]
fn dbench_throughput_and_max_latency_from_dbench_4() {
    let got = parse_with("dbench", &["clients=1 (engine quick: 5 s)"], &fixture("dbench-4.00-1-client-5s.txt"));
    assert_eq!(got, pairs(&[("throughput", 317.756), ("max_latency", 62.575)]));
    // The older fixture (2 clients) reads the same way.
    let got = parse_with("dbench", &["clients=6"], &fixture("dbench-4.00-2-clients.txt"));
    assert_eq!(got, pairs(&[("throughput", 210.757), ("max_latency", 29.021)]));
}

#[test]
fn postmark_transactions_per_second_from_postmark_1_51() {
    let got =
        parse_with("postmark", &["transactions=2500 (engine quick)"], &fixture("postmark-1.51-2500-transactions.txt"));
    assert_eq!(got, pairs(&[("tps", 2500.0)]));
}

#[test]
fn john_the_ripper_real_candidates_per_second_from_john_1_9() {
    let got = parse_with("john-the-ripper", &["test=Blowfish", "duration=1 Second"], &fixture("john-1.9.0-bcrypt.txt"));
    assert_eq!(got, pairs(&[("cps", 405.0)]));
    let got = parse_with("john-the-ripper", &["test=MD5", "duration=1 Second"], &fixture("john-1.9.0-md5crypt.txt"));
    assert_eq!(got, pairs(&[("cps", 6183.0)]));
    // DES: the "Many salts" line (as PTS reads it), not "Only one salt".
    let got = parse_with(
        "john-the-ripper",
        &["test=Traditional DES", "duration=1 Second"],
        &fixture("john-1.9.0-descrypt.txt"),
    );
    assert_eq!(got, pairs(&[("cps", 399410.0)]));
}

#[test]
fn openssl_rsa_4096_signs_per_second_from_openssl_3() {
    let got = parse_with("openssl", &["seconds=1 Second"], &fixture("openssl-3.0-speed-rsa4096.txt"));
    assert_eq!(got, pairs(&[("signs", 244.9)]));
}

#[test]
fn ab_requests_per_second_from_nginx_and_apache_runs() {
    let pick = ["concurrency=100", "requests=5000"];
    let got = parse_with("nginx", &pick, &fixture("ab-2.3-nginx-1.22-5000-requests-c100.txt"));
    assert_eq!(got[0].0, "rps");
    let text = fixture("ab-2.3-nginx-1.22-5000-requests-c100.txt");
    let want: f64 = text
        .lines()
        .find(|l| l.starts_with("Requests per second:"))
        .and_then(|l| l.split_whitespace().nth(3))
        .unwrap()
        .parse()
        .unwrap();
    assert_eq!(got[0].1, want);
    let got = parse_with("apache", &pick, &fixture("ab-2.3-apache-2.4-5000-requests-c100.txt"));
    // The mean time per request, not the one across all concurrent requests.
    assert_eq!(got, pairs(&[("rps", 7988.01), ("time_per_request", 12.519)]));
}
