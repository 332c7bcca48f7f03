//! A fleet in one result (issue 42): 3,000 host results merged, shown as
//! distributions per group with the odd hosts named, exported and gated.

use crate::common::*;
use serde_json::{Value, json};

const HOSTS: usize = 3000;
const MODELS: [&str; 3] = ["Samsung SSD 860", "WDC WD5000AZRX", "INTEL SSDPE2KX010T8"];
/// Hosts planted at 0.6× their group in the first result.
const SLOW: [usize; 3] = [17, 1234, 2999];

/// A small deterministic generator (xorshift), normals by Box–Muller.
struct Gen(u64);
impl Gen {
    fn uniform(&mut self) -> f64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        ((self.0 >> 11) as f64 + 0.5) / (1u64 << 53) as f64
    }
    fn normal(&mut self) -> f64 {
        let (u, v) = (self.uniform(), self.uniform());
        (-2.0 * u.ln()).sqrt() * (2.0 * std::f64::consts::PI * v).cos()
    }
}

fn host(g: &mut Gen, i: usize) -> Value {
    let id = format!("host-{i:04}");
    let model = MODELS[i % 3];
    let own = 1.0 + 0.02 * g.normal();
    let results: Vec<Value> = (0..3)
        .map(|k| {
            let level = [1000.0, 2000.0, 3000.0][i % 3] * (k + 1) as f64;
            let slow = if k == 0 && SLOW.contains(&i) { 0.6 } else { 1.0 };
            let trials: Vec<f64> = (0..3).map(|_| level * own * slow * (1.0 + 0.015 * g.normal())).collect();
            let mean = trials.iter().sum::<f64>() / 3.0;
            let sd = (trials.iter().map(|t| (t - mean).powi(2)).sum::<f64>() / 2.0).sqrt();
            let mut s = trials.clone();
            s.sort_by(f64::total_cmp);
            json!({
                "test": format!("io@1.0[case={k}]"), "profile": "io", "profile_version": "1.0.0", "result": "iops",
                "title": "Engine I/O", "description": format!("Case {k}"), "options": [], "unit": "IOPS",
                "proportion": "HIB",
                "entries": [{"identifier": id, "value": mean, "trials": trials, "sd": sd, "se": sd / 3f64.sqrt(),
                             "n": 3, "min": s[0], "max": s[2], "median": s[1], "trial_seconds": [1.0, 1.0, 1.0],
                             "timestamp": "2026-12-01T10:00:00Z"}]
            })
        })
        .collect();
    json!({
        "schema_version": 1, "title": id, "description": "",
        "systems": [{"identifier": id, "hardware": {"Disk": format!("1000GB {model}")},
                     "software": {"Kernel": "6.1.0-26-amd64 (x86_64)"}, "started": "2026-12-01T10:00:00Z",
                     "engine_version": env!("CARGO_PKG_VERSION")}],
        "results": results
    })
}

#[test]
fn a_fleet_of_3000_hosts_merges_and_shows_its_groups_and_odd_hosts() {
    let env = Env::new();
    let dir = env.target.path().join("hosts");
    let mut g = Gen(0x9e3779b97f4a7c15);
    let mut files = Vec::new();
    for i in 0..HOSTS {
        let d = dir.join(format!("host-{i:04}"));
        std::fs::create_dir_all(&d).unwrap();
        let f = d.join("result.json");
        std::fs::write(&f, serde_json::to_vec(&host(&mut g, i)).unwrap()).unwrap();
        files.push(f.to_str().unwrap().to_string());
    }
    let mut args = vec!["result", "merge", "--save", "fleet"];
    args.extend(files.iter().map(String::as_str));
    let r = env.run(&args);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stderr.contains("merged 3000 result(s) into `fleet`: 3000 identifiers, 3 results"), "{}", r.stderr);
    let text = std::fs::read_to_string(env.result_path("fleet")).unwrap();
    assert!(!text.contains("\n  "), "a fleet's result is written without indentation");

    // Past 30 identifiers: a distribution per result and group, not 3,000 bars.
    let show = env.run(&["result", "show", "fleet", "--group-by", "disk-model"]);
    assert_eq!(show.code, 0, "{}", show.stderr);
    let out = &show.stdout;
    assert!(out.contains("A fleet: 3,000 hosts, grouped by disk-model, 3 results"), "{out}");
    assert!(out.lines().count() < 60, "{} lines", out.lines().count());
    for m in MODELS {
        assert!(out.contains(&format!("  {m}")) && out.contains("1,000 hosts  median"), "{out}");
    }
    for i in SLOW {
        let line = out.lines().find(|l| l.contains(&format!("host-{i:04}: "))).unwrap_or_else(|| panic!("{out}"));
        assert!(
            line.contains("Case 0 (IOPS): 0.") && line.contains(&format!("its group ({}, 1,000 hosts)", MODELS[i % 3])),
            "{line}"
        );
        assert!(line.ends_with(", worse"), "{line}");
    }
    assert!(out.contains("Odd hosts: 3 of 9,000 host-results judged"), "{out}");

    // The list for tickets: CSV and JSON.
    let csv = env.run(&["result", "odd", "fleet", "--group-by", "disk-model", "--format", "csv"]);
    assert_eq!(csv.code, 0, "{}", csv.stderr);
    let rows: Vec<&str> = csv.stdout.lines().collect();
    assert_eq!(rows.len(), 4, "{rows:?}");
    assert!(rows[0].starts_with("identifier,test,result,"), "{rows:?}");
    let json = env.run(&["result", "odd", "fleet", "--group-by", "disk-model", "--format", "json"]);
    let v: Value = serde_json::from_str(&json.stdout).unwrap();
    assert_eq!(v["hosts"], 3000);
    let mut named: Vec<&str> = v["odd"].as_array().unwrap().iter().map(|o| o["identifier"].as_str().unwrap()).collect();
    named.sort();
    assert_eq!(named, ["host-0017", "host-1234", "host-2999"]);
    for o in v["odd"].as_array().unwrap() {
        let (lo, hi) = (o["ratio_ci"][0].as_f64().unwrap(), o["ratio_ci"][1].as_f64().unwrap());
        let ratio = o["ratio"].as_f64().unwrap();
        assert!(lo < ratio && ratio < hi && (ratio - 0.6).abs() < 0.06, "{o}");
    }

    // The HTML page: box plots per result and group, not a bar per host.
    let html = env.run(&["result", "show", "fleet", "--group-by", "disk-model", "--format", "html"]);
    assert_eq!(html.code, 0, "{}", html.stderr);
    assert!(html.stdout.len() < 100_000, "{} bytes", html.stdout.len());
    assert_eq!(html.stdout.matches("<rect").count(), 9, "a box per result and group");
    assert!(html.stdout.contains("host-1234"));

    // A glob selects hosts; without grouping they are one group.
    let some = env.run(&["result", "show", "fleet", "--identifier", "host-00*"]);
    assert!(some.stdout.contains("A fleet: 100 hosts, 3 results"), "{}", some.stdout);
    let bad = env.run(&["result", "show", "fleet", "--identifier", "host-[0"]);
    assert_eq!(bad.code, 2, "{bad:?}");

    // Exported whole, and gated against its first host.
    let csv = env.run(&["result", "show", "fleet", "--format", "csv"]);
    assert_eq!(csv.code, 0, "{}", csv.stderr);
    assert!(csv.stdout.contains("host-2999"));
    let gate = env.run(&["result", "show", "fleet", "--fail-on-regression"]);
    assert_eq!(gate.code, 6, "hosts of slower disk models are worse than host-0000's: {}", gate.stderr);
}

/// A fleet's result over the 64 MiB of a file from outside is engine's own
/// once merged: every command reads it; given by path it is refused.
#[test]
fn a_saved_result_over_64_mib_is_read() {
    let env = Env::new();
    let dir = env.home.path().join("results/big");
    std::fs::create_dir_all(&dir).unwrap();
    let mut g = Gen(7);
    let mut f = host(&mut g, 0);
    // Long notes make the one host's file large without many entries.
    f["description"] = Value::String("x".repeat(70 << 20));
    std::fs::write(dir.join("result.json"), serde_json::to_vec(&f).unwrap()).unwrap();
    let r = env.run(&["result", "odd", "big"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stdout.starts_with("0 odd host-result(s) of 0 judged in 1 hosts"), "{}", r.stdout);
    let r = env.run(&["result", "show", dir.join("result.json").to_str().unwrap()]);
    assert_eq!(r.code, 1, "{r:?}");
    assert!(r.stderr.contains("over engine's limit of 64 MiB"), "{r:?}");
}
