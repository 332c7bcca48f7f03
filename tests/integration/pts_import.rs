//! Importing PTS results never guesses (issue 43): a PTS result lands in
//! an engine test only when that test does its work — the profile's title
//! and release line, every `Name: Label` of PTS's description an entry of
//! the profile, every other option of the profile without a choice — and
//! is otherwise kept as PTS's own, marked "not runnable here: no faithful
//! profile" with the reason. Each mapping the audit found wrong (compilebench
//! results on `initial_create`, fio's engines on Linux AIO, pgbench and
//! sqlite options on engine's defaults) has a test; the shipped profiles
//! are read fresh, so a test decides from what they say today. A loose PTS
//! unit (fio's "MB/s" that is MiB/s) is relabelled and the relabelling
//! recorded. Seed 003's page is rebuilt as a composite.xml, imported, and
//! one fio and one fs-mark row of it run here into the same rows.

use crate::common::{Env, repo};
use engine::model::profile::{LoadedProfile, Origin};
use engine::profile::load::{Packages, profile_from_str};
use regex::Regex;
use serde_json::Value;

/// One `<Result>` of a composite.xml: title, AppVersion, description,
/// Scale, Proportion, and per identifier its trials.
struct Row<'a> {
    title: &'a str,
    version: &'a str,
    description: &'a str,
    scale: &'a str,
    proportion: &'a str,
    values: Vec<(&'a str, Vec<f64>)>,
}

impl<'a> Row<'a> {
    fn new(title: &'a str, version: &'a str, description: &'a str, scale: &'a str) -> Self {
        let proportion = if scale == "Seconds" || scale == "ms" { "LIB" } else { "HIB" };
        Row { title, version, description, scale, proportion, values: vec![("PTS box", vec![100.0, 102.0, 98.0])] }
    }
}

fn esc(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;")
}

/// A composite.xml as PTS writes it: `systems` are (identifier, Hardware,
/// Software); a result's Identifier is made from its title (a page does
/// not show it, and engine matches by title).
fn composite(title: &str, description: &str, systems: &[(String, String, String)], rows: &[Row]) -> String {
    let mut x = format!(
        "<?xml version=\"1.0\"?>\n<PhoronixTestSuite>\n  <Generated>\n    <Title>{}</Title>\n    <Description>{}</Description>\n  </Generated>\n",
        esc(title),
        esc(description)
    );
    for (id, hw, sw) in systems {
        x += &format!(
            "  <System>\n    <Identifier>{}</Identifier>\n    <Hardware>{}</Hardware>\n    <Software>{}</Software>\n    <TimeStamp>2018-10-01 12:00:00</TimeStamp>\n    <TestClientVersion>8.2.0</TestClientVersion>\n  </System>\n",
            esc(id),
            esc(hw),
            esc(sw)
        );
    }
    for r in rows {
        let ident = format!("pts/{}", r.title.to_lowercase().replace(' ', "-"));
        x += &format!(
            "  <Result>\n    <Identifier>{}</Identifier>\n    <Title>{}</Title>\n    <AppVersion>{}</AppVersion>\n    <Arguments></Arguments>\n    <Description>{}</Description>\n    <Scale>{}</Scale>\n    <Proportion>{}</Proportion>\n    <Data>\n",
            esc(&ident),
            esc(r.title),
            esc(r.version),
            esc(r.description),
            esc(r.scale),
            r.proportion
        );
        for (id, trials) in &r.values {
            let mean = trials.iter().sum::<f64>() / trials.len() as f64;
            let raw: Vec<String> = trials.iter().map(f64::to_string).collect();
            x += &format!(
                "      <Entry>\n        <Identifier>{}</Identifier>\n        <Value>{mean}</Value>\n        <RawString>{}</RawString>\n      </Entry>\n",
                esc(id),
                raw.join(":")
            );
        }
        x += "    </Data>\n  </Result>\n";
    }
    x + "</PhoronixTestSuite>\n"
}

/// One system, `PTS box`, and `rows`.
fn one_box(rows: &[Row]) -> String {
    let sys = [("PTS box".to_string(), "Processor: Test CPU".to_string(), "OS: Test OS".to_string())];
    composite("pts", "", &sys, rows)
}

/// Imports `xml` as result `name`; returns the import's stderr and the file.
fn import(env: &Env, xml: &str, name: &str) -> (String, Value) {
    let path = env.target.path().join(format!("{name}.composite.xml"));
    std::fs::write(&path, xml).unwrap();
    let r = env.run(&["result", "import", path.to_str().unwrap(), "--save", name]);
    assert_eq!(r.code, 0, "{r:?}");
    (r.stderr, env.result(name))
}

fn results(f: &Value) -> &Vec<Value> {
    f["results"].as_array().unwrap()
}

/// The imported row whose description is `d` and unit `unit` (PTS's label or engine's).
fn row<'f>(f: &'f Value, d: &str, unit: &str) -> &'f Value {
    results(f)
        .iter()
        .find(|r| r["description"] == d && (r["unit"] == unit || r["pts"]["unit"] == unit))
        .unwrap_or_else(|| panic!("no row `{d}` ({unit}) in {f:#}"))
}

/// Why the row is PTS's own, if it is.
fn own(r: &Value) -> Option<&str> {
    r["pts"]["not_runnable"].as_str()
}

/// A shipped profile as it is today.
fn shipped(id: &str) -> LoadedProfile {
    let path = repo().join("test-profiles").join(id).join("profile.yaml");
    let text = std::fs::read_to_string(&path).unwrap();
    profile_from_str(&text, id, Origin::File(path), &Packages::builtin()).unwrap()
}

/// PTS's `Name: Label` pairs of a description, without its generated Disk Target.
fn pairs(description: &str) -> Vec<(String, String)> {
    description
        .split(" - ")
        .filter_map(|p| p.split_once(": "))
        .filter(|(k, _)| *k != "Disk Target")
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

/// The rule, checked on an imported row against the profile it names: a
/// row kept as PTS's own says why; a row on an engine test has every option
/// PTS names at PTS's label (or names its result), every other option of
/// the profile without a choice, and the unit of the result it landed on.
fn faithful_or_own(r: &Value) {
    if let Some(why) = own(r) {
        assert!(why.starts_with("no faithful profile: ") && why.len() > 30, "{r:#}");
        assert_eq!(r["profile_version"], "", "a row kept as PTS's own names no engine profile: {r:#}");
        return;
    }
    let p = shipped(r["profile"].as_str().unwrap()).profile;
    let def = p.results.iter().find(|d| d.id == r["result"]).expect("the row's result is the profile's");
    assert_eq!(r["unit"], def.unit.as_str(), "the row carries engine's exact unit: {r:#}");
    let named = pairs(r["description"].as_str().unwrap());
    for (name, label) in &named {
        let chosen = r["options"].as_array().unwrap().iter().find(|c| c["name"] == name.as_str());
        match chosen {
            Some(c) => assert_eq!(c["entry"], label.as_str(), "PTS's `{name}: {label}` ran as {c}"),
            None => assert_eq!(def.description.as_deref(), Some(label.as_str()), "`{name}: {label}` names the result"),
        }
    }
    for o in &p.options {
        if !named.iter().any(|(n, _)| n == &o.name) {
            assert_eq!(o.entries.len(), 1, "`{}` was never stated by PTS and has a choice: {r:#}", o.name);
        }
    }
}

/// Engine's tests for a profile written by the test (shadowing a shipped
/// profile of the same id, so the case does not depend on today's labels).
fn faithful_compile() -> &'static str {
    r#"id: compile
version: 1.0.0
title: Compile Bench
app_version: "0.6"
test_type: disk
executor: {external: {program: "true"}}
results:
  - {id: initial_create, unit: MiB/s, proportion: HIB, description: Initial Create}
  - {id: compile, unit: MiB/s, proportion: HIB, description: Compile}
  - {id: read_compiled_tree, unit: MiB/s, proportion: HIB, description: Read Compiled Tree}
parsers:
  - {result: initial_create, regex: 'create (?P<value>[0-9.]+)'}
  - {result: compile, regex: 'compile (?P<value>[0-9.]+)'}
  - {result: read_compiled_tree, regex: 'read (?P<value>[0-9.]+)'}
"#
}

/// compilebench's three results are PTS options of one `Test`: each lands on
/// the engine result of that name — with the shipped profile, or kept as
/// PTS's own with the reason; never on `initial_create` by its unit.
#[test]
fn compilebench_results_land_on_the_result_they_name() {
    let tests = ["Initial Create", "Compile", "Read Compiled Tree"];
    let descs: Vec<String> = tests.iter().map(|t| format!("Test: {t}")).collect();
    let rows: Vec<Row> = descs.iter().map(|d| Row::new("Compile Bench", "0.6", d, "MB/s")).collect();
    let xml = one_box(&rows);

    // Shipped profiles as they are: the right result or PTS's own, with why.
    let env = Env::new();
    let (_, f) = import(&env, &xml, "cb");
    for (t, d) in tests.iter().zip(&descs) {
        let r = row(&f, d, "MB/s");
        faithful_or_own(r);
        if own(r).is_none() {
            let want = t.to_lowercase().replace(' ', "_");
            assert_eq!(r["result"], want.as_str(), "{r:#}");
        }
    }

    // A faithful profile: each PTS result on its own engine result, the
    // unit PTS labels MB/s stored as the MiB/s the profile states.
    let env = Env::new();
    env.profile("compile", faithful_compile());
    let (said, f) = import(&env, &xml, "cb");
    assert!(said.contains("3 matched to engine's profiles"), "{said}");
    for (t, d) in tests.iter().zip(&descs) {
        let r = row(&f, d, "MB/s");
        assert_eq!(r["result"], t.to_lowercase().replace(' ', "_").as_str(), "{r:#}");
        assert_eq!((r["unit"].as_str(), r["pts"]["unit"].as_str()), (Some("MiB/s"), Some("MB/s")));
    }
    let keys: std::collections::HashSet<(&str, &str)> =
        results(&f).iter().map(|r| (r["test"].as_str().unwrap(), r["result"].as_str().unwrap())).collect();
    assert_eq!(keys.len(), 3, "three rows, not one row three times");

    // A PTS row that names no result is not given one by its unit.
    let env = Env::new();
    env.profile("compile", faithful_compile());
    let (_, f) = import(&env, &one_box(&[Row::new("Compile Bench", "0.6", "", "MB/s")]), "cb");
    let why = own(&results(&f)[0]).expect("kept as PTS's own");
    assert!(why.contains("does not say which of its `MB/s` results"), "{why}");
}

/// A fio-like profile with the option PTS named `IO Engine` in 2018.
const FIO_LIKE: &str = r#"id: fio
version: 1.0.0
title: Flexible IO Tester
app_version: "3.33"
test_type: disk
options:
  - id: type
    name: Type
    entries:
      - {label: Random Read, value: randread}
  - id: engine
    name: IO Engine
    default: [Linux AIO]
    entries:
      - {label: Linux AIO, value: libaio}
      - {label: IO_uring, value: io_uring}
  - id: bs
    name: Block Size
    entries:
      - {label: 4KB, value: 4k}
      - {label: 2MB, value: 2m}
executor: {external: {program: "true"}}
results:
  - {id: bandwidth, unit: MiB/s, proportion: HIB}
  - {id: iops, unit: IOPS, proportion: HIB}
parsers:
  - {result: bandwidth, regex: 'bw=(?P<value>[0-9.]+)'}
  - {result: iops, regex: 'iops=(?P<value>[0-9.]+)'}
"#;

/// PTS's fio names its option `Engine` today (`IO Engine` in 2018): an
/// engine PTS names is that engine, or the row is PTS's own — never the
/// profile's default Linux AIO.
#[test]
fn fio_io_engines_are_never_defaulted() {
    let engines = ["IO_uring", "POSIX AIO", "Sync", "Linux AIO"];
    let descs: Vec<String> = engines
        .iter()
        .map(|e| {
            format!(
                "Type: Random Read - Engine: {e} - Direct: Yes - Block Size: 4KB - Job Count: 1 - Disk Target: Default Test Directory"
            )
        })
        .collect();
    let rows: Vec<Row> = descs.iter().map(|d| Row::new("Flexible IO Tester", "3.40", d, "MB/s")).collect();
    let env = Env::new();
    let (_, f) = import(&env, &one_box(&rows), "fio");
    let mut on_engine = std::collections::HashSet::new();
    for d in &descs {
        let r = row(&f, d, "MB/s");
        faithful_or_own(r);
        if own(r).is_none() {
            assert!(on_engine.insert(r["test"].as_str().unwrap().to_string()), "two PTS engines on one test: {r:#}");
        }
    }

    // The 2018 name lines up; today's name, which the profile lacks, does not.
    let env = Env::new();
    env.profile("fio", FIO_LIKE);
    let d2018 = "Type: Random Read - IO Engine: IO_uring - Block Size: 4KB - Disk Target: Default Test Directory";
    let dnow = "Type: Random Read - Engine: IO_uring - Block Size: 4KB";
    let rows =
        [Row::new("Flexible IO Tester", "3.1", d2018, "MB/s"), Row::new("Flexible IO Tester", "3.40", dnow, "MB/s")];
    let (said, f) = import(&env, &one_box(&rows), "fio");
    let r = row(&f, d2018, "MB/s");
    let engine = r["options"].as_array().unwrap().iter().find(|c| c["option"] == "engine").unwrap();
    assert_eq!(engine["entry"], "IO_uring", "{r:#}");
    let notes = r["pts"]["notes"].as_array().unwrap();
    let says = |what: &str| notes.iter().any(|n| n.as_str().unwrap().contains(what));
    assert!(says("PTS ran Flexible IO Tester 3.1; engine's `fio` runs 3.33"), "{notes:?}");
    assert!(says("`Disk Target: Default Test Directory` is where PTS ran it"), "{notes:?}");
    assert!(says("PTS labels this unit `MB/s`; its value is MiB/s (2^20 bytes/s)"), "{notes:?}");
    let why = own(row(&f, dnow, "MB/s")).expect("kept as PTS's own");
    assert!(why.contains("PTS's option `Engine` (IO_uring) has no counterpart in it"), "{why}");
    assert!(said.contains("not runnable here: Flexible IO Tester: Type: Random Read - Engine: IO_uring"), "{said}");
}

/// fio's "MB/s" is MiB/s: stored as MiB/s with PTS's values, PTS's label
/// and the relabelling recorded, shown under the bars, and written back as
/// PTS's label by `--format pts-xml`, so the file reads back the same.
#[test]
fn a_loose_unit_is_relabelled_recorded_and_written_back_as_pts_wrote_it() {
    let env = Env::new();
    env.profile("fio", FIO_LIKE);
    let d = "Type: Random Read - IO Engine: Linux AIO - Block Size: 2MB";
    let (said, f) = import(&env, &one_box(&[Row::new("Flexible IO Tester", "3.33", d, "MB/s")]), "u");
    assert!(said.contains("1 result(s) relabelled to engine's exact unit"), "{said}");
    let r = &results(&f)[0];
    assert_eq!((r["unit"].as_str(), r["pts"]["unit"].as_str()), (Some("MiB/s"), Some("MB/s")));
    assert_eq!(r["entries"][0]["trials"], serde_json::json!([100.0, 102.0, 98.0]), "values unchanged");
    assert_eq!(r["pts"]["notes"].as_array().unwrap().len(), 1, "only the unit: same version, no Disk Target");
    let show = env.run(&["result", "show", "u"]);
    assert!(show.stdout.contains("MiB/s > Higher Is Better"), "{}", show.stdout);
    assert!(
        show.stdout.contains("· imported from PTS: PTS labels this unit `MB/s`; its value is MiB/s"),
        "{}",
        show.stdout
    );
    let out = env.target.path().join("back.xml");
    assert_eq!(env.run(&["result", "show", "u", "--format", "pts-xml", "-o", out.to_str().unwrap()]).code, 0);
    assert!(std::fs::read_to_string(&out).unwrap().contains("<Scale>MB/s</Scale>"));
    let again = env.run(&["result", "import", out.to_str().unwrap(), "--save", "again"]);
    assert_eq!(again.code, 0, "{again:?}");
    let again = env.result("again");
    let back = &results(&again)[0];
    for k in ["test", "result", "unit", "pts"] {
        assert_eq!(back[k], r[k], "{k}");
    }
}

/// pgbench's scaling factor and clients, and sqlite's copies, are options
/// engine's profiles name differently or not at all: each row is on the
/// entry PTS names or PTS's own, never on engine's defaults (Buffer Test,
/// Normal Load, 12,500 inserts); an option PTS does not state is never
/// filled with a default either.
#[test]
fn pgbench_and_sqlite_options_never_fall_back_to_defaults() {
    let rows = [
        Row::new("PostgreSQL", "18", "Scaling Factor: 100 - Clients: 50 - Mode: Read Only", "TPS"),
        Row::new("PostgreSQL", "18", "Scaling Factor: 100 - Clients: 50 - Mode: Read Only - Average Latency", "ms"),
        Row::new("PostgreSQL pgbench", "10.3", "Scaling: Buffer Test - Test: Normal Load - Mode: Read Write", "TPS"),
        Row::new("SQLite", "3.50.4", "Threads / Copies: 8", "Seconds"),
        Row::new("SQLite", "3.22", "Timed SQLite Insertions", "Seconds"),
    ];
    let env = Env::new();
    let (said, f) = import(&env, &one_box(&rows), "db");
    for r in &rows {
        let got = row(&f, r.description, r.scale);
        faithful_or_own(got);
        if let Some(why) = own(got) {
            assert!(said.contains(why), "the import names each row kept as PTS's own and why: {said}");
        }
    }

    // An option PTS does not state is not filled in from the profile's default.
    let env = Env::new();
    env.profile(
        "sqlite",
        r#"id: sqlite
version: 1.0.0
title: SQLite
app_version: "3.40"
test_type: disk
options:
  - id: inserts
    name: Insertions
    default: ["12500"]
    entries: [{label: "12500", value: 12500}, {label: "2500", value: 2500}]
executor: {external: {program: "true"}}
results: [{id: seconds, unit: Seconds, proportion: LIB, description: Timed SQLite Insertions}]
parsers: [{result: seconds, wall_time: true}]
"#,
    );
    let (_, f) = import(&env, &one_box(&[Row::new("SQLite", "3.22", "Timed SQLite Insertions", "Seconds")]), "s");
    let why = own(&results(&f)[0]).expect("kept as PTS's own");
    assert!(why.contains("PTS's result does not say which `Insertions` (12500, 2500) it ran"), "{why}");
}

/// A row kept as PTS's own keeps PTS's values, is reported by `engine
/// benchmark NAME` as not runnable with the reason, gets no value from a
/// run, and `result show` prints why beside it.
#[test]
fn a_row_kept_as_pts_own_is_shown_with_its_reason_and_never_run() {
    let env = Env::new();
    env.profile("fio", FIO_LIKE);
    let kept = "Type: Random Read - Engine: IO_uring - Block Size: 4KB";
    let (_, f) = import(&env, &one_box(&[Row::new("Flexible IO Tester", "3.40", kept, "MB/s")]), "k");
    let r = &results(&f)[0];
    assert_eq!(r["entries"][0]["trials"], serde_json::json!([100.0, 102.0, 98.0]), "PTS's values are kept");
    assert_eq!(r["unit"], "MB/s", "a row kept as PTS's own keeps PTS's label");
    let run = env.bench(&["k", "--identifier", "here", "--runs", "1"]);
    assert!(run.stderr.contains("not runnable here: no faithful profile"), "{run:?}");
    assert!(results(&env.result("k"))[0]["entries"].as_array().unwrap().len() == 1, "no value lands in its row");
    let show = env.run(&["result", "show", "k"]);
    assert!(show.stdout.contains("! not runnable here: no faithful profile: `fio`"), "{}", show.stdout);
}

/// The page's text, rebuilt as the composite.xml PTS wrote: systems (each
/// `ID: Processor: … OS: …`), then per result `Title Version Description
/// Unit > Higher Is Better` (or `< Lower`) and a bar per identifier
/// (`ID ..... value |===`). A page shows each identifier's mean only, so a
/// rebuilt entry has one value.
fn seed_composite(page: &str, title: &str) -> String {
    let page = page.split_whitespace().collect::<Vec<_>>().join(" ");
    let marker = Regex::new(r" ?(> Higher Is Better|< Lower Is Better)").unwrap();
    let bar = Regex::new(r"(\S[^|]*?) \.+ ([0-9][0-9.]*) \|=*").unwrap();
    let head = Regex::new(r"^(.+?) (\d+(?:\.\d+)+) (.+)$").unwrap();
    let segments: Vec<&str> = marker.split(&page).collect();
    let props: Vec<&str> =
        marker.captures_iter(&page).map(|c| if c[1].starts_with('>') { "HIB" } else { "LIB" }).collect();
    // The first result's head ends segment 0, after the last system's Software.
    let last_head = Regex::new(r"[A-Z][A-Za-z -]*? \d+(?:\.\d+)+ ").unwrap();
    let first = last_head.find_iter(segments[0]).last().expect("a first result").start();
    let mut heads = vec![segments[0][first..].to_string()];
    let mut bars: Vec<Vec<(String, f64)>> = Vec::new();
    for seg in &segments[1..] {
        let rows: Vec<_> = bar.captures_iter(seg).map(|c| (c[1].to_string(), c[2].parse().unwrap())).collect();
        let end = bar.find_iter(seg).last().map(|m| m.end()).unwrap_or(0);
        heads.push(seg[end..].trim().to_string());
        bars.push(rows);
    }
    let ids: Vec<String> = bars[0].iter().map(|(id, _)| id.clone()).collect();
    let systems = seed_systems(&segments[0][..first], &ids);
    let description = page[..page.find(&format!("{}: Processor: ", ids[0])).unwrap()].trim();
    let description = description.strip_prefix(title).unwrap_or(description).trim();
    let units = ["Final Score", "Files/s", "MB/s", "IOPS", "TPS", "Seconds"];
    let mut parsed: Vec<(String, String, String, String)> = Vec::new();
    for h in &heads[..bars.len()] {
        let c = head.captures(h.trim()).unwrap_or_else(|| panic!("a result head: {h}"));
        let unit = units.iter().find(|u| c[3].ends_with(*u)).unwrap_or_else(|| panic!("a unit: {h}"));
        let desc = c[3][..c[3].len() - unit.len()].trim().to_string();
        parsed.push((c[1].to_string(), c[2].to_string(), desc, unit.to_string()));
    }
    let rows: Vec<Row> = parsed
        .iter()
        .zip(&bars)
        .zip(&props)
        .map(|(((t, v, d, u), b), p)| Row {
            title: t,
            version: v,
            description: d,
            scale: u,
            proportion: p,
            values: b.iter().map(|(id, x)| (id.as_str(), vec![*x])).collect(),
        })
        .collect();
    composite(title, description, &systems, &rows)
}

/// (identifier, Hardware, Software) of each of `ids`, from the page's
/// `ID: Processor: … OS: …` blocks, found in order (`Deadline: Processor`
/// is also inside `MQ Deadline: Processor`).
fn seed_systems(text: &str, ids: &[String]) -> Vec<(String, String, String)> {
    let mut starts = Vec::new();
    let mut from = 0;
    for id in ids {
        let at = from + text[from..].find(&format!("{id}: Processor: ")).expect("each identifier's system");
        starts.push((at, at + id.len() + 2));
        from = at + 1;
    }
    starts
        .iter()
        .enumerate()
        .map(|(i, (_, body))| {
            let end = starts.get(i + 1).map(|(s, _)| *s).unwrap_or(text.len());
            let block = text[*body..end].trim();
            let (hw, sw) = block.split_once(" OS: ").expect("Hardware, then Software");
            (ids[i].clone(), hw.to_string(), format!("OS: {sw}"))
        })
        .collect()
}

fn seed_003() -> String {
    let page = std::fs::read_to_string(repo().join("tests/fixtures/seeds/003_f38c463f76844c0b.txt")).unwrap();
    seed_composite(&page, "Linux 4.19 I/O Scheduler Performance")
}

/// The rebuilt page reads back as the page: 8 identifiers, 26 results,
/// the values as the page prints them; every row is on a faithful engine
/// test or PTS's own with the reason.
#[test]
fn seed_003_imports_every_row_faithfully_or_as_pts_own() {
    let env = Env::new();
    let (said, f) = import(&env, &seed_003(), "seed-003");
    println!("{said}");
    assert!(said.starts_with("imported `seed-003`: 8 identifiers, 26 results"), "{said}");
    let sys = f["systems"].as_array().unwrap();
    assert_eq!(sys[4]["identifier"], "BFQ low_latency");
    assert_eq!(sys[7]["software"]["Kernel"], "4.19.0-041900-generic (x86_64)");
    let fs = row(&f, "Test: 1000 Files, 1MB Size", "Files/s");
    assert_eq!(fs["entries"][3]["identifier"], "MQ None");
    assert_eq!(fs["entries"][3]["value"], 64.43);
    for r in results(&f) {
        faithful_or_own(r);
    }
}

/// The first row of `profile` in `f` that lines up with an engine test,
/// preferring descriptions that contain `prefer`; fails with every row's
/// reason when none does.
fn runnable<'f>(f: &'f Value, title: &str, prefer: &str) -> &'f Value {
    let rows: Vec<&Value> = results(f).iter().filter(|r| r["title"] == title).collect();
    let on: Vec<&&Value> = rows.iter().filter(|r| own(r).is_none()).collect();
    let why: Vec<&str> = rows.iter().filter_map(|r| own(r)).collect();
    on.iter()
        .find(|r| r["description"].as_str().unwrap().contains(prefer))
        .or(on.first())
        .copied()
        .unwrap_or_else(|| panic!("no {title} row of seed 003 has a faithful profile here: {why:#?}"))
}

/// A suite that runs `rows`' tests with exactly their options.
fn suite_of(rows: &[&Value]) -> String {
    let mut y = String::from("title: Seed 003 rows\ndescription: The rows engine runs faithfully.\ntests:\n");
    for r in rows {
        y += &format!("  - profile: {}\n    options:\n", r["profile"].as_str().unwrap());
        for c in r["options"].as_array().unwrap() {
            y += &format!("      {}: {}\n", c["option"].as_str().unwrap(), c["entry"]);
        }
    }
    y
}

/// Appending to a seed: seed 003 imported, one of its fio rows and one of
/// its fs-mark rows run here with `engine benchmark` into that result. The
/// new identifier lands in those tests' rows (every result of each) and in
/// no other; no row is added; comparisons with it are made only on the rows
/// whose work it did, and the rows kept as PTS's own say so.
#[test]
fn a_run_appends_to_seed_003_in_the_same_rows() {
    let env = Env::new();
    let (_, f) = import(&env, &seed_003(), "seed-003");
    // A 4KB row: the page has both of its results (bandwidth and IOPS).
    let fio = runnable(
        &f,
        "Flexible IO Tester",
        "Type: Random Read - IO Engine: Linux AIO - Buffered: No - Direct: Yes - Block Size: 4KB",
    )
    .clone();
    let fs = runnable(&f, "FS-Mark", "No Sync/FSync").clone();
    for r in [&fio, &fs] {
        faithful_or_own(r);
    }
    env.suite("seed-rows", &suite_of(&[&fio, &fs]));
    let args = ["suite/seed-rows", "--save", "seed-003", "--identifier", "this machine", "--runs", "1"];
    let run = env.bench(&args);
    assert_eq!(run.code, 0, "{run:?}");

    let after = env.result("seed-003");
    let ran = [fio["test"].as_str().unwrap(), fs["test"].as_str().unwrap()];
    // A result of a test the page does not show (the IOPS of a 2MB row) is
    // a row of its own; every other one lands in the page's rows.
    let rows_of = |f: &Value| results(f).iter().filter(|r| !ran.contains(&r["test"].as_str().unwrap())).count();
    assert_eq!(rows_of(&after), rows_of(&f), "the run added no row to another test");
    let had = |r: &Value| results(&f).iter().any(|o| o["test"] == r["test"] && o["result"] == r["result"]);
    for r in results(&after) {
        let here = r["entries"].as_array().unwrap().iter().any(|e| e["identifier"] == "this machine");
        let ours = ran.contains(&r["test"].as_str().unwrap());
        assert_eq!(here, ours, "`this machine` lands in the rows of the tests it ran, only: {r:#}");
        if ours && had(r) {
            assert_eq!(r["entries"].as_array().unwrap().len(), 9, "beside the page's 8 identifiers");
            faithful_or_own(r);
        }
    }

    // Comparisons with the new identifier are made only where it did the work.
    let json = env.run(&["result", "show", "seed-003", "--format", "json", "--baseline", "CFQ"]);
    let shown: Value = serde_json::from_str(&json.stdout).unwrap();
    let compared: Vec<&Value> =
        shown["comparisons"].as_array().unwrap().iter().filter(|c| c["identifier"] == "this machine").collect();
    assert!(!compared.is_empty(), "{}", json.stdout);
    assert!(compared.iter().all(|c| ran.contains(&c["test"].as_str().unwrap())), "{compared:#?}");
    let show = env.run(&["result", "show", "seed-003", "--baseline", "CFQ"]);
    assert_eq!(show.code, 0, "{show:?}");
    let own_rows = results(&after).iter().filter(|r| own(r).is_some()).count();
    if own_rows > 0 {
        assert!(show.stdout.contains("! not runnable here: no faithful profile"), "{}", show.stdout);
        let line = format!("{own_rows} result(s) kept as PTS's own (not runnable here: no faithful profile)");
        assert!(show.stdout.contains(&line), "{}", show.stdout);
    }
    assert!(show.stdout.contains("this machine vs CFQ: "), "{}", show.stdout);
    println!("{}", show.stdout);
}
