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
    // Its results are parsed on two threads; damage in one is still named
    // at its byte in the file.
    let last = f["results"].as_array().unwrap().len() - 1;
    f["results"][last]["unit"] = json!("UNIT-MARK");
    let text = serde_json::to_string(&f).unwrap().replace("\"UNIT-MARK\"", "7");
    let at = text.rfind(",\"unit\":7").unwrap() + ",\"unit\":7".len();
    std::fs::write(dir.join("result.json"), text).unwrap();
    let r = env.run(&["result", "show", "big"]);
    assert_eq!(r.code, 1, "{r:?}");
    assert!(r.stderr.contains(&format!("result.json:1:{at}: ")) && r.stderr.contains("integer `7`"), "{r:?}");
}

/// Host `i` of `host`, each trial with device counters (what a fleet's
/// bulk file holds).
fn host_with_counters(g: &mut Gen, i: usize) -> Value {
    let mut h = host(g, i);
    for r in h["results"].as_array_mut().unwrap() {
        let io: Vec<Value> = (0..3)
            .map(|t| {
                json!({"devices": [{"device": "sda", "read_bytes": 1000 * i + t, "written_bytes": 7, "reads": 3,
                                         "writes": 1, "busy_ms": 5}], "user_seconds": 0.5, "system_seconds": 0.25})
            })
            .collect();
        r["entries"][0]["trial_io"] = Value::Array(io);
    }
    h
}

fn write_hosts(env: &Env, hosts: impl IntoIterator<Item = (String, Value)>) -> Vec<String> {
    hosts
        .into_iter()
        .map(|(name, v)| {
            let d = env.target.path().join("hosts").join(name);
            std::fs::create_dir_all(&d).unwrap();
            let f = d.join("result.json");
            std::fs::write(&f, serde_json::to_vec(&v).unwrap()).unwrap();
            f.to_str().unwrap().to_string()
        })
        .collect()
}

fn bulk_files(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut v: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.file_name().unwrap().to_string_lossy().starts_with("bulk-"))
        .collect();
    v.sort();
    v
}

/// A fleet's trial counters live in a bulk file beside `result.json`: the
/// views read `result.json` alone, an export and an edit get them back
/// whole, a damaged bulk file loses only the frames it damaged and says
/// whose, and a bulk named by a file from outside is not opened.
#[test]
fn a_fleets_counters_live_beside_it_and_come_back_whole() {
    let env = Env::new();
    let mut g = Gen(42);
    let files = write_hosts(&env, (0..40).map(|i| (format!("h{i}"), host_with_counters(&mut g, i))));
    let mut args = vec!["result", "merge", "--save", "fleet"];
    args.extend(files.iter().map(String::as_str));
    let r = env.run(&args);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let dir = env.home.path().join("results/fleet");
    let text = std::fs::read_to_string(dir.join("result.json")).unwrap();
    assert!(!text.contains("trial_io") && !text.contains("\"details\":{"), "result.json is lean");
    let bulk = bulk_files(&dir);
    assert_eq!(bulk.len(), 1, "{bulk:?}");
    let name = bulk[0].file_name().unwrap().to_str().unwrap().to_string();
    assert!(text.contains(&format!("\"bulk\":\"{name}\"")), "result.json names its bulk");

    // A view reads result.json alone; the JSON export is whole.
    let r = env.run(&["result", "show", "fleet"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let r = env.run(&["result", "show", "fleet", "--format", "json"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let j: Value = serde_json::from_str(&r.stdout).unwrap();
    assert!(j.get("bulk").is_none(), "an export carries no reference to a file it does not carry");
    for res in j["results"].as_array().unwrap() {
        for e in res["entries"].as_array().unwrap() {
            let i: u64 = e["identifier"].as_str().unwrap()[5..].parse().unwrap();
            let io = e["trial_io"].as_array().unwrap();
            assert_eq!(io.len(), 3, "{e}");
            assert_eq!(io[2]["devices"][0]["read_bytes"], json!(1000 * i + 2), "{e}");
        }
    }

    // An edit loads it whole and writes a new bulk; the old one stays for the backup.
    let r = env.run(&["result", "remove-identifier", "fleet", "host-0003"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let after = bulk_files(&dir);
    assert_eq!(after.len(), 2, "the new bulk and the backup's: {after:?}");
    let j: Value = serde_json::from_str(&env.run(&["result", "show", "fleet", "--format", "json"]).stdout).unwrap();
    assert_eq!(j["systems"].as_array().unwrap().len(), 39);
    let with_io = j["results"][1]["entries"].as_array().unwrap().iter().filter(|e| e["trial_io"].is_array()).count();
    assert_eq!(with_io, 39, "every other host keeps its counters");
    let r = env.run(&["result", "remove-identifier", "fleet", "host-0004"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(bulk_files(&dir).len(), 2, "bulk files no result names are removed");

    // Damage in the middle of the bulk file: the view does not read it; the
    // export loads the other hosts and names what it lost.
    let now = String::from_utf8_lossy(&std::fs::read(dir.join("result.json")).unwrap()).to_string();
    let current = now.split("\"bulk\":\"").nth(1).unwrap().split('"').next().unwrap().to_string();
    let path = dir.join(&current);
    let mut bytes = std::fs::read(&path).unwrap();
    let mid = bytes.len() / 2;
    for b in &mut bytes[mid..mid + 64] {
        *b ^= 0x5a;
    }
    std::fs::write(&path, &bytes).unwrap();
    let r = env.run(&["result", "show", "fleet"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(!r.stderr.contains("not loaded"), "a view does not read the bulk: {}", r.stderr);
    let r = env.run(&["result", "show", "fleet", "--format", "json"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stderr.contains("are not loaded") && r.stderr.contains("identifier(s) (host-"), "{}", r.stderr);
    let j: Value = serde_json::from_str(&r.stdout).unwrap();
    let kept = j["results"][0]["entries"].as_array().unwrap().iter().filter(|e| e["trial_io"].is_array()).count();
    // 64 bytes hit one frame or two; reading resumes after them.
    assert!((36..38).contains(&kept), "the undamaged hosts' counters load: {kept} of 38");

    // A file from outside naming a bulk (here a path out of its folder): not opened, said.
    let mut outside: Value = serde_json::from_str(&text).unwrap();
    outside["bulk"] = json!("../../../../etc/shadow");
    let f = env.target.path().join("outside.json");
    std::fs::write(&f, serde_json::to_vec(&outside).unwrap()).unwrap();
    let r = env.run(&["result", "show", f.to_str().unwrap(), "--format", "json"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stderr.contains("engine reads only for its own saved results"), "{}", r.stderr);
    assert!(!r.stdout.contains("root:"), "nothing of the named file is read");
}

/// Two inputs with one identifier: the second is refused, both named;
/// `--strict` writes nothing.
#[test]
fn duplicate_identifiers_across_inputs_are_refused_with_both_sources_named() {
    let env = Env::new();
    let mut g = Gen(5);
    let files = write_hosts(
        &env,
        [("a".to_string(), host(&mut g, 1)), ("b".to_string(), host(&mut g, 2)), ("c".to_string(), host(&mut g, 1))],
    );
    let mut args = vec!["result", "merge", "--save", "m"];
    args.extend(files.iter().map(String::as_str));
    let r = env.run(&args);
    assert_eq!(r.code, 4, "an input left out: {r:?}");
    assert!(r.stderr.contains("left out c: identifier `host-0001` is also in a"), "{}", r.stderr);
    let j = env.result("m");
    assert_eq!(j["systems"].as_array().unwrap().len(), 2);
    assert_eq!(j["left_out"][0]["source"], json!("c"));
    let mut strict = vec!["result", "merge", "--save", "m2", "--strict"];
    strict.extend(files.iter().map(String::as_str));
    let r = env.run(&strict);
    assert_ne!(r.code, 0);
    assert!(r.stderr.contains("c is not merged: identifier `host-0001` is also in a"), "{}", r.stderr);
    assert!(!env.result_path("m2").exists(), "nothing written");
}
