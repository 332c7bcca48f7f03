//! The shipped profiles' parsers on output captured from the real tools
//! (tests/fixtures/output, made with fio 3.33 and fs_mark 3.3 from Debian 12).

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
pub(crate) fn parse_with(id: &str, presets: &[&str], output: &str) -> Vec<(String, f64)> {
    let path = repo().join("test-profiles").join(id).join("profile.yaml");
    let text = std::fs::read_to_string(&path).unwrap();
    let p =
        Arc::new(profile_from_str(&text, id, Origin::File(path), &engine::profile::load::Packages::builtin()).unwrap());
    let presets: Vec<_> = presets.iter().map(|s| expand::parse_cli_option(s).unwrap()).collect();
    let tests = expand::expand(&p, &presets, &Batch, true).unwrap();
    assert_eq!(tests.len(), 1, "presets pick one test");
    let b = tests[0].bindings();
    let fill = |s: &str| template::render(s, |n| b.get(n).map(String::as_str), false).map_err(|e| e.to_string());
    let raw = RawOutput { stdout: output, stderr: "", wall: Duration::from_secs(1) };
    p.profile
        .parsers
        .iter()
        .filter(|d| d.when.iter().all(|(k, v)| b.get(k).is_some_and(|x| x == v.as_str())))
        .map(|d| (d.result.clone(), Configured::build(d, &fill, false, None).unwrap().parse(&raw).unwrap()))
        .collect()
}

const FIO_ONE: [&str; 4] = ["engine=io_uring", "direct=Yes", "file_size=32 MiB", "runtime=2 Seconds"];

#[test]
fn fio_random_read_reads_the_read_side_in_exact_megabytes() {
    let mut presets = vec!["type=Random Read", "block_size=4KB"];
    presets.extend(FIO_ONE);
    let got = parse_with("fio", &presets, &fixture("fio-3.33-randread-4k-io_uring.json"));
    // bw_bytes 247315702 B/s = 247.315702 MB/s (10^6), not MiB/s (235.86).
    assert_eq!(got, vec![("bandwidth".to_string(), 247.315702), ("iops".to_string(), 60379.810095)]);
}

#[test]
fn fio_sequential_write_reads_the_write_side() {
    let mut presets = vec!["type=Sequential Write", "block_size=2MB"];
    presets.extend(FIO_ONE);
    let got = parse_with("fio", &presets, &fixture("fio-3.33-write-2m-libaio.json"));
    assert_eq!(got, vec![("bandwidth".to_string(), 2173.128226), ("iops".to_string(), 1036.228288)]);
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
    // With several loops the last line counts (the profile runs one loop).
    let got =
        parse_with("fs-mark", &["test=100 Files, 1MB Size"], &fixture("fs_mark-3.3-4-threads-32-dirs-3-loops.txt"));
    assert_eq!(got, vec![("files_per_second".to_string(), 1127.9)]);
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
    let p = Configured::build(&def, &|s: &str| Ok(s.to_string()), false, None).unwrap();
    let raw = RawOutput { stdout: &out, stderr: "", wall: Duration::ZERO };
    assert_eq!(p.parse(&raw).unwrap(), 3017.5, "the line right after the header");
    let def =
        engine::model::profile::ParserDef { line_before_hint: None, pick: engine::model::profile::Pick::Mean, ..def };
    let p = Configured::build(&def, &|s: &str| Ok(s.to_string()), false, None).unwrap();
    assert!((p.parse(&raw).unwrap() - (3017.5 + 2569.5 + 1127.9) / 3.0).abs() < 1e-9, "shape match on every data line");
}
