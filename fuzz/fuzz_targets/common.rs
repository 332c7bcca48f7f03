//! Shared by the parser targets: the real parser definitions of the
//! built-in profiles, and how a fuzz input is split.

use engine::catalog::Catalog;
use engine::model::profile::{ParserDef, Pick};
use engine::parse::{Configured, RawOutput};
use std::sync::LazyLock;
use std::time::Duration;

/// Every parser of the built-in profiles, by kind, placeholders filled with
/// the profile's first test's values.
pub static BUILTIN: LazyLock<Vec<(&'static str, Configured)>> = LazyLock::new(|| {
    let catalog = Catalog::new(
        &[],
        std::path::Path::new("/nonexistent"),
        std::sync::Arc::new(engine::profile::load::Packages::builtin()),
        Default::default(),
    );
    let mut out = Vec::new();
    for p in catalog.all_profiles().into_iter().flatten() {
        let p = std::sync::Arc::new(p);
        let Ok(tests) = engine::expand::expand(&p, &[], &engine::expand::Batch, false) else { continue };
        let Some(t) = tests.first() else { continue };
        let b = t.bindings();
        let fill = |s: &str| {
            engine::model::template::render(s, |n| b.get(n).map(String::as_str), false).map_err(|e| e.to_string())
        };
        for d in &p.profile.parsers {
            let kind = if d.regex.is_some() {
                "regex"
            } else if d.json_pointer.is_some() {
                "json_pointer"
            } else if d.template.is_some() {
                "template"
            } else {
                continue;
            };
            if let Ok(c) = Configured::build(d, &fill, &any_result(), None) {
                out.push((kind, c));
            }
        }
    }
    // No built-in profile uses a template (they are for porting PTS
    // profiles): the shapes PTS profiles use most.
    let templates: [(&str, Option<&str>, Option<&str>, Option<&str>); 4] = [
        ("1 2 3 #_RESULT_# 5", None, Some("FSUse%"), None),
        ("Throughput: #_RESULT_#MB/s", Some("Throughput"), None, None),
        ("Total ops: #_RESULT_# in 1.0 s", None, None, None),
        ("Throughput #_RESULT_# MB/sec", None, None, Some("max_latency")),
    ];
    for (t, hint, before, after) in templates {
        let d = ParserDef {
            template: Some(t.into()),
            line_hint: hint.map(Into::into),
            line_before_hint: before.map(Into::into),
            line_after_hint: after.map(Into::into),
            ..def()
        };
        out.push(("template", Configured::build(&d, &fill, &any_result(), None).expect("a good template")));
    }
    out
});

/// The built-in parsers of `kind`.
pub fn builtin(kind: &str) -> Vec<&'static Configured> {
    BUILTIN.iter().filter(|(k, _)| *k == kind).map(|(_, c)| c).collect()
}

/// Runs `parser` on `output` as stdout and as stderr; whatever the output,
/// a value is finite and not negative (the parser is unsigned), or an error.
pub fn check(parser: &Configured, output: &str) {
    let out = RawOutput { stdout: output, stderr: output, wall: Duration::from_millis(1) };
    if let Ok(v) = parser.parse(&out) {
        assert!(v.is_finite() && v >= 0.0, "{} parser returned {v}", parser.kind());
    }
}

/// A definition built from fuzzed text: `first` is the pattern, the rest
/// of the input is the output.
pub fn split(data: &[u8]) -> (String, String) {
    let text = String::from_utf8_lossy(data);
    match text.split_once('\n') {
        Some((a, b)) => (a.to_string(), b.to_string()),
        None => (text.to_string(), String::new()),
    }
}

pub fn def() -> ParserDef {
    ParserDef { result: "r".into(), ..Default::default() }
}

/// Placeholders in a fuzzed pattern render to fixed text.
pub fn fill(s: &str) -> Result<String, String> {
    engine::model::template::render(s, |_| Some("x"), false).map_err(|e| e.to_string())
}

/// A `pick` from a fuzz byte.
#[allow(dead_code)]
pub fn pick(b: u8) -> Pick {
    [Pick::Last, Pick::First, Pick::Mean, Pick::Sum][(b as usize >> 1) % 4]
}

/// One parser target: the first byte picks a mode. Even: one of the
/// built-in profiles' parsers of `kind` (the next byte says which) reads the
/// rest as output. Odd: the rest's first line is a pattern, made into a
/// parser by `make` (with the first byte for its other settings), and what
/// follows is the output.
#[allow(dead_code)]
pub fn fuzz_parser(kind: &str, data: &[u8], make: impl Fn(String, u8) -> ParserDef) {
    if data.len() < 2 {
        return;
    }
    if data[0] % 2 == 0 {
        let parsers = builtin(kind);
        if parsers.is_empty() {
            return;
        }
        let p = parsers[data[1] as usize % parsers.len()];
        check(p, &String::from_utf8_lossy(&data[2..]));
    } else {
        let (pattern, output) = split(&data[1..]);
        if let Ok(p) = Configured::build(&make(pattern, data[0]), &fill, &any_result(), None) {
            check(&p, &output);
        }
    }
}

/// A result that may not be negative, as most are.
fn any_result() -> engine::model::profile::ResultDef {
    serde_json::from_str(r#"{"id": "x", "unit": "U", "proportion": "HIB"}"#).expect("a result definition")
}
