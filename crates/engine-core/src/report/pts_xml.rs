//! A PTS `composite.xml` that the Phoronix Test Suite reads back: systems with
//! their Hardware/Software lines and notes, results with Value and RawString.
//! Text goes through `sys::text::xml`: well-formed whatever a field holds.

use super::{Exporter, View};
use crate::model::result::ResultFile;
use crate::sys::text::xml as esc;
use crate::units::{SCIENTIFIC_FROM, exact};
use std::fmt::Write;

pub struct PtsXml;

fn num(v: f64) -> String {
    // PTS prints up to 2–3 decimals; keep 3 so values read back unchanged
    // (not where values are scientific: moot there, and ×1000 overflows).
    let r = if v.abs() < SCIENTIFIC_FROM { (v * 1000.0).round() / 1000.0 } else { v };
    exact(r)
}

/// `2026-11-30T00:37:12Z` → `2026-11-30 00:37:12`.
fn pts_time(t: &str) -> String {
    t.trim_end_matches('Z').replacen('T', " ", 1)
}

/// The notes PTS keeps in its System JSON, from ours.
fn notes_json(s: &crate::model::result::System) -> String {
    let mut m = serde_json::Map::new();
    if let Some(d) = s.notes.get("Disk Notes") {
        let mut parts = d.split(" / ");
        if let Some(sched) = parts.next() {
            m.insert("disk-scheduler".into(), sched.into());
        }
        if let Some(opts) = parts.next() {
            m.insert("disk-mount-options".into(), opts.into());
        }
    }
    if let Some(p) = s.notes.get("Processor Notes")
        && let Some(mc) = p.split(" - ").find_map(|x| x.strip_prefix("CPU Microcode: "))
    {
        m.insert("cpu-microcode".into(), mc.into());
    }
    if let Some(sec) = s.notes.get("Security Notes") {
        m.insert("security".into(), sec.clone().into());
    }
    if let Some(py) = s.notes.get("Python Notes") {
        m.insert("python".into(), py.clone().into());
    }
    if let Some(c) = s.notes.get("Compiler Notes") {
        m.insert("compiler-configuration".into(), c.clone().into());
    }
    if let Some(e) = s.notes.get("Environment Notes") {
        m.insert("environment-variables".into(), e.clone().into());
    }
    serde_json::Value::Object(m).to_string()
}

impl Exporter for PtsXml {
    fn export(&self, r: &ResultFile, _: &View) -> String {
        let mut o = String::from("<?xml version=\"1.0\"?>\n");
        writeln!(o, "<!--engine {}-->", env!("CARGO_PKG_VERSION")).unwrap();
        o.push_str("<PhoronixTestSuite>\n  <Generated>\n");
        writeln!(o, "    <Title>{}</Title>", esc(&r.title)).unwrap();
        let last =
            r.systems.iter().rev().map(|s| s.finished.as_deref().unwrap_or(s.started.as_str())).next().unwrap_or("");
        writeln!(o, "    <LastModified>{}</LastModified>", esc(&pts_time(last))).unwrap();
        writeln!(o, "    <TestClient>engine {}</TestClient>", env!("CARGO_PKG_VERSION")).unwrap();
        writeln!(o, "    <Description>{}</Description>", esc(&r.description)).unwrap();
        o.push_str("    <Notes></Notes>\n    <InternalTags></InternalTags>\n    <ReferenceID></ReferenceID>\n    <PreSetEnvironmentVariables></PreSetEnvironmentVariables>\n  </Generated>\n");
        for s in &r.systems {
            let line = |m: &indexmap::IndexMap<String, String>| {
                m.iter().map(|(k, v)| format!("{k}: {v}")).collect::<Vec<_>>().join(", ")
            };
            o.push_str("  <System>\n");
            writeln!(o, "    <Identifier>{}</Identifier>", esc(&s.identifier)).unwrap();
            writeln!(o, "    <Hardware>{}</Hardware>", esc(&line(&s.hardware))).unwrap();
            writeln!(o, "    <Software>{}</Software>", esc(&line(&s.software))).unwrap();
            o.push_str("    <User></User>\n");
            writeln!(o, "    <TimeStamp>{}</TimeStamp>", esc(&pts_time(&s.started))).unwrap();
            writeln!(o, "    <TestClientVersion>{}</TestClientVersion>", esc(&s.engine_version)).unwrap();
            o.push_str("    <Notes></Notes>\n");
            writeln!(o, "    <JSON>{}</JSON>", esc(&notes_json(s))).unwrap();
            o.push_str("  </System>\n");
        }
        for t in &r.results {
            let (ident, args) = match &t.pts {
                Some(p) => (p.identifier.to_string(), p.arguments.clone()),
                None => (
                    format!("local/{}-{}", t.profile, t.profile_version),
                    t.options
                        .iter()
                        .flat_map(|c| c.values.iter().map(|(k, v)| format!("{k}={v}")))
                        .collect::<Vec<_>>()
                        .join(" "),
                ),
            };
            o.push_str("  <Result>\n");
            writeln!(o, "    <Identifier>{}</Identifier>", esc(&ident)).unwrap();
            writeln!(o, "    <Title>{}</Title>", esc(&t.title)).unwrap();
            writeln!(o, "    <AppVersion>{}</AppVersion>", esc(t.app_version.as_deref().unwrap_or(""))).unwrap();
            writeln!(o, "    <Arguments>{}</Arguments>", esc(&args)).unwrap();
            writeln!(o, "    <Description>{}</Description>", esc(&t.description)).unwrap();
            // PTS's own label where import relabelled it (fio's "MB/s" for
            // MiB/s): PTS's readers compare it with their rows of that label.
            let scale = t.pts.as_ref().and_then(|p| p.unit.as_deref()).unwrap_or(&t.unit);
            writeln!(o, "    <Scale>{}</Scale>", esc(scale)).unwrap();
            writeln!(o, "    <Proportion>{}</Proportion>", format!("{:?}", t.proportion).to_uppercase()).unwrap();
            o.push_str("    <DisplayFormat>BAR_GRAPH</DisplayFormat>\n    <Data>\n");
            for e in &t.entries {
                o.push_str("      <Entry>\n");
                writeln!(o, "        <Identifier>{}</Identifier>", esc(&e.identifier)).unwrap();
                writeln!(o, "        <Value>{}</Value>", num(e.value)).unwrap();
                writeln!(
                    o,
                    "        <RawString>{}</RawString>",
                    e.trials.iter().map(|v| num(*v)).collect::<Vec<_>>().join(":")
                )
                .unwrap();
                let times = e.trial_seconds.iter().map(|v| format!("{v:.2}")).collect::<Vec<_>>().join(":");
                writeln!(
                    o,
                    "        <JSON>{}</JSON>",
                    esc(&serde_json::json!({ "test-run-times": times }).to_string())
                )
                .unwrap();
                o.push_str("      </Entry>\n");
            }
            o.push_str("    </Data>\n  </Result>\n");
        }
        o.push_str("</PhoronixTestSuite>\n");
        o
    }
}
